"""ApplyReport: what an apply (or a restore) did, one row per operation.

The report holds outcomes only: actions, keys, sheet rows, listing IDs, the service's ``Code`` and
``Message``, attempts and timings. It never holds a credential (messages come from the service's
reply or our own words, see :mod:`estatebot.errors`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from os import PathLike
from pathlib import Path
from typing import Any

import pandas as pd

from estatebot._safe_cells import SheetWriter, frame_rows, warn_changes
from estatebot._summary import Summary
from estatebot.listings.sync.report.outcomes import (
    CHANGED,
    DONE,
    FAILED,
    NOT_DONE,
    NOT_SENT,
    OUTCOMES,
    REDONE,
    SKIPPED,
    UNCHANGED,
)
from estatebot.listings.sync.report.report_html import ListingName, render_report

__all__ = [
    "CHANGED",
    "DONE",
    "FAILED",
    "NOT_DONE",
    "NOT_SENT",
    "OUTCOMES",
    "REDONE",
    "REPORT_COLUMNS",
    "REPORT_DTYPES",
    "SKIPPED",
    "UNCHANGED",
    "ApplyReport",
    "OpOutcome",
    "outcomes_frame",
]

#: Columns of :attr:`ApplyReport.frame`, with their dtypes.
REPORT_DTYPES: dict[str, Any] = {
    "action": "string",
    "key": "string",
    "row": "Int64",
    "id": "Int64",
    "outcome": "string",
    "code": "Int64",
    "message": "string",
    "attempts": "Int64",
    "elapsed_ms": "Float64",
}
REPORT_COLUMNS: tuple[str, ...] = tuple(REPORT_DTYPES)

# How each action is named in the summary when it was done.
_DONE_WORDS: dict[str, str] = {"create": "created", "update": "updated", "delete": "deleted"}
_FAILED_FILL = "FFC7CE"  # the light red spreadsheets use for bad cells


@dataclass(frozen=True)
class OpOutcome:
    """The outcome of one operation (one row of the report)."""

    action: str
    key: str | None
    row: int | None
    id: int | None
    outcome: str
    code: int | None = None
    message: str = ""
    attempts: int | None = None
    elapsed_ms: float | None = None


_ROW_OF = attrgetter(*REPORT_COLUMNS)
# An unchanged listing's row, from OpOutcome's own defaults; its key, row and id are filled in.
_UNCHANGED_ROW = _ROW_OF(OpOutcome(action="none", key=None, row=None, id=None, outcome=UNCHANGED))
_KEY_AT, _ROW_AT, _ID_AT = (REPORT_COLUMNS.index(name) for name in ("key", "row", "id"))


def _unchanged_row(ref: Any) -> tuple[Any, ...]:
    row = list(_UNCHANGED_ROW)
    row[_KEY_AT], row[_ROW_AT], row[_ID_AT] = ref.key, ref.row, ref.id
    return tuple(row)


def outcomes_frame(
    outcomes: Iterable[OpOutcome | Mapping[str, Any]], *, unchanged: Iterable[Any] = ()
) -> pd.DataFrame:
    """A report frame (:data:`REPORT_COLUMNS`, nullable dtypes) from outcomes, in order, then
    an ``unchanged`` row for each of ``unchanged`` (anything with a ``key``, ``row`` and
    ``id``: a plan's unchanged listings, tens of thousands in a big sync, are not made
    outcomes one by one)."""
    rows: list[tuple[Any, ...]] = [
        _ROW_OF(o) if isinstance(o, OpOutcome) else tuple(o.get(c) for c in REPORT_COLUMNS)
        for o in outcomes
    ]
    rows += map(_unchanged_row, unchanged)
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(REPORT_COLUMNS)
    data = {
        column: pd.Series(list(values), dtype=dtype)
        for (column, dtype), values in zip(REPORT_DTYPES.items(), columns, strict=True)
    }
    return pd.DataFrame(data)


@dataclass
class ApplyReport:
    """What an apply did: `frame` has one row per operation (see `REPORT_COLUMNS`).

    `outcome` is `"done"`, `"failed"`, `"skipped (already done)"` (done by an earlier run with
    the same journal) or `"unchanged"`. A failed row carries the service's `code` and
    `message` (or the transport error). `backup_path` and `journal_path` say where the
    before-image and the journal were written; `notes` says anything else worth knowing.
    `retry_call` is the call that sends again what failed (the same plan with the same journal,
    for an apply; None when the apply kept no journal: then only a new plan goes on). `ok`
    says whether every operation went through, `failures` lists those that did not (the names
    every result uses). `names` holds, by key, how a person knows each listing (its MLS
    number and address), shown beside the keys in a notebook.
    """

    frame: pd.DataFrame
    backup_path: Path | None = None
    journal_path: Path | None = None
    notes: list[str] = field(default_factory=list)
    title: str = "Apply"
    retry_call: str | None = None
    names: dict[str, ListingName] = field(default_factory=dict)

    @property
    def failures(self) -> pd.DataFrame:
        """The rows whose operation failed."""
        return self.frame[(self.frame["outcome"] == FAILED).fillna(False)]

    @property
    def ok(self) -> bool:
        """True when no operation failed."""
        return bool(len(self.failures) == 0)

    @property
    def failed(self) -> pd.DataFrame:
        """Deprecated: `failures` (every result names its failures so)."""
        # Kept so scripts and notebooks written against the old name go on working.
        warnings.warn(
            "ApplyReport.failed is deprecated; use ApplyReport.failures",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.failures

    def counts(self) -> dict[str, int]:
        """Counts by summary word: `created`, `updated`, `deleted`, `unchanged`,
        `skipped (already done)` and `failed` (only those above zero).

        Returns:
            The number of operations by summary word: the actions done first (`created`,
                `updated`, `deleted`), then the other outcomes.
        """
        counts: dict[str, int] = {}
        actions = self.frame["action"].astype("object").tolist()
        outcomes = self.frame["outcome"].astype("object").tolist()
        for action, outcome in zip(actions, outcomes, strict=True):
            if outcome == DONE:
                word = _DONE_WORDS.get(str(action), f"{action} done")
            else:
                word = str(outcome)
            counts[word] = counts.get(word, 0) + 1
        order = [*_DONE_WORDS.values(), REDONE, UNCHANGED, SKIPPED, FAILED, NOT_SENT, CHANGED]
        ordered = {word: counts.pop(word) for word in order if word in counts}
        return {**ordered, **counts}

    def summary(self) -> Summary:
        """One line, such as `"40 updated, 3 deleted, 1 failed"`; figures in `.counts`.

        Returns:
            The line (`"nothing to do"` for an empty report), as a `Summary` whose figures
                are those of `counts`.
        """
        counts = self.counts()
        if not counts:
            return Summary("nothing to do", counts)
        return Summary(", ".join(f"{count} {word}" for word, count in counts.items()), counts)

    def to_frame(self) -> pd.DataFrame:
        """A copy of `frame`, one row per operation.

        Returns:
            A new DataFrame with the columns of `REPORT_COLUMNS`: changing it leaves the report
                as it was.
        """
        return self.frame.copy()

    def to_excel(self, path: str | PathLike[str], *, include_unchanged: bool = True) -> Path:
        """Write the report to an .xlsx workbook, failed rows highlighted; returns the path.

        With `include_unchanged=False` only the operations go in (a fleet's reports: 2,000
        rows of "unchanged" per chatbot would cost more to write than the chatbot's sync).

        Keys and messages come from sheets and the service, so they go in by the rules of
        `estatebot._safe_cells`: never a formula; characters a cell cannot hold removed and
        text longer than a cell holds cut, each cell so changed named in a `CellWarning`.

        Args:
            path: The workbook to write; its folder is made when missing.
            include_unchanged: Whether the listings left unchanged get a row each.

        Returns:
            The path written, as a `Path`.
        """
        from openpyxl import Workbook
        from openpyxl.styles import PatternFill

        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fill = PatternFill(start_color=_FAILED_FILL, end_color=_FAILED_FILL, fill_type="solid")
        frame = self.frame
        if not include_unchanged:
            frame = frame[(frame["outcome"] != UNCHANGED).fillna(True)]
        failed = (frame["outcome"] == FAILED).fillna(False).tolist()
        book = Workbook(write_only=True)
        writer = SheetWriter(book, "Report", REPORT_COLUMNS)
        rows = frame_rows(frame[list(REPORT_COLUMNS)])
        for values, is_failed in zip(rows, failed, strict=True):
            writer.append(values, fill=fill if is_failed else None)
        book.save(target)
        warn_changes(writer.changes, target.name)
        return target

    def _where(self) -> list[str]:
        lines: list[str] = []
        if self.backup_path is not None:
            lines.append(f"backup: {self.backup_path}")
        if self.journal_path is not None:
            lines.append(f"journal: {self.journal_path}")
        return lines

    def __str__(self) -> str:
        lines = [f"{self.title}: {self.summary()}", *self._where()]
        lines += [f"note: {note}" for note in self.notes]
        failed = self.failures
        for record in failed.head(10).to_dict("records"):
            code = "" if record["code"] is pd.NA else f" [{record['code']}]"
            lines.append(f"failed {record['action']} {record['key']}{code}: {record['message']}")
        if len(failed) > 10:
            lines.append(f"... and {len(failed) - 10} more failed (see .failures)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<ApplyReport {self.summary()}>"

    def _repr_html_(self) -> str:
        return render_report(
            title=self.title,
            summary=str(self.summary()),
            counts=self.counts(),
            frame=self.frame,
            where=self._where(),
            notes=self.notes,
            retry_call=self.retry_call,
            names=self.names,
        )
