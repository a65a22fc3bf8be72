"""Text sources looked up in the tables of the export rules, by normalized spelling.

An unknown value found by :func:`choose` is a row error naming its cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings.sheet.fields.cell_types import BoolArray
from estatebot.listings.sheet.fields.inputs import Inputs
from estatebot.listings.sheet.fields.sources import SOURCES
from estatebot.listings.sheet.issues import Issues


def normalized(text: pd.Series) -> pd.Series:
    """Text reduced for table lookup (see :func:`.rules.normalize_value`)."""
    return text.str.normalize("NFKC").str.lower().str.replace(r"[^0-9a-z]+", "", regex=True)


def lookup(text: pd.Series, table: Mapping[str, Any]) -> tuple[list[Any], BoolArray]:
    """Each text's entry in ``table`` (by normalized spelling) and where a text is unknown."""
    present = text.notna().to_numpy(dtype=bool)
    codes, uniques = pd.factorize(normalized(text))
    found = [table.get(u) for u in uniques]
    mapped = [found[c] if c >= 0 else None for c in codes]
    unknown = present & np.array([m is None for m in mapped], dtype=bool)
    return mapped, unknown


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
