"""How sheet rows pair with remote listings: by key, looked up in Arrow a column at a time, with
empty and duplicated keys set aside; and the positional helpers the planning steps share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from estatebot.api.models import KeyType
from estatebot.listings.sync.plan.columns import ColumnCache
from estatebot.listings.sync.plan.desired import (
    SheetParts,
)
from estatebot.listings.sync.values.key_arrays import (
    KeyColumn,
    key_array,
    match_array,
    pair_positions,
    positions_in,
)
from estatebot.listings.sync.values.tidy import NONE

Positions = np.ndarray[Any, np.dtype[np.integer[Any]]]
Mask = np.ndarray[Any, np.dtype[np.bool_]]


def _is_every_row(positions: Positions, n: int) -> bool:
    return len(positions) == n and bool(np.array_equal(positions, np.arange(n)))


def pick(values: Sequence[Any], positions: Positions) -> list[Any]:
    """Items of a list at the given positions."""
    if _is_every_row(positions, len(values)):
        return list(values)
    if len(positions) < 2:
        return [values[p] for p in positions.tolist()]
    return list(itemgetter(*positions.tolist())(values))


def present_key(key: str | None) -> str:
    # Rows with an empty key were set aside before matching; this narrows the type for them.
    if key is None:
        raise AssertionError("a usable sheet row has a key")
    return key


@dataclass
class Pairing:
    """What the steps of :func:`plan_sync` share: the key, both sides, and how rows pair up.

    Keys are held as Arrow columns
    (:class:`~estatebot.listings.sync.values.key_arrays.KeyColumn`); their Python text is made
    on first use, for the listings that need it.
    """

    key_type: KeyType
    key_column: str
    parts: SheetParts
    sheet_key: KeyColumn
    remote: pd.DataFrame
    remote_key: KeyColumn
    # Per sheet position: the matching remote position, or -1.
    remote_of: np.ndarray[Any, np.dtype[np.int64]] = field(
        default_factory=lambda: np.zeros(0, dtype=np.int64)
    )
    # Sheet positions that cannot be matched (empty or duplicated key), with the reasons.
    problems: dict[int, list[str]] = field(default_factory=dict)
    usable: Mask = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # Sheet positions paired with a listing by its other identity (MLSNumber or Url), not by key.
    by_identity: Mask = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # By listing ID, the raw text of each value the pull could not read (the service holds it).
    unreadable: Mapping[int, Mapping[str, str]] = field(default_factory=dict)
    #: The listings whose Location nobody here knows (None: the remote frame does not say).
    location_unknown: frozenset[int] | None = None
    #: Remote columns already read as lists of clean values (the structured ones).
    remote_values: Mapping[str, list[Any]] = field(default_factory=dict)

    def remote_ids_at(self, positions: Positions) -> list[int | None]:
        """The IDs of the remote listings at ``positions`` (None where missing).

        Keys and IDs become Python objects only where a plan names them (a few rows of a
        million, most of the time).
        """
        chosen = self.remote["ID"].take(np.asarray(positions, dtype=np.intp))
        ids: list[int | None] = chosen.to_numpy(dtype=object, na_value=NONE).tolist()
        return ids

    def remote_id_at(self, position: int) -> int | None:
        """The ID of the remote listing at ``position`` (None where missing)."""
        return self.remote_ids_at(np.array([position], dtype=np.intp))[0]

    @cached_property
    def sheet_columns(self) -> ColumnCache:
        """The sheet's scalar columns as arrays (text as given)."""
        return ColumnCache(self.parts.frame)

    @cached_property
    def remote_columns(self) -> ColumnCache:
        """The remote listings' columns as arrays (clean)."""
        return ColumnCache(self.remote, self.remote_values)

    @cached_property
    def sheet_key_set(self) -> set[str]:
        """Every key the sheet names (as matched), usable or not (their listings are never
        deleted)."""
        return {k for k in self.sheet_key.matched_texts() if k is not None}

    def match(self) -> None:
        """Pair sheet rows with remote listings by key; set aside empty and duplicated keys.

        Keys match without case and with spaces folded (``compare.match_keys``). A row whose key
        no listing has, and a listing no row names, that share the other identity (MLSNumber
        when the key is URL, Url when it is MLSNumber) are one listing: paired, it is updated
        (its key changed) rather than created beside a deleted twin.
        """
        keys = self.sheet_key.matched
        n = len(keys)
        self.remote_of = pair_positions(keys, self.remote_key.matched)
        if keys.null_count:
            empty = np.flatnonzero(keys.is_null().to_numpy(zero_copy_only=False))
            for position in empty.tolist():
                self.problems[position] = [
                    f"{self.key_column}: empty, so the listing cannot be matched"
                ]
        for found in self._duplicated():
            rows = ", ".join(str(self.parts.rows[p]) for p in found)
            shown = self.sheet_key.text_at(found[0])
            reason = (
                f"{self.key_column}: {shown!r} is on rows {rows}; every row of a duplicated "
                "key is rejected"
            )
            for p in found:
                self.problems[p] = [reason]
        self.usable = np.ones(n, dtype=bool)
        if self.problems:
            self.usable[list(self.problems)] = False
        self.by_identity = np.zeros(n, dtype=bool)
        self._pair_by_identity()

    def _duplicated(self) -> list[list[int]]:
        """The sheet positions of each key given more than once, keys in the order they first
        appear. Rows with one key pair with one listing, so a count of rows per listing finds
        the duplicates among matched rows; the unmatched ones are looked up among themselves.
        """
        remote_of, n = self.remote_of, len(self.remote_of)
        paired = remote_of >= 0
        group = np.where(paired, remote_of, -1)
        duplicated = np.zeros(n, dtype=bool)
        if paired.any():
            counts = np.bincount(remote_of[paired], minlength=len(self.remote_key))
            duplicated[paired] = counts[remote_of[paired]] > 1
        keys = self.sheet_key.matched
        alone = np.flatnonzero(~paired & keys.is_valid().to_numpy(zero_copy_only=False))
        if len(alone) > 1:
            own = keys.take(pa.array(alone))
            first = positions_in(own, own)
            repeated = np.bincount(first, minlength=len(alone))[first] > 1
            duplicated[alone[repeated]] = True
            group[alone] = len(self.remote_key) + first
        if not duplicated.any():
            return []
        groups: dict[int, list[int]] = {}
        at = np.flatnonzero(duplicated)
        for position, number in zip(at.tolist(), group[at].tolist(), strict=True):
            groups.setdefault(number, []).append(position)
        return list(groups.values())

    def _pair_by_identity(self) -> None:
        other = {"MLSNumber": "Url", "Url": "MLSNumber"}.get(self.key_column)
        unmatched = np.flatnonzero(self.usable & (self.remote_of < 0))
        if other is None or not len(unmatched) or other not in self.parts.frame.columns:
            return
        taken = np.zeros(len(self.remote_key), dtype=bool)
        taken[self.remote_of[self.remote_of >= 0]] = True
        remote_other = match_array(key_array(self.remote[other], is_clean=True))
        free = np.flatnonzero(~taken & remote_other.is_valid().to_numpy(zero_copy_only=False))
        if not len(free):
            return
        # A value two free listings share names neither; each free listing pairs with the
        # first unmatched row that names it, and with no other.
        values = remote_other.take(pa.array(free))
        first = positions_in(values, values)
        alone = np.bincount(first, minlength=len(free)) == 1
        rows = self.parts.frame[other].take(unmatched)
        wanted = positions_in(match_array(key_array(rows)), values)
        named = np.flatnonzero(wanted >= 0)
        named = named[alone[wanted[named]]]
        _, earliest = np.unique(wanted[named], return_index=True)
        chosen = np.sort(named[earliest])
        positions = unmatched[chosen]
        self.remote_of[positions] = free[wanted[chosen]]
        self.by_identity[positions] = True
