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

Two forms are used: a *clean* frame (:mod:`~estatebot.listings.sync.values.tidy`: trimmed text,
empty as NA, structured columns tidied, numbers as given) that plans copy into request bodies, and
*canonical* values (numbers rounded to their precision, mappings in key order) that this module
compares and :mod:`~estatebot.listings.sync.values.hashing` hashes.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import eq
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings import schema
from estatebot.listings.sync.values.tidy import (
    DICT_COLUMNS,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    LIST_COLUMNS,
    NONE,
    TEXT_COLUMNS,
    as_floats,
    clean_text,
    clean_value,
    is_missing,
)

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
    if column in LIST_COLUMNS:
        return cleaned or None
    if column in DICT_COLUMNS:
        return sorted([k, v] for k, v in cleaned.items()) or None
    if cleaned is None:
        return None
    if column in FLOAT_COLUMNS:
        return _round(cleaned, PRECISION.get(column, 6))
    return cleaned


# --------------------------------------------------------------------------- comparison


def blank_mask(series: pd.Series[Any]) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """True where a clean column holds no value (NA, or an empty list or mapping)."""
    if series.name in LIST_COLUMNS or series.name in DICT_COLUMNS:
        lengths = np.fromiter(map(len, series.tolist()), dtype=np.int64, count=len(series))
        return np.asarray(lengths == 0, dtype=bool)
    return series.isna().to_numpy(dtype=bool)


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
    if column in FLOAT_COLUMNS or column in INT_COLUMNS:
        a, b = as_floats(left), as_floats(right)
        both_missing = np.isnan(a) & np.isnan(b)
        if tolerance is not None:
            with np.errstate(invalid="ignore"):
                close = np.abs(a - b) <= tolerance
            return np.asarray(close | both_missing, dtype=bool)
        if column in FLOAT_COLUMNS:
            decimals = PRECISION.get(column, 6)
            a, b = np.round(a, decimals), np.round(b, decimals)
        return np.asarray((a == b) | both_missing, dtype=bool)
    if column in LIST_COLUMNS or column in DICT_COLUMNS:
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


def equal_floats(
    column: str,
    left: np.ndarray[Any, np.dtype[np.float64]],
    right: np.ndarray[Any, np.dtype[np.float64]],
    *,
    tolerance: float | None = None,
) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """:func:`equal_mask` of a numeric column given as floats (NaN where missing).

    The same rule: at the column's precision, or within ``tolerance``; missing equals missing.
    Values already equal as they are need no rounding, so only the others are rounded.
    """
    both_missing = np.isnan(left) & np.isnan(right)
    if tolerance is not None:
        with np.errstate(invalid="ignore"):
            close = np.abs(left - right) <= tolerance
        return np.asarray(close | both_missing, dtype=bool)
    same = np.asarray((left == right) | both_missing, dtype=bool)
    if column in FLOAT_COLUMNS:
        check = np.flatnonzero(~same)
        if len(check):
            decimals = PRECISION.get(column, 6)
            a, b = np.round(left[check], decimals), np.round(right[check], decimals)
            same[check] = a == b
    return same


def canonical_columns(frame: pd.DataFrame) -> dict[str, list[Any]]:
    """Every canonical column of a clean frame (from :func:`clean_frame`) as canonical values.

    The same values :func:`canonical_value` gives one by one, computed a column at a time.
    """
    return {column: canonical_column(frame, column) for column in schema.COLUMNS}


def canonical_column(frame: pd.DataFrame, column: str) -> list[Any]:
    """One canonical column of a clean frame (see :func:`canonical_columns`)."""
    series = frame[column]
    if column in FLOAT_COLUMNS:
        rounded = np.round(as_floats(series), PRECISION.get(column, 6)) + 0.0
        return [None if x != x else x for x in rounded.tolist()]
    if column in INT_COLUMNS or column in TEXT_COLUMNS:
        values: list[Any] = series.to_numpy(dtype=object, na_value=NONE).tolist()
        return values
    if column in LIST_COLUMNS:
        return [v or None for v in series.tolist()]
    return [sorted([k, v] for k, v in d.items()) or None for d in series.tolist()]


# --------------------------------------------------------------------------- keys


def key_values(series: pd.Series[Any], *, is_clean: bool = False) -> list[str | None]:
    """A key column as trimmed text, None where empty; integer IDs as their decimal digits.

    Pass ``is_clean=True`` for a column of a frame from :func:`clean_frame` (already trimmed).
    """
    if series.name in INT_COLUMNS:
        return [None if v is None else str(v) for v in series.to_numpy(dtype=object, na_value=NONE)]
    texts = series if is_clean else clean_text(series)
    values: list[str | None] = texts.to_numpy(dtype=object, na_value=NONE).tolist()
    return values


def normalize_key(value: Any, key_column: str) -> str | None:
    """One key as text, the way :func:`key_values` writes it (``"12"`` for an ID of 12.0)."""
    if is_missing(value):
        return None
    if key_column in INT_COLUMNS:
        try:
            number = float(str(value).strip())
        except ValueError:
            return str(value).strip() or None
        return str(int(number)) if number.is_integer() else str(value).strip()
    return str(value).strip() or None


def match_keys(keys: Sequence[str | None]) -> list[str | None]:
    """Keys as they are matched: trimmed text (see :func:`key_values`) without case, and with
    inner runs of spaces as one, so ``PX0434895`` and ``px0434895`` name one listing."""
    return [
        None if k is None else (" ".join(k.split()) if " " in k or "\t" in k else k).casefold()
        for k in keys
    ]
