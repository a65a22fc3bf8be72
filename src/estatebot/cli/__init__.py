"""The ``estatebot`` command: serve, pull, plan, apply, sync, cleanup, restore, ask, test-chat,
demo.

Credentials come from the environment (``ESTATEBOT_BASE_URL``, ``ESTATEBOT_API_KEY``,
``ESTATEBOT_SESSION_KEY``), as for :class:`estatebot.Client`. Commands only compose the public
API. The package:

* :mod:`.main`: the app, its global flags (``--version``, ``--debug``), exit codes and the
  boundary that turns errors into one line; :mod:`.codes` the exit-code table;
  :mod:`.failures` errors in the command line's terms;
* :mod:`.commands`: one module per command;
* :mod:`.options`, :mod:`.flag_groups`, :mod:`.sheet_flags`, :mod:`.plan_flags`: the flags;
* :mod:`.plan_view`, :mod:`.report_view`, :mod:`.values`, :mod:`.console`: what the terminal
  shows (rich; colour off when not a terminal or ``NO_COLOR`` is set);
* :mod:`.guided`, :mod:`.runs`, :mod:`.confirm`, :mod:`.execution`: the guided apply of
  ``sync`` and ``cleanup``: run folders, the question, the journaled apply and its resumption.
"""

from estatebot.cli.main import app, main

__all__ = ["app", "main"]
