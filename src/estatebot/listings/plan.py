"""Desired listings vs remote listings → a :class:`SyncPlan` (pure: no I/O, inputs never changed).

A plan is an inspectable artifact, made before anything is sent: every listing is classified as
``create``, ``update`` (with field-level changes), ``unchanged``, ``delete``, ``invalid``,
``kept`` (on the service only, left alone) or ``skipped_create``. Each create and update carries
its complete, validated request body; each update and delete carries the hash of the remote
listing it was planned against, so the apply step can refuse to act on a listing that changed
since. Apply does exactly the plan, no more.

Rules:

* Listings are matched by key (``MLSNumber``, ``URL`` or ``NewOaks``) compared as trimmed text.
  A key present twice in the remote listings is an error (never paired by order); every sheet
  row of a key present twice in the sheet is invalid.
* Values are compared canonically (:mod:`estatebot.listings.compare`). A change of
  ``DaysOnMarket`` alone does not make an update unless ``compare_days_on_market=True``.
* An update body is the remote listing with the sheet's changed fields laid over it: a blank
  cell keeps the remote value; only a cleared cell (the reader's clear token) empties a field.
* Deletes happen only when asked (``delete_missing=True``) or for listings the export marks as
  unpublished, and never from an empty or all-invalid sheet, nor past ``max_delete_fraction``
  of the remote listings unless ``force_delete_count`` confirms the exact number.

This module holds the planning rules and guards. The plan itself (its items, summary and JSON
form) is in :mod:`~estatebot.listings.plan_model`, its views in
:mod:`~estatebot.listings.plan_view`, the comparison rules and hashes in
:mod:`~estatebot.listings.compare`; the public names are importable from here too.

Work is done a column at a time over all listings (cleaning, pairing by key, comparing); only
the listings that change get a before-image, a hash and a body
(:mod:`~estatebot.listings.plan_bodies`); the sheet is read by
:mod:`~estatebot.listings.plan_sheet`.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from itertools import compress, repeat
from operator import eq, itemgetter
from typing import Any, cast

import numpy as np
import pandas as pd

from estatebot.api.errors import PlanError
from estatebot.api.models import KeyType
from estatebot.listings import schema
from estatebot.listings.compare import (
    NONE,
    blank_mask,
    clean_frame,
    clean_text,
    equal_mask,
    frame_fingerprint,
    frame_hashes,
    key_values,
    listing_hash,
)
from estatebot.listings.plan_bodies import (
    FIELDS,
    Columns,
    build_bodies,
    empty_like,
    json_columns,
    json_rows,
)
from estatebot.listings.plan_model import (
    Action,
    Change,
    InvalidRow,
    ListingRef,
    PlannedOp,
    SyncPlan,
)
from estatebot.listings.plan_sheet import (
    STRUCTURED,
    TEXT_COLUMNS,
    SheetLike,
    SheetParts,
    cleaner,
    sheet_parts,
)

__all__ = [
    "FIELDS",
    "Change",
    "InvalidRow",
    "ListingRef",
    "PlannedOp",
    "SheetLike",
    "SyncPlan",
    "listing_hash",
    "plan_cleanup",
    "plan_sync",
]

_REQUIRED: frozenset[str] = frozenset(schema.REQUIRED_COLUMNS)
_NUMERIC: frozenset[str] = frozenset(schema.INT_COLUMNS) | frozenset(schema.FLOAT_COLUMNS)

Positions = np.ndarray[Any, np.dtype[np.integer[Any]]]
Mask = np.ndarray[Any, np.dtype[np.bool_]]


# --------------------------------------------------------------------------- helpers


def _key_type(key: str | KeyType) -> KeyType:
    names = {
        "mlsnumber": KeyType.MLS_NUMBER,
        "url": KeyType.URL,
        "newoaks": KeyType.NEW_OAKS,
        "id": KeyType.NEW_OAKS,
    }
    found = names.get(str(key).strip().lower())
    if found is None:
        raise PlanError("key must be one of MLSNumber, URL or NewOaks", value=key)
    return found


def _check_tolerances(tolerances: Mapping[str, float] | None) -> dict[str, float]:
    checked: dict[str, float] = {}
    for name, value in (tolerances or {}).items():
        if name not in _NUMERIC or name == "ID":
            raise PlanError(
                "tolerances apply to numeric listing fields only", column=name, value=value
            )
        number = float(value)
        if not math.isfinite(number) or number < 0:
            raise PlanError("a tolerance must be a finite number ≥ 0", column=name, value=value)
        checked[name] = number
    return checked


def _check_fraction(max_delete_fraction: float) -> float:
    fraction = float(max_delete_fraction)
    if not 0 <= fraction <= 1:
        raise PlanError("max_delete_fraction must be between 0 and 1", value=max_delete_fraction)
    return fraction


def _is_every_row(positions: Positions, n: int) -> bool:
    return len(positions) == n and bool(np.array_equal(positions, np.arange(n)))


def _take(frame: pd.DataFrame, positions: Positions) -> pd.DataFrame:
    """Rows of a positional frame, in the given order (the frame itself when that is all)."""
    return frame if _is_every_row(positions, len(frame)) else frame.take(positions)


def _pick(values: Sequence[Any], positions: Positions) -> list[Any]:
    """Items of a list at the given positions."""
    if _is_every_row(positions, len(values)):
        return list(values)
    if len(positions) < 2:
        return [values[p] for p in positions.tolist()]
    return list(itemgetter(*positions.tolist())(values))


def _pick_where(values: Sequence[Any], positions: Positions, mask: Mask) -> list[Any]:
    """Items of a list at the given positions where ``mask`` holds."""
    if _is_every_row(positions, len(values)):
        return list(compress(values, mask.tolist()))
    return _pick(values, positions[mask])


def _refs(
    keys: Sequence[str | None], rows: Sequence[int | None], ids: Sequence[int | None]
) -> list[ListingRef]:
    """ListingRefs in bulk (a named tuple made from each triple at C speed)."""
    make = partial(tuple.__new__, ListingRef)
    return cast(list[ListingRef], list(map(make, zip(keys, rows, ids, strict=True))))


# --------------------------------------------------------------------------- guards


def _guard_deletes(
    count: int, remote_count: int, fraction: float, force_delete_count: int | None
) -> None:
    """Raise PlanError when the deletes pass the fraction unconfirmed, or the force is wrong."""
    if force_delete_count is not None:
        if force_delete_count != count:
            raise PlanError(
                f"force_delete_count={force_delete_count} does not match the plan, which would "
                f"delete exactly {count} listings; pass force_delete_count={count} to confirm",
                value=force_delete_count,
            )
        return
    limit = fraction * remote_count
    if count > limit:
        share = count / remote_count if remote_count else 1.0
        raise PlanError(
            f"the plan would delete {count} of {remote_count} remote listings ({share:.1%}), "
            f"more than max_delete_fraction={fraction:g} allows ({math.floor(limit)}); "
            f"check the sheet and the key, then pass force_delete_count={count} to confirm "
            "exactly this many deletes",
            value=count,
        )


def _remote_positions(
    keys: list[str | None], ids: Sequence[Any], key_column: str
) -> dict[str, int]:
    """Each remote key's position (unkeyed listings left out).

    Raises PlanError naming every key that appears more than once in the remote listings.
    """
    found: dict[Any, int] = dict(zip(keys, range(len(keys)), strict=True))
    found.pop(None, None)
    if len(found) == len(keys) - keys.count(None):
        return found
    counts: dict[str, int] = {}
    for text in keys:
        if text is not None:
            counts[text] = counts.get(text, 0) + 1
    groups: dict[str, list[str]] = {}
    for position, k in enumerate(keys):
        if k is not None and counts[k] > 1:
            ident = ids[position]
            groups.setdefault(k, []).append(
                f"ID {ident}" if ident is not None else f"position {position + 1}"
            )
    shown = "; ".join(f"{k!r} ({', '.join(v)})" for k, v in list(groups.items())[:10])
    more = f"; and {len(groups) - 10} more" if len(groups) > 10 else ""
    first = next(iter(groups))
    raise PlanError(
        f"{len(groups)} {key_column} keys appear more than once in the remote listings, so "
        f"they cannot be matched: {shown}{more}; remove the duplicates on the service or plan "
        "by another key",
        column=key_column,
        value=first,
    )


def _refuse_delete_missing(
    n_sheet: int, valid_count: int, rejected: Sequence[InvalidRow]
) -> str | None:
    if n_sheet == 0 and not rejected:
        return "delete_missing ignored: the sheet has no rows"
    if valid_count == 0:
        return "delete_missing ignored: the sheet has no valid rows"
    if rejected:
        shown = ", ".join(str(r.row) for r in rejected[:10])
        more = f" and {len(rejected) - 10} more" if len(rejected) > 10 else ""
        return (
            f"delete_missing ignored: the reader rejected {len(rejected)} sheet rows "
            f"(rows {shown}{more}), and their listings cannot be told apart from listings "
            "missing from the sheet; fix or remove those rows to delete missing listings"
        )
    return None


def _present(key: str | None) -> str:
    # Rows with an empty key were set aside before matching; this narrows the type for them.
    if key is None:
        raise AssertionError("a usable sheet row has a key")
    return key


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --------------------------------------------------------------------------- plan_sync


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while planning; restored on exit.

    Planning makes many small objects (values, changes, bodies) that reference counting frees;
    none form cycles. With large frames alive, every automatic full collection walks all of
    their objects again: at 100,000 listings, over a quarter of the planning time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def plan_sync(
    sheet: SheetLike | pd.DataFrame,
    remote: pd.DataFrame,
    *,
    key: str | KeyType = "MLSNumber",
    delete_missing: bool = False,
    create_missing: bool = True,
    max_delete_fraction: float = 0.2,
    force_delete_count: int | None = None,
    compare_days_on_market: bool = False,
    tolerances: Mapping[str, float] | None = None,
) -> SyncPlan:
    """Plan how to make the remote listings match a sheet; nothing is sent.

    ``sheet`` is a read spreadsheet (:class:`SheetLike`) or a plain canonical frame (then no
    issues, nothing cleared, nothing unpublished). ``remote`` is the canonical frame of
    ``pull_listings``. ``key`` picks the matching field: ``"MLSNumber"``, ``"URL"`` (column
    ``Url``) or ``"NewOaks"`` (column ``ID``).

    ``delete_missing`` deletes remote listings absent from the sheet; it is refused (and the
    reason recorded in ``refusals``) when the sheet has no valid rows or when the reader
    rejected rows, whose listings cannot be told apart from missing ones. Listings the export
    marks as unpublished are deleted in any case. ``create_missing=False`` reports new listings
    as ``skipped_create`` instead of planning them. ``tolerances`` replaces the comparison
    precision of numeric fields by an absolute tolerance.

    Raises PlanError for duplicate remote keys, an unknown key, bad options, or when the deletes
    exceed ``max_delete_fraction`` of the remote listings and ``force_delete_count`` does not
    equal their exact number (a wrong ``force_delete_count`` is refused in every case).
    """
    with _collector_paused():
        return _plan_sync(
            sheet,
            remote,
            key=key,
            delete_missing=delete_missing,
            create_missing=create_missing,
            max_delete_fraction=max_delete_fraction,
            force_delete_count=force_delete_count,
            compare_days_on_market=compare_days_on_market,
            tolerances=tolerances,
        )


def _plan_sync(
    sheet: SheetLike | pd.DataFrame,
    remote: pd.DataFrame,
    *,
    key: str | KeyType,
    delete_missing: bool,
    create_missing: bool,
    max_delete_fraction: float,
    force_delete_count: int | None,
    compare_days_on_market: bool,
    tolerances: Mapping[str, float] | None,
) -> SyncPlan:
    key_type = _key_type(key)
    tolerance_of = _check_tolerances(tolerances)
    fraction = _check_fraction(max_delete_fraction)
    options: dict[str, Any] = {
        "key": key_type.value,
        "delete_missing": bool(delete_missing),
        "create_missing": bool(create_missing),
        "max_delete_fraction": fraction,
        "force_delete_count": force_delete_count,
        "compare_days_on_market": bool(compare_days_on_market),
        "tolerances": tolerance_of,
    }
    remote_clean = clean_frame(remote).reset_index(drop=True)
    # The fingerprint reads only the remote side: hash it on another thread while the rows are
    # matched and compared (hashing releases the interpreter lock on large buffers).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="estatebot-plan") as pool:
        fingerprint = pool.submit(frame_fingerprint, remote_clean, is_clean=True)
        plan = _plan_rows(sheet, remote_clean, key_type, options)
        plan.fingerprint = fingerprint.result()
    return plan


def _plan_rows(
    sheet: SheetLike | pd.DataFrame,
    remote_clean: pd.DataFrame,
    key_type: KeyType,
    options: dict[str, Any],
) -> SyncPlan:
    """The plan's operations, notes and invalid rows (everything but its fingerprint)."""
    key_column = schema.KEY_COLUMNS[key_type.value]
    remote_keys = key_values(remote_clean[key_column], is_clean=True)
    remote_ids: list[int | None] = remote_clean["ID"].to_numpy(dtype=object, na_value=NONE).tolist()
    remote_at = _remote_positions(remote_keys, remote_ids, key_column)
    parts = sheet_parts(sheet, key_column)
    sheet_keys = key_values(parts.frame[key_column])
    ctx = _Context(
        key_type, key_column, parts, sheet_keys, remote_clean, remote_keys, remote_ids, remote_at
    )
    ctx.match()

    plan = SyncPlan(
        key_type=key_type.value, options=options, created_at=_now(), remote_count=len(remote_clean)
    )
    plan.notes.extend(parts.notes)
    _plan_matched(plan, ctx, options["tolerances"], options["compare_days_on_market"])
    _plan_new(plan, ctx, options["create_missing"])
    for position, reasons in ctx.problems.items():
        paired = int(ctx.remote_of[position])
        ident = remote_ids[paired] if paired >= 0 else None
        plan.invalid.append(
            InvalidRow(parts.rows[position], ctx.sheet_keys[position], ident, tuple(reasons))
        )
    plan.invalid.extend(parts.rejected)
    plan.invalid.sort(key=lambda r: (r.row is None, r.row if r.row is not None else 0))
    _plan_remote_only(plan, ctx, options["delete_missing"])
    _guard_deletes(
        len(plan.deletes),
        len(remote_clean),
        options["max_delete_fraction"],
        options["force_delete_count"],
    )
    return plan


