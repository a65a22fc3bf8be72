"""Desired listings vs remote listings → a plan (pure: no I/O, inputs never changed).

A plan is an inspectable artifact, made before anything is sent: every listing is classified as
``create``, ``update`` (with field-level changes), ``unchanged``, ``delete``, ``invalid``,
``kept`` (on the service only, left alone) or ``skipped_create``. Each create and update carries
its complete, validated request body; each update and delete carries the hash of the remote
listing it was planned against, so the apply step can refuse to act on a listing that changed
since. Apply does exactly the plan, no more.

Rules:

* Listings are matched by key (``MLSNumber``, ``URL`` or ``NewOaks``) compared as trimmed text
  without case. A sheet row no listing's key matches and a listing no row names that share
  the other identity (MLSNumber or Url) are one listing, updated under its old key.
  A key present twice in the remote listings is an error (never paired by order); every sheet
  row of a key present twice in the sheet is invalid.
* Values are compared canonically (:mod:`estatebot.listings.sync.values.compare`). A change of
  ``DaysOnMarket`` alone does not make an update unless ``compare_days_on_market=True``.
* An update body is the remote listing with the sheet's changed fields laid over it: a blank
  cell keeps the remote value; only a cleared cell (the reader's clear token) empties a field.
* Deletes happen only when asked (``delete_missing=True``) or for listings the export marks as
  unpublished, and never from an empty or all-invalid sheet, nor past ``max_delete_fraction``
  of the remote listings unless ``force_delete_count`` confirms the exact number.

This module is the entry point of planning. Its steps live beside it: the sheet is read by
:mod:`~estatebot.listings.sync.plan.desired`, rows pair with listings in
:mod:`~estatebot.listings.sync.plan.pairing`, field differences are found by
:mod:`~estatebot.listings.sync.plan.differences` under the rules of
:mod:`~estatebot.listings.sync.values.compare`, each listing is classified by
:mod:`~estatebot.listings.sync.plan.classify` with bodies from
:mod:`~estatebot.listings.sync.values.payloads`, and :mod:`~estatebot.listings.sync.plan.guards`
refuses what a plan must not do. The plan itself (its items, summary and JSON form) is in
:mod:`~estatebot.listings.sync.plan.artifact`; :func:`plan_cleanup` is in
:mod:`~estatebot.listings.sync.plan.cleanup_planner`.

Work is done a column at a time over all listings, in Arrow and numpy kernels: the remote side
is cleaned and joined for its fingerprint by :mod:`~estatebot.listings.sync.plan.remote_side`,
keys are matched by :mod:`~estatebot.listings.sync.values.key_arrays`, each column compared once
(:mod:`~estatebot.listings.sync.plan.columns`). Only the listings that change get a
before-image, a hash and a body (:mod:`~estatebot.listings.sync.plan.updates`); the unchanged
ones are kept as columns and become
:class:`~estatebot.listings.sync.plan.operations.ListingRef` objects when the plan is read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pandas as pd

from estatebot.api.models import KeyType
from estatebot.listings import schema
from estatebot.listings.sync.plan.artifact import Confirmed, PlanArtifact
from estatebot.listings.sync.plan.classify import (
    collector_paused,
    plan_matched,
    plan_new,
    plan_remote_only,
    planned_at,
)
from estatebot.listings.sync.plan.desired import (
    SheetLike,
    sheet_parts,
)
from estatebot.listings.sync.plan.guards import (
    IDENTITY_FIELDS,
    check_fraction,
    check_listing_sheet,
    check_tolerances,
    check_unique_keys,
    guard_deletes,
    guard_identities,
    hold_for_incomplete_pull,
    identity_changes,
    parse_key_type,
)
from estatebot.listings.sync.plan.operations import InvalidRow
from estatebot.listings.sync.plan.pairing import Pairing
from estatebot.listings.sync.plan.remote_side import clean_remote
from estatebot.listings.sync.values.hashing import frame_fingerprint
from estatebot.listings.sync.values.key_arrays import KeyColumn, key_array

__all__ = ["plan_sync"]


def plan_sync(
    sheet: SheetLike | pd.DataFrame,
    remote: pd.DataFrame,
    *,
    key: str | KeyType = "MLSNumber",
    delete_missing: bool = False,
    create_missing: bool = True,
    max_delete_fraction: float = 0.2,
    force_delete_count: int | None = None,
    force_identity_count: int | None = None,
    blank_unknown_location: bool | None = None,
    compare_days_on_market: bool = False,
    tolerances: Mapping[str, float] | None = None,
    accept_flagged: bool = False,
    allow_incomplete: bool = False,
) -> PlanArtifact:
    """Plan how to make the remote listings match a sheet; nothing is sent.

    `delete_missing` deletes remote listings absent from the sheet; it is refused (and the
    reason recorded in `refusals`) when the sheet has no valid rows or when the reader
    rejected rows, whose listings cannot be told apart from missing ones. Listings the export
    marks as unpublished are deleted in any case. A sheet value the reader warned about (a ZIP
    that lost its leading zero, a price that disagrees with itself, ...) is held back: the
    listing keeps its own value and the plan lists it under `held_back`, unless
    `accept_flagged=True`. A value that came from the reader's `defaults` fills an empty field
    only; one from its `overrides` is written everywhere. When `remote` is marked incomplete
    (`attrs["incomplete"]`, set by `pull_listings`), nothing is created or deleted: a listing
    missing from the pull would be planned as new; `allow_incomplete=True` overrides.

    Deletes beyond `max_delete_fraction` of the remote listings are refused unless
    `force_delete_count` equals their exact number (a wrong `force_delete_count` is refused in
    every case). Updates that change a listing's MLSNumber or Url (its identity, to the MLS
    and to other tools) are guarded alike, by the same fraction and `force_identity_count`:
    many of them mean a column mapped to the wrong field.

    List never returns `Location`: an update of a listing whose Location nobody here knows
    (`pull_listings` names them: no value was ever sent to it from here) and that the sheet
    does not give would blank one set by another tool. Such an update is held back, naming the
    listing, unless `blank_unknown_location=True` says to send it empty.

    Args:
        sheet: A read spreadsheet (`SheetLike`, as `read_sheet` returns) or a plain canonical
            frame (then no issues, nothing cleared, nothing unpublished).
        remote: The canonical frame of `pull_listings`.
        key: The matching field: `"MLSNumber"` (default), `"URL"` (column `Url`) or
            `"NewOaks"` (column `ID`).
        delete_missing: Delete the remote listings absent from the sheet.
        create_missing: Plan the new listings (default); False reports them as
            `skipped_create` instead.
        max_delete_fraction: The share of the remote listings that deletes, or changes of
            MLSNumber or Url, may reach unconfirmed (default 0.2).
        force_delete_count: Confirms the deletes past the fraction: their exact number.
        force_identity_count: Confirms the changes of MLSNumber or Url past the fraction:
            their exact number.
        blank_unknown_location: Send empty a Location nobody here knows instead of holding
            the update back (None: as the environment's `ESTATEBOT_BLANK_UNKNOWN_LOCATION`
            says, for a brokerage whose chatbots never use Location; off when unset).
        compare_days_on_market: Let a change of `DaysOnMarket` alone make an update.
        tolerances: An absolute tolerance by numeric field, replacing its comparison
            precision.
        accept_flagged: Write the sheet values the reader warned about instead of holding
            them back.
        allow_incomplete: Create and delete even when `remote` is marked incomplete.

    Returns:
        The plan, every listing classified with its request bodies and before-hashes
            (`estatebot.plan_sync` hands it out as a `SyncPlan`).

    Raises:
        PlanError: When the sheet is no listings sheet (no listing rows, or no column that
            maps to the key: the message names the file and the columns found), for
            duplicate remote keys, an unknown key, bad options (a `max_delete_fraction` not
            between 0 and 1, a tolerance for a field that is not numeric or that is not a
            finite number ≥ 0), or when the
            deletes or identity changes pass `max_delete_fraction` unconfirmed, or a force
            count does not equal their exact number.
    """
    with collector_paused():
        return _plan_sync(
            sheet,
            remote,
            key=key,
            delete_missing=delete_missing,
            create_missing=create_missing,
            max_delete_fraction=max_delete_fraction,
            force_delete_count=force_delete_count,
            force_identity_count=force_identity_count,
            blank_unknown_location=_blank_location(blank_unknown_location),
            compare_days_on_market=compare_days_on_market,
            tolerances=tolerances,
            accept_flagged=accept_flagged,
            allow_incomplete=allow_incomplete,
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
    force_identity_count: int | None,
    blank_unknown_location: bool,
    compare_days_on_market: bool,
    tolerances: Mapping[str, float] | None,
    accept_flagged: bool,
    allow_incomplete: bool,
) -> PlanArtifact:
    key_type = parse_key_type(key)
    tolerance_of = check_tolerances(tolerances)
    fraction = check_fraction(max_delete_fraction)
    options: dict[str, Any] = {
        "key": key_type.value,
        "delete_missing": bool(delete_missing),
        "create_missing": bool(create_missing),
        "max_delete_fraction": fraction,
        "force_delete_count": force_delete_count,
        "force_identity_count": force_identity_count,
        "blank_unknown_location": bool(blank_unknown_location),
        "compare_days_on_market": bool(compare_days_on_market),
        "tolerances": tolerance_of,
        "accept_flagged": bool(accept_flagged),
        "allow_incomplete": bool(allow_incomplete),
    }
    incomplete = None if allow_incomplete else remote.attrs.get("incomplete")
    unreadable = remote.attrs.get("unreadable") or {}
    location_unknown = _location_unknown(remote)
    # Work that runs in Arrow or hashlib without the interpreter lock goes to another thread:
    # the remote side's text is trimmed there while its structured columns are joined here,
    # then its fingerprint is hashed there while the rows are matched and compared here.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="estatebot-plan") as pool:
        side = clean_remote(remote, pool)
        remote_clean = side.clean
        fingerprint = pool.submit(
            frame_fingerprint, remote_clean, is_clean=True, joined=side.joined
        )
        plan = _plan_rows(
            sheet, remote_clean, key_type, options, unreadable, location_unknown, side.values
        )
        plan.fingerprint = fingerprint.result()
    if incomplete:
        hold_for_incomplete_pull(plan, incomplete)
    plan.confirmed = Confirmed(fraction, force_delete_count, force_identity_count)
    return plan


def _plan_rows(
    sheet: SheetLike | pd.DataFrame,
    remote_clean: pd.DataFrame,
    key_type: KeyType,
    options: dict[str, Any],
    unreadable: Mapping[int, Mapping[str, str]],
    location_unknown: frozenset[int] | None = None,
    remote_values: Mapping[str, list[Any]] | None = None,
) -> PlanArtifact:
    """The plan's operations, notes and invalid rows (everything but its fingerprint)."""
    check_listing_sheet(sheet, key_type)  # a file that is no listings sheet plans nothing
    key_column = schema.KEY_COLUMNS[key_type.value]
    remote_key = KeyColumn(key_array(remote_clean[key_column], is_clean=True))
    check_unique_keys(remote_key, remote_clean["ID"], key_column)
    parts = sheet_parts(sheet, key_column)
    ctx = Pairing(
        key_type, key_column, parts, KeyColumn(key_array(parts.frame[key_column])),
        remote_clean, remote_key, unreadable=unreadable, location_unknown=location_unknown,
        remote_values=remote_values or {},
    )  # fmt: skip
    ctx.match()

    plan = PlanArtifact(
        key_type=key_type.value,
        options=options,
        created_at=planned_at(),
        remote_count=len(remote_clean),
    )
    plan.notes.extend(parts.notes)
    if parts.overrides:
        # A deliberate overwrite: said in the plan, and kept in its options.
        shown = ", ".join(f"{name}={value!r}" for name, value in parts.overrides.items())
        plan.notes.append(f"overrides: {shown} written to every listing, over its own value")
        plan.options["overrides"] = {name: str(value) for name, value in parts.overrides.items()}
    accept_flagged = options["accept_flagged"]
    plan_matched(
        plan, ctx, options["tolerances"], options["compare_days_on_market"], accept_flagged
    )
    plan_new(plan, ctx, options["create_missing"], accept_flagged)
    for position, reasons in ctx.problems.items():
        paired = int(ctx.remote_of[position])
        ident = ctx.remote_id_at(paired) if paired >= 0 else None
        key = ctx.sheet_key.text_at(position)
        plan.invalid.append(InvalidRow(parts.rows[position], key, ident, tuple(reasons)))
    plan.invalid.extend(parts.rejected)
    plan.invalid.sort(key=lambda r: (r.row is None, r.row if r.row is not None else 0))
    plan_remote_only(plan, ctx, options["delete_missing"])
    guard_identities(
        identity_changes(plan.updates),
        len(remote_clean),
        options["max_delete_fraction"],
        options["force_identity_count"],
        mapped=_mapped_identities(sheet),
    )
    guard_deletes(
        len(plan.deletes),
        len(remote_clean),
        options["max_delete_fraction"],
        options["force_delete_count"],
    )
    return plan


