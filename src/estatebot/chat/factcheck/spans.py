"""The parts of a text already read, so a later reader does not read them again.

:class:`Taken` marks spans of a text and says whether a span touches a marked one. It keeps one
byte per character of the text: marking and asking cost the length of the span, not the number
of spans marked so far, so reading a long answer stays linear.
"""

from __future__ import annotations

__all__ = ["Taken"]


class Taken:
    """The marked characters of a text of ``length`` characters."""

    __slots__ = ("_marks",)

    def __init__(self, length: int) -> None:
        self._marks = bytearray(length)

    def add(self, start: int, end: int) -> None:
        """Mark ``[start, end)``."""
        end = min(end, len(self._marks))  # a same-length write: the mask never grows
        if end > start:
            self._marks[start:end] = b"\x01" * (end - start)

    def overlaps(self, start: int, end: int) -> bool:
        """Whether any character of ``[start, end)`` is marked."""
        return end > start and self._marks.find(1, start, end) != -1

    def free(self, start: int, end: int) -> bool:
        """Whether no character of ``[start, end)`` is marked."""
        return not self.overlaps(start, end)