@dataclass
class _Context:
    """What the steps of :func:`plan_sync` share: the key, both sides, and how rows pair up."""

    key_type: KeyType
    key_column: str
    parts: SheetParts
    sheet_keys: list[str | None]
    remote: pd.DataFrame
    remote_keys: list[str | None]
    remote_ids: list[int | None]
    remote_at: dict[Any, int]  # remote key → position (never None)
    # Per sheet position: the matching remote position, or -1.
    remote_of: np.ndarray[Any, np.dtype[np.int64]] = field(
        default_factory=lambda: np.zeros(0, dtype=np.int64)
    )
    # Sheet positions that cannot be matched (empty or duplicated key), with the reasons.
    problems: dict[int, list[str]] = field(default_factory=dict)
    usable: Mask = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # Every key the sheet names, usable or not (their listings are never deleted).
    sheet_key_set: set[str] = field(default_factory=set)

    def match(self) -> None:
        """Pair sheet rows with remote listings by key; set aside empty and duplicated keys."""
        keys = self.sheet_keys
        present: list[str | None] = keys
        if None in keys:
            for position in [p for p, k in enumerate(keys) if k is None]:
                self.problems[position] = [
                    f"{self.key_column}: empty, so the listing cannot be matched"
                ]
            present = [k for k in keys if k is not None]
        named: set[Any] = set(present)
        self.sheet_key_set = named
        if len(named) != len(present):
            positions: dict[str, list[int]] = {}
            for position, k in enumerate(keys):
                if k is not None:
                    positions.setdefault(k, []).append(position)
            for k, found in positions.items():
                if len(found) < 2:
                    continue
                rows = ", ".join(str(self.parts.rows[p]) for p in found)
                reason = (
                    f"{self.key_column}: {k!r} is on rows {rows}; every row of a duplicated "
                    "key is rejected"
                )
                for p in found:
                    self.problems[p] = [reason]
        self.remote_of = np.fromiter(
            map(self.remote_at.get, keys, repeat(-1)), dtype=np.int64, count=len(keys)
        )
        self.usable = np.ones(len(keys), dtype=bool)
        if self.problems:
            self.usable[list(self.problems)] = False


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
    if raw is not None:
        sheet_values = _pick(raw, matched)
        clean = cleaner(name)
        for i in np.flatnonzero(~_equal_as_given(sheet_values, remote_values)).tolist():
            value = clean(sheet_values[i])
            differs[i] = bool(value) and value != remote_values[i]
    if clear is not None:
        filled = np.fromiter(map(len, remote_values), dtype=np.int64, count=len(remote_values))
        differs = (differs & ~clear) | (clear & (filled > 0))
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


