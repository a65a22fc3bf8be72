"""Frame rows → Update/Create bodies, and the round trip through List's serialization."""

from __future__ import annotations

import json
from typing import Any, cast

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estatebot.api.models import ListingInput, ListingUpdate, to_wire
from estatebot.emulator.app import list_record
from estatebot.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.remote.bodies import BodyBatch, to_create_bodies, to_update_bodies
from estatebot.listings.remote.normalize import normalize_records

SERIAL = "3254a9d0424c4806b9ea3d0763ccf1bf"

# --------------------------------------------------------------------------- a List serializer
# What the service (and the emulator) return for a stored listing, in the decided forms: the
# emulator's own serializer, so the round trip is checked against what a pull really reads.


def store_and_list(bodies: list[ListingUpdate], ids: list[int]) -> list[dict[str, Any]]:
    return [list_record(i, to_wire(body)) for i, body in zip(ids, bodies, strict=True)]


def listing(**changes: Any) -> dict[str, Any]:
    """A valid listing as a wire body."""
    body: dict[str, Any] = {
        "SaleType": "for_sale", "Status": "Active", "CurrencySymbol": "$",
        "PropertyType": "Condo", "Bedrooms": 3, "Bathrooms": 2.5,
        "Url": "https://homes.example/1", "MLSNumber": "MLS-1", "YearBuilt": 1999,
        "DaysOnMarket": 12, "LotArea": 5000.0, "BuildingArea": 1250.0,
        "AreaUnit": "Square Feet", "ParkingSpots": 2,
        "Images": ["https://img.example/1.jpg", "https://img.example/2.jpg"],
        "ExtensionColumn": [{"Key": "Pool", "value": "Yes"}],
        "City": "Austin", "State": "TX", "ZIP": "02134",
        "Latitude": 30.2672, "Longitude": -97.7431, "SalePrice": 450000.0, "HOAMonth": 320.5,
    }  # fmt: skip
    body.update(changes)
    return body


def pulled(*bodies: dict[str, Any]) -> pd.DataFrame:
    records = [list_record(100 + i, body) for i, body in enumerate(bodies)]
    result = normalize_records(records)
    assert result.problems.empty
    return result.frame


# --------------------------------------------------------------------------- round trip


def test_round_trip_through_the_list_serialization() -> None:
    before = pulled(
        listing(),
        listing(MLSNumber="MLS-2", Url="https://homes.example/2", SaleType="for_rent",
                SalePrice=None, RentPrice=2400.0, DepositFee=2400.0, SpaceType="Room",
                Images=[], ExtensionColumn=[], Tours="3D", Description="Quiet  street"),
    )  # fmt: skip
    bodies = to_update_bodies(before, serial=SERIAL, defaults={"AreaUnit": "Square Feet"})
    after = normalize_records(store_and_list(bodies, before["ID"].tolist())).frame
    pd.testing.assert_frame_equal(after, before)


finite = st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False)
words = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=20).map(str.strip)
url = st.text("abcxyz0123456789-_./%?=&", min_size=1, max_size=20).map(
    lambda tail: f"https://img.example/{tail}"
)


