"""normalize_records: List records (or a frame of them) → the canonical listing frame."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import pandas as pd
import pytest

from estatebot.api.models import LIST_RECORD_FIELDS
from estatebot.listings import schema
from estatebot.listings.remote import normalize
from estatebot.listings.remote import records as record_reading
from estatebot.listings.remote.normalize import (
    PROBLEM_COLUMNS,
    NormalizeResult,
    NormalizeWarning,
    normalize_records,
)


def record(**changes: Any) -> dict[str, Any]:
    """A List record in the decided serialization, with ``changes`` applied."""
    base: dict[str, Any] = {
        "ID": 101,
        "PropertyType": "Condo",
        "SaleType": "For Sale",
        "Status": "Active",
        "Images": '["https://img.example/1.jpg","https://img.example/2.jpg"]',
        "CurrencySymbol": "$",
        "Price": "450000",
        "State": "TX",
        "City": "Austin",
        "Address": "1 Main St",
        "ZIP": "02134",
        "LATITUDE": 30.2672,
        "LONGITUDE": -97.7431,
        "Area": "1250",
        "Bathrooms": "2.5",
        "Bedrooms": "3",
        "Url": "https://homes.example/101",
        "Tours": "OpenHouse",
        "YearBuilt": "1999",
        "MLSNumber": "0012345",
        "DaysOnMarket": "12",
        "LotArea": "5000",
        "BuildingArea": "1250",
        "ParkingSpots": "2",
        "Description": "Bright corner unit",
        "ExtensionColumn": '[{"Key":"Pool","value":"Yes"}]',
        "RentPrice": "",
        "SpaceType": "",
        "DepositFee": "",
        "SalePrice": "450000",
        "UnitAreaPrice": "360",
        "ZestimatePrice": "",
        "HOAMonth": "",
    }
    base.update(changes)
    return base


def quiet(records: Any, **options: Any) -> NormalizeResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NormalizeWarning)
        return normalize_records(records, **options)


def clean(records: Any, **options: Any) -> NormalizeResult:
    """Normalize records that must not produce a single problem or warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", NormalizeWarning)
        result = normalize_records(records, **options)
    assert result.problems.empty
    return result


def test_the_decided_serialization_reads_exactly() -> None:
    frame = clean([record()]).frame
    row = frame.iloc[0]
    assert list(frame.columns) == list(schema.COLUMNS)
    assert frame.dtypes.to_dict() == schema.empty_frame().dtypes.to_dict()
    assert row["ID"] == 101
    assert row["SaleType"] == "for_sale"
    assert row["Bathrooms"] == 2.5
    assert row["Bedrooms"] == 3
    assert row["YearBuilt"] == 1999
    assert row["Latitude"] == 30.2672
    assert row["Longitude"] == -97.7431
    assert row["SalePrice"] == 450000.0
    assert row["BuildingArea"] == 1250.0
    assert row["ZIP"] == "02134"  # leading zero kept
    assert row["MLSNumber"] == "0012345"
    assert row["Images"] == ["https://img.example/1.jpg", "https://img.example/2.jpg"]
    assert row["ExtensionColumn"] == {"Pool": "Yes"}
    assert pd.isna(row["RentPrice"])
    assert pd.isna(row["SpaceType"])
    assert pd.isna(row["Location"])  # List does not return it


@pytest.mark.parametrize(
    ("sale_type", "expected"),
    [
        ("For Sale", "for_sale"),
        ("FOR RENT", "for_rent"),
        (" for  rent ", "for_rent"),
        ("For-Rent", "for_rent"),
        ("for_sale", "for_sale"),
        ("for_rent", "for_rent"),
        ("Rent", "for_rent"),
    ],
)
def test_sale_type_display_texts(sale_type: str, expected: str) -> None:
    assert clean([record(SaleType=sale_type)]).frame.loc[0, "SaleType"] == expected


def test_price_fills_the_sale_or_rent_price_only_where_empty() -> None:
    records = [
        record(SaleType="For Sale", Price="$1,234,567.00", SalePrice=""),
        record(SaleType="For Rent", Price="2,500", SalePrice="", RentPrice=""),
        record(SaleType="For Sale", Price="999", SalePrice="450000"),
        record(SaleType="For Rent", Price="1800", SalePrice="", RentPrice="1750"),
    ]
    frame = clean(records).frame
    assert frame["SalePrice"].tolist() == [1234567.0, pd.NA, 450000.0, pd.NA]
    assert frame["RentPrice"].tolist() == [pd.NA, 2500.0, pd.NA, 1750.0]


def test_area_fills_the_building_area_where_empty_and_loses_its_unit() -> None:
    records = [
        record(Area="2,500 sqft", BuildingArea=""),
        record(Area="120 m²", BuildingArea=None),
        record(Area="999", BuildingArea="1250"),
    ]
    assert clean(records).frame["BuildingArea"].tolist() == [2500.0, 120.0, 1250.0]


