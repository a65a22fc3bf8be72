"""Values quoted in error messages: recognisable, never longer than a line.

An error message names the value it refuses, but the value is whatever a client sent: a
megabyte of text, a list of a hundred thousand items, a string with an unpaired surrogate.
:func:`quoted` shortens it (the standard library's :mod:`reprlib`) and writes it in ``repr``
form, where control characters and unpaired surrogates are escaped, so a message stays short
and can always be encoded as UTF-8.
"""

from __future__ import annotations

import reprlib
from typing import Any

_SHORT = reprlib.Repr()
_SHORT.maxstring = 60
_SHORT.maxother = 60
_SHORT.maxlong = 40
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 4
_SHORT.maxlevel = 2


def quoted(value: Any) -> str:
    """``repr(value)``, shortened with ``...`` when long (strings to about 60 characters)."""
    return _SHORT.repr(value)
