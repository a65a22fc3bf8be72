"""The area fields of a sheet: the listing's ``AreaUnit``, building and lot areas converted
into it (a unitless lot column by ``lot_unit``), and parking spots (ParkingTotal, else garage +
carport + open spaces; never covered spaces, which already count garage and carport).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings.sheet.fields import mls_values as rules
from estatebot.listings.sheet.fields.cell_types import (
    BoolArray,
    to_int,
    value_text,
)
from estatebot.listings.sheet.fields.inputs import Inputs, Options, floats
from estatebot.listings.sheet.fields.lookups import choose, lookup
from estatebot.listings.sheet.issues import Issues


def _unit_factors(unit: Sequence[str | None]) -> np.ndarray[Any, np.dtype[np.float64]]:
    return np.array(
        [rules.SQFT_PER_AREA_UNIT[u] if u is not None else np.nan for u in unit], dtype=float
    )


def area_unit(
    inputs: Inputs, options: Options, issues: Issues, defaulted: dict[str, BoolArray]
) -> tuple[list[str | None], BoolArray]:
    """The listing's AreaUnit per row: the sheet's own unit columns, the default, the header.

    Rows whose unit came from ``defaults`` are marked in ``defaulted``.
    """
    n = inputs.n
    table = rules.lookup(rules.AREA_UNITS)
    unit: list[str | None] = [None] * n
    bad = np.zeros(n, dtype=bool)
    for source in ("AreaUnit", "LivingAreaUnits", "BuildingAreaUnits"):
        found, unknown = choose(
            inputs, issues, source, table, what="area unit (Square Feet or Square Meters)"
        )
        bad |= unknown
        unit = [u if u is not None else f for u, f in zip(unit, found, strict=True)]
    fallback = options.defaults.get("AreaUnit")
    if fallback is not None:
        defaulted["AreaUnit"] = np.array([u is None for u in unit], dtype=bool)
    elif "BuildingAreaSquareFeet" in inputs.values:
        fallback = rules.SQUARE_FEET  # the header names the unit: the sheet says it
    if fallback is not None:
        unit = [u if u is not None else fallback for u in unit]
    return unit, bad


def building_area(
    inputs: Inputs, unit: list[str | None], issues: Issues
) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    target = _unit_factors(unit)
    table = rules.lookup(rules.AREA_UNITS)
    out = np.full(n, np.nan)
    bad = np.zeros(n, dtype=bool)
    candidates: list[tuple[str, np.ndarray[Any, np.dtype[np.float64]]]] = [("BuildingArea", target)]
    for source, unit_source in (
        ("LivingArea", "LivingAreaUnits"),
        ("BuildingAreaTotal", "BuildingAreaUnits"),
    ):
        own = target.copy()
        unit_text = inputs.get(unit_source)
        if unit_text is not None:
            found, _ = lookup(unit_text, table)
            own_units = np.array(
                [rules.SQFT_PER_AREA_UNIT[u] if u is not None else np.nan for u in found]
            )
            own = np.where(np.isnan(own_units), target, own_units)
        candidates.append((source, own))
    candidates.append(("BuildingAreaSquareFeet", np.ones(n)))
    for source, factor in candidates:
        value = floats(inputs.get(source), n)
        fill = np.isnan(out) & ~np.isnan(value)
        converted = _convert(value, factor, target)
        _unconvertible(
            inputs, issues, source, "BuildingArea", fill & np.isnan(converted) & ~np.isnan(factor)
        )
        out = np.where(fill, converted, out)
    return pd.Series(pd.array(out, dtype="Float64")), bad


def _convert(
    value: np.ndarray[Any, np.dtype[np.float64]],
    source_sqft: np.ndarray[Any, np.dtype[np.float64]],
    target_sqft: np.ndarray[Any, np.dtype[np.float64]],
    *,
    own_unit: bool = True,
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Areas from one unit into another (both given as square feet per unit).

    Where neither unit is known and the source is in the listing's own unit (``own_unit``:
    ``BuildingArea``, ``LotArea``, a living area without a unit of its own), the area is kept as
    it is: a pulled file has no AreaUnit, and its areas are in the unit the listing has on the
    service. Only an area that must be converted into an unknown unit cannot be read (NaN).
    """
    with np.errstate(invalid="ignore"):
        same = (source_sqft == target_sqft) | (
            own_unit & np.isnan(source_sqft) & np.isnan(target_sqft)
        )
        converted = np.round(value * source_sqft / target_sqft, 2)
    return np.where(same, value, converted)


