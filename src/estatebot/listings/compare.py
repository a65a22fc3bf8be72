"""Canonical comparison of listings: when two values mean the same thing, and a hash that agrees.

Spreadsheets and the service write the same listing in slightly different ways: trailing spaces,
``""`` for a missing value, ``100.0`` for ``100``, prices with a stray fraction of a cent. This
module decides, once, when two values are the same, so that the plan, its hashes and the apply
step's staleness check all agree:

* text is trimmed (Unicode whitespace, including non-breaking spaces) and ``""`` is missing;
* numbers are compared at the precision of their column (:data:`PRECISION`): money to the cent,
  coordinates to 6 decimals, areas and bathrooms to 2 decimals, counts exactly; a per-column
  absolute tolerance can replace that rule for the comparison;
* ``Images`` is an ordered list of trimmed, non-empty URLs (the first is the primary photo, so
  order matters); an empty list is missing;
* ``ExtensionColumn`` is a mapping with trimmed keys and values; entries with an empty key or an
  empty value are dropped (empty means missing), and an empty mapping is missing;
* missing equals missing.

Two forms are used: a *clean* frame (trimmed text, empty as NA, structured columns tidied, numbers
as given) that plans copy into request bodies, and *canonical* values (numbers rounded to their
precision, mappings in key order) that hashes are made of.

Hashes (scheme :data:`HASH_VERSION`) are built from whole columns, not value by value:
:func:`frame_hashes` encodes each listing as its canonical numbers (IEEE doubles) followed by its
canonical text fields (separated by control characters, escaped where a value holds one) and
hashes that with SHA-256; :func:`listing_hash` is :func:`frame_hashes` of a one-row frame, so the
two always agree. :func:`frame_fingerprint` hashes a whole set of listings column by column, in
ID order.
"""

from __future__ import annotations

import hashlib
import importlib
import math
from collections.abc import Callable, Iterable, Mapping
from itertools import chain
from operator import eq, is_, itemgetter
from typing import Any, cast

import numpy as np
import pandas as pd

from estatebot.listings import schema

#: Decimal places at which each float column is compared and hashed; integer columns are exact.
PRECISION: dict[str, int] = {
    "SalePrice": 2,
    "UnitAreaPrice": 2,
    "HOAMonth": 2,
    "ZestimatePrice": 2,
    "RentPrice": 2,
    "DepositFee": 2,
    "Latitude": 6,
    "Longitude": 6,
    "LotArea": 2,
    "BuildingArea": 2,
    "Bathrooms": 2,
}

#: The version of the hash scheme of :func:`listing_hash` and :func:`frame_fingerprint`; hashes of
#: different versions never compare equal.
HASH_VERSION = 2

# Typed as Any so they pass where pandas' stubs expect a scalar: None and NA are what is meant.
#: The missing-value marker for ``to_numpy(dtype=object, na_value=NONE)``.
NONE: Any = None
_NA: Any = pd.NA

_TEXT_COLUMNS: frozenset[str] = frozenset(c for c in schema.COLUMNS if schema.DTYPES[c] == "string")
_LIST_COLUMNS: frozenset[str] = frozenset(schema.LIST_COLUMNS)
_DICT_COLUMNS: frozenset[str] = frozenset(schema.DICT_COLUMNS)
_INT_COLUMNS: frozenset[str] = frozenset(schema.INT_COLUMNS)
_FLOAT_COLUMNS: frozenset[str] = frozenset(schema.FLOAT_COLUMNS)
_NUMBER_COLUMNS: tuple[str, ...] = tuple(
    c for c in schema.COLUMNS if c in _INT_COLUMNS or c in _FLOAT_COLUMNS
)


def _optional_module(name: str) -> Any:
    # pyarrow backs pandas' default string dtype when installed; it is optional, and untyped.
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_pa = _optional_module("pyarrow")
_pc: Any = _optional_module("pyarrow.compute") if _pa is not None else None


# --------------------------------------------------------------------------- scalar rules


def _is_missing(value: Any) -> bool:
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
    if _is_missing(value):
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
        if _is_missing(raw_key) or _is_missing(raw_value):
            continue
        k, v = str(raw_key).strip(), str(raw_value).strip()
        if k and v:
            out[k] = v
    return out


