"""The value tables of MLS exports: statuses, units, HOA frequencies, sale types.

Plain data, looked up by :func:`normalize_value` (case, spaces and punctuation ignored), so
``Active Under Contract``, ``ACTIVE-UNDER-CONTRACT`` and ``active_under_contract`` are one value.

Statuses
--------
RESO ``StandardStatus`` values map to a listing Status or to a row outcome:

=========================  ===============================================================
Active                     Active
Active Under Contract      Active; the RESO status is kept in ExtensionColumn
Coming Soon                PreOnMarket
Pending                    ``pending_status``: Active (raw status kept), Sold (raw status
                           kept) or off-market (not published)
Closed                     Sold
Hold, Withdrawn, Expired,  not published: left out of the frame, listed in
Canceled, Delete           ``Sheet.unpublished`` (a remote copy becomes a delete candidate)
Incomplete, anything else  row error
=========================  ===============================================================

The listing API's own values (``Active``, ``PreOnMarket``, ``Sold``) read as themselves.
MLS-system exports write one- or two-letter codes; :data:`STATUS_CODES` maps them to the RESO
names. Codes differ between MLSs: pass ``statuses={"C": "Closed"}`` to ``read_sheet`` where a
board uses another meaning.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

#: What a status does to a row.
Outcome = Literal["Active", "PreOnMarket", "Sold", "pending", "unpublished", "error"]


@dataclass(frozen=True)
class StatusRule:
    """The outcome of one standard status, and whether the status is kept in ExtensionColumn."""

    standard: str
    outcome: Outcome
    keep_raw: bool = False


#: Standard statuses (RESO names, the listing API's values, a few common export words).
STATUS_RULES: tuple[StatusRule, ...] = (
    StatusRule("Active", "Active"),
    StatusRule("Active Under Contract", "Active", keep_raw=True),
    StatusRule("Contingent", "Active", keep_raw=True),
    StatusRule("Coming Soon", "PreOnMarket"),
    StatusRule("PreOnMarket", "PreOnMarket"),
    StatusRule("Pending", "pending", keep_raw=True),
    StatusRule("Closed", "Sold"),
    StatusRule("Sold", "Sold"),
    StatusRule("Hold", "unpublished"),
    StatusRule("Withdrawn", "unpublished"),
    StatusRule("Expired", "unpublished"),
    StatusRule("Canceled", "unpublished"),
    StatusRule("Cancelled", "unpublished"),
    StatusRule("Delete", "unpublished"),
    StatusRule("Off Market", "unpublished"),
    StatusRule("Incomplete", "error"),
    # Realtor-style exports use the listing kind as the status.
    StatusRule("For Sale", "Active"),
    StatusRule("For Rent", "Active"),
)

#: Status codes of MLS-system exports → RESO StandardStatus.
STATUS_CODES: dict[str, str] = {
    "A": "Active",
    "U": "Active Under Contract",
    "AC": "Active Under Contract",
    "CS": "Coming Soon",
    "P": "Pending",
    "S": "Closed",
    "C": "Canceled",
    "X": "Expired",
    "E": "Expired",
    "W": "Withdrawn",
    "H": "Hold",
    "T": "Hold",
    "I": "Incomplete",
}

#: ``pending_status`` choices → the rule a Pending row follows.
PENDING_RULES: dict[str, StatusRule] = {
    "Active": StatusRule("Pending", "Active", keep_raw=True),
    "Sold": StatusRule("Pending", "Sold", keep_raw=True),
    "off-market": StatusRule("Pending", "unpublished"),
}

#: Monthly factor of each RESO AssociationFeeFrequency; None marks fees that are not recurring
#: monthly costs (a row error: HOAMonth cannot be derived from them).
HOA_FACTORS: dict[str, float | None] = {
    "Annually": 1 / 12,
    "Annual": 1 / 12,
    "Yearly": 1 / 12,
    "Semi-Annually": 1 / 6,
    "Semi-Annual": 1 / 6,
    "Quarterly": 1 / 3,
    "Bi-Monthly": 1 / 2,
    "Monthly": 1.0,
    "Semi-Monthly": 2.0,
    "Bi-Weekly": 26 / 12,
    "Weekly": 52 / 12,
    "Daily": 365 / 12,
    "One Time": None,
    "Seasonal": None,
}

SQUARE_FEET = "Square Feet"
SQUARE_METERS = "Square Meters"
#: Square metres in one square foot.
SQM_PER_SQFT = 0.09290304
#: Square feet in one acre.
SQFT_PER_ACRE = 43_560.0

#: Area units → the listing's AreaUnit.
AREA_UNITS: dict[str, str] = {
    "Square Feet": SQUARE_FEET, "Square Foot": SQUARE_FEET, "SqFt": SQUARE_FEET,
    "Sq Ft": SQUARE_FEET, "SF": SQUARE_FEET, "ft2": SQUARE_FEET, "Feet": SQUARE_FEET,
    "Square Meters": SQUARE_METERS, "Square Metres": SQUARE_METERS, "Square Meter": SQUARE_METERS,
    "Square Metre": SQUARE_METERS, "SqM": SQUARE_METERS, "Sq M": SQUARE_METERS,
    "m2": SQUARE_METERS, "Meters": SQUARE_METERS, "Metres": SQUARE_METERS,
}  # fmt: skip

_SQFT_PER_HECTARE = 10_000 / SQM_PER_SQFT

#: Lot units → square feet per unit.
LOT_UNITS: dict[str, float] = {
    **{name: 1.0 for name, unit in AREA_UNITS.items() if unit == SQUARE_FEET},
    **{name: 1 / SQM_PER_SQFT for name, unit in AREA_UNITS.items() if unit == SQUARE_METERS},
    "Acres": SQFT_PER_ACRE, "Acre": SQFT_PER_ACRE, "Ac": SQFT_PER_ACRE,
    "Hectares": _SQFT_PER_HECTARE, "Hectare": _SQFT_PER_HECTARE, "ha": _SQFT_PER_HECTARE,
}  # fmt: skip

#: Square feet per unit of each listing AreaUnit.
SQFT_PER_AREA_UNIT: dict[str, float] = {SQUARE_FEET: 1.0, SQUARE_METERS: 1 / SQM_PER_SQFT}

#: Sale-or-rent words → SaleType.
SALE_TYPES: dict[str, str] = {
    "for_sale": "for_sale", "For Sale": "for_sale", "Sale": "for_sale", "Sold": "for_sale",
    "Pending": "for_sale",
    "for_rent": "for_rent", "For Rent": "for_rent", "Rent": "for_rent", "Rental": "for_rent",
    "Lease": "for_rent", "For Lease": "for_rent",
}  # fmt: skip

#: RESO PropertyType values: leases are for rent, the others for sale.
RESO_PROPERTY_TYPES: dict[str, str] = {
    "Residential Lease": "for_rent", "Commercial Lease": "for_rent",
    "Residential": "for_sale", "Residential Income": "for_sale", "Land": "for_sale",
    "Farm": "for_sale", "Commercial Sale": "for_sale", "Business Opportunity": "for_sale",
    "Manufactured In Park": "for_sale",
}  # fmt: skip

#: Tours and SpaceType spellings → the enum values.
TOURS: dict[str, str] = {"OpenHouse": "OpenHouse", "Open House": "OpenHouse", "3D": "3D",
                         "3D Tour": "3D", "Virtual Tour": "3D"}  # fmt: skip
SPACE_TYPES: dict[str, str] = {"Entire place": "Entire place", "Entire": "Entire place",
                               "Room": "Room", "Private Room": "Room"}  # fmt: skip

#: Yes/no spellings.
BOOLEANS: dict[str, bool] = {
    "True": True, "Yes": True, "Y": True, "1": True,
    "False": False, "No": False, "N": False, "0": False,
}  # fmt: skip

_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def normalize_value(text: str) -> str:
    """A value reduced for table lookup: NFKC, lower case, only letters and digits."""
    return _NON_ALNUM.sub("", unicodedata.normalize("NFKC", text).lower())


def lookup(table: dict[str, str]) -> dict[str, str]:
    """``table`` keyed by normalized spelling."""
    return {normalize_value(key): value for key, value in table.items()}


def status_table(
    pending_status: str, overrides: dict[str, str] | None = None
) -> dict[str, StatusRule]:
    """Normalized raw status → rule: standard names, codes, then the caller's overrides.

    ``overrides`` maps raw values to a standard status name (a RESO name or a listing Status).
    """
    if pending_status not in PENDING_RULES:
        choices = ", ".join(repr(c) for c in PENDING_RULES)
        raise ValueError(f"pending_status must be one of {choices}, not {pending_status!r}")
    by_name = {normalize_value(rule.standard): rule for rule in STATUS_RULES}
    by_name[normalize_value("Pending")] = PENDING_RULES[pending_status]
    table = dict(by_name)
    for code, standard in STATUS_CODES.items():
        table.setdefault(normalize_value(code), by_name[normalize_value(standard)])
    for raw, standard in (overrides or {}).items():
        rule = by_name.get(normalize_value(standard))
        if rule is None:
            known = ", ".join(r.standard for r in STATUS_RULES)
            raise ValueError(f"statuses maps {raw!r} to unknown status {standard!r}; use {known}")
        table[normalize_value(raw)] = rule
    return table


def parse_lot_unit(unit: str | None) -> float | None:
    """Square feet per unit of a ``lot_unit`` argument, or None when not given."""
    if unit is None:
        return None
    factor = lookup_float(LOT_UNITS).get(normalize_value(unit))
    if factor is None:
        raise ValueError(f"lot_unit {unit!r} is not a known unit; use 'sqft', 'sqm' or 'acres'")
    return factor


def lookup_float(table: dict[str, float]) -> dict[str, float]:
    """``table`` keyed by normalized spelling."""
    return {normalize_value(key): value for key, value in table.items()}
