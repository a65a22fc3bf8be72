"""Text that is always whole: UTF-16 surrogates joined into the characters they stand for.

A .NET server escapes a character outside the Basic Multilingual Plane (an emoji) as two JSON
escapes, ``\\ud83c\\udfe1``, and a stream may cut it between two fragments. Each fragment then
decodes to half a character (a lone surrogate), which no encoder takes: ``print`` raises
``UnicodeEncodeError``. :class:`SurrogateJoiner` holds a high surrogate left at the end of a
fragment back until the next one brings its low half; :func:`whole_text` joins the pairs inside
one text and replaces any half left alone with U+FFFD.
"""

from __future__ import annotations

import re

__all__ = ["REPLACEMENT", "SurrogateJoiner", "whole_text"]

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _is_high(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


def whole_text(text: str) -> str:
    """``text`` with each surrogate pair joined into its character and every lone surrogate
    replaced by U+FFFD: text that encodes as UTF-8."""
    if not _SURROGATE.search(text):
        return text
    # UTF-16 is where surrogates mean something: through it, a pair becomes its character and
    # a lone half is undecodable, so "replace" turns it into U+FFFD.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class SurrogateJoiner:
    """Joins the texts of consecutive fragments so that none hands out half a character.

    :meth:`push` each fragment's text and hand out what it returns; :meth:`end` gives what is
    left at the end (U+FFFD for a high surrogate whose low half never came). The texts returned
    joined are the fragments joined, as :func:`whole_text` reads them.
    """

    def __init__(self) -> None:
        self._held = ""

    def push(self, text: str) -> str:
        """The whole text of this fragment (with a half held from the one before); a high
        surrogate at its end is held back for the next fragment."""
        text, self._held = self._held + text, ""
        if text and _is_high(text[-1]):
            text, self._held = text[:-1], text[-1]
        return whole_text(text)

    def end(self) -> str:
        """What was held back at the end: U+FFFD for a lone high surrogate, else nothing."""
        held, self._held = self._held, ""
        return whole_text(held)
