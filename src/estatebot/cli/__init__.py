"""The ``estatebot`` command: serve, pull, plan, apply, sync, cleanup, restore, undo, ask,
test-chat, demo.

Credentials come from the environment (``ESTATEBOT_BASE_URL``, ``ESTATEBOT_API_KEY``,
``ESTATEBOT_SESSION_KEY``), as for :class:`estatebot.Client`. Commands only compose the public
API. The package:

* :mod:`.main`: the app, its global flags (``--version``, ``--debug``), exit codes and the
  boundary that turns errors (and the library's warnings) into one line each; :mod:`.codes` the
  exit-code table; :mod:`.error_messages` errors in the command line's terms;
* :mod:`.commands`: one module per command; :mod:`.flags`: the flag groups they share;
* :mod:`.plan_view`, :mod:`.report_view`, :mod:`.values`, :mod:`.console`: what the terminal
  shows (rich; colour off when not a terminal or ``NO_COLOR`` is set);
* :mod:`.guided`, :mod:`.runs`, :mod:`.confirm`, :mod:`.execution`: the guided apply of
  ``sync``, ``cleanup`` and ``undo``: run folders, the question, the journaled apply;
  :mod:`.resuming`, :mod:`.run_fingerprint`, :mod:`.run_health`: resuming only a run of the
  same command, and naming a damaged run folder; :mod:`.run_lock`: one run at a time per
  chatbot.
"""

from estatebot.cli.main import app, main

__all__ = ["app", "main"]
