"""A file or frame → a table of raw cells with its header row: xlsx (through :mod:`.xlsx`),
xls and ods (through :mod:`.fastbook`), delimited text (through :mod:`.textfile`), parquet or a
DataFrame; a disclaimer under the header skipped, blank rows dropped, and what the readers
noticed kept as notes.

A table's columns are Python values (object arrays), or, for the reading of listings, arrays by
kind of cell (:class:`~..fields.cells.Cells`, ``columnar=True``): an xlsx sheet is then read by
columns into Arrow (:mod:`.calamine_columns`) when it can be.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, Literal, TypeGuard, TypeVar, overload

import numpy as np
import pandas as pd

from estatebot._safe_cells import from_csv_text
from estatebot.errors import SheetError
from estatebot.listings.sheet.fields.cell_types import IntArray, ObjectArray, value_text
from estatebot.listings.sheet.fields.cells import Cells
from estatebot.listings.sheet.fields.prepared import Column
from estatebot.listings.sheet.readers.budget import Budget, Cost
from estatebot.listings.sheet.readers.calamine import read_cells, sheets_of
from estatebot.listings.sheet.readers.calamine_columns import ColumnGrid, read_xlsx_columns
from estatebot.listings.sheet.readers.file_kind import WORKBOOK_ERRORS, failure, kind_of
from estatebot.listings.sheet.readers.notes import Note
from estatebot.listings.sheet.readers.text import (
    check_encoding,
    decode,
    has_bad_bytes,
    replaced,
    shown,
    sniff_delimiter,
)
from estatebot.listings.sheet.readers.text import records as text_records
from estatebot.listings.sheet.readers.xlsx_openpyxl import (
    ENGINES,
    CellGrid,
    Engine,
    read_xlsx_cells,
)
from estatebot.listings.sheet.readers.xlsx_parts import workbook_sheets

#: A disclaimer row (portal exports) has one long text in its first cell and nothing else.
_DISCLAIMER_MIN_LENGTH = 30


# --------------------------------------------------------------------------- reading


ColumnT = TypeVar("ColumnT", ObjectArray, Cells)


@dataclass
class Table(Generic[ColumnT]):
    """A sheet's header and raw cell columns, with what the reader noticed (:class:`Note`)."""

    headers: list[str]
    columns: list[ColumnT]
    rows: IntArray
    notes: list[Note]


@overload
def read_table(
    source: str | os.PathLike[str] | pd.DataFrame,
    sheet_name: str | int | None,
    encoding: str | None = None,
    engine: Engine = "calamine",
    budget: Budget | None = None,
    *,
    columnar: Literal[False] = False,
) -> tuple[str, Table[ObjectArray]]: ...


@overload
def read_table(
    source: str | os.PathLike[str] | pd.DataFrame,
    sheet_name: str | int | None,
    encoding: str | None = None,
    engine: Engine = "calamine",
    budget: Budget | None = None,
    *,
    columnar: Literal[True],
) -> tuple[str, Table[Cells]]: ...


def read_table(
    source: str | os.PathLike[str] | pd.DataFrame,
    sheet_name: str | int | None,
    encoding: str | None = None,
    engine: Engine = "calamine",
    budget: Budget | None = None,
    *,
    columnar: bool = False,
) -> tuple[str, Table[ObjectArray]] | tuple[str, Table[Cells]]:
    """The raw table of a file or frame, and the name to report it under; with ``columnar``,
    its columns as :class:`~..fields.cells.Cells`.

    ``encoding`` applies to delimited text files (see :mod:`.textfile`), ``engine`` to xlsx
    files (see :mod:`.xlsx`; ``.xls`` and ``.ods`` files are read by calamine only). A file no
    reader can take is a :class:`SheetError` naming it and saying what to do (see
    :mod:`.files`); so is a read over ``budget``: an xlsx file's is checked before a reader
    allocates (:mod:`.xlsx_guard`), any other's once its cells are read, before they are typed.
    """
    budget = budget or Budget()
    name, table, checked = _read_table(source, sheet_name, encoding, engine, budget, columnar)
    if _of_cells(table):
        return name, table  # read by columns, and checked against the budget before
    values: Table[ObjectArray] = table
    if not checked:
        budget.check(cost_of(values), name)
    if not columnar:
        return name, values
    return name, Table(
        values.headers, [Cells.of_values(c) for c in values.columns], values.rows, values.notes
    )


