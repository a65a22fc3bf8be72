"""JSON text in a cell (a list of photo URLs, the extras of ExtensionColumn) read by the json
module's compiled scanner, called once per cell without the checks :func:`json.loads` wraps it
in: the cells' text is already trimmed, so those checks come down to one, made here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_DECODER = json.JSONDecoder()
# The decoder's compiled scanner (the json module sets it on every decoder; its stubs omit it).
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]


def json_value(text: str) -> Any:
    """The value ``text`` (trimmed) holds, as :func:`json.loads` reads it.

    Raises:
        ValueError: When ``text`` is not one JSON value (``json.JSONDecodeError`` is one).
    """
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:
        raise ValueError("the text holds no JSON value") from None
    if end != len(text):
        raise ValueError("the text holds more than one JSON value")
    return value
