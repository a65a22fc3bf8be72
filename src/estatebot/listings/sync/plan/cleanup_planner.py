"""Remote listings → a plan of deletes only: stale listings chosen by status, days on
market or a filter, under the same guards as a sync.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from estatebot.api.models import KeyType, ListingStatus
from estatebot.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.sync.plan.artifact import Confirmed, PlanArtifact
from estatebot.listings.sync.plan.classify import collector_paused, delete_ops, planned_at
from estatebot.listings.sync.plan.cleanup_rule import WHERE_WORDS, rule_in_words
from estatebot.listings.sync.plan.guards import (
    check_fraction,
    guard_deletes,
    parse_key_type,
    remote_positions,
)
from estatebot.listings.sync.plan.operations import ListingRef
from estatebot.listings.sync.values.compare import key_values, match_keys
from estatebot.listings.sync.values.hashing import frame_fingerprint
from estatebot.listings.sync.values.tidy import NONE, clean_frame

# --------------------------------------------------------------------------- plan_cleanup


def plan_cleanup(
    remote: pd.DataFrame,
    *,
    status: Sequence[str] | str | None = ("Sold",),
    min_days_on_market: int | None = None,
    where: Callable[[pd.DataFrame], pd.Series[bool]] | None = None,
    where_label: str | None = None,
    key: str | KeyType = "NewOaks",
    max_delete_fraction: float = 0.2,
    force_delete_count: int | None = None,
) -> PlanArtifact:
    """Plan the deletion of stale listings: a plan of deletes only, with the same guards.

    A listing is selected when its `Status` is one of `status` (the service's statuses,
    Active, PreOnMarket and Sold, in any case) **or** (when given) its `DaysOnMarket` is at
    least `min_days_on_market`; the selection is then narrowed (**and**) by `where(frame)`,
    a boolean Series over a clean copy of `remote` (NA counts as False). With no status and
    no minimum, `where` alone selects. Deletes are keyed by `key` (`NewOaks` by default:
    every pulled listing has an ID). Other listings are `kept`.

    The plan names its rule in words, in its title and first note: "Sold, or on the market 180
    days or more"; `where_label` says what `where` selects ("gone from this week's export"),
    else it is named "chosen by the where= filter". The plan keeps every listing's days on
    market, for its `plot`.

    Args:
        remote: The canonical frame of `pull_listings`.
        status: The statuses that select a listing (default `("Sold",)`; one status may be
            given as text; None or empty: no status selects).
        min_days_on_market: Select the listings on the market at least this many days (None:
            no minimum).
        where: A filter: called with a clean copy of `remote`, it returns a boolean Series,
            one value per listing, that narrows the selection (or makes it, alone).
        where_label: What `where` selects, in words, for the plan's title and first note.
        key: The key the deletes go by: `"NewOaks"` (default, the listing's ID),
            `"MLSNumber"` or `"URL"`.
        max_delete_fraction: The share of the remote listings the deletes may reach
            unconfirmed (default 0.2).
        force_delete_count: Confirms the deletes past the fraction: their exact number.

    Returns:
        The plan of deletes, every other listing kept (`estatebot.plan_cleanup` hands it out
            as a `SyncPlan`).

    Raises:
        PlanError: When no criterion is given, a status is not one of the service's (a typo
            would select nothing, silently), `where` does not return a boolean Series aligned
            with the frame, the deletes pass `max_delete_fraction` unconfirmed or
            `force_delete_count` does not equal their exact number; also for an unknown `key`,
            a `max_delete_fraction` not between 0 and 1, or a key present twice in `remote`.
    """
    with collector_paused():
        return _plan_cleanup(
            remote,
            status=status,
            min_days_on_market=min_days_on_market,
            where=where,
            where_label=where_label,
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
    where_label: str | None,
    key: str | KeyType,
    max_delete_fraction: float,
    force_delete_count: int | None,
) -> PlanArtifact:
    key_type = parse_key_type(key)
    key_column = schema.KEY_COLUMNS[key_type.value]
    fraction = check_fraction(max_delete_fraction)
    statuses = _listing_statuses((status,) if isinstance(status, str) else tuple(status or ()))
    if not statuses and min_days_on_market is None and where is None:
        raise PlanError("plan_cleanup needs a status, a min_days_on_market or a where filter")
    clean = clean_frame(remote).reset_index(drop=True)
    ids: list[int | None] = clean["ID"].to_numpy(dtype=object, na_value=NONE).tolist()
    keys = key_values(clean[key_column], is_clean=True)
    remote_positions(match_keys(keys), ids, key_column, shown=keys)

    selected = np.zeros(len(clean), dtype=bool)
    wanted = list(statuses)
    if wanted:
        selected |= clean["Status"].isin(wanted).fillna(False).to_numpy(dtype=bool)
    days = clean["DaysOnMarket"].to_numpy(dtype="float64", na_value=np.nan)
    if min_days_on_market is not None:
        with np.errstate(invalid="ignore"):
            selected |= days >= float(min_days_on_market)
    if where is not None:
        mask = where(clean.copy())
        if not isinstance(mask, pd.Series) or len(mask) != len(clean):
            raise PlanError("where(frame) must return a boolean Series, one value per listing")
        chosen = mask.reindex(clean.index).astype("boolean").fillna(False).to_numpy(dtype=bool)
        either = bool(wanted) or min_days_on_market is not None
        selected = (selected & chosen) if either else chosen
    where_words = (where_label or WHERE_WORDS) if where is not None else None
    rule = rule_in_words(wanted, min_days_on_market, where_words)

    plan = PlanArtifact(
        key_type=key_type.value,
        options={
            "cleanup": True,
            "key": key_type.value,
            "status": list(statuses),
            "min_days_on_market": min_days_on_market,
            "where": where is not None,
            "rule": rule,
            "max_delete_fraction": fraction,
            "force_delete_count": force_delete_count,
        },
        created_at=planned_at(),
        remote_count=len(clean),
    )
    plan.notes.append(f"cleanup selects: {rule}")

    chosen_positions: list[tuple[int, int | None, str]] = []
    for position, k in enumerate(keys):
        if selected[position] and k is not None:
            chosen_positions.append(
                (position, None, "cleanup: " + _cleanup_reason(clean, position))
            )
        else:
            plan.kept.append(ListingRef(k, None, ids[position]))
            # For plot(): a kept listing is held by reference only, its days on market apart.
            day = days[position]
            plan.kept_days_on_market.append(None if np.isnan(day) else int(day))
    unkeyed = sum(1 for p, k in enumerate(keys) if selected[p] and k is None)
    if unkeyed:
        plan.notes.append(f"{unkeyed} selected listings have no {key_column} and are kept")
    plan.deletes = delete_ops(clean, keys, chosen_positions, key_type)
    guard_deletes(len(plan.deletes), len(clean), fraction, force_delete_count)
    plan.confirmed = Confirmed(fraction, force_delete_count)
    plan.fingerprint = frame_fingerprint(clean, is_clean=True)
    return plan


def _listing_statuses(given: Sequence[str]) -> tuple[str, ...]:
    """``given`` in the service's spelling; PlanError naming the statuses for any other."""
    known = {name.value.lower(): name.value for name in ListingStatus}
    out: list[str] = []
    for value in given:
        found = known.get(str(value).strip().lower())
        if found is None:
            allowed = ", ".join(name.value for name in ListingStatus)
            raise PlanError(
                f"status {value!r} is not a listing status; the service's statuses are "
                f"{allowed} (any case)"
            )
        out.append(found)
    return tuple(out)


def _cleanup_reason(clean: pd.DataFrame, position: int) -> str:
    status = clean["Status"].iat[position]
    days = clean["DaysOnMarket"].iat[position]
    parts = [f"Status {status}" if status is not pd.NA else "no Status"]
    if days is not pd.NA:
        parts.append(f"{days} days on market")
    return ", ".join(parts)
