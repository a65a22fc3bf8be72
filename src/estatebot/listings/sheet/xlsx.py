"""Read the cells of one worksheet of an xlsx file faithfully, with openpyxl.

Cells come back as Python values the way Excel shows them: text as text, numbers as ``int`` or
``float`` exactly as stored (``1.23E+11`` stays a float, so a mangled ID can be recognized),
dates as ``datetime``. One rule uses the cell's number format: an integer shown with a
zero-padded format (``00000``, ``00000-0000``) reads as the padded text Excel displays, so a ZIP
stored as the number 2108 and formatted ``00000`` reads as ``"02108"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from os import PathLike
from typing import Any

import numpy as np
import openpyxl

from estatebot.api.errors import SheetError

_ZERO_FORMAT = re.compile(r'^(0+)((?:\\-|"-"|-)(0+))?$')


@dataclass(frozen=True)
class CellGrid:
    """The non-empty cells of a worksheet: row numbers (1-based) and a row × column grid."""

    rows: np.ndarray[Any, np.dtype[np.int64]]
    grid: np.ndarray[Any, np.dtype[np.object_]]


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
    """The cells of one worksheet (the first when ``sheet_name`` is None).

    Raises :class:`SheetError` for an unknown sheet name or a workbook without worksheets.
    """
    workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        names = workbook.sheetnames
        name = names[_sheet_position(names, sheet_name)]
        sheet = workbook[name]
        if not hasattr(sheet, "reset_dimensions"):
            raise SheetError(f"{name!r} is not a worksheet")
        # Some writers store wrong dimensions; read-only mode would trust them and cut rows.
        sheet.reset_dimensions()
        rows: list[int] = []
        cols: list[int] = []
        cells: list[Any] = []
        pads: dict[str, ZeroPad] = {}
        for row in sheet.iter_rows():
            for cell in row:
                value = cell.value
                if value is None or value == "":
                    continue  # also every EmptyCell, which has no coordinates
                if cell.row is None or cell.column is None:
                    continue
                if isinstance(value, int | float) and not isinstance(value, bool):
                    code = cell.number_format
                    pad = pads.get(code)
                    if pad is None:
                        pad = pads[code] = zero_pad_of(code)
                    value = pad.apply(value)
                rows.append(cell.row)
                cols.append(cell.column - 1)
                cells.append(value)
    finally:
        workbook.close()
    return _grid(np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), cells)


def _grid(
    rows: np.ndarray[Any, np.dtype[np.int64]],
    cols: np.ndarray[Any, np.dtype[np.int64]],
    cells: list[Any],
) -> CellGrid:
    if not len(rows):
        return CellGrid(np.empty(0, np.int64), np.empty((0, 0), object))
    values = np.empty(len(cells), dtype=object)
    values[:] = cells  # assigned, not converted: numpy would turn mixed numbers into floats
    unique_rows, positions = np.unique(rows, return_inverse=True)
    grid = np.full((len(unique_rows), int(cols.max()) + 1), None, dtype=object)
    grid[positions, cols] = values
    return CellGrid(unique_rows, grid)
