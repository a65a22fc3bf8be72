"""Clean listing values: trimmed text with ``""`` as missing, tidy ``Images`` lists and
``ExtensionColumn`` mappings, whole frames cleaned a column at a time.

The clean form is what plans copy into request bodies;
:mod:`~estatebot.listings.sync.values.compare`
compares it and :mod:`~estatebot.listings.sync.values.hashing` hashes it.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Iterable, Mapping
from itertools import chain
from operator import is_
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings import schema

# Typed as Any so they pass where pandas' stubs expect a scalar: None and NA are what is meant.
#: The missing-value marker for ``to_numpy(dtype=object, na_value=NONE)``.
NONE: Any = None
_NA: Any = pd.NA

TEXT_COLUMNS: frozenset[str] = frozenset(c for c in schema.COLUMNS if schema.DTYPES[c] == "string")
LIST_COLUMNS: frozenset[str] = frozenset(schema.LIST_COLUMNS)
DICT_COLUMNS: frozenset[str] = frozenset(schema.DICT_COLUMNS)
INT_COLUMNS: frozenset[str] = frozenset(schema.INT_COLUMNS)
FLOAT_COLUMNS: frozenset[str] = frozenset(schema.FLOAT_COLUMNS)
NUMBER_COLUMNS: tuple[str, ...] = tuple(
    c for c in schema.COLUMNS if c in INT_COLUMNS or c in FLOAT_COLUMNS
)


def _optional_module(name: str) -> Any:
    # pyarrow backs pandas' default string dtype when installed; it is optional, and untyped.
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


pa = _optional_module("pyarrow")
pc: Any = _optional_module("pyarrow.compute") if pa is not None else None


# --------------------------------------------------------------------------- scalar rules


def is_missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    if isinstance(value, float | np.floating):
        return math.isnan(value)
    return False


def clean_images(value: Any) -> list[str]:
    """``Images`` as a list of trimmed, non-empty URL strings, in the given order."""
    if type(value) is list:
        # Fast path for the usual list of strings (str.strip rejects anything else).
        try:
            out = [str.strip(item) for item in value]
        except TypeError:
            pass
        else:
            return out if all(out) else [item for item in out if item]
    if is_missing(value):
        return []
    # A sequence is read item by item; any other lone value as a list of one.
    items = value if isinstance(value, list | tuple | np.ndarray) else [value]
    cleaned: list[str] = []
    for item in items:
        if isinstance(item, str):
            text = item.strip()
            if text:
                cleaned.append(text)
    return cleaned


def clean_extension(value: Any) -> dict[str, str]:
    """``ExtensionColumn`` as a dict of trimmed keys and values; empty keys or values dropped.

    Besides the canonical dict, the wire form (a list of ``{"Key": ..., "value": ...}`` items,
    ``Value`` accepted too) is read, so bodies and frames compare alike. Non-text values are
    written as text.
    """
    if type(value) is dict:
        # Fast path for the usual mapping of strings (str.strip rejects anything else).
        try:
            fast = {str.strip(k): str.strip(v) for k, v in value.items()}
        except TypeError:
            pass
        else:
            if "" in fast or "" in fast.values():
                return {k: v for k, v in fast.items() if k and v}
            return fast
    if isinstance(value, Mapping):
        pairs: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list | tuple):
        pairs = [
            (item.get("Key"), item.get("value", item.get("Value")))
            for item in value
            if isinstance(item, Mapping)
        ]
    else:
        return {}
    out: dict[str, str] = {}
    for raw_key, raw_value in pairs:
        if is_missing(raw_key) or is_missing(raw_value):
            continue
        k, v = str(raw_key).strip(), str(raw_value).strip()
        if k and v:
            out[k] = v
    return out


def clean_value(column: str, value: Any) -> Any:
    """One value in clean, JSON-safe form: trimmed text, None for missing, numbers as given."""
    if column in LIST_COLUMNS:
        return clean_images(value)
    if column in DICT_COLUMNS:
        return clean_extension(value)
    if is_missing(value):
        return None
    if column in TEXT_COLUMNS:
        text = str(value).strip()
        return text or None
    if column in INT_COLUMNS:
        number = float(value)
        return int(number) if number.is_integer() else number
    if column in FLOAT_COLUMNS:
        return float(value)
    return value


# --------------------------------------------------------------------------- clean frames


def clean_frame(frame: pd.DataFrame, *, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """A conformed copy of ``frame`` in clean form (see the module docstring); index kept.

    The canonical columns in order and dtypes (missing ones added as NA, others dropped); text
    trimmed with ``""`` as NA, float NaN as NA, ``Images`` and ``ExtensionColumn`` tidied (the
    latter read from its wire form too). Numbers are not rounded: the clean frame is what request
    bodies are made from. ``columns`` limits the result to those canonical columns (still in
    canonical order). The caller's frame is never changed.
    """
    chosen = set(schema.COLUMNS if columns is None else columns)
    wanted = [column for column in schema.COLUMNS if column in chosen]
    # The result is assembled once, not column by column (each assignment would copy).
    cleaned = {column: _clean_column(frame, column) for column in wanted}
    return pd.DataFrame(cleaned, index=frame.index, copy=False)  # copy-on-write keeps them apart


def clean_column(frame: pd.DataFrame, column: str) -> pd.Series[Any]:
    """One canonical column of ``frame`` in clean form, as :func:`clean_frame` makes it."""
    return _clean_column(frame, column)


def _clean_column(frame: pd.DataFrame, column: str) -> pd.Series[Any]:
    """One canonical column of ``frame`` in clean form (see :func:`clean_frame`)."""
    dtype: Any = schema.DTYPES[column]
    if column not in frame.columns:
        if column in LIST_COLUMNS:
            return pd.Series([[] for _ in range(len(frame))], index=frame.index, dtype="object")
        if column in DICT_COLUMNS:
            return pd.Series([{} for _ in range(len(frame))], index=frame.index, dtype="object")
        missing: pd.Series[Any] = pd.Series(_NA, index=frame.index, dtype=dtype)
        return missing
    series = frame[column]
    if column in TEXT_COLUMNS:
        return clean_text(series)
    if column in FLOAT_COLUMNS:
        # A masked Float64 array can hold NaN apart from NA: treat both as missing.
        typed: pd.Series[Any] = series.astype(dtype)
        values = as_floats(typed)
        if int(np.isnan(values).sum()) == int(typed.isna().sum()):
            return typed  # no NaN apart from NA
        floats: pd.Series[Any] = pd.Series(values, index=series.index, dtype=dtype)
        return floats
    if column in INT_COLUMNS:
        integers: pd.Series[Any] = series.astype(dtype)
        return integers
    raw = series.tolist()
    cleaned = clean_images_list(raw) if column in LIST_COLUMNS else clean_extension_list(raw)
    if cleaned is None:  # already clean: keep the values (copy-on-write keeps the input safe)
        return series.astype("object")
    return pd.Series(cleaned, index=series.index, dtype="object")


def clean_text(series: pd.Series[Any]) -> pd.Series[Any]:
    """A text column in clean form: trimmed (Unicode whitespace), ``""`` as NA, dtype ``string``."""
    text = series.astype("string")
    dtype = text.dtype
    if pc is not None and isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        # The same trim as ``.str.strip()`` on these arrays, without the round trips.
        trimmed = pc.utf8_trim_whitespace(pa.array(text.array))
        empty = pc.equal(trimmed, "")
        if pc.any(empty).as_py():
            trimmed = pc.if_else(empty, pa.scalar(None, trimmed.type), trimmed)
        array = pd.arrays.ArrowStringArray(trimmed)
        return pd.Series(array, index=series.index, name=series.name, copy=False)
    stripped = text.str.strip()
    return stripped.mask(stripped == "")


def clean_texts(frame: pd.DataFrame, names: Iterable[str]) -> dict[str, pd.Series[Any]]:
    """:func:`clean_text` of several text columns of ``frame``, by name, the same values.

    Columns held in Arrow are trimmed by one call over all of them together (one pass, and
    one release of the interpreter lock, instead of one per column); others one by one.
    """
    out: dict[str, pd.Series[Any]] = {}
    batch: list[tuple[str, pd.Series[Any], Any]] = []
    for name in names:
        text = frame[name].astype("string")
        dtype = text.dtype
        if pc is None or not (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"):
            out[name] = clean_text(frame[name])
            continue
        array = pa.array(text.array)
        chunks = array.chunks if isinstance(array, pa.ChunkedArray) else [array]
        if all(map(_already_trimmed, chunks)):
            out[name] = text  # trimming would change nothing: the same values, not a copy
            continue
        batch.append((name, text, [chunk.cast(pa.large_string()) for chunk in chunks]))
    if not batch:
        return out
    together = pa.chunked_array([c for _, _, chunks in batch for c in chunks], pa.large_string())
    trimmed = pc.utf8_trim_whitespace(together)
    empty = pc.equal(trimmed, "")
    if pc.any(empty).as_py():
        trimmed = pc.if_else(empty, pa.scalar(None, trimmed.type), trimmed)
    start = 0
    for name, text, _ in batch:
        own = trimmed.slice(start, len(text))
        start += len(text)
        array = pd.arrays.ArrowStringArray(own)
        out[name] = pd.Series(array, index=text.index, name=text.name, copy=False)
    return out


# The bytes a trimmed, non-empty text cannot start or end with: ASCII whitespace (what both
# str.strip and Arrow's trim remove from ASCII text) and, to stay on the safe side, every byte
# of a non-ASCII character (the other whitespace characters are among them).
_NOT_AT_AN_END = np.zeros(256, dtype=bool)
_NOT_AT_AN_END[[0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20]] = True
_NOT_AT_AN_END[0x80:] = True


def _already_trimmed(array: Any) -> bool:
    """Whether an Arrow text array is clean as it is: no value empty, none that starts or ends
    with whitespace (a non-ASCII character at either end counts as such: it is then trimmed).

    Read from the array's offsets and bytes, without making a trimmed copy.
    """
    n = len(array)
    if n == 0 or array.null_count == n:
        return True
    buffers = array.buffers()
    width = 8 if pa.types.is_large_string(array.type) else 4
    offsets = np.frombuffer(
        buffers[1], dtype=f"<i{width}", count=n + 1, offset=array.offset * width
    )
    starts, ends = offsets[:-1], offsets[1:]
    if array.null_count:
        present = array.is_valid().to_numpy(zero_copy_only=False)
        starts, ends = starts[present], ends[present]
    if (ends <= starts).any() or buffers[2] is None:
        return False  # an empty value becomes missing
    data = np.frombuffer(buffers[2], dtype=np.uint8)
    return not (_NOT_AT_AN_END[data[starts]].any() or _NOT_AT_AN_END[data[ends - 1]].any())


def arrow_text(series: pd.Series[Any]) -> Any:
    """A text column as one Arrow array of large strings, nulls where missing (values as they
    are: clean them first with :func:`clean_text` where needed)."""
    array = pa.array(series.array) if isinstance(series.dtype, pd.StringDtype) else None
    if array is None:
        values = series.to_numpy(dtype=object, na_value=NONE)
        array = pa.array(values, type=pa.large_string(), from_pandas=True)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return array if array.type == pa.large_string() else array.cast(pa.large_string())


def clean_images_list(values: list[Any]) -> list[list[str]] | None:
    """``Images`` values in clean form, or None when they all are already (checked in bulk)."""
    if set(map(type, values)) <= {list} and _texts_are_clean(list(chain.from_iterable(values))):
        return None
    return [clean_images(v) for v in values]


def clean_extension_list(values: list[Any]) -> list[dict[str, str]] | None:
    """``ExtensionColumn`` values in clean form, or None when they all are already."""
    if (
        set(map(type, values)) <= {dict}
        # Keys repeat from row to row: check each distinct key list once.
        and _texts_are_clean(list(chain.from_iterable(set(map(tuple, values)))))
        and _texts_are_clean(list(chain.from_iterable(map(dict.values, values))))
    ):
        return None
    return [clean_extension(v) for v in values]


def texts_are_clean(items: list[Any]) -> bool:
    """Whether the items are all trimmed, non-empty ``str`` (exactly: no subclass), checked at
    C speed: what :func:`clean_images` and :func:`clean_extension` leave as they are."""
    return _texts_are_clean(items)


def _texts_are_clean(items: list[Any]) -> bool:
    """Whether the items are all trimmed, non-empty text (checked at C speed).

    ``str.strip`` returns the very same string when there is nothing to trim.
    """
    try:
        return all(items) and all(map(is_, map(str.strip, items), items))
    except TypeError:  # an item that is not text
        return False


def as_floats(series: pd.Series[Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
    return series.to_numpy(dtype="float64", na_value=np.nan)
