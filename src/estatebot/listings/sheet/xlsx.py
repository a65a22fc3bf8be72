"""Read the cells of one worksheet of an xlsx file faithfully, with openpyxl.

Only the columns the header row names are read: a stray value far right (column XFD) costs
nothing and is reported, not a row × 16,384 grid. Cells come back as Python values the way Excel
shows them: text as text, numbers as ``int`` or
``float`` exactly as stored (``1.23E+11`` stays a float, so a mangled ID can be recognized),
dates as ``datetime``. One rule uses the cell's number format: an integer shown with a
zero-padded format (``00000``, ``00000-0000``) reads as the padded text Excel displays, so a ZIP
stored as the number 2108 and formatted ``00000`` reads as ``"02108"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from os import PathLike
from typing import IO, Any

import numpy as np
import openpyxl
from openpyxl.utils.cell import get_column_letter, range_boundaries

from estatebot.api.errors import SheetError
from estatebot.listings.sheet.notes import Note
from estatebot.listings.sheet.xlsxscan import Findings, scan

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


def _sheet_position(names: list[str], sheet_name: str | int | None) -> int:
    if not names:
        raise SheetError("the workbook has no worksheet")
    if sheet_name is None:
        return 0
    if isinstance(sheet_name, int):
        if 0 <= sheet_name < len(names):
            return sheet_name
        raise SheetError(
            f"the workbook has {len(names)} sheet(s), no sheet number {sheet_name}: {names}",
            value=sheet_name,
        )
    if sheet_name in names:
        return names.index(sheet_name)
    raise SheetError(f"no sheet named {sheet_name!r}; sheets: {names}", value=sheet_name)


def read_xlsx_cells(path: str | PathLike[str], sheet_name: str | int | None = None) -> CellGrid:
    """The header row and the cells under it of one worksheet (the first when ``sheet_name``
    is None), with notes on what cannot be read as a value.

    The header is the first row holding a value; its last non-blank cell bounds the columns
    read. Raises :class:`SheetError` for an unknown sheet name or a workbook without
    worksheets; the file must open as a workbook (:mod:`.files` tells a broken one).
    """
    # A file object, not the path: openpyxl refuses a workbook by its name (export.csv).
    with open(path, "rb") as handle:
        return _read(path, handle, sheet_name)


def _read(path: str | PathLike[str], handle: IO[bytes], sheet_name: str | int | None) -> CellGrid:
    workbook = openpyxl.load_workbook(handle, read_only=True, data_only=True)
    try:
        names = workbook.sheetnames
        name = names[_sheet_position(names, sheet_name)]
        sheet = workbook[name]
        if not hasattr(sheet, "reset_dimensions"):
            raise SheetError(f"{name!r} is not a worksheet")
        # Some writers store wrong dimensions; read-only mode would trust them and cut rows.
        sheet.reset_dimensions()
        header_row, header = _header(sheet)
        if header_row is None:
            return CellGrid(np.empty(0, np.int64), np.empty((0, 0), object))
        named = sorted(c for c, v in header.items() if value_text_of(v).strip())
        if not named:
            return CellGrid(np.array([header_row], np.int64), np.empty((1, 0), object))
        reader = _Reader(named)
        reader.add_row(header_row, [header[c] for c in named])
        # Bounded by the last header: cells further right are never made into cell objects.
        for row in sheet.iter_rows(min_row=header_row + 1, max_col=named[-1]):
            reader.add(row)
        findings = scan(str(path), _part_of(sheet), named, header_row)
    finally:
        workbook.close()
    grid = reader.grid()
    notes = [*reader.notes, *_notes(findings, header_row, header, named, grid.rows)]
    return CellGrid(grid.rows, grid.grid, named, notes)


def value_text_of(value: Any) -> str:
    """A header cell as text ("" for none)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _header(sheet: Any) -> tuple[int | None, dict[int, Any]]:
    """The first row holding something visible, and its non-empty cells by 1-based column.

    A row of spaces only is not a header: taking it would leave every column unnamed.
    """
    # Read-only rows come one per row number, empty ones included, from row 1.
    for number, row in enumerate(sheet.iter_rows(), start=1):
        cells = {
            c.column: c.value
            for c in row
            if c.value is not None and c.value != "" and c.column is not None
        }
        if any(value_text_of(v).strip() for v in cells.values()):
            return number, cells
    return None, {}


def _part_of(sheet: Any) -> str:
    """The zip member holding ``sheet``'s XML.

    openpyxl keeps it in a private attribute of its read-only worksheet; a version without it
    fails here, in the tests, rather than skipping the checks of :mod:`.xlsxscan`.
    """
    part = getattr(sheet, "_worksheet_path", None)
    if not isinstance(part, str):
        raise RuntimeError("this openpyxl version does not say where a worksheet's XML is")
    return part


class _Reader:
    """Collects the named columns' cells row by row, and notes formula errors."""

    def __init__(self, named: list[int]) -> None:
        self.named = named
        self.offsets = [c - 1 for c in named]
        self.rows: list[int] = []
        self.cells: list[list[Any]] = []
        self.pads: dict[str, ZeroPad] = {}
        self.notes: list[Note] = []

    def add_row(self, number: int, values: list[Any]) -> None:
        self.rows.append(number)
        self.cells.append(values)

    def add(self, row: tuple[Any, ...]) -> None:
        values: list[Any] = []
        number: int | None = None
        for k, offset in enumerate(self.offsets):
            if offset >= len(row):
                values.append(None)
                continue
            cell = row[offset]
            value = cell.value
            if value is None or value == "":
                values.append(None)  # also every EmptyCell, which has no coordinates
                continue
            number = cell.row
            if cell.data_type == "e" and value != "#N/A":
                # #N/A means "no value" (a blank token); other errors hide the true value.
                self.notes.append(
                    Note(
                        f"{cell.coordinate}: the formula gives the error {value} (fix the "
                        "formula, or type the value)",
                        row=number,
                        position=k,
                        value=str(value),
                        severity="error",
                    )
                )
            elif isinstance(value, int | float) and not isinstance(value, bool):
                code = cell.number_format
                pad = self.pads.get(code)
                if pad is None:
                    pad = self.pads[code] = zero_pad_of(code)
                value = pad.apply(value)
            values.append(value)
        if number is not None:
            self.add_row(number, values)

    def grid(self) -> CellGrid:
        grid = np.empty((len(self.rows), len(self.named)), dtype=object)
        for i, values in enumerate(self.cells):
            grid[i, :] = values  # assigned, not converted: numpy would make mixed numbers floats
        return CellGrid(np.array(self.rows, dtype=np.int64), grid)


def _notes(
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
