"""What a fleet run did: a row per chatbot, each with its own apply report.

:class:`FleetReport` reads like an :class:`~estatebot.listings.sync.report.apply_report.ApplyReport`
(``ok``, ``failures``, ``counts``, ``summary``, ``to_frame``, ``to_excel``, a notebook view), one
level up: a chatbot whose apply failed in part, or did not run (its error), is a failure.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from functools import partial
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from estatebot._summary import Summary
from estatebot.fleet.chatbot_work import ChatbotApplied

if TYPE_CHECKING:
    from estatebot.fleet.fleet_plan import FleetPlan

__all__ = ["FleetReport"]

_WORDS = ("created", "updated", "deleted", "skipped (already done)", "failed")


@dataclass
class FleetReport:
    """What a fleet run did: `chatbots` holds each chatbot's result (its `ApplyReport` in
    `.report`, or its `.error`), `folder` the run folder, `plan` the fleet plan applied."""

    chatbots: list[ChatbotApplied]
    folder: Path
    plan: FleetPlan | None = None
    notes: list[str] = field(default_factory=list)
    title: str = "Fleet run"

    @property
    def ok(self) -> bool:
        """True when every chatbot's apply ran to its end with no operation failed."""
        return all(result.ok for result in self.chatbots)

    @property
    def failures(self) -> pd.DataFrame:
        """The rows of `to_frame` of chatbots with a failed operation or an error."""
        frame = self.to_frame()
        return frame[(frame["failed"] > 0) | (frame["error"] != "")]

    def made_changes(self) -> bool:
        """Whether this run changed any chatbot's listings (operations an earlier, interrupted
        run did are not this run's).

        Returns:
            True when an operation was done (or redone) by this run.
        """
        from estatebot.listings.sync.report.outcomes import DONE, REDONE

        return any(
            bool(result.report.frame["outcome"].isin([DONE, REDONE]).any())
            for result in self.chatbots
            if result.report is not None
        )

    def counts(self) -> dict[str, int]:
        """The operations of the whole fleet by outcome word, and the chatbots.

        Returns:
            `chatbots`, then the operations by outcome word (as `ApplyReport.counts`), then
                `chatbots failed`.
        """
        totals: dict[str, int] = {"chatbots": len(self.chatbots)}
        for result in self.chatbots:
            for word, count in result.counts().items():
                totals[word] = totals.get(word, 0) + count
        totals["chatbots failed"] = sum(1 for result in self.chatbots if not result.ok)
        return totals

    def summary(self) -> Summary:
        """One line: ``"20 chatbots: 95 updated, 3 created; 1 chatbot failed"``.

        Returns:
            The line, as a `Summary` whose figures are those of `counts`.
        """
        counts = self.counts()
        words = [
            f"{count} {word}"
            for word, count in counts.items()
            if word not in ("chatbots", "chatbots failed") and count
        ]
        text = f"{counts['chatbots']} chatbots: {', '.join(words) or 'nothing to do'}"
        failed = counts["chatbots failed"]
        if failed:
            text += f"; {failed} chatbot{'s' if failed != 1 else ''} failed"
        return Summary(text, counts)

    def to_frame(self) -> pd.DataFrame:
        """One row per chatbot: `chatbot`, `serial`, a column per outcome word, `error`, and
        `folder` (its journal, backup and report).

        Returns:
            A new DataFrame, in the manifest's order.
        """
        rows = []
        for result in self.chatbots:
            counts = result.counts()
            rows.append(
                {
                    "chatbot": result.entry.label,
                    "serial": result.entry.serial,
                    **{word: int(counts.get(word, 0)) for word in _WORDS},
                    "error": result.error or "",
                    "folder": str(result.folder),
                }
            )
        columns = ["chatbot", "serial", *_WORDS, "error", "folder"]
        return pd.DataFrame(rows, columns=columns)

    def to_excel(self, path: str | PathLike[str]) -> Path:
        """Write the fleet's table to an .xlsx workbook; returns the path.

        Args:
            path: The workbook to write; its folder is made when missing.

        Returns:
            The path written, as a `Path`.
        """
        from estatebot.fleet.fleet_workbook import write_fleet_table

        return write_fleet_table(self.to_frame(), path, sheet_name="fleet report")

    def __repr__(self) -> str:
        return f"<FleetReport {self.summary()}>"

    def _repr_html_(self) -> str:
        from estatebot.fleet.fleet_html import fleet_html

        frame = self.to_frame().drop(columns=["folder"])
        details = [
            (result.entry.heading, partial(_applied_html, result)) for result in self.chatbots
        ]
        totals = {w: c for w, c in self.counts().items() if w not in ("chatbots",)}
        return fleet_html(
            f"{self.title}: {self.summary()}", frame, totals, details,
            notes=[f"Run folder: {self.folder}", *self.notes],
        )  # fmt: skip


def _applied_html(result: ChatbotApplied) -> str:
    """A chatbot's part of the fleet's report: its report, its error, or what an earlier run
    recorded."""
    if result.report is not None:
        return str(result.report._repr_html_())
    return f"<p>{html.escape(result.error or _earlier(result))}</p>"


def _earlier(result: ChatbotApplied) -> str:
    if result.recorded_counts is None:
        return "Nothing to apply."
    said = ", ".join(f"{count} {word}" for word, count in result.recorded_counts.items())
    return (
        f"Applied before the run was interrupted ({said or 'nothing to do'}); its report is "
        f"{result.folder / 'report.xlsx'}."
    )
