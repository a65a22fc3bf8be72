"""How sheet rows pair with remote listings: by key, with empty and duplicated keys set aside;
and the positional helpers the planning steps share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import compress, repeat
from operator import itemgetter
from typing import Any, cast

import numpy as np
import pandas as pd

from estatebot.api.models import KeyType
from estatebot.listings.sync.plan.desired import (
    SheetParts,
)
from estatebot.listings.sync.plan.operations import ListingRef
from estatebot.listings.sync.values.compare import key_values, match_keys

Positions = np.ndarray[Any, np.dtype[np.integer[Any]]]
Mask = np.ndarray[Any, np.dtype[np.bool_]]


def _is_every_row(positions: Positions, n: int) -> bool:
    return len(positions) == n and bool(np.array_equal(positions, np.arange(n)))


def take_rows(frame: pd.DataFrame, positions: Positions) -> pd.DataFrame:
    """Rows of a positional frame, in the given order (the frame itself when that is all)."""
    return frame if _is_every_row(positions, len(frame)) else frame.take(positions)


def pick(values: Sequence[Any], positions: Positions) -> list[Any]:
    """Items of a list at the given positions."""
    if _is_every_row(positions, len(values)):
        return list(values)
    if len(positions) < 2:
        return [values[p] for p in positions.tolist()]
    return list(itemgetter(*positions.tolist())(values))


def pick_where(values: Sequence[Any], positions: Positions, mask: Mask) -> list[Any]:
    """Items of a list at the given positions where ``mask`` holds."""
    if _is_every_row(positions, len(values)):
        return list(compress(values, mask.tolist()))
    return pick(values, positions[mask])


def refs(
    keys: Sequence[str | None], rows: Sequence[int | None], ids: Sequence[int | None]
) -> list[ListingRef]:
    """ListingRefs in bulk (a named tuple made from each triple at C speed)."""
    make = partial(tuple.__new__, ListingRef)
    return cast(list[ListingRef], list(map(make, zip(keys, rows, ids, strict=True))))


def present_key(key: str | None) -> str:
    # Rows with an empty key were set aside before matching; this narrows the type for them.
    if key is None:
        raise AssertionError("a usable sheet row has a key")
    return key


@dataclass
class Pairing:
    """What the steps of :func:`plan_sync` share: the key, both sides, and how rows pair up."""

    key_type: KeyType
    key_column: str
    parts: SheetParts
    sheet_keys: list[str | None]
    remote: pd.DataFrame
    remote_keys: list[str | None]
    remote_ids: list[int | None]
    remote_at: dict[Any, int]  # remote match key → position (never None)
    # The keys as matched (no case, see compare.match_keys), position for position.
    sheet_match: list[str | None] = field(default_factory=list)
    remote_match: list[str | None] = field(default_factory=list)
    # Per sheet position: the matching remote position, or -1.
    remote_of: np.ndarray[Any, np.dtype[np.int64]] = field(
        default_factory=lambda: np.zeros(0, dtype=np.int64)
    )
    # Sheet positions that cannot be matched (empty or duplicated key), with the reasons.
    problems: dict[int, list[str]] = field(default_factory=dict)
    usable: Mask = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # Every key the sheet names (as matched), usable or not (their listings are never deleted).
    sheet_key_set: set[str] = field(default_factory=set)
    # Sheet positions paired with a listing by its other identity (MLSNumber or Url), not by key.
    by_identity: Mask = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # By listing ID, the raw text of each value the pull could not read (the service holds it).
    unreadable: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    #: The listings whose Location nobody here knows (None: the remote frame does not say).
    location_unknown: frozenset[int] | None = None

    def match(self) -> None:
        """Pair sheet rows with remote listings by key; set aside empty and duplicated keys.

        Keys match without case and with spaces folded (``compare.match_keys``). A row whose key
        no listing has, and a listing no row names, that share the other identity (MLSNumber
        when the key is URL, Url when it is MLSNumber) are one listing: paired, it is updated
        (its key changed) rather than created beside a deleted twin.
        """
        if not self.sheet_match:
            self.sheet_match = list(self.sheet_keys)
        if not self.remote_match:
            self.remote_match = list(self.remote_keys)
        keys = self.sheet_match
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
            for found in positions.values():
                if len(found) < 2:
                    continue
                rows = ", ".join(str(self.parts.rows[p]) for p in found)
                shown = self.sheet_keys[found[0]]
                reason = (
                    f"{self.key_column}: {shown!r} is on rows {rows}; every row of a duplicated "
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
        self.by_identity = np.zeros(len(keys), dtype=bool)
        self._pair_by_identity()

    def _pair_by_identity(self) -> None:
        other = {"MLSNumber": "Url", "Url": "MLSNumber"}.get(self.key_column)
        unmatched = np.flatnonzero(self.usable & (self.remote_of < 0))
        if other is None or not len(unmatched) or other not in self.parts.frame.columns:
            return
        taken = np.zeros(len(self.remote_keys), dtype=bool)
        taken[self.remote_of[self.remote_of >= 0]] = True
        remote_other = match_keys(key_values(self.remote[other], is_clean=True))
        owners: dict[str, int] = {}
        for position in np.flatnonzero(~taken).tolist():
            value = remote_other[position]
            if value is not None:
                # A value two listings share names neither: leave it alone.
                owners[value] = -1 if value in owners else position
        if not owners:
            return
        sheet_other = match_keys(key_values(self.parts.frame[other].iloc[unmatched]))
        for position, value in zip(unmatched.tolist(), sheet_other, strict=True):
            if value is None or owners.get(value, -1) < 0:
                continue
            self.remote_of[position] = owners[value]
            self.by_identity[position] = True
            owners[value] = -1  # one row per listing
