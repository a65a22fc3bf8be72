"""A frame's columns as arrays, each made once, on first use, for the whole plan.

Planning compares, masks and picks the same columns several times (the differences, the fields
List never returns, the defaults); converting a column once serves them all. Text is one Arrow
array (the frame's own buffers), structured columns are Python lists; numbers become float
arrays (NaN where missing) each time they are read, whole or at some rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from estatebot.listings.sync.values.tidy import (
    DICT_COLUMNS,
    LIST_COLUMNS,
    TEXT_COLUMNS,
    arrow_text,
    as_floats,
)

__all__ = ["ColumnCache", "Mask", "Positions", "take_positions"]

Positions = np.ndarray[Any, np.dtype[np.integer[Any]]]
Mask = np.ndarray[Any, np.dtype[np.bool_]]


def take_positions(positions: Positions, n: int) -> Positions | None:
    """``positions``, or None when they are every row of ``n`` in order (nothing to take)."""
    if len(positions) == n and np.array_equal(positions, np.arange(n)):
        return None
    return positions


class ColumnCache:
    """The columns of one frame (clean numbers; text clean or as given) as arrays."""

    def __init__(self, frame: pd.DataFrame, values: Mapping[str, list[Any]] | None = None) -> None:
        """``values``: columns already read as lists (the same values, not read again)."""
        self.frame = frame
        self._texts: dict[str, pa.Array] = {}
        self._values: dict[str, list[Any]] = dict(values or {})
        self._blank: dict[str, Mask] = {}

    def floats(self, name: str) -> np.ndarray[Any, np.dtype[np.float64]]:
        """A numeric column as floats, NaN where missing (made anew: a plan reads each once,
        and a million rows of every column kept would double the frames' numbers)."""
        return as_floats(self.frame[name])

    def floats_at(self, name: str, at: Positions) -> np.ndarray[Any, np.dtype[np.float64]]:
        """:meth:`floats` of the rows at ``at`` only."""
        return as_floats(self.frame[name].take(at))

    def texts(self, name: str) -> pa.Array:
        """A text column as one Arrow array (null where missing)."""
        if name not in self._texts:
            self._texts[name] = arrow_text(self.frame[name])
        return self._texts[name]

    def values(self, name: str) -> list[Any]:
        """A column's values as a Python list (the structured columns' lists and mappings)."""
        if name not in self._values:
            self._values[name] = self.frame[name].tolist()
        return self._values[name]

    def blank(self, name: str) -> Mask:
        """Where a clean column holds no value (NA, or an empty list or mapping), as
        ``compare.blank_mask`` says."""
        if name not in self._blank:
            if name in LIST_COLUMNS or name in DICT_COLUMNS:
                values = self.values(name)
                mask = np.fromiter(map(len, values), dtype=np.int64, count=len(values)) == 0
            elif name in TEXT_COLUMNS:
                mask = self.texts(name).is_null().to_numpy(zero_copy_only=False)
            else:
                mask = self.frame[name].isna().to_numpy(dtype=bool)
            self._blank[name] = np.asarray(mask, dtype=bool)
        return self._blank[name]
