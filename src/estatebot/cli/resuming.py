"""Resuming an interrupted run only when the command asks for the same thing, and saying what
is left before going on.

The guided run of ``sync``, ``cleanup`` and ``undo`` (:class:`~estatebot.cli.guided.Guided`)
follows these rules on finding a run of the same command left ``applying``; this module holds
its refusals and what is left of a plan:

* ``--no-resume``: it is abandoned (a damaged one set aside) and the command plans afresh;
* a run folder that cannot be read (:mod:`~estatebot.cli.run_health`; a damaged ``run.json``,
  :mod:`~estatebot.cli.runs`) stops the command with one line naming the file, ``--no-resume``
  and removing the folder: it cannot be resumed, ``--resume`` included;
* a run made by another command (:mod:`~estatebot.cli.run_fingerprint`: the sheet changed,
  ``--status was Sold, now Active``) is refused, nothing written, naming each difference and
  the two ways on: ``--resume`` finishes the old plan as it was made, ``--no-resume`` plans
  afresh;
* otherwise (or with ``--resume``) it is resumed: the operations left are shown as a new plan
  is (``--detail``, ``--max-rows``) and asked for as a new plan is (``--yes`` skips the
  question), then applied with the run's journal and backup.

``--resume`` with no interrupted run to finish is an error: it would otherwise plan afresh,
which is not what was asked. A new run's ``run.json`` records the command's fingerprint, and the
run lock (:mod:`~estatebot.cli.run_lock`) is told the run's folder, for whoever waits for it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import typer

from estatebot.errors import EstatebotError

if TYPE_CHECKING:
    from estatebot.cli.flags.run_options import ResumeFlags
    from estatebot.cli.guided import RunFlags
    from estatebot.listings.sync.plan.operations import PlannedOp
    from estatebot.listings.sync.sync_plan import SyncPlan

__all__ = [
    "NothingToResumeError",
    "ResumeRefusedError",
    "check_resume_flags",
    "remaining",
]


class ResumeRefusedError(EstatebotError):
    """An interrupted run was made by another command than this one; nothing was written."""


class NothingToResumeError(EstatebotError):
    """``--resume`` was given and no run of this command is left interrupted."""


def check_resume_flags(runs: RunFlags, resuming: ResumeFlags) -> None:
    """``--resume`` and ``--no-resume`` together are a usage error (exit 64): they ask for the
    two opposite ways on."""
    if runs.no_resume and resuming.resume:
        raise typer.BadParameter(
            "give one of them: --resume finishes the interrupted run, --no-resume plans afresh",
            param_hint="--resume / --no-resume",
        )


def remaining(plan: SyncPlan, done: set[str]) -> SyncPlan:
    """``plan`` less the operations ``done`` names (``"action:key"``, as the journal does)."""
    from estatebot.listings.sync.apply.journal_records import op_id

    def left(ops: list[PlannedOp]) -> list[PlannedOp]:
        return [op for op in ops if op_id(op.action, str(op.key)) not in done]

    return replace(
        plan, creates=left(plan.creates), updates=left(plan.updates), deletes=left(plan.deletes)
    )
