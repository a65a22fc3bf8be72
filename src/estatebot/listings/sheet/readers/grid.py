"""What every workbook reader gives back (:class:`CellGrid`), and the rules they share: the
zero padding of number formats, which worksheet a ``sheet_name`` means, and the notes on cells
that cannot be read as values (formulas without a saved value, merged ranges, formula errors,
values beside or beyond the named columns).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from openpyxl.utils.cell import get_column_letter, range_boundaries

from estatebot.errors import SheetError, SheetNotFoundError
from estatebot.listings.sheet.readers.notes import Note
from estatebot.listings.sheet.readers.xml_scan import Findings

_ZERO_FORMAT = re.compile(r'^(0+)((?:\\-|"-"|-)(0+))?$')


@dataclass(frozen=True)
class CellGrid:
    """The header row and the rows under it that hold a value, in the columns the header names.

    ``rows`` are 1-based row numbers (the header's first), ``grid`` is rows × named columns,
    ``columns`` the 1-based numbers of those columns, and ``notes`` what the file holds that
    the grid cannot show: values in unnamed columns, formulas without a saved value, merged
    ranges, formula errors.
    """

    rows: np.ndarray[Any, np.dtype[np.int64]]
    grid: np.ndarray[Any, np.dtype[np.object_]]
    columns: list[int] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)


@dataclass(frozen=True)
class ZeroPad:
    """A zero-padded number format: digits before a dash, and after it (00000-0000)."""

    head: int = 0
    tail: int = 0

    def apply(self, value: int | float) -> int | float | str:
        """``value`` as Excel shows it under this format (only whole numbers are padded)."""
        if not self.head or not (isinstance(value, int) or value.is_integer()):
            return value
        if not 0 <= value < 1e15:
            return value
        digits = str(int(value)).zfill(self.head + self.tail)
        return f"{digits[: -self.tail]}-{digits[-self.tail :]}" if self.tail else digits


_NO_PAD = ZeroPad()


def zero_pad_of(code: str | None) -> ZeroPad:
    """The zero padding a number-format code asks for (none for ``General``, ``0``, dates…)."""
    match = _ZERO_FORMAT.match(code or "")
    if match and (len(match.group(1)) > 1 or match.group(3)):
        return ZeroPad(len(match.group(1)), len(match.group(3) or ""))
    return _NO_PAD


def sheet_position(
    names: list[str], sheet_name: str | int | None, hidden: Collection[str] = ()
) -> int:
    """The position of the worksheet ``sheet_name`` names (a name, or a 0-based number),
    and by default the first one not ``hidden``: a hidden sheet is read only when named."""
    if not names:
        raise SheetError("the workbook has no worksheet")
    if sheet_name is None:
        for position, name in enumerate(names):
            if name not in hidden:
                return position
        raise SheetError(
            f"every worksheet of the workbook is hidden ({', '.join(map(repr, names))}): a "
            "hidden sheet is read only when sheet_name= names it"
        )
    if isinstance(sheet_name, int):
        if 0 <= sheet_name < len(names):
            return sheet_name
        raise SheetNotFoundError(sheet_name, names)
    if sheet_name in names:
        return names.index(sheet_name)
    raise SheetNotFoundError(sheet_name, names)


def hidden_note(name: str) -> Note:
    """The warning that worksheet ``name``, read because it was named, is hidden."""
    return Note(
        f"worksheet {name!r} is hidden in the workbook: it is read because sheet_name names "
        "it (check that it holds the listings meant, not a hidden copy or old data)"
    )


def value_text_of(value: Any) -> str:
    """A header cell as text ("" for none)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def scan_notes(
    found: Findings,
    header_row: int,
    header: dict[int, Any],
    named: list[int],
    data_rows: np.ndarray[Any, np.dtype[np.int64]],
) -> list[Note]:
    """Notes on the cells :mod:`.xlsxscan` found: each names the cell, and the way to fix it."""
    position = {c: k for k, c in enumerate(named)}
    notes: list[Note] = []
    for row, column in found.unsaved_formulas:
        cell = f"{get_column_letter(column)}{row}"
        notes.append(
            Note(
                f"{cell}: a formula with no saved value (open the file in Excel and save it, "
                "so that each formula keeps its result)",
                row=row,
                position=position[column],
                severity="error",
            )
        )
    rows = data_rows[data_rows > header_row]
    for ref in found.merged:
        notes.extend(_merge_notes(ref, rows, position))
    for column, count in sorted(found.unnamed.items()):
        notes.append(
            Note(
                f"has {count} value(s) under a blank header: ignored",
                column=f"column {get_column_letter(column)}",
            )
        )
    last = f"{get_column_letter(named[-1])}{header_row}"
    title = value_text_of(header[named[-1]])
    for row, column in found.beyond:
        cell = f"{get_column_letter(column)}{row}"
        notes.append(
            Note(
                f"{cell}: a value right of the last header ({last}, {title!r}): ignored",
                row=row,
                column=f"column {get_column_letter(column)}",
            )
        )
    more = found.beyond_count - len(found.beyond)
    if more > 0:
        notes.append(Note(f"and {more} more value(s) right of the last header ({last}): ignored"))
    return notes


def _merge_notes(
    ref: str, rows: np.ndarray[Any, np.dtype[np.int64]], position: dict[int, int]
) -> list[Note]:
    """An error for each data row holding a cell of merged range ``ref`` other than its first.

    Only the top-left cell of a merged range holds its value; the others read as blank. What
    they should hold (the same value, or nothing) is the user's to say, so their rows are
    rejected rather than written with a blank or a default in place of a value seen on screen.
    """
    try:
        min_col, min_row, max_col, max_row = range_boundaries(ref)
    except ValueError:
        return []
    if min_col is None or min_row is None or max_col is None or max_row is None:
        return []  # whole rows or columns: no spreadsheet writes such a merge
    columns = [c for c in sorted(position) if min_col <= c <= max_col]
    if not columns:
        return []
    top_left = f"{get_column_letter(min_col)}{min_row}"
    notes = []
    start, stop = np.searchsorted(rows, [min_row, max_row], side="left")
    for row in rows[start : stop + 1].tolist():
        if row > max_row:
            break
        covered = [c for c in columns if row != min_row or c != min_col]
        if not covered:
            continue
        first, final = covered[0], covered[-1]
        cells = f"{get_column_letter(first)}{row}"
        if final != first:
            cells += f":{get_column_letter(final)}{row}"
        notes.append(
            Note(
                f"{ref} merged: only {top_left} holds the value, so {cells} reads as blank "
                "(unmerge the cells and fill each one)",
                row=row,
                position=position[first],
                severity="error",
            )
        )
    return notes


def error_note(cell: str, error: str, row: int, position: int) -> Note:
    """The error of a formula cell showing ``error`` (``#REF!``): it hides the true value."""
    return Note(
        f"{cell}: the formula gives the error {error} (fix the formula, or type the value)",
        row=row,
        position=position,
        value=error,
        severity="error",
    )
