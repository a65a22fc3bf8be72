"""Reading a JSON file that may be damaged: the value, or one error naming the file and what
is wrong with it.

A plan, a run's record or a backup can be cut short by a full disk, edited by hand or replaced
by something else. :func:`read_json_file` turns each way a file can fail to be read into a
:class:`JsonFileError` that names the file and the problem (missing, not text, not JSON with its
line and column, nested too deep), never a bare ``JSONDecodeError`` without a file name.

Nesting is counted before the text is parsed (:func:`check_depth`): Python's parser recurses
once per level, and a file of a hundred thousand ``[`` would stop it with a ``RecursionError``
that says nothing of the file. What estatebot writes nests a few levels; :data:`MAX_DEPTH` is
far above that and far below where the parser fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from os import PathLike
from pathlib import Path
from typing import Any

from estatebot.errors import PlanError

__all__ = ["MAX_DEPTH", "JsonFileError", "check_depth", "read_json_file"]

#: The deepest nesting of arrays and objects a file estatebot reads may have. A plan nests six
#: levels (plan, list of operations, operation, its changes, a change, a value).
MAX_DEPTH = 64

# A JSON string, escapes included (the "unrolled loop" form, which the regex engine runs without
# backtracking): brackets inside a string are text, not nesting.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


class JsonFileError(PlanError):
    """A file that cannot be read as what it should hold.

    ``path`` is the file, ``problem`` what is wrong with it in a few words (``"the file is
    missing"``, ``"not JSON (line 35, column 5: Unterminated string starting at)"``), so a
    caller can say what the file is for in its own terms.
    """

    def __init__(self, path: Path, problem: str, *, what: str | None = None) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path} is not {what}: {problem}" if what else f"{path}: {problem}")


def check_depth(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The nesting of ``text`` when it is deeper than ``limit`` levels (the depth reached when
    the count passed it), else None. Counted without recursing, so any text is safe to give."""
    # Few brackets in all cannot nest deeper than their number: the common case, counted in C.
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub('""', text)):
        if match.group() in "[{":
            depth += 1
            if depth > limit:
                return depth
        else:
            depth = max(depth - 1, 0)
    return None


def read_json_file(
    path: str | PathLike[str],
    *,
    what: str | None = None,
    limit: int = MAX_DEPTH,
    parse_constant: Callable[[str], Any] | None = None,
) -> Any:
    """The JSON value in ``path``; :class:`JsonFileError` naming the file when it holds none.

    ``what`` names what the file should be (``"a saved plan"``) in the error's message.
    ``parse_constant`` is :func:`json.loads`'s (to refuse ``NaN`` and ``Infinity``); what it
    raises is passed on.
    """
    target = Path(path)
    try:
        raw = target.read_bytes()
    except FileNotFoundError:
        raise JsonFileError(target, "the file is missing", what=what) from None
    except IsADirectoryError:
        raise JsonFileError(target, "a folder, not a file", what=what) from None
    except OSError as error:
        raise JsonFileError(target, f"cannot be read ({error.strerror})", what=what) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        problem = f"not UTF-8 text (byte {error.start} is 0x{raw[error.start]:02x})"
        raise JsonFileError(target, problem, what=what) from None
    if not text.strip():
        raise JsonFileError(target, "empty", what=what)
    depth = check_depth(text, limit)
    if depth is not None:
        problem = f"arrays or objects nested more than {limit} levels deep"
        raise JsonFileError(target, problem, what=what)
    try:
        return json.loads(text, parse_constant=parse_constant)
    except json.JSONDecodeError as error:
        problem = f"not JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        raise JsonFileError(target, problem, what=what) from None
