"""Write a canonical listing frame to xlsx, csv or parquet, readable back by ``read_sheet``.

Spreadsheet cells hold text, so the two structured columns are written as JSON text in the
decided List serialization: ``Images`` as ``["https://...", ...]`` and ``ExtensionColumn`` as
``[{"Key": ..., "value": ...}]``. Parquet keeps ``Images`` as a list column and writes
``ExtensionColumn`` as JSON text too (its keys differ from row to row, which a struct cannot hold).

Listing text is untrusted, and goes through the rules of :mod:`estatebot._safe_cells`:

* text a spreadsheet would run as a formula (``=SUM(A1)``, ``-5% off``, ``@x``) stays text: an
  xlsx string cell with Excel's quote-prefix mark, the value unchanged; in csv, a leading ``'``
  that ``read_sheet`` takes off again. Numbers, negative ones included, stay numbers.
* characters an xlsx cell cannot hold (``\\x00``, ``\\x0b``, ``\\x1b``, ...) are removed from an
  xlsx file and the cells named in a :class:`~estatebot._safe_cells.CellWarning`; csv keeps them.
* a text longer than an xlsx cell holds (32,767 characters) is an :class:`ExportError` naming
  the row, the column and the length, and nothing is written: a cut value read back as a sheet
  would be planned over the listing's whole text. csv and parquet keep it whole.
* an infinite number is written as the text ``inf`` in xlsx (the format has no such number) and
  as ``inf`` in csv; parquet keeps it as a number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from openpyxl import Workbook

from estatebot._safe_cells import (
    CSV_QUOTED,
    XLSX_MAX_CHARS,
    CellChange,
    CellTooLong,
    Characters,
    SheetWriter,
    TooLong,
    csv_text,
    frame_rows,
    warn_changes,
)
from estatebot.errors import LocatedError
from estatebot.listings.schema import DICT_COLUMNS, LIST_COLUMNS

SUFFIXES = (".xlsx", ".csv", ".parquet")


class ExportError(LocatedError):
    """A frame cannot be written to a file as it is; names the row, the column and why."""


def _images_text(value: Any) -> str:
    return json.dumps(list(value), ensure_ascii=False) if isinstance(value, list) and value else ""


def _extensions_text(value: Any) -> str:
    if not isinstance(value, dict) or not value:
        return ""
    items = [{"Key": key, "value": text} for key, text in value.items()]
    return json.dumps(items, ensure_ascii=False)


def flatten_for_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with list and dict columns as JSON text, fit for spreadsheet cells."""
    out = frame.copy()
    for column in LIST_COLUMNS:
        if column in out.columns:
            out[column] = out[column].map(_images_text).astype("string")
    for column in DICT_COLUMNS:
        if column in out.columns:
            out[column] = out[column].map(_extensions_text).astype("string")
    return out


def write_workbook(
    path: Path,
    sheets: Mapping[str, pd.DataFrame],
    *,
    characters: Characters = "remove",
    too_long: TooLong = "error",
) -> list[CellChange]:
    """Write each frame (cells already flat) as a sheet of one xlsx workbook, header in row 1;
    returns the cells changed to fit (see :class:`~estatebot._safe_cells.SheetWriter`).

    ``characters`` is ``"remove"`` (an export) or ``"escape"`` (a backup, read back exactly);
    ``too_long`` is ``"error"`` (:class:`~estatebot._safe_cells.CellTooLong` is raised before
    anything is saved: the workbook is written to ``path`` only at the end) or ``"cut"``.
    """
    book = Workbook(write_only=True)
    changes: list[CellChange] = []
    for title, frame in sheets.items():
        header = [str(column) for column in frame.columns]
        writer = SheetWriter(book, title, header, characters=characters, too_long=too_long)
        for values in frame_rows(frame):
            writer.append(values)
        changes += writer.changes
    book.save(path)
    return changes


def csv_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` fit for csv: text that would read as a formula quoted
    (:func:`~estatebot._safe_cells.csv_text`), which ``read_sheet`` reads back exactly."""
    out = frame.copy()
    for column in out.columns:
        series = out[column]
        if not (pd.api.types.is_string_dtype(series) or series.dtype == object):
            continue  # numbers stay numbers: -5 is the number -5, not a formula
        values = series.tolist()
        # Only text is quoted; NA, and numbers in a column of mixed values, are left alone.
        marked = [isinstance(v, str) and v[:1] in CSV_QUOTED for v in values]
        if any(marked):
            quoted = [csv_text(v) if m else v for v, m in zip(values, marked, strict=True)]
            out[column] = pd.Series(quoted, index=out.index, dtype=series.dtype)
    return out


def write_frame(frame: pd.DataFrame, path: str | Path, *, sheet_name: str = "Listings") -> Path:
    """Write ``frame`` to ``path``; the format follows the suffix (.xlsx, .csv or .parquet).

    Cells that had to change to fit the format (see the module's notes) are named in one
    :class:`~estatebot._safe_cells.CellWarning`; a value that cannot be written at all raises
    :class:`ExportError` and leaves ``path`` as it was.
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(
            f"cannot write {target.name!r}: the file name must end in one of {', '.join(SUFFIXES)}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".parquet":
        out = frame.copy()
        for column in DICT_COLUMNS:
            if column in out.columns:
                out[column] = out[column].map(_extensions_text).astype("string")
        out.to_parquet(target, index=False)
        return target
    cells = flatten_for_cells(frame)
    if suffix == ".csv":
        csv_cells(cells).to_csv(target, index=False)
        changes: list[CellChange] = []
    else:
        try:
            changes = write_workbook(target, {sheet_name: cells})
        except CellTooLong as error:
            raise ExportError(
                f"cannot write {target.name}: a text of {error.length:,} characters is longer "
                f"than an xlsx cell holds ({XLSX_MAX_CHARS:,}); write .csv or .parquet, which "
                "keep it whole",
                row=error.row,
                column=error.column,
            ) from None
    warn_changes(changes, target.name)
    return target
