"""Text sources looked up in the tables of the export rules, by normalized spelling.

An unknown value found by :func:`choose` is a row error naming its cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings.sheet.fields.cell_types import BoolArray, ObjectArray
from estatebot.listings.sheet.fields.inputs import Inputs
from estatebot.listings.sheet.fields.prepared import STRING
from estatebot.listings.sheet.fields.sources import SOURCES
from estatebot.listings.sheet.issues import Issues


def normalized(text: pd.Series) -> pd.Series:
    """Text reduced for table lookup (see :func:`.rules.normalize_value`)."""
    return text.str.normalize("NFKC").str.lower().str.replace(r"[^0-9a-z]+", "", regex=True)


def lookup(text: pd.Series, table: Mapping[str, Any]) -> tuple[list[Any], BoolArray]:
    """Each text's entry in ``table`` (by normalized spelling) and where a text is unknown."""
    mapped = lookup_array(text, table)
    unknown = text.notna().to_numpy(dtype=bool) & (mapped == None)  # noqa: E711 (elementwise)
    return mapped.tolist(), unknown


def lookup_array(text: pd.Series, table: Mapping[str, Any]) -> ObjectArray:
    """Each text's entry in ``table`` (by normalized spelling; None for none), as an array.

    A column repeats a few values: each distinct text is normalized and looked up once.
    """
    codes, uniques = pd.factorize(text)
    spellings = normalized(pd.Series(uniques, dtype=STRING)).tolist()
    found = np.empty(len(spellings) + 1, dtype=object)  # the last: None, for a missing text
    found[: len(spellings)] = [table.get(s) for s in spellings]
    mapped: ObjectArray = found[codes]
    return mapped


def choose(
    inputs: Inputs,
    issues: Issues,
    source: str,
    table: Mapping[str, Any],
    *,
    what: str,
    default: Any = None,
) -> tuple[list[Any], BoolArray]:
    """Look a text source up in ``table``; unknown values are row errors."""
    n = inputs.n
    text = inputs.get(source)
    if text is None:
        return [default] * n, np.zeros(n, dtype=bool)
    mapped, unknown = lookup(text, table)
    issues.add_cells(
        inputs,
        source,
        unknown,
        field=SOURCES[source].field,
        message=f"is not a known {what}",
    )
    return [default if m is None else m for m in mapped], unknown