def clean_value(column: str, value: Any) -> Any:
    """One value in clean, JSON-safe form: trimmed text, None for missing, numbers as given."""
    if column in _LIST_COLUMNS:
        return clean_images(value)
    if column in _DICT_COLUMNS:
        return clean_extension(value)
    if _is_missing(value):
        return None
    if column in _TEXT_COLUMNS:
        text = str(value).strip()
        return text or None
    if column in _INT_COLUMNS:
        number = float(value)
        return int(number) if number.is_integer() else number
    if column in _FLOAT_COLUMNS:
        return float(value)
    return value


def _round(value: float, decimals: int) -> float:
    # numpy's rounding, in both the scalar and the vectorized paths, so they always agree;
    # adding 0.0 turns -0.0 into 0.0 so that they hash alike.
    return float(np.round(np.float64(value), decimals)) + 0.0


def canonical_value(column: str, value: Any) -> Any:
    """One value in canonical form: :func:`clean_value`, with floats rounded to their precision.

    Structured columns become JSON-friendly and order-independent where order does not matter
    (``ExtensionColumn`` as sorted ``[key, value]`` pairs); missing values (including empty
    lists and mappings) become None.
    """
    cleaned = clean_value(column, value)
    if column in _LIST_COLUMNS:
        return cleaned or None
    if column in _DICT_COLUMNS:
        return sorted([k, v] for k, v in cleaned.items()) or None
    if cleaned is None:
        return None
    if column in _FLOAT_COLUMNS:
        return _round(cleaned, PRECISION.get(column, 6))
    return cleaned


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


def _clean_column(frame: pd.DataFrame, column: str) -> pd.Series[Any]:
    """One canonical column of ``frame`` in clean form (see :func:`clean_frame`)."""
    dtype: Any = schema.DTYPES[column]
    if column not in frame.columns:
        if column in _LIST_COLUMNS:
            return pd.Series([[] for _ in range(len(frame))], index=frame.index, dtype="object")
        if column in _DICT_COLUMNS:
            return pd.Series([{} for _ in range(len(frame))], index=frame.index, dtype="object")
        missing: pd.Series[Any] = pd.Series(_NA, index=frame.index, dtype=dtype)
        return missing
    series = frame[column]
    if column in _TEXT_COLUMNS:
        return clean_text(series)
    if column in _FLOAT_COLUMNS:
        # A masked Float64 array can hold NaN apart from NA: treat both as missing.
        typed: pd.Series[Any] = series.astype(dtype)
        values = _floats(typed)
        if int(np.isnan(values).sum()) == int(typed.isna().sum()):
            return typed  # no NaN apart from NA
        floats: pd.Series[Any] = pd.Series(values, index=series.index, dtype=dtype)
        return floats
    if column in _INT_COLUMNS:
        integers: pd.Series[Any] = series.astype(dtype)
        return integers
    raw = series.tolist()
    cleaned = _clean_images_list(raw) if column in _LIST_COLUMNS else _clean_extension_list(raw)
    if cleaned is None:  # already clean: keep the values (copy-on-write keeps the input safe)
        return series.astype("object")
    return pd.Series(cleaned, index=series.index, dtype="object")


def clean_text(series: pd.Series[Any]) -> pd.Series[Any]:
    """A text column in clean form: trimmed (Unicode whitespace), ``""`` as NA, dtype ``string``."""
    text = series.astype("string")
    dtype = text.dtype
    if _pc is not None and isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        # The same trim as ``.str.strip()`` on these arrays, without the round trips.
        trimmed = _pc.utf8_trim_whitespace(_pa.array(text.array))
        empty = _pc.equal(trimmed, "")
        if _pc.any(empty).as_py():
            trimmed = _pc.if_else(empty, _pa.scalar(None, trimmed.type), trimmed)
        array = pd.arrays.ArrowStringArray(trimmed)
        return pd.Series(array, index=series.index, name=series.name, copy=False)
    stripped = text.str.strip()
    return stripped.mask(stripped == "")


def _clean_images_list(values: list[Any]) -> list[list[str]] | None:
    """``Images`` values in clean form, or None when they all are already (checked in bulk)."""
    if set(map(type, values)) <= {list} and _texts_are_clean(list(chain.from_iterable(values))):
        return None
    return [clean_images(v) for v in values]


def _clean_extension_list(values: list[Any]) -> list[dict[str, str]] | None:
    """``ExtensionColumn`` values in clean form, or None when they all are already."""
    if (
        set(map(type, values)) <= {dict}
        # Keys repeat from row to row: check each distinct key list once.
        and _texts_are_clean(list(chain.from_iterable(set(map(tuple, values)))))
        and _texts_are_clean(list(chain.from_iterable(map(dict.values, values))))
    ):
        return None
    return [clean_extension(v) for v in values]


