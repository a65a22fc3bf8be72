"""List records (dicts, or a frame of them) → one raw Series per known field.

Records nearly always share one set of fields, so they are read a block at a time: pyarrow's
struct conversion where it can, plain Python lists of a block where it cannot, and a field by
field walk for records of different shapes. Parse problems are collected per field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings import schema
from estatebot.listings.remote.arrow import arrow_module, arrow_text, text_array
from estatebot.listings.remote.parsers import (
    Parsed,
)

Parser = Callable[[pd.Series], Parsed]

# Every field name read from the input: canonical names, wire names and derived fields.
#: Canonical columns that List returns under another name; the canonical name wins when both
#: are present.
WIRE_NAMES: dict[str, str] = {"Latitude": "LATITUDE", "Longitude": "LONGITUDE"}

_INPUT_FIELDS: frozenset[str] = frozenset((*schema.COLUMNS, *WIRE_NAMES.values(), "Price", "Area"))


@dataclass
class Found:
    """The problems of one input field, with its raw values to quote them."""

    name: str
    parsed: Parsed
    raw: pd.Series


class Source:
    """The input one field at a time, with a positional index; collects parse problems."""

    def __init__(self, records: Iterable[Mapping[str, Any]] | pd.DataFrame) -> None:
        self.found: list[Found] = []
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

    def read(self, name: str, parser: Parser) -> tuple[pd.Series | None, list[Found]]:
        """The field ``name`` parsed (None when no record has it), and its problems if any."""
        raw = self._columns.get(name)
        if raw is None:
            return None, []
        parsed = parser(raw)
        return parsed.values, [Found(name, parsed, raw)] if len(parsed.problems) else []


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
