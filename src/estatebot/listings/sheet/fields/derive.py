"""The listing fields of a sheet: typed sources combined by the export rules.

Every function works on whole columns (Series over the sheet's row positions). Problems are
collected in :class:`~estatebot.listings.sheet.issues.Issues` with the position, column, value
and message of each bad cell; a row with an error never reaches the listing frame.

The rules follow the reference mapping of MLS exports: ``Bathrooms`` = full + ½ × half;
``ParkingSpots`` = ParkingTotal, else garage + carport + open spaces (never covered spaces,
which already count garage and carport); areas converted into the listing's ``AreaUnit``;
``SaleType`` from the export's sale/rent column or from the RESO PropertyType; prices by sale
type; HOA fees made monthly; Status by the status table of :mod:`.rules`. The area rules are in
:mod:`.areas`, the money rules in :mod:`.prices`; :mod:`.validate` has the last word.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings.schema import DTYPES
from estatebot.listings.sheet.fields import mls_values as rules
from estatebot.listings.sheet.fields.areas import area_unit, building_area, lot_area, parking
from estatebot.listings.sheet.fields.cell_types import (
    BoolArray,
)
from estatebot.listings.sheet.fields.inputs import (
    STRING,
    Fields,
    Inputs,
    Options,
    coalesce,
    floats,
    na,
    present_mask,
    text_of,
    typed_series,
)
from estatebot.listings.sheet.fields.json_text import json_value
from estatebot.listings.sheet.fields.lookups import choose, lookup
from estatebot.listings.sheet.fields.prices import hoa, prices, unit_area_price, zestimate
from estatebot.listings.sheet.fields.validate import apply_defaults, apply_overrides
from estatebot.listings.sheet.issues import Issues

#: The ExtensionColumn keys of the values kept by rule.
STATUS_KEY = "StandardStatus"
LISTING_KEY = "ListingKey"


# --------------------------------------------------------------------------- the rules


def derive(inputs: Inputs, options: Options, issues: Issues) -> Fields:
    """Combine the typed sources into listing fields, recording every problem in ``issues``."""
    n = inputs.n
    values: dict[str, pd.Series] = {}
    bad: dict[str, BoolArray] = {}
    cleared: dict[str, BoolArray] = {}
    # Where a value came from `defaults` rather than the sheet (see Fields.defaulted).
    defaulted: dict[str, BoolArray] = {}
    derived: dict[str, BoolArray] = {}

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
        values[name] = series if series is not None else na(n, DTYPES[name])
        cleared[name] = inputs.cleared(name)

    values["PropertyType"] = coalesce(
        n, "string", inputs.get("PropertySubType"), inputs.get("PropertyType")
    )
    cleared["PropertyType"] = inputs.cleared("PropertySubType", "PropertyType")

    sale_type, bad["SaleType"] = _sale_type(inputs, options, issues, defaulted)
    values["SaleType"] = sale_type
    cleared["SaleType"] = inputs.cleared("SaleType")

    status, unpublished, kept, bad["Status"], status_text = _status(
        inputs, options, issues, defaulted
    )
    values["Status"] = status
    cleared["Status"] = inputs.cleared("Status")

    values["Bathrooms"], bad["Bathrooms"] = _bathrooms(inputs, options, issues)
    cleared["Bathrooms"] = inputs.cleared("Bathrooms", "BathroomsFull", "BathroomsHalf")

    unit, bad["AreaUnit"] = area_unit(inputs, options, issues, defaulted)
    values["AreaUnit"] = typed_series(unit, "string")
    cleared["AreaUnit"] = inputs.cleared("AreaUnit", "LivingAreaUnits", "BuildingAreaUnits")
    values["BuildingArea"], bad["BuildingArea"] = building_area(inputs, unit, issues)
    cleared["BuildingArea"] = inputs.cleared(
        "BuildingArea", "LivingArea", "BuildingAreaTotal", "BuildingAreaSquareFeet"
    )
    values["LotArea"], bad["LotArea"] = lot_area(inputs, options, unit, issues)
    cleared["LotArea"] = inputs.cleared(
        "LotArea", "LotSizeSquareFeet", "LotSizeArea", "LotSizeUnits", "LotSizeAcres", "LotSize"
    )

    values["ParkingSpots"], bad["ParkingSpots"] = parking(inputs, issues)
    cleared["ParkingSpots"] = inputs.cleared(
        "ParkingSpots", "GarageSpaces", "CarportSpaces", "OpenParkingSpaces"
    )

    values["Description"] = text_of(inputs, "Description")
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
    spaces, bad["SpaceType"] = choose(
        inputs,
        issues,
        "SpaceType",
        rules.lookup(rules.SPACE_TYPES),
        what="SpaceType (Entire place or Room)",
    )
    values["SpaceType"] = typed_series(spaces, "string")
    cleared["SpaceType"] = inputs.cleared("SpaceType")

    prices(inputs, values, cleared)
    values["HOAMonth"], bad["HOAMonth"] = hoa(inputs, issues)
    cleared["HOAMonth"] = inputs.cleared("HOAMonth", "AssociationFee", "AssociationFeeFrequency")
    values["ZestimatePrice"] = zestimate(inputs)
    cleared["ZestimatePrice"] = inputs.cleared("ZestimatePrice")
    values["UnitAreaPrice"] = unit_area_price(inputs, values, issues)
    # Where the sheet gives no unit price, the one computed here is the reader's, not the sheet's.
    derived["UnitAreaPrice"] = present_mask(values["UnitAreaPrice"], n) & ~present_mask(
        inputs.get("UnitAreaPrice"), n
    )
    cleared["UnitAreaPrice"] = inputs.cleared("UnitAreaPrice")

    for name, mask in inputs.bad.items():
        bad[name] = bad.get(name, np.zeros(n, dtype=bool)) | mask
    defaulted.update(apply_defaults(values, cleared, options.defaults))
    apply_overrides(values, cleared, options.overrides)
    for name in options.overrides:
        defaulted.pop(name, None)
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
    defaulted = {
        name: mask & ~cleared.get(name, np.zeros(n, dtype=bool))
        for name, mask in defaulted.items()
        if mask.any()
    }
    return Fields(
        values,
        cleared,
        unpublished,
        kept,
        bad,
        status_text,
        defaulted,
        derived={
            name: mask & ~cleared.get(name, np.zeros(n, dtype=bool))
            for name, mask in derived.items()
        },
    )


def _sale_type(
    inputs: Inputs, options: Options, issues: Issues, defaulted: dict[str, BoolArray]
) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    table = rules.lookup(rules.SALE_TYPES)
    explicit, bad = choose(inputs, issues, "SaleType", table, what="SaleType (for_sale/for_rent)")
    by_type: list[Any] = [None] * n
    property_type = inputs.get("PropertyType")
    if property_type is not None:
        by_type, _ = lookup(property_type, rules.lookup(rules.RESO_PROPERTY_TYPES))
    has_type = present_mask(property_type, n) | present_mask(inputs.get("PropertySubType"), n)
    default = options.defaults.get("SaleType")
    if default is not None:
        defaulted["SaleType"] = np.array(
            [e is None and t is None for e, t in zip(explicit, by_type, strict=True)], dtype=bool
        )
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
    return typed_series(out, "string"), bad


def _status(
    inputs: Inputs, options: Options, issues: Issues, defaulted: dict[str, BoolArray]
) -> tuple[pd.Series, BoolArray, list[str | None], BoolArray, pd.Series]:
    n = inputs.n
    text = inputs.get("Status")
    if text is None:
        text = na(n, STRING)
    default = options.defaults.get("Status")
    if default is not None:
        defaulted["Status"] = text.isna().to_numpy(dtype=bool)
        text = text.fillna(default)
    found, unknown = lookup(text, options.status_table)
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
    return typed_series(status, "string"), unpublished, kept, unknown | error, text


def _bathrooms(inputs: Inputs, options: Options, issues: Issues) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    bad = np.zeros(n, dtype=bool)
    total = floats(inputs.get("Bathrooms"), n)
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
    full = floats(inputs.get("BathroomsFull"), n)
    half = floats(inputs.get("BathroomsHalf"), n)
    parts = ~np.isnan(full) | ~np.isnan(half)
    from_parts = np.nan_to_num(full) + 0.5 * np.nan_to_num(half)
    out = np.where(parts, from_parts, total)
    return pd.Series(pd.array(out, dtype="Float64")), bad


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
    composed = na(n, "string")
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
    return coalesce(n, "string", inputs.get("Address"), inputs.get("UnparsedAddress"), composed)


_URL_SPLIT = re.compile(r"[\s,|;]+")


def _url_list(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("["):
        try:
            parsed = json_value(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            for url in parsed:
                if type(url) is not str or not url or url.strip() is not url:
                    return [str(u).strip() for u in parsed if str(u).strip()]
            # Each URL text, and trimmed (strip gives the text itself): the list as parsed.
            return parsed
    return [u for u in _URL_SPLIT.split(text) if u]


def _distinct(urls: list[str]) -> bool:
    """Whether no URL is met twice (a row's few URLs: no set is made for them)."""
    # A loop rather than all(...): no generator per row for the garbage collector to count.
    for i in range(1, len(urls)):  # noqa: SIM110
        if urls.index(urls[i]) != i:
            return False
    return True


def _images(inputs: Inputs) -> pd.Series:
    """Each row's photo URLs, from every photo source in turn, each URL once."""
    n = inputs.n
    sources = [inputs.get(s) for s in ("PrimaryPhoto", "Images", "PhotoURL", "AltPhotos")]
    # A list only for the rows that have photos, and the first source's list itself.
    lists: list[list[str] | None] = [None] * n
    for series in sources:
        if series is None:
            continue
        present = np.flatnonzero(series.notna().to_numpy(dtype=bool))
        for i, text in zip(present.tolist(), series.iloc[present].tolist(), strict=True):
            urls = _url_list(text)
            have = lists[i]
            if have is None:
                lists[i] = urls if _distinct(urls) else list(dict.fromkeys(urls))
                continue
            for url in urls:
                if url not in have:
                    have.append(url)
    return pd.Series([urls if urls is not None else [] for urls in lists], dtype=object)


def _tours(inputs: Inputs, issues: Issues) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    explicit, bad = choose(
        inputs, issues, "Tours", rules.lookup(rules.TOURS), what="tour kind (OpenHouse or 3D)"
    )
    open_house = present_mask(inputs.get("OpenHouse"), n)
    virtual = present_mask(inputs.get("VirtualTour"), n)
    out = [
        e if e is not None else "OpenHouse" if o else "3D" if v else None
        for e, o, v in zip(explicit, open_house, virtual, strict=True)
    ]
    return typed_series(out, "string"), bad