def _texts_are_clean(items: list[Any]) -> bool:
    """Whether the items are all trimmed, non-empty text (checked at C speed).

    ``str.strip`` returns the very same string when there is nothing to trim.
    """
    try:
        return all(items) and all(map(is_, map(str.strip, items), items))
    except TypeError:  # an item that is not text
        return False


# --------------------------------------------------------------------------- comparison


def blank_mask(series: pd.Series[Any]) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """True where a clean column holds no value (NA, or an empty list or mapping)."""
    if series.name in _LIST_COLUMNS or series.name in _DICT_COLUMNS:
        lengths = np.fromiter(map(len, series.tolist()), dtype=np.int64, count=len(series))
        return np.asarray(lengths == 0, dtype=bool)
    return series.isna().to_numpy(dtype=bool)


def _floats(series: pd.Series[Any]) -> np.ndarray[Any, np.dtype[np.float64]]:
    return series.to_numpy(dtype="float64", na_value=np.nan)


def equal_mask(
    left: pd.Series[Any], right: pd.Series[Any], *, tolerance: float | None = None
) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Row by row (by position), whether two clean columns of the same name hold equal values.

    Floats are compared at their column's precision, or, when ``tolerance`` is given, equal
    when they differ by no more than it. Integers are compared exactly (or with the tolerance),
    text exactly (it is already trimmed), lists in order, mappings as mappings; missing equals
    missing.
    """
    column = str(left.name)
    if len(left) != len(right):
        raise ValueError(f"{column}: cannot compare columns of {len(left)} and {len(right)} rows")
    if column in _FLOAT_COLUMNS or column in _INT_COLUMNS:
        a, b = _floats(left), _floats(right)
        both_missing = np.isnan(a) & np.isnan(b)
        if tolerance is not None:
            with np.errstate(invalid="ignore"):
                close = np.abs(a - b) <= tolerance
            return np.asarray(close | both_missing, dtype=bool)
        if column in _FLOAT_COLUMNS:
            decimals = PRECISION.get(column, 6)
            a, b = np.round(a, decimals), np.round(b, decimals)
        return np.asarray((a == b) | both_missing, dtype=bool)
    if column in _LIST_COLUMNS or column in _DICT_COLUMNS:
        same = map(eq, left.tolist(), right.tolist())
        return np.fromiter(same, dtype=bool, count=len(left))
    if isinstance(left.dtype, pd.StringDtype) and isinstance(right.dtype, pd.StringDtype):
        # Compared in the arrays' own storage (NA where either side is missing).
        equal = (left.array == right.array).to_numpy(dtype=bool, na_value=False)
        both_na = left.isna().to_numpy(dtype=bool) & right.isna().to_numpy(dtype=bool)
        return np.asarray(equal | both_na, dtype=bool)
    a_obj = left.to_numpy(dtype=object, na_value=NONE)
    b_obj = right.to_numpy(dtype=object, na_value=NONE)
    # Object arrays compare element by element with Python's ==, so None == None is True.
    return np.asarray(a_obj == b_obj, dtype=bool)


def canonical_columns(frame: pd.DataFrame) -> dict[str, list[Any]]:
    """Every canonical column of a clean frame (from :func:`clean_frame`) as canonical values.

    The same values :func:`canonical_value` gives one by one, computed a column at a time.
    """
    return {column: canonical_column(frame, column) for column in schema.COLUMNS}


def canonical_column(frame: pd.DataFrame, column: str) -> list[Any]:
    """One canonical column of a clean frame (see :func:`canonical_columns`)."""
    series = frame[column]
    if column in _FLOAT_COLUMNS:
        rounded = np.round(_floats(series), PRECISION.get(column, 6)) + 0.0
        return [None if x != x else x for x in rounded.tolist()]
    if column in _INT_COLUMNS or column in _TEXT_COLUMNS:
        values: list[Any] = series.to_numpy(dtype=object, na_value=NONE).tolist()
        return values
    if column in _LIST_COLUMNS:
        return [v or None for v in series.tolist()]
    return [sorted([k, v] for k, v in d.items()) or None for d in series.tolist()]


# --------------------------------------------------------------------------- hashes

# Separators of the text part of a listing's encoding: between fields, between the items of a
# structured field, and between the keys and the values of a mapping. A value that holds one of
# them (or the escape character) is escaped, so that the encoding is unambiguous.
_FIELD_SEP, _ITEM_SEP, _PART_SEP, _ESCAPE = "\x00", "\x01", "\x02", "\x03"
_ROW_PREFIX = f"estatebot listing v{HASH_VERSION}\n".encode()


def _has_separator(text: str) -> bool:
    return _FIELD_SEP in text or _ITEM_SEP in text or _PART_SEP in text or _ESCAPE in text


def _escape(text: str) -> str:
    return (
        text.replace(_ESCAPE, _ESCAPE * 2)
        .replace(_FIELD_SEP, _ESCAPE + "0")
        .replace(_ITEM_SEP, _ESCAPE + "1")
        .replace(_PART_SEP, _ESCAPE + "2")
    )


def _canonical_numbers(series: pd.Series[Any] | None, column: str, n: int) -> np.ndarray[Any, Any]:
    """A numeric column as canonical doubles: rounded to its precision, one NaN for missing."""
    if series is None:
        return np.full(n, np.nan)
    values = _floats(series)
    if column in _FLOAT_COLUMNS:
        values = np.round(values, PRECISION.get(column, 6))
    values = values + 0.0  # -0.0 → 0.0
    return np.where(np.isnan(values), np.nan, values).astype("<f8", copy=False)


def _text_field(series: pd.Series[Any] | None, n: int, *, is_clean: bool) -> list[str]:
    """A text column's values for the encoding: trimmed, ``""`` for missing, escaped."""
    if series is None:
        return [""] * n
    text = series if is_clean else clean_text(series)
    values: list[str] = text.to_numpy(dtype=object, na_value="").tolist()
    if _has_separator("".join(values)):
        values = [_escape(v) for v in values]
    return values


