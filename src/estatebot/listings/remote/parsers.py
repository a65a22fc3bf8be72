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
"""

from __future__ import annotations

import gc
import importlib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionDtype
from pandas.api.types import infer_dtype, is_bool_dtype, is_numeric_dtype

#: Texts that mean "no value" in a numeric field (compared after trimming, case-insensitively).
ABSENT_MARKERS: frozenset[str] = frozenset({"", "null", "none", "-", "n/a", "na", "nan"})

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

_STRING = pd.StringDtype()
_INT: ExtensionDtype = pd.Int64Dtype()
_FLOAT: ExtensionDtype = pd.Float64Dtype()

_T = TypeVar("_T")


@dataclass(frozen=True)
class Parsed:
    """A parsed column: typed ``values`` and a message per value that could not be parsed.

    ``problems`` is a ``string`` Series of messages indexed by the labels of the bad rows (a subset
    of ``values.index``); it is empty when every value was read.
    """

    values: pd.Series
    problems: pd.Series


def _no_problems() -> pd.Series:
    return pd.Series([], dtype=_STRING)


def _problems(index: pd.Index, message: str) -> pd.Series:
    return pd.Series(message, index=index, dtype=_STRING)


def _concat_problems(parts: Sequence[pd.Series]) -> pd.Series:
    kept = [part for part in parts if len(part)]
    if not kept:
        return _no_problems()
    combined: pd.Series = pd.concat(kept)
    return combined.sort_index().astype(_STRING)


# --------------------------------------------------------------------------- text


def _optional_pyarrow() -> Any:
    # pyarrow backs pandas' default string dtype when installed; it is optional, and untyped.
    try:
        return importlib.import_module("pyarrow")
    except ImportError:
        return None


_pyarrow = _optional_pyarrow()


def arrow_module() -> Any | None:
    """pyarrow, when pandas keeps its ``string`` values in it (arrow arrays then serve as is)."""
    return _pyarrow if _pyarrow is not None and _STRING.storage == "pyarrow" else None


def arrow_text(values: np.ndarray[Any, Any]) -> Any | None:
    """An object array of str/None as a pyarrow string array, or None when that cannot be.

    ``pd.array(values, dtype="string")`` first checks and converts every element in a Python-level
    pass; pyarrow reads the Python strings directly, several times faster. Only used when pandas
    keeps its strings in pyarrow anyway (see :func:`text_array`), so nothing changes but speed.
    """
    if _pyarrow is None or _STRING.storage != "pyarrow":
        return None
    try:
        # The system allocator: in a fresh process pyarrow's default one (mimalloc) was
        # measured 2-3 times slower to grow here, and these buffers are the bulk of the memory.
        return _pyarrow.array(
            values,
            type=_pyarrow.large_string(),
            from_pandas=True,
            memory_pool=_pyarrow.system_memory_pool(),
        )
    except (TypeError, ValueError):  # an element that is not text (ArrowTypeError/ArrowInvalid)
        return None


def text_array(chunks: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    """Arrays from :func:`arrow_text`, end to end, as one ``string`` array."""
    # pandas keeps large_string (64-bit offsets): building that directly spares a cast.
    pieces = [piece for chunk in chunks for piece in getattr(chunk, "chunks", [chunk])]
    return pd.arrays.ArrowStringArray(_pyarrow.chunked_array(pieces, type=_pyarrow.large_string()))


def arrow_strings(values: np.ndarray[Any, Any]) -> pd.api.extensions.ExtensionArray | None:
    """An object array of str/None as a ``string`` array in one C pass; None when it cannot be."""
    chunk = arrow_text(values)
    return None if chunk is None else text_array([chunk])


def string_values(raw: pd.Series) -> pd.Series:
    """``raw`` as a ``string`` Series, untrimmed; NA for missing values, others through ``str``."""
    if raw.dtype == _STRING:
        return raw
    if raw.dtype == object:
        values = raw.to_numpy()
        array = arrow_strings(values)
        if array is None:
            array = pd.array(values, dtype=_STRING)
        return pd.Series(array, index=raw.index, copy=False)
    return raw.astype(_STRING)


def _blank_to_na(text: pd.Series) -> pd.Series:
    # Setting values to NA rebuilds a whole string array: only do it when there is a blank.
    return text.replace("", None) if (text == "").any() else text


def to_text(raw: pd.Series) -> pd.Series:
    """``raw`` as a trimmed ``string`` Series; NA for missing and empty values.

    Trimming covers every Unicode space, non-breaking ones included. Non-text values are written
    with ``str`` (``78701`` becomes ``"78701"``).
    """
    return _blank_to_na(string_values(raw).str.strip())


def parse_text(raw: pd.Series) -> Parsed:
    """A free-text column: trimmed, empty → NA. Never has problems."""
    return Parsed(to_text(raw), _no_problems())


# --------------------------------------------------------------------------- numbers


def parse_numbers(raw: pd.Series, *, integer: bool = False) -> Parsed:
    """A numeric column as ``Float64`` (or ``Int64`` with ``integer=True``).

    Accepts numbers already numeric, plain decimal text, and text dressed for people: currency
    symbols or codes, thousands separators, a unit suffix (``2,500 sqft``), surrounding spaces.
    Absent markers are NA. Anything else is NA with a problem, and so is a non-integral value in
    an integer column (``"2.5"`` is never rounded; ``"3.0"`` is 3) and a non-finite value.
    """
    dtype = _INT if integer else _FLOAT
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
            return Parsed(pd.Series(pd.NA, index=raw.index, dtype=dtype), _no_problems())
        if kind in ("integer", "floating", "mixed-integer-float", "decimal"):
            try:
                numbers = raw.astype(_INT if kind == "integer" else _FLOAT)
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
    return Parsed(values, _problems(raw.index[raw.notna().to_numpy(bool)], message))


def _from_numbers(numbers: pd.Series, *, integer: bool) -> Parsed:
    """Numbers already numeric (``Int64``/``Float64``/numpy): check finiteness and integrality.

    NaN means "no value" (as the text ``"nan"`` does) and becomes NA; infinities are problems.
    """
    if numbers.dtype.kind in "iu":
        return Parsed(numbers.astype(_INT if integer else _FLOAT), _no_problems())
    floats = numbers.astype(_FLOAT)
    data = floats.to_numpy("float64", na_value=np.nan)
    finite = np.isfinite(data)
    infinite = np.isinf(data)
    parts = [_problems(floats.index[infinite], "not a finite number")]
    if not integer:
        return Parsed(floats.where(finite), _concat_problems(parts))
    fractional = finite & (np.floor(data) != data)
    too_big = finite & ~fractional & (np.abs(data) > _MAX_EXACT_FLOAT_INT)
    parts.append(_problems(floats.index[fractional], "not a whole number"))
    parts.append(_problems(floats.index[too_big], "out of range for a whole number"))
    whole = finite & ~fractional & ~too_big
    return Parsed(floats.where(whole).astype(_INT), _concat_problems(parts))


def _parse_number_text(text: pd.Series, *, integer: bool) -> Parsed:
    parsed = _parse_number_arrow(text, integer=integer)
    if parsed is not None:
        return parsed
    # Fast path: the decided serialization (plain digits or "") casts in one pass. The cast is
    # exact (correctly rounded), unlike pd.to_numeric, and fails as a whole on any other text.
    present = _blank_to_na(text)
    try:
        values = present.astype(_INT if integer else _FLOAT)
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
    pc = _pyarrow_compute()
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
    pa = _pyarrow
    pc = _pyarrow_compute()
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


def arrow_chunks(array: Any) -> Any:
    """The pyarrow ChunkedArray behind a pandas array backed by pyarrow (shared, not copied)."""
    data = array.__arrow_array__()
    return data if isinstance(data, _pyarrow.ChunkedArray) else _pyarrow.chunked_array([data])


def _pyarrow_compute() -> Any:
    return importlib.import_module("pyarrow.compute")


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
    pc = _pyarrow_compute()
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
            parts.append(_problems(index[infinite], "not a finite number"))
    if rest is not None and len(rest[0]):
        positions, text = rest
        slow = _parse_number_text_slow(text.iloc[positions], integer=integer)
        slow_values = slow.values.array
        data[positions] = slow_values.to_numpy(data.dtype, na_value=0)
        mask[positions] = slow_values.isna()
        parts.append(slow.problems)
    array = pd.arrays.IntegerArray(data, mask) if integer else pd.arrays.FloatingArray(data, mask)
    return Parsed(pd.Series(array, index=index, copy=False), _concat_problems(parts))


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
        _whole_numbers(numbers) if integer else _from_numbers(numbers.astype(_FLOAT), integer=False)
    )
    not_numbers = _problems(text.index[unreadable], "not a number")
    return Parsed(parsed.values, _concat_problems([not_numbers, parsed.problems]))


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
    values = digits.where(~too_long).astype(_INT)
    parts = [_problems(numbers.index[too_long], "out of range for a whole number")]
    other_forms = np.flatnonzero(numbers.notna().to_numpy(bool) & ~whole)
    if len(other_forms):
        others = _from_numbers(numbers.iloc[other_forms].astype(_FLOAT), integer=True)
        values.iloc[other_forms] = others.values.to_numpy(object)
        parts.append(others.problems)
    return Parsed(values, _concat_problems(parts))


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
        pd.array([*matched, None], dtype=_STRING).take(np.where(codes < 0, len(matched), codes)),
        index=raw.index,
    )
    unknown_codes = [code for code, text in enumerate(texts) if text and matched[code] is None]
    unknown = np.isin(codes, unknown_codes)
    expected = ", ".join(allowed)
    return Parsed(
        values, _problems(raw.index[unknown], f"unknown value; expected one of {expected}")
    )


# --------------------------------------------------------------------------- JSON columns


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a bulk conversion; its state is restored after."""
    # Building a million small lists or dicts makes the cyclic collector run again and again over
    # the whole heap (the caller's records included), which costs more than the parsing itself.
    # These containers never form cycles, so pausing it is safe; its state is restored after.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Unreadable(ValueError):
    """A JSON column value that cannot be read; the message says why."""


