"""The one decision of a guided run's exit code (``sync``, ``cleanup``, ``undo``):
:func:`estatebot.cli.codes.exit_code`, from what came of the plan.

The rules are the table's (:data:`estatebot.cli.codes.TABLE`), checked as a property over every
kind of plan and outcome: an undo that leaves listings as they are is 4 whatever the flag; an
operation that failed is 4; without ``--detailed-exitcode`` success is 0; with it, rows invalid
or held back are 3, changes (planned, or made by this run) 2, and 0 only when there was nothing.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from estatebot.cli.codes import ExitCode, exit_code
from estatebot.cli.flags.exit_options import ExitFlags
from estatebot.listings.sync.plan.operations import HeldBack, InvalidRow, PlannedOp
from estatebot.listings.sync.report.apply_report import ApplyReport, OpOutcome, outcomes_frame
from estatebot.listings.sync.report.outcomes import OUTCOMES
from estatebot.listings.sync.sync_plan import SyncPlan
from factories import complete_listing as listing


def plan_with(*, creates: int, invalid: bool, held: bool) -> SyncPlan:
    """A plan of ``creates`` creates, with an invalid row and a value held back if asked."""
    ops = [
        PlannedOp("create", f"M{n}", "MLSNumber", n + 2, None, listing(n), None, None)
        for n in range(creates)
    ]
    return SyncPlan(
        key_type="MLSNumber",
        creates=ops,
        invalid=[InvalidRow(9, "M9", None, ("bad price",))] if invalid else [],
        held_back=[HeldBack(8, "M8", 8, "AreaUnit", None, None, "no unit")] if held else [],
    )


def report_of(outcomes: list[str]) -> ApplyReport:
    rows = [OpOutcome("create", f"M{n}", n + 2, None, o) for n, o in enumerate(outcomes)]
    return ApplyReport(frame=outcomes_frame(rows))


plans = st.builds(plan_with, creates=st.integers(0, 2), invalid=st.booleans(), held=st.booleans())
reports = st.none() | st.lists(st.sampled_from(OUTCOMES), max_size=4).map(report_of)


@given(plans, reports, st.booleans(), st.booleans())
def test_a_guided_run_exits_by_the_table(
    plan: SyncPlan, report: ApplyReport | None, detailed: bool, undo: bool
) -> None:
    code = exit_code(plan, report, detailed=detailed, undo=undo)
    # The command's flag hands the same decision on (what the guided run calls).
    assert ExitFlags(detailed_exitcode=detailed).code(plan, report, undo=undo) is code
    rows_not_synced = bool(plan.invalid or plan.held_back)
    outcomes = [] if report is None else list(report.frame["outcome"])
    if (undo and rows_not_synced) or "failed" in outcomes:
        assert code is ExitCode.FAILED
    elif not detailed:
        assert code is ExitCode.OK
    elif rows_not_synced:
        assert code is ExitCode.ROWS_NOT_SYNCED
    elif report is None:  # nothing carried out: the plan's own changes count
        assert code is (ExitCode.OK if plan.is_empty else ExitCode.CHANGES)
    else:  # only what this run did counts, not what an earlier run did
        changed = any(o in ("done", "redone") for o in outcomes)
        assert code is (ExitCode.CHANGES if changed else ExitCode.OK)