def _unconvertible(
    inputs: Inputs, issues: Issues, source: str, field: str, rows: BoolArray
) -> None:
    """Warn of areas that name a unit of their own while their row names none to convert into."""
    issues.add_cells(
        inputs,
        source,
        rows,
        field=field,
        message="is not used: its unit is known but the listing's is not, so it cannot be "
        "converted (add an AreaUnit column, or pass defaults={'AreaUnit': ...} / "
        "--default AreaUnit=...)",
        severity="warning",
    )


def lot_area(
    inputs: Inputs, options: Options, unit: list[str | None], issues: Issues
) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    target = _unit_factors(unit)
    out = np.full(n, np.nan)
    bad = np.zeros(n, dtype=bool)
    lot_unit = np.nan if options.lot_unit is None else options.lot_unit
    area_units = np.full(n, lot_unit)
    unknown_units = np.zeros(n, dtype=bool)
    units_text = inputs.get("LotSizeUnits")
    if units_text is not None:
        found, unknown_units = lookup(units_text, rules.lookup_float(rules.LOT_UNITS))
        per_row = np.array([np.nan if f is None else f for f in found], dtype=float)
        area_units = np.where(np.isnan(per_row), area_units, per_row)
    candidates = (
        ("LotArea", target),
        ("LotSizeSquareFeet", np.ones(n)),
        ("LotSizeArea", area_units),
        ("LotSizeAcres", np.full(n, rules.SQFT_PER_ACRE)),
        ("LotSize", np.full(n, lot_unit)),
    )
    for source, factor in candidates:
        value = floats(inputs.get(source), n)
        fill = np.isnan(out) & ~np.isnan(value)
        if source == "LotSizeArea":
            wrong = fill & unknown_units
            issues.add_cells(
                inputs,
                "LotSizeUnits",
                wrong,
                field="LotArea",
                message="is not a known lot size unit",
            )
            missing = fill & ~unknown_units & np.isnan(factor) & ~np.isnan(target)
            issues.add_cells(
                inputs,
                source,
                missing,
                field="LotArea",
                message="has no unit: fill LotSizeUnits or pass lot_unit=",
            )
            bad |= wrong | missing
        converted = _convert(value, factor, target, own_unit=source != "LotSizeArea")
        _unconvertible(
            inputs, issues, source, "LotArea", fill & np.isnan(converted) & ~np.isnan(factor)
        )
        out = np.where(fill, converted, out)
    return pd.Series(pd.array(out, dtype="Float64")), bad


def parking(inputs: Inputs, issues: Issues) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    total = floats(inputs.get("ParkingSpots"), n)
    # CoveredSpaces is left out on purpose: it already counts garage and carport spaces.
    parts = [
        floats(inputs.get(s), n) for s in ("GarageSpaces", "CarportSpaces", "OpenParkingSpaces")
    ]
    any_part = np.any([~np.isnan(p) for p in parts], axis=0)
    summed = np.where(any_part, np.nansum(parts, axis=0), np.nan)
    out = np.where(np.isnan(total), summed, total)
    fraction = ~np.isnan(out) & (np.mod(out, 1) != 0)
    header = inputs.header("ParkingSpots", "GarageSpaces", "CarportSpaces", "OpenParkingSpaces")
    issues.add(
        fraction,
        column=header,
        field="ParkingSpots",
        values=[value_text(float(v)) for v in out[fraction]],
        message="is not a whole number of parking spots",
    )
    out = np.where(fraction, np.nan, out)
    return to_int(out), fraction