def _images_field(images: list[list[str]]) -> list[str]:
    """Clean ``Images`` values for the encoding: items joined in their order."""
    if _has_separator("".join(chain.from_iterable(images))):
        return [_ITEM_SEP.join(map(_escape, items)) for items in images]
    return list(map(_ITEM_SEP.join, images))


def _in_key_order(
    mappings: list[dict[str, str]],
) -> tuple[list[tuple[str, ...]], dict[tuple[str, ...], tuple[str, ...]], list[tuple[str, ...]]]:
    """Clean ``ExtensionColumn`` mappings in key order, without sorting row by row.

    Returns each mapping's keys as given, each distinct key tuple in key order, and each
    mapping's values in key order. Rows are grouped by their keys as given (usually a few
    groups): each group's order is found once, and its values are read in that order.
    """
    keysets = list(map(tuple, mappings))
    ordered = {keys: tuple(sorted(keys)) for keys in set(keysets)}
    getters = {keys: itemgetter(*o) if len(o) > 1 else None for keys, o in ordered.items()}
    if len(getters) == 1:  # the usual case: every row has the same keys
        (getter,) = getters.values()
        if getter is not None:
            return keysets, ordered, list(map(getter, mappings))
        return keysets, ordered, list(map(tuple, map(dict.values, mappings)))
    values = [
        tuple(m.values()) if g is None else g(m)
        for g, m in zip(map(getters.__getitem__, keysets), mappings, strict=True)
    ]
    return keysets, ordered, values


def _extension_field(mappings: list[dict[str, str]]) -> list[str]:
    """Clean ``ExtensionColumn`` values for the encoding: keys in order, then their values."""
    keysets, ordered, values = _in_key_order(mappings)
    if _has_separator("".join(chain.from_iterable(ordered.values()))) or _has_separator(
        "".join(chain.from_iterable(values))
    ):
        escaped = [tuple(map(_escape, v)) for v in values]
        keys_text = {k: _ITEM_SEP.join(map(_escape, o)) for k, o in ordered.items()}
        return [
            keys_text[k] + _PART_SEP + _ITEM_SEP.join(v)
            for k, v in zip(keysets, escaped, strict=True)
        ]
    keys_text = {k: _ITEM_SEP.join(o) + _PART_SEP for k, o in ordered.items()}
    if len(keys_text) == 1:
        (prefix,) = keys_text.values()
        return list(map(prefix.__add__, map(_ITEM_SEP.join, values)))
    prefixes = map(keys_text.__getitem__, keysets)
    return list(map(str.__add__, prefixes, map(_ITEM_SEP.join, values)))


