"""Checks of a plan's options, and the guards every plan passes: a sheet that is a listings
sheet (rows, and a column for the key), unique remote keys, no delete-missing from a sheet that
cannot vouch for it, no deletes past the allowed fraction.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from estatebot.api.models import KeyType
from estatebot.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.sync.plan.artifact import PlanArtifact
from estatebot.listings.sync.plan.operations import InvalidRow, ListingRef, PlannedOp
from estatebot.listings.sync.values.key_arrays import KeyColumn, all_distinct
from estatebot.listings.sync.values.tidy import NONE

_NUMERIC: frozenset[str] = frozenset(schema.INT_COLUMNS) | frozenset(schema.FLOAT_COLUMNS)


# --------------------------------------------------------------------------- options


def parse_key_type(key: str | KeyType) -> KeyType:
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


def check_tolerances(tolerances: Mapping[str, float] | None) -> dict[str, float]:
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


def check_fraction(max_delete_fraction: float) -> float:
    fraction = float(max_delete_fraction)
    if not 0 <= fraction <= 1:
        raise PlanError("max_delete_fraction must be between 0 and 1", value=max_delete_fraction)
    return fraction


# --------------------------------------------------------------------------- the sheet

#: Column names a message shows before it counts the rest.
_SHOWN_COLUMNS = 8


def check_listing_sheet(sheet: Any, key_type: KeyType) -> None:
    """Raise PlanError when ``sheet`` is no listings sheet: no listing rows, or no key column.

    ``sheet`` is a read sheet (a ``Sheet``: its ``mapping`` tells which header became which
    field, its ``source`` names the file) or a plain frame, checked alike; a stand-in for a read
    sheet without a ``mapping`` cannot say what its file held and is taken as it is. A file of
    chat test cases, a note, a header row alone would otherwise plan as "nothing to change" or
    as every row invalid, and a sync would look in step when it read nothing. The message names
    the file where known and the columns found, so the person sees what was read instead. An
    empty sheet is an error even against no listings: there is nothing to sync.
    """
    key_column = schema.KEY_COLUMNS[key_type.value]
    found = _read_of(sheet, key_column)
    if found is None:
        return
    if found.rows == 0:
        if not found.headers:
            raise PlanError(f"{found.name}: no listing rows and no columns (an empty file)")
        raise PlanError(
            f"{found.name}: no listing rows ({found.empty_why}; its columns are "
            f"{_shown(found.headers)})"
        )
    # A key the reader filled in some other way (a default, a value derived) still keys rows.
    frame = found.frame
    keyed = key_column in frame.columns and bool(frame[key_column].notna().any())
    if not (found.mapped or keyed):
        label = key_column if key_column == key_type.value else f"{key_column} (the {key_type} key)"
        raise PlanError(
            f"{found.name}: no column maps to {label}; its columns are {_shown(found.headers)}. "
            f"A listings sheet has one: {found.fix} or plan by another key"
        )


@dataclass(frozen=True)
class _Read:
    """What a sheet holds, as far as :func:`check_listing_sheet` asks."""

    name: str  # the file's name where known
    frame: pd.DataFrame
    headers: list[Any]  # the columns as found in the file (or the frame's)
    rows: int  # the listing rows read, valid or not
    mapped: bool  # a column maps to the key
    empty_why: str
    fix: str  # how to give the sheet a key column


def _read_of(sheet: Any, key_column: str) -> _Read | None:
    if isinstance(sheet, pd.DataFrame):
        return _Read(
            name="the sheet (a DataFrame)",
            frame=sheet,
            headers=[*sheet.columns],
            rows=len(sheet),
            mapped=key_column in sheet.columns,
            empty_why="the frame is empty",
            fix=f"name a column {key_column}",
        )
    frame: pd.DataFrame = sheet.frame
    mapping = getattr(sheet, "mapping", None)
    if not (isinstance(mapping, pd.DataFrame) and {"header", "field"} <= {*mapping.columns}):
        return None  # a stand-in for the reader's Sheet: what its file held is not known
    headers = [*mapping["header"]]
    mapped = key_column in {*mapping["field"].dropna().astype(str)}
    # The reader's count where it gives one; the rows kept, rejected and not published at least.
    seen = len(frame) + len(sheet.invalid_rows) + len(sheet.unpublished)
    rows = max(int(getattr(sheet, "rows_read", 0) or 0), seen)
    return _Read(
        name=str(getattr(sheet, "source", None) or "the sheet"),
        frame=frame,
        headers=headers,
        rows=rows,
        mapped=mapped,
        empty_why="the header row is all there is",
        fix=f"map a header to {key_column} (mapping=)",
    )


def _shown(headers: Sequence[Any]) -> str:
    """The first column names, then a count of the rest."""
    names = [str(h) if str(h).strip() else "(blank)" for h in headers]
    if len(names) <= _SHOWN_COLUMNS:
        return ", ".join(names)
    rest = len(names) - _SHOWN_COLUMNS
    return f"{', '.join(names[:_SHOWN_COLUMNS])} and {rest} more"


# --------------------------------------------------------------------------- guards


def guard_deletes(
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


#: The fields that name a listing to people and other systems (a changed one is a new identity).
IDENTITY_FIELDS: tuple[str, ...] = ("MLSNumber", "Url")
#: Listings a guard's message names before it counts the rest.
_SHOWN_LISTINGS = 5
#: Changes of MLSNumber or Url a plan may always make, whatever the fraction: a sheet corrects
#: a few numbers (shown in the plan, each with its before and after); a wrong mapping rewrites
#: them all.
FEW_IDENTITY_CHANGES = 5


def changes_identity(changes: Sequence[Any]) -> bool:
    """Whether an update's changes give its listing another MLSNumber or Url (one it had)."""
    return any(
        change.field in IDENTITY_FIELDS
        and not _blank(change.before)
        and not _blank(change.after)
        # The same key written otherwise (case, spaces) still names the same listing.
        and _as_matched(change.before) != _as_matched(change.after)
        for change in changes
    )


