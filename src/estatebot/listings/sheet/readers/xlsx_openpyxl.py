"""Read the cells of one worksheet of a workbook faithfully: :func:`read_xlsx_cells`.

Two engines give the same cells. ``"calamine"`` (the default, :mod:`.fastbook`) reads the values
with a compiled reader and reads from the file's XML only what it does not give; it also reads
``.xls`` and ``.ods`` workbooks. ``"openpyxl"`` (this module) reads every cell with openpyxl in
read-only mode: many times slower, kept as a fallback and as the benchmark's baseline.

Only the columns the header row names are read: a stray value far right (column XFD) costs
nothing and is reported, not a row × 16,384 grid. Cells come back as Python values the way Excel
shows them: text as text, numbers as ``int`` or ``float`` exactly as stored (``1.23E+11`` stays a
float, so a mangled ID can be recognized), dates as ``datetime``. One rule uses the cell's number
format: an integer shown with a zero-padded format (``00000``, ``00000-0000``) reads as the padded
text Excel displays, so a ZIP stored as the number 2108 and formatted ``00000`` reads as
``"02108"``.
"""

from __future__ import annotations

from os import PathLike
from typing import IO, Any, Literal

import numpy as np
import openpyxl

from estatebot.errors import SheetError
from estatebot.listings.sheet.readers import calamine as fastbook
from estatebot.listings.sheet.readers.grid import (
    CellGrid,
    ZeroPad,
    error_note,
    scan_notes,
    sheet_position,
    value_text_of,
    zero_pad_of,
)
from estatebot.listings.sheet.readers.notes import Note
from estatebot.listings.sheet.readers.xml_scan import scan

__all__ = ["ENGINES", "CellGrid", "Engine", "ZeroPad", "read_xlsx_cells", "zero_pad_of"]

#: How a workbook's cells are read (see the module's docstring).
Engine = Literal["calamine", "openpyxl"]
ENGINES: tuple[Engine, ...] = ("calamine", "openpyxl")


def read_xlsx_cells(
    path: str | PathLike[str],
    sheet_name: str | int | None = None,
    *,
    engine: Engine = "calamine",
) -> CellGrid:
    """The header row and the cells under it of one worksheet (the first when ``sheet_name``
    is None), with notes on what cannot be read as a value.

    The header is the first row holding a value; its last non-blank cell bounds the columns
    read. Raises :class:`SheetError` for an unknown sheet name or a workbook without
    worksheets, or an unknown ``engine``; the file must open as a workbook (:mod:`.files` tells
    a broken one).
    """
    if engine == "calamine":
        return fastbook.read_cells(path, sheet_name, "xlsx", fallback=read_with_openpyxl)
    if engine != "openpyxl":
        raise SheetError(f"engine must be one of {', '.join(ENGINES)}", value=engine)
    return read_with_openpyxl(path, sheet_name)


def read_with_openpyxl(path: str | PathLike[str], sheet_name: str | int | None = None) -> CellGrid:
    """:func:`read_xlsx_cells` with openpyxl reading every cell (xlsx files only)."""
    # A file object, not the path: openpyxl refuses a workbook by its name (export.csv).
    with open(path, "rb") as handle:
        return _read(path, handle, sheet_name)


def _read(path: str | PathLike[str], handle: IO[bytes], sheet_name: str | int | None) -> CellGrid:
    workbook = openpyxl.load_workbook(handle, read_only=True, data_only=True)
    try:
        names = workbook.sheetnames
        name = names[sheet_position(names, sheet_name)]
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
    notes = [*reader.notes, *scan_notes(findings, header_row, header, named, grid.rows)]
    return CellGrid(grid.rows, grid.grid, named, notes)


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
                self.notes.append(error_note(cell.coordinate, str(value), number, k))
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
