"""Write a canonical listing frame to xlsx, csv or parquet, readable back by ``read_sheet``.

Spreadsheet cells hold text, so the two structured columns are written as JSON text in the
decided List serialization: ``Images`` as ``["https://...", ...]`` and ``ExtensionColumn`` as
``[{"Key": ..., "value": ...}]``. Parquet keeps ``Images`` as a list column and writes
``ExtensionColumn`` as JSON text too (its keys differ from row to row, which a struct cannot hold).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from estatebot.listings.schema import DICT_COLUMNS, LIST_COLUMNS

SUFFIXES = (".xlsx", ".csv", ".parquet")


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


def write_frame(frame: pd.DataFrame, path: str | Path, *, sheet_name: str = "Listings") -> Path:
    """Write ``frame`` to ``path``; the format follows the suffix (.xlsx, .csv or .parquet)."""
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
        cells.to_csv(target, index=False)
    else:
        with pd.ExcelWriter(target, engine="openpyxl") as writer:
            cells.to_excel(writer, sheet_name=sheet_name, index=False)
            sheet = writer.sheets[sheet_name]
            sheet.freeze_panes = "A2"
    return target
