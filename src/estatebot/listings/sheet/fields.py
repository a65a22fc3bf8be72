"""The listing fields of a sheet: typed sources combined by the export rules, then validated.

Every function works on whole columns (Series over the sheet's row positions). Problems are
collected in :class:`Issues` with the position, column, value and message of each bad cell;
a row with an error never reaches the listing frame.

The rules follow the reference mapping of MLS exports: ``Bathrooms`` = full + ½ × half;
``ParkingSpots`` = ParkingTotal, else garage + carport + open spaces (never covered spaces,
which already count garage and carport); areas converted into the listing's ``AreaUnit``;
``SaleType`` from the export's sale/rent column or from the RESO PropertyType; prices by sale
type; HOA fees made monthly; Status by the status table of :mod:`sheet_rules`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings.schema import DTYPES, FLOAT_COLUMNS, INT_COLUMNS, REQUIRED_COLUMNS
from estatebot.listings.sheet import rules
from estatebot.listings.sheet.cells import (
    BoolArray,
    Column,
    Severity,
    objects,
    to_int,
    value_text,
)
from estatebot.listings.sheet.headers import SOURCES

#: Longest Description the service takes; longer text is cut, with a warning.
MAX_DESCRIPTION = 4000
#: Fields that can never be negative.
NON_NEGATIVE: tuple[str, ...] = (
    "Bedrooms", "Bathrooms", "DaysOnMarket", "ParkingSpots", "LotArea", "BuildingArea",
    "SalePrice", "UnitAreaPrice", "HOAMonth", "ZestimatePrice", "RentPrice", "DepositFee",
)  # fmt: skip
#: UnitAreaPrice given by the sheet may differ from price ÷ area by this share before a warning.
UNIT_PRICE_TOLERANCE = 0.01
#: The ExtensionColumn keys of the values kept by rule.
STATUS_KEY = "StandardStatus"
LISTING_KEY = "ListingKey"

_STRING = pd.StringDtype("pyarrow")
IntArray = np.ndarray[Any, np.dtype[np.int64]]


class Issues:
    """Problems found while reading a sheet, by row position (-1 for the sheet as a whole).

    A problem about a line that is not a data row (a skipped disclaimer) gives its ``row``
    number directly instead of a position.
    """

    def __init__(self) -> None:
        self._parts: list[pd.DataFrame] = []

    def add(
        self,
        where: BoolArray | IntArray | Sequence[int],
        *,
        column: str | None,
        field: str | None,
        values: Sequence[str | None] | str | None,
        message: str,
        severity: Severity = "error",
        row: int | None = None,
    ) -> None:
        """Record one message for every position in ``where`` (a mask or positions)."""
        array = np.asarray(where)
        positions = np.flatnonzero(array) if array.dtype == bool else array.astype(np.int64)
        if not len(positions):
            return
        if values is None or isinstance(values, str):
            values = [values] * len(positions)
        self._parts.append(
            pd.DataFrame(
                {
                    "position": positions,
                    "row": row,
                    "column": column,
                    "field": field,
                    "value": list(values),
                    "message": message,
                    "severity": severity,
                }
            )
        )

    def add_cells(
        self,
        inputs: Inputs,
        source: str,
        where: BoolArray | IntArray,
        *,
        field: str | None,
        message: str,
        severity: Severity = "error",
    ) -> None:
        """Record ``message`` for the cells of ``source`` at ``where``, naming header and values."""
        array = np.asarray(where)
        positions = np.flatnonzero(array) if array.dtype == bool else array.astype(np.int64)
        self.add(
            positions,
            column=inputs.header(source),
            field=field,
            values=inputs.texts(source, positions),
            message=message,
            severity=severity,
        )

    def table(self) -> pd.DataFrame:
        """Every issue so far: position, column, field, value, message, severity."""
        columns = ["position", "row", "column", "field", "value", "message", "severity"]
        if not self._parts:
            return pd.DataFrame(
                {c: pd.Series(dtype="int64" if c == "position" else object) for c in columns}
            )
        return pd.concat(self._parts, ignore_index=True)


@dataclass
class Inputs:
    """The typed sources of a sheet, with the prepared columns they came from."""

    n: int
    values: dict[str, pd.Series] = field(default_factory=dict)
    columns: dict[str, list[tuple[str, Column]]] = field(default_factory=dict)
    #: Per listing field, the rows where a cell feeding it had an error.
    bad: dict[str, BoolArray] = field(default_factory=dict)

    def mark_bad(self, field_name: str | None, mask: BoolArray) -> None:
        """Remember that a cell feeding ``field_name`` was rejected at ``mask``."""
        if field_name is not None:
            self.bad[field_name] = self.bad.get(field_name, np.zeros(self.n, dtype=bool)) | mask

    def get(self, source: str) -> pd.Series | None:
        """The typed values of ``source``, or None when no header feeds it."""
        return self.values.get(source)

    def header(self, *sources: str) -> str | None:
        """The header feeding the first of ``sources`` the sheet has."""
        for source in sources:
            if source in self.columns:
                return self.columns[source][0][0]
        return None

    def texts(self, source: str, positions: IntArray) -> list[str | None]:
        """The cell texts of ``source`` at ``positions``, for issue reports."""
        if source not in self.columns:
            return [None] * len(positions)
        raw = self.columns[source][0][1].raw
        return [None if raw[p] is None else value_text(raw[p]) for p in positions]

    def cleared(self, *sources: str) -> BoolArray:
        """Where the clear token appeared in any column feeding ``sources``."""
        mask = np.zeros(self.n, dtype=bool)
        for source in sources:
            for _, column in self.columns.get(source, []):
                mask |= column.cleared
        return mask


@dataclass(frozen=True)
class Options:
    """The reading choices that shape the rules."""

    defaults: Mapping[str, Any]
    status_table: Mapping[str, rules.StatusRule]
    decimal_baths: bool = False
    lot_unit: float | None = None  # square feet per unit of a unitless lot column


@dataclass
class Fields:
    """The listing fields of every row, before row filtering."""

    values: dict[str, pd.Series]
    cleared: dict[str, BoolArray]
    unpublished: BoolArray
    #: RESO status name to keep in ExtensionColumn, or None.
    status_kept: list[str | None]
    #: Where a cell problem already explains an empty field (no second "required" message).
    bad: dict[str, BoolArray]
    #: The status text as written (or its default), for the rows left unpublished.
    status_text: pd.Series


# --------------------------------------------------------------------------- helpers


def _na(n: int, dtype: Any) -> pd.Series:
    series: pd.Series = pd.Series(pd.NA, index=pd.RangeIndex(n), dtype=dtype)
    return series


def _present(series: pd.Series | None, n: int) -> BoolArray:
    if series is None:
        return np.zeros(n, dtype=bool)
    return np.asarray(series.notna().to_numpy(dtype=bool))


def _floats(series: pd.Series | None, n: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    if series is None:
        return np.full(n, np.nan)
    return np.asarray(series.to_numpy(dtype=float, na_value=np.nan), dtype=float)


def normalized(text: pd.Series) -> pd.Series:
    """Text reduced for table lookup (see :func:`sheet_rules.normalize_value`)."""
    return text.str.normalize("NFKC").str.lower().str.replace(r"[^0-9a-z]+", "", regex=True)


def _lookup(text: pd.Series, table: Mapping[str, Any]) -> tuple[list[Any], BoolArray]:
    """Each text's entry in ``table`` (by normalized spelling) and where a text is unknown."""
    present = text.notna().to_numpy(dtype=bool)
    codes, uniques = pd.factorize(normalized(text))
    found = [table.get(u) for u in uniques]
    mapped = [found[c] if c >= 0 else None for c in codes]
    unknown = present & np.array([m is None for m in mapped], dtype=bool)
    return mapped, unknown


