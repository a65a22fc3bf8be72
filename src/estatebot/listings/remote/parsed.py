"""What every column parser returns (:class:`Parsed`: typed values and their problems), and
the shared machinery: absent markers, the row-by-row fallback, a paused garbage collector.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd
from pandas.api.extensions import ExtensionDtype

#: Texts that mean "no value" in a numeric field (compared after trimming, case-insensitively).
ABSENT_MARKERS: frozenset[str] = frozenset({"", "null", "none", "-", "n/a", "na", "nan"})

STRING = pd.StringDtype()
INT: ExtensionDtype = pd.Int64Dtype()
FLOAT: ExtensionDtype = pd.Float64Dtype()

_T = TypeVar("_T")


@dataclass(frozen=True)
class Parsed:
    """A parsed column: typed ``values`` and a message per value that could not be parsed.

    ``problems`` is a ``string`` Series of messages indexed by the labels of the bad rows (a subset
    of ``values.index``); it is empty when every value was read.
    """

    values: pd.Series
    problems: pd.Series


def no_problems() -> pd.Series:
    return pd.Series([], dtype=STRING)


def problems_at(index: pd.Index, message: str) -> pd.Series:
    return pd.Series(message, index=index, dtype=STRING)


def concat_problems(parts: Sequence[pd.Series]) -> pd.Series:
    kept = [part for part in parts if len(part)]
    if not kept:
        return no_problems()
    combined: pd.Series = pd.concat(kept)
    return combined.sort_index().astype(STRING)


# --------------------------------------------------------------------------- JSON columns


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a bulk conversion; its state is restored after."""
    # Building a million small lists or dicts makes the cyclic collector run again and again over
    # the whole heap (the caller's records included), which costs more than the parsing itself.
    # These containers never form cycles, so pausing it is safe; its state is restored after.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Unreadable(ValueError):
    """A JSON column value that cannot be read; the message says why."""


def _is_missing(item: Any) -> bool:
    return item is None or item is pd.NA or (isinstance(item, float) and item != item)


def convert_one(
    item: Any,
    from_text: Callable[[str], _T],
    from_object: Callable[[Any], _T],
    empty: Callable[[], _T],
) -> tuple[_T, str | None]:
    """One JSON column value converted, and why it could not be (None when it could)."""
    try:
        if isinstance(item, str):
            text = item.strip()
            return (from_text(text) if text else empty()), None
        if _is_missing(item):
            return empty(), None
        return from_object(item), None
    except Unreadable as error:
        return empty(), str(error)


def convert_rows(
    raw: pd.Series,
    from_text: Callable[[str], _T],
    from_object: Callable[[Any], _T],
    empty: Callable[[], _T],
    *,
    reuse: Callable[[_T], _T] | None = None,
) -> Parsed:
    """Convert a JSON column value by value (each value becomes a Python object anyway).

    With ``reuse``, each distinct text is parsed once and later rows get ``reuse(first)`` (a
    copy: rows must not share one object that a single edit would change for all).
    """
    converted: list[_T] = []
    bad: dict[int, str] = {}
    seen: dict[str, tuple[_T, str | None]] = {}
    with gc_paused():
        for position, item in enumerate(raw.to_numpy(object)):
            if reuse is not None and isinstance(item, str):
                known = seen.get(item)
                if known is None:
                    value, error = seen[item] = convert_one(item, from_text, from_object, empty)
                else:
                    value, error = reuse(known[0]), known[1]
            else:
                value, error = convert_one(item, from_text, from_object, empty)
            converted.append(value)
            if error is not None:
                bad[position] = error
    problems = pd.Series(list(bad.values()), index=raw.index[list(bad)], dtype=STRING)
    return Parsed(pd.Series(converted, index=raw.index, dtype=object), problems)
