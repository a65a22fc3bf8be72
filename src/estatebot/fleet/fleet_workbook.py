"""A fleet's table in a workbook: one row per chatbot, written by the safe-cell rules (chatbot
names and errors come from manifests and services: never a formula, nothing a cell refuses)."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import pandas as pd

from estatebot._safe_cells import SheetWriter, frame_rows, warn_changes

__all__ = ["write_fleet_table"]


def write_fleet_table(frame: pd.DataFrame, path: str | PathLike[str], *, sheet_name: str) -> Path:
    """Write ``frame`` (a fleet's table) to the workbook ``path``; returns the path."""
    from openpyxl import Workbook

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    book = Workbook(write_only=True)
    writer = SheetWriter(book, sheet_name, tuple(str(column) for column in frame.columns))
    for values in frame_rows(frame):
        writer.append(values)
    book.save(target)
    warn_changes(writer.changes, target.name)
    return target
