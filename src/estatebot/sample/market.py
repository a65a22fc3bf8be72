"""The sample market: realistic listings as canonical records, and the same market a week later.

:func:`market` draws ``n`` listings in eight US metro areas (:mod:`.metros`) from a seed; each
is a record drawn by :func:`.listing.new_listing`, with the listing API's field names followed
by :data:`DETAIL_FIELDS`. Writers (:mod:`.styles`) turn records into export files; tests compare
what a reader gets back with the records.

Everything comes from ``random.Random(seed)`` and the fixed :data:`AS_OF` date, never from the
clock or global state, so a seed always gives the same market.

:func:`next_week` returns the same market seven days later, with a record of every change.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Literal

from estatebot.api.models import LISTING_FIELDS

# DETAIL_FIELDS, PUBLISHED_STATUSES, METROS, Metro and zip_centre live beside the code that uses
# them; they stay importable from here, where they were first published.
from .listing import (
    DETAIL_FIELDS,
    PUBLISHED_STATUSES,
    hoa_month,
    new_listing,
    open_house_start,
)
from .metros import METROS, Metro, check_metro, zip_centre

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


# --------------------------------------------------------------------------- the market


def market(seed: int = 42, n: int = 200, *, as_of: date = AS_OF) -> list[dict[str, Any]]:
    """``n`` listings drawn from ``seed``: about a quarter for rent, the rest for sale.

    Records hold the listing fields (the values a reader of an export should produce) and the
    :data:`DETAIL_FIELDS`. The same seed always gives the same records.
    """
    for metro in METROS:
        check_metro(metro)
    rng = random.Random(seed)
    used: set[str] = set()
    weights = [metro.weight for metro in METROS]
    return [new_listing(rng, rng.choices(METROS, weights)[0], used, as_of=as_of) for _ in range(n)]


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
                 HOAMonth=hoa_month(fee, record["AssociationFeeFrequency"]))  # fmt: skip
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
                 OpenHouseStartTime=open_house_start(rng, as_of + timedelta(days=7)))  # fmt: skip
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
        record = new_listing(rng, metro, used, as_of=as_of + timedelta(days=7), status=status,
                              days_on_market=days)  # fmt: skip
        week.append(record)
        changes.append(Change("new", record["MLSNumber"]))
    return week, changes