def test_coordinates_as_numbers_text_or_null() -> None:
    records = [
        record(LATITUDE="30.5", LONGITUDE=" -97.25 "),
        record(LATITUDE=None, LONGITUDE=""),
        record(LATITUDE=45, LONGITUDE=-93),
    ]
    frame = clean(records).frame
    assert frame["Latitude"].tolist() == [30.5, pd.NA, 45.0]
    assert frame["Longitude"].tolist() == [-97.25, pd.NA, -93.0]


def test_canonical_names_are_read_and_win_over_wire_names() -> None:
    rows = [record(Latitude=10.0), record(Latitude=None), record(Location="Downtown")]
    frame = clean(rows).frame
    assert frame["Latitude"].tolist() == [10.0, 30.2672, 30.2672]
    assert frame["Location"].tolist() == [pd.NA, pd.NA, "Downtown"]


@pytest.mark.parametrize(
    ("column", "text", "expected"),
    [
        ("Status", "active", "Active"),
        ("Status", "PRE ON MARKET", "PreOnMarket"),
        ("Tours", "open house", "OpenHouse"),
        ("Tours", "3d", "3D"),
        ("SpaceType", "entire place", "Entire place"),
        ("AreaUnit", "square feet", "Square Feet"),
        ("AreaUnit", "sq ft", "Square Feet"),
        ("AreaUnit", "m²", "Square Meters"),
    ],
)
def test_enum_columns_match_case_insensitively(column: str, text: str, expected: str) -> None:
    assert clean([record(**{column: text})]).frame.loc[0, column] == expected


def test_text_is_trimmed_and_empty_text_is_na() -> None:
    frame = clean([record(City="\u00a0 Austin ", Address="", Description="   ")]).frame
    assert frame.loc[0, "City"] == "Austin"
    assert pd.isna(frame.loc[0, "Address"])
    assert pd.isna(frame.loc[0, "Description"])


def test_json_column_variants() -> None:
    records = [
        record(Images="https://a/1.jpg | https://a/2.jpg", ExtensionColumn="Pool: No\nView: Lake"),
        record(Images="", ExtensionColumn=""),
        record(Images='["https://a/3.jpg"]', ExtensionColumn='{"Floors": 2}'),
    ]
    frame = clean(records).frame
    assert frame["Images"].tolist() == [
        ["https://a/1.jpg", "https://a/2.jpg"],
        [],
        ["https://a/3.jpg"],
    ]
    assert frame["ExtensionColumn"].tolist() == [
        {"Pool": "No", "View": "Lake"},
        {},
        {"Floors": "2"},
    ]


# --------------------------------------------------------------------------- problems


def bad_records() -> list[dict[str, Any]]:
    return [
        record(ID=1, MLSNumber="A1", Bedrooms="2.5"),
        record(ID=2, MLSNumber="A2", Bedrooms="three", Price="call us", SaleType="Auction"),
        record(ID=3, MLSNumber="A3", ExtensionColumn="[{broken"),
        record(ID=4, MLSNumber="A4"),
    ]


def test_unreadable_values_are_na_and_reported() -> None:
    result = quiet(bad_records())
    frame, problems = result.frame, result.problems
    assert list(problems.columns) == list(PROBLEM_COLUMNS)
    assert problems.index.name == "row"
    assert problems.index.tolist() == [0, 1, 1, 1, 2]
    assert problems["ID"].tolist() == [1, 2, 2, 2, 3]
    assert problems["MLSNumber"].tolist() == ["A1", "A2", "A2", "A2", "A3"]
    by_row = problems.reset_index().groupby("row")["column"].apply(sorted).to_dict()
    assert by_row == {0: ["Bedrooms"], 1: ["Bedrooms", "Price", "SaleType"], 2: ["ExtensionColumn"]}
    assert problems.set_index("column").loc["Bedrooms", "value"].tolist() == ["2.5", "three"]
    assert frame["Bedrooms"].tolist() == [pd.NA, pd.NA, 3, 3]
    assert pd.isna(frame.loc[1, "SaleType"])
    assert frame.loc[1, "SalePrice"] == 450000.0  # given itself; Price is not used
    assert frame.loc[2, "ExtensionColumn"] == {}
    assert result.counts == {"Bedrooms": 2, "SaleType": 1, "Price": 1, "ExtensionColumn": 1}
    assert "5 " in result.summary()
    assert "Bedrooms 2" in result.summary()
    assert problems.dtypes.to_dict() == {
        "ID": "Int64", "MLSNumber": "string", "column": "string", "value": "string",
        "message": "string",
    }  # fmt: skip


