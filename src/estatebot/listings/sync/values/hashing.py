"""Hashes of listings that agree with the comparison rules: one per listing, one per set.

Hashes (scheme :data:`HASH_VERSION`) are built from whole columns, not value by value:
:func:`frame_hashes` encodes each listing as its canonical numbers (IEEE doubles) followed by its
canonical text fields (separated by control characters, escaped where a value holds one) and
hashes that with SHA-256; :func:`listing_hash` is :func:`frame_hashes` of a one-row frame, so the
two always agree, and :func:`hash_rows` the same of listings already held as columns (the text
of all rows joined in Arrow). :func:`frame_fingerprint` hashes a whole set of listings column by
column, in ID order, and takes the structured columns already joined
(:mod:`~estatebot.listings.sync.values.joined`) where the caller has them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any, cast

import numpy as np
import pandas as pd

from estatebot.listings import schema
from estatebot.listings.sync.values.compare import PRECISION
from estatebot.listings.sync.values.joined import JoinedItems, JoinedMappings
from estatebot.listings.sync.values.tidy import (
    FLOAT_COLUMNS,
    INT_COLUMNS,
    LIST_COLUMNS,
    NUMBER_COLUMNS,
    TEXT_COLUMNS,
    arrow_text,
    as_floats,
    clean_extension_list,
    clean_frame,
    clean_images_list,
    clean_text,
    pa,
    pc,
)

#: The version of the hash scheme of :func:`listing_hash` and :func:`frame_fingerprint`; hashes of
#: different versions never compare equal. Version 3: the fields List never returns count as
#: missing (see :func:`frame_hashes`).
HASH_VERSION = 3

# Hashes say what the service shows, so they leave out what it never shows: a pulled frame may
# hold AreaUnit and Location from the record of values sent, and a listing looked up alone
# does not; the two must hash alike.
_UNSEEN = frozenset(schema.UNLISTED_COLUMNS)


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
    # Always a copy: the floats of a column without missing values are the frame's own array.
    return _canonical_in_place(np.array(as_floats(series), dtype="<f8"), column)


def _canonical_floats(
    values: np.ndarray[Any, np.dtype[np.float64]] | None, column: str, n: int
) -> np.ndarray[Any, Any]:
    """:func:`_canonical_numbers` of a column given as floats (NaN where missing)."""
    if values is None:
        return np.full(n, np.nan)
    return _canonical_in_place(np.array(values, dtype="<f8"), column)


def _canonical_in_place(
    values: np.ndarray[Any, np.dtype[np.float64]], column: str
) -> np.ndarray[Any, Any]:
    """Floats of a column (an array of their own) made canonical in place (no copy per step: a
    million rows of sixteen columns would churn half a gigabyte): rounded to the column's
    precision, -0.0 as 0.0, every NaN the same NaN."""
    if column in FLOAT_COLUMNS:
        np.round(values, PRECISION.get(column, 6), out=values)
    values += 0.0  # -0.0 → 0.0
    values[np.isnan(values)] = np.nan
    return values.astype("<f8", copy=False)


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
        return [[] for _ in range(n)] if column in LIST_COLUMNS else [{} for _ in range(n)]
    raw = series.tolist()
    if is_clean:
        return raw
    cleaned = clean_images_list(raw) if column in LIST_COLUMNS else clean_extension_list(raw)
    return raw if cleaned is None else cleaned


@dataclass(frozen=True)
class ListingColumns:
    """``n`` clean listings as columns, for :func:`hash_rows`: numbers as floats (NaN where
    missing), text as Arrow arrays (null where missing), ``Images`` and ``ExtensionColumn`` as
    lists of clean values. A column left out counts as missing."""

    n: int
    floats: Mapping[str, np.ndarray[Any, np.dtype[np.float64]]]
    texts: Mapping[str, Any]
    structured: Mapping[str, list[Any]]


def frame_hashes(
    frame: pd.DataFrame,
    *,
    is_clean: bool = False,
    positions: Sequence[int] | np.ndarray[Any, np.dtype[np.integer[Any]]] | None = None,
) -> list[str]:
    """:func:`listing_hash` of every row of ``frame`` (any canonical-like frame), in row order.

    Each row is encoded as its canonical numbers (little-endian doubles, rounded to their
    column's precision, one NaN for every missing value) followed by its canonical text fields,
    and hashed with SHA-256 (hex). Columns other than the canonical ones, and those List never
    returns, are ignored; a missing column counts as missing. Pass ``is_clean=True`` for a frame
    from :func:`clean_frame`, and ``positions`` to hash those rows only (in that order).
    """
    chosen = None if positions is None else np.asarray(positions, dtype=np.intp)
    n = len(frame) if chosen is None else len(chosen)
    floats: dict[str, np.ndarray[Any, np.dtype[np.float64]]] = {}
    texts: dict[str, Any] = {}
    structured: dict[str, list[Any]] = {}
    for column in schema.COLUMNS:
        if column not in frame.columns or column in _UNSEEN:
            continue
        series = frame[column] if chosen is None else frame[column].take(chosen)
        if column in INT_COLUMNS or column in FLOAT_COLUMNS:
            floats[column] = as_floats(series)
        elif column in TEXT_COLUMNS:
            texts[column] = arrow_text(series if is_clean else clean_text(series))
        else:
            structured[column] = _structured(series, column, n, is_clean=is_clean)
    return hash_rows(ListingColumns(n, floats, texts, structured))


def hash_rows(columns: ListingColumns) -> list[str]:
    """:func:`listing_hash` of each listing given as clean columns (see :func:`frame_hashes`).

    The text fields of all rows are joined a column at a time in Arrow; only the hashing itself
    runs row by row.
    """
    n = columns.n
    if n == 0:
        return []
    numbers = np.empty((n, len(NUMBER_COLUMNS)), dtype="<f8")
    fields: list[Any] = []
    for column in schema.COLUMNS:
        unseen = column in _UNSEEN
        if column in INT_COLUMNS or column in FLOAT_COLUMNS:
            values = None if unseen else columns.floats.get(column)
            numbers[:, NUMBER_COLUMNS.index(column)] = _canonical_floats(values, column, n)
        elif column in TEXT_COLUMNS:
            fields.append(_text_array(None if unseen else columns.texts.get(column), n))
        else:
            found = None if unseen else columns.structured.get(column)
            if found is None:
                found = [[] for _ in range(n)] if column in LIST_COLUMNS else [{}] * n
            encoded = _images_field(found) if column in LIST_COLUMNS else _extension_field(found)
            fields.append(pa.array(encoded, type=pa.large_string()))
    rows = numbers.view(np.dtype((np.void, numbers.shape[1] * 8))).ravel()
    row_numbers = cast(list[bytes], rows.tolist())
    texts = pc.binary_join_element_wise(*fields, pa.scalar(_FIELD_SEP, pa.large_string()))
    buffers = texts.buffers()
    ends = np.frombuffer(buffers[1], dtype="<i8", count=n + 1, offset=texts.offset * 8).tolist()
    data = buffers[2].to_pybytes() if buffers[2] is not None else b""
    sha256 = hashlib.sha256
    return [
        sha256(_ROW_PREFIX + head + data[start:end]).hexdigest()
        for head, start, end in zip(row_numbers, ends[:-1], ends[1:], strict=True)
    ]


def _text_array(array: Any, n: int) -> Any:
    """A clean text column for the encoding, as Arrow: ``""`` for missing, escaped."""
    if array is None:
        return pa.array([""] * n, type=pa.large_string())
    if array.null_count:
        array = pc.fill_null(array, pa.scalar("", pa.large_string()))
    if _holds_separator(array):  # rare: escape value by value
        return pa.array([_escape(v) for v in array.to_pylist()], type=pa.large_string())
    return array


def _holds_separator(array: Any) -> bool:
    """Whether an Arrow text array holds a separator or the escape (bytes 0 to 3: in UTF-8,
    no other character's bytes are that low)."""
    buffers = array.buffers()
    if buffers[2] is None or not len(array):
        return False
    offsets = np.frombuffer(buffers[1], dtype="<i8", count=len(array) + 1, offset=array.offset * 8)
    data = np.frombuffer(buffers[2], dtype=np.uint8)[int(offsets[0]) : int(offsets[-1])]
    return bool(len(data)) and int(data.min()) <= 3


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
        order = np.argsort(as_floats(ids), kind="stable")
    else:
        by = ["ID", "MLSNumber", "Url"]
        positioned = clean[by].reset_index(drop=True)
        order = positioned.sort_values(by, na_position="last", kind="stable").index.to_numpy()
    if np.array_equal(order, np.arange(len(clean))):
        return None
    return np.asarray(order, dtype=np.intp)


def _separated(joined: str, total: int) -> bool:
    """Whether ``total`` items joined by the item separator hold no separator themselves."""
    return not (
        joined.count(_ITEM_SEP) != max(total - 1, 0)
        or _FIELD_SEP in joined
        or _PART_SEP in joined
        or _ESCAPE in joined
    )


def _update_items(
    digest: Any, counts: np.ndarray[Any, Any], items: Callable[[], Iterable[str]]
) -> None:
    """Feed rows of text items: how many each row has, then every item, separated."""
    digest.update(counts.astype("<u4").tobytes())
    joined = _ITEM_SEP.join(items())
    if not _separated(joined, int(counts.sum())):
        joined = _ITEM_SEP.join(map(_escape, items()))  # rare: an item holds a separator
    digest.update(joined.encode())


def _update_joined(digest: Any, joined: JoinedItems | JoinedMappings) -> bool:
    """Feed a structured column already joined (rows in frame order), as
    :func:`_update_structured` would; False, feeding nothing, when an item holds a separator
    (then the column is fed item by item)."""
    if isinstance(joined, JoinedItems):
        counts = joined.counts
        if not _separated(joined.text, int(counts.sum())):
            return False
        digest.update(counts.astype("<u4").tobytes())
        digest.update(joined.text.encode())
        return True
    total = joined.rows * len(joined.keys)
    table = _ITEM_SEP.join(joined.ordered)
    if not (_separated(table, len(joined.keys)) and _separated(joined.values, total)):
        return False
    # One key list (every row has the same keys): its size and keys, each row's number (0),
    # then each row's size and the values in key order.
    digest.update(np.array([len(joined.keys)], dtype="<u4").tobytes())
    digest.update(table.encode())
    digest.update(np.zeros(joined.rows, dtype="<u4").tobytes())
    digest.update(joined.counts.astype("<u4").tobytes())
    digest.update(joined.values.encode())
    return True


def _update_structured(
    digest: Any, column: str, values: list[Any], order: np.ndarray[Any, Any] | None
) -> None:
    """Feed a clean structured column (rows in ``order``) to the fingerprint."""
    if order is not None:
        values = [values[i] for i in order.tolist()]
    if column in LIST_COLUMNS:
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
    if pa is not None and isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        array = pa.array(series.array)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        if order is not None:
            array = array.take(pa.array(order))
        filled = pc.fill_null(array, "") if array.null_count else array
        filled = filled.cast(pa.large_string())
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


def frame_fingerprint(
    frame: pd.DataFrame,
    *,
    is_clean: bool = False,
    joined: Mapping[str, JoinedItems | JoinedMappings] | None = None,
) -> str:
    """A stable hash of a whole set of listings: canonical rows in ID order, then by key fields.

    Row order in ``frame`` does not matter, and values are compared canonically (a frame pulled
    again unchanged has the same fingerprint). Computed a column at a time: numbers as rounded
    doubles, text as UTF-8 lengths and bytes, ``Images`` as item counts and items,
    ``ExtensionColumn`` as its distinct key lists, which one each row has, and the values in key
    order. Pass ``is_clean=True`` for a frame that already comes from :func:`clean_frame`, to
    skip cleaning it again, and ``joined`` with its structured columns already joined
    (:mod:`~estatebot.listings.sync.values.joined`, rows in the frame's order) to hash those
    texts as they are instead of joining the items again.
    """
    joined = joined if is_clean and joined is not None else {}
    clean = frame if is_clean else clean_frame(frame)
    n = len(clean)
    order = _listing_order(clean)
    digest = hashlib.sha256(f"estatebot listings v{HASH_VERSION}\n{n} listings\n".encode())
    for column in schema.COLUMNS:
        if column in _UNSEEN:
            continue
        digest.update(f"\n{column}\n".encode())
        series = clean[column]
        if column in FLOAT_COLUMNS or column in INT_COLUMNS:
            numbers = _canonical_numbers(series, column, n)
            digest.update((numbers if order is None else numbers[order]).tobytes())
        elif column in TEXT_COLUMNS:
            _update_text_column(digest, series, order)
        elif order is None and column in joined and _update_joined(digest, joined[column]):
            continue
        else:
            _update_structured(digest, column, series.tolist(), order)
    return digest.hexdigest()
