"""What a plan reads from a spreadsheet: rows, values, cleared cells, rejections, unpublished.

Part of planning (:mod:`estatebot.listings.sync.plan.sync_planner`): :func:`sheet_parts` normalizes
a read sheet (:class:`SheetLike`) or a plain canonical frame into :class:`SheetParts`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from estatebot.listings import schema
from estatebot.listings.sync.plan.operations import InvalidRow
from estatebot.listings.sync.values.compare import normalize_key
from estatebot.listings.sync.values.payloads import FIELDS, Columns, json_columns
from estatebot.listings.sync.values.tidy import clean_extension, clean_frame, clean_images

__all__ = ["STRUCTURED", "TEXT_COLUMNS", "SheetLike", "SheetParts", "cleaner", "sheet_parts"]

#: The structured columns (``Images``, ``ExtensionColumn``) and the text columns.
STRUCTURED: tuple[str, ...] = (*schema.LIST_COLUMNS, *schema.DICT_COLUMNS)
TEXT_COLUMNS: tuple[str, ...] = tuple(c for c in schema.COLUMNS if schema.DTYPES[c] == "string")
_SCALAR_COLUMNS: tuple[str, ...] = tuple(c for c in schema.COLUMNS if c not in STRUCTURED)

Positions = np.ndarray[Any, np.dtype[np.integer[Any]]]
Mask = np.ndarray[Any, np.dtype[np.bool_]]


class SheetLike(Protocol):
    """What a plan needs from a read spreadsheet (``estatebot.listings.sheet.read.Sheet``)."""

    @property
    def frame(self) -> pd.DataFrame:
        """Canonical frame of the valid rows; index = the user-visible row number."""
        ...

    @property
    def issues(self) -> pd.DataFrame:
        """Problems found while reading: row, column, value, message, severity."""
        ...

    @property
    def cleared(self) -> pd.DataFrame:
        """Booleans like ``frame``: True where the user asked to empty that field."""
        ...

    @property
    def unpublished(self) -> pd.DataFrame:
        """Listings the export marks as not published: row, key, raw status."""
        ...

    @property
    def invalid_rows(self) -> Sequence[int]:
        """Row numbers the reader rejected."""
        ...


# --------------------------------------------------------------------------- parts


def cleaner(name: str) -> Callable[[Any], Any]:
    """The function that puts one value of a structured column in clean form."""
    return clean_images if name in schema.LIST_COLUMNS else clean_extension


@dataclass
class SheetParts:
    """The parts of a sheet a plan uses, normalized: values, rows, cleared, rejections.

    ``frame`` holds the scalar columns: numbers clean, text as given (``string`` dtype). Text and
    the structured columns (``structured``, as read, None when absent) are cleaned only where
    needed: most cells of a sheet equal their remote listing's as given, which settles them
    without cleaning.
    """

    frame: pd.DataFrame  # scalar columns, text not yet trimmed; positional index
    structured: dict[str, list[Any] | None]
    rows: list[int | None]
    cleared: dict[str, Mask]  # field → mask (only if any True)
    rejected: list[InvalidRow]
    unpublished: list[tuple[int | None, str | None, str]]  # (row, key text, raw status)
    notes: list[str]
    #: field → mask (only if any True): values from the reader's defaults, not from the sheet.
    defaulted: dict[str, Mask] = field(default_factory=dict)
    #: Values the reader set on every row on purpose (``read_sheet(overrides=...)``).
    overrides: dict[str, Any] = field(default_factory=dict)
    #: field → mask (only if any True): cells the reader warned about, held back from the plan.
    flagged: dict[str, Mask] = field(default_factory=dict)
    #: (position, field) → (column, value, message) of each flagged cell.
    flags: dict[tuple[int, str], tuple[str | None, str | None, str]] = field(default_factory=dict)
    #: field → mask (only if any True): values the reader computed, not given by the sheet.
    derived: dict[str, Mask] = field(default_factory=dict)
    #: position → ExtensionColumn keys the sheet clears (only rows with any).
    cleared_keys: dict[int, frozenset[str]] = field(default_factory=dict)

    def merged_extension(self, position: int, remote: Mapping[str, str]) -> dict[str, str]:
        """The listing's ExtensionColumn after the sheet row at ``position`` is laid over it.

        Keys the sheet gives set or replace their own value; keys only the listing has stay;
        keys the sheet clears are removed.
        """
        raw = self.structured.get("ExtensionColumn")
        own = clean_extension(raw[position]) if raw is not None else {}
        merged = {**remote, **own}
        for name in self.cleared_keys.get(position, ()):
            merged.pop(name, None)
        return merged

    def structured_values(self, name: str, positions: Sequence[int]) -> list[Any]:
        """Clean values of a structured column at the given positions."""
        clean, raw = cleaner(name), self.structured[name]
        if raw is None:
            return [clean(None) for _ in positions]
        return [clean(raw[p]) for p in positions]

    def json_columns(self, positions: Positions, columns: Sequence[str]) -> Columns:
        """Clean, JSON-safe values of the given columns at the given positions."""
        scalar = [c for c in columns if c not in STRUCTURED]
        rows = self.frame[scalar].take(positions)
        out = json_columns(clean_frame(rows, columns=scalar), scalar)
        chosen = positions.tolist()
        for name in columns:
            if name in STRUCTURED:
                out[name] = self.structured_values(name, chosen)
        return out


def _row_numbers(index: pd.Index[Any]) -> list[int | None]:
    if isinstance(index.dtype, np.dtype) and index.dtype.kind in "iu":
        numbers: list[int | None] = index.tolist()
        return numbers
    if pd.api.types.is_integer_dtype(index.dtype):
        return [int(label) for label in index.tolist()]
    rows: list[int | None] = []
    for position, label in enumerate(index.tolist()):
        try:
            number = float(label)
        except (TypeError, ValueError):
            rows.append(position + 1)
            continue
        rows.append(int(number) if number.is_integer() else position + 1)
    return rows


def _sheet_frame(source: pd.DataFrame) -> pd.DataFrame:
    """The scalar columns of a sheet, positionally indexed: numbers clean, text as given."""
    numbers = [c for c in _SCALAR_COLUMNS if c not in TEXT_COLUMNS]
    columns = dict(clean_frame(source, columns=numbers).reset_index(drop=True).items())
    index = pd.RangeIndex(len(source))
    for name in TEXT_COLUMNS:
        dtype = schema.DTYPES[name]
        if name in source.columns:
            columns[name] = pd.Series(source[name].astype(dtype).array, index=index, copy=False)
        else:
            columns[name] = pd.Series(pd.NA, index=index, dtype=dtype)
    return pd.DataFrame(columns, index=index, copy=False)


def sheet_parts(sheet: SheetLike | pd.DataFrame, key_column: str) -> SheetParts:
    """The parts of a read sheet, or of a plain canonical frame (nothing cleared or rejected)."""
    source = sheet if isinstance(sheet, pd.DataFrame) else sheet.frame
    frame = _sheet_frame(source)
    structured = {
        name: source[name].tolist() if name in source.columns else None for name in STRUCTURED
    }
    rows = _row_numbers(source.index)
    if isinstance(sheet, pd.DataFrame):
        return SheetParts(frame, structured, rows, {}, [], [], [])
    cleared = _masks(sheet.cleared, source.index)
    defaulted = _masks(getattr(sheet, "defaulted", None), source.index)
    overrides = dict(getattr(sheet, "overrides", None) or {})
    rejected, notes = _rejections(sheet, set(rows), key_column)
    unpublished = _unpublished(sheet.unpublished, key_column)
    flagged, flags = _flagged(sheet.issues, rows)
    cleared_keys = _cleared_keys(getattr(sheet, "cleared_keys", None), rows)
    return SheetParts(
        frame,
        structured,
        rows,
        cleared,
        rejected,
        unpublished,
        notes,
        defaulted,
        overrides,
        flagged,
        flags,
        derived=_masks(getattr(sheet, "derived", None), source.index),
        cleared_keys=cleared_keys,
    )


def _cleared_keys(
    by_row: pd.Series | None, rows: Sequence[int | None]
) -> dict[int, frozenset[str]]:
    """The ExtensionColumn keys each kept row clears, by position."""
    if by_row is None or not len(by_row):
        return {}
    position_of = {row: position for position, row in enumerate(rows) if row is not None}
    out: dict[int, frozenset[str]] = {}
    for row, names in zip(by_row.index.tolist(), by_row.tolist(), strict=True):
        position = position_of.get(int(row))
        if position is not None and names:
            out[position] = frozenset(str(name) for name in names)
    return out


def _flagged(
    issues: pd.DataFrame | None, rows: Sequence[int | None]
) -> tuple[dict[str, Mask], dict[tuple[int, str], tuple[str | None, str | None, str]]]:
    """The kept rows' cells the reader warned about, by field, with what it said of each."""
    flags: dict[tuple[int, str], tuple[str | None, str | None, str]] = {}
    if issues is None or not len(issues) or "field" not in issues.columns:
        return {}, flags
    warnings = issues[(issues["severity"].astype("string") == "warning").fillna(False)]
    position_of = {row: position for position, row in enumerate(rows) if row is not None}
    masks: dict[str, Mask] = {}
    for record in warnings.to_dict("records"):
        name, row = _text(record.get("field")), _text(record.get("row"))
        if name not in FIELDS or row is None:
            continue
        position = position_of.get(int(float(row)))
        if position is None:
            continue
        masks.setdefault(name, np.zeros(len(rows), dtype=bool))[position] = True
        message = _text(record.get("message")) or "the reader warned about this value"
        flags.setdefault(
            (position, name), (_text(record.get("column")), _text(record.get("value")), message)
        )
    return masks, flags


