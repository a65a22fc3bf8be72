"""A column of raw cells held as arrays (:class:`Cells`): what kind of value each cell holds,
and the value in the array of its kind, so that a sheet is typed a column at a time with no
Python object per cell.

The columnar xlsx reader builds one from Arrow arrays; every other reader gives Python values,
which :meth:`Cells.of_values` sorts into the same arrays. Either way a cell's value comes back as
the Python value a reader would give (:meth:`Cells.value`), for the few cells an issue names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np
import pyarrow as pa

#: Cell kinds, by the Python type a reader gives (anything else is OTHER: dates, times...).
NONE, STR, INT, FLOAT, BOOL, OTHER = range(6)
KINDS: dict[type, int] = {type(None): NONE, str: STR, int: INT, float: FLOAT, bool: BOOL}
#: From this magnitude on, a float does not hold every whole number: such ints are kept as is.
EXACT_LIMIT = 2.0**53

BoolArray = np.ndarray[Any, np.dtype[np.bool_]]
IntArray = np.ndarray[Any, np.dtype[np.int64]]
FloatArray = np.ndarray[Any, np.dtype[np.float64]]
KindArray = np.ndarray[Any, np.dtype[np.int8]]
ObjectArray = np.ndarray[Any, np.dtype[np.object_]]


@dataclass(frozen=True, eq=False)
class Cells:
    """One column of raw cells.

    ``kind`` says what each cell holds (:data:`NONE`, :data:`STR`, :data:`INT`, :data:`FLOAT`,
    :data:`BOOL`, :data:`OTHER`); ``text`` holds the text of the text cells (null elsewhere),
    ``number`` the value of the numbers and booleans (1.0 and 0.0; NaN elsewhere), and ``exact``
    by position the cells no array holds as they are: whole numbers too large for a float to
    hold every one of them, and the OTHER cells.
    """

    kind: KindArray
    text: pa.Array
    number: FloatArray
    exact: Mapping[int, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.kind)

    def value(self, i: int) -> Any:
        """Cell ``i`` as the Python value a reader gives."""
        kind = int(self.kind[i])
        if kind == STR:
            return self.text[i].as_py()
        if kind == NONE:
            return None
        if kind == INT:
            exact = self.exact.get(i)
            return exact if exact is not None else int(self.number[i])
        if kind == FLOAT:
            return float(self.number[i])
        if kind == BOOL:
            return bool(self.number[i])
        return self.exact[i]

    def values(self, positions: Sequence[int] | IntArray) -> list[Any]:
        """The cells at ``positions`` as Python values."""
        return [self.value(int(p)) for p in positions]

    def take(self, where: BoolArray | IntArray) -> Cells:
        """The cells at ``where`` (a mask or positions), in order."""
        chosen = np.asarray(where)
        positions: IntArray = (
            np.flatnonzero(chosen) if chosen.dtype == bool else chosen.astype(np.int64)
        )
        exact: dict[int, Any] = {}
        if self.exact:
            # The kept cells the arrays do not hold: each under its new position.
            held = np.fromiter(self.exact, np.int64, count=len(self.exact))
            for new in np.flatnonzero(np.isin(positions, held)).tolist():
                exact[new] = self.exact[int(positions[new])]
        return Cells(self.kind[positions], self.text.take(positions), self.number[positions], exact)

    def __getitem__(self, key: int | slice) -> Any:
        """A cell's value (an int key), or the cells of a slice."""
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                return self.take(np.arange(start, stop, step))
            # A run of cells: views of the arrays, nothing copied.
            exact = {i - start: v for i, v in self.exact.items() if start <= i < stop}
            length = max(stop - start, 0)
            return Cells(
                self.kind[start:stop],
                self.text.slice(start, length),
                self.number[start:stop],
                exact,
            )
        return self.value(key if key >= 0 else len(self) + key)

    @classmethod
    def of_values(cls, values: ObjectArray | Sequence[Any]) -> Cells:
        """The cells of a reader's Python values (None for an empty cell)."""
        raw = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
        n = len(raw)
        kind = np.fromiter(map(KINDS.get, map(type, raw), repeat(OTHER)), np.int8, count=n)
        number = np.full(n, np.nan)
        exact: dict[int, Any] = {}
        strings = kind == STR
        texts = np.full(n, None, dtype=object)
        texts[strings] = raw[strings]
        for code in (FLOAT, BOOL):
            at = np.flatnonzero(kind == code)
            if len(at):
                number[at] = raw[at].astype(float)
        ints = np.flatnonzero(kind == INT)
        if len(ints):
            number[ints] = _floats(raw[ints])
            big = ints[np.abs(number[ints]) >= EXACT_LIMIT]
            exact.update(zip(big.tolist(), raw[big].tolist(), strict=True))
        others = np.flatnonzero(kind == OTHER)
        exact.update(zip(others.tolist(), raw[others].tolist(), strict=True))
        return cls(kind, pa.array(texts, type=pa.large_string()), number, exact)


def _floats(ints: ObjectArray) -> FloatArray:
    """Python ints as floats, one too large for a float infinite (then refused as a number)."""
    try:
        return ints.astype(float)
    except OverflowError:
        return np.fromiter((_float(v) for v in ints), dtype=float, count=len(ints))


def _float(value: int) -> float:
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def present_rows(columns: Sequence[Cells], n: int) -> BoolArray:
    """The rows where any of ``columns`` holds a cell."""
    present = np.zeros(n, dtype=bool)
    for column in columns:
        present |= column.kind != NONE
    return present