def _is_missing(item: Any) -> bool:
    return item is None or item is pd.NA or (isinstance(item, float) and item != item)


def _convert_one(
    item: Any,
    from_text: Callable[[str], _T],
    from_object: Callable[[Any], _T],
    empty: Callable[[], _T],
) -> tuple[_T, str | None]:
    """One JSON column value converted, and why it could not be (None when it could)."""
    try:
        if isinstance(item, str):
            text = item.strip()
            return (from_text(text) if text else empty()), None
        if _is_missing(item):
            return empty(), None
        return from_object(item), None
    except _Unreadable as error:
        return empty(), str(error)


def _convert_rows(
    raw: pd.Series,
    from_text: Callable[[str], _T],
    from_object: Callable[[Any], _T],
    empty: Callable[[], _T],
    *,
    reuse: Callable[[_T], _T] | None = None,
) -> Parsed:
    """Convert a JSON column value by value (each value becomes a Python object anyway).

    With ``reuse``, each distinct text is parsed once and later rows get ``reuse(first)`` (a
    copy: rows must not share one object that a single edit would change for all).
    """
    converted: list[_T] = []
    bad: dict[int, str] = {}
    seen: dict[str, tuple[_T, str | None]] = {}
    with gc_paused():
        for position, item in enumerate(raw.to_numpy(object)):
            if reuse is not None and isinstance(item, str):
                known = seen.get(item)
                if known is None:
                    value, error = seen[item] = _convert_one(item, from_text, from_object, empty)
                else:
                    value, error = reuse(known[0]), known[1]
            else:
                value, error = _convert_one(item, from_text, from_object, empty)
            converted.append(value)
            if error is not None:
                bad[position] = error
    problems = pd.Series(list(bad.values()), index=raw.index[list(bad)], dtype=_STRING)
    return Parsed(pd.Series(converted, index=raw.index, dtype=object), problems)