def _of_cells(table: Table[Any]) -> TypeGuard[Table[Cells]]:
    return bool(table.columns) and isinstance(table.columns[0], Cells)


def workbook_sheets_of(source: str | os.PathLike[str] | pd.DataFrame) -> list[tuple[str, bool]]:
    """The sheets of a workbook file, in order, each with whether it is passed over unless
    named (a hidden sheet, a chart sheet); [] for a frame or a text file."""
    if isinstance(source, pd.DataFrame):
        return []
    path = Path(source)
    kind = kind_of(path)
    try:
        if kind == "xlsx":
            with zipfile.ZipFile(path) as zipped:
                # A chart sheet holds no cells: it is passed over as a hidden one is.
                sheets = workbook_sheets(zipped)
                return [(entry.name, entry.hidden or entry.member is None) for entry in sheets]
        if kind in ("xls", "ods"):
            return sheets_of(path, kind)
    except WORKBOOK_ERRORS as error:
        raise failure(path, error, kind=kind) from None
    return []


def cost_of(table: Table[ObjectArray]) -> Cost:
    """What typing ``table`` into listings would hold (see :mod:`.budget`)."""
    text = cells = 0
    for column in table.columns:
        for value in column:
            if value is None:
                continue
            cells += 1
            if type(value) is str:
                text += len(value)
    return Cost(rows=len(table.rows), columns=len(table.columns), cells=cells, text=text)


def _read_table(
    source: str | os.PathLike[str] | pd.DataFrame,
    sheet_name: str | int | None,
    encoding: str | None,
    engine: Engine,
    budget: Budget,
    columnar: bool = False,
) -> tuple[str, Table[Any], bool]:
    """:func:`read_table`, and whether the read was checked against ``budget`` already (an xlsx
    sheet read by columns gives :class:`~..fields.cells.Cells`, any other object arrays)."""
    if isinstance(source, pd.DataFrame):
        return "<DataFrame>", _table_from_frame(source), False
    if encoding is not None:
        check_encoding(encoding)
    path = Path(source)
    kind = kind_of(path)
    if kind == "parquet":
        try:
            frame = pd.read_parquet(path)
        except (OSError, ValueError) as error:
            raise SheetError(f"{path.name} cannot be read as parquet: {error}") from None
        return path.name, _table_from_frame(frame), False
    if engine not in ENGINES:
        raise SheetError(f"engine must be one of {', '.join(ENGINES)}", value=engine)
    if kind in ("xlsx", "xls", "ods"):
        if kind != "xlsx" and engine != "calamine":
            raise SheetError(
                f"{path.name} is an .{kind} workbook, which only the calamine engine reads",
                value=engine,
            )
        try:
            cells: CellGrid | ColumnGrid
            if kind == "xlsx" and columnar and engine == "calamine":
                cells = read_xlsx_columns(path, sheet_name, budget)
            elif kind == "xlsx":
                cells = read_xlsx_cells(path, sheet_name, engine=engine, budget=budget)
            else:
                cells = read_cells(path, sheet_name, kind, budget=budget)
        except SheetError:
            raise
        except WORKBOOK_ERRORS as error:
            raise failure(path, error, kind=kind) from None
        return path.name, _table_from_grid(cells), kind == "xlsx"
    delimiter = "\t" if path.suffix.lower() == ".tsv" else None
    return path.name, _table_from_text(path, delimiter, encoding), False


