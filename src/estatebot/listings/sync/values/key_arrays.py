"""Listing keys as Arrow arrays: as a plan pairs them, a whole column at a time.

The same keys as :func:`~estatebot.listings.sync.values.compare.key_values` and
:func:`~estatebot.listings.sync.values.compare.match_keys` give one by one: trimmed text (an
integer ID as its digits), then without case and with inner runs of spaces as one. Plain ASCII
keys without spaces (nearly all of them) are lowered by one Arrow kernel; the others go through
``match_keys`` itself, so the rule lives in one place.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from estatebot.listings.sync.values.compare import match_keys
from estatebot.listings.sync.values.tidy import INT_COLUMNS, arrow_text, clean_text

__all__ = [
    "KeyColumn",
    "all_distinct",
    "key_array",
    "match_array",
    "pair_positions",
    "positions_in",
]

Positions = np.ndarray[Any, np.dtype[np.int64]]


def key_array(series: pd.Series[Any], *, is_clean: bool = False) -> pa.Array:
    """``key_values(series, is_clean=...)`` as an Arrow array (null where a key is empty)."""
    if series.name in INT_COLUMNS:
        numbers = pa.array(series.astype("Int64").array)
        return pc.cast(numbers, pa.large_string())
    return arrow_text(series if is_clean else clean_text(series))


def match_array(keys: pa.Array) -> pa.Array:
    """``match_keys`` of an array of keys (from :func:`key_array`), as an Arrow array."""
    lowered = pc.ascii_lower(keys)
    plain = pc.and_kleene(
        pc.string_is_ascii(keys),
        pc.invert(pc.or_(pc.match_substring(keys, " "), pc.match_substring(keys, "\t"))),
    )
    other = pc.invert(pc.fill_null(plain, True))
    if not pc.any(other).as_py():
        return lowered
    at = np.flatnonzero(other.to_numpy(zero_copy_only=False))
    folded = match_keys(keys.take(pa.array(at)).to_pylist())
    return pc.replace_with_mask(lowered, other, pa.array(folded, type=pa.large_string()))


def positions_in(keys: pa.Array, table: pa.Array) -> Positions:
    """The position in ``table`` of each key's first occurrence there; -1 where a key is null
    or absent."""
    found = pc.fill_null(pc.index_in(keys, value_set=table, skip_nulls=True), -1)
    return np.array(found.to_numpy(zero_copy_only=False), dtype=np.int64)  # writable


def pair_positions(keys: pa.Array, table: pa.Array) -> Positions:
    """:func:`positions_in` for a ``table`` of unique keys: where ``keys`` are the table's own,
    in the same order (a sheet exported from these listings), known without a lookup (a hash
    table of a million keys misses the processor's caches at every step: 0.15 s here)."""
    if len(keys) == len(table) and len(keys):
        same = pc.equal(keys, table)
        if same.null_count == 0 and pc.all(same).as_py():
            return np.arange(len(keys), dtype=np.int64)
    return positions_in(keys, table)


def all_distinct(keys: pa.Array) -> bool:
    """Whether no key (nulls aside) appears twice.

    Keys in increasing order (listings numbered in sequence, as pulled) are told apart by one
    comparison of each with the next; others are counted in a hash table.
    """
    n = len(keys)
    if n < 2:
        return True
    if not keys.null_count and pc.all(pc.less(keys.slice(0, n - 1), keys.slice(1))).as_py():
        return True  # each key is below the next
    unique = pc.unique(keys)
    return bool(len(unique) - (1 if unique.null_count else 0) == n - keys.null_count)


class KeyColumn:
    """One side's keys: as written (trimmed) and as matched, in Arrow, and as Python text on
    first use."""

    def __init__(self, written: pa.Array) -> None:
        self.written = written
        self.matched = match_array(written)
        self._texts: list[str | None] | None = None

    def __len__(self) -> int:
        return len(self.written)

    @property
    def texts(self) -> list[str | None]:
        """The keys as written, as Python text (None where empty)."""
        if self._texts is None:
            self._texts = self.written.to_numpy(zero_copy_only=False).tolist()
        return self._texts

    def text_at(self, position: int) -> str | None:
        """The key at ``position`` as written (None where empty)."""
        found: str | None = self.written[position].as_py()
        return found

    def texts_at(self, positions: Positions) -> list[str | None]:
        """The keys at ``positions`` as written, as Python text (None where empty)."""
        chosen = self.written.take(pa.array(positions, type=pa.int64()))
        values: list[str | None] = chosen.to_numpy(zero_copy_only=False).tolist()
        return values

    def matched_texts(self, positions: Positions | None = None) -> list[str | None]:
        """The keys as matched at ``positions`` (None: all), as Python text."""
        chosen = self.matched
        if positions is not None:
            chosen = chosen.take(pa.array(positions, type=pa.int64()))
        values: list[str | None] = chosen.to_numpy(zero_copy_only=False).tolist()
        return values