def _as_matched(value: Any) -> str:
    return " ".join(str(value).split()).casefold()


def identity_changes(updates: Sequence[PlannedOp]) -> list[tuple[str, str, str]]:
    """``(field, before, after)`` of each update that gives its listing another identity (the
    first such field of each)."""
    found = []
    for op in updates:
        for change in op.changes:
            if changes_identity((change,)):
                found.append((change.field, str(change.before), str(change.after)))
                break
    return found


def _blank(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return (isinstance(value, float) and math.isnan(value)) or str(value).strip() == ""


def guard_identities(
    changed: Sequence[tuple[str, str, str]],
    remote_count: int,
    fraction: float,
    force_identity_count: int | None,
    *,
    mapped: str = "",
) -> None:
    """Raise PlanError when more identities change than the fraction allows, unconfirmed.

    ``changed`` holds one ``(field, before, after)`` per listing whose MLSNumber or Url would
    change. Rewriting many listings' identity is what a column mapped to the wrong field does
    (a sheet's own record key read as MLSNumber), and it cuts every listing off from the MLS
    and from other tools as surely as deleting it: it is guarded like deletes, by
    ``max_delete_fraction`` (a few, :data:`FEW_IDENTITY_CHANGES`, always pass), and confirmed by
    its exact count. ``mapped`` names the sheet's
    headers that became MLSNumber or Url, the likely cause.
    """
    count = len(changed)
    if force_identity_count is not None:
        if force_identity_count != count:
            raise PlanError(
                f"force_identity_count={force_identity_count} does not match the plan, which "
                f"would change the MLSNumber or Url of exactly {count} listings; pass "
                f"force_identity_count={count} to confirm",
                value=force_identity_count,
            )
        return
    limit = max(fraction * remote_count, FEW_IDENTITY_CHANGES)
    if count <= limit:
        return
    share = count / remote_count if remote_count else 1.0
    shown = "; ".join(f"{name} {before!r} → {after!r}" for name, before, after in changed[:5])
    more = f"; and {count - _SHOWN_LISTINGS} more" if count > _SHOWN_LISTINGS else ""
    cause = f" ({mapped})" if mapped else ""
    raise PlanError(
        f"the plan would change the MLSNumber or Url of {count} of {remote_count} remote "
        f"listings ({share:.1%}), more than max_delete_fraction={fraction:g} allows "
        f"({math.floor(limit)}): {shown}{more}. A column mapped to the wrong field is the likely "
        f"cause{cause}: check mapping= and the key, then pass force_identity_count={count} to "
        "confirm exactly these changes",
        column=changed[0][0] if changed else None,
        value=count,
    )


def check_unique_keys(keys: KeyColumn, ids: pd.Series[Any], key_column: str) -> None:
    """Raise PlanError, as :func:`remote_positions` does, when a remote key appears twice
    (``ids``: the listings' ID column, for the message).

    Counted in Arrow: as many distinct keys as keys.
    """
    if all_distinct(keys.matched):
        return
    found = ids.to_numpy(dtype=object, na_value=NONE).tolist()
    remote_positions(keys.matched_texts(), found, key_column, shown=keys.texts)


def remote_positions(
    keys: list[str | None],
    ids: Sequence[Any],
    key_column: str,
    *,
    shown: Sequence[str | None] | None = None,
) -> dict[str, int]:
    """Each remote key's position (unkeyed listings left out).

    ``keys`` are the keys as matched; ``shown`` the same keys as written, for the message.
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
    names: dict[str, str] = {}
    for position, k in enumerate(keys):
        if k is not None and counts[k] > 1:
            ident = ids[position]
            name = names.setdefault(k, str(shown[position] if shown is not None else k))
            groups.setdefault(name, []).append(
                f"ID {ident}" if ident is not None else f"position {position + 1}"
            )
    listed = "; ".join(f"{k!r} ({', '.join(v)})" for k, v in list(groups.items())[:10])
    more = f"; and {len(groups) - 10} more" if len(groups) > 10 else ""
    first = next(iter(groups))
    raise PlanError(
        f"{len(groups)} {key_column} keys appear more than once in the remote listings, so "
        f"they cannot be matched: {listed}{more}; remove the duplicates on the service or plan "
        "by another key",
        column=key_column,
        value=first,
    )


def refuse_delete_missing(
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


def hold_for_incomplete_pull(plan: PlanArtifact, incomplete: Mapping[str, Any]) -> None:
    """Turn a plan's creates into skipped creates and its deletes into kept listings.

    The remote listings were not all pulled: a listing missing from them would be planned as a
    new one (created twice, or refused), and what is missing cannot be told from what is gone.
    """
    reason = str(incomplete.get("reason") or "the pull was incomplete")
    if not (plan.creates or plan.deletes):
        plan.notes.append(f"the remote listings may be incomplete ({reason})")
        return
    plan.refusals.append(
        f"the remote listings are incomplete ({reason}): {len(plan.creates)} creates and "
        f"{len(plan.deletes)} deletes held back; pull again, or pass allow_incomplete=True"
    )
    why = f"not created: the pull was incomplete ({reason})"
    plan.skipped_create.extend(
        replace(op, action="skipped_create", reason=why) for op in plan.creates
    )
    plan.creates = []
    plan.kept.extend(ListingRef(op.key, op.row, op.id) for op in plan.deletes)
    plan.deletes = []
