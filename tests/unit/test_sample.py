"""The sample generator: deterministic, realistic, and a week-2 market that matches its record."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

zipcodes = pytest.importorskip("zipcodes")

from estatebot.api.models import LISTING_FIELDS, ListingInput  # noqa: E402
from estatebot.sample import (  # noqa: E402
    AS_OF,
    DETAIL_FIELDS,
    READ_OPTIONS,
    api_fields,
    is_published,
    market,
    next_week,
    portal_table,
    reso_table,
    write_portal_csv,
)
from estatebot.sample.pitfalls import inject_pitfalls  # noqa: E402
from estatebot.sample.styles import PORTAL_DISCLAIMER, Formatted  # noqa: E402

SEED = 42


@pytest.fixture(scope="module")
def week1() -> list[dict[str, Any]]:
    return market(SEED)


@pytest.fixture(scope="module")
def week2(week1: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Any]]:
    return next_week(week1, SEED)


def km_between(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 6371 * 2 * math.asin(math.sqrt(a))


# --------------------------------------------------------------------------- determinism


def test_the_same_seed_gives_the_same_market_and_bytes(tmp_path: Path) -> None:
    first, second = market(7, n=60), market(7, n=60)
    assert first == second
    a = write_portal_csv(first, tmp_path / "a.csv").read_bytes()
    b = write_portal_csv(second, tmp_path / "b.csv").read_bytes()
    assert a == b
    assert next_week(first, 7) == next_week(second, 7)


def test_another_seed_gives_another_market() -> None:
    first, other = market(7, n=60), market(8, n=60)
    assert [r["MLSNumber"] for r in first] != [r["MLSNumber"] for r in other]
    assert next_week(first, 7)[1] != next_week(first, 8)[1]


def test_records_hold_every_listing_field_then_the_detail_fields(
    week1: list[dict[str, Any]],
) -> None:
    assert len(week1) == 200
    for record in week1:
        assert tuple(record) == (*LISTING_FIELDS, *DETAIL_FIELDS)
        # Every record is a valid Create body once empty fields are left out.
        body = {k: v for k, v in api_fields(record).items() if v is not None}
        ListingInput.model_validate({**body, "SerialNumber": "s"})


# --------------------------------------------------------------------------- realism


def test_places_are_real_zip_city_state_combinations(week1: list[dict[str, Any]]) -> None:
    for record in week1:
        (entry,) = zipcodes.matching(record["ZIP"])
        assert (entry["city"], entry["state"]) == (record["City"], record["State"])
        distance = km_between(
            float(entry["lat"]), float(entry["long"]), record["Latitude"], record["Longitude"]
        )
        assert distance < 2.5, record["MLSNumber"]
    assert len({r["City"] for r in week1}) == 8
    # Boston's ZIP codes start with a zero: the exports must keep it.
    assert any(r["ZIP"].startswith("0") for r in week1)


def test_prices_sizes_and_years_are_plausible(week1: list[dict[str, Any]]) -> None:
    sales = [r for r in week1 if r["SaleType"] == "for_sale"]
    rentals = [r for r in week1 if r["SaleType"] == "for_rent"]
    assert 0.15 < len(rentals) / len(week1) < 0.35
    assert all(r["SalePrice"] is None and 850 <= r["RentPrice"] <= 15_000 for r in rentals)
    assert all(r["RentPrice"] is None and 80_000 <= r["SalePrice"] <= 8_000_000 for r in sales)
    assert max(r["RentPrice"] for r in rentals) * 10 < min(r["SalePrice"] for r in sales)
    for record in week1:
        assert 1850 <= record["YearBuilt"] <= AS_OF.year
        assert 300 <= record["BuildingArea"] <= 8_000
        assert 0 <= record["Bedrooms"] <= 6
        assert record["Bathrooms"] == record["BathroomsFull"] + record["BathroomsHalf"] / 2
        parking = record["GarageSpaces"] + record["CarportSpaces"] + record["OpenParkingSpaces"]
        assert record["ParkingSpots"] == parking
        price = record["SalePrice"] or record["RentPrice"]
        assert record["UnitAreaPrice"] == round(price / record["BuildingArea"], 2)
        if record["LotSizeAcres"] is not None:
            assert record["LotArea"] == pytest.approx(record["LotSizeAcres"] * 43_560)
        assert (record["HOAMonth"] is None) == (record["AssociationFee"] is None)
        assert record["Url"].startswith("https://listings.example.com/")
        assert all(u.startswith("https://photos.example.com/") for u in record["Images"])


def test_mls_numbers_are_unique_prefixed_and_some_have_leading_zeros(
    week1: list[dict[str, Any]],
) -> None:
    numbers = [r["MLSNumber"] for r in week1]
    assert len(set(numbers)) == len(numbers)
    assert all(re.fullmatch(r"[A-Z]{2}\d{7}", n) for n in numbers)
    assert any(n[2] == "0" for n in numbers)
    assert len({r["ListingKey"] for r in week1}) == len(week1)


def test_statuses_cover_the_market(week1: list[dict[str, Any]]) -> None:
    statuses = {r["StandardStatus"] for r in week1}
    assert {"Active", "Pending", "Coming Soon", "Closed"} <= statuses
    assert all(is_published(r) for r in week1)
    for record in week1:
        if record["StandardStatus"] == "Closed":
            assert record["Status"] == "Sold"
            assert record["SalePrice"] == record["ClosePrice"]
        if record["StandardStatus"] == "Coming Soon":
            assert (record["Status"], record["DaysOnMarket"]) == ("PreOnMarket", 0)


# --------------------------------------------------------------------------- next week


def test_next_week_changes_match_its_record(
    week1: list[dict[str, Any]], week2: tuple[list[dict[str, Any]], list[Any]]
) -> None:
    after, changes = week2
    before = {r["MLSNumber"]: r for r in week1}
    now = {r["MLSNumber"]: r for r in after}
    kinds = [c.kind for c in changes]
    assert {k: kinds.count(k) for k in set(kinds)} == {
        "price": 10, "field": 5, "sold": 6, "new": 8, "unpublished": 4,
    }  # fmt: skip
    assert len({c.mls for c in changes}) == len(changes)  # one change per listing
    changed = {c.mls: c for c in changes}
    ignored = {"DaysOnMarket", "OpenHouseStartTime"}
    for mls, record in now.items():
        change = changed.get(mls)
        if change is not None and change.kind == "new":
            assert mls not in before
            assert record["DaysOnMarket"] < 7
            continue
        old = before[mls]
        assert record["DaysOnMarket"] == old["DaysOnMarket"] + 7
        expected = dict(change.fields) if change is not None else {}
        differ = {k for k in record if record[k] != old[k] and k not in ignored}
        assert differ == set(expected) - ignored, mls
        for name, (was, becomes) in expected.items():
            assert (old[name], record[name]) == (was, becomes)
    for change in changes:
        record = now[change.mls]
        if change.kind == "sold":
            assert (record["StandardStatus"], record["Status"]) == ("Closed", "Sold")
        elif change.kind == "unpublished":
            assert record["StandardStatus"] in ("Withdrawn", "Expired")
            assert not is_published(record)
        elif change.kind == "price":
            assert {"ListPrice", "UnitAreaPrice"} <= set(change.fields)


def test_next_week_leaves_its_input_alone(week1: list[dict[str, Any]]) -> None:
    copy = [dict(r, Images=list(r["Images"])) for r in week1]
    next_week(week1, SEED)
    assert week1 == copy


# --------------------------------------------------------------------------- styles and pitfalls


def test_reso_zip_cells_alternate_between_number_and_text(week1: list[dict[str, Any]]) -> None:
    headers, rows = reso_table(week1[:4])
    column = headers.index("PostalCode")
    cells = [row[column] for row in rows]
    assert isinstance(cells[0], Formatted)
    assert cells[0].number_format == "00000"
    assert isinstance(cells[1], str)


def test_portal_table_starts_with_the_disclaimer_and_sells_only(
    week1: list[dict[str, Any]],
) -> None:
    headers, rows = portal_table(week1)
    assert rows[0][0] == PORTAL_DISCLAIMER
    assert not any(rows[0][1:])
    assert len(rows) - 1 == sum(1 for r in week1 if r["SaleType"] == "for_sale")
    assert headers[headers.index("MLS#")] == "MLS#"
    assert set(READ_OPTIONS) == {"reso", "portal", "mls_system"}


def test_pitfalls_cover_every_kind(week1: list[dict[str, Any]]) -> None:
    import random

    boston = next(r for r in week1 if r["ZIP"].startswith("0"))
    records = [*week1[:39], boston]
    headers, rows = reso_table(records)
    spoiled, found = inject_pitfalls(headers, rows, records, random.Random(1))
    assert len(spoiled) == len(rows) + 1  # the disclaimer row
    kinds = {p.kind for p in found}
    assert kinds == {
        "disclaimer", "mls_scientific", "mls_long_number", "zip_lost_zero", "trailing_space",
        "non_breaking_space", "number_as_text", "decimal_as_text", "na_optional", "na_required",
        "blank_required", "duplicate_key", "unknown_status",
    }  # fmt: skip
    for pitfall in found:
        if pitfall.kind != "disclaimer":
            row = spoiled[pitfall.row - 2]
            assert row[headers.index(pitfall.column)] == pitfall.value