def test_one_warning_with_counts_by_column() -> None:
    with pytest.warns(NormalizeWarning) as caught:
        normalize_records(bad_records())
    messages = [str(w.message) for w in caught if issubclass(w.category, NormalizeWarning)]
    assert len(messages) == 1
    assert "Bedrooms 2" in messages[0]
    assert "ExtensionColumn 1" in messages[0]


def test_a_record_without_id_keeps_na_and_is_reported_once() -> None:
    missing = record()
    del missing["ID"]
    result = quiet([record(ID=7), missing, record(ID=""), record(ID="x9")])
    assert result.frame["ID"].tolist() == [7, pd.NA, pd.NA, pd.NA]
    assert result.problems["message"].tolist() == ["missing ID", "missing ID", "not a number"]
    assert result.problems.index.tolist() == [1, 2, 3]


def test_duplicate_ids_are_kept() -> None:
    frame = clean([record(ID=5, MLSNumber="A"), record(ID=5, MLSNumber="B")]).frame
    assert frame["ID"].tolist() == [5, 5]
    assert frame["MLSNumber"].tolist() == ["A", "B"]


# --------------------------------------------------------------------------- inputs


def test_empty_input_has_every_column_with_its_dtype() -> None:
    for empty in ([], iter([]), pd.DataFrame()):
        result = clean(empty)
        assert result.frame.empty
        assert list(result.frame.columns) == list(schema.COLUMNS)
        assert result.frame.dtypes.to_dict() == schema.empty_frame().dtypes.to_dict()
        assert list(result.problems.columns) == list(PROBLEM_COLUMNS)
        assert result.counts == {}


def test_input_records_and_frames_are_not_changed() -> None:
    records = bad_records()
    before = copy.deepcopy(records)
    quiet(records)
    assert records == before
    frame = pd.DataFrame(bad_records(), index=[10, 11, 12, 13])
    frame_before = frame.copy(deep=True)
    result = quiet(frame)
    pd.testing.assert_frame_equal(frame, frame_before)
    result.frame.loc[10, "City"] = "Changed"
    pd.testing.assert_frame_equal(frame, frame_before)


def test_a_frame_of_records_reads_like_the_records_and_keeps_its_index() -> None:
    records = [record(ID=1), record(ID=2, Bedrooms="x")]
    from_records = quiet(records)
    from_frame = quiet(pd.DataFrame(records, index=["a", "b"]))
    assert from_frame.frame.index.tolist() == ["a", "b"]
    pd.testing.assert_frame_equal(
        from_frame.frame.reset_index(drop=True), from_records.frame, check_index_type=False
    )
    assert from_frame.problems.index.tolist() == ["b"]


def test_records_with_different_fields_and_a_generator() -> None:
    sparse = {"ID": "8", "MLSNumber": "Z1", "City": "Reno"}
    frame = clean(iter([record(ID=1), sparse])).frame
    assert frame["ID"].tolist() == [1, 8]
    assert frame["City"].tolist() == ["Austin", "Reno"]
    assert frame.loc[1, "Images"] == []
    assert pd.isna(frame.loc[1, "SalePrice"])


def test_a_field_that_is_text_in_some_blocks_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_reading, "_BLOCK_ROWS", 2)
    rows = [record(LATITUDE="1.5"), record(LATITUDE="2.5"), record(LATITUDE=3.5), record()]
    frame = clean(rows).frame
    assert frame["Latitude"].tolist() == [1.5, 2.5, 3.5, 30.2672]


def test_many_records_across_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record_reading, "_BLOCK_ROWS", 3)
    rows = [record(ID=i, Bedrooms=str(i % 5), MLSNumber=f"M{i}") for i in range(10)]
    frame = clean(rows).frame
    assert frame["ID"].tolist() == list(range(10))
    assert frame["Bedrooms"].tolist() == [i % 5 for i in range(10)]
    assert frame["MLSNumber"].tolist() == [f"M{i}" for i in range(10)]


def test_every_field_list_returns_is_read() -> None:
    frame = clean([record(SalePrice="", ZestimatePrice="1", HOAMonth="2", Tours="3D")]).frame
    targets = {"LATITUDE": "Latitude", "LONGITUDE": "Longitude", "Price": "SalePrice"}
    for name in LIST_RECORD_FIELDS:
        if name in ("RentPrice", "SpaceType", "DepositFee"):  # empty for a sale listing
            continue
        value = frame.loc[0, targets.get(name, "BuildingArea" if name == "Area" else name)]
        assert isinstance(value, list | dict) or pd.notna(value), name


# --------------------------------------------------------------------------- extensions