def _table_from_grid(cells: CellGrid | ColumnGrid) -> Table[Any]:
    if isinstance(cells, ColumnGrid):
        # Header cells of text only, each named (see .calamine_columns): none is dropped.
        headers = [" ".join(h.split()) for h in cells.headers]
        return _skip_disclaimer(Table(headers, cells.columns, cells.rows, cells.notes))
    if not len(cells.rows):
        return Table([], [], np.empty(0, np.int64), [])
    header_cells = cells.grid[0]
    data = cells.grid[1:]
    return _split_header(
        [value_text(v) if v is not None else "" for v in header_cells],
        [data[:, j] for j in range(data.shape[1])],
        cells.rows[1:],
        cells.notes,
    )


def _table_from_text(path: Path, delimiter: str | None, encoding: str | None) -> Table[ObjectArray]:
    """A delimited text file: decoded (:func:`.textfile.decode`), its delimiter detected, and
    each cell holding an undecodable byte noted as an error of its row."""
    decoded = decode(path.read_bytes(), path.name, encoding)
    text = decoded.text
    if not text.strip():
        raise SheetError(f"{path.name} holds no text (only blank lines): export the sheet again")
    records = text_records(text, delimiter or sniff_delimiter(text), path.name)
    first = next((i for i, r in enumerate(records) if any(c.strip() for c in r)), None)
    if first is None:
        return Table([], [], np.empty(0, np.int64), [])
    header = [c.strip() for c in records[first]]
    body = records[first + 1 :]
    rows = np.arange(first + 2, first + 2 + len(body), dtype=np.int64)
    notes: list[Note] = []
    if decoded.bad_bytes:
        header = _checked_header(header, path.name, first + 1)
        notes = _bad_cells(header, body, rows, decoded.encoding)
    width = max([len(header), *(len(r) for r in body)]) if body else len(header)
    columns = []
    for j in range(width):
        column = np.empty(len(body), dtype=object)
        # A leading quote the csv writers put before formula-like text is taken off again.
        column[:] = [
            (from_csv_text(r[j]) if r[j][:1] == "'" else r[j]) if j < len(r) else None for r in body
        ]
        columns.append(column)
    header += [""] * (width - len(header))
    return _split_header(header, columns, rows, notes)


def _checked_header(header: list[str], name: str, line: int) -> list[str]:
    for j, cell in enumerate(header):
        if has_bad_bytes(cell):
            raise SheetError(
                f"{name}: header {j + 1} on line {line} holds a byte that is not text in the "
                "file's encoding: fix the header, or pass the encoding the file was saved in "
                "(encoding=...)",
                column=f"column {j + 1}",
                value=shown(cell),
            )
    return header


def _bad_cells(
    header: list[str], body: list[list[str]], rows: IntArray, encoding: str
) -> list[Note]:
    """An error for each cell holding an undecodable byte, which is then made U+FFFD.

    The row is rejected rather than its cell flagged: the true character cannot be known, and a
    text with a replacement character (or without the cell) is not what the file says. The
    header column (not a position) is kept: :func:`_split_header` maps it to the header's
    position once blank headers are gone.
    """
    notes: list[Note] = []
    for i, record in enumerate(body):
        for j, cell in enumerate(record):
            if not has_bad_bytes(cell):
                continue
            notes.append(
                Note(
                    f"holds a byte that is not valid {encoding} (shown as \\xNN): the "
                    "character is unknown; fix the cell, or pass the encoding the file was "
                    "saved in (encoding=...)",
                    row=int(rows[i]),
                    position=j,
                    value=shown(cell),
                    severity="error",
                )
            )
            record[j] = replaced(cell)
    return notes


def _table_from_frame(frame: pd.DataFrame) -> Table[ObjectArray]:
    columns = []
    for j in range(frame.shape[1]):
        values = frame.iloc[:, j].to_numpy(dtype=object, copy=True)
        values[pd.isna(values)] = None
        columns.append(_python_scalars(values))
    rows = np.arange(2, 2 + len(frame), dtype=np.int64)
    return _split_header([str(c).strip() for c in frame.columns], columns, rows)