def _structured(series: pd.Series[Any] | None, column: str, n: int, *, is_clean: bool) -> Any:
    if series is None:
        return [[] for _ in range(n)] if column in _LIST_COLUMNS else [{} for _ in range(n)]
    raw = series.tolist()
    if is_clean:
        return raw
    cleaned = _clean_images_list(raw) if column in _LIST_COLUMNS else _clean_extension_list(raw)
    return raw if cleaned is None else cleaned


def frame_hashes(frame: pd.DataFrame, *, is_clean: bool = False) -> list[str]:
    """:func:`listing_hash` of every row of ``frame`` (any canonical-like frame), in row order.

    Each row is encoded as its canonical numbers (little-endian doubles, rounded to their
    column's precision, one NaN for every missing value) followed by its canonical text fields,
    and hashed with SHA-256 (hex). Columns other than the canonical ones are ignored; a missing
    column counts as missing. Pass ``is_clean=True`` for a frame from :func:`clean_frame`.
    """
    n = len(frame)
    if n == 0:
        return []
    numbers = np.empty((n, len(_NUMBER_COLUMNS)), dtype="<f8")
    fields: list[list[str]] = []
    for column in schema.COLUMNS:
        series = frame[column] if column in frame.columns else None
        if column in _INT_COLUMNS or column in _FLOAT_COLUMNS:
            numbers[:, _NUMBER_COLUMNS.index(column)] = _canonical_numbers(series, column, n)
        elif column in _TEXT_COLUMNS:
            fields.append(_text_field(series, n, is_clean=is_clean))
        elif column in _LIST_COLUMNS:
            fields.append(_images_field(_structured(series, column, n, is_clean=is_clean)))
        else:
            fields.append(_extension_field(_structured(series, column, n, is_clean=is_clean)))
    rows = numbers.view(np.dtype((np.void, numbers.shape[1] * 8))).ravel()
    row_numbers = cast(list[bytes], rows.tolist())
    texts = map(_FIELD_SEP.join, zip(*fields, strict=True))
    return [
        hashlib.sha256(_ROW_PREFIX + head + text.encode()).hexdigest()
        for head, text in zip(row_numbers, texts, strict=True)
    ]


def listing_hash(row: Mapping[Any, Any]) -> str:
    """A stable hash of one listing's canonical values (SHA-256, hex).

    Only the canonical columns count (others are ignored), a missing column counts as missing,
    and key order does not matter. Values are canonicalized with the comparison's precision,
    so a listing pulled again unchanged (``100.0`` vs ``100``, trailing spaces, ``""`` vs NA)
    hashes the same. It is :func:`frame_hashes` of a one-row frame, so the two always agree.
    """
    frame = pd.DataFrame(
        {column: pd.Series([row.get(column)], dtype="object") for column in schema.COLUMNS}
    )
    return frame_hashes(frame)[0]


def _listing_order(clean: pd.DataFrame) -> np.ndarray[Any, np.dtype[np.intp]] | None:
    """Positions of a clean frame's rows in ID order (then by key fields); None if in order."""
    ids = clean["ID"]
    if ids.notna().all() and ids.is_unique:
        order = np.argsort(_floats(ids), kind="stable")
    else:
        by = ["ID", "MLSNumber", "Url"]
        positioned = clean[by].reset_index(drop=True)
        order = positioned.sort_values(by, na_position="last", kind="stable").index.to_numpy()
    if np.array_equal(order, np.arange(len(clean))):
        return None
    return np.asarray(order, dtype=np.intp)


def _update_items(
    digest: Any, counts: np.ndarray[Any, Any], items: Callable[[], Iterable[str]]
) -> None:
    """Feed rows of text items: how many each row has, then every item, separated."""
    digest.update(counts.astype("<u4").tobytes())
    joined = _ITEM_SEP.join(items())
    total = int(counts.sum())
    if (
        joined.count(_ITEM_SEP) != max(total - 1, 0)
        or _FIELD_SEP in joined
        or _PART_SEP in joined
        or _ESCAPE in joined
    ):
        joined = _ITEM_SEP.join(map(_escape, items()))  # rare: an item holds a separator
    digest.update(joined.encode())


