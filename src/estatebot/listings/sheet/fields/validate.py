"""The last word on a sheet's listing fields: defaults filled, types and ranges checked,
required fields present; every bad cell becomes a row issue.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings.schema import (
    FLOAT_COLUMNS,
    INT_COLUMNS,
    REQUIRED_COLUMNS,
)
from estatebot.listings.sheet.fields import mls_values as rules
from estatebot.listings.sheet.fields.cell_types import (
    BoolArray,
    IntArray,
    value_text,
)
from estatebot.listings.sheet.fields.inputs import Fields, floats
from estatebot.listings.sheet.issues import Issues

#: Longest Description the service takes; longer text is cut, with a warning.
MAX_DESCRIPTION = 4000
#: Fields that can never be negative.
NON_NEGATIVE: tuple[str, ...] = (
    "Bedrooms", "Bathrooms", "DaysOnMarket", "ParkingSpots", "LotArea", "BuildingArea",
    "SalePrice", "UnitAreaPrice", "HOAMonth", "ZestimatePrice", "RentPrice", "DepositFee",
)  # fmt: skip


def apply_defaults(
    values: dict[str, pd.Series], cleared: dict[str, BoolArray], defaults: Mapping[str, Any]
) -> dict[str, BoolArray]:
    """Fill each defaulted field where the sheet gives no value; returns where it filled."""
    filled: dict[str, BoolArray] = {}
    for name, default in defaults.items():
        # Status, SaleType and AreaUnit defaults take part in their own rules instead.
        if name not in values or default is None or name in ("Status", "SaleType", "AreaUnit"):
            continue
        series = values[name]
        fill = series.isna() & ~pd.Series(cleared.get(name, np.zeros(len(series), dtype=bool)))
        if fill.any():
            values[name] = series.mask(fill, default)
            filled[name] = fill.to_numpy(dtype=bool)
    return filled


def apply_overrides(
    values: dict[str, pd.Series], cleared: dict[str, BoolArray], overrides: Mapping[str, Any]
) -> None:
    """Set each overridden field on every row, whatever the sheet says (nothing is cleared)."""
    for name, value in overrides.items():
        n = len(next(iter(values.values()))) if values else 0
        if name == "Images":
            values[name] = pd.Series([list(value)] * n, dtype=object)
        else:
            dtype: Any = values[name].dtype if name in values else "string"
            values[name] = pd.Series(pd.array([value] * n, dtype=dtype))
        cleared.pop(name, None)


# --------------------------------------------------------------------------- validation


def validate(
    fields: Fields,
    issues: Issues,
    headers: Mapping[str, str | None],
    key: str,
    rows: IntArray,
) -> None:
    """Check required fields, ranges and Description length; reject duplicate keys.

    A blank required cell rejects nothing: it says nothing of the listing, which keeps its own
    value; only a row to be created needs the field, and a plan judges that row by row. A cleared
    required cell is an error: the field cannot be emptied.
    """
    values = fields.values
    n = len(fields.unpublished)
    published = ~fields.unpublished

    def where(field: str) -> str:
        return headers.get(field) or field

    for name in REQUIRED_COLUMNS:
        cleared = fields.cleared.get(name, np.zeros(n, dtype=bool)) & published
        issues.add(
            cleared,
            column=where(name),
            field=name,
            values="#CLEAR",
            message="cannot be cleared: the field is required",
        )

    def out_of_range(name: str, low: float | None, high: float | None, message: str) -> None:
        array = floats(values[name], n)
        with np.errstate(invalid="ignore"):
            wrong = np.zeros(n, dtype=bool)
            if low is not None:
                wrong |= array < low
            if high is not None:
                wrong |= array > high
        wrong &= published
        issues.add(
            wrong,
            column=where(name),
            field=name,
            values=[value_text(float(v)) for v in array[wrong]],
            message=message,
        )

    for name in FLOAT_COLUMNS:
        # Cells are refused as infinite when read; this catches a value computed from finite
        # ones (a price over a vanishing area, a huge lot converted from acres).
        if name not in values:
            continue
        array = floats(values[name], n)
        infinite = np.isinf(array) & published
        if infinite.any():
            issues.add(
                infinite,
                column=where(name),
                field=name,
                values=None,
                message="comes out infinite from the values it is computed from",
            )
            values[name] = values[name].mask(pd.Series(infinite), pd.NA)
    for name in NON_NEGATIVE:
        out_of_range(name, 0, None, "must not be negative")
    out_of_range("Latitude", -90, 90, "is not a latitude (-90 to 90)")
    out_of_range("Longitude", -180, 180, "is not a longitude (-180 to 180)")
    last_year = date.today().year + 5
    out_of_range("YearBuilt", 1600, last_year, f"is not a four-digit year from 1600 to {last_year}")

    description = values["Description"]
    long = (description.str.len() > MAX_DESCRIPTION).to_numpy(dtype=bool, na_value=False)
    long &= published
    issues.add(
        long,
        column=where("Description"),
        field="Description",
        values=[t[:60] + "…" for t in description[long]],
        message=f"is longer than {MAX_DESCRIPTION} characters: cut to {MAX_DESCRIPTION}",
        severity="warning",
    )
    if long.any():
        values["Description"] = description.mask(
            pd.Series(long), description.str.slice(0, MAX_DESCRIPTION)
        )

    keys = values[key]
    duplicated = keys.duplicated(keep=False).to_numpy(dtype=bool) & keys.notna().to_numpy(
        dtype=bool
    )
    if duplicated.any():
        positions = np.flatnonzero(duplicated)
        groups: dict[Any, list[int]] = {}
        for p in positions:
            groups.setdefault(keys.iloc[p], []).append(int(p))
        for value, members in groups.items():
            listed = ", ".join(str(rows[m]) for m in members)
            issues.add(
                members,
                column=where(key),
                field=key,
                values=value_text(value),
                message=f"is a duplicate key (rows {listed}): every row of a duplicated "
                "key is rejected",
            )


def typed_default(name: str, value: Any) -> Any:
    """A default value checked against its field: a known enum value or the right kind."""
    tables: dict[str, Callable[[], dict[str, str]]] = {
        "SaleType": lambda: rules.lookup(rules.SALE_TYPES),
        "AreaUnit": lambda: rules.lookup(rules.AREA_UNITS),
        "Tours": lambda: rules.lookup(rules.TOURS),
        "SpaceType": lambda: rules.lookup(rules.SPACE_TYPES),
    }
    if name in tables:
        found = tables[name]().get(rules.normalize_value(str(value)))
        if found is None:
            raise ValueError(f"is not a known {name}")
        return found
    if name in INT_COLUMNS or name in FLOAT_COLUMNS:
        number = float(value)
        if not math.isfinite(number):
            raise ValueError("is not a finite number")
        if name in FLOAT_COLUMNS:
            return number
        if not number.is_integer():
            raise ValueError("is not a whole number")
        return int(number)
    return str(value)
