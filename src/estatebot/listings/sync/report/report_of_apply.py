"""An apply's report put together from its phases' results: one row per operation, in the
plan's order, with the notes of the phases, where the backup and the journal went, and the call
that sends again what failed."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from estatebot.listings.sync.report.apply_report import ApplyReport, OpOutcome, outcomes_frame
from estatebot.listings.sync.report.outcomes import DONE, REDONE
from estatebot.listings.sync.report.report_html import listing_names

__all__ = ["report_of_apply"]

logger = logging.getLogger("estatebot.listings.sync.apply.phases")


def report_of_apply(
    plan: Any,
    order: Sequence[str],
    settled: Mapping[str, OpOutcome],
    sent: Mapping[str, OpOutcome],
    *,
    redo: Iterable[str],
    notes: list[str],
    serial: str,
    journal: Path | None,
    backup: Path | None,
) -> ApplyReport:
    """The report of an apply of ``plan``: the outcomes ``settled`` before the writes and those
    of what was ``sent`` (an operation in ``redo``, done, is "redone"), in the ``order`` of the
    plan's operations."""
    redone = set(redo)
    outcomes = dict(settled)
    for op, outcome in sent.items():
        again = op in redone and outcome.outcome == DONE
        outcomes[op] = replace(outcome, outcome=REDONE) if again else outcome
    report = ApplyReport(
        frame=outcomes_frame(
            [outcomes[op] for op in order if op in outcomes],
            unchanged=getattr(plan, "unchanged", []),
        ),
        backup_path=backup,
        journal_path=journal,
        notes=notes,
        retry_call=_retry_call(serial, journal, backup),
        names=listing_names(plan.operations()),
    )
    logger.info("apply: %s", report.summary())
    return report


def _retry_call(serial: str, journal: Path | None, backup: Path | None) -> str | None:
    """The call that sends again what failed: the same plan with the same journal (and backup,
    so the first run's before-images are kept). None without a journal: a plan applied in part
    is stale for the listings it changed, and only a new plan goes on from there."""
    if journal is None:
        return None
    extra = f", backup={str(backup)!r}" if backup is not None else ""
    return f"plan.apply(client, {serial!r}, journal={str(journal)!r}{extra})"
