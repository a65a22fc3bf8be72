"""The steps of planning: each paired, new or remote-only listing becomes an update,
unchanged, create, skipped create, delete, kept or invalid item of the plan.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from estatebot.api.models import KeyType
from estatebot.listings import schema
from estatebot.listings.sync.plan.artifact import PlanArtifact
from estatebot.listings.sync.plan.differences import field_differences
from estatebot.listings.sync.plan.guards import refuse_delete_missing
from estatebot.listings.sync.plan.operations import (
    Action,
    HeldBack,
    InvalidRow,
    ListingRef,
    PlannedOp,
    RefColumns,
)
from estatebot.listings.sync.plan.pairing import (
    Mask,
    Pairing,
    Positions,
    pick,
    present_key,
)
from estatebot.listings.sync.plan.updates import plan_updates
from estatebot.listings.sync.values.compare import match_keys
from estatebot.listings.sync.values.hashing import frame_hashes
from estatebot.listings.sync.values.payloads import (
    FIELDS,
    Columns,
    Outcome,
    build_bodies,
    empty_like,
    json_columns,
    json_rows,
)

_REQUIRED: frozenset[str] = frozenset(schema.REQUIRED_COLUMNS)


def planned_at() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --------------------------------------------------------------------------- the steps


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while planning; restored on exit.

    Planning makes many small objects (values, changes, bodies) that reference counting frees;
    none form cycles. With large frames alive, every automatic full collection walks all of
    their objects again: at 100,000 listings, over a quarter of the planning time.

    Moving the plan's objects to the oldest generation on exit (``gc.freeze`` then ``unfreeze``)
    was tried and left out: it skips one young collection, but it moves every object of the
    process, not only the plan's, and the plan benchmark showed no gain from it (0.204 s
    without, 0.208 s with, at 100,000 rows).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def plan_matched(
    plan: PlanArtifact,
    ctx: Pairing,
    tolerance_of: Mapping[str, float],
    compare_dom: bool,
    accept_flagged: bool = False,
) -> None:
    """Classify the sheet rows found on the service: update, unchanged or invalid."""
    matched = np.flatnonzero(ctx.usable & (ctx.remote_of >= 0))
    remote_at = ctx.remote_of[matched]
    differs = field_differences(ctx, matched, remote_at, tolerance_of)
    if not accept_flagged:
        stale = _stale_unit_prices(ctx, matched, remote_at, differs)
        _hold_back(plan, ctx, matched, remote_at, differs, {_UNIT_PRICE: stale})
    counted = [
        j
        for j, name in enumerate(FIELDS)
        if (compare_dom or name != "DaysOnMarket") and name not in schema.UNLISTED_COLUMNS
    ]
    changed: Mask = np.asarray(differs[:, counted].any(axis=1), dtype=bool)
    # The fields List never returns (AreaUnit, Location) are compared only where the pull knows
    # them (from the record of values sent, or a unit in List's Area text): where it does not,
    # a sheet's value says nothing of a difference, though an update carries it.
    for name in schema.UNLISTED_COLUMNS:
        known = ~ctx.remote_columns.blank(name)[remote_at]
        changed |= differs[:, FIELDS.index(name)] & known
    cleared_m = {name: mask[matched] for name, mask in ctx.parts.cleared.items()}
    for name, mask in cleared_m.items():
        if name in _REQUIRED:
            changed |= mask  # a cleared required field makes the row invalid, never unchanged

    same = np.flatnonzero(~changed)
    sheet_same = matched[same]
    plan.defer_unchanged(
        RefColumns(
            ctx.sheet_key.written, sheet_same, ctx.parts.rows, sheet_same,
            ctx.remote["ID"], remote_at[same],
        )
    )  # fmt: skip
    to_update = np.flatnonzero(changed)
    if len(to_update):
        cleared_u = {name: mask[to_update] for name, mask in cleared_m.items()}
        plan_updates(
            plan, ctx, matched[to_update], remote_at[to_update], differs[to_update], cleared_u
        )


_UNIT_PRICE = "UnitAreaPrice"
# What a unit price is computed from: a change of one of them carries the computed unit price.
_UNIT_PRICE_SOURCES = ("SalePrice", "RentPrice", "BuildingArea")


def _stale_unit_prices(
    ctx: Pairing, matched: Positions, remote_at: Positions, differs: Mask
) -> Mask:
    """Flagged unit prices whose cell still holds the listing's own value.

    The reader warns when a sheet's unit price disagrees with price ÷ area and uses the computed
    one. Where the cell still holds what the listing has (a pulled file whose price or area was
    edited), the disagreement is the edit's, not a statement about the unit price: the computed
    value is derived, planned only with the change of price or area, and not held back.
    """
    stale = np.zeros(len(matched), dtype=bool)
    mask = ctx.parts.flagged.get(_UNIT_PRICE)
    if mask is None:
        return stale
    own = ctx.remote_columns.floats_at(_UNIT_PRICE, remote_at)
    for i in np.flatnonzero(mask[matched]).tolist():
        _, given, _ = ctx.parts.flags[(int(matched[i]), _UNIT_PRICE)]
        try:
            value = float(str(given).replace(",", ""))
        except ValueError:
            continue
        stale[i] = not np.isnan(own[i]) and abs(value - own[i]) < 0.005
    j = FIELDS.index(_UNIT_PRICE)
    sources = [FIELDS.index(name) for name in _UNIT_PRICE_SOURCES]
    differs[stale, j] &= differs[stale][:, sources].any(axis=1)
    return stale


def _hold_back(
    plan: PlanArtifact,
    ctx: Pairing,
    matched: Positions,
    remote_at: Positions,
    differs: Mask,
    exempt: Mapping[str, Mask],
) -> None:
    """Unmark the changes the reader warned about, and list them as held back (but ``exempt``)."""
    for name, mask in ctx.parts.flagged.items():
        j = FIELDS.index(name)
        flagged = mask[matched] & ~exempt[name] if name in exempt else mask[matched]
        held = np.flatnonzero(flagged & differs[:, j])
        differs[held, j] = False
        ids = ctx.remote_ids_at(remote_at[held]) if len(held) else []
        for i, ident in zip(held.tolist(), ids, strict=True):
            _note_held(plan, ctx, int(matched[i]), name, ident)


def _note_held(
    plan: PlanArtifact, ctx: Pairing, position: int, name: str, ident: int | None
) -> None:
    column, value, message = ctx.parts.flags[(position, name)]
    key = ctx.sheet_key.text_at(position)
    plan.held_back.append(
        HeldBack(ctx.parts.rows[position], key, ident, name, column, value, message)
    )


def plan_new(
    plan: PlanArtifact, ctx: Pairing, create_missing: bool, accept_flagged: bool = False
) -> None:
    """Classify the sheet rows not on the service: create, skipped create or invalid."""
    new_rows = np.flatnonzero(ctx.usable & (ctx.remote_of < 0))
    if not len(new_rows):
        return
    if ctx.key_type is KeyType.NEW_OAKS:
        # The service assigns IDs: a listing cannot be created under a chosen one.
        written = ctx.sheet_key.texts_at(new_rows)
        for position, text in zip(new_rows.tolist(), written, strict=True):
            k = present_key(text)
            reason = f"ID: no listing {k} on the service to update"
            plan.invalid.append(InvalidRow(ctx.parts.rows[position], k, None, (reason,)))
        return
    data = ctx.parts.json_columns(new_rows, FIELDS)
    cleared_n = {name: mask[new_rows] for name, mask in ctx.parts.cleared.items()}
    for name, mask in cleared_n.items():
        for i in np.flatnonzero(mask).tolist():
            data[name][i] = empty_like(name)
    if not accept_flagged:
        # A new listing is created without a value the reader warned about.
        for name, mask in ctx.parts.flagged.items():
            for i in np.flatnonzero(mask[new_rows]).tolist():
                data[name][i] = empty_like(name)
                _note_held(plan, ctx, int(new_rows[i]), name, None)
    bodies = _priced(data, build_bodies(data, cleared_n, len(new_rows), update=False))
    action: Action = "create" if create_missing else "skipped_create"
    keys = [present_key(k) for k in ctx.sheet_key.texts_at(new_rows)]
    rows = pick(ctx.parts.rows, new_rows)
    for k, row, (body, reasons) in zip(keys, rows, bodies, strict=True):
        if body is None:
            plan.invalid.append(InvalidRow(row, k, None, tuple(reasons)))
            continue
        op = PlannedOp(
            action, k, ctx.key_type.value, row, None, body, None, None, (), "new listing"
        )
        (plan.creates if create_missing else plan.skipped_create).append(op)


def _priced(data: Columns, bodies: list[Outcome]) -> list[Outcome]:
    """The bodies of new listings, less those with no price for their sale type.

    The contract makes no price required, but a listing for sale without a sale price (or for
    rent without a rent) is a sheet that lost its price column: it is invalid, with that reason.
    """
    out: list[Outcome] = []
    for i, (body, reasons) in enumerate(bodies):
        price = _PRICE_OF.get(data["SaleType"][i])
        if price is not None and data[price][i] is None:
            reasons = [
                *reasons,
                f"{price}: a new listing {_SOLD_AS[price]} needs a price, and the sheet gives "
                f"none (fill the cell, or add a {price} column or defaults=)",
            ]
            body = None
        out.append((body, reasons))
    return out


_PRICE_OF = {"for_sale": "SalePrice", "for_rent": "RentPrice"}
_SOLD_AS = {"SalePrice": "for sale", "RentPrice": "for rent"}


def plan_remote_only(plan: PlanArtifact, ctx: Pairing, delete_missing: bool) -> None:
    """Classify the remote listings the sheet does not name: delete (when asked) or kept."""
    allow_missing = bool(delete_missing)
    if delete_missing:
        counts = plan.counts()  # (without making the unchanged listings)
        valid = counts["update"] + counts["unchanged"] + counts["create"]
        valid += counts["skipped_create"]
        refusal = refuse_delete_missing(len(ctx.sheet_key), valid, ctx.parts.rejected)
        if refusal:
            plan.refusals.append(refusal)
            allow_missing = False
    unpublished_at: dict[str, tuple[int | None, str]] = {}
    for row, written, status in ctx.parts.unpublished:
        (k,) = match_keys([written])
        if k is None:
            continue
        if k in ctx.sheet_key_set:
            plan.notes.append(
                f"{ctx.key_column} {written!r} is both published and unpublished in the sheet "
                f"(row {row}, {status}): the published row is used, nothing is deleted"
            )
            continue
        unpublished_at.setdefault(k, (row, status))
    # Remote keys are unique, so a remote listing is named by the sheet exactly when some sheet
    # row (usable or not) was paired with it.
    named = np.zeros(len(ctx.remote_key), dtype=bool)
    named[ctx.remote_of[ctx.remote_of >= 0]] = True
    unnamed = np.flatnonzero(~named)
    # Keys and IDs as Python objects for these listings only.
    keys = ctx.remote_key.texts_at(unnamed)
    ids = ctx.remote_ids_at(unnamed)
    matched = ctx.remote_key.matched_texts(unnamed) if unpublished_at else []
    unkeyed = 0
    chosen: list[tuple[int, int | None, str]] = []
    for n, position in enumerate(unnamed.tolist()):
        k = keys[n]
        if k is None:
            unkeyed += 1
            plan.kept.append(ListingRef(None, None, ids[n]))
        elif unpublished_at and matched[n] in unpublished_at:
            row, status = unpublished_at[str(matched[n])]
            chosen.append((position, row, f"unpublished in the sheet ({status})"))
        elif allow_missing:
            chosen.append((position, None, "not in the sheet"))
        else:
            plan.kept.append(ListingRef(k, None, ids[n]))
    if unkeyed:
        plan.notes.append(
            f"{unkeyed} remote listings have no {ctx.key_column}: they cannot be matched and "
            "are left alone"
        )
    at = dict(zip(unnamed.tolist(), keys, strict=True))
    plan.deletes = delete_ops(ctx.remote, at, chosen, ctx.key_type)


def delete_ops(
    remote_clean: pd.DataFrame,
    remote_keys: Sequence[str | None] | Mapping[int, str | None],
    chosen: Sequence[tuple[int, int | None, str]],
    key_type: KeyType,
) -> list[PlannedOp]:
    """Delete operations for the chosen remote positions, ordered by ID then key."""
    if not chosen:
        return []
    rows = remote_clean.take([p for p, _, _ in chosen])
    befores = json_rows(json_columns(rows, schema.COLUMNS), len(chosen))
    hashes = frame_hashes(rows, is_clean=True)
    ops = [
        PlannedOp(
            "delete", str(remote_keys[p]), key_type.value, row, before["ID"], None, before,
            before_hash, (), reason,
        )
        for (p, row, reason), before, before_hash in zip(chosen, befores, hashes, strict=True)
    ]  # fmt: skip
    ops.sort(key=lambda op: (op.id is None, op.id if op.id is not None else 0, op.key))
    return ops
