"""Listings for the foreign server's tests: generated Create bodies, and an MLS-export xlsx of them.

The bodies are deterministic (seeded by position), valid under the contract, and varied where a
client may trip: rentals beside sales, fractional bathrooms, a ZIP with a leading zero, optional
prices absent, images and ExtensionColumn pairs present or not.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import openpyxl

CITIES = (
    ("Austin", "TX", "78701", 30.2672, -97.7431),
    ("Phoenix", "AZ", "85004", 33.4484, -112.0740),
    ("Boston", "MA", "02108", 42.3588, -71.0707),
    ("Denver", "CO", "80202", 39.7392, -104.9903),
)
#: The ExtensionColumn keys the bodies use; an export has one column for each.
EXTENSION_KEYS = ("Pool", "View")

#: The listing fields an export carries, as API names (the sheet reader matches those).
SHEET_FIELDS = (
    "MLSNumber", "Url", "SaleType", "Status", "CurrencySymbol", "PropertyType", "Bedrooms",
    "Bathrooms", "YearBuilt", "DaysOnMarket", "LotArea", "BuildingArea", "AreaUnit", "Images",
    "Tours", "ParkingSpots", "Description", "Address", "City", "State", "ZIP", "Latitude",
    "Longitude", "SalePrice", "HOAMonth", "RentPrice", "SpaceType", "DepositFee",
)  # fmt: skip


def make_listing(i: int, *, prefix: str = "F") -> dict[str, Any]:
    """The i-th generated listing: a RealEstateCreate body without ``SerialNumber``."""
    rng = random.Random(f"{prefix}-{i}")
    city, state, zip_code, lat, lon = CITIES[i % len(CITIES)]
    rent = i % 5 == 0  # not tied to the city (i % 4): every city has both kinds
    body: dict[str, Any] = {
        "SaleType": "for_rent" if rent else "for_sale",
        "Status": ("Active", "Active", "PreOnMarket", "Sold")[(i // 2) % 4],
        "CurrencySymbol": "$",
        "PropertyType": rng.choice(("Single Family", "Condo", "Townhouse")),
        "Bedrooms": rng.randint(1, 5),
        "Bathrooms": rng.choice((1, 1.5, 2, 2.5, 3)),
        "Url": f"https://foreign.example/{prefix.lower()}/{i}",
        "MLSNumber": f"{prefix}{i:06d}",
        "YearBuilt": rng.randint(1950, 2022),
        "DaysOnMarket": rng.randint(0, 150),
        "LotArea": rng.randrange(2000, 12000, 50),
        "BuildingArea": rng.randrange(700, 4000, 10),
        "AreaUnit": "Square Feet",
        "ParkingSpots": rng.randint(0, 3),
        "Images": [f"https://img.foreign.example/{prefix}{i}/{n}.jpg" for n in range(i % 3)],
        "Description": f"Bright home number {i} in {city}, close to parks.",
        "Address": f"{100 + i} Elm Street",
        "City": city,
        "State": state,
        "ZIP": zip_code,
        "Latitude": round(lat + rng.uniform(-0.05, 0.05), 6),
        "Longitude": round(lon + rng.uniform(-0.05, 0.05), 6),
    }
    extensions = [{"Key": "Pool", "value": rng.choice(("Yes", "No"))}]
    if i % 2:
        extensions.append({"Key": "View", "value": rng.choice(("Lake", "City", "Hills"))})
    body["ExtensionColumn"] = extensions
    if i % 3 == 1:
        body["Tours"] = "OpenHouse"
    if rent:
        body["RentPrice"] = rng.randrange(900, 5000, 25)
        body["DepositFee"] = body["RentPrice"]
        body["SpaceType"] = "Entire place"
    else:
        body["SalePrice"] = rng.randrange(150, 1500) * 1000
        if i % 3 == 0:
            body["HOAMonth"] = rng.randrange(50, 600, 5)
    return body


def make_listings(count: int, *, prefix: str = "F", start: int = 1) -> list[dict[str, Any]]:
    """``count`` generated listings, numbered from ``start``."""
    return [make_listing(i, prefix=prefix) for i in range(start, start + count)]


def _cell(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name == "Images":
        return ", ".join(value) or None
    return value


def sheet_rows(bodies: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The bodies as export rows by header: API fields, and one column per extension key."""
    rows = []
    for body in bodies:
        row = {name: _cell(name, body.get(name)) for name in SHEET_FIELDS}
        for item in body.get("ExtensionColumn") or []:
            row[item["Key"]] = item["value"]
        rows.append(row)
    return rows


def write_xlsx(path: Path, bodies: Sequence[Mapping[str, Any]]) -> Path:
    """An MLS export of ``bodies`` written with openpyxl (ZIPs as text, as exports keep them)."""
    headers = [*SHEET_FIELDS, *EXTENSION_KEYS]
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(headers)
    for row in sheet_rows(bodies):
        sheet.append([row.get(header) for header in headers])
    workbook.save(path)
    return path


def edited_export(seeded: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """What an export says after a day's work on ``seeded`` (at least 10 listings): the last 3
    gone, 4 new (prefix ``N``), 6 changed (two prices, a status, bedrooms, a description, an
    extension value). A sync plans 4 creates, 6 updates and 3 deletes from it."""
    desired = [dict(body) for body in seeded[:-3]]
    on_sale = [body for body in desired if body["SaleType"] == "for_sale"]
    on_sale[0]["SalePrice"] += 5000
    on_sale[1]["SalePrice"] = 1_250_000
    desired[2]["Status"] = "Sold"
    desired[3]["Bedrooms"] += 1
    desired[4]["Description"] = "Completely renovated in 2024."
    desired[5]["ExtensionColumn"] = [
        {**item, "value": "Yes" if item["value"] == "No" else "No"}
        if item["Key"] == "Pool"
        else item
        for item in desired[5]["ExtensionColumn"]
    ]
    return desired + make_listings(4, prefix="N")
