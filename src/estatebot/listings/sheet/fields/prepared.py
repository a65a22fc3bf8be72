"""The rules every cell follows before it is typed (:func:`prepare`), a whole column at a time:
text is trimmed, non-breaking and other odd spaces become plain spaces, zero-width characters go,
the blank tokens (empty, ``#N/A``, ``N/A``, ``-``) mean "no value", and the clear token
(``#CLEAR`` by default) means "empty this field". A float that is NaN holds no value either.

The text is worked on as Arrow strings. Most cells need none of it: a column whose text is plain
ASCII with nothing to trim (checked by Arrow's predicates) is kept as it is, not copied.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from estatebot.listings.sheet.fields.cells import (
    FLOAT,
    NONE,
    STR,
    BoolArray,
    Cells,
    IntArray,
    KindArray,
    ObjectArray,
)

#: Cell texts that mean "no value" (compared after trimming, case-insensitively).
BLANK_TOKENS: frozenset[str] = frozenset({"", "#N/A", "N/A", "-"})

STRING = pd.StringDtype("pyarrow")
# Real characters, not escapes: these patterns also run on pyarrow's regex engine (RE2).
_ODD_SPACES = "[\u00a0\u2007\u202f\u2000-\u200a\u3000\t\r\n]+"
_ZERO_WIDTH = "[\u200b\ufeff]"


@dataclass(frozen=True)
class Column:
    """One source column after the rules every cell follows, ready to be typed.

    ``cells`` are the raw cells; ``kind`` their kind once blank cells are known (NONE for a
    blank token, the clear token or NaN), ``text`` the trimmed text of the text cells that
    carry a value (NA elsewhere), ``cleared`` where the cell holds the clear token.
    """

    cells: Cells
    kind: KindArray
    text: pd.Series
    cleared: BoolArray

    @property
    def present(self) -> BoolArray:
        """The cell holds a value (not empty, not a blank token, not the clear token)."""
        return np.asarray(self.kind != NONE)

    def __len__(self) -> int:
        return len(self.kind)

    def take(self, where: BoolArray | IntArray) -> Column:
        """The column's cells at ``where`` (a mask or positions), in order."""
        positions = np.flatnonzero(where) if np.asarray(where).dtype == bool else where
        text = self.text.iloc[positions].reset_index(drop=True)
        return Column(
            self.cells.take(positions), self.kind[positions], text, self.cleared[positions]
        )


def prepare(raw: Cells | ObjectArray, clear_token: str | None = "#CLEAR") -> Column:
    """Apply the rules every cell follows: trim text, recognize blanks and the clear token."""
    cells = raw if isinstance(raw, Cells) else Cells.of_values(raw)
    kind = cells.kind.copy()
    floats = kind == FLOAT
    if floats.any():
        kind[floats & np.isnan(cells.number)] = NONE
    cleared = np.zeros(len(cells), dtype=bool)
    text = text_series(cells.text)
    strings = kind == STR
    if not strings.any():
        return Column(cells, kind, text, cleared)
    if needs_cleaning(cells.text):
        text = clean_text(text)
    tokens = [*BLANK_TOKENS, *([clear_token.strip().upper()] if clear_token else [])]
    # Upper case never shortens a text, so only texts as short as a token can be one.
    lengths = text.str.len().to_numpy(dtype=np.int64, na_value=-1)
    short = np.flatnonzero(strings & (lengths >= 0) & (lengths <= max(map(len, tokens))))
    if len(short):
        upper = text.iloc[short].str.upper()
        blank = upper.isin(BLANK_TOKENS).to_numpy(dtype=bool)
        clear = np.zeros(len(short), dtype=bool)
        if clear_token:
            clear = (upper == clear_token.strip().upper()).to_numpy(dtype=bool)
        cleared[short[clear]] = True
        gone = short[blank | clear]
        if len(gone):
            kind[gone] = NONE
            mask = np.zeros(len(cells), dtype=bool)
            mask[gone] = True
            text = text.mask(mask)
    return Column(cells, kind, text, cleared)


def text_series(text: pa.Array | pa.ChunkedArray) -> pd.Series:
    """Arrow text as a pandas Series of Arrow strings, without copying it."""
    chunked = text if isinstance(text, pa.ChunkedArray) else pa.chunked_array([text])
    return pd.Series(pd.arrays.ArrowStringArray(chunked))


def arrow_of(text: pd.Series) -> pa.Array:
    """The Arrow array of a Series of Arrow strings (one chunk)."""
    arrow = pa.array(text.array)
    return arrow.combine_chunks() if isinstance(arrow, pa.ChunkedArray) else arrow


def needs_cleaning(text: pa.Array | pa.ChunkedArray) -> bool:
    """Whether some text could change under :func:`clean_text`: a character that is not
    printable ASCII, or a space at either end of a text (Arrow's predicates, a flag per text:
    nothing the size of the text itself is made)."""
    if text.null_count == len(text):
        return False
    if not pc.all(pc.ascii_is_printable(text)).as_py():
        return True
    return bool(
        pc.any(pc.starts_with(text, " ")).as_py() or pc.any(pc.ends_with(text, " ")).as_py()
    )


def clean_text(text: pd.Series) -> pd.Series:
    """Text with odd spaces made plain, zero-width characters dropped, and ends trimmed."""
    return (
        text.str.replace(_ODD_SPACES, " ", regex=True)
        .str.replace(_ZERO_WIDTH, "", regex=True)
        .str.strip()
    )