@st.composite
def listings(draw: st.DrawFn) -> dict[str, Any]:
    rent = draw(st.booleans())
    price = draw(finite)
    return listing(
        SaleType="for_rent" if rent else "for_sale",
        Bedrooms=draw(st.integers(0, 20)),
        Bathrooms=draw(st.sampled_from([1, 1.5, 2.0, 3.25])),
        YearBuilt=draw(st.integers(1800, 2030)),
        LotArea=draw(finite),
        BuildingArea=draw(finite),
        SalePrice=None if rent else price,
        RentPrice=price if rent else None,
        HOAMonth=draw(st.one_of(st.none(), finite)),
        Latitude=draw(st.one_of(st.none(), st.floats(-90, 90))),
        City=draw(words) or None,
        Description=draw(words) or None,
        Images=draw(st.lists(url, max_size=4)),
        ExtensionColumn=[
            {"Key": key, "value": value}
            for key, value in draw(st.dictionaries(words, words, max_size=3)).items()
        ],
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(listings(), min_size=1, max_size=5))
def test_round_trip_holds_for_any_listing(bodies: list[dict[str, Any]]) -> None:
    bodies = [
        {**body, "MLSNumber": f"M{i}", "Url": f"https://homes.example/{i}"}
        for i, body in enumerate(bodies)
    ]
    before = pulled(*bodies)
    updates = to_update_bodies(before, serial=SERIAL, defaults={"AreaUnit": "Square Feet"})
    after = normalize_records(store_and_list(updates, before["ID"].tolist())).frame
    pd.testing.assert_frame_equal(after, before)


# --------------------------------------------------------------------------- bodies


def test_bodies_carry_plain_python_values_and_omit_na() -> None:
    frame = pulled(listing(HOAMonth=None, Tours=None))
    frame["AreaUnit"] = pd.array(["Square Feet"], dtype="string")
    (body,) = to_update_bodies(frame, serial=SERIAL)
    wire = to_wire(body)
    assert type(wire["Bedrooms"]) is int
    assert type(wire["YearBuilt"]) is int
    assert type(wire["ParkingSpots"]) is int
    assert type(wire["Bathrooms"]) is float
    assert '"Bedrooms": 3,' in json.dumps(wire)  # never 3.0
    assert "HOAMonth" not in wire
    assert "Tours" not in wire
    assert "Location" not in wire
    assert "ID" not in wire
    assert wire["Images"] == ["https://img.example/1.jpg", "https://img.example/2.jpg"]
    assert wire["ExtensionColumn"] == [{"Key": "Pool", "value": "Yes"}]
    assert wire["SerialNumber"] == SERIAL
    assert (wire["Key"], wire["KeyType"]) == ("MLS-1", "MLSNumber")


@pytest.mark.parametrize(
    ("key_type", "key"),
    [("MLSNumber", "MLS-1"), ("URL", "https://homes.example/1"), ("NewOaks", "100")],
)
def test_the_key_comes_from_the_key_column(key_type: str, key: str) -> None:
    (body,) = to_update_bodies(
        pulled(listing()), serial=SERIAL, key_type=key_type, defaults={"AreaUnit": "Square Feet"}
    )
    assert body.Key == key
    assert body.KeyType == key_type


def test_empty_images_and_extensions_are_sent_empty() -> None:
    frame = pulled(listing(Images=[], ExtensionColumn=[]))
    (body,) = to_update_bodies(frame, serial=SERIAL, defaults={"AreaUnit": "Square Meters"})
    wire = to_wire(body)
    assert wire["Images"] == []
    assert wire["ExtensionColumn"] == []
    assert wire["AreaUnit"] == "Square Meters"


def test_defaults_fill_only_empty_fields() -> None:
    frame = pulled(listing(), listing(MLSNumber="MLS-2"))
    frame["AreaUnit"] = pd.array(["Square Meters", pd.NA], dtype="string")
    bodies = to_update_bodies(frame, serial=SERIAL, defaults={"AreaUnit": "Square Feet"})
    assert [body.AreaUnit for body in bodies] == ["Square Meters", "Square Feet"]
    with pytest.raises(ValueError, match="Colour"):
        to_update_bodies(frame, serial=SERIAL, defaults={"Colour": "red"})


def test_a_bad_row_raises_a_plan_error_naming_row_field_and_value() -> None:
    frame = pulled(listing(), listing(MLSNumber="MLS-2", Bedrooms=2))
    frame.index = pd.Index(["first", "second"])
    frame["AreaUnit"] = pd.array(["Square Feet", "Square Feet"], dtype="string")
    frame.loc["second", "Bedrooms"] = -1
    with pytest.raises(PlanError) as caught:
        to_update_bodies(frame, serial=SERIAL)
    error = caught.value
    assert (error.row, error.column, error.value) == ("second", "Bedrooms", -1)
    assert "MLS-2" in str(error)
    assert "second" in str(error)