def test_expand_extensions_adds_a_text_column_per_key() -> None:
    records = [
        record(ExtensionColumn='[{"Key":"Pool","value":"Yes"}]'),
        record(ExtensionColumn="View: Lake; Pool: No"),
        record(ExtensionColumn=""),
    ]
    frame = clean(records, expand_extensions=True).frame
    assert list(frame.columns) == [*schema.COLUMNS, "ext.Pool", "ext.View"]
    assert frame["ext.Pool"].tolist() == ["Yes", "No", pd.NA]
    assert frame["ext.View"].tolist() == [pd.NA, "Lake", pd.NA]
    assert frame["ext.Pool"].dtype == "string"


def test_expand_extensions_without_any_key_adds_nothing() -> None:
    frame = clean([record(ExtensionColumn="")], expand_extensions=True).frame
    assert list(frame.columns) == list(schema.COLUMNS)


# --------------------------------------------------------------------------- reading records


def read_each_way(records: list[dict[str, Any]]) -> tuple[NormalizeResult, NormalizeResult]:
    """``records`` read by the struct pass, and by the row-block pass it falls back to."""
    fast = quiet(records)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(record_reading, "_columns_by_struct", lambda *args: None)
        blocks = quiet(records)
    return fast, blocks


@pytest.mark.parametrize(
    "changes",
    [
        {"LATITUDE": True},  # pyarrow would read 1.0
        {"LATITUDE": 0},
        {"LATITUDE": 1.0, "LONGITUDE": None},
        {"LONGITUDE": float("nan")},
        {"LONGITUDE": float("inf")},
        {"ID": 2**53 + 1},  # pyarrow would round it
        {"ID": 2**70},
        {"ID": 2.5},
        {"ID": 7.0},
        {"ID": True},
        {"ID": "12"},
        {"City": None},
        {"City": float("nan")},
        {"City": 5},
        {"Images": ["https://a/1.jpg"]},
        {"ExtensionColumn": {"Pool": "Yes"}},
        {"Bedrooms": "three", "Price": "$1,200.00", "HOAMonth": "N/A"},
    ],
)
def test_records_read_alike_by_the_struct_pass_and_by_blocks(changes: dict[str, Any]) -> None:
    rows = [record(ID=i, MLSNumber=f"M{i}") for i in range(1, 6)]
    rows[3].update(changes)
    fast, blocks = read_each_way(rows)
    pd.testing.assert_frame_equal(fast.frame, blocks.frame)
    pd.testing.assert_frame_equal(fast.problems, blocks.problems)


def test_a_record_with_other_fields_of_the_same_number() -> None:
    # Equal sizes, yet not the same fields: a lacking field must not pass for a None.
    swapped = record(ID=2, Extra=5, Unknown="x")
    del swapped["City"]
    lacking_a_number = record(ID=3, Extra=5, Other=1)
    del lacking_a_number["LATITUDE"]
    rows = [record(ID=1, Extra=5), swapped, lacking_a_number]
    assert len({len(row) for row in rows}) == 1
    frame = quiet(rows).frame
    assert frame["City"].tolist() == ["Austin", pd.NA, "Austin"]
    assert frame["Latitude"].tolist() == [30.2672, 30.2672, pd.NA]
    fast, blocks = read_each_way(rows)
    pd.testing.assert_frame_equal(fast.frame, blocks.frame)


def test_numbers_read_by_pyarrow_are_writable() -> None:
    frame = clean([record(ID=1), record(ID=2)]).frame
    frame.loc[0, "Latitude"] = 1.5
    frame.loc[1, "Bedrooms"] = 9
    frame.loc[1, "SalePrice"] = 1.0
    assert frame["Latitude"].tolist() == [1.5, 30.2672]


def test_columns_parsed_side_by_side_give_what_one_at_a_time_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Large inputs parse two columns at a time; values and problems (in order) must not change.
    rows = [
        record(ID=i, MLSNumber=f"M{i}", Bedrooms=("three" if i % 7 == 0 else "3"))
        for i in range(1, 60)
    ]
    rows[3]["LATITUDE"] = "north"
    rows[6]["LATITUDE"] = "south"  # the same row as a Bedrooms problem: their order counts too
    rows[5]["Images"] = "[broken"
    rows[8]["ExtensionColumn"] = "just words"
    rows[9]["Price"] = "a lot"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NormalizeWarning)
        monkeypatch.setattr(normalize, "_THREADED_ROWS", 10**9)
        one_at_a_time = normalize_records(rows)
        monkeypatch.setattr(normalize, "_THREADED_ROWS", 0)
        monkeypatch.setattr(normalize, "_PARSE_THREADS", 2)
        side_by_side = normalize_records(rows)
    pd.testing.assert_frame_equal(side_by_side.frame, one_at_a_time.frame)
    pd.testing.assert_frame_equal(side_by_side.problems, one_at_a_time.problems)
    assert set(one_at_a_time.counts) == {
        "Bedrooms",
        "LATITUDE",
        "Images",
        "ExtensionColumn",
        "Price",
    }
