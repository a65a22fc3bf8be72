"""An answer's text made plain for reading, with the way back to the text as written.

Models and the editors people paste from write ``＄597,800`` (full-width), ``$`` then a
zero-width space then ``298,900``, a price after a no-break or thin space. :func:`fold` gives the
text the readers see:

* invisible characters are dropped: every format character (Unicode category Cf: zero-width
  space, joiner and non-joiner, word joiner, byte order mark, soft hyphen, direction marks) and
  the combining grapheme joiner;
* every space (category Zs: no-break, narrow no-break, thin, ideographic...) becomes ``" "``;
* a character whose NFKC form is one character becomes it (``＄`` → ``$``, ``５`` → ``5``,
  ``，`` → ``,``, ``²`` → ``2``). Forms longer than one character (``½`` → ``1⁄2``) are kept
  as written: character by character NFKC never joins or splits what the readers match.

Line breaks are kept, so the folded text has the same lines. :meth:`Folded.span` maps a span of
the folded text back to the answer, so every claim points into the text as written.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Folded", "fold"]

_NOT_ASCII = re.compile(r"[^\x00-\x7f]")
#: Invisible characters that are not format characters.
_ALSO_INVISIBLE = frozenset({"\u034f"})


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    """What one (non-ASCII) character becomes: ``""`` (dropped), ``" "`` or one character."""
    category = unicodedata.category(char)
    if category == "Cf" or char in _ALSO_INVISIBLE:
        return ""
    if category == "Zs":
        return " "
    normal = unicodedata.normalize("NFKC", char)
    return normal if len(normal) == 1 else char


@dataclass(frozen=True)
class Folded:
    """A text as read (``text``) and where each of its characters was in the text as written
    (``origin``; None when nothing changed)."""

    text: str
    origin: tuple[int, ...] | None = None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the text as written that ``[start, end)`` of the folded text came from
        (dropped characters inside the span are in it, those at its edges are not)."""
        if self.origin is None:
            return start, end
        if end <= start:
            if start < len(self.origin):
                spot = self.origin[start]
            else:
                spot = self.origin[-1] + 1 if self.origin else 0
            return spot, spot
        return self.origin[start], self.origin[end - 1] + 1


def fold(text: str) -> Folded:
    """``text`` made plain for reading (see the module docstring)."""
    if text.isascii():
        return Folded(text)
    pieces: list[str] = []
    origin: list[int] = []
    done = 0
    changed = False
    for match in _NOT_ASCII.finditer(text):
        at = match.start()
        # The ASCII run before this character stays as it is.
        pieces.append(text[done:at])
        origin.extend(range(done, at))
        char = text[at]
        folded = _fold_char(char)
        if folded:
            pieces.append(folded)
            origin.append(at)
        changed = changed or folded != char
        done = at + 1
    pieces.append(text[done:])
    origin.extend(range(done, len(text)))
    if not changed:
        return Folded(text)
    return Folded("".join(pieces), tuple(origin))
