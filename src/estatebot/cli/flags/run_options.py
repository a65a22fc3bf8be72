"""The flags of a run's turn: ``--resume`` (finish the interrupted run whatever this command
asks) and ``--lock-wait`` (how long to wait for another run on the same chatbot).

``--no-resume`` and ``--yes`` are the guided commands' own (``estatebot.cli.guided.RunFlags``);
these are groups of :func:`~estatebot.cli.flags.option_groups.with_flags` beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import typer

__all__ = ["DEFAULT_LOCK_WAIT", "LockFlags", "ResumeFlags"]

_APPLYING = "Applying"
#: Seconds a run waits for another on the same chatbot: the library's wait for a journal
#: (``held_lock.DEFAULT_WAIT``), not imported from it so the command line starts light.
DEFAULT_LOCK_WAIT = 5.0


@dataclass(frozen=True)
class ResumeFlags:
    """Whether an interrupted run is finished although this command asks something else."""

    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Finish the interrupted run's plan as it was made, even though this command "
            "differs from the one that made it (another sheet's content, another --status, "
            "...). Without it such a run is refused; --no-resume plans afresh instead.",
            rich_help_panel=_APPLYING,
        ),
    ] = False


@dataclass(frozen=True)
class LockFlags:
    """How long a run waits for another run on the same chatbot and service to end."""

    lock_wait: Annotated[
        float,
        typer.Option(
            "--lock-wait",
            min=0.0,
            metavar="SECONDS",
            envvar="ESTATEBOT_LOCK_WAIT",
            help="How long to wait for another estatebot run on the same chatbot and service "
            "(sync, cleanup, apply, undo, restore) to end before giving up (exit 1, naming it).",
            rich_help_panel=_APPLYING,
        ),
    ] = DEFAULT_LOCK_WAIT