def _mapped_identities(sheet: SheetLike | pd.DataFrame) -> str:
    """The sheet's headers read as MLSNumber or Url under another name ("ListingKey →
    MLSNumber"), as a guard names the likely cause of many changed identities."""
    mapping = getattr(sheet, "mapping", None)
    if not isinstance(mapping, pd.DataFrame) or not {"header", "field"} <= {*mapping.columns}:
        return ""
    pairs = [
        f"{header} → {name}"
        for header, name in zip(mapping["header"], mapping["field"], strict=True)
        if isinstance(name, str) and name in IDENTITY_FIELDS and str(header) != name
    ]
    return "the sheet maps " + ", ".join(pairs) if pairs else ""


def _location_unknown(remote: pd.DataFrame) -> frozenset[int] | None:
    """The IDs of the listings whose Location nobody here knows, as the pull named them (None:
    the frame does not say, as one made by hand or read from a file)."""
    raw = remote.attrs.get(schema.LOCATION_UNKNOWN_ATTR)
    if not isinstance(raw, str):
        return None
    return frozenset(int(text) for text in raw.split(",") if text.strip().isdigit())


#: ``ESTATEBOT_BLANK_UNKNOWN_LOCATION``: the default of ``blank_unknown_location``.
BLANK_LOCATION_ENV = "ESTATEBOT_BLANK_UNKNOWN_LOCATION"


def _blank_location(given: bool | None) -> bool:
    """The caller's choice, else the environment's (only a plain yes turns it on)."""
    if given is not None:
        return bool(given)
    setting = os.environ.get(BLANK_LOCATION_ENV, "").strip().lower()
    return setting in {"1", "true", "yes", "on"}