def _masks(flags: pd.DataFrame | None, index: pd.Index[Any]) -> dict[str, Mask]:
    """Boolean columns of a frame like the sheet's, as masks over its rows (any True only)."""
    masks: dict[str, Mask] = {}
    if flags is None or not len(flags.columns):
        return masks
    aligned = flags.reindex(index=index)
    for name in aligned.columns:
        if name in FIELDS:
            mask = aligned[name].astype("boolean").fillna(False).to_numpy(dtype=bool)
            if mask.any():
                masks[str(name)] = mask
    return masks


def _text(value: Any) -> str | None:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return str(value)


def _rejections(
    sheet: SheetLike, valid_rows: set[int | None], key_column: str
) -> tuple[list[InvalidRow], list[str]]:
    """Rows the reader rejected, with their error messages, and notes on sheet-level issues.

    A row's key is known where an issue names the key field's value (a duplicate key): the
    plan's views show it beside the row number.
    """
    notes: list[str] = []
    reasons: dict[int, list[str]] = {int(r): [] for r in sheet.invalid_rows}
    keys: dict[int, str] = {}
    issues = sheet.issues
    if issues is not None and len(issues):
        severity = (
            issues["severity"].astype("string").str.lower()
            if "severity" in issues.columns
            else pd.Series("error", index=issues.index, dtype="string")
        )
        errors = issues[(severity == "error").fillna(True).to_numpy(dtype=bool)]
        warnings = int((severity == "warning").fillna(False).sum())
        for record in errors.to_dict("records"):
            column, message = _text(record.get("column")), _text(record.get("message")) or ""
            value = _text(record.get("value"))
            text = f"{column}: {message}" if column else message
            if value is not None:
                text += f" (value {value!r})"
            row = _text(record.get("row"))
            if row is None:
                notes.append(f"sheet: {text}")
                continue
            number = int(float(row))
            if number in valid_rows and number not in reasons:
                continue  # the reader kept this row: its message is for information only
            reasons.setdefault(number, []).append(text)
            if value is not None and _text(record.get("field")) == key_column:
                keys.setdefault(number, value)
        if warnings:
            notes.append(f"the reader reported {warnings} warnings (see the sheet's issues)")
    rejected = [
        InvalidRow(row, keys.get(row), None, tuple(texts) or ("rejected by the sheet reader",))
        for row, texts in sorted(reasons.items())
    ]
    return rejected, notes


def _unpublished(
    frame: pd.DataFrame | None, key_column: str
) -> list[tuple[int | None, str | None, str]]:
    if frame is None or not len(frame):
        return []
    columns = list(frame.columns)
    status_column = next(
        (c for c in columns if str(c).lower() in ("status", "raw_status", "raw status")),
        next((c for c in columns if c not in ("row", "key")), None),
    )
    out: list[tuple[int | None, str | None, str]] = []
    for record in frame.to_dict("records"):
        row = _text(record.get("row"))
        status = _text(record.get(status_column)) if status_column is not None else None
        out.append(
            (
                int(float(row)) if row is not None else None,
                normalize_key(record.get("key"), key_column),
                status or "not published",
            )
        )
    return out
