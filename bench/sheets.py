"""Big MLS-like xlsx exports for the benchmarks, written once per run with openpyxl.

The sheet is a realistic export: 30 columns (the canonical fields the service returns), a
portal's disclaimer line under the header, ZIP codes stored as numbers under the ``00000``
format (the reader must pad them), lists and mappings as the JSON text a pulled file holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell

from bench.bench_plan import make_remote

DISCLAIMER = "In accordance with local MLS rules, some MLS listings are not included"


def sheet_columns(frame: pd.DataFrame) -> list[str]:
    """The 30 columns written: every canonical column but the service's ID and its derived
    price per area (so the sheet is what an MLS exports)."""
    return [c for c in frame.columns if c not in ("ID", "UnitAreaPrice", "ZestimatePrice")][:30]


def _cell(value: Any) -> Any:
    if isinstance(value, list | dict):
        return json.dumps(value)
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    return value.item() if hasattr(value, "item") else value


def write_export(frame: pd.DataFrame, path: Path) -> Path:
    """``frame`` (a canonical frame) written as an MLS export xlsx at ``path``."""
    columns = sheet_columns(frame)
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("Export")
    sheet.append(columns)
    sheet.append([DISCLAIMER])
    zip_at = columns.index("ZIP")
    for record in frame[columns].itertuples(index=False):
        values = [_cell(v) for v in record]
        code = values[zip_at]
        if isinstance(code, str) and code.isdigit():
            cell = WriteOnlyCell(sheet, value=int(code))
            cell.number_format = "00000"
            values[zip_at] = cell
        sheet.append(values)
    workbook.save(path)
    return path


def export_of(rows: int, folder: Path) -> tuple[pd.DataFrame, Path]:
    """The canonical frame of ``rows`` listings, and it written as an export in ``folder``."""
    frame = make_remote(rows)
    return frame, write_export(frame, folder / f"export-{rows}.xlsx")