def _differences(
    ctx: _Context, matched: Positions, remote_at: Positions, tolerance_of: Mapping[str, float]
) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Which fields of the matched sheet rows differ from their remote listings (rows × FIELDS).

    A blank sheet cell keeps the remote value; a cleared one empties the field. The comparison
    runs column by column over all matched rows at once.
    """
    sheet_m = _take(ctx.parts.frame, matched)
    remote_m = _take(ctx.remote, remote_at)
    differs = np.zeros((len(matched), len(FIELDS)), dtype=bool)
    for j, name in enumerate(FIELDS):
        if name == ctx.key_column:
            continue  # equal by construction: it is how the rows were paired
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
    return differs


def _plan_matched(
    plan: SyncPlan, ctx: _Context, tolerance_of: Mapping[str, float], compare_dom: bool
) -> None:
    """Classify the sheet rows found on the service: update, unchanged or invalid."""
    matched = np.flatnonzero(ctx.usable & (ctx.remote_of >= 0))
    remote_at = ctx.remote_of[matched]
    differs = _differences(ctx, matched, remote_at, tolerance_of)
    # Unlisted fields (AreaUnit, Location) always look empty remotely: never a reason to update.
    counted = [
        j
        for j, name in enumerate(FIELDS)
        if (compare_dom or name != "DaysOnMarket") and name not in schema.UNLISTED_COLUMNS
    ]
    changed: Mask = np.asarray(differs[:, counted].any(axis=1), dtype=bool)
    cleared_m = {name: mask[matched] for name, mask in ctx.parts.cleared.items()}
    for name, mask in cleared_m.items():
        if name in _REQUIRED:
            changed |= mask  # a cleared required field makes the row invalid, never unchanged

    same = ~changed
    plan.unchanged = _refs(
        _pick_where(ctx.sheet_keys, matched, same),
        _pick_where(ctx.parts.rows, matched, same),
        _pick_where(ctx.remote_ids, remote_at, same),
    )
    to_update = np.flatnonzero(changed)
    if not len(to_update):
        return
    m = len(to_update)
    sheet_at, remote_rows = matched[to_update], ctx.remote.take(remote_at[to_update])
    before_columns = json_columns(remote_rows, schema.COLUMNS)
    befores = json_rows(before_columns, m)
    before_hashes = frame_hashes(remote_rows, is_clean=True)
    rows_at, fields_at = np.nonzero(differs[to_update])
    changed_fields = {FIELDS[j] for j in set(fields_at.tolist())}
    afters = ctx.parts.json_columns(sheet_at, [f for f in FIELDS if f in changed_fields])
    cleared_u = {name: mask[to_update] for name, mask in cleared_m.items()}

    # The body is the remote listing with exactly the planned changes laid over it.
    data: Columns = {name: list(before_columns[name]) for name in FIELDS}
    changes: list[list[Change]] = [[] for _ in range(m)]
    for i, j in zip(rows_at.tolist(), fields_at.tolist(), strict=True):
        name = FIELDS[j]
        clear = cleared_u.get(name)
        after = empty_like(name) if clear is not None and clear[i] else afters[name][i]
        data[name][i] = after
        if name not in schema.UNLISTED_COLUMNS:  # the remote value is unknown: not a change
            changes[i].append(Change(name, before_columns[name][i], after))
    keys = [_present(k) for k in _pick(ctx.sheet_keys, sheet_at)]
    data["Key"], data["KeyType"] = keys, [ctx.key_type.value] * m
    bodies = build_bodies(data, cleared_u, m, update=True)
    rows = _pick(ctx.parts.rows, sheet_at)
    for n, (body, reasons) in enumerate(bodies):
        before, k, row = befores[n], keys[n], rows[n]
        if body is None:
            plan.invalid.append(InvalidRow(row, k, before["ID"], tuple(reasons)))
            continue
        count = len(changes[n])
        plan.updates.append(
            PlannedOp(
                "update", k, ctx.key_type.value, row, before["ID"], body, before,
                before_hashes[n], tuple(changes[n]),
                f"{count} field{'s' if count != 1 else ''} changed",
            )
        )  # fmt: skip


def _plan_new(plan: SyncPlan, ctx: _Context, create_missing: bool) -> None:
    """Classify the sheet rows not on the service: create, skipped create or invalid."""
    new_rows = np.flatnonzero(ctx.usable & (ctx.remote_of < 0))
    if not len(new_rows):
        return
    if ctx.key_type is KeyType.NEW_OAKS:
        # The service assigns IDs: a listing cannot be created under a chosen one.
        for position in new_rows.tolist():
            k = _present(ctx.sheet_keys[position])
            reason = f"ID: no listing {k} on the service to update"
            plan.invalid.append(InvalidRow(ctx.parts.rows[position], k, None, (reason,)))
        return
    data = ctx.parts.json_columns(new_rows, FIELDS)
    cleared_n = {name: mask[new_rows] for name, mask in ctx.parts.cleared.items()}
    for name, mask in cleared_n.items():
        for i in np.flatnonzero(mask).tolist():
            data[name][i] = empty_like(name)
    bodies = build_bodies(data, cleared_n, len(new_rows), update=False)
    action: Action = "create" if create_missing else "skipped_create"
    keys = [_present(k) for k in _pick(ctx.sheet_keys, new_rows)]
    rows = _pick(ctx.parts.rows, new_rows)
    for k, row, (body, reasons) in zip(keys, rows, bodies, strict=True):
        if body is None:
            plan.invalid.append(InvalidRow(row, k, None, tuple(reasons)))
            continue
        op = PlannedOp(
            action, k, ctx.key_type.value, row, None, body, None, None, (), "new listing"
        )
        (plan.creates if create_missing else plan.skipped_create).append(op)


def _plan_remote_only(plan: SyncPlan, ctx: _Context, delete_missing: bool) -> None:
    """Classify the remote listings the sheet does not name: delete (when asked) or kept."""
    allow_missing = bool(delete_missing)
    if delete_missing:
        valid = len(plan.updates) + len(plan.unchanged) + len(plan.creates)
        valid += len(plan.skipped_create)
        refusal = _refuse_delete_missing(len(ctx.sheet_keys), valid, ctx.parts.rejected)
        if refusal:
            plan.refusals.append(refusal)
            allow_missing = False
    in_sheet = ctx.sheet_key_set
    unpublished_at: dict[str, tuple[int | None, str]] = {}
    for row, k, status in ctx.parts.unpublished:
        if k is None:
            continue
        if k in in_sheet:
            plan.notes.append(
                f"{ctx.key_column} {k!r} is both published and unpublished in the sheet "
                f"(row {row}, {status}): the published row is used, nothing is deleted"
            )
            continue
        unpublished_at.setdefault(k, (row, status))
    # Remote keys are unique, so a remote listing is named by the sheet exactly when some sheet
    # row (usable or not) was paired with it.
    named = np.zeros(len(ctx.remote_keys), dtype=bool)
    named[ctx.remote_of[ctx.remote_of >= 0]] = True
    unkeyed = 0
    chosen: list[tuple[int, int | None, str]] = []
    for position in np.flatnonzero(~named).tolist():
        k = ctx.remote_keys[position]
        if k is None:
            unkeyed += 1
            plan.kept.append(ListingRef(None, None, ctx.remote_ids[position]))
        elif k in unpublished_at:
            row, status = unpublished_at[k]
            chosen.append((position, row, f"unpublished in the sheet ({status})"))
        elif allow_missing:
            chosen.append((position, None, "not in the sheet"))
        else:
            plan.kept.append(ListingRef(k, None, ctx.remote_ids[position]))
    if unkeyed:
        plan.notes.append(
            f"{unkeyed} remote listings have no {ctx.key_column}: they cannot be matched and "
            "are left alone"
        )
    plan.deletes = _delete_ops(ctx.remote, ctx.remote_keys, chosen, ctx.key_type)


def _delete_ops(
    remote_clean: pd.DataFrame,
    remote_keys: Sequence[str | None],
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


# --------------------------------------------------------------------------- plan_cleanup


def plan_cleanup(
    remote: pd.DataFrame,
    *,
    status: Sequence[str] | str | None = ("Sold",),
    min_days_on_market: int | None = None,
    where: Callable[[pd.DataFrame], pd.Series[bool]] | None = None,
    key: str | KeyType = "NewOaks",
    max_delete_fraction: float = 0.2,
    force_delete_count: int | None = None,
) -> SyncPlan:
    """Plan the deletion of stale listings: a plan of deletes only, with the same guards.

    A listing is selected when its ``Status`` is one of ``status`` **or** (when given) its
    ``DaysOnMarket`` is at least ``min_days_on_market``; the selection is then narrowed (**and**)
    by ``where(frame)``, a boolean Series over a clean copy of ``remote`` (NA counts as False).
    With no status and no minimum, ``where`` alone selects. Deletes are keyed by ``key``
    (``NewOaks`` by default: every pulled listing has an ID). Other listings are ``kept``.
    Raises PlanError when no criterion is given, ``where`` does not return a boolean Series
    aligned with the frame, or the deletes pass ``max_delete_fraction`` unconfirmed.
    """
    with _collector_paused():
        return _plan_cleanup(
            remote,
            status=status,
            min_days_on_market=min_days_on_market,
            where=where,
            key=key,
            max_delete_fraction=max_delete_fraction,
            force_delete_count=force_delete_count,
        )


def _plan_cleanup(
    remote: pd.DataFrame,
    *,
    status: Sequence[str] | str | None,
    min_days_on_market: int | None,
    where: Callable[[pd.DataFrame], pd.Series[bool]] | None,
    key: str | KeyType,
    max_delete_fraction: float,
    force_delete_count: int | None,
) -> SyncPlan:
    key_type = _key_type(key)
    key_column = schema.KEY_COLUMNS[key_type.value]
    fraction = _check_fraction(max_delete_fraction)
    statuses = (status,) if isinstance(status, str) else tuple(status or ())
    if not statuses and min_days_on_market is None and where is None:
        raise PlanError("plan_cleanup needs a status, a min_days_on_market or a where filter")
    clean = clean_frame(remote).reset_index(drop=True)
    ids: list[int | None] = clean["ID"].to_numpy(dtype=object, na_value=NONE).tolist()
    keys = key_values(clean[key_column], is_clean=True)
    _remote_positions(keys, ids, key_column)

    selected = np.zeros(len(clean), dtype=bool)
    criteria: list[str] = []
    if statuses:
        wanted = [s.strip() for s in statuses]
        selected |= clean["Status"].isin(wanted).fillna(False).to_numpy(dtype=bool)
        criteria.append(f"Status in {wanted}")
    if min_days_on_market is not None:
        days = clean["DaysOnMarket"].to_numpy(dtype="float64", na_value=np.nan)
        with np.errstate(invalid="ignore"):
            selected |= days >= float(min_days_on_market)
        criteria.append(f"DaysOnMarket ≥ {min_days_on_market}")
    if where is not None:
        mask = where(clean.copy())
        if not isinstance(mask, pd.Series) or len(mask) != len(clean):
            raise PlanError("where(frame) must return a boolean Series, one value per listing")
        chosen = mask.reindex(clean.index).astype("boolean").fillna(False).to_numpy(dtype=bool)
        selected = (selected & chosen) if criteria else chosen
        criteria.append("where(frame)")

    plan = SyncPlan(
        key_type=key_type.value,
        options={
            "cleanup": True,
            "key": key_type.value,
            "status": list(statuses),
            "min_days_on_market": min_days_on_market,
            "where": where is not None,
            "max_delete_fraction": fraction,
            "force_delete_count": force_delete_count,
        },
        created_at=_now(),
        remote_count=len(clean),
    )
    plan.notes.append("cleanup selects: " + _describe_criteria(criteria, where is not None))
    chosen_positions: list[tuple[int, int | None, str]] = []
    for position, k in enumerate(keys):
        if selected[position] and k is not None:
            chosen_positions.append(
                (position, None, "cleanup: " + _cleanup_reason(clean, position))
            )
        else:
            plan.kept.append(ListingRef(k, None, ids[position]))
    unkeyed = sum(1 for p, k in enumerate(keys) if selected[p] and k is None)
    if unkeyed:
        plan.notes.append(f"{unkeyed} selected listings have no {key_column} and are kept")
    plan.deletes = _delete_ops(clean, keys, chosen_positions, key_type)
    _guard_deletes(len(plan.deletes), len(clean), fraction, force_delete_count)
    plan.fingerprint = frame_fingerprint(clean, is_clean=True)
    return plan


def _describe_criteria(criteria: Sequence[str], has_where: bool) -> str:
    either = [c for c in criteria if c != "where(frame)"]
    text = " or ".join(either)
    if has_where:
        text = f"({text}) and where(frame)" if text else "where(frame)"
    return text


def _cleanup_reason(clean: pd.DataFrame, position: int) -> str:
    status = clean["Status"].iat[position]
    days = clean["DaysOnMarket"].iat[position]
    parts = [f"Status {status}" if status is not pd.NA else "no Status"]
    if days is not pd.NA:
        parts.append(f"{days} days on market")
    return ", ".join(parts)
