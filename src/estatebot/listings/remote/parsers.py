"""Column parsers: one raw column of List records in, one typed column and its problems out.

Every parser works on a whole :class:`pandas.Series` at once (string methods, ``astype``,
``factorize``) so a million values cost a handful of vectorized passes, not a million Python calls.
Only the two JSON columns (``Images``, ``ExtensionColumn``) build one Python object per row, since
their values *are* Python objects (``list[str]`` and ``dict[str, str]``).

A parser never raises on bad data and never guesses: a value it cannot read becomes NA (an empty
list or dict for the JSON columns) and gets a message in :attr:`Parsed.problems`. Absent markers
(``""``, ``"null"``, ``"None"``, ``"-"``, ``"N/A"``, ``"NA"``) are NA without a problem.

The parsers keep the index of the raw column, and :attr:`Parsed.problems` is indexed by the same
labels, so callers can join problems back to their rows.

The number parsers are in :mod:`.numbers`, the structured ones in :mod:`.structured`, the shared
:class:`Parsed` result in :mod:`.parsed`; every parser is importable from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from estatebot.listings.remote.arrow import blank_to_na, string_values
from estatebot.listings.remote.numbers import parse_numbers
from estatebot.listings.remote.parsed import (
    ABSENT_MARKERS,
    STRING,
    Parsed,
    no_problems,
    problems_at,
)
from estatebot.listings.remote.structured import parse_extensions, parse_images

__all__ = [
    "ABSENT_MARKERS",
    "Parsed",
    "fold",
    "parse_enum",
    "parse_extensions",
    "parse_images",
    "parse_numbers",
    "parse_text",
    "to_text",
]


def to_text(raw: pd.Series) -> pd.Series:
    """``raw`` as a trimmed ``string`` Series; NA for missing and empty values.

    Trimming covers every Unicode space, non-breaking ones included. Non-text values are written
    with ``str`` (``78701`` becomes ``"78701"``).
    """
    return blank_to_na(string_values(raw).str.strip())


def parse_text(raw: pd.Series) -> Parsed:
    """A free-text column: trimmed, empty → NA. Never has problems."""
    return Parsed(to_text(raw), no_problems())


# --------------------------------------------------------------------------- enums


def fold(text: str) -> str:
    """``text`` reduced for loose matching: lower case, letters and digits only."""
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def parse_enum(
    raw: pd.Series,
    allowed: Sequence[str],
    aliases: Mapping[str, str] | None = None,
) -> Parsed:
    """A column of enum values, matched loosely (case, spaces and punctuation ignored).

    ``aliases`` maps other spellings to allowed values. Empty → NA; unknown → NA with a problem.
    """
    lookup = {fold(value): value for value in allowed}
    lookup.update({fold(alias): value for alias, value in (aliases or {}).items()})
    # Enum columns hold few distinct values: match each distinct value once, then spread the
    # matches by code. Factorizing the raw values directly spares a text conversion per row.
    codes, uniques = pd.factorize(raw)
    texts = [str(unique).strip() for unique in uniques]
    matched = [lookup.get(fold(text)) for text in texts]
    values = pd.Series(
        pd.array([*matched, None], dtype=STRING).take(np.where(codes < 0, len(matched), codes)),
        index=raw.index,
    )
    unknown_codes = [code for code, text in enumerate(texts) if text and matched[code] is None]
    unknown = np.isin(codes, unknown_codes)
    expected = ", ".join(allowed)
    return Parsed(
        values, problems_at(raw.index[unknown], f"unknown value; expected one of {expected}")
    )
