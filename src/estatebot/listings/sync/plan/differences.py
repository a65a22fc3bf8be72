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
import pyarrow as pa
import pyarrow.compute as pc

from estatebot.listings.sync.plan.columns import take_positions
from estatebot.listings.sync.plan.desired import (
    STRUCTURED,
    TEXT_COLUMNS,
    SheetParts,
    cleaner,
)
from estatebot.listings.sync.plan.pairing import Mask, Pairing, Positions, pick
from estatebot.listings.sync.values.compare import equal_floats
from estatebot.listings.sync.values.payloads import (
    FIELDS,
)
from estatebot.listings.sync.values.tidy import arrow_text, clean_text


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


def _text_differs(sheet: pa.Array, remote: pa.Array, clear: Mask | None) -> Mask:
    """Which sheet cells (text as given) change a text field of their (clean) remote listing.

    A cell equal to the remote value as given is settled at once; only the others are cleaned
    and compared.
    """
    differs = np.zeros(len(sheet), dtype=bool)
    same = pc.fill_null(pc.equal(sheet, remote), False).to_numpy(zero_copy_only=False)
    unsettled = ~same & sheet.is_valid().to_numpy(zero_copy_only=False)
    check = np.flatnonzero(unsettled)
    if len(check):
        at = pa.array(check)
        given = pd.Series(pd.arrays.ArrowStringArray(sheet.take(at)), copy=False)
        sheet_text = arrow_text(clean_text(given))
        remote_text = remote.take(at)
        changed = pc.and_(
            sheet_text.is_valid(),
            pc.fill_null(pc.not_equal(sheet_text, remote_text), True),
        )
        differs[check] = changed.to_numpy(zero_copy_only=False)
    if clear is not None:
        filled = remote.is_valid().to_numpy(zero_copy_only=False)
        differs = (differs & ~clear) | (clear & filled)
    return differs


def _taken(array: pa.Array, positions: Positions | None) -> pa.Array:
    return array if positions is None else array.take(pa.array(positions))


def field_differences(
    ctx: Pairing, matched: Positions, remote_at: Positions, tolerance_of: Mapping[str, float]
) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Which fields of the matched sheet rows differ from their remote listings (rows × FIELDS).

    A blank sheet cell keeps the remote value; a cleared one empties the field; a value that came
    from ``defaults`` only fills an empty field. The comparison runs column by column over all
    matched rows at once, on arrays made once per column (:class:`~.columns.ColumnCache`).
    """
    sheet, remote = ctx.sheet_columns, ctx.remote_columns
    sheet_at = take_positions(matched, len(ctx.parts.frame))
    remote_rows = take_positions(remote_at, len(ctx.remote))
    differs = np.zeros((len(matched), len(FIELDS)), dtype=bool)
    for j, name in enumerate(FIELDS):
        if name == ctx.key_column:
            # Equal by construction (it is how the rows were paired), but where a row was paired
            # by its other identity: there the key itself changes.
            moved = ctx.by_identity[matched]
            if moved.any():
                sheet_text = _taken(sheet.texts(name), sheet_at)
                column = _text_differs(sheet_text, _taken(remote.texts(name), remote_rows), None)
                differs[:, j] = column & moved
            continue
        mask = ctx.parts.cleared.get(name)
        clear = mask[matched] if mask is not None else None
        if name in STRUCTURED:
            remote_values = remote.values(name)
            if remote_rows is not None:
                remote_values = pick(remote_values, remote_rows)
            differs[:, j] = _structured_differs(ctx.parts, name, matched, remote_values, clear)
            continue
        if name in TEXT_COLUMNS:
            sheet_text = _taken(sheet.texts(name), sheet_at)
            remote_text = _taken(remote.texts(name), remote_rows)
            differs[:, j] = _text_differs(sheet_text, remote_text, clear)
            continue
        sheet_blank, remote_blank = sheet.blank(name), remote.blank(name)
        left, right = sheet.floats(name), remote.floats(name)
        if sheet_at is not None:
            sheet_blank, left = sheet_blank[sheet_at], left[sheet_at]
        if remote_rows is not None:
            remote_blank, right = remote_blank[remote_rows], right[remote_rows]
        take_sheet = ~sheet_blank
        if clear is not None:
            take_sheet &= ~clear
        same = equal_floats(name, left, right, tolerance=tolerance_of.get(name))
        column = take_sheet & ~same
        if clear is not None:
            column |= clear & ~remote_blank
        differs[:, j] = column
    _keep_own_values(ctx, matched, remote_rows, differs)
    return differs


def _keep_own_values(
    ctx: Pairing, matched: Positions, remote_rows: Positions | None, differs: Mask
) -> None:
    """Unmark the changes a default would make to a listing that has a value of its own.

    A default fills an empty field; it never replaces what the listing already holds. A value
    the reader computed (a unit price) goes only with a change of what it is computed from.
    """
    parts = ctx.parts
    sources = [FIELDS.index(name) for name in ("SalePrice", "RentPrice", "BuildingArea")]
    for name, mask in parts.derived.items():
        j = FIELDS.index(name)
        differs[:, j] &= ~mask[matched] | differs[:, sources].any(axis=1)
    for name, mask in parts.defaulted.items():
        j = FIELDS.index(name)
        fill = mask[matched]
        if not fill.any():
            continue
        blank = ctx.remote_columns.blank(name)
        own = ~(blank if remote_rows is None else blank[remote_rows])
        differs[:, j] &= ~(fill & own)
