"""The exit codes of every ``estatebot`` command: one table, one meaning per code.

Modelled on Terraform's ``-detailed-exitcode`` (0 nothing to do, 1 error, 2 changes), so a
script or a scheduled job can branch on the code alone. Usage errors (a typo in a flag) get a
code of their own that no command uses for a result: a script never reads a typo as "there are
changes".
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from estatebot.listings.sync.sync_plan import SyncPlan

__all__ = ["TABLE", "ExitCode", "applied_code", "plan_code"]


class ExitCode(IntEnum):
    """What a command's exit status means (the same for every command)."""

    #: Success, and nothing left to do: in step, every row valid, every operation done.
    OK = 0
    #: An error: the command could not do its job (bad input, the service, a refused plan).
    ERROR = 1
    #: Changes: ``plan`` found changes to make; ``sync`` and ``cleanup`` made them.
    CHANGES = 2
    #: Rows of the sheet are invalid or held back (``plan``, ``sync``), whatever else happened.
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
    #: Interrupted (Ctrl-C); an apply prints the command that resumes it. 128 + SIGINT.
    INTERRUPTED = 130


#: The table the README and ``estatebot --help`` show: code, meaning, the commands that use it.
TABLE: tuple[tuple[int, str, str], ...] = (
    (0, "success; nothing to do: in step, every row valid, every operation done", "all"),
    (1, "error: the command could not do its job (bad input, the service, a stale plan)", "all"),
    (2, "changes: the plan has changes (plan); changes were made (sync, cleanup)",
     "plan, sync, cleanup"),
    (3, "rows invalid or held back, whatever else was done", "plan, sync"),
    (4, "part of the work failed: an operation, or a chat test case",
     "apply, sync, cleanup, restore, test-chat"),
    (5, "not applied: declined at the prompt, or no terminal and no --yes", "sync, cleanup"),
    (64, "usage error: unknown flag, missing or malformed argument; nothing ran", "all"),
    (130, "interrupted (Ctrl-C); an apply prints the command that resumes it", "all"),
)  # fmt: skip


def plan_code(plan: SyncPlan) -> ExitCode:
    """0 in step, 2 changes, 3 rows invalid or held back: a sheet not in step is never 0."""
    if plan.invalid or plan.held_back:
        return ExitCode.ROWS_NOT_SYNCED
    return ExitCode.OK if plan.is_empty else ExitCode.CHANGES


def applied_code(plan: SyncPlan, ok: bool) -> ExitCode:
    """The code of a plan carried out: 4 when an operation failed, else the plan's own code."""
    return plan_code(plan) if ok else ExitCode.FAILED