def _python_scalars(values: ObjectArray) -> ObjectArray:
    """Cells of a DataFrame column as a sheet holds them: plain Python scalars, and lists and
    mappings (a pulled frame's ``Images`` and ``ExtensionColumn``) as the JSON text a file of
    them holds, which the reader parses back as it does any file's."""
    if all(type(v) in (str, int, float, bool, type(None)) for v in values[:1000]):
        kinds = {type(v) for v in values}
        if kinds <= {str, int, float, bool, type(None)}:
            return values
    out = np.empty(len(values), dtype=object)
    out[:] = [_cell_of(v) for v in values]
    return out


def _cell_of(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        items = [{"Key": str(k), "value": "" if v is None else str(v)} for k, v in value.items()]
        return json.dumps(items, ensure_ascii=False) if items else None
    if isinstance(value, list | tuple | np.ndarray):
        texts = [str(item) for item in value if item is not None]
        return json.dumps(texts, ensure_ascii=False) if texts else None
    return value


def _split_header(
    headers: list[str],
    columns: list[ObjectArray],
    rows: IntArray,
    notes: list[Note] | None = None,
) -> Table[ObjectArray]:
    """Drop columns without a header (noting any values they held) and trim the headers.

    ``notes`` about data cells give their column's index in ``headers``; they come back with
    the index among the kept headers (a note in a dropped column is dropped with it).
    """
    kept_notes: list[Note] = []
    keep_headers: list[str] = []
    keep_columns: list[ObjectArray] = []
    index: dict[int, int] = {}
    for j, (header, column) in enumerate(zip(headers, columns, strict=True)):
        header = " ".join(header.split())
        if header:
            index[j] = len(keep_headers)
            keep_headers.append(header)
            keep_columns.append(column)
            continue
        filled = [i for i, v in enumerate(column) if v is not None and str(v).strip()]
        if filled:
            kept_notes.append(
                Note(
                    f"has {len(filled)} value(s) under a blank header: ignored",
                    column=f"column {j + 1}",
                )
            )
    for note in notes or []:
        if note.position is None:
            kept_notes.append(note)
        elif note.position in index:
            kept_notes.append(replace(note, position=index[note.position]))
    table = Table(keep_headers, keep_columns, rows, kept_notes)
    return _skip_disclaimer(table)


def _skip_disclaimer(table: Table[ColumnT]) -> Table[ColumnT]:
    """Drop a portal's disclaimer line, the first data row with long text in its first cell."""
    if not len(table.rows) or not table.columns:
        return table
    first = table.columns[0][0]
    others = [c[0] for c in table.columns[1:]]
    is_disclaimer = (
        isinstance(first, str)
        and len(first.strip()) >= _DISCLAIMER_MIN_LENGTH
        and " " in first.strip()
        and all(v is None or (isinstance(v, str) and not v.strip()) for v in others)
    )
    if not is_disclaimer:
        return table
    assert isinstance(first, str)
    row = int(table.rows[0])
    note = Note(
        "is a disclaimer line, not a listing: skipped",
        row=row,
        column=table.headers[0],
        value=first.strip()[:80],
    )
    # A disclaimer merged across the row says nothing about listings: its notes go with it.
    notes: list[Note] = [n for n in table.notes if n.row != row or n.position is None]
    return Table(table.headers, [c[1:] for c in table.columns], table.rows[1:], [*notes, note])


def drop_blank_rows(rows: IntArray, columns: list[Column]) -> tuple[IntArray, list[Column]]:
    """Leave out rows with nothing in them (blank cells, blank tokens and spaces only)."""
    if not columns:
        return np.empty(0, np.int64), columns
    filled = np.zeros(len(rows), dtype=bool)
    for column in columns:
        filled |= column.present | column.cleared
    if filled.all():
        return rows, columns
    return rows[filled], [c.take(filled) for c in columns]
