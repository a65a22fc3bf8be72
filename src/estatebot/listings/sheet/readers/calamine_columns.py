"""The columnar read of an xlsx worksheet: fastexcel gives calamine's parse of the sheet as Arrow
columns, with no Python object per cell, and the cells come out as
:class:`~..fields.cells.Cells`, the same cells the cell-by-cell read (:func:`.calamine.read_xlsx`)
gives.

What calamine's values lose (numbers written ``3.0``, zero-padding formats) was found by the one
pass over the sheet's bytes that comes first (:mod:`.xlsx_guard`, :mod:`.xml_cells`): the sheet
is not read a second time for it, as the cell-by-cell read does (:func:`.xml_scan.survey`).

A column is read into one Arrow array, so the read is columnar only when every column below its
header holds one kind of value (text, numbers or booleans; formula errors aside) and the header
row is text: :mod:`.xml_cells` says so from that same pass, before any cell is parsed. Any other
sheet, and any the columnar read turns out not to fit (a date column, an alias among the
headers), is read cell by cell as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path
from typing import Any

import fastexcel
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from openpyxl.utils.cell import get_column_letter

from estatebot.listings.sheet.fields.cells import (
    BOOL,
    EXACT_LIMIT,
    FLOAT,
    INT,
    NONE,
    STR,
    Cells,
    FloatArray,
    IntArray,
    KindArray,
    present_rows,
)
from estatebot.listings.sheet.readers import calamine as fastbook
from estatebot.listings.sheet.readers import xml_cells
from estatebot.listings.sheet.readers.budget import Budget, give_back
from estatebot.listings.sheet.readers.grid import CellGrid, ZeroPad, error_note, scan_notes
from estatebot.listings.sheet.readers.notes import Note
from estatebot.listings.sheet.readers.xlsx_guard import Prepared, prepare
from estatebot.listings.sheet.readers.xlsx_openpyxl import read_prepared
from estatebot.listings.sheet.readers.xml_scan import MAX_NAMED, Findings, Survey, parse_findings
from estatebot.listings.sheet.readers.xml_shape import Shape

# fastexcel's names for columns with no header, and for a header met twice.
_GENERATED = "__UNNAMED__"
_ALIAS = re.compile(r"(.*)_[0-9]+", re.DOTALL)
# The Arrow type fastexcel is asked for, by the one kind a column holds below its header.
_DTYPES = {0: "string", xml_cells.TEXT: "string", xml_cells.BOOL: "boolean"}


@dataclass(frozen=True)
class ColumnGrid:
    """The header row of a worksheet and, for each column it names, the cells under it.

    ``header_row`` is the header's 1-based row, ``headers`` the named columns' header texts,
    ``named`` their 1-based column numbers, ``columns`` their cells in the ``rows`` (1-based)
    holding a value, and ``notes`` what the grid cannot show (as :class:`.grid.CellGrid`).
    """

    header_row: int
    headers: list[str]
    named: list[int]
    columns: list[Cells]
    rows: IntArray
    notes: list[Note] = field(default_factory=list)


def read_xlsx_columns(
    path: str | PathLike[str], sheet_name: str | int | None, budget: Budget
) -> ColumnGrid | CellGrid:
    """One worksheet of an xlsx file, by columns when it can be (see the module's docstring),
    else cell by cell (:func:`.xlsx_openpyxl.read_prepared`)."""
    prepared = prepare(path, sheet_name, budget, calamine=True)
    if prepared.calamine and prepared.pads is not None and reads_by_columns(prepared.shape):
        grid = _read_columns(path, prepared)
        if grid is not None:
            return replace(grid, notes=[*prepared.notes, *grid.notes])
    return read_prepared(path, prepared, budget)


def reads_by_columns(shape: Shape) -> bool:
    """Whether a sheet of ``shape`` can be read by columns: a header row of text (or errors),
    and under each header one kind of value (or none, or errors)."""
    if not shape.top_row:
        return False
    if any(kinds & ~(xml_cells.TEXT | xml_cells.ERROR) for kinds in shape.top_kinds.values()):
        return False
    return all(
        shape.kinds.get(column, 0) & ~xml_cells.ERROR
        in (0, xml_cells.TEXT, xml_cells.NUMBER, xml_cells.BOOL)
        for column, kinds in shape.top_kinds.items()
        if kinds & xml_cells.TEXT
    )


def _read_columns(path: str | PathLike[str], prepared: Prepared) -> ColumnGrid | None:
    """The columnar read, or None when the sheet turns out to need the cell-by-cell one."""
    shape = prepared.shape
    pads = prepared.pads or {}
    wanted = sorted({*shape.top_kinds, *shape.kinds})
    dtypes: dict[int | str, Any] = {}
    for column in wanted:
        below = shape.kinds.get(column, 0) & ~xml_cells.ERROR
        if not shape.top_kinds.get(column, 0) & xml_cells.TEXT:
            dtypes[column - 1] = "string"  # no header: its values are only counted
        elif below in _DTYPES:
            dtypes[column - 1] = _DTYPES[below]
        # Numbers are left to fastexcel, which tells dates by their format.

    def load() -> pa.RecordBatch:
        reader = _open(path)
        batch: pa.RecordBatch = reader.load_sheet(
            prepared.position,
            header_row=shape.top_row - 1,
            skip_rows=0,
            schema_sample_rows=None,
            use_columns=[c - 1 for c in wanted],
            dtypes=dtypes,
            eager=True,
        )
        return batch

    # The pass over the sheet's structure found what the survey would: the parse runs alone,
    # and no second pass over the bytes is made.
    try:
        batch, found = fastbook._values_beside_survey(
            load, str(path), prepared.member, pads, shape.detailed, fastbook._known(prepared)
        )
    except fastexcel.FastExcelError:
        return None  # an error cell fastexcel will not type, a column it cannot find...
    grid = _grid(batch, wanted, shape, found, pads, str(path), prepared.member)
    del batch  # the cells are copied out of it: its memory and calamine's can go back
    give_back()
    return grid


def _open(path: str | PathLike[str]) -> fastexcel.ExcelReader:
    # fastexcel picks its reader by the file's suffix, as calamine does (see .calamine._open).
    if str(path).lower().endswith(".xlsx"):
        return fastexcel.read_excel(str(path))
    return fastexcel.read_excel(Path(path).read_bytes())


def _grid(
    batch: pa.RecordBatch,
    wanted: list[int],
    shape: Shape,
    found: Survey,
    pads: dict[int, ZeroPad],
    path: str,
    member: str,
) -> ColumnGrid | None:
    header_row = shape.top_row
    if batch.num_columns != len(wanted):
        return None
    header = _header(batch.schema.names, wanted, shape)
    if header is None:
        return None
    named = [c for c, text in header.items() if text.strip()]
    if not named:
        return None  # the first row holding a value shows nothing: the header is further down
    by_column = dict(zip(wanted, batch.columns, strict=True))
    columns: dict[int, ColumnCells] = {}
    for column in named:
        array = by_column[column]
        if shape.kinds.get(column, 0) & xml_cells.NUMBER and not _is_number(array.type):
            return None  # dates (or dates among numbers): read cell by cell
        columns[column] = column_cells(array)
    _check_nan(columns, named, header_row)
    first_row = header_row + 1
    for (row, column), written in found.numbers.items():
        fixed = columns.get(column)
        if fixed is not None and 0 <= row - first_row < len(fixed.kind):
            fixed.set_number(row - first_row, written)
    pad_styled(columns, found.styles(), pads, first_row)
    if member and found.detailed:
        findings = parse_findings(path, member, named, header_row)
    else:
        findings = _other_columns(by_column, named, header_row)
    notes = _put_errors(columns, findings, named, header_row)
    cells = [columns[c].cells() for c in named]
    present = present_rows(cells, batch.num_rows)
    rows = np.flatnonzero(present).astype(np.int64) + first_row
    all_rows = np.concatenate([np.array([header_row], np.int64), rows])
    notes += scan_notes(findings, header_row, dict(header), named, all_rows)
    kept = [c.take(present) for c in cells] if not present.all() else cells
    return ColumnGrid(header_row, [header[c] for c in named], named, kept, rows, notes)


def _header(names: list[str], wanted: list[int], shape: Shape) -> dict[int, str] | None:
    """The header's text by column (only the columns whose header cell holds text), or None
    when a name fastexcel gives may not be the text itself (a name it made up or changed)."""
    header: dict[int, str] = {}
    for i, (column, name) in enumerate(zip(wanted, names, strict=True)):
        if not shape.top_kinds.get(column, 0) & xml_cells.TEXT:
            continue
        alias = _ALIAS.fullmatch(name)
        if name.startswith(_GENERATED) or (alias is not None and alias.group(1) in names[:i]):
            return None
        if name:
            header[column] = name
    return header


def _is_number(kind: pa.DataType) -> bool:
    return bool(pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_null(kind))


def _check_nan(columns: dict[int, ColumnCells], named: list[int], header_row: int) -> None:
    """Refuse a number cell that is NaN, naming the first one (row by row), as the cell-by-cell
    read does."""
    first: tuple[int, int] | None = None
    for k, column in enumerate(named):
        i = columns[column].first_nan()
        if i is not None and (first is None or (i, k) < first):
            first = (i, k)
    if first is not None:
        i, k = first
        raise ValueError(f"{get_column_letter(named[k])}{header_row + 1 + i}: NaN is not a number")


def _other_columns(by_column: dict[int, pa.Array], named: list[int], header_row: int) -> Findings:
    """The values in columns without a header, as :func:`.calamine._other_columns` counts them:
    under a blank header, and (the first few named) right of the last header."""
    found = Findings()
    wanted = set(named)
    for column, array in sorted(by_column.items()):
        if column in wanted:
            continue
        filled = _shown(array)
        if not len(filled):
            continue
        if column < named[-1]:
            found.unnamed[column] = len(filled)
            continue
        found.beyond_count += len(filled)
        found.beyond.extend((header_row + 1 + int(i), column) for i in filled[:MAX_NAMED])
    found.beyond.sort()
    del found.beyond[MAX_NAMED:]
    return found


def _shown(array: pa.Array) -> IntArray:
    """The positions of the cells that show something (text of spaces only shows nothing)."""
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        # Numbers, booleans, dates (under a blank header fastexcel may type as it likes).
        return np.flatnonzero(np.asarray(array.is_valid()))
    cells = column_cells(array).cells()
    kind = cells.kind
    shown = (kind != NONE) & (kind != STR)
    strings = np.flatnonzero(kind == STR)
    if len(strings):
        texts = cells.text.take(strings).to_pylist()
        shown[strings[np.array([bool(t.strip()) for t in texts], dtype=bool)]] = True
    return np.flatnonzero(shown)


def _put_errors(
    columns: dict[int, ColumnCells], findings: Findings, named: list[int], header_row: int
) -> list[Note]:
    """Formula errors as their text (as openpyxl reads them), each but ``#N/A`` (a blank token)
    with an error note."""
    position = {c: k for k, c in enumerate(named)}
    notes = []
    for row, column, text in sorted(findings.errors):
        cells = columns[column]
        i = row - header_row - 1
        if not 0 <= i < len(cells.kind):
            continue
        cells.put_texts(np.array([i], np.int64), [text])
        if text != "#N/A":
            notes.append(
                error_note(f"{get_column_letter(column)}{row}", text, row, position[column])
            )
    return notes


# --------------------------------------------------------------- Arrow columns as cells
#
# calamine's Arrow columns as Cells, with the cells openpyxl reads otherwise made the same, a
# column at a time (see .calamine for the rules, there applied cell by cell): a whole number is
# an int unless written 3.0 or 1.5E+3, one written with more digits than a float keeps is the
# exact int written, a whole number under a zero-padding format is the padded text, a formula
# error is its text, and an empty text is no value.

#: Zero padding applies to whole numbers from 0 up to this (see :class:`.grid.ZeroPad`).
_PAD_LIMIT = 1e15


@dataclass
class ColumnCells:
    """One column's cells while they are fixed: arrays, and the texts to put in."""

    kind: KindArray
    number: FloatArray
    text: pa.Array
    exact: dict[int, Any] = field(default_factory=dict)
    texts: dict[int, str] = field(default_factory=dict)

    def first_nan(self) -> int | None:
        """The first number cell that is NaN (calamine reads ``NaN`` written as a number)."""
        nan = np.flatnonzero(((self.kind == INT) | (self.kind == FLOAT)) & np.isnan(self.number))
        return int(nan[0]) if len(nan) else None

    def set_number(self, i: int, written: bytes) -> None:
        """Cell ``i``, a number, as ``written`` in the sheet: a float when written with a point
        or an exponent, else the exact int."""
        if self.kind[i] not in (INT, FLOAT):
            return
        if any(mark in written for mark in (b".", b"e", b"E")):
            self.kind[i], self.number[i] = FLOAT, float(written)
            self.exact.pop(i, None)
            return
        value = int(written)
        self.kind[i] = INT
        try:
            self.number[i] = float(value)
        except OverflowError:
            self.number[i] = np.inf if value > 0 else -np.inf
        if abs(self.number[i]) >= EXACT_LIMIT:
            self.exact[i] = value
        else:
            self.exact.pop(i, None)

    def pad(self, positions: IntArray, pad: ZeroPad) -> None:
        """The whole numbers at ``positions`` padded as ``pad`` shows them."""
        if not pad.head or not len(positions):
            return
        number = self.number[positions]
        numeric = (self.kind[positions] == INT) | (self.kind[positions] == FLOAT)
        padded = numeric & (number == np.floor(number)) & (number >= 0) & (number < _PAD_LIMIT)
        at = positions[padded]
        if not len(at):
            return
        digits = pc.utf8_lpad(
            pa.array(self.number[at].astype(np.int64)).cast(pa.string()),
            width=pad.head + pad.tail,
            padding="0",
        )
        if pad.tail:
            digits = pc.binary_join_element_wise(
                pc.utf8_slice_codeunits(digits, 0, -pad.tail),
                pc.utf8_slice_codeunits(digits, -pad.tail, None),
                "-",
            )
        self.put_texts(at, digits.to_pylist())

    def put_texts(self, positions: IntArray, texts: list[str]) -> None:
        """Text cells ``texts`` at ``positions``, whatever the cells held."""
        self.kind[positions] = STR
        if self.number.flags.writeable:
            self.number[positions] = np.nan
        for i, text in zip(positions.tolist(), texts, strict=True):
            self.exact.pop(i, None)
            self.texts[i] = text

    def cells(self) -> Cells:
        """The column's cells, fixed."""
        text = self.text
        if self.texts:
            positions = np.array(sorted(self.texts), dtype=np.int64)
            mask = np.zeros(len(self.kind), dtype=bool)
            mask[positions] = True
            values = pa.array([self.texts[int(i)] for i in positions], type=text.type)
            text = pc.replace_with_mask(text, pa.array(mask), values)
        return Cells(self.kind, text, self.number, dict(self.exact))


def column_cells(array: pa.Array) -> ColumnCells:
    """The cells of one Arrow column as fastexcel gives it (text, numbers, booleans or none)."""
    n = len(array)
    kind = np.zeros(n, np.int8)
    valid = np.asarray(array.is_valid()) if array.null_count else np.ones(n, dtype=bool)
    kind_of = pa.types
    if kind_of.is_string(array.type) or kind_of.is_large_string(array.type):
        # Large strings, as pandas holds them: cast once here, not copied by each Series.
        text = array.cast(pa.large_string(), memory_pool=pa.system_memory_pool())
        empty = np.asarray(pc.equal(pc.binary_length(text), 0).fill_null(False))
        if empty.any():
            text = pc.if_else(pa.array(empty), pa.scalar(None, text.type), text)
        kind[valid & ~empty] = STR
        # No number in a text column: one NaN seen n times, no array of them.
        return ColumnCells(kind, np.broadcast_to(np.float64(np.nan), n), text)
    number = np.full(n, np.nan)
    text = pa.nulls(n, pa.large_string())
    if kind_of.is_boolean(array.type):
        kind[valid] = BOOL
        number[valid] = np.asarray(array.fill_null(False), dtype=float)[valid]
        return ColumnCells(kind, number, text)
    if kind_of.is_floating(array.type) or kind_of.is_integer(array.type):
        values = np.asarray(array.cast(pa.float64()).fill_null(np.nan), dtype=float)
        number[valid] = values[valid]
        whole = valid & np.isfinite(values) & (values == np.floor(values))
        kind[valid] = FLOAT
        kind[whole] = INT
        kind[valid & np.isnan(values)] = FLOAT
        return ColumnCells(kind, number, text)
    if kind_of.is_null(array.type):
        return ColumnCells(kind, number, text)
    raise TypeError(f"no cells of Arrow type {array.type}")


def pad_styled(
    columns: Mapping[int, ColumnCells],
    styled: tuple[IntArray, IntArray, IntArray],
    pads: Mapping[int, ZeroPad],
    first_row: int,
) -> None:
    """Pad the styled cells (rows, columns and styles) of ``columns`` (by sheet column), the
    data beginning at row ``first_row``."""
    rows, sheet_columns, styles = styled
    for column, cells in columns.items():
        here = sheet_columns == column
        if not here.any():
            continue
        at = rows[here] - first_row
        style = styles[here]
        inside = (at >= 0) & (at < len(cells.kind))
        for code in np.unique(style[inside]).tolist():
            pad = pads.get(int(code))
            if pad is not None:
                cells.pad(at[inside & (style == code)], pad)
