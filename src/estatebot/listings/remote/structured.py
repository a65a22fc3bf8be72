"""The structured columns of List records: ``Images`` (a JSON array, or URLs split by commas
or pipes) and ``ExtensionColumn`` (JSON key/value pairs, or ``key: value`` lines).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import infer_dtype

from estatebot.listings.remote.arrow import (
    arrow_chunks,
    arrow_module,
    pyarrow_compute,
    string_values,
)
from estatebot.listings.remote.parsed import (
    STRING,
    Parsed,
    Unreadable,
    convert_one,
    convert_rows,
    gc_paused,
    no_problems,
)

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
            raise Unreadable("not valid JSON") from None
        return _urls_from_object(data)
    return [part.strip() for part in _URL_SEPARATORS.split(text) if part.strip()]


def _urls_from_object(data: Any) -> list[str]:
    if isinstance(data, str):
        return _urls_from_text(data.strip()) if data.strip() else []
    if not isinstance(data, list | tuple | np.ndarray) or not all(
        isinstance(item, str) for item in data
    ):
        raise Unreadable("not a list of URLs")
    return [item.strip() for item in data if item.strip()]


def parse_images(raw: pd.Series) -> Parsed:
    """``Images`` as a ``list[str]`` per row (empty when none).

    Accepts JSON array text (the decided form), comma- or pipe-separated URLs, a single URL, and
    lists. URLs are trimmed and empty ones dropped. Invalid JSON → ``[]`` with a problem.
    """
    if raw.dtype == object and infer_dtype(raw, skipna=True) not in ("string", "empty"):
        return convert_rows(raw, _urls_from_text, _urls_from_object, list)  # Python values
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
        parsed = convert_rows(text[others], _urls_from_text, _urls_from_object, list)
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
        pc = pyarrow_compute()
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
    raise Unreadable("extension values must be text or numbers")


def _extensions_from_object(data: Any) -> dict[str, str]:
    if isinstance(data, str):
        return _extensions_from_text(data.strip()) if data.strip() else {}
    if isinstance(data, Mapping):
        return {str(key): _as_text(value) for key, value in data.items()}
    if not isinstance(data, list | tuple):
        raise Unreadable("not a list of {Key, value} objects")
    out: dict[str, str] = {}
    for item in data:
        if not isinstance(item, Mapping):
            raise Unreadable("not a list of {Key, value} objects")
        # The decided form says "value"; some serializers write "Value" (or "key").
        names = {str(name).casefold(): name for name in item}
        if "key" not in names:
            raise Unreadable("an item has no Key")
        value = item[names["value"]] if "value" in names else None
        out[str(item[names["key"]])] = _as_text(value)
    return out


def _extensions_from_text(text: str) -> dict[str, str]:
    if text[0] in "[{":
        try:
            data = json.loads(text)
        except ValueError:
            raise Unreadable("not valid JSON") from None
        return _extensions_from_object(data)
    out: dict[str, str] = {}
    for part in _PAIR_SEPARATORS.split(text):
        if not part.strip():
            continue
        key, colon, value = part.partition(":")
        if not colon or not key.strip():
            raise Unreadable("neither JSON nor 'key: value' pairs")
        out[key.strip()] = value.strip()
    return out


def parse_extensions(raw: pd.Series) -> Parsed:
    """``ExtensionColumn`` as a ``dict[str, str]`` per row (empty when none).

    Accepts the decided JSON text ``[{"Key": "Pool", "value": "Yes"}]`` (``"Value"`` too), a JSON
    object ``{"Pool": "Yes"}``, ``key: value`` pairs separated by ``;`` or new lines, and dicts or
    lists of items. Values become text. Anything unreadable → ``{}`` with a problem.
    """
    if raw.dtype == STRING:
        return _extensions_of_text(raw)
    # Extension texts repeat a lot across listings: parse each distinct text once.
    return convert_rows(raw, _extensions_from_text, _extensions_from_object, dict, reuse=dict.copy)


def _extensions_of_text(text: pd.Series) -> Parsed:
    """A ``string`` column of extension texts: each distinct text parsed once, then copied.

    Every row gets its own dict (a copy), so editing one row never changes another.
    """
    codes, uniques = pd.factorize(text)
    parsed = [
        convert_one(item, _extensions_from_text, _extensions_from_object, dict)
        for item in uniques.tolist()
    ]
    # The last one stands for NA (code -1).
    templates = _object_array([value for value, _ in parsed] + [{}])
    with gc_paused():
        values = np.fromiter(map(dict.copy, templates[codes]), dtype=object, count=len(codes))
    bad = [code for code, (_, error) in enumerate(parsed) if error is not None]
    if not bad:
        problems = no_problems()
    else:
        rows = np.flatnonzero(np.isin(codes, bad))
        messages = np.array([error for _, error in parsed], dtype=object)[codes[rows]]
        problems = pd.Series(messages, index=text.index[rows], dtype=STRING)
    return Parsed(pd.Series(values, index=text.index, dtype=object, copy=False), problems)
