"""A file or frame → a table of raw cells with its header row: xlsx (through
:mod:`.xlsx`), csv, or a DataFrame; a disclaimer above the header skipped, blank rows dropped.
"""

from __future__ import annotations

import csv
import io
import json
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from estatebot._cells import from_csv_text
from estatebot.api.errors import SheetError
from estatebot.listings.sheet.cells import Column, IntArray, ObjectArray, value_text
from estatebot.listings.sheet.xlsx import CellGrid, read_xlsx_cells

#: A disclaimer row (portal exports) has one long text in its first cell and nothing else.
_DISCLAIMER_MIN_LENGTH = 30


# --------------------------------------------------------------------------- reading


@dataclass
class _Table:
    """A sheet's header and raw cell columns, with reader notes (row, column, value, text)."""

    headers: list[str]
    columns: list[ObjectArray]
    rows: IntArray
    notes: list[tuple[int, str | None, str | None, str]]


def read_table(
    source: str | os.PathLike[str] | pd.DataFrame, sheet_name: str | int | None
) -> tuple[str, _Table]:
    if isinstance(source, pd.DataFrame):
        return "<DataFrame>", _table_from_frame(source)
    path = Path(source)
    if not path.exists():
        raise SheetError(f"no such file: {path}")
    suffix = path.suffix.lower()
    if suffix == ".xls":
        raise SheetError("old .xls workbooks cannot be read: save the file as .xlsx or .csv")
    if suffix == ".parquet":
        try:
            frame = pd.read_parquet(path)
        except (OSError, ValueError) as error:
            raise SheetError(f"{path.name} cannot be read as parquet: {error}") from None
        return path.name, _table_from_frame(frame)
    if suffix in (".xlsx", ".xlsm") or (
        suffix not in (".csv", ".tsv", ".txt") and zipfile.is_zipfile(path)
    ):
        return path.name, _table_from_grid(read_xlsx_cells(path, sheet_name))
    return path.name, _table_from_csv(path, "\t" if suffix == ".tsv" else ",")


def _table_from_grid(cells: CellGrid) -> _Table:
    if not len(cells.rows):
        return _Table([], [], np.empty(0, np.int64), [])
    header_cells = cells.grid[0]
    data = cells.grid[1:]
    return _split_header(
        [value_text(v) if v is not None else "" for v in header_cells],
        [data[:, j] for j in range(data.shape[1])],
        cells.rows[1:],
    )


def _table_from_csv(path: Path, delimiter: str) -> _Table:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Exports saved by older desktop tools are often Windows-1252.
        text = raw.decode("cp1252", errors="replace")
    records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    first = next((i for i, r in enumerate(records) if any(c.strip() for c in r)), None)
    if first is None:
        return _Table([], [], np.empty(0, np.int64), [])
    header = [c.strip() for c in records[first]]
    body = records[first + 1 :]
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
    rows = np.arange(first + 2, first + 2 + len(body), dtype=np.int64)
    return _split_header(header, columns, rows)


def _table_from_frame(frame: pd.DataFrame) -> _Table:
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


def _split_header(headers: list[str], columns: list[ObjectArray], rows: IntArray) -> _Table:
    """Drop columns without a header (noting any values they held) and trim the headers."""
    notes: list[tuple[int, str | None, str | None, str]] = []
    keep_headers, keep_columns = [], []
    for j, (header, column) in enumerate(zip(headers, columns, strict=True)):
        header = " ".join(header.split())
        if header:
            keep_headers.append(header)
            keep_columns.append(column)
            continue
        filled = [i for i, v in enumerate(column) if v is not None and str(v).strip()]
        if filled:
            notes.append(
                (
                    -1,
                    f"column {j + 1}",
                    None,
                    f"has {len(filled)} value(s) under a blank header: ignored",
                )
            )
    table = _Table(keep_headers, keep_columns, rows, notes)
    return _skip_disclaimer(table)


def _skip_disclaimer(table: _Table) -> _Table:
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
    note = (
        int(table.rows[0]),
        table.headers[0],
        first.strip()[:80],
        "is a disclaimer line, not a listing: skipped",
    )
    return _Table(
        table.headers, [c[1:] for c in table.columns], table.rows[1:], [*table.notes, note]
    )


def drop_blank_rows(rows: IntArray, columns: list[Column]) -> tuple[IntArray, list[Column]]:
    """Leave out rows with nothing in them (blank cells, blank tokens and spaces only)."""
    if not columns:
        return np.empty(0, np.int64), columns
    filled = np.zeros(len(rows), dtype=bool)
    for column in columns:
        filled |= column.present | column.cleared
    if filled.all():
        return rows, columns
    kept = [
        Column(c.raw[filled], c.kind[filled], c.text[filled], c.cleared[filled]) for c in columns
    ]
    return rows[filled], kept
