"""The remote side of a plan: the pulled listings in clean form, with their structured columns
joined once, for the fingerprint.

A pulled frame is already clean almost everywhere. Its text columns are trimmed in Arrow; its
``Images`` and ``ExtensionColumn`` are checked clean and joined into one text each in the same
pass (:mod:`~estatebot.listings.sync.values.joined`), and those texts are what
:func:`~estatebot.listings.sync.values.hashing.frame_fingerprint` hashes. A column that is not
clean, or not of the usual shape, is cleaned item by item (:func:`~.tidy.clean_column`): the
clean frame is :func:`~.tidy.clean_frame`'s, value for value.
"""

from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import pandas as pd

from estatebot.listings import schema
from estatebot.listings.sync.values.joined import (
    JoinedItems,
    JoinedMappings,
    join_clean_images,
    join_clean_mappings,
)
from estatebot.listings.sync.values.tidy import (
    LIST_COLUMNS,
    TEXT_COLUMNS,
    clean_column,
    clean_texts,
)

__all__ = ["RemoteSide", "clean_remote"]

Joined = JoinedItems | JoinedMappings
_STRUCTURED = frozenset((*schema.LIST_COLUMNS, *schema.DICT_COLUMNS))


@dataclass(frozen=True)
class RemoteSide:
    """The remote listings in clean form (positional index) and their structured columns
    joined, rows in the same order (a column absent from ``joined`` is hashed item by item);
    ``values`` holds those columns' clean values as the lists read here, for the comparison."""

    clean: pd.DataFrame
    joined: dict[str, Joined]
    values: dict[str, list[Any]]


def clean_remote(remote: pd.DataFrame, pool: Executor | None = None) -> RemoteSide:
    """``clean_frame(remote)`` with a positional index, and its structured columns joined.

    With a ``pool``, the text columns are trimmed there (in Arrow, without the interpreter
    lock) while the structured columns are checked and joined here.
    """
    names = [c for c in schema.COLUMNS if c in TEXT_COLUMNS and c in remote.columns]
    texts = pool.submit(clean_texts, remote, names) if pool is not None else None
    columns: dict[str, pd.Series[Any]] = {}
    joined: dict[str, Joined] = {}
    values: dict[str, list[Any]] = {}
    for column in schema.COLUMNS:
        if column in _STRUCTURED and column in remote.columns:
            columns[column], values[column], found = _clean_structured(remote, column)
            if found is not None:
                joined[column] = found
        elif column not in names:
            columns[column] = clean_column(remote, column)
    columns.update(texts.result() if texts is not None else clean_texts(remote, names))
    # Assembled once (each assignment would copy); copy-on-write keeps the caller's apart.
    ordered = {column: columns[column] for column in schema.COLUMNS}
    clean = pd.DataFrame(ordered, index=remote.index, copy=False).reset_index(drop=True)
    return RemoteSide(clean, joined, values)


def _join(column: str, values: list[Any]) -> Joined | None:
    return join_clean_images(values) if column in LIST_COLUMNS else join_clean_mappings(values)


def _clean_structured(
    remote: pd.DataFrame, column: str
) -> tuple[pd.Series[Any], list[Any], Joined | None]:
    """A structured column in clean form, its values as a list, and its joined text (None: not
    of the usual shape)."""
    series = remote[column]
    raw = series.tolist()
    found = _join(column, raw)
    if found is not None:
        return series.astype("object"), raw, found  # clean already: kept as clean_frame keeps it
    cleaned = clean_column(remote, column)
    values = cleaned.tolist()
    return cleaned, values, _join(column, values)
