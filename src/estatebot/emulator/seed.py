"""The emulator's starting data: the demo workspace, its chatbot and sample listings.

The demo workspace has fixed credentials (:data:`DEMO_API_KEY`, :data:`DEMO_SESSION_KEY`) and one
chatbot, "Sunny Homes" (:data:`DEMO_SERIAL`). :func:`load_seed` prepares a store:

* ``"demo"`` — the demo workspace and chatbot with the sample market's week-1 listings
  (:func:`demo_listings`: 200 listings in eight US metro areas, for sale and for rent, read from
  ``sample_data/mls_export.xlsx`` and stored as ``demo_listings.json`` next to this module, so
  planning that export against a fresh demo emulator finds nothing to do);
* ``"small"`` — the demo workspace and chatbot with :data:`SAMPLE_LISTINGS` (16 hand-written
  listings in Austin TX, Denver CO, Miami FL and San Antonio TX, for sale and for rent);
* ``None`` — the demo workspace and chatbot with no listings;
* a path to a JSON file — the demo workspace and chatbot with the file's listings. The file
  holds a JSON list of RealEstateCreate bodies, with or without ``SerialNumber`` (it is replaced
  by the demo chatbot's), for example
  ``[{"SaleType": "for_sale", "Status": "Active", "CurrencySymbol": "$", ...}]``.

Listings are loaded only when the demo chatbot has none yet, so restarting on a database file
neither duplicates them nor fails on a conflict.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from functools import cache
from os import PathLike
from pathlib import Path
from typing import Any

from estatebot.api.models import ListingInput

from .store import DEFAULT_CHATBOT_SETTINGS, Store

DEMO_API_KEY = "demo-api-key"
DEMO_SESSION_KEY = "demo-session-key"
DEMO_SERIAL = "3254a9d0424c4806b9ea3d0763ccf1bf"

#: The demo chatbot's settings.
DEMO_SETTINGS: dict[str, Any] = {
    **DEFAULT_CHATBOT_SETTINGS,
    "Name": "Sunny Homes",
    "Model": "3",
    "SystemMessage": (
        "You are Sunny Homes' assistant. Help visitors find homes to buy or rent, using only "
        "the listings provided."
    ),
    "WelcomeMessage": "Hi, welcome to Sunny Homes! Looking to buy or rent? Tell me a city, "
    "a budget or how many bedrooms you need.",
    "TimeZone": "America/Chicago",
    "RateLimitCount": 0,
    "RateLimitTime": 60,
    "RateLimitMessage": "You're sending messages too quickly. Please wait a moment.",
    "MessageLimit": -1,
    "ChatBubbleColor": "rgb(255,183,3)",
    "UserInputPlaceholder": "Ask about homes in Austin, Boston, Chicago, Miami and more",
}

SeedSpec = str | PathLike[str] | None


def _listing(
    mls: str,
    city: str,
    state: str,
    zip_code: str,
    address: str,
    sale_type: str,
    price: int,
    beds: float,
    baths: float,
    area: int,
    *,
    property_type: str = "Single Family",
    status: str = "Active",
    lat: float,
    lon: float,
    year: int = 2005,
    extras: Sequence[tuple[str, str]] = (),
    tours: str | None = None,
) -> dict[str, Any]:
    slug = mls.lower()
    item: dict[str, Any] = {
        "SaleType": sale_type,
        "Status": status,
        "CurrencySymbol": "$",
        "PropertyType": property_type,
        "Bedrooms": beds,
        "Bathrooms": baths,
        "Url": f"https://listings.example.com/{slug}",
        "MLSNumber": mls,
        "YearBuilt": year,
        "DaysOnMarket": (sum(map(ord, mls)) % 60) + 1,
        "LotArea": area * 3 if property_type == "Single Family" else 0,
        "BuildingArea": area,
        "AreaUnit": "Square Feet",
        "Images": [f"https://images.example.com/{slug}/{n}.jpg" for n in (1, 2)],
        "ParkingSpots": 2 if property_type == "Single Family" else 1,
        "Description": f"{beds:g}-bedroom {property_type.lower()} in {city}.",
        "Address": address,
        "City": city,
        "State": state,
        "ZIP": zip_code,
        "Latitude": lat,
        "Longitude": lon,
    }
    if sale_type == "for_sale":
        item["SalePrice"] = price
        item["UnitAreaPrice"] = round(price / area, 2)
        item["ZestimatePrice"] = round(price * 1.02, -3)
        if property_type != "Single Family":
            item["HOAMonth"] = 350
    else:
        item["RentPrice"] = price
        item["DepositFee"] = price
        item["SpaceType"] = "Entire place"
    if extras:
        item["ExtensionColumn"] = [{"Key": k, "value": v} for k, v in extras]
    if tours:
        item["Tours"] = tours
    return item


#: The small seed's hand-written listings (Create bodies without SerialNumber).
SAMPLE_LISTINGS: tuple[dict[str, Any], ...] = (
    _listing("ATX1001", "Austin", "TX", "78704", "1208 S Lamar Blvd", "for_sale", 450000, 3, 2,
             1850, lat=30.2541, lon=-97.7631, year=1998, extras=[("Pool", "Yes")],
             tours="OpenHouse"),
    _listing("ATX1002", "Austin", "TX", "78751", "4502 Duval St", "for_sale", 725000, 4, 3,
             2600, lat=30.3112, lon=-97.7261, year=2012),
    _listing("ATX1003", "Austin", "TX", "78701", "301 West Ave #1204", "for_rent", 2400, 2, 2,
             1100, property_type="Condo", lat=30.2669, lon=-97.7506, year=2015,
             extras=[("Gym", "Yes"), ("Pets", "Cats only")]),
    _listing("ATX1004", "Austin", "TX", "78745", "6703 Manchaca Rd", "for_sale", 389000, 3, 2.5,
             1620, property_type="Townhouse", status="PreOnMarket", lat=30.2064,
             lon=-97.8003, year=2008),
    _listing("DEN2001", "Denver", "CO", "80206", "1535 N Williams St", "for_sale", 615000, 3, 2,
             1720, lat=39.7405, lon=-104.9653, year=1925, tours="3D"),
    _listing("DEN2002", "Denver", "CO", "80211", "3320 W 32nd Ave", "for_rent", 2950, 3, 2,
             1500, lat=39.7618, lon=-105.0322, year=1950),
    _listing("DEN2003", "Denver", "CO", "80202", "1777 Larimer St #905", "for_rent", 1850, 1, 1,
             720, property_type="Condo", lat=39.7508, lon=-104.9966, year=2007),
    _listing("DEN2004", "Denver", "CO", "80220", "5980 E 17th Ave", "for_sale", 540000, 2, 1.5,
             1300, status="Sold", lat=39.7431, lon=-104.9167, year=1954),
    _listing("MIA3001", "Miami", "FL", "33131", "1100 Brickell Bay Dr #3107", "for_sale", 980000,
             2, 2, 1350, property_type="Condo", lat=25.7617, lon=-80.1897, year=2017,
             extras=[("Pool", "Yes"), ("Water view", "Bay")], tours="3D"),
    _listing("MIA3002", "Miami", "FL", "33133", "3245 Virginia St", "for_sale", 1250000, 4, 3.5,
             2900, lat=25.7308, lon=-80.2383, year=2004, extras=[("Pool", "Yes")]),
    _listing("MIA3003", "Miami", "FL", "33137", "4250 Biscayne Blvd #1410", "for_rent", 3200, 2,
             2, 1180, property_type="Condo", lat=25.8146, lon=-80.1885, year=2016),
    _listing("MIA3004", "Miami", "FL", "33145", "2150 SW 16th Ter", "for_rent", 1650, 1, 1, 650,
             property_type="Apartment", lat=25.7555, lon=-80.2290, year=1972),
    _listing("SAT4001", "San Antonio", "TX", "78209", "302 Sunset Rd", "for_sale", 329000, 3, 2,
             1780, lat=29.4880, lon=-98.4646, year=1965, tours="OpenHouse"),
    _listing("SAT4002", "San Antonio", "TX", "78258", "21415 Mesa Oak Dr", "for_sale", 415000, 4,
             3, 2450, lat=29.6283, lon=-98.4920, year=2011, extras=[("HOA", "Stone Oak")]),
    _listing("SAT4003", "San Antonio", "TX", "78205", "110 Broadway St #520", "for_rent", 1500,
             1, 1, 800, property_type="Apartment", lat=29.4260, lon=-98.4870, year=2019),
    _listing("SAT4004", "San Antonio", "TX", "78212", "823 W Mistletoe Ave", "for_rent", 2100, 3,
             2, 1450, lat=29.4571, lon=-98.5036, year=1935, extras=[("Yard", "Fenced")]),
)  # fmt: skip


def validated_listings(
    listings: Sequence[Mapping[str, Any]], serial: str = DEMO_SERIAL
) -> list[dict[str, Any]]:
    """Check Create bodies with :class:`ListingInput`; return them as stored (no SerialNumber).

    Raises ``ValueError`` naming the position of the first invalid body.
    """
    stored = []
    for position, item in enumerate(listings):
        try:
            body = ListingInput.model_validate({**item, "SerialNumber": serial})
        except ValueError as error:
            raise ValueError(f"listing {position} is invalid: {error}") from None
        stored.append(body.model_dump(exclude_none=True, exclude={"SerialNumber"}))
    return stored


def load_listings_file(path: str | PathLike[str]) -> list[dict[str, Any]]:
    """Read a seed file: a JSON list of Create bodies."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise ValueError(f"{path}: a seed file holds a JSON list of listing objects")
    return data


#: The demo seed file: the sample market's week-1 listings as Create bodies.
DEMO_LISTINGS_FILE = Path(__file__).with_name("demo_listings.json")


@cache
def _demo_listings() -> tuple[dict[str, Any], ...]:
    return tuple(load_listings_file(DEMO_LISTINGS_FILE))


def demo_listings() -> list[dict[str, Any]]:
    """The demo chatbot's listings (Create bodies without SerialNumber), a fresh copy."""
    return copy.deepcopy(list(_demo_listings()))


def load_seed(store: Store, seed: SeedSpec = "demo") -> None:
    """Create the demo workspace and chatbot, and load the listings ``seed`` names."""
    workspace = store.add_workspace(DEMO_API_KEY, DEMO_SESSION_KEY)
    store.add_chatbot(workspace.id, DEMO_SETTINGS, serial=DEMO_SERIAL)
    if seed is None:
        return
    listings: Sequence[Mapping[str, Any]]
    if seed == "demo":
        listings = demo_listings()
    elif seed == "small":
        listings = SAMPLE_LISTINGS
    else:
        listings = load_listings_file(seed)
    if store.count_listings(DEMO_SERIAL) == 0:
        store.add_listings(DEMO_SERIAL, validated_listings(listings))
