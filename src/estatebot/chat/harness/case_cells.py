"""How one cell of a cases table becomes a value: text, true/false, numbers, lists of values.

Every parser takes what a spreadsheet, CSV file, DataFrame or dict gave (text, a number, a list,
NA) and returns the typed value, None (or ``()``) when the cell is blank, or raises ``ValueError``
saying what was expected; :mod:`estatebot.chat.harness.cases` turns that into a ``SheetError``
naming the row and column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

_TRUE = frozenset({"true", "t", "yes", "y", "1", "1.0", "on"})
_FALSE = frozenset({"false", "f", "no", "n", "0", "0.0", "off"})


def is_blank(value: Any) -> bool:
    """True for None, NaN/NA and text that is empty once stripped."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple):
        return len(value) == 0
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # an array-like cell: not a scalar NA
        return False


def is_true(value: Any) -> bool:
    """Whether ``value`` is a true boolean of any kind: Python's, numpy's (what iterating a
    pandas ``boolean`` column gives) or pandas' nullable one; False for false, NA and None.

    ``value is True`` holds for Python's ``True`` only: a numpy ``True`` is another object, so
    a pass read from a frame would count as a fail.
    """
    return isinstance(value, bool | np.bool_) and bool(value)


def parse_text(value: Any) -> str | None:
    """A cell as stripped text, None when blank; a whole float (Excel's ``7.0``) reads as ``7``."""
    if is_blank(value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def parse_bool(value: Any) -> bool | None:
    """``true``/``false`` and their usual spellings (any case); None when blank."""
    if is_blank(value):
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("expected true or false (also yes/no, 1/0, on/off)")


def parse_number(value: Any) -> float | None:
    """A positive finite number; thousands separators are allowed. None when blank."""
    if is_blank(value):
        return None
    if isinstance(value, bool):  # bool is an int: True must not read as 1 ms
        raise ValueError("expected a number")
    text = str(value).strip().replace(",", "").replace("_", "")
    try:
        number = float(text)
    except ValueError:
        raise ValueError("expected a number") from None
    if not math.isfinite(number) or number <= 0:
        raise ValueError("expected a positive number")
    return number


def parse_count(value: Any) -> int | None:
    """A positive whole number (``100.0`` from a spreadsheet is fine). None when blank."""
    number = parse_number(value)
    if number is None:
        return None
    if not number.is_integer():
        raise ValueError("expected a whole number")
    return int(number)


def split_values(value: Any, *, regex: bool = False) -> tuple[str, ...]:
    """Several values from one cell: a list as given, or text split on ``|``.

    ``\\|`` never splits. For regexes, a ``|`` inside ``(...)`` or ``[...]`` does not split either,
    so alternation still works; elsewhere ``\\|`` is unescaped to ``|``.
    """
    if is_blank(value):
        return ()
    if isinstance(value, list | tuple):
        items = [parse_text(v) for v in value]
        return tuple(v for v in items if v is not None)
    parts = _split_regex(str(value)) if regex else _split_plain(str(value))
    return tuple(p.strip() for p in parts if p.strip())


def _split_plain(text: str) -> list[str]:
    parts, current, i = [], [], 0
    while i < len(text):
        if text.startswith("\\|", i):
            current.append("|")
            i += 2
            continue
        if text[i] == "|":
            parts.append("".join(current))
            current = []
        else:
            current.append(text[i])
        i += 1
    parts.append("".join(current))
    return parts


def _split_regex(text: str) -> list[str]:
    # A small scanner, not a parser: enough to keep escapes, groups and classes whole.
    parts, current = [], []
    depth, in_class, i = 0, False, 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif char == "|" and depth == 0:
            parts.append("".join(current))
            current = []
            i += 1
            continue
        current.append(char)
        i += 1
    parts.append("".join(current))
    return parts


def compile_patterns(patterns: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    """Compile each pattern with ``re.IGNORECASE``; ``re.error`` tells which one is bad."""
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)
