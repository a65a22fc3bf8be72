"""Number columns of List records: plain digits fast (pyarrow's cast where it holds the
text), decorated prices and areas (currency, separators, units) the careful way.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionDtype
from pandas.api.types import infer_dtype, is_bool_dtype, is_numeric_dtype

from estatebot.listings.remote.arrow import (
    arrow_chunks,
    arrow_module,
    arrow_strings,
    blank_to_na,
    pyarrow_compute,
    string_values,
)
from estatebot.listings.remote.parsed import (
    ABSENT_MARKERS,
    FLOAT,
    INT,
    Parsed,
    concat_problems,
    no_problems,
    problems_at,
)

# Plain decimal text, as the emulator writes numbers (and as ``repr`` writes floats).
_PLAIN_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_WHOLE_NUMBER = re.compile(r"[+-]?\d+(?:\.0*)?")
_CURRENCY = r"(?:[a-z]{0,3}[$€£¥₹]|usd|eur|gbp|cad|aud)"
_UNIT = (
    r"(?:sq\.?\s*(?:ft|feet|foot|m|meters?|metres?)\.?|square\s+(?:feet|foot|meters?|metres?)"
    r"|sqft|sqm|sf|ft²|ft2|m²|m2|/\s*mo(?:nth)?\.?)"
)
# A number dressed up for people: "$1,234.00", "US$ 950", "2,500 sqft", "120 m²", "€ 99".
_DECORATED = re.compile(
    rf"(?i)^{_CURRENCY}?\s*(?P<number>[+-]?[\d.,]+)\s*{_CURRENCY}?\s*{_UNIT}?$",
)
# Commas are only thousands separators in groups of three ("1,5" is not fifteen).
_GROUPED = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
# Integers beyond this many digits may not fit in Int64.
_MAX_INT_DIGITS = 18
# Floats beyond 2**53 are not exact integers any more.
_MAX_EXACT_FLOAT_INT = 2.0**53


# --------------------------------------------------------------------------- numbers


def parse_numbers(raw: pd.Series, *, integer: bool = False) -> Parsed:
    """A numeric column as ``Float64`` (or ``Int64`` with ``integer=True``).

    Accepts numbers already numeric, plain decimal text, and text dressed for people: currency
    symbols or codes, thousands separators, a unit suffix (``2,500 sqft``), surrounding spaces.
    Absent markers are NA. Anything else is NA with a problem, and so is a non-integral value in
    an integer column (``"2.5"`` is never rounded; ``"3.0"`` is 3) and a non-finite value.
    """
    dtype = INT if integer else FLOAT
    if is_bool_dtype(raw.dtype):
        return _reject_present(raw, dtype, "not a number")
    if is_numeric_dtype(raw.dtype):
        return _from_numbers(raw, integer=integer)
    if raw.dtype == object:
        # The decided serialization is all text: try that first, it needs no type scan.
        strings = arrow_strings(raw.to_numpy())
        if strings is not None:
            return _parse_number_text(pd.Series(strings, index=raw.index), integer=integer)
        numbers = _python_numbers(raw)
        if numbers is not None:
            return _from_numbers(numbers, integer=integer)
        kind = infer_dtype(raw, skipna=True)
        if kind == "empty":
            return Parsed(pd.Series(pd.NA, index=raw.index, dtype=dtype), no_problems())
        if kind in ("integer", "floating", "mixed-integer-float", "decimal"):
            try:
                numbers = raw.astype(INT if kind == "integer" else FLOAT)
            except (TypeError, ValueError, OverflowError):
                pass  # ints too large for Int64: read them as text below
            else:
                return _from_numbers(numbers, integer=integer)
    return _parse_number_text(string_values(raw), integer=integer)


def _python_numbers(raw: pd.Series) -> pd.Series | None:
    """Objects that are all Python ints (or all floats) as ``Int64`` (``Float64``), else None.

    The same values ``astype`` gives, without its per-value checks: NaN is NA.
    """
    values = raw.to_numpy(object)
    types = set(map(type, values))
    if types == {int}:
        try:
            data = values.astype(np.int64)
        except OverflowError:  # too large for Int64: read as text
            return None
        mask = np.zeros(len(data), dtype=bool)
        return pd.Series(pd.arrays.IntegerArray(data, mask), index=raw.index, copy=False)
    if types == {float}:
        floats = values.astype(np.float64)
        array = pd.arrays.FloatingArray(floats, np.isnan(floats))
        return pd.Series(array, index=raw.index, copy=False)
    return None


def _reject_present(raw: pd.Series, dtype: ExtensionDtype, message: str) -> Parsed:
    values = pd.Series(pd.NA, index=raw.index, dtype=dtype)
    return Parsed(values, problems_at(raw.index[raw.notna().to_numpy(bool)], message))


def _from_numbers(numbers: pd.Series, *, integer: bool) -> Parsed:
    """Numbers already numeric (``Int64``/``Float64``/numpy): check finiteness and integrality.

    NaN means "no value" (as the text ``"nan"`` does) and becomes NA; infinities are problems.
    """
    if numbers.dtype.kind in "iu":
        return Parsed(numbers.astype(INT if integer else FLOAT), no_problems())
    floats = numbers.astype(FLOAT)
    data = floats.to_numpy("float64", na_value=np.nan)
    finite = np.isfinite(data)
    infinite = np.isinf(data)
    parts = [problems_at(floats.index[infinite], "not a finite number")]
    if not integer:
        return Parsed(floats.where(finite), concat_problems(parts))
    fractional = finite & (np.floor(data) != data)
    too_big = finite & ~fractional & (np.abs(data) > _MAX_EXACT_FLOAT_INT)
    parts.append(problems_at(floats.index[fractional], "not a whole number"))
    parts.append(problems_at(floats.index[too_big], "out of range for a whole number"))
    whole = finite & ~fractional & ~too_big
    return Parsed(floats.where(whole).astype(INT), concat_problems(parts))


def _parse_number_text(text: pd.Series, *, integer: bool) -> Parsed:
    parsed = _parse_number_arrow(text, integer=integer)
    if parsed is not None:
        return parsed
    # Fast path: the decided serialization (plain digits or "") casts in one pass. The cast is
    # exact (correctly rounded), unlike pd.to_numeric, and fails as a whole on any other text.
    present = blank_to_na(text)
    try:
        values = present.astype(INT if integer else FLOAT)
    except (TypeError, ValueError, OverflowError):
        return _parse_number_text_slow(text, integer=integer)
    return _from_numbers(values, integer=integer)


# Texts that pyarrow's cast reads exactly as the slow path would (it rejects "+5" as an int64).
_ARROW_WHOLE = r"-?\d{1,18}"


def _parse_number_arrow(text: pd.Series, *, integer: bool) -> Parsed | None:
    """``string`` text in pyarrow read with pyarrow's cast, exactly as the pandas path reads it.

    ``""`` is NA; the rest is cast as a whole (correctly rounded, like ``astype``). When that
    fails, only the rows that are not plain numbers (as the slow path decides) go through
    :func:`_parse_number_text_slow`; the plain ones are cast together. None when pyarrow does not
    hold the text.
    """
    pa = arrow_module()
    if pa is None or not isinstance(text.array, pd.arrays.ArrowStringArray):
        return None
    pc = pyarrow_compute()
    chunks = arrow_chunks(text.array)
    target = pa.int64() if integer else pa.float64()
    blank = pc.equal(chunks, "")
    present = (
        pc.if_else(blank, pa.scalar(None, chunks.type), chunks) if pc.any(blank).as_py() else chunks
    )
    try:
        numbers = pc.cast(present, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        numbers = None
    if numbers is not None:
        return _from_arrow_numbers(numbers, text.index, integer=integer, rest=None)
    plain = _arrow_plain_numbers(chunks, integer=integer)
    try:
        numbers = pc.cast(pc.if_else(plain, chunks, pa.scalar(None, chunks.type)), target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    # Blank and missing rows are NA already; the rest that is not plain goes the slow way.
    done = pc.or_(pc.fill_null(plain, True), pc.fill_null(blank, True))
    rest = np.flatnonzero(~done.to_numpy(zero_copy_only=False))
    return _from_arrow_numbers(numbers, text.index, integer=integer, rest=(rest, text))


def _arrow_plain_numbers(chunks: Any, *, integer: bool) -> Any:
    """Which texts are plain numbers (``-?\\d{1,18}`` for integers), as a pyarrow boolean array.

    Plain digits, by far the most common, are found by a cheap character test; the pattern only
    looks at the other values.
    """
    pa: Any = arrow_module()  # not None: only called once arrow_module() gave pyarrow
    pc = pyarrow_compute()
    digits = pc.ascii_is_decimal(chunks)
    lengths = pc.fill_null(pc.binary_length(chunks), 0).to_numpy(zero_copy_only=False)
    if integer:
        digits = pc.and_(digits, pc.less_equal(pc.binary_length(chunks), _MAX_INT_DIGITS))
    flags = pc.fill_null(digits, False).to_numpy(zero_copy_only=False).copy()
    undecided = np.flatnonzero(~flags & (lengths > 0))  # "" is never a number
    if len(undecided):
        others = chunks.take(pa.array(undecided))
        pattern = f"^({_ARROW_WHOLE if integer else _PLAIN_NUMBER})$"
        matched = pc.fill_null(pc.match_substring_regex(others, pattern), False)
        flags[undecided] = matched.to_numpy(zero_copy_only=False)
    return pa.array(flags, mask=chunks.is_null().to_numpy(zero_copy_only=False))


def _from_arrow_numbers(
    numbers: Any,
    index: pd.Index,
    *,
    integer: bool,
    rest: tuple[np.ndarray[Any, Any], pd.Series] | None,
) -> Parsed:
    """pyarrow int64/float64 as ``Int64``/``Float64``; rows at ``rest[0]`` read by the slow path.

    NaN is NA and infinities are problems, as in :func:`_from_numbers`.
    """
    pc = pyarrow_compute()
    if integer:
        data = pc.fill_null(numbers, 0).to_numpy(zero_copy_only=False)
        mask = numbers.is_null().to_numpy(zero_copy_only=False)
    else:
        data = numbers.to_numpy(zero_copy_only=False)  # nulls become NaN
        mask = np.isnan(data)
    # pyarrow shares its buffer when it can, read-only: the frame's columns must be writable.
    data = data if data.flags.writeable else data.copy()
    mask = mask if mask.flags.writeable else mask.copy()
    parts = []
    if not integer:
        infinite = np.isinf(data)
        if infinite.any():
            mask |= infinite
            parts.append(problems_at(index[infinite], "not a finite number"))
    if rest is not None and len(rest[0]):
        positions, text = rest
        slow = _parse_number_text_slow(text.iloc[positions], integer=integer)
        slow_values = slow.values.array
        data[positions] = slow_values.to_numpy(data.dtype, na_value=0)
        mask[positions] = slow_values.isna()
        parts.append(slow.problems)
    array = pd.arrays.IntegerArray(data, mask) if integer else pd.arrays.FloatingArray(data, mask)
    return Parsed(pd.Series(array, index=index, copy=False), concat_problems(parts))


def _parse_number_text_slow(text: pd.Series, *, integer: bool) -> Parsed:
    """Every accepted form, column-wise: plain numbers in one pass, then the few others by steps.

    The others are trimmed, absent markers dropped, and the rest undressed (currency, thousands
    separators, unit); what still is not a plain number is unreadable. Positions, not index
    labels, tie the steps together, so no step realigns the whole column.
    """
    plain = text.str.fullmatch(_PLAIN_NUMBER).fillna(False).to_numpy(bool)
    numbers = text.where(plain)
    candidates = np.flatnonzero(text.notna().to_numpy(bool) & ~plain)
    unreadable = candidates[:0]
    if len(candidates):
        others = text.iloc[candidates].str.strip()
        kept = ~others.str.lower().isin(ABSENT_MARKERS).to_numpy(bool)
        core = _undress(others[kept])
        readable = core.notna().to_numpy(bool)
        numbers.iloc[candidates[kept][readable]] = core[readable].to_numpy(object)
        unreadable = candidates[kept][~readable]
    parsed = (
        _whole_numbers(numbers) if integer else _from_numbers(numbers.astype(FLOAT), integer=False)
    )
    not_numbers = problems_at(text.index[unreadable], "not a number")
    return Parsed(parsed.values, concat_problems([not_numbers, parsed.problems]))


def _undress(texts: pd.Series) -> pd.Series:
    """Trimmed texts as plain number texts (currency, thousands separators, unit removed), or NA."""
    plain = texts.str.fullmatch(_PLAIN_NUMBER).to_numpy(bool)
    core = texts.where(plain, texts.str.extract(_DECORATED.pattern, expand=False))
    grouped = core.str.fullmatch(_GROUPED).fillna(False).to_numpy(bool)
    core = core.where(~grouped, core.str.replace(",", "", regex=False))
    return core.where(core.str.fullmatch(_PLAIN_NUMBER).fillna(False).to_numpy(bool))


def _whole_numbers(numbers: pd.Series) -> Parsed:
    """Plain number texts (or NA) as ``Int64``, exactly.

    ``"3"`` and ``"3.00"`` are read digit by digit (no detour through float, so 19-digit IDs are
    not rounded); other forms (``"1e3"``, ``"2.5"``) through float, where fractions are problems.
    """
    whole = numbers.str.fullmatch(_WHOLE_NUMBER.pattern).fillna(False).to_numpy(bool)
    digits = numbers.where(whole).str.replace(r"^\+|\.0*$", "", regex=True)
    too_long = (digits.str.lstrip("-").str.len() > _MAX_INT_DIGITS).fillna(False).to_numpy(bool)
    values = digits.where(~too_long).astype(INT)
    parts = [problems_at(numbers.index[too_long], "out of range for a whole number")]
    other_forms = np.flatnonzero(numbers.notna().to_numpy(bool) & ~whole)
    if len(other_forms):
        others = _from_numbers(numbers.iloc[other_forms].astype(FLOAT), integer=True)
        values.iloc[other_forms] = others.values.to_numpy(object)
        parts.append(others.problems)
    return Parsed(values, concat_problems(parts))
