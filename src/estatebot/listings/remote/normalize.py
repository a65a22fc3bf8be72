"""List records → the canonical listing frame.

RealEstateList returns every listing field as text, in several serializations (see the addendum's
decisions table): numbers as plain digits or dressed with currency symbols, thousands separators
and units; ``SaleType`` as display text; ``Images`` and ``ExtensionColumn`` as JSON text or looser
forms; ``LATITUDE``/``LONGITUDE`` under wire names; and ``Price``/``Area`` derived from other
fields. :func:`normalize_records` reads them all into the frame of :mod:`.schema`.

The records are read into columns by pyarrow, block by block of rows in one C pass (see
:func:`_columns_by_struct`), and each field is then parsed as a whole column (see
:mod:`.parsers`): no Python loop per value except to build the ``Images`` lists. A value
that cannot be read becomes NA and is reported in :attr:`NormalizeResult.problems`; nothing
raises on bad data and nothing is guessed.

Duplicate ``ID`` values are kept as they come: pulling de-duplicates listings, not this module.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings import schema
from estatebot.listings.remote.parsers import (
    Parsed,
    arrow_module,
    arrow_text,
    gc_paused,
    parse_enum,
    parse_extensions,
    parse_images,
    parse_numbers,
    parse_text,
    text_array,
)

#: Columns of :attr:`NormalizeResult.problems`, one row per value that could not be read.
PROBLEM_COLUMNS: tuple[str, ...] = ("ID", "MLSNumber", "column", "value", "message")

#: Prefix of the columns that ``expand_extensions=True`` adds, one per extension key.
EXTENSION_PREFIX = "ext."

#: Spellings accepted for each enum column besides its values (matched ignoring case and
#: punctuation, so ``For-Rent`` and `` for  rent `` are ``for rent``).
ENUM_ALIASES: dict[str, dict[str, str]] = {
    "SaleType": {
        "for sale": "for_sale",
        "sale": "for_sale",
        "for rent": "for_rent",
        "rent": "for_rent",
        "rental": "for_rent",
        "for lease": "for_rent",
        "lease": "for_rent",
    },
    "AreaUnit": {
        "sqft": "Square Feet",
        "sq ft": "Square Feet",
        "square foot": "Square Feet",
        "ft2": "Square Feet",
        "ft²": "Square Feet",
        "feet": "Square Feet",
        "sqm": "Square Meters",
        "sq m": "Square Meters",
        "square metres": "Square Meters",
        "square meter": "Square Meters",
        "square metre": "Square Meters",
        "m2": "Square Meters",
        "m²": "Square Meters",
        "meters": "Square Meters",
    },
}

# Canonical columns that List returns under another name; the canonical name wins when both
# are present.
_WIRE_NAMES: dict[str, str] = {"Latitude": "LATITUDE", "Longitude": "LONGITUDE"}
# List's derived fields: Price is the sale or rent price by SaleType, Area the building area.
_PRICE_TARGETS: dict[str, str] = {"for_sale": "SalePrice", "for_rent": "RentPrice"}


class NormalizeWarning(UserWarning):
    """Some values could not be read; they are NA and listed in ``NormalizeResult.problems``."""


@dataclass(frozen=True)
class NormalizeResult:
    """The canonical frame read from List records, and the values that could not be read.

    ``frame`` has the columns of :data:`schema.COLUMNS` with their dtypes (then ``ext.<Key>``
    columns when asked for). ``problems`` has the columns of :data:`PROBLEM_COLUMNS`, one row per
    unreadable value, indexed by the row's label in ``frame``; ``column`` names the field as it
    came in (``LATITUDE``, ``Price``), ``value`` is the value as text.
    """

    frame: pd.DataFrame
    problems: pd.DataFrame = field(repr=False)

    @property
    def counts(self) -> dict[str, int]:
        """The number of problems per input field, most first."""
        counts = self.problems["column"].value_counts()
        return {str(name): int(count) for name, count in counts.items()}

    def summary(self) -> str:
        """One line: rows read and problems by field."""
        rows = f"{len(self.frame)} listings"
        if not len(self.problems):
            return f"{rows}, every value read"
        by_column = ", ".join(f"{name} {count}" for name, count in self.counts.items())
        return f"{rows}, {len(self.problems)} values unreadable or missing (now NA): {by_column}"


def normalize_records(
    records: Iterable[Mapping[str, Any]] | pd.DataFrame,
    *,
    expand_extensions: bool = False,
) -> NormalizeResult:
    """Read List records (or a frame of them) into the canonical listing frame.

    Accepts every serialization the addendum lists: numbers as text with currency, thousands
    separators, units or absent markers; ``SaleType`` display text; ``Images`` as JSON, comma- or
    pipe-separated text; ``ExtensionColumn`` as JSON or ``key: value`` pairs; ``LATITUDE`` and
    ``LONGITUDE``; ``Price`` (into ``SalePrice`` or ``RentPrice`` by ``SaleType``) and ``Area``
    (into ``BuildingArea``), each only where the target is empty. Canonical field names are read
    too. Unknown fields are ignored. Rows keep their order (and a frame's index); duplicate IDs are
    kept. The input is never changed.

    With ``expand_extensions=True``, each extension key also gets a ``string`` column
    ``ext.<Key>`` after the canonical ones.

    Emits one :class:`NormalizeWarning` when some values could not be read.
    """
    with gc_paused():
        source = _Source(records)
        columns = _parse_columns(source)
        frame = pd.DataFrame(columns, index=pd.RangeIndex(source.n), copy=False)
        problems = _problem_frame(source.found, frame)
        if expand_extensions:
            frame = pd.concat([frame, _extension_columns(frame["ExtensionColumn"])], axis=1)
    frame.index = source.index
    problems.index = pd.Index(source.index[problems.index.to_numpy(int)], name="row")
    result = NormalizeResult(frame, problems)
    if len(problems):
        warnings.warn(result.summary(), NormalizeWarning, stacklevel=2)
    return result


# --------------------------------------------------------------------------- reading columns


def _parse_columns(source: _Source) -> dict[str, pd.Series]:
    """Every canonical column parsed, two columns at a time, then the derived fields applied.

    Much of a column's parsing runs in pyarrow kernels, which release the interpreter lock, and
    the two JSON columns spend their time building Python objects, which holds it: parsing them
    side by side keeps both cores busy. Problems are gathered in column order, as if sequential.
    """
    names = [*schema.COLUMNS, *_DERIVED]
    if source.n < _THREADED_ROWS or _PARSE_THREADS < 2:
        parsed = {name: _parse_column(source, name) for name in names}
    else:
        order = sorted(names, key=lambda name: name not in _SLOW_COLUMNS)
        with ThreadPoolExecutor(max_workers=_PARSE_THREADS) as pool:
            futures = {name: pool.submit(_parse_column, source, name) for name in order}
            parsed = {name: futures[name].result() for name in names}
    for _, found in parsed.values():
        source.found.extend(found)
    columns = {
        column: values if values is not None else _empty_column(column, source.n)
        for column, (values, _) in parsed.items()
        if column not in _DERIVED
    }
    _fill_derived(columns, price=parsed["Price"][0], area=parsed["Area"][0])
    return columns


def _parse_column(source: _Source, column: str) -> tuple[pd.Series | None, list[_Found]]:
    parser = _parser_for(column) if column not in _DERIVED else parse_numbers
    values, found = source.read(column, parser)
    if column in _WIRE_NAMES:
        wire, wire_found = source.read(_WIRE_NAMES[column], parser)
        found = found + wire_found
        values = wire if values is None else values if wire is None else values.fillna(wire)
    return values, found


# Parsed first, so the other columns' pyarrow work runs beside their Python work.
_SLOW_COLUMNS = frozenset({"Images", "ExtensionColumn"})
# List's derived fields, read as numbers beside the canonical columns (see _fill_derived).
_DERIVED = ("Price", "Area")


def _usable_cpus() -> int:
    # The CPUs this process may run on: a container may allow fewer than the machine has.
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


_PARSE_THREADS = min(2, _usable_cpus())
# Below this many rows, starting threads costs more than they save.
_THREADED_ROWS = 50_000

_Parser = Callable[[pd.Series], Parsed]

# Every field name read from the input: canonical names, wire names and derived fields.
_INPUT_FIELDS: frozenset[str] = frozenset((*schema.COLUMNS, *_WIRE_NAMES.values(), "Price", "Area"))


@dataclass
class _Found:
    """The problems of one input field, with its raw values to quote them."""

    name: str
    parsed: Parsed
    raw: pd.Series


class _Source:
    """The input one field at a time, with a positional index; collects parse problems."""

    def __init__(self, records: Iterable[Mapping[str, Any]] | pd.DataFrame) -> None:
        self.found: list[_Found] = []
        if isinstance(records, pd.DataFrame):
            self.n = len(records)
            self.index: pd.Index = records.index
            # reset_index shares the data (copy-on-write): the caller's frame is never changed.
            frame = records.reset_index(drop=True)
            self._columns = {
                str(name): frame[name] for name in frame.columns if name in _INPUT_FIELDS
            }
        else:
            rows = records if isinstance(records, Sequence) else list(records)
            self.n = len(rows)
            self.index = pd.RangeIndex(self.n)
            self._columns = _columns_of(rows)

    def read(self, name: str, parser: _Parser) -> tuple[pd.Series | None, list[_Found]]:
        """The field ``name`` parsed (None when no record has it), and its problems if any."""
        raw = self._columns.get(name)
        if raw is None:
            return None, []
        parsed = parser(raw)
        return parsed.values, [_Found(name, parsed, raw)] if len(parsed.problems) else []


def _columns_of(records: Sequence[Mapping[str, Any]]) -> dict[str, pd.Series]:
    """The known fields of ``records`` as Series, one per field that some record has."""
    if not records:
        return {}
    names = list(records[0])
    # Records nearly always share one set of fields: equal sizes and no KeyError prove it.
    if len(names) > 1 and sum(map(len, records)) == len(records) * len(names):
        try:
            columns = _columns_by_struct(records, names)
            if columns is not None:
                return columns
            return _columns_by_blocks(records, names)
        except KeyError:
            pass
    present: set[str] = set()
    for record in records:
        present.update(record)
    return {
        name: pd.Series([record.get(name) for record in records], dtype=object)
        for name in present & _INPUT_FIELDS
    }


# Rows per block: small enough for its values to be still in the CPU cache when converted.
_BLOCK_ROWS = 16_384
# Fields parsed value by value in Python anyway: converting them to arrow text first is waste.
_PYTHON_FIELDS = frozenset({"ExtensionColumn"})


def _columns_by_struct(
    records: Sequence[Mapping[str, Any]], names: list[str]
) -> dict[str, pd.Series] | None:
    """Records of equal size whose fields are those of the first one, in one C pass per block.

    pyarrow reads a block of dicts into a struct array, row by row in C (each record is visited
    once, while it is in the cache): a ``string`` child per known field that is text in the first
    record, a ``float64`` child per known field that is a Python int or float there. Other fields
    are taken as Python objects in one more pass. None when some field holds something its child
    cannot (a number in a text field, say): the caller then reads the records another way.
    KeyError when a record lacks a field of the first one.
    """
    pa = arrow_module()
    if pa is None:
        return None
    first = records[0]
    text_names = [name for name in names if name in _INPUT_FIELDS and type(first[name]) is str]
    number_names = [
        name for name in names if name in _INPUT_FIELDS and type(first[name]) in (int, float)
    ]
    struct = pa.struct(
        [(name, pa.large_string()) for name in text_names]
        + [(name, pa.float64()) for name in number_names]
    )
    blocks = []
    try:
        for start in range(0, len(records), _BLOCK_ROWS):
            blocks.append(
                pa.array(
                    records[start : start + _BLOCK_ROWS],
                    type=struct,
                    from_pandas=True,
                    memory_pool=pa.system_memory_pool(),
                )
            )
    except (TypeError, ValueError, OverflowError):  # ArrowTypeError/ArrowInvalid too
        return None
    children = {
        name: pa.chunked_array([block.field(i) for block in blocks], type=struct[i].type)
        for i, name in enumerate([*text_names, *number_names])
    }
    # A field that a record lacks reads as null, like None: look at the rows with a null.
    nulls = np.zeros(len(records), dtype=bool)
    for child in children.values():
        if child.null_count:
            nulls |= child.is_null().to_numpy(zero_copy_only=False)
    for position in np.flatnonzero(nulls).tolist():
        record = records[position]
        for name in children:
            if name not in record:
                raise KeyError(name)
    columns = {name: pd.Series(text_array([children[name]]), copy=False) for name in text_names}
    # Fields pyarrow did not read, or not exactly; unknown fields must be there too.
    other_names = [name for name in names if name not in children]
    for name in number_names:
        numbers = _exact_numbers(children[name], records, name)
        if numbers is None:
            other_names.append(name)
        else:
            columns[name] = numbers
    if other_names:
        getter = itemgetter(*other_names)
        rows = map(getter, records)
        count = len(records) * len(other_names)
        values = chain.from_iterable(rows) if len(other_names) > 1 else rows
        matrix = np.fromiter(values, dtype=object, count=count)
        matrix = matrix.reshape(len(records), len(other_names))
        for position, name in enumerate(other_names):
            if name in _INPUT_FIELDS:
                columns[name] = pd.Series(matrix[:, position].copy(), dtype=object, copy=False)
    return columns


# Doubles that are exact integers up to here; larger ints may have been rounded.
_EXACT_INT = 2.0**53


def _exact_numbers(child: Any, records: Sequence[Mapping[str, Any]], name: str) -> pd.Series | None:
    """A ``float64`` child as ``Float64`` (NaN and nulls NA), or None when it may not be exact.

    pyarrow also reads a bool as 1.0 or 0.0 and rounds ints beyond 2**53: the rows holding such
    a value are looked at in Python, and anything but a float or a small int there means None.
    """
    data = child.to_numpy(zero_copy_only=False)
    data = data if data.flags.writeable else data.copy()
    suspects = np.flatnonzero((data == 0.0) | (data == 1.0) | (np.abs(data) > _EXACT_INT))
    for position in suspects.tolist():
        value = records[position][name]
        if type(value) is not float and not (type(value) is int and abs(value) <= _EXACT_INT):
            return None
    array = pd.arrays.FloatingArray(data, np.isnan(data))
    return pd.Series(array, copy=False)


def _columns_by_blocks(
    records: Sequence[Mapping[str, Any]], names: list[str]
) -> dict[str, pd.Series]:
    """Records that all have the fields ``names``, read block by block (KeyError if not).

    Reading a block of records row-wise (each record is visited once) and turning its text
    columns into ``string`` arrays while those values are fresh in the cache is several times
    faster than one pass over all records per field. Columns that are not all text stay objects.
    """
    getter = itemgetter(*names)
    wanted = [(position, name) for position, name in enumerate(names) if name in _INPUT_FIELDS]
    parts: dict[str, list[Any]] = {name: [] for _, name in wanted}
    for start in range(0, len(records), _BLOCK_ROWS):
        chunk = records[start : start + _BLOCK_ROWS]
        block = np.fromiter(
            chain.from_iterable(map(getter, chunk)), dtype=object, count=len(chunk) * len(names)
        ).reshape(len(chunk), len(names))
        for position, name in wanted:
            values = block[:, position]
            text = None if name in _PYTHON_FIELDS else arrow_text(values)
            parts[name].append(text if text is not None else values.copy())
    columns: dict[str, pd.Series] = {}
    for name, chunks in parts.items():
        objects = [isinstance(part, np.ndarray) for part in chunks]
        if not any(objects):
            columns[name] = pd.Series(text_array(chunks), copy=False)
        elif all(objects):
            columns[name] = pd.Series(np.concatenate(chunks), dtype=object, copy=False)
        else:  # text in some blocks only: read that field again, as objects
            columns[name] = pd.Series([record[name] for record in records], dtype=object)
    return columns


def _parser_for(column: str) -> _Parser:
    if column in schema.INT_COLUMNS:
        return partial(parse_numbers, integer=True)
    if column in schema.FLOAT_COLUMNS:
        return parse_numbers
    if column in schema.ENUM_VALUES:
        return partial(
            parse_enum,
            allowed=schema.ENUM_VALUES[column],
            aliases=ENUM_ALIASES.get(column, {}),
        )
    if column in schema.LIST_COLUMNS:
        return parse_images
    if column in schema.DICT_COLUMNS:
        return parse_extensions
    return parse_text


def _empty_column(column: str, n: int) -> pd.Series:
    index = pd.RangeIndex(n)
    if column in schema.LIST_COLUMNS:
        return pd.Series([[] for _ in range(n)], index=index, dtype=object)
    if column in schema.DICT_COLUMNS:
        return pd.Series([{} for _ in range(n)], index=index, dtype=object)
    empty: pd.Series = pd.Series(pd.NA, index=index, dtype=schema.DTYPES[column])
    return empty


def _fill_derived(
    columns: dict[str, pd.Series], *, price: pd.Series | None, area: pd.Series | None
) -> None:
    """Fill SalePrice/RentPrice from Price and BuildingArea from Area, only where empty."""
    if price is not None:
        sale_type = columns["SaleType"]
        for kind, target in _PRICE_TARGETS.items():
            rows = (sale_type == kind).fillna(False).to_numpy(bool)
            fill = rows & columns[target].isna().to_numpy(bool)
            columns[target] = columns[target].mask(fill, price)
    if area is not None:
        columns["BuildingArea"] = columns["BuildingArea"].fillna(area)


# --------------------------------------------------------------------------- problems


def _problem_frame(found: list[_Found], frame: pd.DataFrame) -> pd.DataFrame:
    """One row per unreadable value, by row position then field, plus rows that lack an ID."""
    parts: list[pd.DataFrame] = []
    for item in found:
        positions = item.parsed.problems.index.to_numpy(int)
        parts.append(
            pd.DataFrame(
                {
                    "column": item.name,
                    "value": _as_text(item.raw.iloc[positions]),
                    "message": item.parsed.problems.to_numpy(object),
                },
                index=positions,
            )
        )
    # An ID that is NA without a problem of its own was not given at all.
    unreadable_ids = [item.parsed.problems.index for item in found if item.name == "ID"]
    no_id = frame["ID"].isna().to_numpy(bool, copy=True)
    if unreadable_ids:
        no_id[unreadable_ids[0].to_numpy(int)] = False
    missing = np.flatnonzero(no_id)
    if len(missing):
        parts.append(
            pd.DataFrame({"column": "ID", "value": None, "message": "missing ID"}, index=missing)
        )
    if not parts:
        positions = np.array([], dtype=int)
        body = pd.DataFrame({"column": [], "value": [], "message": []}, index=positions)
    else:
        body = pd.concat(parts)
        body = body.iloc[np.argsort(body.index.to_numpy(int), kind="stable")]
    rows = body.index.to_numpy(int)
    return pd.DataFrame(
        {
            "ID": frame["ID"].array.take(rows),
            "MLSNumber": frame["MLSNumber"].array.take(rows),
            "column": body["column"].to_numpy(object),
            "value": body["value"].to_numpy(object),
            "message": body["message"].to_numpy(object),
        },
        index=rows,
    ).astype(
        {
            "ID": schema.DTYPES["ID"],
            "MLSNumber": schema.DTYPES["MLSNumber"],
            "column": "string",
            "value": "string",
            "message": "string",
        }
    )


def _as_text(values: pd.Series) -> np.ndarray[Any, np.dtype[np.object_]]:
    """Raw values as text for the report; missing ones stay missing."""
    return np.array([None if _missing(value) else str(value) for value in values], dtype=object)


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


# --------------------------------------------------------------------------- extensions


def _extension_columns(extensions: pd.Series) -> pd.DataFrame:
    """One ``string`` column ``ext.<Key>`` per extension key, in order of first appearance."""
    expanded = pd.DataFrame.from_records(extensions.tolist(), index=extensions.index)
    expanded.columns = [f"{EXTENSION_PREFIX}{key}" for key in expanded.columns]
    return expanded.astype(pd.StringDtype())
