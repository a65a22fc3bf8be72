"""Read the cells of one worksheet of a workbook faithfully: :func:`read_xlsx_cells`.

Two engines give the same cells. ``"calamine"`` (the default, :mod:`.calamine`) reads the values
with a compiled reader and reads from the file's XML only what it does not give; it also reads
``.xls`` and ``.ods`` workbooks. ``"openpyxl"`` (this module) reads every cell with openpyxl in
read-only mode: many times slower, kept as a fallback and as the benchmark's baseline.

Only the columns the header row names are read: a stray value far right (column XFD) costs
nothing and is reported, not a row × 16,384 grid. Rows are placed by their numbers, in whatever
order the file writes them (:mod:`.openpyxl_rows`), and the read stops as soon as what it holds
passes its memory budget (:mod:`.budget`). Which worksheet is read, and by which engine, is
decided before either starts (:mod:`.xlsx_guard`). Cells come back as Python values the way Excel
shows them: text as text, numbers as ``int`` or ``float`` exactly as stored (``1.23E+11`` stays a
float, so a mangled ID can be recognized), dates as ``datetime``. One rule uses the cell's number
format: an integer shown with a zero-padded format (``00000``, ``00000-0000``) reads as the padded
text Excel displays, so a ZIP stored as the number 2108 and formatted ``00000`` reads as
``"02108"``.
"""

from __future__ import annotations

from dataclasses import replace
from os import PathLike
from typing import Any, Literal

import numpy as np
import openpyxl
import python_calamine
from openpyxl.cell.read_only import ReadOnlyCell

from estatebot.errors import SheetError
from estatebot.listings.sheet.readers import calamine as fastbook
from estatebot.listings.sheet.readers.budget import Budget
from estatebot.listings.sheet.readers.grid import (
    CellGrid,
    ZeroPad,
    error_note,
    scan_notes,
    value_text_of,
    zero_pad_of,
)
from estatebot.listings.sheet.readers.notes import Note
from estatebot.listings.sheet.readers.openpyxl_rows import RawCell, sheet_rows
from estatebot.listings.sheet.readers.xlsx_guard import Prepared, prepare
from estatebot.listings.sheet.readers.xml_scan import scan

__all__ = [
    "ENGINES",
    "CellGrid",
    "Engine",
    "ZeroPad",
    "read_prepared",
    "read_xlsx_cells",
    "zero_pad_of",
]

#: How a workbook's cells are read (see the module's docstring).
Engine = Literal["calamine", "openpyxl"]
ENGINES: tuple[Engine, ...] = ("calamine", "openpyxl")
_EMPTY = CellGrid(np.empty(0, np.int64), np.empty((0, 0), object))
#: Strings from this length on are watched for repeats (see :meth:`_Reader._repeated`).
_LONG = 256


def read_xlsx_cells(
    path: str | PathLike[str],
    sheet_name: str | int | None = None,
    *,
    engine: Engine = "calamine",
    budget: Budget | None = None,
) -> CellGrid:
    """The header row and the cells under it of one worksheet (the first one not hidden when
    ``sheet_name`` is None; a hidden one named is read with a warning), with notes on what
    cannot be read as a value.

    The header is the first row holding a value; its last non-blank cell bounds the columns
    read. Rows are placed by their number, in whatever order the file writes them. Raises
    :class:`SheetError` for an unknown sheet name or a workbook without worksheets, an unknown
    ``engine``, or a read over ``budget`` (see :mod:`.xlsx_guard`); the file must open as a
    workbook (:mod:`.file_kind` tells a broken one).
    """
    if engine not in ENGINES:
        raise SheetError(f"engine must be one of {', '.join(ENGINES)}", value=engine)
    budget = budget or Budget()
    prepared = prepare(path, sheet_name, budget, calamine=engine == "calamine")
    return read_prepared(path, prepared, budget)


def read_prepared(path: str | PathLike[str], prepared: Prepared, budget: Budget) -> CellGrid:
    """:func:`read_xlsx_cells` of a worksheet :mod:`.xlsx_guard` has prepared: by calamine when
    it may read it, else (or when calamine cannot tell which cell it fails on) by openpyxl."""
    grid: CellGrid | None = None
    if prepared.calamine:
        try:
            grid = fastbook.read_xlsx(path, prepared, budget)
        except python_calamine.CalamineError as error:
            # calamine names no cell: openpyxl's read says which one (or reads the sheet).
            if "shared strings" not in str(error):
                raise
    if grid is None:
        grid = _read(path, prepared, budget)
    return replace(grid, notes=[*prepared.notes, *grid.notes]) if prepared.notes else grid


def read_with_openpyxl(
    path: str | PathLike[str],
    sheet_name: str | int | None = None,
    *,
    budget: Budget | None = None,
) -> CellGrid:
    """:func:`read_xlsx_cells` with openpyxl reading every cell (xlsx files only)."""
    return read_xlsx_cells(path, sheet_name, engine="openpyxl", budget=budget)


