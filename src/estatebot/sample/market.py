"""The sample market: realistic listings as canonical records, and the same market a week later.

:func:`market` draws ``n`` listings in eight US metro areas from a seed. Every record is a dict
with the listing API's field names (``MLSNumber``, ``SalePrice``, ``ExtensionColumn`` as a list
of ``{"Key", "value"}`` items, ...) holding the values a reader of an export should produce,
followed by :data:`DETAIL_FIELDS`: what an MLS export says in more detail than a listing holds
(the RESO ``StandardStatus``, full and half baths, the HOA fee and its frequency, parking by
kind, ...). Writers (:mod:`.styles`) turn records into export files; tests compare what a reader
gets back with the records.

Everything comes from ``random.Random(seed)`` and the fixed :data:`AS_OF` date, never from the
clock or global state, so a seed always gives the same market. Places are real: each metro
draws from a list of residential ZIP codes checked against the ``zipcodes`` package, which also
gives the ZIP's centre; a listing sits within about a kilometre of it.

:func:`next_week` returns the same market seven days later, with a record of every change.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from functools import cache
from typing import Any, Literal

from estatebot.api.models import LISTING_FIELDS

__all__ = [
    "AS_OF",
    "DETAIL_FIELDS",
    "METROS",
    "PUBLISHED_STATUSES",
    "Change",
    "Metro",
    "api_fields",
    "is_published",
    "market",
    "next_week",
    "zip_centre",
]

#: The date the week-1 market describes (days on market count up to it).
AS_OF = date(2025, 6, 2)

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


@dataclass(frozen=True)
class Metro:
    """One metro area: where it is, its MLS number prefix, and its price levels."""

    city: str
    state: str
    mls_prefix: str
    zips: tuple[str, ...]
    #: Typical sale price per square foot of a single-family home.
    sale_per_sqft: float
    #: Typical monthly rent per square foot.
    rent_per_sqft: float
    condo_share: float
    years: tuple[int, int]
    lot_sqft: tuple[int, int]
    #: Real street names of the city, with their suffixes and directions.
    streets: tuple[str, ...]
    #: The range of house numbers on them.
    numbers: tuple[int, int]
    views: tuple[str, ...]
    pool_share: float
    weight: float = 1.0


METROS: tuple[Metro, ...] = (
    Metro("Austin", "TX", "AU",
          ("78702", "78703", "78704", "78723", "78731", "78745", "78748", "78751", "78757",
           "78759"),
          330, 1.65, 0.15, (1948, 2024), (5500, 10500),
          ("S Lamar Blvd", "Burnet Rd", "Manor Rd", "Riverside Dr", "S Congress Ave", "Duval St",
           "Manchaca Rd", "Guadalupe St", "W Koenig Ln", "Slaughter Ln"),
          (100, 9899),
          ("Hill Country", "City", "Greenbelt"), 0.30, weight=1.2),
    Metro("Denver", "CO", "DV",
          ("80203", "80205", "80206", "80210", "80211", "80218", "80220", "80224", "80238"),
          380, 1.85, 0.20, (1895, 2024), (4500, 8000),
          ("E Colfax Ave", "Federal Blvd", "Speer Blvd", "Tennyson St", "Downing St",
           "N Williams St", "E Yale Ave", "Montview Blvd", "Tejon St", "Holly St"),
          (100, 4999),
          ("Mountain(s)", "City", "Park/Greenbelt"), 0.05),
    Metro("Miami", "FL", "MI",
          ("33125", "33127", "33129", "33131", "33133", "33137", "33138", "33145", "33155"),
          470, 2.45, 0.45, (1935, 2024), (5000, 9000),
          ("Biscayne Blvd", "Coral Way", "W Flagler St", "Brickell Ave", "Bird Rd", "Tigertail Ave",
           "Douglas Rd", "Ponce de Leon Blvd", "Kumquat Ave", "SW 8th St"),
          (100, 8999),
          ("Water", "Bay", "City", "Ocean"), 0.45),
    Metro("Boston", "MA", "BN",
          ("02108", "02109", "02110", "02111", "02113", "02114", "02115", "02116", "02118",
           "02210", "02215"),
          720, 3.30, 0.50, (1860, 2023), (1800, 5000),
          ("Beacon St", "Commonwealth Ave", "Tremont St", "Hanover St", "Marlborough St",
           "Charles St", "Salem St", "Newbury St", "Dartmouth St", "Shawmut Ave"),
          (1, 420),
          ("City", "Water", "Park"), 0.02, weight=0.9),
    Metro("Seattle", "WA", "SE",
          ("98102", "98103", "98105", "98107", "98112", "98115", "98116", "98117", "98118",
           "98122"),
          590, 2.60, 0.30, (1900, 2024), (4000, 7500),
          ("Aurora Ave N", "Rainier Ave S", "Fremont Ave N", "Greenwood Ave N", "E Madison St",
           "Roosevelt Way NE", "Dexter Ave N", "NW Market St", "Alki Ave SW", "Phinney Ave N"),
          (100, 9999),
          ("Mountain(s)", "Water", "City", "Territorial"), 0.03),
    Metro("Phoenix", "AZ", "PX",
          ("85008", "85012", "85013", "85014", "85016", "85018", "85020", "85028", "85032",
           "85044"),
          290, 1.45, 0.10, (1950, 2024), (6000, 12000),
          ("E Camelback Rd", "W Indian School Rd", "E Thomas Rd", "E McDowell Rd", "W Osborn Rd",
           "N Central Ave", "E Cactus Rd", "E Shea Blvd", "W Bell Rd", "E Thunderbird Rd"),
          (1000, 9999),
          ("Mountain(s)", "City Lights", "Desert"), 0.45),
    Metro("Chicago", "IL", "CH",
          ("60610", "60613", "60614", "60618", "60622", "60625", "60640", "60647", "60657",
           "60660"),
          265, 2.00, 0.40, (1885, 2024), (3000, 4800),
          ("N Halsted St", "N Clark St", "N Damen Ave", "W Belmont Ave", "W Fullerton Ave",
           "N Ashland Ave", "W Armitage Ave", "W Wellington Ave", "N Lincoln Ave",
           "W Diversey Pkwy"),
          (400, 5999),
          ("City", "Lake", "Park"), 0.02),
    Metro("San Antonio", "TX", "SA",
          ("78209", "78210", "78212", "78213", "78216", "78230", "78249", "78251", "78258"),
          185, 1.25, 0.08, (1920, 2024), (6000, 11000),
          ("Broadway St", "Blanco Rd", "Nacogdoches Rd", "Hildebrand Ave", "Fredericksburg Rd",
           "Sunset Rd", "W Mistletoe Ave", "Stone Oak Pkwy", "Huebner Rd", "Babcock Rd"),
          (100, 9899),
          ("Hill Country", "Greenbelt", "City"), 0.30, weight=0.9),
)  # fmt: skip

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


@dataclass(frozen=True)
class Change:
    """One change between two weeks of a market: its kind, the listing, and the fields.

    ``kind`` is "price" (a new list price), "field" (another listing field), "sold" (now
    Closed), "new" (a new listing), or "unpublished" (now Withdrawn or Expired, so a reader
    leaves it out and a plan deletes the remote copy). ``fields`` maps every changed field
    (listing fields and detail fields; ``DaysOnMarket``, which grows by 7 for every listing,
    is left out) to its value before and after; a new listing has no fields.
    """

    kind: Literal["price", "field", "sold", "new", "unpublished"]
    mls: str
    fields: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)


# --------------------------------------------------------------------------- places


@cache
def zip_centre(zip_code: str) -> tuple[str, str, float, float]:
    """A ZIP code's city, state, latitude and longitude, from the ``zipcodes`` package."""
    try:
        import zipcodes
    except ImportError:  # a dev/sample dependency, not needed to use the toolkit
        raise RuntimeError(
            "the sample generator needs the 'zipcodes' package: pip install 'estatebot[sample]'"
        ) from None
    found = zipcodes.matching(zip_code)  # type: ignore[no-untyped-call]
    if not found:
        raise ValueError(f"ZIP code {zip_code} is not in the zipcodes data")
    entry = found[0]
    return str(entry["city"]), str(entry["state"]), float(entry["lat"]), float(entry["long"])