# Images -------------------------------------------------------------------

_URL_SEPARATORS = re.compile(r"[,|]")
# The decided form with URLs free of quotes, escapes and spaces (", " between them is allowed).
_SIMPLE_URL_ARRAY = r'\["[^"\\\s]+"(?:, ?"[^"\\\s]+")*\]'
# The same for pyarrow, whose RE2 takes \s as ASCII spaces only: Python trims every Unicode space
# (str.strip), so those must send a value down the slow path too.
_SIMPLE_URL_ARRAY_RE2 = _SIMPLE_URL_ARRAY.replace(r"\s", r"\s\p{Z}\x0b\x1c-\x1f\x85")


def _urls_from_text(text: str) -> list[str]:
    if text.startswith("["):
        try:
            data = json.loads(text)
        except ValueError:
            raise _Unreadable("not valid JSON") from None
        return _urls_from_object(data)
    return [part.strip() for part in _URL_SEPARATORS.split(text) if part.strip()]


def _urls_from_object(data: Any) -> list[str]:
    if isinstance(data, str):
        return _urls_from_text(data.strip()) if data.strip() else []
    if not isinstance(data, list | tuple | np.ndarray) or not all(
        isinstance(item, str) for item in data
    ):
        raise _Unreadable("not a list of URLs")
    return [item.strip() for item in data if item.strip()]


