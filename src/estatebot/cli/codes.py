"""The exit codes of every ``estatebot`` command: one table, one meaning per code.

Success is 0 for every command, so cron mail, Airflow and CI jobs read a sync that made its
changes as the success it is. ``--detailed-exitcode`` (Terraform's flag, with its meaning) adds
2 for changes and 3 for rows invalid or held back, for a script that branches on the code alone.
Usage errors (a typo in a flag) get a code of their own that no command uses for a result: a
script never reads a typo as "there are changes".
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from estatebot.listings.sync.report.apply_report import ApplyReport
    from estatebot.listings.sync.sync_plan import SyncPlan

__all__ = ["TABLE", "ExitCode", "applied_code", "exit_code", "made_changes", "plan_code"]


class ExitCode(IntEnum):
    """What a command's exit status means (the same for every command)."""

    #: Success: the command did its job (with ``--detailed-exitcode``: and there was nothing
    #: to change, every row valid).
    OK = 0
    #: An error: the command could not do its job (bad input, the service, a refused plan).
    ERROR = 1
    #: With ``--detailed-exitcode``: ``plan`` found changes to make; ``sync``, ``cleanup`` and
    #: ``apply`` made them.
    CHANGES = 2
    #: With ``--detailed-exitcode``: rows of the sheet are invalid or held back (``plan``,
    #: ``sync``, ``apply``), whatever else happened.
    ROWS_NOT_SYNCED = 3
    #: The work ran and part of it failed: an operation (``apply``, ``sync``, ``cleanup``,
    #: ``restore``) or a chat test case (``test-chat``).
    FAILED = 4
    #: Nothing applied: the confirmation was declined, or there was no terminal to ask on and
    #: no ``--yes``.
    NOT_APPLIED = 5
    #: A usage error: an unknown command or flag, a missing or malformed argument. Nothing ran.
    #: 64 is ``EX_USAGE`` of sysexits.h.
    USAGE = 64
    #: Interrupted (Ctrl-C, also at the confirmation prompt, or the end of its input); an apply
    #: prints the command that resumes it. 128 + SIGINT.
    INTERRUPTED = 130


#: The table the README and ``estatebot --help`` show: code, meaning, the commands that use it.
TABLE: tuple[tuple[int, str, str], ...] = (
    (0, "success: the command did its job", "all"),
    (1, "error: the command could not do its job (bad input, the service, a stale plan, another "
     "run holding the chatbot past --lock-wait, a damaged run folder, an interrupted run of "
     "another command)", "all"),
    (2, "with --detailed-exitcode: changes planned (plan) or made",
     "plan, sync, cleanup, apply, undo"),
    (3, "with --detailed-exitcode: rows invalid or held back, changes or not", "plan, sync, apply"),
    (4, "part of the work failed: an operation, a chat test case, or a listing undo leaves as it "
     "is", "apply, sync, cleanup, restore, undo, test-chat"),
    (5, "not applied: declined at the prompt, or no terminal and no --yes", "sync, cleanup, undo"),
    (64, "usage error: unknown flag, missing or malformed argument; nothing ran", "all"),
    (130, "interrupted (Ctrl-C, at the prompt too); an apply prints the command that resumes it",
     "all"),
)  # fmt: skip


def plan_code(plan: SyncPlan, *, detailed: bool = False) -> ExitCode:
    """The code of a plan made: 0; with ``detailed``, 2 changes, 3 rows invalid or held back."""
    if not detailed:
        return ExitCode.OK
    if plan.invalid or plan.held_back:
        return ExitCode.ROWS_NOT_SYNCED
    return ExitCode.OK if plan.is_empty else ExitCode.CHANGES


def made_changes(report: ApplyReport) -> bool:
    """Whether this apply changed the service: an operation done (or redone) by this run.

    Operations an earlier run did (``skipped (already done)``) are not this run's changes.
    """
    from estatebot.listings.sync.report.outcomes import DONE, REDONE

    return bool(report.frame["outcome"].isin([DONE, REDONE]).any())


def applied_code(plan: SyncPlan, report: ApplyReport, *, detailed: bool = False) -> ExitCode:
    """The code of a plan carried out: 4 when an operation failed, else 0; with ``detailed``,
    3 when the plan's rows are invalid or held back, 2 when changes were made."""
    if not report.ok:
        return ExitCode.FAILED
    if not detailed:
        return ExitCode.OK
    if plan.invalid or plan.held_back:
        return ExitCode.ROWS_NOT_SYNCED
    return ExitCode.CHANGES if made_changes(report) else ExitCode.OK


def exit_code(
    plan: SyncPlan,
    report: ApplyReport | None,
    *,
    detailed: bool = False,
    undo: bool = False,
) -> ExitCode:
    """The code of a guided run (``sync``, ``cleanup``, ``undo``), from what came of ``plan``:
    ``report`` when it was carried out, None when there was nothing to apply.

    An ``undo`` that leaves listings as they are (changed since the run, a unit nobody knows)
    is 4, part of the work not done, with or without ``detailed``; otherwise the code of the
    plan carried out (:func:`applied_code`) or of the plan made (:func:`plan_code`).
    """
    if undo and (plan.invalid or plan.held_back):
        return ExitCode.FAILED
    if report is None:
        return plan_code(plan, detailed=detailed)
    return applied_code(plan, report, detailed=detailed)