def _choose(
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
    mapped, unknown = _lookup(text, table)
    issues.add_cells(
        inputs,
        source,
        unknown,
        field=SOURCES[source].field,
        message=f"is not a known {what}",
    )
    return [default if m is None else m for m in mapped], unknown


def _series(values: Sequence[Any], dtype: Any) -> pd.Series:
    return pd.Series(pd.array(list(values), dtype=dtype))


# --------------------------------------------------------------------------- the rules


def derive(inputs: Inputs, options: Options, issues: Issues) -> Fields:
    """Combine the typed sources into listing fields, recording every problem in ``issues``."""
    n = inputs.n
    values: dict[str, pd.Series] = {}
    bad: dict[str, BoolArray] = {}
    cleared: dict[str, BoolArray] = {}

    for name in (
        "ID",
        "MLSNumber",
        "Url",
        "Bedrooms",
        "YearBuilt",
        "DaysOnMarket",
        "City",
        "State",
        "ZIP",
        "Location",
        "Latitude",
        "Longitude",
        "CurrencySymbol",
        "DepositFee",
    ):
        series = inputs.get(name)
        values[name] = series if series is not None else _na(n, DTYPES[name])
        cleared[name] = inputs.cleared(name)

    values["PropertyType"] = _coalesce(
        n, "string", inputs.get("PropertySubType"), inputs.get("PropertyType")
    )
    cleared["PropertyType"] = inputs.cleared("PropertySubType", "PropertyType")

    sale_type, bad["SaleType"] = _sale_type(inputs, options, issues)
    values["SaleType"] = sale_type
    cleared["SaleType"] = inputs.cleared("SaleType")

    status, unpublished, kept, bad["Status"], status_text = _status(inputs, options, issues)
    values["Status"] = status
    cleared["Status"] = inputs.cleared("Status")

    values["Bathrooms"], bad["Bathrooms"] = _bathrooms(inputs, options, issues)
    cleared["Bathrooms"] = inputs.cleared("Bathrooms", "BathroomsFull", "BathroomsHalf")

    unit, bad["AreaUnit"] = _area_unit(inputs, options, issues)
    values["AreaUnit"] = _series(unit, "string")
    cleared["AreaUnit"] = inputs.cleared("AreaUnit", "LivingAreaUnits", "BuildingAreaUnits")
    values["BuildingArea"], bad["BuildingArea"] = _building_area(inputs, unit, issues)
    cleared["BuildingArea"] = inputs.cleared(
        "BuildingArea", "LivingArea", "BuildingAreaTotal", "BuildingAreaSquareFeet"
    )
    values["LotArea"], bad["LotArea"] = _lot_area(inputs, options, unit, issues)
    cleared["LotArea"] = inputs.cleared(
        "LotArea", "LotSizeSquareFeet", "LotSizeArea", "LotSizeUnits", "LotSizeAcres", "LotSize"
    )

    values["ParkingSpots"], bad["ParkingSpots"] = _parking(inputs, issues)
    cleared["ParkingSpots"] = inputs.cleared(
        "ParkingSpots", "GarageSpaces", "CarportSpaces", "OpenParkingSpaces"
    )

    values["Description"] = _text(inputs, "Description")
    cleared["Description"] = inputs.cleared("Description")
    values["Address"] = _address(inputs)
    cleared["Address"] = inputs.cleared(
        "Address",
        "UnparsedAddress",
        "StreetNumber",
        "StreetDirPrefix",
        "StreetName",
        "StreetSuffix",
        "StreetDirSuffix",
        "UnitNumber",
    )
    values["Images"] = _images(inputs)
    cleared["Images"] = inputs.cleared("Images", "PhotoURL", "PrimaryPhoto", "AltPhotos")
    values["Tours"], bad["Tours"] = _tours(inputs, issues)
    cleared["Tours"] = inputs.cleared("Tours", "OpenHouse", "VirtualTour")
    spaces, bad["SpaceType"] = _choose(
        inputs,
        issues,
        "SpaceType",
        rules.lookup(rules.SPACE_TYPES),
        what="SpaceType (Entire place or Room)",
    )
    values["SpaceType"] = _series(spaces, "string")
    cleared["SpaceType"] = inputs.cleared("SpaceType")

    _prices(inputs, values, cleared)
    values["HOAMonth"], bad["HOAMonth"] = _hoa(inputs, issues)
    cleared["HOAMonth"] = inputs.cleared("HOAMonth", "AssociationFee", "AssociationFeeFrequency")
    values["ZestimatePrice"] = _zestimate(inputs)
    cleared["ZestimatePrice"] = inputs.cleared("ZestimatePrice")
    values["UnitAreaPrice"] = _unit_area_price(inputs, values, issues)
    cleared["UnitAreaPrice"] = inputs.cleared("UnitAreaPrice")

    for name, mask in inputs.bad.items():
        bad[name] = bad.get(name, np.zeros(n, dtype=bool)) | mask
    _apply_defaults(values, cleared, options.defaults)
    # The clear token wins over every source and default: the field is emptied on purpose.
    for name, mask in cleared.items():
        if not mask.any():
            continue
        if name == "Images":
            values[name] = pd.Series(
                [[] if c else v for v, c in zip(values[name], mask, strict=True)], dtype=object
            )
        else:
            values[name] = values[name].mask(pd.Series(mask), pd.NA)
    return Fields(values, cleared, unpublished, kept, bad, status_text)


def _coalesce(n: int, dtype: Any, *sources: pd.Series | None) -> pd.Series:
    out = _na(n, dtype)
    for series in sources:
        if series is not None:
            out = out.fillna(series.astype(dtype))
    return out


def _text(inputs: Inputs, source: str) -> pd.Series:
    series = inputs.get(source)
    return series if series is not None else _na(inputs.n, "string")


def _sale_type(inputs: Inputs, options: Options, issues: Issues) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    table = rules.lookup(rules.SALE_TYPES)
    explicit, bad = _choose(inputs, issues, "SaleType", table, what="SaleType (for_sale/for_rent)")
    by_type: list[Any] = [None] * n
    property_type = inputs.get("PropertyType")
    if property_type is not None:
        by_type, _ = _lookup(property_type, rules.lookup(rules.RESO_PROPERTY_TYPES))
    has_type = _present(property_type, n) | _present(inputs.get("PropertySubType"), n)
    default = options.defaults.get("SaleType")
    out = [
        e
        if e is not None
        else t
        if t is not None
        else default
        if default is not None
        else "for_sale"
        if h
        else None
        for e, t, h in zip(explicit, by_type, has_type, strict=True)
    ]
    return _series(out, "string"), bad


def _status(
    inputs: Inputs, options: Options, issues: Issues
) -> tuple[pd.Series, BoolArray, list[str | None], BoolArray, pd.Series]:
    n = inputs.n
    text = inputs.get("Status")
    if text is None:
        text = _na(n, _STRING)
    default = options.defaults.get("Status")
    if default is not None:
        text = text.fillna(default)
    found, unknown = _lookup(text, options.status_table)
    issues.add_cells(
        inputs,
        "Status",
        unknown,
        field="Status",
        message="is not a known status",
    )
    outcome = [rule.outcome if rule is not None else None for rule in found]
    error = np.array([o == "error" for o in outcome], dtype=bool)
    issues.add_cells(
        inputs,
        "Status",
        error,
        field="Status",
        message="is an incomplete listing: it cannot be published",
    )
    unpublished = np.array([o == "unpublished" for o in outcome], dtype=bool)
    status = [o if o in ("Active", "PreOnMarket", "Sold") else None for o in outcome]
    kept = [
        rule.standard if rule is not None and rule.keep_raw and o != "unpublished" else None
        for rule, o in zip(found, outcome, strict=True)
    ]
    return _series(status, "string"), unpublished, kept, unknown | error, text


def _bathrooms(inputs: Inputs, options: Options, issues: Issues) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    bad = np.zeros(n, dtype=bool)
    total = _floats(inputs.get("Bathrooms"), n)
    if options.decimal_baths:
        # 2.1 means 2 full + 1 half: the digit after the point counts half baths.
        tenths = np.round(total * 10)
        unclear = ~np.isnan(total) & (np.abs(total * 10 - tenths) > 1e-6)
        issues.add_cells(
            inputs,
            "Bathrooms",
            unclear,
            field="Bathrooms",
            message="has more than one decimal: it cannot be read as full.half baths",
        )
        bad |= unclear
        total = np.where(unclear, np.nan, np.floor(tenths / 10) + 0.5 * np.mod(tenths, 10))
    full = _floats(inputs.get("BathroomsFull"), n)
    half = _floats(inputs.get("BathroomsHalf"), n)
    parts = ~np.isnan(full) | ~np.isnan(half)
    from_parts = np.nan_to_num(full) + 0.5 * np.nan_to_num(half)
    out = np.where(parts, from_parts, total)
    return pd.Series(pd.array(out, dtype="Float64")), bad


def _unit_factors(unit: Sequence[str | None]) -> np.ndarray[Any, np.dtype[np.float64]]:
    return np.array(
        [rules.SQFT_PER_AREA_UNIT[u] if u is not None else np.nan for u in unit], dtype=float
    )


def _area_unit(
    inputs: Inputs, options: Options, issues: Issues
) -> tuple[list[str | None], BoolArray]:
    """The listing's AreaUnit per row: the sheet's own unit columns, the default, the header."""
    n = inputs.n
    table = rules.lookup(rules.AREA_UNITS)
    unit: list[str | None] = [None] * n
    bad = np.zeros(n, dtype=bool)
    for source in ("AreaUnit", "LivingAreaUnits", "BuildingAreaUnits"):
        found, unknown = _choose(
            inputs, issues, source, table, what="area unit (Square Feet or Square Meters)"
        )
        bad |= unknown
        unit = [u if u is not None else f for u, f in zip(unit, found, strict=True)]
    fallback = options.defaults.get("AreaUnit")
    if fallback is None and "BuildingAreaSquareFeet" in inputs.values:
        fallback = rules.SQUARE_FEET
    if fallback is not None:
        unit = [u if u is not None else fallback for u in unit]
    return unit, bad


def _building_area(
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
            found, _ = _lookup(unit_text, table)
            own_units = np.array(
                [rules.SQFT_PER_AREA_UNIT[u] if u is not None else np.nan for u in found]
            )
            own = np.where(np.isnan(own_units), target, own_units)
        candidates.append((source, own))
    candidates.append(("BuildingAreaSquareFeet", np.ones(n)))
    for source, factor in candidates:
        value = _floats(inputs.get(source), n)
        fill = np.isnan(out) & ~np.isnan(value)
        # Rows without an AreaUnit get their own "required" error: no second message here.
        bad |= fill & np.isnan(target)
        out = np.where(fill, _convert(value, factor, target), out)
    return pd.Series(pd.array(out, dtype="Float64")), bad


def _convert(
    value: np.ndarray[Any, np.dtype[np.float64]],
    source_sqft: np.ndarray[Any, np.dtype[np.float64]],
    target_sqft: np.ndarray[Any, np.dtype[np.float64]],
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Areas from one unit into another (both given as square feet per unit)."""
    with np.errstate(invalid="ignore"):
        same = source_sqft == target_sqft
        converted = np.round(value * source_sqft / target_sqft, 2)
    return np.where(same, value, converted)


def _lot_area(
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
        found, unknown_units = _lookup(units_text, rules.lookup_float(rules.LOT_UNITS))
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
        value = _floats(inputs.get(source), n)
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
        # Rows without an AreaUnit get their own "required" error: no second message here.
        bad |= fill & np.isnan(target)
        out = np.where(fill, _convert(value, factor, target), out)
    return pd.Series(pd.array(out, dtype="Float64")), bad


def _parking(inputs: Inputs, issues: Issues) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    total = _floats(inputs.get("ParkingSpots"), n)
    # CoveredSpaces is left out on purpose: it already counts garage and carport spaces.
    parts = [
        _floats(inputs.get(s), n) for s in ("GarageSpaces", "CarportSpaces", "OpenParkingSpaces")
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


def _address(inputs: Inputs) -> pd.Series:
    n = inputs.n
    parts = [
        inputs.get(s)
        for s in (
            "StreetNumber",
            "StreetDirPrefix",
            "StreetName",
            "StreetSuffix",
            "StreetDirSuffix",
        )
    ]
    present = [p.astype("string").fillna("") for p in parts if p is not None]
    composed = _na(n, "string")
    if present:
        text = present[0]
        if len(present) > 1:
            text = text.str.cat(pd.concat(present[1:], axis=1), sep=" ")
        text = text.str.replace(r"\s+", " ", regex=True).str.strip()
        unit = inputs.get("UnitNumber")
        if unit is not None:
            # "123 Main St #4": a bare unit number gets a "#"; "Unit 4" or "#4" stay as written.
            bare = ~unit.str.match(r"^(#|[A-Za-z])").fillna(True)
            marked = unit.mask(bare, "#" + unit)
            text = text.mask(unit.notna(), (text + " " + marked).str.strip())
        composed = text.astype("string").mask(text == "", pd.NA)
    return _coalesce(n, "string", inputs.get("Address"), inputs.get("UnparsedAddress"), composed)


_URL_SPLIT = re.compile(r"[\s,|;]+")


def _url_list(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            return [str(u).strip() for u in parsed if str(u).strip()]
    return [u for u in _URL_SPLIT.split(text) if u]


def _images(inputs: Inputs) -> pd.Series:
    n = inputs.n
    sources = [inputs.get(s) for s in ("PrimaryPhoto", "Images", "PhotoURL", "AltPhotos")]
    lists: list[list[str]] = [[] for _ in range(n)]
    for series in sources:
        if series is None:
            continue
        for i, text in enumerate(objects(series)):
            if text is not None:
                for url in _url_list(text):
                    if url not in lists[i]:
                        lists[i].append(url)
    return pd.Series(lists, dtype=object)


def _tours(inputs: Inputs, issues: Issues) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    explicit, bad = _choose(
        inputs, issues, "Tours", rules.lookup(rules.TOURS), what="tour kind (OpenHouse or 3D)"
    )
    open_house = _present(inputs.get("OpenHouse"), n)
    virtual = _present(inputs.get("VirtualTour"), n)
    out = [
        e if e is not None else "OpenHouse" if o else "3D" if v else None
        for e, o, v in zip(explicit, open_house, virtual, strict=True)
    ]
    return _series(out, "string"), bad


def _prices(inputs: Inputs, values: dict[str, pd.Series], cleared: dict[str, BoolArray]) -> None:
    n = inputs.n
    listed = _floats(inputs.get("ListPrice"), n)
    closed = _floats(inputs.get("ClosePrice"), n)
    sold = values["Status"].eq("Sold").to_numpy(dtype=bool, na_value=False)
    price = np.where(sold & ~np.isnan(closed), closed, listed)
    price_cleared = inputs.cleared("ListPrice") | (sold & inputs.cleared("ClosePrice"))
    sale_type = values["SaleType"]
    for name, kind in (("SalePrice", "for_sale"), ("RentPrice", "for_rent")):
        applies = sale_type.eq(kind).to_numpy(dtype=bool, na_value=False)
        derived = pd.Series(pd.array(np.where(applies, price, np.nan), dtype="Float64"))
        explicit = inputs.get(name)
        values[name] = explicit.fillna(derived) if explicit is not None else derived
        cleared[name] = inputs.cleared(name) | (applies & price_cleared)


def _hoa(inputs: Inputs, issues: Issues) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    explicit = _floats(inputs.get("HOAMonth"), n)
    fee = _floats(inputs.get("AssociationFee"), n)
    bad = np.zeros(n, dtype=bool)
    factor = np.full(n, np.nan)
    frequency = inputs.get("AssociationFeeFrequency")
    if frequency is not None:
        table = {rules.normalize_value(k): v for k, v in rules.HOA_FACTORS.items()}
        found, unknown = _lookup(
            frequency, {k: ("x" if v is None else v) for k, v in table.items()}
        )
        one_off = np.array([f == "x" for f in found], dtype=bool)
        uses = ~np.isnan(fee) & np.isnan(explicit)
        issues.add_cells(
            inputs,
            "AssociationFeeFrequency",
            unknown & uses,
            field="HOAMonth",
            message="is not a known fee frequency",
        )
        issues.add_cells(
            inputs,
            "AssociationFeeFrequency",
            one_off & uses,
            field="HOAMonth",
            message="is not a recurring fee: HOAMonth cannot be derived from it",
        )
        bad = (unknown | one_off) & uses
        factor = np.array([f if isinstance(f, float) else np.nan for f in found], dtype=float)
    no_frequency = ~np.isnan(fee) & (fee != 0) & np.isnan(factor) & ~bad & np.isnan(explicit)
    issues.add_cells(
        inputs,
        "AssociationFee",
        no_frequency,
        field="HOAMonth",
        message="has no AssociationFeeFrequency: HOAMonth left empty",
        severity="warning",
    )
    factor = np.where(fee == 0, 1.0, factor)
    monthly = np.round(fee * factor, 2)
    out = np.where(np.isnan(explicit), monthly, explicit)
    return pd.Series(pd.array(out, dtype="Float64")), bad


def _zestimate(inputs: Inputs) -> pd.Series:
    n = inputs.n
    value = inputs.get("ZestimatePrice")
    out = value if value is not None else _na(n, "Float64")
    display = inputs.get("InternetAutomatedValuationDisplayYN")
    if display is not None:
        hidden = display.eq(False).to_numpy(dtype=bool, na_value=False)
        out = out.mask(pd.Series(hidden), pd.NA)
    return out


def _unit_area_price(inputs: Inputs, values: dict[str, pd.Series], issues: Issues) -> pd.Series:
    n = inputs.n
    rent = values["SaleType"].eq("for_rent").to_numpy(dtype=bool, na_value=False)
    price = np.where(rent, _floats(values["RentPrice"], n), _floats(values["SalePrice"], n))
    area = _floats(values["BuildingArea"], n)
    with np.errstate(divide="ignore", invalid="ignore"):
        computed = np.where(area > 0, price / area, np.nan)
    given = _floats(inputs.get("UnitAreaPrice"), n)
    with np.errstate(invalid="ignore"):
        differs = (
            ~np.isnan(computed)
            & ~np.isnan(given)
            & (np.abs(given - computed) > UNIT_PRICE_TOLERANCE * np.abs(computed))
        )
    positions = np.flatnonzero(differs)
    issues.add_cells(
        inputs,
        "UnitAreaPrice",
        positions,
        field="UnitAreaPrice",
        message="disagrees with price ÷ BuildingArea by more than 1%: the computed value is used",
        severity="warning",
    )
    out = np.where(np.isnan(computed), given, np.round(computed, 2))
    return pd.Series(pd.array(out, dtype="Float64"))


def _apply_defaults(
    values: dict[str, pd.Series], cleared: dict[str, BoolArray], defaults: Mapping[str, Any]
) -> None:
    for name, default in defaults.items():
        # Status, SaleType and AreaUnit defaults take part in their own rules instead.
        if name not in values or default is None or name in ("Status", "SaleType", "AreaUnit"):
            continue
        series = values[name]
        fill = series.isna() & ~pd.Series(cleared.get(name, np.zeros(len(series), dtype=bool)))
        if fill.any():
            values[name] = series.mask(fill, default)


# --------------------------------------------------------------------------- validation


def validate(
    fields: Fields, issues: Issues, headers: Mapping[str, str | None], key: str, rows: IntArray
) -> None:
    """Check required fields, ranges and Description length; reject duplicate keys."""
    values = fields.values
    n = len(fields.unpublished)
    published = ~fields.unpublished

    def where(field: str) -> str:
        return headers.get(field) or field

    for name in REQUIRED_COLUMNS:
        empty = values[name].isna().to_numpy(dtype=bool) & published
        cleared = fields.cleared.get(name, np.zeros(n, dtype=bool)) & published
        issues.add(
            cleared,
            column=where(name),
            field=name,
            values="#CLEAR",
            message="cannot be cleared: the field is required",
        )
        missing = empty & ~cleared & ~fields.bad.get(name, np.zeros(n, dtype=bool))
        issues.add(
            missing, column=where(name), field=name, values=None, message="is required but empty"
        )

    def out_of_range(name: str, low: float | None, high: float | None, message: str) -> None:
        array = _floats(values[name], n)
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
    if name in INT_COLUMNS:
        number = float(value)
        if not number.is_integer():
            raise ValueError("is not a whole number")
        return int(number)
    if name in FLOAT_COLUMNS:
        return float(value)
    return str(value)
