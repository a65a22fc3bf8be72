"""Listings for tests: seeded valid RealEstateCreate bodies (without SerialNumber), one complete
listing by number, and the frames a plan compares (pulled listings, a sheet)."""

from __future__ import annotations

import random
from typing import Any

import pandas as pd

from estatebot.listings import schema

CITIES = [
    ("Austin", "TX", "78701", 30.2672, -97.7431),
    ("Denver", "CO", "80202", 39.7392, -104.9903),
    ("Miami", "FL", "33130", 25.7617, -80.1918),
    ("Boston", "MA", "02108", 42.3588, -71.0707),
]


def make_listing(i: int, rng: random.Random, *, prefix: str = "T") -> dict[str, Any]:
    """One plausible listing; the i-th of a batch has MLS number ``{prefix}{i:06d}``."""
    city, state, zip_code, lat, lon = CITIES[i % len(CITIES)]
    for_rent = i % 5 == 0
    area = rng.randrange(600, 4200, 10)
    body: dict[str, Any] = {
        "SaleType": "for_rent" if for_rent else "for_sale",
        "Status": rng.choice(["Active", "Active", "Active", "PreOnMarket", "Sold"]),
        "CurrencySymbol": "$",
        "PropertyType": rng.choice(["Single Family", "Condo", "Townhouse"]),
        "Bedrooms": rng.randint(1, 6),
        "Bathrooms": rng.choice([1, 1.5, 2, 2.5, 3, 3.5]),
        "Url": f"https://homes.example/{prefix.lower()}/{i}",
        "MLSNumber": f"{prefix}{i:06d}",
        "YearBuilt": rng.randint(1920, 2024),
        "DaysOnMarket": rng.randint(0, 400),
        "LotArea": rng.randrange(1000, 20000, 50),
        "BuildingArea": area,
        "AreaUnit": "Square Feet",
        "ParkingSpots": rng.randint(0, 3),
        "Images": [f"https://img.example/{i}/{n}.jpg" for n in range(rng.randint(0, 3))],
        "Description": f"Listing {i} in {city}: bright, quiet, close to parks.",
        "ExtensionColumn": [{"Key": "Pool", "value": rng.choice(["Yes", "No"])}],
        "Address": f"{100 + i} Main St",
        "City": city,
        "State": state,
        "ZIP": zip_code,
        "Latitude": round(lat + rng.uniform(-0.05, 0.05), 6),
        "Longitude": round(lon + rng.uniform(-0.05, 0.05), 6),
    }
    if for_rent:
        body["RentPrice"] = rng.randrange(900, 6000, 25)
        body["DepositFee"] = body["RentPrice"]
        body["SpaceType"] = "Entire place"
    else:
        body["SalePrice"] = rng.randrange(150_000, 2_000_000, 1000)
        body["UnitAreaPrice"] = round(body["SalePrice"] / area, 2)
        body["HOAMonth"] = rng.choice([0, 0, 125, 340.5])
    return body


def make_listings(n: int, *, seed: int = 7, prefix: str = "T") -> list[dict[str, Any]]:
    """``n`` listings with distinct MLS numbers and URLs, the same for the same seed."""
    rng = random.Random(seed)
    return [make_listing(i, rng, prefix=prefix) for i in range(n)]


def complete_listing(n: int, **overrides: Any) -> dict[str, Any]:
    """A complete, valid listing numbered ``n`` (MLS number ``M{n}``), ``overrides`` over it."""
    values: dict[str, Any] = {
        "SaleType": "for_sale",
        "Status": "Active",
        "CurrencySymbol": "$",
        "PropertyType": "Single Family",
        "Bedrooms": 3,
        "Bathrooms": 2.5,
        "Url": f"https://homes.example/{n}",
        "MLSNumber": f"M{n}",
        "YearBuilt": 1999,
        "DaysOnMarket": 10,
        "LotArea": 6000.0,
        "BuildingArea": 1850.0,
        "AreaUnit": "Square Feet",
        "ParkingSpots": 2,
        "Images": [f"https://img.example/{n}/1.jpg", f"https://img.example/{n}/2.jpg"],
        "ExtensionColumn": {"Pool": "Yes"},
        "Description": f"Home {n}",
        "City": "Austin",
        "Latitude": 30.2672,
        "Longitude": -97.7431,
        "SalePrice": 450000.0,
    }
    return {**values, **overrides}


def remote_frame(*rows: dict[str, Any]) -> pd.DataFrame:
    """A pulled-listings frame: IDs 1, 2, … unless given."""
    records = [{"ID": i + 1, **row} for i, row in enumerate(rows)]
    return schema.conform(pd.DataFrame.from_records(records, columns=list(schema.COLUMNS)))


def sheet_frame(*rows: dict[str, Any]) -> pd.DataFrame:
    """A sheet frame: no IDs, index = spreadsheet row numbers from 2."""
    frame = schema.conform(pd.DataFrame.from_records(list(rows), columns=list(schema.COLUMNS)))
    frame.index = pd.RangeIndex(2, len(rows) + 2, name="row")
    return frame


def wire_listing(serial: str) -> dict[str, Any]:
    """A minimal valid Create (or Update) body for the chatbot ``serial``: the required fields
    and a sale price, as a unit test of the client sends it."""
    return {
        "SerialNumber": serial,
        "SaleType": "for_sale",
        "Status": "Active",
        "CurrencySymbol": "$",
        "PropertyType": "House",
        "Bedrooms": 3,
        "Bathrooms": 2,
        "Url": "https://homes.test/1",
        "MLSNumber": "MLS-1",
        "YearBuilt": 1999,
        "DaysOnMarket": 4,
        "LotArea": 5000,
        "BuildingArea": 1800,
        "AreaUnit": "Square Feet",
        "ParkingSpots": 2,
    }