def parse_images(raw: pd.Series) -> Parsed:
    """``Images`` as a ``list[str]`` per row (empty when none).

    Accepts JSON array text (the decided form), comma- or pipe-separated URLs, a single URL, and
    lists. URLs are trimmed and empty ones dropped. Invalid JSON → ``[]`` with a problem.
    """
    if raw.dtype == object and infer_dtype(raw, skipna=True) not in ("string", "empty"):
        return _convert_rows(raw, _urls_from_text, _urls_from_object, list)  # Python values
    text = string_values(raw)
    # The decided form, when its URLs hold no quote, escape or space, is recognized on the whole
    # column at once and split with plain str methods; empty values are empty lists; every other
    # value (padded, other forms) goes through _urls_from_text, value by value.
    simple, lists = _simple_url_arrays(text)
    empty = (text == "").fillna(True).to_numpy(bool)
    values = np.empty(len(text), dtype=object)
    with gc_paused():
        values[simple] = _object_array(lists)
        values[empty] = _object_array([[] for _ in range(int(empty.sum()))])
        others = ~(simple | empty)
        parsed = _convert_rows(text[others], _urls_from_text, _urls_from_object, list)
    values[others] = parsed.values.to_numpy(object)
    return Parsed(pd.Series(values, index=raw.index, dtype=object, copy=False), parsed.problems)


def _object_array(items: list[Any]) -> np.ndarray[Any, np.dtype[np.object_]]:
    """``items`` as a 1-D object array, lists kept as elements (numpy would nest them)."""
    return np.fromiter(items, dtype=object, count=len(items))


def _simple_url_arrays(text: pd.Series) -> tuple[np.ndarray[Any, np.dtype[np.bool_]], list[Any]]:
    """The rows of ``text`` in the simple decided form (see parse_images), and their URL lists."""
    arrow_backed = isinstance(text.array, pd.arrays.ArrowStringArray)
    if arrow_module() is not None and arrow_backed:
        # '["a", "b"]' → 'a","b' → ['a', 'b'] all in pyarrow, and its lists to Python in one go.
        pc = _pyarrow_compute()
        chunks = arrow_chunks(text.array)
        flags = pc.fill_null(pc.match_substring_regex(chunks, f"^{_SIMPLE_URL_ARRAY_RE2}$"), False)
        inner = pc.utf8_slice_codeunits(chunks.filter(flags), 2, -2)
        parts = pc.split_pattern(pc.replace_substring(inner, '", "', '","'), '","')
        return flags.to_numpy(zero_copy_only=False), parts.to_pylist()
    # pandas matches pyarrow-backed text with RE2, other text with Python's re.
    pattern = _SIMPLE_URL_ARRAY_RE2 if arrow_backed else _SIMPLE_URL_ARRAY
    simple = text.str.fullmatch(pattern).fillna(False).to_numpy(bool)
    texts = text[simple].tolist()
    return simple, [item[2:-2].replace('", "', '","').split('","') for item in texts]