def _read(path: str | PathLike[str], prepared: Prepared, budget: Budget) -> CellGrid:
    # A file object, not the path: openpyxl refuses a workbook by its name (export.csv).
    with open(path, "rb") as handle:
        workbook = openpyxl.load_workbook(handle, read_only=True, data_only=True)
        try:
            sheet = workbook[prepared.name]
            if not hasattr(sheet, "reset_dimensions"):
                raise SheetError(f"{prepared.name!r} is not a worksheet")
            header_row, header = _first_visible_row(sheet, prepared.where)
            if header_row is None:
                return _EMPTY
            while True:
                named = sorted(c for c, v in header.items() if value_text_of(v).strip())
                if not named:
                    return CellGrid(np.array([header_row], np.int64), np.empty((1, 0), object))
                reader = _Reader(sheet, named, header_row, header, budget, prepared)
                for number, cells in sheet_rows(sheet, prepared.where):
                    reader.add(number, cells)
                if reader.header_row == header_row and reader.header == header:
                    break
                # A row written after the header in the file but numbered before it, or a
                # second row of the header's number: the header is read again, then the rows.
                header_row, header = reader.header_row, reader.header
            findings = scan(
                str(path), _part_of(sheet), named, header_row, plain=prepared.shape.plain
            )
        finally:
            workbook.close()
    grid = reader.grid()
    notes = [*reader.notes, *scan_notes(findings, header_row, header, named, grid.rows)]
    return CellGrid(grid.rows, grid.grid, named, notes)


def _visible(cells: list[RawCell]) -> dict[int, Any]:
    """A row's non-empty cells by column, when one of them shows something ({} otherwise)."""
    values = {c["column"]: c["value"] for c in cells if c["value"] is not None and c["value"] != ""}
    return values if any(value_text_of(v).strip() for v in values.values()) else {}


def _first_visible_row(sheet: Any, where: str) -> tuple[int | None, dict[int, Any]]:
    """The first row of the file holding something visible, and its non-empty cells by
    1-based column (a row of spaces only is not a header: taking it would leave every column
    unnamed). A row numbered before it but written after is found by :class:`_Reader`."""
    for number, cells in sheet_rows(sheet, where):
        values = _visible(cells)
        if values:
            return number, values
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
    """Collects the named columns' cells row by row, placing each row by its number, notes
    formula errors, and keeps the read within its budget.

    A row numbered before the header, or a second row of the header's number, makes
    ``header_row`` and ``header`` differ from those given: the caller reads again with them.
    """

    def __init__(
        self,
        sheet: Any,
        named: list[int],
        header_row: int,
        header: dict[int, Any],
        budget: Budget,
        prepared: Prepared,
    ) -> None:
        self.sheet = sheet
        self.named = named
        self.position = {c: k for k, c in enumerate(named)}
        self.header_row = header_row
        self.header = header
        self.budget = budget
        self.prepared = prepared
        self.cost = replace(prepared.strings_cost(), columns=len(named))
        self.by_number: dict[int, list[Any]] = {}
        self.pads: dict[str, ZeroPad] = {}
        self.notes: list[Note] = []
        # The long strings met, by identity (each is held by the grid: no id is reused).
        self.seen: set[int] = set()

    def add(self, number: int, cells: list[RawCell]) -> None:
        """Take one row as the parser gives it."""
        if number <= self.header_row:
            self._before(number, cells)
            return
        values: list[Any] | None = None
        text = 0
        for cell in cells:
            k = self.position.get(cell["column"])
            value = cell["value"]
            if k is None or value is None or value == "":
                continue  # beside the named columns, or empty
            value = self._value(cell, k)
            if values is None:
                values = self.by_number.get(number)
                if values is None:
                    values = self.by_number[number] = [None] * len(self.named)
                    self.cost.rows += 1
            values[k] = value  # a second row of the same number fills in, as calamine does
            self.cost.cells += 1
            if isinstance(value, str):
                text += len(value)
                if len(value) >= _LONG and self._repeated(value):
                    self.cost.shared_refs += 1
                    self.cost.shared_text += len(value)
                    self.cost.longest_shared = max(self.cost.longest_shared, len(value))
        if text:
            self.cost.text += text
        if values is not None:
            self.budget.check(self.cost, self.prepared.where)

    def _repeated(self, value: str) -> bool:
        """Whether ``value`` is a shared string met before: openpyxl gives every cell using
        one the same string object, which the listing frame will copy once per cell."""
        if id(value) in self.seen:
            return True
        self.seen.add(id(value))
        return False

    def _before(self, number: int, cells: list[RawCell]) -> None:
        # Rows at or above the header: a visible one above it is the real header; one of the
        # header's own number adds its cells to the header.
        values = (
            _visible(cells)
            if number < self.header_row
            else {
                c["column"]: c["value"]
                for c in cells
                if c["value"] is not None and c["value"] != ""
            }
        )
        if not values:
            return
        if number < self.header_row:
            self.header_row, self.header = number, values
            return
        merged = {**self.header, **values}
        if merged != self.header:
            self.header = merged

    def _value(self, cell: RawCell, k: int) -> Any:
        value = cell["value"]
        read_only = ReadOnlyCell(self.sheet, **cell)
        if read_only.data_type == "e" and value != "#N/A":
            # #N/A means "no value" (a blank token); other errors hide the true value.
            self.notes.append(error_note(read_only.coordinate, str(value), cell["row"], k))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            try:
                code = read_only.number_format
            except IndexError:
                code = "General"  # a style the workbook does not have: no format
            pad = self.pads.get(code)
            if pad is None:
                pad = self.pads[code] = zero_pad_of(code)
            value = pad.apply(value)
        return value

    def grid(self) -> CellGrid:
        numbers = sorted(self.by_number)
        grid = np.empty((len(numbers) + 1, len(self.named)), dtype=object)
        grid[0, :] = [self.header[c] for c in self.named]
        for i, number in enumerate(numbers, start=1):
            # Assigned, not converted: numpy would make mixed numbers floats.
            grid[i, :] = self.by_number[number]
        rows = np.array([self.header_row, *numbers], dtype=np.int64)
        return CellGrid(rows, grid)
