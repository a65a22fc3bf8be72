"""The updates of a plan: for the paired rows that change, their before-images, hashes, field
changes and validated bodies.

Only these rows become Python objects. Their remote values are taken a column at a time at the
rows' positions (no copy of the remote frame), hashed with the text of all rows joined in Arrow
(:func:`~estatebot.listings.sync.values.hashing.frame_hashes`), and their bodies validated a
column at a time (:func:`~estatebot.listings.sync.values.payloads.build_bodies`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from estatebot.listings import schema
from estatebot.listings.sync.plan.artifact import PlanArtifact
from estatebot.listings.sync.plan.guards import IDENTITY_FIELDS
from estatebot.listings.sync.plan.operations import (
    Change,
    HeldBack,
    InvalidRow,
    change,
    planned_ops,
)
from estatebot.listings.sync.plan.pairing import Mask, Pairing, Positions, pick, present_key
from estatebot.listings.sync.plan.update_base import complete_bases
from estatebot.listings.sync.values.hashing import ListingColumns, hash_rows
from estatebot.listings.sync.values.payloads import (
    FIELDS,
    Columns,
    build_bodies,
    empty_like,
    json_rows,
)
from estatebot.listings.sync.values.tidy import (
    DICT_COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    LIST_COLUMNS,
    NONE,
    TEXT_COLUMNS,
)

__all__ = ["plan_updates"]


def plan_updates(
    plan: PlanArtifact,
    ctx: Pairing,
    sheet_at: Positions,
    remote_at: Positions,
    differs: Mask,
    cleared: Mapping[str, Mask],
) -> None:
    """Add the updates of the rows at ``sheet_at`` (paired with the listings at ``remote_at``),
    whose changed fields ``differs`` marks (rows × FIELDS), to ``plan``; held-back and invalid
    ones to its lists. ``cleared`` holds the same rows' masks of cleared fields."""
    m = len(sheet_at)
    before_columns, hashed = _before(ctx, remote_at)
    befores = json_rows(before_columns, m)
    before_hashes = hash_rows(hashed)
    rows_at, fields_at = np.nonzero(differs)
    # The sheet's values of each changed field, at the rows where it changes only.
    afters: dict[str, dict[int, Any]] = {}
    for j in np.unique(fields_at).tolist():
        name, at = FIELDS[j], rows_at[fields_at == j]
        if name == "ExtensionColumn":
            # Merged by key into the listing's own mapping: the sheet never drops a key it omits.
            own = before_columns[name]
            values = [ctx.parts.merged_extension(int(sheet_at[i]), own[i]) for i in at.tolist()]
        else:
            values = ctx.parts.json_columns(sheet_at[at], [name])[name]
        afters[name] = dict(zip(at.tolist(), values, strict=True))

    # The body is the remote listing with exactly the planned changes laid over it.
    data: Columns = {name: list(before_columns[name]) for name in FIELDS}
    changes: list[list[Change]] = [[] for _ in range(m)]
    for i, j in zip(rows_at.tolist(), fields_at.tolist(), strict=True):
        name = FIELDS[j]
        clear = cleared.get(name)
        after = empty_like(name) if clear is not None and clear[i] else afters[name][i]
        data[name][i] = after
        if name == "ExtensionColumn":
            changes[i].append(_key_change(before_columns[name][i], after))
        elif name not in schema.UNLISTED_COLUMNS:  # the remote value is unknown: not a change
            changes[i].append(change(name, before_columns[name][i], after))
    # The request names the listing as the service knows it (the sheet may write its key in
    # another case, or give it a new one: see Pairing.match).
    keys, key_types = _named_as_held(ctx, remote_at)
    data["Key"], data["KeyType"] = keys, key_types
    ids = before_columns["ID"]
    withheld = complete_bases(
        data,
        ids,
        {name: differs[:, j] for j, name in enumerate(FIELDS)},
        ctx.unreadable,
        location_unknown=ctx.location_unknown,
        blank_location=bool(plan.options.get("blank_unknown_location")),
    )
    bodies = build_bodies(data, cleared, m, update=True)
    rows = pick(ctx.parts.rows, sheet_at)
    unknown = _unknown_fields(ctx, sheet_at, cleared, bodies)
    made: list[tuple[Any, ...]] = []
    for n, (body, reasons) in enumerate(bodies):
        ident, k, row = ids[n], keys[n], rows[n]
        if n in withheld:
            plan.held_back.extend(
                HeldBack(row, k, ident, held.field, None, held.value, held.message, True)
                for held in withheld[n]
            )
            continue
        if body is None:
            plan.invalid.append(InvalidRow(row, k, ident, tuple(reasons)))
            continue
        made.append(
            (
                "update", k, key_types[n], row, ident, body, befores[n], before_hashes[n],
                tuple(changes[n]), _changed(len(changes[n])), unknown[n],
            )
        )  # fmt: skip
    plan.updates.extend(planned_ops(made))
    _note_unknown(plan)