# ExtensionColumn ----------------------------------------------------------

_PAIR_SEPARATORS = re.compile(r"[;\n]")


def _as_text(value: Any) -> str:
    """An extension value as text: JSON scalars keep their JSON spelling, null is empty."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    raise _Unreadable("extension values must be text or numbers")


def _extensions_from_object(data: Any) -> dict[str, str]:
    if isinstance(data, str):
        return _extensions_from_text(data.strip()) if data.strip() else {}
    if isinstance(data, Mapping):
        return {str(key): _as_text(value) for key, value in data.items()}
    if not isinstance(data, list | tuple):
        raise _Unreadable("not a list of {Key, value} objects")
    out: dict[str, str] = {}
    for item in data:
        if not isinstance(item, Mapping):
            raise _Unreadable("not a list of {Key, value} objects")
        # The decided form says "value"; some serializers write "Value" (or "key").
        names = {str(name).casefold(): name for name in item}
        if "key" not in names:
            raise _Unreadable("an item has no Key")
        value = item[names["value"]] if "value" in names else None
        out[str(item[names["key"]])] = _as_text(value)
    return out


def _extensions_from_text(text: str) -> dict[str, str]:
    if text[0] in "[{":
        try:
            data = json.loads(text)
        except ValueError:
            raise _Unreadable("not valid JSON") from None
        return _extensions_from_object(data)
    out: dict[str, str] = {}
    for part in _PAIR_SEPARATORS.split(text):
        if not part.strip():
            continue
        key, colon, value = part.partition(":")
        if not colon or not key.strip():
            raise _Unreadable("neither JSON nor 'key: value' pairs")
        out[key.strip()] = value.strip()
    return out


def parse_extensions(raw: pd.Series) -> Parsed:
    """``ExtensionColumn`` as a ``dict[str, str]`` per row (empty when none).

    Accepts the decided JSON text ``[{"Key": "Pool", "value": "Yes"}]`` (``"Value"`` too), a JSON
    object ``{"Pool": "Yes"}``, ``key: value`` pairs separated by ``;`` or new lines, and dicts or
    lists of items. Values become text. Anything unreadable → ``{}`` with a problem.
    """
    if raw.dtype == _STRING:
        return _extensions_of_text(raw)
    # Extension texts repeat a lot across listings: parse each distinct text once.
    return _convert_rows(raw, _extensions_from_text, _extensions_from_object, dict, reuse=dict.copy)


def _extensions_of_text(text: pd.Series) -> Parsed:
    """A ``string`` column of extension texts: each distinct text parsed once, then copied.

    Every row gets its own dict (a copy), so editing one row never changes another.
    """
    codes, uniques = pd.factorize(text)
    parsed = [
        _convert_one(item, _extensions_from_text, _extensions_from_object, dict)
        for item in uniques.tolist()
    ]
    # The last one stands for NA (code -1).
    templates = _object_array([value for value, _ in parsed] + [{}])
    with gc_paused():
        values = np.fromiter(map(dict.copy, templates[codes]), dtype=object, count=len(codes))
    bad = [code for code, (_, error) in enumerate(parsed) if error is not None]
    if not bad:
        problems = _no_problems()
    else:
        rows = np.flatnonzero(np.isin(codes, bad))
        messages = np.array([error for _, error in parsed], dtype=object)[codes[rows]]
        problems = pd.Series(messages, index=text.index[rows], dtype=_STRING)
    return Parsed(pd.Series(values, index=text.index, dtype=object, copy=False), problems)
