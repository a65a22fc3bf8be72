"""The flag that makes an exit code say more than success: ``--detailed-exitcode``.

Shared by every command that plans or applies (``plan``, ``sync``, ``cleanup``, ``apply``; any
new one adds ``exits=ExitFlags`` to its :func:`~estatebot.cli.flags.option_groups.with_flags`).
Success is 0 without it, so a scheduler reads a sync that made its changes as a success.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from estatebot.cli.codes import ExitCode, applied_code, exit_code, plan_code

if TYPE_CHECKING:
    from estatebot.listings.sync.report.apply_report import ApplyReport
    from estatebot.listings.sync.sync_plan import SyncPlan

__all__ = ["ExitFlags"]


@dataclass(frozen=True)
class ExitFlags:
    """Whether the exit code tells changes (2) and rows not synced (3) apart from success."""

    detailed_exitcode: Annotated[
        bool,
        typer.Option(
            "--detailed-exitcode",
            help="Exit 2 when there are changes (planned by plan; made by sync, cleanup, "
            "apply) and 3 when rows are invalid or held back, as Terraform's flag does. "
            "Without it success is 0.",
            rich_help_panel="Exit codes",
        ),
    ] = False

    def plan_code(self, plan: SyncPlan) -> ExitCode:
        """The exit code of a plan made and saved, not applied (``plan``)."""
        return plan_code(plan, detailed=self.detailed_exitcode)

    def applied_code(self, plan: SyncPlan, report: ApplyReport) -> ExitCode:
        """The exit code of a plan carried out, as ``report`` tells it (``apply``)."""
        return applied_code(plan, report, detailed=self.detailed_exitcode)

    def code(self, plan: SyncPlan, report: ApplyReport | None, *, undo: bool = False) -> ExitCode:
        """The exit code of a guided run, from what came of ``plan`` (see
        :func:`~estatebot.cli.codes.exit_code`)."""
        return exit_code(plan, report, detailed=self.detailed_exitcode, undo=undo)
