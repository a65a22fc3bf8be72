"""One listing of the sample market, drawn as a canonical record.

:func:`new_listing` draws a record in a :class:`~.metros.Metro`: a dict with the listing API's
field names (``MLSNumber``, ``SalePrice``, ``ExtensionColumn`` as a list of ``{"Key", "value"}``
items, ...) holding the values a reader of an export should produce, followed by
:data:`DETAIL_FIELDS`: what an MLS export says in more detail than a listing holds (the RESO
``StandardStatus``, full and half baths, the HOA fee and its frequency, parking by kind, ...).
Everything comes from the ``random.Random`` passed in and the ``as_of`` date, never from the
clock or global state.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta
from typing import Any

from estatebot.api.models import LISTING_FIELDS

from .metros import Metro, zip_centre

__all__ = [
    "DETAIL_FIELDS",
    "PUBLISHED_STATUSES",
    "hoa_month",
    "new_listing",
    "open_house_start",
]

#: Fields a record carries besides the listing fields: an export's finer detail.
DETAIL_FIELDS: tuple[str, ...] = (
    "ListingKey",  # the MLS's own opaque key (RESO ListingKey)
    "StandardStatus",  # RESO StandardStatus; Status is what a reader makes of it
    "ListPrice",  # the asking price (a rental's monthly rent)
    "ClosePrice",  # the sale price of a Closed listing, else None
    "BathroomsFull",
    "BathroomsHalf",
    "LotSizeAcres",  # set when the export gives the lot in acres (LotArea = acres × 43,560)
    "GarageSpaces",
    "CarportSpaces",
    "OpenParkingSpaces",
    "AssociationFee",  # as billed, with its frequency; HOAMonth is the monthly equivalent
    "AssociationFeeFrequency",
    "OpenHouseStartTime",  # ISO date-time of the next open house, or None
    "VirtualTourURL",
    "Pool",
    "View",
)

#: RESO statuses of listings that are published (a reader keeps them).
PUBLISHED_STATUSES: dict[str, str] = {
    "Active": "Active",
    "Active Under Contract": "Active",
    "Pending": "Active",  # the reader's default for Pending
    "Coming Soon": "PreOnMarket",
    "Closed": "Sold",
}

_SQFT_PER_ACRE = 43_560
_HOA_FACTORS: dict[str, float] = {"Monthly": 1.0, "Quarterly": 1 / 3, "Annually": 1 / 12}

#: PropertySubType (RESO) weights, for sale and for rent; condos follow the metro's share.
_SALE_TYPES: tuple[tuple[str, float], ...] = (
    ("Single Family Residence", 0.62), ("Townhouse", 0.16), ("Duplex", 0.04),
)  # fmt: skip
_RENT_TYPES: tuple[tuple[str, float], ...] = (
    ("Apartment", 0.45), ("Single Family Residence", 0.35), ("Townhouse", 0.10),
)  # fmt: skip
_NOUNS = {
    "Single Family Residence": "single-family home",
    "Condominium": "condo",
    "Townhouse": "townhome",
    "Duplex": "duplex",
    "Apartment": "apartment",
}
_STACKED = ("Condominium", "Apartment")  # units in a building: no lot, a unit number

# --------------------------------------------------------------------------- one listing


def _weighted(rng: random.Random, choices: Sequence[tuple[str, float]]) -> str:
    return rng.choices([c for c, _ in choices], weights=[w for _, w in choices])[0]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _address(rng: random.Random, metro: Metro, sub_type: str) -> str:
    street = f"{rng.randint(*metro.numbers)} {rng.choice(metro.streets)}"
    if sub_type in _STACKED:
        floor = rng.randint(1, 32 if metro.city in ("Miami", "Chicago", "Seattle") else 12)
        street += f" #{floor}{rng.randint(1, 12):02d}"
    elif sub_type == "Townhouse" and rng.random() < 0.4:
        street += f" Unit {rng.randint(1, 24)}"
    return street


def _rooms(rng: random.Random, sub_type: str) -> tuple[int, int, int, int]:
    """Bedrooms, full baths, half baths and living area (square feet)."""
    if sub_type == "Single Family Residence":
        beds = rng.choice((2, 3, 3, 3, 4, 4, 5))
        area = 650 + beds * 430 + rng.gauss(0, 180)
    elif sub_type == "Townhouse":
        beds = rng.choice((2, 2, 3, 3, 4))
        area = 550 + beds * 400 + rng.gauss(0, 120)
    elif sub_type == "Duplex":
        beds = rng.choice((3, 4, 4, 6))
        area = 700 + beds * 380 + rng.gauss(0, 150)
    else:  # condominium or apartment
        beds = rng.choice((0, 1, 1, 2, 2, 2, 3))
        area = 480 + beds * 360 + rng.gauss(0, 80)
    full = max(1, beds - rng.choice((0, 1, 1))) if beds > 1 else 1
    half_share = 0.15 if sub_type in _STACKED else 0.45
    half = 1 if beds >= 2 and rng.random() < half_share else 0
    return beds, full, half, int(round(max(area, 380 + beds * 250) / 10) * 10)


def _sale_price(rng: random.Random, metro: Metro, sub_type: str, area: int, year: int) -> int:
    per_sqft = metro.sale_per_sqft * {"Condominium": 1.08, "Townhouse": 0.95,
                                       "Duplex": 0.85}.get(sub_type, 1.0)  # fmt: skip
    if year >= 2015:
        per_sqft *= 1.08
    raw = area * per_sqft * rng.lognormvariate(0, 0.13)
    price = int(round(raw, -4 if raw >= 1_000_000 else -3))
    # Asking prices often end in 900: 449,900 rather than 450,000.
    return price - 100 if raw < 1_000_000 and rng.random() < 0.35 else price


def _rent(rng: random.Random, metro: Metro, area: int) -> int:
    # A fixed part plus a part by size: small units rent for more per square foot.
    raw = (350 + area * metro.rent_per_sqft) * rng.lognormvariate(0, 0.10)
    return max(850, int(round(raw / 25) * 25))


def _lot(rng: random.Random, metro: Metro, sub_type: str) -> tuple[float, float | None]:
    """LotArea in square feet and, when the export gives acres, the acres."""
    if sub_type in _STACKED:
        return 0.0, None
    low, high = metro.lot_sqft
    if sub_type == "Townhouse":
        low, high = 1200, 3200
    elif sub_type == "Duplex":
        low, high = int(low * 0.9), int(high * 1.1)
    sqft = rng.randint(low, high)
    if sub_type == "Single Family Residence" and rng.random() < 0.08 and high >= 9000:
        sqft = rng.randint(20_000, 60_000)  # a large lot at the edge of town
    if sqft >= 4356 and rng.random() < 0.25:
        acres = round(sqft / _SQFT_PER_ACRE, 2)
        return round(acres * _SQFT_PER_ACRE, 2), acres
    return float(sqft // 10 * 10), None


def _parking(rng: random.Random, metro: Metro, sub_type: str) -> tuple[int, int, int]:
    """Garage, carport and open spaces."""
    if sub_type in _STACKED:
        return rng.choice((0, 1, 1, 2)), 0, rng.choice((0, 0, 1))
    if sub_type == "Townhouse":
        return rng.choice((1, 2, 2)), 0, rng.choice((0, 1))
    # Garages are rarer in the old dense cities.
    dense = metro.city in ("Boston", "Chicago")
    garage = rng.choice((0, 0, 1, 2) if dense else (0, 1, 2, 2, 2, 3))
    carport = 1 if rng.random() < (0.25 if metro.city == "Phoenix" else 0.05) else 0
    return garage, carport, rng.choice((0, 1, 2)) if garage < 2 else rng.choice((0, 0, 1))


def _hoa(rng: random.Random, metro: Metro, sub_type: str, rent: bool) -> tuple[int, str] | None:
    """The association fee as billed, and its frequency, or None."""
    if rent or sub_type in ("Duplex", "Apartment"):
        return None
    expensive = metro.city in ("Miami", "Boston", "Seattle", "Chicago")
    if sub_type == "Condominium":
        low, high = (350, 950) if expensive else (220, 560)
        return int(round(rng.randint(low, high) / 5) * 5), "Monthly"
    if sub_type == "Townhouse":
        if rng.random() < 0.6:
            return int(round(rng.randint(110, 340) / 5) * 5), "Monthly"
        return int(round(rng.randint(330, 900) / 10) * 10), "Quarterly"
    if rng.random() < 0.35:
        if rng.random() < 0.7:
            return int(round(rng.randint(240, 1500) / 10) * 10), "Annually"
        return int(round(rng.randint(120, 480) / 10) * 10), "Quarterly"
    return None


def hoa_month(fee: int | None, frequency: str | None) -> float | None:
    """The monthly equivalent of an association fee billed at ``frequency``, or None."""
    if fee is None or frequency is None:
        return None
    return round(fee * _HOA_FACTORS[frequency], 2)


def _status(rng: random.Random, rent: bool) -> str:
    if rent:
        return _weighted(rng, (("Active", 0.85), ("Coming Soon", 0.07), ("Pending", 0.08)))
    return _weighted(
        rng,
        (("Active", 0.70), ("Active Under Contract", 0.06), ("Pending", 0.07),
         ("Coming Soon", 0.05), ("Closed", 0.12)),
    )  # fmt: skip


def _days_on_market(rng: random.Random, status: str) -> int:
    if status == "Coming Soon":
        return 0
    if status in ("Active Under Contract", "Pending", "Closed"):
        return rng.randint(8, 95)
    return min(240, int(rng.expovariate(1 / 32)) + 1)


def open_house_start(rng: random.Random, as_of: date) -> str:
    """The ISO start of an open house on the first weekend after ``as_of``."""
    saturday = as_of + timedelta(days=(5 - as_of.weekday()) % 7 or 7)
    day = saturday + timedelta(days=rng.choice((0, 1)))
    start = datetime.combine(day, time(rng.choice((10, 11, 13, 14))))
    return start.isoformat()


_OPENINGS = ("Welcome home to this", "Bright and updated", "Move-in ready", "Charming",
             "Spacious", "Light-filled", "Well-kept", "Beautifully renovated")  # fmt: skip
_FEATURES = ("an open kitchen with quartz counters", "hardwood floors throughout",
             "a primary suite with a walk-in closet", "new HVAC (2023)", "a dedicated home office",
             "energy-efficient windows", "in-unit laundry", "fresh paint and new lighting",
             "high ceilings", "a chef's kitchen with gas range")  # fmt: skip
_SALE_CLOSINGS = ("Close to parks, shops and schools.", "Easy access to downtown.",
                  "Walk to cafes and transit.", "Showings by appointment.")  # fmt: skip
_RENT_CLOSINGS = ("Available now; pets considered.", "12-month lease; tenant pays utilities.",
                  "Available July 1; no smoking.", "Water and trash included.")  # fmt: skip


def _description(
    rng: random.Random, record: Mapping[str, Any], garage: int, pool: str | None
) -> str:
    sub_type = str(record["PropertyType"])
    beds = int(record["Bedrooms"])
    noun = _NOUNS[sub_type]
    size = f"studio {noun}" if beds == 0 else f"{beds}-bedroom {noun}"
    features = list(rng.sample(_FEATURES, 2))
    if sub_type == "Single Family Residence" and rng.random() < 0.5:
        features[1] = "a fenced backyard"
    if sub_type in _STACKED and rng.random() < 0.5:
        features[1] = "a private balcony"
    if garage >= 2 and rng.random() < 0.5:
        features[0] = f"a {garage}-car garage"
    if pool == "Yes":
        features[1] = "a sparkling pool"
    closing = rng.choice(_RENT_CLOSINGS if record["SaleType"] == "for_rent" else _SALE_CLOSINGS)
    if record.get("Status") == "PreOnMarket":
        closing = "Coming soon: showings begin next week."
    return (
        f"{rng.choice(_OPENINGS)} {size} in {record['City']}, built in {record['YearBuilt']}, "
        f"with {features[0]} and {features[1]}. {record['BuildingArea']:,.0f} sq ft. {closing}"
    )


def new_listing(
    rng: random.Random,
    metro: Metro,
    used: set[str],
    *,
    as_of: date,
    status: str | None = None,
    days_on_market: int | None = None,
) -> dict[str, Any]:
    """A new record in ``metro`` with an MLS number not in ``used`` (which it joins).

    ``status`` (RESO) and ``days_on_market`` are drawn unless given; ``as_of`` dates its open
    house.
    """
    rent = rng.random() < 0.25
    if rent:
        sub_type = _weighted(rng, (*_RENT_TYPES, ("Condominium", 0.10 + metro.condo_share / 3)))
    else:
        sub_type = _weighted(rng, (*_SALE_TYPES, ("Condominium", metro.condo_share)))
    status = status or _status(rng, rent)
    while True:
        mls = f"{metro.mls_prefix}{rng.randint(5_000, 2_999_999):07d}"
        if mls not in used:
            used.add(mls)
            break
    zip_code = rng.choice(metro.zips)
    _, _, lat, lon = zip_centre(zip_code)
    beds, full, half, area = _rooms(rng, sub_type)
    low, high = metro.years
    year = rng.randint(max(low, 1965) if sub_type in _STACKED and rng.random() < 0.6 else low,
                       high)  # fmt: skip
    lot_area, acres = _lot(rng, metro, sub_type)
    garage, carport, open_spaces = _parking(rng, metro, sub_type)
    hoa = _hoa(rng, metro, sub_type, rent)
    fee, frequency = hoa if hoa is not None else (None, None)
    list_price = _rent(rng, metro, area) if rent else _sale_price(rng, metro, sub_type, area, year)
    close_price = None
    if status == "Closed":
        close_price = int(round(list_price * rng.uniform(0.95, 1.03) / 500) * 500)
    price = close_price if close_price is not None else list_price
    address = _address(rng, metro, sub_type)
    pool: str | None = None
    if sub_type == "Single Family Residence":
        pool = "Yes" if rng.random() < metro.pool_share else rng.choice(("No", None))
    elif sub_type == "Condominium" and rng.random() < metro.pool_share:
        pool = "Community"
    view = rng.choice(metro.views) if rng.random() < 0.45 else None
    tours: str | None = None
    open_house: str | None = None
    tour_url: str | None = None
    if status not in ("Closed", "Coming Soon") and not rent and rng.random() < 0.2:
        tours, open_house = "OpenHouse", open_house_start(rng, as_of)
    elif status != "Closed" and rng.random() < 0.15:
        tours, tour_url = "3D", f"https://tours.example.com/{mls.lower()}"
    slug = f"{_slug(address)}-{_slug(metro.city)}-{metro.state.lower()}-{zip_code}"

    record: dict[str, Any] = dict.fromkeys(LISTING_FIELDS)
    record.update(
        SaleType="for_rent" if rent else "for_sale",
        Status=PUBLISHED_STATUSES[status],
        CurrencySymbol="$",
        PropertyType=sub_type,
        Bedrooms=beds,
        Bathrooms=full + 0.5 * half,
        Url=f"https://listings.example.com/{slug}/{mls.lower()}",
        MLSNumber=mls,
        YearBuilt=year,
        DaysOnMarket=(
            days_on_market if days_on_market is not None else _days_on_market(rng, status)
        ),
        LotArea=lot_area,
        BuildingArea=float(area),
        AreaUnit="Square Feet",
        Images=[
            f"https://photos.example.com/{mls.lower()}/{i:02d}.jpg"
            for i in range(1, rng.randint(3, 8) + 1)
        ],
        Tours=tours,
        ParkingSpots=garage + carport + open_spaces,
        ExtensionColumn=[
            {"Key": key, "value": value} for key, value in (("Pool", pool), ("View", view)) if value
        ],
        Address=address,
        City=metro.city,
        State=metro.state,
        ZIP=zip_code,
        Latitude=round(lat + rng.uniform(-0.009, 0.009), 6),
        Longitude=round(lon + rng.uniform(-0.011, 0.011), 6),
        SalePrice=None if rent else float(price),
        RentPrice=float(price) if rent else None,
        UnitAreaPrice=round(price / area, 2),
        HOAMonth=hoa_month(fee, frequency),
    )
    record["Description"] = _description(rng, record, garage, pool)
    record.update(
        ListingKey=f"{rng.getrandbits(128):032x}",
        StandardStatus=status,
        ListPrice=list_price,
        ClosePrice=close_price,
        BathroomsFull=full,
        BathroomsHalf=half,
        LotSizeAcres=acres,
        GarageSpaces=garage,
        CarportSpaces=carport,
        OpenParkingSpaces=open_spaces,
        AssociationFee=fee,
        AssociationFeeFrequency=frequency,
        OpenHouseStartTime=open_house,
        VirtualTourURL=tour_url,
        Pool=pool,
        View=view,
    )
    return record
