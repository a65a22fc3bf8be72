"""What changed inside one value: words of a long text, keys of ``ExtensionColumn``, images.

Pure functions over plan values; the HTML views (:mod:`.plan_html`) mark what they return up.
A long text is compared word by word with :mod:`difflib`, so a one-word edit in a description
of 400 words shows that word, not two walls of text.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["KeyChange", "ListDiff", "Piece", "key_diff", "list_diff", "word_diff"]

# Words and the spaces between them, both kept, so joining the pieces gives the text back.
_TOKENS = re.compile(r"\s+|[^\s]+")

PieceKind = Literal["same", "deleted", "inserted"]


@dataclass(frozen=True)
class Piece:
    """A run of a text: ``same`` on both sides, ``deleted`` from before or ``inserted`` after."""

    kind: PieceKind
    text: str


def word_diff(before: str, after: str) -> list[Piece]:
    """The pieces that turn ``before`` into ``after``, word by word (whitespace kept)."""
    old, new = _TOKENS.findall(before), _TOKENS.findall(after)
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    opcodes = matcher.get_opcodes()
    pieces: list[Piece] = []
    deleted: list[str] = []
    inserted: list[str] = []
    for n, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        same = "".join(old[i1:i2])
        # A space alone between two changes joins them: "by appointment" replaced by
        # "house Sunday" reads as one replacement, not three.
        inside = 0 < n < len(opcodes) - 1 and same.isspace()
        if tag == "equal" and not inside:
            _flush(pieces, deleted, inserted)
            pieces.append(Piece("same", same))
        elif tag == "equal":
            deleted.append(same)
            inserted.append(same)
        else:
            deleted.append("".join(old[i1:i2]))
            inserted.append("".join(new[j1:j2]))
    _flush(pieces, deleted, inserted)
    return pieces


def _flush(pieces: list[Piece], deleted: list[str], inserted: list[str]) -> None:
    """Add the pending change (what went, then what came) to ``pieces``."""
    if "".join(deleted).strip() or ("".join(deleted) and not "".join(inserted)):
        pieces.append(Piece("deleted", "".join(deleted)))
    if "".join(inserted).strip() or ("".join(inserted) and not "".join(deleted)):
        pieces.append(Piece("inserted", "".join(inserted)))
    deleted.clear()
    inserted.clear()


@dataclass(frozen=True)
class KeyChange:
    """One key of ``ExtensionColumn``: ``added``, ``removed`` or ``changed``, with its values."""

    kind: Literal["added", "removed", "changed"]
    key: str
    before: Any
    after: Any


def key_diff(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[KeyChange]:
    """The keys added, removed and changed between two mappings, in the order they appear."""
    old, new = dict(before or {}), dict(after or {})
    changes: list[KeyChange] = []
    for key, value in old.items():
        if key not in new:
            changes.append(KeyChange("removed", key, value, None))
        elif new[key] != value:
            changes.append(KeyChange("changed", key, value, new[key]))
    changes += [KeyChange("added", k, None, v) for k, v in new.items() if k not in old]
    return changes


@dataclass(frozen=True)
class ListDiff:
    """Two lists compared as sets of items (image URLs): what came, what went, how many stayed."""

    added: tuple[Any, ...]
    removed: tuple[Any, ...]
    kept: int


def list_diff(before: Sequence[Any] | None, after: Sequence[Any] | None) -> ListDiff:
    """The items of ``after`` not in ``before`` and the other way round, each in its order."""
    old, new = list(before or ()), list(after or ())
    added = tuple(item for item in new if item not in old)
    removed = tuple(item for item in old if item not in new)
    return ListDiff(added, removed, sum(1 for item in new if item in old))
