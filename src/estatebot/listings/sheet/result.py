"""What :func:`~estatebot.listings.sheet.read.read_sheet` returns: a :class:`Sheet` holding the
listing frame, the issues, the header mapping, the cleared cells and the unpublished rows.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
import pandas as pd

ISSUE_COLUMNS = ("row", "column", "field", "value", "message", "severity")


@dataclass(repr=False)
class Sheet:
    """A spreadsheet read as listings.

    ``frame`` holds the valid rows only, as a canonical frame indexed by the row number a user
    sees in the file (index name ``row``). ``issues`` has one row per problem (``row``,
    ``column``, ``field``, ``value``, ``message``, ``severity``): an "error" rejects its row, a
    "warning" keeps it. ``mapping`` tells how each header was read. ``cleared`` marks, for the
    valid rows, the fields where the clear token asked to empty the field. ``unpublished`` lists
    the rows left out because their status (Withdrawn, Expired, ...) says the listing must not
    be published, with their key, so a plan can make the remote copy a delete candidate.
    """

    frame: pd.DataFrame
    issues: pd.DataFrame
    mapping: pd.DataFrame
    cleared: pd.DataFrame
    unpublished: pd.DataFrame
    source: str
    rows_read: int = 0

    @property
    def invalid_rows(self) -> list[int]:
        """The row numbers rejected by an error, sorted."""
        rows = self.errors["row"].dropna().unique()
        return sorted(int(r) for r in rows)

    @property
    def errors(self) -> pd.DataFrame:
        """The issues that reject their row (and sheet-level errors)."""
        return self.issues[self.issues["severity"] == "error"]

    @property
    def warnings(self) -> pd.DataFrame:
        """The issues that keep their row."""
        return self.issues[self.issues["severity"] == "warning"]

    def headline(self) -> str:
        """One line: rows read, valid, rejected, not published, warnings."""
        parts = [
            f"{self.rows_read} rows read",
            f"{len(self.frame)} valid",
            f"{len(self.invalid_rows)} rejected",
        ]
        if len(self.unpublished):
            parts.append(f"{len(self.unpublished)} not published")
        parts.append(f"{len(self.warnings)} warnings")
        return ", ".join(parts)

    def summary(self, limit: int = 10) -> str:
        """The headline and the first ``limit`` issues, one line each."""
        lines = [f"{self.source}: {self.headline()}"]
        for issue in self.issues.head(limit).itertuples(index=False):
            row, value_cell = issue.row, issue.value
            where = f"row {row}" if isinstance(row, int | np.integer) else "sheet"
            value = f" {value_cell!r}" if isinstance(value_cell, str) else ""
            lines.append(f"  {issue.severity}: {where}, {issue.column}:{value} {issue.message}")
        if len(self.issues) > limit:
            lines.append(f"  ... {len(self.issues) - limit} more in .issues")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Sheet {self.source}: {self.headline()}>"

    def _repr_html_(self) -> str:
        head = f"<p><b>{html.escape(self.source)}</b>: {html.escape(self.headline())}</p>"
        if self.issues.empty:
            return head
        table = self.issues.head(20).to_html(index=False, na_rep="", escape=True)
        more = f"<p>… {len(self.issues) - 20} more in <code>.issues</code></p>"
        return head + table + (more if len(self.issues) > 20 else "")