def _check_metro(metro: Metro) -> None:
    for zip_code in metro.zips:
        city, state, _, _ = zip_centre(zip_code)
        if (city, state) != (metro.city, metro.state):
            raise ValueError(f"ZIP {zip_code} is in {city}, {state}, not {metro.city}")


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


def _hoa_month(fee: int | None, frequency: str | None) -> float | None:
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


def _open_house(rng: random.Random, as_of: date) -> str:
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


def _new_listing(
    rng: random.Random,
    metro: Metro,
    used: set[str],
    *,
    as_of: date,
    status: str | None = None,
    days_on_market: int | None = None,
) -> dict[str, Any]:
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
        tours, open_house = "OpenHouse", _open_house(rng, as_of)
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
        HOAMonth=_hoa_month(fee, frequency),
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


# --------------------------------------------------------------------------- the market


def market(seed: int = 42, n: int = 200, *, as_of: date = AS_OF) -> list[dict[str, Any]]:
    """``n`` listings drawn from ``seed``: about a quarter for rent, the rest for sale.

    Records hold the listing fields (the values a reader of an export should produce) and the
    :data:`DETAIL_FIELDS`. The same seed always gives the same records.
    """
    for metro in METROS:
        _check_metro(metro)
    rng = random.Random(seed)
    used: set[str] = set()
    weights = [metro.weight for metro in METROS]
    return [_new_listing(rng, rng.choices(METROS, weights)[0], used, as_of=as_of) for _ in range(n)]


