"""Clean structured columns (``Images``, ``ExtensionColumn``) as one joined text each.

A column of 100,000 lists or mappings holds hundreds of thousands of Python strings. Checking
that they are clean and hashing them cost a Python call per item each; here one pass checks
them (:func:`~.tidy.texts_are_clean`, the rule :mod:`.tidy` applies) and they are joined once
into one text (items apart by :data:`ITEM_SEP`), which :mod:`.hashing`'s fingerprint hashes as
one buffer.

Only clean columns of the usual shapes are joined (every row a ``list`` of ``str``, or a
``dict`` of ``str`` with the same keys in the same order); anything else returns None, and
callers take their item-by-item path, which gives the same results.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any

import numpy as np

from estatebot.listings.sync.values.tidy import texts_are_clean

__all__ = ["ITEM_SEP", "JoinedItems", "JoinedMappings", "join_clean_images", "join_clean_mappings"]

#: Between two items of the joined text (the hash's item separator too).
ITEM_SEP = "\x01"


@dataclass(frozen=True)
class JoinedItems:
    """A clean ``Images`` column: its item counts per row and every item joined, row by row."""

    counts: np.ndarray[Any, np.dtype[np.int64]]
    text: str


@dataclass(frozen=True)
class JoinedMappings:
    """A clean ``ExtensionColumn`` column whose rows all have the same keys in the same order.

    ``keys`` are those keys as given, ``ordered`` the same in sorted order and ``values`` every
    row's values joined, each row's in sorted key order.
    """

    rows: int
    keys: tuple[str, ...]
    ordered: tuple[str, ...]
    values: str

    @property
    def counts(self) -> np.ndarray[Any, np.dtype[np.int64]]:
        """The number of entries of each row."""
        return np.full(self.rows, len(self.keys), dtype=np.int64)


def join_clean_images(values: list[Any]) -> JoinedItems | None:
    """``values`` joined, or None unless every one is a ``list`` of clean ``str``."""
    if not set(map(type, values)) <= {list}:
        return None
    flat = list(chain.from_iterable(values))
    if not texts_are_clean(flat):
        return None
    counts = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    return JoinedItems(counts, ITEM_SEP.join(flat))


def join_clean_mappings(values: list[Any]) -> JoinedMappings | None:
    """``values`` joined, or None unless every one is a ``dict`` of clean ``str`` with the same
    keys in the same order as the first (the usual export: one set of extension fields)."""
    n = len(values)
    if not n or not set(map(type, values)) <= {dict}:
        return None
    keys = tuple(values[0])
    width = len(keys)
    if not texts_are_clean(list(keys)) or set(map(len, values)) != {width}:
        return None
    if any(ITEM_SEP in name for name in keys):
        return None  # joined keys could not be told apart
    # Every row's keys, joined, equal the first row's repeated: one comparison of two texts
    # (with no separator in the first row's keys, equal texts mean equal keys).
    if width and ITEM_SEP.join(chain.from_iterable(values)) != ITEM_SEP.join(keys * n):
        return None
    flat = list(chain.from_iterable(map(dict.values, values)))
    if not texts_are_clean(flat):
        return None
    ordered = tuple(sorted(keys))
    if ordered != keys:
        # The same permutation for every row: each key's values move as one slice.
        at = {name: j for j, name in enumerate(keys)}
        moved: list[str] = [""] * len(flat)
        for j, name in enumerate(ordered):
            moved[j::width] = flat[at[name] :: width]
        flat = moved
    return JoinedMappings(n, keys, ordered, ITEM_SEP.join(flat))