def test_a_pulled_row_without_a_unit_says_how_to_give_one() -> None:
    # List never returns AreaUnit: the error says where it comes from, and guesses none.
    frame = pulled(listing())
    with pytest.raises(PlanError) as caught:
        to_update_bodies(frame, serial=SERIAL)
    assert caught.value.column == "AreaUnit"
    assert "defaults={'AreaUnit': 'Square Feet'}" in str(caught.value)
    # A unit that is there but wrong is a plain validation error, with no such hint.
    frame["AreaUnit"] = pd.array(["Acres"], dtype="string")
    with pytest.raises(PlanError) as wrong:
        to_update_bodies(frame, serial=SERIAL)
    assert "List never returns" not in str(wrong.value)
    assert "Acres" in repr(wrong.value.value)


def test_collect_mode_returns_the_good_bodies_and_every_problem() -> None:
    frame = pulled(listing(), listing(MLSNumber="MLS-2"), listing(MLSNumber="MLS-3"))
    frame["AreaUnit"] = pd.array(["Square Feet", pd.NA, "Square Feet"], dtype="string")
    frame.loc[2, "MLSNumber"] = pd.NA
    batch = to_update_bodies(frame, serial=SERIAL, errors="collect")
    assert isinstance(batch, BodyBatch)
    assert not batch.ok
    assert [body.MLSNumber for body in batch.bodies] == ["MLS-1"]
    assert batch.rows == [0]
    located = {(problem.row, problem.column) for problem in batch.problems}
    assert located == {(1, "AreaUnit"), (2, "Key"), (2, "MLSNumber")}


def test_create_bodies_have_no_key() -> None:
    frame = pulled(listing())
    bodies = to_create_bodies(frame, serial=SERIAL, defaults={"AreaUnit": "Square Feet"})
    assert [type(body) for body in bodies] == [ListingInput]
    wire = to_wire(bodies[0])
    assert "Key" not in wire
    assert "KeyType" not in wire
    assert wire["MLSNumber"] == "MLS-1"
    batch = to_create_bodies(frame, serial=SERIAL, errors="collect")
    assert [problem.column for problem in batch.problems] == ["AreaUnit"]


def test_extra_columns_are_ignored_and_the_frame_is_not_changed() -> None:
    frame = normalize_records([list_record(1, listing())], expand_extensions=True).frame.assign(
        AreaUnit=pd.array(["Square Feet"], dtype="string")
    )
    before = frame.copy(deep=True)
    (body,) = to_update_bodies(frame, serial=SERIAL)
    assert "ext.Pool" in frame.columns
    assert "ext.Pool" not in to_wire(body)
    pd.testing.assert_frame_equal(frame, before)
    assert body.Images is not None
    body.Images.append("https://img.example/new.jpg")
    assert frame.loc[0, "Images"] == ["https://img.example/1.jpg", "https://img.example/2.jpg"]


def test_an_empty_frame_gives_no_bodies() -> None:
    assert to_update_bodies(schema.empty_frame(), serial=SERIAL) == []
    with pytest.raises(ValueError, match="errors"):
        to_update_bodies(schema.empty_frame(), serial=SERIAL, errors=cast(Any, "ignore"))


def test_extension_values_are_sent_as_text() -> None:
    frame = pulled(listing())
    frame.at[0, "ExtensionColumn"] = {"Floors": 2, "Pool": "Yes"}
    (body,) = to_update_bodies(frame, serial=SERIAL, defaults={"AreaUnit": "Square Feet"})
    assert to_wire(body)["ExtensionColumn"] == [
        {"Key": "Floors", "value": "2"},
        {"Key": "Pool", "value": "Yes"},
    ]