def is_published(record: Mapping[str, Any]) -> bool:
    """Whether a reader keeps this listing (its status is not Withdrawn, Expired, ...)."""
    return record["StandardStatus"] in PUBLISHED_STATUSES


def api_fields(record: Mapping[str, Any]) -> dict[str, Any]:
    """The listing fields of a record, without the detail fields."""
    return {name: record[name] for name in LISTING_FIELDS}


def _set(record: dict[str, Any], changes: dict[str, tuple[Any, Any]], **values: Any) -> None:
    for name, value in values.items():
        if record[name] != value:
            changes[name] = (record[name], value)
            record[name] = value


def _reprice(record: dict[str, Any], changes: dict[str, tuple[Any, Any]], price: int) -> None:
    rent = record["SaleType"] == "for_rent"
    _set(record, changes, ListPrice=price, UnitAreaPrice=round(price / record["BuildingArea"], 2))
    _set(record, changes, **{"RentPrice" if rent else "SalePrice": float(price)})


def next_week(
    listings: Sequence[Mapping[str, Any]], seed: int = 42, *, as_of: date = AS_OF
) -> tuple[list[dict[str, Any]], list[Change]]:
    """The same market seven days later, and what changed (see :class:`Change`).

    About 10 price changes, 5 other field changes (a description, a photo, an HOA fee, a Coming
    Soon listing going live, an open house), 6 sales, 8 new listings and 4 listings withdrawn
    or expired (kept as rows with that status, as an export shows them); days on market grow
    by 7 everywhere. ``listings`` is not changed.
    """
    rng = random.Random(f"next-week:{seed}")
    week = [dict(record) for record in listings]
    for record in week:
        record["Images"] = list(record["Images"])
        record["ExtensionColumn"] = [dict(item) for item in record["ExtensionColumn"]]
        record["DaysOnMarket"] += 7
        if record["OpenHouseStartTime"]:
            start = datetime.fromisoformat(record["OpenHouseStartTime"]) + timedelta(days=7)
            record["OpenHouseStartTime"] = start.isoformat()
    by_mls = {record["MLSNumber"]: record for record in week}
    taken: set[str] = set()
    changes: list[Change] = []

    def pick(count: int, wanted: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        pool = [r for r in wanted if r["MLSNumber"] not in taken]
        chosen = rng.sample(pool, min(count, len(pool)))
        taken.update(r["MLSNumber"] for r in chosen)
        return chosen

    def live(record: Mapping[str, Any]) -> bool:
        return record["StandardStatus"] in ("Active", "Active Under Contract")

    for record in pick(10, (r for r in week if live(r))):
        done: dict[str, tuple[Any, Any]] = {}
        factor = rng.uniform(0.93, 0.98) if rng.random() < 0.8 else rng.uniform(1.02, 1.04)
        if record["SaleType"] == "for_rent":
            price = int(round(record["ListPrice"] * factor / 25) * 25)
        else:
            price = int(round(record["ListPrice"] * factor, -3)) - 100
        _reprice(record, done, price)
        changes.append(Change("price", record["MLSNumber"], done))

    for kind in ("description", "photo", "hoa", "coming soon", "open house"):
        done = {}
        if kind == "description":
            (record,) = pick(1, (r for r in week if live(r)))
            _set(record, done, Description=record["Description"] + " New roof in 2025.")
        elif kind == "photo":
            (record,) = pick(1, (r for r in week if live(r)))
            count = len(record["Images"]) + 1
            photo = f"https://photos.example.com/{record['MLSNumber'].lower()}/{count:02d}.jpg"
            _set(record, done, Images=[*record["Images"], photo])
        elif kind == "hoa":
            (record,) = pick(1, (r for r in week if live(r) and r["AssociationFee"]))
            fee = int(round(record["AssociationFee"] * 1.06 / 5) * 5)
            _set(record, done, AssociationFee=fee,
                 HOAMonth=_hoa_month(fee, record["AssociationFeeFrequency"]))  # fmt: skip
        elif kind == "coming soon":
            soon = [r for r in week if r["StandardStatus"] == "Coming Soon"]
            if soon:
                (record,) = pick(1, soon)
                _set(record, done, StandardStatus="Active", Status="Active")
            else:  # a small market may have none: go under contract instead
                (record,) = pick(1, (r for r in week if r["StandardStatus"] == "Active"))
                _set(record, done, StandardStatus="Active Under Contract")
        else:
            (record,) = pick(1, (r for r in week if live(r) and r["SaleType"] == "for_sale"
                                 and r["Tours"] is None))  # fmt: skip
            _set(record, done, Tours="OpenHouse",
                 OpenHouseStartTime=_open_house(rng, as_of + timedelta(days=7)))  # fmt: skip
        changes.append(Change("field", record["MLSNumber"], done))

    for record in pick(6, (r for r in week if r["SaleType"] == "for_sale" and r["Tours"] is None
                           and r["StandardStatus"] in ("Active", "Active Under Contract",
                                                       "Pending"))):  # fmt: skip
        done = {}
        close = int(round(record["ListPrice"] * rng.uniform(0.96, 1.02) / 500) * 500)
        unit_price = round(close / record["BuildingArea"], 2)
        _set(record, done, StandardStatus="Closed", Status="Sold", ClosePrice=close,
             SalePrice=float(close), UnitAreaPrice=unit_price)  # fmt: skip
        changes.append(Change("sold", record["MLSNumber"], done))

    for status in ("Withdrawn", "Withdrawn", "Expired", "Expired"):
        (record,) = pick(1, (r for r in week if r["StandardStatus"] == "Active"))
        done = {}
        _set(record, done, StandardStatus=status, Status=None)
        changes.append(Change("unpublished", record["MLSNumber"], done))

    used = set(by_mls)
    weights = [metro.weight for metro in METROS]
    for i in range(8):
        metro = rng.choices(METROS, weights)[0]
        status = "Coming Soon" if i % 4 == 3 else "Active"
        days = 0 if status == "Coming Soon" else rng.randint(1, 6)
        record = _new_listing(rng, metro, used, as_of=as_of + timedelta(days=7), status=status,
                              days_on_market=days)  # fmt: skip
        week.append(record)
        changes.append(Change("new", record["MLSNumber"]))
    return week, changes
