"""A request body's JSON: decoded, or refused naming the member at fault; and the checks on its
values that no model rule makes.

:func:`decode` reads the body as UTF-8 (a byte-order mark is allowed) and parses it with the
standard :mod:`json` module. When that fails it raises :class:`UnreadableBody` naming the
top-level member whose value cannot be read, or None when the fault lies outside every member
(the body itself is not an object, a brace is missing, ...). Nesting deeper than Python's
parser goes (``[[[[...]]]]`` a hundred thousand levels) is such a fault, like a byte that is
not UTF-8, ``NaN``/``Infinity`` (not JSON) and a number of thousands of digits.

:func:`value_problems` then checks each field's value, and names the path of the first bad part
of each field (``ExtensionColumn.0.value``):

* arrays and objects nest at most :data:`MAX_DEPTH` levels (the deepest body the contract has
  nests two);
* numbers are finite: ``1e400`` parses as infinity, which SQLite's JSON cannot hold and no
  comparison or price text survives;
* whole numbers fit in 64 bits (:data:`INT64_MIN` to :data:`INT64_MAX`): SQLite's INTEGER, and
  the largest integer type a .NET service binds;
* text holds no unpaired surrogate (``"\\ud800"`` is valid JSON, but not Unicode: it can be
  neither stored nor sent back as UTF-8).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

#: The deepest nesting of arrays and objects a field's value may have.
MAX_DEPTH = 32
#: The range of a whole number in any field (a signed 64-bit integer).
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

Problem = tuple[str, str, Any]

_SPACE = re.compile(r"[ \t\n\r]*")
_SURROGATE = re.compile("[\ud800-\udfff]")
# What the body's text must hold for a value to have one of the problems: the only way to an
# unpaired surrogate in strictly decoded UTF-8 is an escape; an integer beyond 64 bits has 19
# digits or more; a float beyond the largest has an exponent of 3 digits, or 309 digits.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONG_NUMBER = re.compile(rb"[0-9]{19}|[eE][+-]?[0-9]{3}")


class UnreadableBody(Exception):
    """A body that is not JSON: ``member`` is the top-level key at fault (None: the body)."""

    def __init__(self, member: str | None, problem: str) -> None:
        super().__init__(problem)
        self.member = member
        self.problem = problem


def _reject_constant(name: str) -> Any:
    # Python's parser reads NaN and Infinity by default; JSON has neither.
    raise ValueError(f"{name} is not valid JSON (numbers must be finite)")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def decode(raw: bytes) -> Any:
    """The JSON value of a body, or :class:`UnreadableBody` naming the member at fault."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        # The text before the bad byte reads fine: the member it ends in holds the bad byte.
        before = raw[: error.start].decode("utf-8-sig")
        problem = f"not valid UTF-8 (byte {error.start} is 0x{raw[error.start]:02x})"
        raise UnreadableBody(_failing_member(before), problem) from None
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as error:
        problem = f"not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"
        raise UnreadableBody(_failing_member(text), problem) from None
    except RecursionError:
        problem = f"must not nest arrays or objects more than {MAX_DEPTH} levels deep"
        raise UnreadableBody(_failing_member(text), problem) from None
    except ValueError as error:
        # NaN or Infinity, or an integer of more digits than Python converts.
        problem = str(error).split(";")[0]
        raise UnreadableBody(_failing_member(text), problem) from None


def value_problems(fields: Mapping[str, Any], raw: bytes) -> list[Problem]:
    """The first problem of each field's value, as ``(path, message, value)``.

    ``raw`` is the body the fields come from: when its text can hold none of these problems
    (no surrogate escape, no number of 19 digits or a 3-digit exponent, few brackets), the
    values are not walked at all. That scan runs in C; the walk costs about a microsecond
    per value, a second for the longest lists a body can carry.
    """
    if not (
        _SURROGATE_ESCAPE.search(raw)
        or _LONG_NUMBER.search(raw)
        or raw.count(b"[") + raw.count(b"{") > MAX_DEPTH
    ):
        return []
    problems: list[Problem] = []
    for name, value in fields.items():
        problem = _first_problem(name, value)
        if problem is not None:
            problems.append(problem)
    return problems


def label(key: str) -> str:
    """A member name as a message shows it: as sent when short and printable, else quoted."""
    return key if len(key) <= 60 and key.isprintable() else repr(key[:60])


# --------------------------------------------------------------------------- values


# Where a part of a value sits: None for the field itself, else (where its parent sits, its key).
_Where = tuple[Any, str | int] | None


def _first_problem(name: str, value: Any) -> Problem | None:
    # Iterative, depth first, in document order: the walk itself must not recurse on hostile
    # nesting. Paths are spelled out only for a problem found: a list of a hundred thousand
    # items must not cost a hundred thousand path strings.
    stack: list[tuple[Any, int, _Where]] = [(value, 0, None)]
    while stack:
        item, depth, where = stack.pop()
        kind = type(item)
        if kind is str:
            if _SURROGATE.search(item):
                message = "must be valid Unicode text (it holds an unpaired surrogate)"
                return (_path(name, where), message, item)
        elif kind is int:
            if not INT64_MIN <= item <= INT64_MAX:
                message = f"must be a whole number from {INT64_MIN} to {INT64_MAX}"
                return (_path(name, where), message, item)
        elif kind is float:
            if not math.isfinite(item):
                message = "must be a finite number, no larger than 1.8e308"
                return (_path(name, where), message, item)
        elif kind is list or kind is dict:
            if depth >= MAX_DEPTH:
                message = f"must not nest arrays or objects more than {MAX_DEPTH} levels deep"
                return (_path(name, where), message, None)
            if kind is dict:
                if any(_SURROGATE.search(key) for key in item):
                    message = "must have member names of valid Unicode text"
                    return (_path(name, where), message, None)
                children = list(item.items())
            else:
                children = list(enumerate(item))
            stack.extend((child, depth + 1, (where, key)) for key, child in reversed(children))
    return None


def _path(name: str, where: _Where) -> str:
    """A part's path as problems name it: ``ExtensionColumn.0.value``."""
    keys: list[str] = []
    while where is not None:
        where, key = where
        keys.append(label(key) if isinstance(key, str) else str(key))
    return ".".join([name, *reversed(keys)])


# --------------------------------------------------------------------------- finding the member


def _skip_space(text: str, index: int) -> int:
    match = _SPACE.match(text, index)
    return match.end() if match is not None else index


def _failing_member(text: str) -> str | None:
    """The first top-level member of an object text whose value cannot be read, or None.

    None when every member reads and the fault is between them (or the text is no object).
    A text cut short inside a member's value fails in that member: that is how the member
    holding a bad byte is found.
    """
    index = _skip_space(text, 0)
    if not text.startswith("{", index):
        return None
    index += 1
    while True:
        index = _skip_space(text, index)
        if not text.startswith('"', index):
            return None
        try:
            key, index = _DECODER.raw_decode(text, index)
        except ValueError:
            return None
        index = _skip_space(text, index)
        if not text.startswith(":", index):
            return None
        try:
            _, index = _DECODER.raw_decode(text, _skip_space(text, index + 1))
        except (ValueError, RecursionError):
            return str(key)
        index = _skip_space(text, index)
        if not text.startswith(",", index):
            return None
        index += 1
