"""How spreadsheet cells become typed values, one whole column at a time.

Every cell first follows the same rules (:func:`.prepared.prepare`): text is trimmed, non-breaking
and other odd spaces become plain spaces, the blank tokens (empty, ``#N/A``, ``N/A``, ``-``) mean
"no value", and the clear token (``#CLEAR`` by default) means "empty this field". Then the column
is typed by the kind of the field it feeds:

* ``text``: numbers read as Excel shows them (``3.0`` → ``"3"``), dates as ISO text.
* ``id`` (MLS numbers and other keys): text stays exactly as written, leading zeros included. A
  number is accepted only as a whole number of at most 15 digits (Excel keeps 15 significant
  digits: a longer number has lost digits). A decimal number, or text in scientific notation
  (``1.23E+11``) or ending in ``.0``, is what Excel does to a long ID: the row is rejected,
  since the true ID cannot be recovered.
* ``zip``: text; a whole number reads as its digits (the reader already applied a ``00000``
  format, so a ZIP that still has 3 or 4 digits gets a warning: a leading zero may be lost).
* ``number`` and ``int``: ``3``, ``3.0`` and ``"3"`` are the same number; text may carry a
  currency sign and thousands separators in groups of three (``$1,250,000``, ``1 250 000``);
  ``int`` rejects fractions. Infinity, NaN and numbers too large to hold (``inf``, ``1e400``, a
  numeric cell holding infinity) are errors, and so is misplaced grouping (``$1,2,3``, ``1,5``:
  a decimal comma is not guessed).
* ``bool``: yes/no spellings.

Each typing function returns the values (a Series on the column's positions) and the problems
found (a mask of bad cells, a message and a severity), so the caller can report every bad cell
with its row, column and value without a per-cell loop. The cells are arrays by kind
(:class:`.cells.Cells`): text stays Arrow text, numbers a float array; only the cells an issue
names, and the rare ones no array holds (a date in a text column), become Python values.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from estatebot.listings.sheet.fields.cells import (
    BOOL,
    EXACT_LIMIT,
    FLOAT,
    INT,
    NONE,
    OTHER,
    STR,
    BoolArray,
    Cells,
    IntArray,
    ObjectArray,
)
from estatebot.listings.sheet.fields.mls_values import BOOLEANS, normalize_value
from estatebot.listings.sheet.fields.prepared import STRING, Column, arrow_of, text_series
from estatebot.listings.sheet.fields.sources import Kind

__all__ = [
    "MAX_ID_DIGITS",
    "MAX_WHOLE",
    "TYPERS",
    "BoolArray",
    "IntArray",
    "ObjectArray",
    "Problem",
    "Severity",
    "as_bool",
    "as_id",
    "as_int",
    "as_number",
    "as_text",
    "as_zip",
    "objects",
    "shown_texts",
    "to_int",
    "typed",
    "value_text",
    "with_texts",
]

#: Excel keeps 15 significant digits of a number; a longer numeric ID has lost some.
MAX_ID_DIGITS = 15

_STRING = STRING
_SCIENTIFIC = r"^[+-]?\d+(?:\.\d*)?[eE][+-]?\d+$"
_FLOAT_TEXT = r"^\d+\.0+$"
_CURRENCY = r"[$€£¥]|^USD|^US\$"
# A number as text once the currency is gone: digits grouped by three with commas or spaces (one
# kind per number), or not grouped; an optional fraction and exponent.
_NUMBER_TEXT = r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?: \d{3})+|\d*)(?:\.\d*)?(?:[eE][+-]?\d+)?"
_GROUPING = r"[, ]"
#: The largest whole number a float (and so a JSON number) holds exactly.
MAX_WHOLE = 2**53 - 1

Severity = Literal["error", "warning"]
_NONE, _STR, _INT, _FLOAT, _BOOL, _OTHER = NONE, STR, INT, FLOAT, BOOL, OTHER


@dataclass(frozen=True)
class Problem:
    """Bad cells of one column: which (a mask over the column), why, and how bad."""

    mask: BoolArray
    message: str
    severity: Severity = "error"


def as_text(column: Column) -> tuple[pd.Series, list[Problem]]:
    """Text values: numbers as Excel shows them, dates as ISO text."""
    others = np.flatnonzero((column.kind != _NONE) & (column.kind != _STR))
    if not len(others):
        return column.text, []
    return with_texts(column.text, others, shown_texts(column.cells, others)), []


def shown_texts(cells: Cells, positions: IntArray) -> list[str]:
    """The cells at ``positions`` (none empty, none text) as a spreadsheet shows them."""
    kind, number = cells.kind[positions], cells.number[positions]
    plain = ((kind == _INT) & (np.abs(number) < EXACT_LIMIT)) | (kind == _BOOL)
    texts: list[str] = [""] * len(positions)
    if plain.any():
        # Whole numbers a float holds and booleans, without a Python value each.
        ints = pa.array(number[plain].astype(np.int64)).cast(pa.string()).to_pylist()
        bools = np.where(number[plain] != 0, "TRUE", "FALSE").tolist()
        shown = np.where(kind[plain] == _BOOL, bools, ints).tolist()
        for at, text in zip(np.flatnonzero(plain).tolist(), shown, strict=True):
            texts[at] = text
    for at in np.flatnonzero(~plain).tolist():
        texts[at] = value_text(cells.value(int(positions[at])))
    return texts


def with_texts(text: pd.Series, positions: IntArray, values: list[str]) -> pd.Series:
    """``text`` with the texts at ``positions`` (in order) replaced by ``values``."""
    if not len(positions):
        return text
    mask = np.zeros(len(text), dtype=bool)
    mask[positions] = True
    arrow = arrow_of(text)
    replaced = pc.replace_with_mask(arrow, pa.array(mask), pa.array(values, type=arrow.type))
    return text_series(replaced)


def as_id(column: Column) -> tuple[pd.Series, list[Problem]]:
    """Identifier text (MLS numbers, keys): exact text, or a whole number of ≤ 15 digits."""
    out = column.text
    n = len(column)
    problems: list[Problem] = []
    kind = column.kind
    strings = kind == _STR
    if strings.any():
        mangled = (out.str.match(_SCIENTIFIC) | out.str.match(_FLOAT_TEXT)).to_numpy(
            dtype=bool, na_value=False
        )
        if mangled.any():
            problems.append(Problem(mangled, _MANGLED_ID))
            out = out.mask(mangled)
    ints = np.flatnonzero(kind == _INT)
    if len(ints):
        # More than 15 digits is 10**15 or more: exact for a float up to 2**53, and the larger
        # whole numbers are all long.
        long = np.abs(column.cells.number[ints]) >= 10.0**MAX_ID_DIGITS
        out = with_texts(out, ints[~long], shown_texts(column.cells, ints[~long]))
        problems.append(Problem(_mask(n, ints[long]), _LONG_ID))
    problems.append(Problem(np.asarray(kind == _FLOAT), _MANGLED_ID))
    problems.append(Problem(np.asarray((kind == _BOOL) | (kind == _OTHER)), "is not an ID"))
    return out, [p for p in problems if p.mask.any()]


_MANGLED_ID = (
    "looks like an ID that Excel turned into a number (a decimal or scientific notation such "
    "as 1.23E+11): its true digits are lost; format the column as text and export again"
)
_LONG_ID = (
    f"is an ID stored as a number with more than {MAX_ID_DIGITS} digits: Excel keeps only "
    f"{MAX_ID_DIGITS}, so its last digits cannot be trusted; format the column as text"
)


def as_zip(column: Column) -> tuple[pd.Series, list[Problem]]:
    """Postal codes as text; a short all-digit ZIP gets a warning (a lost leading zero)."""
    out = column.text
    n = len(column)
    problems: list[Problem] = []
    numbers = np.flatnonzero((column.kind == _INT) | (column.kind == _FLOAT))
    if len(numbers):
        number = column.cells.number[numbers]
        whole = np.isfinite(number) & (number == np.floor(number))
        out = with_texts(out, numbers[whole], _whole_texts(column.cells, numbers[whole]))
        problems.append(Problem(_mask(n, numbers[~whole]), "is not a postal code"))
    others = np.asarray((column.kind == _BOOL) | (column.kind == _OTHER))
    problems.append(Problem(others, "is not a postal code"))
    short = out.str.fullmatch(r"\d{3,4}").to_numpy(dtype=bool, na_value=False)
    problems.append(
        Problem(
            short,
            "has fewer than 5 digits: a leading zero may have been lost (format the column "
            "as text or 00000)",
            "warning",
        )
    )
    return out, [p for p in problems if p.mask.any()]


def _whole_texts(cells: Cells, positions: IntArray) -> list[str]:
    """Whole numbers as their digits (a whole float too, unlike :func:`value_text`)."""
    number = cells.number[positions]
    fits = np.abs(number) < 2.0**63
    digits = pa.array(np.where(fits, number, 0).astype(np.int64)).cast(pa.string())
    texts: list[str] = digits.to_pylist()
    for at in np.flatnonzero(~fits).tolist():
        value = cells.value(int(positions[at]))
        texts[at] = str(value if isinstance(value, int) else int(value))
    for at in np.flatnonzero(fits).tolist():
        exact = cells.exact.get(int(positions[at]))
        if exact is not None:
            texts[at] = str(exact)
    return texts


_NOT_FINITE = "is not a finite number (infinity, NaN or too large to hold)"
_MISGROUPED = (
    "has misplaced thousands separators: write 1,250,000 or 1250000 (a decimal comma is not read)"
)


def as_number(column: Column) -> tuple[pd.Series, list[Problem]]:
    """Numbers: ``3``, ``3.0`` and ``"3"`` alike; text may carry ``$`` and grouped thousands.

    Only finite numbers are read: infinity (a cell or text such as ``inf`` or ``1e400``) would
    make every figure computed from it infinite. Grouping must be by three: ``1,2,3`` is not
    123, and ``1,5`` is not fifteen.
    """
    n = len(column)
    kind = column.kind
    numbers = (kind == _INT) | (kind == _FLOAT)
    # A whole number too large for a float is infinite here, then refused as not finite.
    values = np.where(numbers, column.cells.number, np.nan)
    problems: list[Problem] = []
    misgrouped = np.zeros(n, dtype=bool)
    strings = np.flatnonzero(kind == _STR)
    if len(strings):
        text = column.text if len(strings) == n else column.text.iloc[strings]
        text = text.str.replace(_CURRENCY, "", regex=True).str.strip()
        well_formed = text.str.fullmatch(_NUMBER_TEXT).to_numpy(dtype=bool, na_value=False)
        plain = text.str.replace(_GROUPING, "", regex=True)
        parsed = pd.to_numeric(plain, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        grouped = text.str.contains(_GROUPING, regex=True).to_numpy(dtype=bool, na_value=False)
        misgrouped[strings[~well_formed & grouped & np.isfinite(parsed)]] = True
        # Text pandas reads but the pattern refuses ("inf", "1_000", "Infinity") is no number.
        parsed[~well_formed & ~np.isinf(parsed)] = np.nan
        values[strings] = parsed
        unread = np.isnan(parsed) & ~misgrouped[strings]
        problems.append(Problem(_mask(n, strings[unread]), "is not a number"))
    problems.append(Problem(misgrouped, _MISGROUPED))
    values[misgrouped] = np.nan
    infinite = np.isinf(values)
    problems.append(Problem(infinite, _NOT_FINITE))
    values[infinite] = np.nan
    others = np.flatnonzero((kind == _BOOL) | (kind == _OTHER))
    problems.append(Problem(_mask(n, others), "is not a number"))
    out = pd.Series(values, dtype="Float64")
    return out, [p for p in problems if p.mask.any()]


def as_int(column: Column) -> tuple[pd.Series, list[Problem]]:
    """Whole numbers (counts, years): like :func:`as_number`, fractions rejected.

    A whole number must also be one a float holds exactly (at most 2**53 - 1): larger ones
    would be rounded, or wrap around when stored as a 64-bit integer.
    """
    numbers, problems = as_number(column)
    values = numbers.to_numpy(dtype=float, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        fraction = ~np.isnan(values) & (np.mod(values, 1) != 0)
        huge = ~fraction & (np.abs(values) > MAX_WHOLE)
    if fraction.any():
        problems.append(Problem(fraction, "is not a whole number"))
        values[fraction] = np.nan
    if huge.any():
        problems.append(Problem(huge, f"is too large for a whole number (over {MAX_WHOLE:,})"))
        values[huge] = np.nan
    return to_int(values), problems


def as_bool(column: Column) -> tuple[pd.Series, list[Problem]]:
    """Yes/no values: TRUE/FALSE, Yes/No, Y/N, 1/0."""
    table = {normalize_value(k): v for k, v in BOOLEANS.items()}
    present = np.flatnonzero(column.kind != _NONE)
    parsed = [
        v if isinstance(v, bool) else table.get(normalize_value(value_text(v)))
        for v in column.cells.values(present)
    ]
    values = np.full(len(column), None, dtype=object)
    values[present] = parsed
    unknown = present[np.array([p is None for p in parsed], dtype=bool)]
    problems = [Problem(_mask(len(column), unknown), "is not yes or no")]
    return pd.Series(values, dtype="boolean"), [p for p in problems if p.mask.any()]


#: The typing function of each cell kind.
TYPERS = {
    "text": as_text,
    "id": as_id,
    "zip": as_zip,
    "number": as_number,
    "int": as_int,
    "bool": as_bool,
}


def typed(column: Column, kind: Kind) -> tuple[pd.Series, list[Problem]]:
    """``column`` typed as ``kind``."""
    return TYPERS[kind](column)


def to_int(values: np.ndarray[Any, np.dtype[np.float64]]) -> pd.Series:
    """Whole floats (NaN for missing) as a nullable Int64 Series."""
    mask = np.isnan(values)
    ints = np.where(mask, 0, values).astype(np.int64)
    return pd.Series(pd.arrays.IntegerArray(ints, mask))


def objects(series: pd.Series) -> ObjectArray:
    """A Series' values as a plain object array, None for every missing value."""
    values: ObjectArray = np.array(series.astype(object).tolist(), dtype=object)
    if len(values):
        values[series.isna().to_numpy(dtype=bool)] = None
    return values


def value_text(value: Any) -> str:
    """One cell value as text, the way a spreadsheet shows it."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(value)
    if isinstance(value, datetime):
        if value.time() == time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    return str(value)


def _mask(n: int, positions: np.ndarray[Any, np.dtype[np.int64]]) -> BoolArray:
    mask = np.zeros(n, dtype=bool)
    mask[positions] = True
    return mask
