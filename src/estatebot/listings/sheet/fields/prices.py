"""The money fields of a sheet: sale or rent price by sale type, HOA fees made monthly, the
estimate, and the price per unit area (checked against price ÷ area).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from estatebot.listings.sheet.fields import mls_values as rules
from estatebot.listings.sheet.fields.cell_types import (
    BoolArray,
)
from estatebot.listings.sheet.fields.inputs import Inputs, floats, na
from estatebot.listings.sheet.fields.lookups import lookup
from estatebot.listings.sheet.issues import Issues

#: UnitAreaPrice given by the sheet may differ from price ÷ area by this share before a warning.
UNIT_PRICE_TOLERANCE = 0.01


def prices(inputs: Inputs, values: dict[str, pd.Series], cleared: dict[str, BoolArray]) -> None:
    n = inputs.n
    listed = floats(inputs.get("ListPrice"), n)
    closed = floats(inputs.get("ClosePrice"), n)
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


def hoa(inputs: Inputs, issues: Issues) -> tuple[pd.Series, BoolArray]:
    n = inputs.n
    explicit = floats(inputs.get("HOAMonth"), n)
    fee = floats(inputs.get("AssociationFee"), n)
    bad = np.zeros(n, dtype=bool)
    factor = np.full(n, np.nan)
    frequency = inputs.get("AssociationFeeFrequency")
    if frequency is not None:
        table = {rules.normalize_value(k): v for k, v in rules.HOA_FACTORS.items()}
        found, unknown = lookup(frequency, {k: ("x" if v is None else v) for k, v in table.items()})
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


def zestimate(inputs: Inputs) -> pd.Series:
    n = inputs.n
    value = inputs.get("ZestimatePrice")
    out = value if value is not None else na(n, "Float64")
    display = inputs.get("InternetAutomatedValuationDisplayYN")
    if display is not None:
        hidden = display.eq(False).to_numpy(dtype=bool, na_value=False)
        out = out.mask(pd.Series(hidden), pd.NA)
    return out


def unit_area_price(inputs: Inputs, values: dict[str, pd.Series], issues: Issues) -> pd.Series:
    n = inputs.n
    rent = values["SaleType"].eq("for_rent").to_numpy(dtype=bool, na_value=False)
    price = np.where(rent, floats(values["RentPrice"], n), floats(values["SalePrice"], n))
    area = floats(values["BuildingArea"], n)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        computed = np.where(area > 0, price / area, np.nan)
    given = floats(inputs.get("UnitAreaPrice"), n)
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