def _named_as_held(ctx: Pairing, at: Positions) -> tuple[list[str], list[str]]:
    """The key and key type that name each listing at ``at`` as the service holds it.

    The plan's key as the listing writes it; a listing the service holds without one (paired by
    its other identity: a sheet row that gives it an MLSNumber it lacks) is named by that other
    identity, which it has, since it was paired by it.
    """
    taken = pa.array(at)
    written = ctx.remote_key.written.take(taken)
    keys: list[str | None] = written.to_numpy(zero_copy_only=False).tolist()
    key_types = [ctx.key_type.value] * len(keys)
    if any(key is None for key in keys):
        column = next(name for name in IDENTITY_FIELDS if name != ctx.key_column)
        other = next(kind for kind, name in schema.KEY_COLUMNS.items() if name == column)
        texts = ctx.remote_columns.texts(column).take(taken)
        for i, text in enumerate(texts.to_numpy(zero_copy_only=False).tolist()):
            if keys[i] is None:
                keys[i], key_types[i] = text, other
    return [present_key(key) for key in keys], key_types


def _before(ctx: Pairing, at: Positions) -> tuple[Columns, ListingColumns]:
    """The listings at ``at``: as :func:`~.payloads.json_columns` gives them, and as columns
    for their hashes, each remote column taken at those rows once for both."""
    cache = ctx.remote_columns
    out: Columns = {}
    floats: dict[str, np.ndarray[Any, np.dtype[np.float64]]] = {}
    texts: dict[str, Any] = {}
    for column in schema.COLUMNS:
        if column in FLOAT_COLUMNS or column in INT_COLUMNS:
            taken = ctx.remote[column].array.take(at)
            floats[column] = taken.to_numpy(dtype="float64", na_value=np.nan)
            if column in INT_COLUMNS:
                out[column] = taken.to_numpy(dtype=object, na_value=NONE).tolist()
            else:  # the same Python floats, None where missing (NaN is never a clean value)
                values = floats[column].astype(object)
                values[np.isnan(floats[column])] = None
                out[column] = values.tolist()
        elif column in TEXT_COLUMNS:
            texts[column] = cache.texts(column).take(pa.array(at))
            out[column] = texts[column].to_numpy(zero_copy_only=False).tolist()
        elif column in LIST_COLUMNS:
            out[column] = list(map(list, pick(cache.values(column), at)))
        else:
            out[column] = list(map(dict, pick(cache.values(column), at)))
    structured = {column: out[column] for column in (*LIST_COLUMNS, *DICT_COLUMNS)}
    return out, ListingColumns(len(at), floats, texts, structured)


@functools.cache
def _changed(count: int) -> str:
    """An update's reason: how many fields it changes."""
    return f"{count} field{'s' if count != 1 else ''} changed"


def _unknown_fields(
    ctx: Pairing,
    sheet_at: Positions,
    cleared: Mapping[str, Mask],
    bodies: Sequence[tuple[dict[str, Any] | None, Any]],
) -> list[tuple[str, ...]]:
    """Per update, the fields List never returns that its sheet row does not give.

    A value the sheet leaves blank, or fills from ``defaults``, says nothing of the listing's
    own value; a cell holding the clear token does (the field is emptied on purpose).
    """
    out: list[tuple[str, ...]] = []
    defaulted = {
        name: mask[sheet_at] for name, mask in ctx.parts.defaulted.items()
        if name in schema.UNLISTED_COLUMNS
    }  # fmt: skip
    for n, (body, _) in enumerate(bodies):
        names = []
        for name in schema.UNLISTED_COLUMNS:
            if name in cleared and cleared[name][n]:
                continue
            blank = body is None or body.get(name) in (None, "")
            if blank or (name in defaulted and defaulted[name][n]):
                names.append(name)
        out.append(tuple(names))
    return out


def _note_unknown(plan: PlanArtifact) -> None:
    counts: dict[str, int] = {}
    for op in plan.updates:
        for name in op.unknown:
            counts[name] = counts.get(name, 0) + 1
    if counts:
        fields = ", ".join(f"{name} on {count}" for name, count in sorted(counts.items()))
        plan.notes.append(
            f"remote value unknown ({fields} updates): the service never shows these fields and "
            "the sheet does not give them; apply sends the value last sent to each listing where "
            "it is recorded, else the sheet's default or nothing"
        )


def _key_change(before: dict[str, str], after: dict[str, str]) -> Change:
    """An ExtensionColumn change, key by key: only the keys set, changed or removed."""
    names = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    return Change(
        "ExtensionColumn",
        {k: before[k] for k in names if k in before},
        {k: after[k] for k in names if k in after},
    )
