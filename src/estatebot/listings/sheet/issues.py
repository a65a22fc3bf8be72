"""Problems found while reading a sheet: one row per bad cell or line, with its row, column,
value, message and severity. Errors keep a row out of the listing frame; warnings do not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    # Types only: the field rules fill an Issues, so at run time the arrow runs from them here.
    from estatebot.listings.sheet.fields.cell_types import BoolArray, IntArray, Severity
    from estatebot.listings.sheet.fields.inputs import Inputs


class Issues:
    """Problems found while reading a sheet, by row position (-1 for the sheet as a whole).

    A problem about a line that is not a data row (a skipped disclaimer) gives its ``row``
    number directly instead of a position.
    """

    def __init__(self) -> None:
        self._parts: list[pd.DataFrame] = []

    def add(
        self,
        where: BoolArray | IntArray | Sequence[int],
        *,
        column: str | None,
        field: str | None,
        values: Sequence[str | None] | str | None,
        message: str,
        severity: Severity = "error",
        row: int | None = None,
    ) -> None:
        """Record one message for every position in ``where`` (a mask or positions)."""
        array = np.asarray(where)
        positions = np.flatnonzero(array) if array.dtype == bool else array.astype(np.int64)
        if not len(positions):
            return
        if values is None or isinstance(values, str):
            values = [values] * len(positions)
        self._parts.append(
            pd.DataFrame(
                {
                    "position": positions,
                    "row": row,
                    "column": column,
                    "field": field,
                    "value": list(values),
                    "message": message,
                    "severity": severity,
                }
            )
        )

    def add_cells(
        self,
        inputs: Inputs,
        source: str,
        where: BoolArray | IntArray,
        *,
        field: str | None,
        message: str,
        severity: Severity = "error",
    ) -> None:
        """Record ``message`` for the cells of ``source`` at ``where``, naming header and values."""
        array = np.asarray(where)
        positions = np.flatnonzero(array) if array.dtype == bool else array.astype(np.int64)
        self.add(
            positions,
            column=inputs.header(source),
            field=field,
            values=inputs.texts(source, positions),
            message=message,
            severity=severity,
        )

    def table(self) -> pd.DataFrame:
        """Every issue so far: position, column, field, value, message, severity."""
        columns = ["position", "row", "column", "field", "value", "message", "severity"]
        if not self._parts:
            return pd.DataFrame(
                {c: pd.Series(dtype="int64" if c == "position" else object) for c in columns}
            )
        return pd.concat(self._parts, ignore_index=True)


def issue_lines(issues: pd.DataFrame, *, unit: str, whole: str, limit: int) -> list[str]:
    """The first ``limit`` issues one line each (``error: row 7, Price: 'x' ...``), and a last
    line counting the others. ``unit`` names a row (``row``, ``chatbot``), ``whole`` what an
    issue without a row is about (``sheet``, ``manifest``)."""
    lines = []
    for issue in issues.head(limit).itertuples(index=False):
        row, value_cell = issue.row, issue.value
        where = f"{unit} {row}" if isinstance(row, int | np.integer) else whole
        value = f" {value_cell!r}" if isinstance(value_cell, str) else ""
        column = str(issue.column if isinstance(issue.column, str) else issue.field)
        lines.append(f"  {issue.severity}: {where}, {column}:{value} {issue.message}")
    if len(issues) > limit:
        lines.append(f"  ... {len(issues) - limit} more in .issues")
    return lines


def issues_html(title: str, headline: str, issues: pd.DataFrame, *, shown: int = 20) -> str:
    """``title``: ``headline``, then the first ``shown`` issues as a table (every value
    escaped: they come from the file)."""
    import html

    head = f"<p><b>{html.escape(title)}</b>: {html.escape(headline)}</p>"
    if issues.empty:
        return head
    table = issues.head(shown).to_html(index=False, na_rep="", escape=True)
    more = f"<p>… {len(issues) - shown} more in <code>.issues</code></p>"
    return head + table + (more if len(issues) > shown else "")
