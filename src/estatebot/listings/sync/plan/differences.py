"""Which fields of paired listings differ, column by column over all pairs at once.

A blank sheet cell keeps the remote value; a cleared one empties the field; values are compared
canonically (:mod:`~estatebot.listings.sync.values.compare`).
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import eq
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings.sync.plan.desired import (
    STRUCTURED,
    TEXT_COLUMNS,
    SheetParts,
    cleaner,
)
from estatebot.listings.sync.plan.pairing import Mask, Pairing, Positions, pick, take_rows
from estatebot.listings.sync.values.compare import blank_mask, equal_mask
from estatebot.listings.sync.values.payloads import (
    FIELDS,
)
from estatebot.listings.sync.values.tidy import clean_text


def _equal_as_given(left: list[Any], right: list[Any]) -> Mask:
    """Where two lists of values are equal as they are (False where that cannot be told)."""
    try:
        return np.fromiter(map(eq, left, right), dtype=bool, count=len(left))
    except (TypeError, ValueError):  # a value that compares ambiguously (NA, an array)
        return np.zeros(len(left), dtype=bool)


def _structured_differs(
    parts: SheetParts,
    name: str,
    matched: Positions,
    remote_values: list[Any],
    clear: Mask | None,
) -> Mask:
    """Which matched sheet rows change a structured field of their remote listing.

    A sheet value equal to the (clean) remote value as given is settled at once; only the others
    are cleaned and compared.
    """
    differs = np.zeros(len(matched), dtype=bool)
    raw = parts.structured[name]
    if name == "ExtensionColumn":
        differs = _extension_differs(parts, matched, remote_values)
    elif raw is not None:
        sheet_values = pick(raw, matched)
        clean = cleaner(name)
        for i in np.flatnonzero(~_equal_as_given(sheet_values, remote_values)).tolist():
            value = clean(sheet_values[i])
            differs[i] = bool(value) and value != remote_values[i]
    if clear is not None:
        filled = np.fromiter(map(len, remote_values), dtype=np.int64, count=len(remote_values))
        differs = (differs & ~clear) | (clear & (filled > 0))
    return differs


def _extension_differs(parts: SheetParts, matched: Positions, remote_values: list[Any]) -> Mask:
    """Which matched rows change their listing's ExtensionColumn once merged into it by key."""
    differs = np.zeros(len(matched), dtype=bool)
    raw = parts.structured["ExtensionColumn"]
    if raw is None and not parts.cleared_keys:
        return differs
    sheet_values = pick(raw, matched) if raw is not None else [{}] * len(matched)
    # A row whose sheet mapping equals the listing's as given, and that clears nothing, is settled.
    unsettled = ~_equal_as_given(sheet_values, remote_values)
    if parts.cleared_keys:
        unsettled |= np.isin(matched, list(parts.cleared_keys))
    for i in np.flatnonzero(unsettled).tolist():
        remote = remote_values[i]
        differs[i] = parts.merged_extension(int(matched[i]), remote) != remote
    return differs


def _text_differs(
    sheet_column: pd.Series[Any], remote_column: pd.Series[Any], clear: Mask | None
) -> Mask:
    """Which sheet cells (text as given) change a text field of their (clean) remote listing.

    A cell equal to the remote value as given is settled at once; only the others are cleaned
    and compared.
    """
    differs = np.zeros(len(sheet_column), dtype=bool)
    unsettled = ~equal_mask(sheet_column, remote_column) & sheet_column.notna().to_numpy(bool)
    check = np.flatnonzero(unsettled)
    if len(check):
        sheet_text = clean_text(sheet_column.iloc[check])
        remote_text = remote_column.iloc[check]
        differs[check] = ~blank_mask(sheet_text) & ~equal_mask(sheet_text, remote_text)
    if clear is not None:
        differs = (differs & ~clear) | (clear & ~blank_mask(remote_column))
    return differs


def field_differences(
    ctx: Pairing, matched: Positions, remote_at: Positions, tolerance_of: Mapping[str, float]
) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Which fields of the matched sheet rows differ from their remote listings (rows × FIELDS).

    A blank sheet cell keeps the remote value; a cleared one empties the field; a value that came
    from ``defaults`` only fills an empty field. The comparison runs column by column over all
    matched rows at once.
    """
    sheet_m = take_rows(ctx.parts.frame, matched)
    remote_m = take_rows(ctx.remote, remote_at)
    differs = np.zeros((len(matched), len(FIELDS)), dtype=bool)
    for j, name in enumerate(FIELDS):
        if name == ctx.key_column:
            # Equal by construction (it is how the rows were paired), but where a row was paired
            # by its other identity: there the key itself changes.
            moved = ctx.by_identity[matched]
            if moved.any():
                column = _text_differs(sheet_m[name], remote_m[name], None)
                differs[:, j] = column & moved
            continue
        mask = ctx.parts.cleared.get(name)
        clear = mask[matched] if mask is not None else None
        if name in STRUCTURED:
            remote_values = remote_m[name].tolist()
            differs[:, j] = _structured_differs(ctx.parts, name, matched, remote_values, clear)
            continue
        sheet_column, remote_column = sheet_m[name], remote_m[name]
        if name in TEXT_COLUMNS:
            differs[:, j] = _text_differs(sheet_column, remote_column, clear)
            continue
        take_sheet = ~blank_mask(sheet_column)
        if clear is not None:
            take_sheet &= ~clear
        same = equal_mask(sheet_column, remote_column, tolerance=tolerance_of.get(name))
        column = take_sheet & ~same
        if clear is not None:
            column |= clear & ~blank_mask(remote_column)
        differs[:, j] = column
    _keep_own_values(ctx.parts, matched, remote_m, differs)
    return differs


def _keep_own_values(
    parts: SheetParts, matched: Positions, remote_m: pd.DataFrame, differs: Mask
) -> None:
    """Unmark the changes a default would make to a listing that has a value of its own.

    A default fills an empty field; it never replaces what the listing already holds. A value
    the reader computed (a unit price) goes only with a change of what it is computed from.
    """
    sources = [FIELDS.index(name) for name in ("SalePrice", "RentPrice", "BuildingArea")]
    for name, mask in parts.derived.items():
        j = FIELDS.index(name)
        differs[:, j] &= ~mask[matched] | differs[:, sources].any(axis=1)
    for name, mask in parts.defaulted.items():
        j = FIELDS.index(name)
        fill = mask[matched]
        if not fill.any():
            continue
        if name in STRUCTURED:
            values = remote_m[name].tolist()
            own = np.fromiter(map(len, values), dtype=np.int64, count=len(values)) > 0
        else:
            own = ~blank_mask(remote_m[name])
        differs[:, j] &= ~(fill & own)