def _update_structured(
    digest: Any, column: str, values: list[Any], order: np.ndarray[Any, Any] | None
) -> None:
    """Feed a clean structured column (rows in ``order``) to the fingerprint."""
    if order is not None:
        values = [values[i] for i in order.tolist()]
    if column in _LIST_COLUMNS:
        counts = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        _update_items(digest, counts, lambda: chain.from_iterable(values))
        return
    # Mappings: the distinct key lists (in key order), which one each row has, then the values.
    keysets, ordered, in_order = _in_key_order(values)
    table = sorted(set(ordered.values()))
    number = {keys: n for n, keys in enumerate(table)}
    sizes = np.fromiter(map(len, table), dtype=np.int64, count=len(table))
    _update_items(digest, sizes, lambda: chain.from_iterable(table))
    if len(number) == 1:  # the usual case: every row has the same keys
        rows = np.zeros(len(keysets), dtype=np.int64)
    else:
        row_keys = map(number.__getitem__, map(ordered.__getitem__, keysets))
        rows = np.fromiter(row_keys, dtype=np.int64, count=len(keysets))
    digest.update(rows.astype("<u4").tobytes())
    _update_items(digest, sizes[rows] if len(rows) else rows, lambda: chain.from_iterable(in_order))


def _update_text_column(
    digest: Any, series: pd.Series[Any], order: np.ndarray[Any, Any] | None
) -> None:
    """Feed a clean text column: its values' UTF-8 lengths (0 when missing), then their bytes."""
    dtype = series.dtype
    if _pa is not None and isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        array = _pa.array(series.array)
        if isinstance(array, _pa.ChunkedArray):
            array = array.combine_chunks()
        if order is not None:
            array = array.take(_pa.array(order))
        filled = _pc.fill_null(array, "") if array.null_count else array
        filled = filled.cast(_pa.large_string())
        if len(filled) == 0:
            return
        buffers = filled.buffers()
        offsets = np.frombuffer(
            buffers[1], dtype="<i8", count=len(filled) + 1, offset=filled.offset * 8
        )
        digest.update(np.diff(offsets).astype("<u4").tobytes())
        if buffers[2] is not None:
            digest.update(memoryview(buffers[2])[int(offsets[0]) : int(offsets[-1])])
        return
    values = series.to_numpy(dtype=object, na_value="")
    if order is not None:
        values = values[order]
    encoded = list(map(str.encode, values.tolist()))
    digest.update(np.fromiter(map(len, encoded), dtype="<u4", count=len(encoded)).tobytes())
    digest.update(b"".join(encoded))


def frame_fingerprint(frame: pd.DataFrame, *, is_clean: bool = False) -> str:
    """A stable hash of a whole set of listings: canonical rows in ID order, then by key fields.

    Row order in ``frame`` does not matter, and values are compared canonically (a frame pulled
    again unchanged has the same fingerprint). Computed a column at a time: numbers as rounded
    doubles, text as UTF-8 lengths and bytes, ``Images`` as item counts and items,
    ``ExtensionColumn`` as its distinct key lists, which one each row has, and the values in key
    order. Pass ``is_clean=True`` for a frame that already comes from :func:`clean_frame`, to
    skip cleaning it again.
    """
    clean = frame if is_clean else clean_frame(frame)
    n = len(clean)
    order = _listing_order(clean)
    digest = hashlib.sha256(f"estatebot listings v{HASH_VERSION}\n{n} listings\n".encode())
    for column in schema.COLUMNS:
        digest.update(f"\n{column}\n".encode())
        series = clean[column]
        if column in _FLOAT_COLUMNS or column in _INT_COLUMNS:
            numbers = _canonical_numbers(series, column, n)
            digest.update((numbers if order is None else numbers[order]).tobytes())
        elif column in _TEXT_COLUMNS:
            _update_text_column(digest, series, order)
        else:
            _update_structured(digest, column, series.tolist(), order)
    return digest.hexdigest()


# --------------------------------------------------------------------------- keys


def key_values(series: pd.Series[Any], *, is_clean: bool = False) -> list[str | None]:
    """A key column as trimmed text, None where empty; integer IDs as their decimal digits.

    Pass ``is_clean=True`` for a column of a frame from :func:`clean_frame` (already trimmed).
    """
    if series.name in _INT_COLUMNS:
        return [None if v is None else str(v) for v in series.to_numpy(dtype=object, na_value=NONE)]
    texts = series if is_clean else clean_text(series)
    values: list[str | None] = texts.to_numpy(dtype=object, na_value=NONE).tolist()
    return values


def normalize_key(value: Any, key_column: str) -> str | None:
    """One key as text, the way :func:`key_values` writes it (``"12"`` for an ID of 12.0)."""
    if _is_missing(value):
        return None
    if key_column in _INT_COLUMNS:
        try:
            number = float(str(value).strip())
        except ValueError:
            return str(value).strip() or None
        return str(int(number)) if number.is_integer() else str(value).strip()
    return str(value).strip() or None
