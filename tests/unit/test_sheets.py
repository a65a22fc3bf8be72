"""read_sheet: MLS exports (xlsx, csv, DataFrame) into the canonical listing frame."""

from __future__ import annotations

import sys
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from estatebot.errors import SheetError
from estatebot.listings import schema
from estatebot.listings.sheet.read import Sheet, read_sheet
from estatebot.listings.sheet.readers import xlsx_openpyxl as xlsx

try:
    import fixtures_sheets as fx
except ImportError:  # tests/ is on sys.path only when pytest is configured with pythonpath
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import fixtures_sheets as fx

MONEY = {"CurrencySymbol": "$"}

# A complete listing by API field names; tests override what they exercise.
BASE: dict[str, Any] = fx.SHEET_ROW


def frame_of(*rows: dict[str, Any], drop: tuple[str, ...] = ()) -> pd.DataFrame:
    """A DataFrame of listings: BASE with each row's overrides, MLS numbers M1, M2, ..."""
    records = []
    for i, row in enumerate(rows, start=1):
        record = {**BASE, "MLSNumber": f"M{i}", **row}
        records.append({k: v for k, v in record.items() if k not in drop})
    return pd.DataFrame(records)


def read(*rows: dict[str, Any], drop: tuple[str, ...] = (), **kwargs: Any) -> Sheet:
    return read_sheet(frame_of(*rows, drop=drop), **kwargs)


def only(sheet: Sheet, field: str) -> Any:
    """The value of ``field`` in the one valid row."""
    assert len(sheet.frame) == 1, sheet.summary()
    return sheet.frame[field].iloc[0]


def messages(sheet: Sheet, row: int) -> list[str]:
    return sheet.issues.loc[sheet.issues["row"] == row, "message"].tolist()


# --------------------------------------------------------------------------- header styles


def test_reso_export(tmp_path: Path) -> None:
    sheet = read_sheet(fx.write_reso_xlsx(tmp_path), defaults=MONEY)
    frame = sheet.frame
    assert list(frame.index) == [2, 3, 4, 5]
    assert sheet.issues.empty, sheet.summary()
    assert sheet.unpublished.to_dict("records") == [
        {"row": 6, "key": "ML81234571", "status": "Withdrawn"}
    ]
    row = frame.loc[2]
    assert row["Bathrooms"] == 2.5  # 2 full + 1 half, never BathroomsTotalInteger
    assert row["ParkingSpots"] == 4  # garage 2 + carport 1 + open 1, covered 3 left out
    assert row["LotArea"] == 6000  # LotSizeSquareFeet before LotSizeAcres
    assert row["HOAMonth"] == 100  # 1,200 annually
    assert row["PropertyType"] == "Single Family Residence"
    assert row["Address"] == "12 Oak St"
    assert row["Url"] == "https://example.com/ML81234567"
    assert row["ExtensionColumn"] == {
        "ListingKey": "K-1",
        "BathroomsTotalInteger": "3",
        "CumulativeDaysOnMarket": "40",
        "CoveredSpaces": "3",
        "Heating": "Central",
    }
    lease = frame.loc[3]
    assert (lease["SaleType"], lease["Status"]) == ("for_rent", "Active")
    assert (lease["AreaUnit"], lease["BuildingArea"]) == ("Square Meters", 85)
    assert lease["LotArea"] == pytest.approx(0.5 * 4046.8564224, abs=0.01)
    assert pd.isna(lease["SalePrice"])
    assert lease["RentPrice"] == 2400
    assert lease["UnitAreaPrice"] == round(2400 / 85, 2)
    assert lease["ExtensionColumn"]["StandardStatus"] == "Active Under Contract"
    closed = frame.loc[4]
    assert (closed["Status"], closed["SalePrice"]) == ("Sold", 505_000)
    assert closed["LotArea"] == 10_890
    assert closed["HOAMonth"] == 100  # 300 quarterly
    assert closed["Tours"] == "3D"
    assert frame.loc[5, "Status"] == "PreOnMarket"
    mapping = sheet.mapping.set_index("header")
    assert mapping.loc["PrivateRemarks", "how"] == "ignored"
    assert "PrivateRemarks" not in str(frame["ExtensionColumn"].tolist())


def test_portal_csv(tmp_path: Path) -> None:
    path = fx.write_portal_csv(tmp_path)
    defaults = {**MONEY, "ParkingSpots": 0, "LotArea": 0}
    sheet = read_sheet(path, defaults=defaults, lot_unit="sqft")
    assert sheet.source == "redfin_export.csv"
    assert list(sheet.frame.index) == [3, 4]
    disclaimer = sheet.warnings[sheet.warnings["row"] == 2]
    assert disclaimer["message"].str.contains("disclaimer").all()
    assert len(disclaimer) == 1
    first = sheet.frame.loc[3]
    assert first["ZIP"] == "02108"
    assert first["MLSNumber"] == "73100001"
    assert first["SaleType"] == "for_sale"  # not from SALE TYPE ("MLS Listing")
    assert first["ExtensionColumn"]["SALE TYPE"] == "MLS Listing"
    assert first["Url"].startswith("https://www.redfin.com/")
    assert first["Tours"] == "OpenHouse"
    assert first["Location"] == "Beacon Hill"
    assert first["UnitAreaPrice"] == 281.25  # 281 in the sheet is within 1%
    second = sheet.frame.loc[4]
    assert second["UnitAreaPrice"] == 600.0
    assert second["HOAMonth"] == 350
    assert second["LotArea"] == 0  # blank LOT SIZE filled by the default
    assert any("disagrees" in m for m in messages(sheet, 4))
    assert sheet.mapping.set_index("header").loc["SALE TYPE", "how"] == "extension"


def test_portal_csv_needs_a_lot_unit(tmp_path: Path) -> None:
    with pytest.raises(SheetError, match="lot_unit") as info:
        read_sheet(fx.write_portal_csv(tmp_path), defaults={**MONEY, "ParkingSpots": 0})
    assert info.value.column == "LOT SIZE"


def test_mls_system_export_with_coded_statuses(tmp_path: Path) -> None:
    sheet = read_sheet(fx.write_mls_xlsx(tmp_path), defaults={**MONEY, "ParkingSpots": 0})
    outcome: dict[str, str] = {}
    for position, code in enumerate(fx.MLS_STATUS_CODES):
        row = position + 2
        if row in sheet.frame.index:
            outcome[code] = sheet.frame.loc[row, "Status"]
        elif row in sheet.unpublished["row"].tolist():
            outcome[code] = "unpublished"
        else:
            assert row in sheet.invalid_rows
            outcome[code] = "error"
    assert outcome == fx.MLS_STATUS_CODES
    frame = sheet.frame
    assert (frame["ZIP"] == "02903").all()  # numeric 2903 under a 00000 format
    assert frame.loc[2, "MLSNumber"] == "24000000"  # a numeric MLS number read as text
    assert frame.loc[2, "LotArea"] == 21_780  # 0.5 acres
    assert frame.loc[3, "ExtensionColumn"]["StandardStatus"] == "Active Under Contract"
    assert frame.loc[5, "ExtensionColumn"]["StandardStatus"] == "Pending"
    assert frame.loc[6, "SalePrice"] == 290_004  # Sold Price for the sold row
    assert frame.loc[2, "Images"] == ["https://img.example.com/0.jpg"]


# --------------------------------------------------------------------------- pitfalls


def test_every_pitfall(tmp_path: Path) -> None:
    sheet = read_sheet(fx.write_pitfalls_xlsx(tmp_path))
    for row, (_, expected, what) in fx.PITFALL_ROWS.items():
        got = "valid" if row in sheet.frame.index else "rejected"
        assert got == expected, f"row {row} ({what}): {messages(sheet, row)}"
    frame = sheet.frame
    assert frame.loc[3, ["MLSNumber", "ZIP", "City"]].tolist() == ["00123", "02108", "Boston"]
    assert frame.loc[[9, 10, 11], "Bedrooms"].tolist() == [3, 3, 3]
    assert pd.isna(frame.loc[14, "City"])
    assert pd.isna(frame.loc[14, "Description"])
    assert frame.loc[15, "MLSNumber"] == "1234567"
    assert frame.loc[17, "MLSNumber"] == "123456789012"
    assert sheet.cleared.loc[16, "Description"]
    assert not sheet.cleared.loc[3, "Description"]
    assert pd.isna(frame.loc[16, "Description"])
    assert sheet.warnings["row"].tolist() == [2]  # the disclaimer


def test_pitfall_issues_name_row_column_and_value(tmp_path: Path) -> None:
    sheet = read_sheet(fx.write_pitfalls_xlsx(tmp_path))
    errors = sheet.errors.set_index("row")
    assert errors.loc[5, "value"] == "1.23E+11"
    assert "Excel" in errors.loc[5, "message"]
    assert errors.loc[4, "column"] == "MLSNumber"
    duplicate = errors.loc[[7, 8], "message"].tolist()
    assert all("rows 7, 8" in m for m in duplicate)
    assert 12 not in errors.index  # a blank required cell says nothing (only creates need it)
    assert sheet.invalid_rows == [4, 5, 6, 7, 8]


def test_numeric_ids_over_15_digits_are_rejected() -> None:
    sheet = read({"MLSNumber": 12345678901234567}, {"MLSNumber": 123456789012345})
    assert sheet.invalid_rows == [2]
    assert "15 digits" in messages(sheet, 2)[0]
    assert sheet.frame.loc[3, "MLSNumber"] == "123456789012345"


@pytest.mark.parametrize("mangled", [1.5e11, 123456.0, "1.23E+11", "123456.0", "4.5e7"])
def test_ids_turned_into_numbers_are_rejected(mangled: Any) -> None:
    sheet = read({"MLSNumber": mangled})
    assert sheet.invalid_rows == [2]
    assert sheet.frame.empty


@pytest.mark.parametrize("three", [3, 3.0, "3", " 3 ", "3.0", np.int64(3)])
def test_three_is_three(three: Any) -> None:
    assert only(read({"Bedrooms": three}), "Bedrooms") == 3


@pytest.mark.parametrize("blank", [None, "", "  ", "#N/A", "N/A", "n/a", "-", float("nan")])
def test_blank_tokens_are_empty(blank: Any) -> None:
    sheet = read({"City": blank, "Bedrooms": 2})
    assert pd.isna(only(sheet, "City"))
    # A blank required cell says nothing either: the listing keeps its own value, and only a
    # row to be created needs the field (the plan says so).
    required = read({"Bedrooms": blank})
    assert required.invalid_rows == []
    assert pd.isna(only(required, "Bedrooms"))


def test_spaces_are_trimmed_and_non_breaking_spaces_made_plain() -> None:
    sheet = read({"MLSNumber": "\u00a0AB12 ", "City": " New\u00a0York\u00a0", "State": "NY\t"})
    assert only(sheet, "MLSNumber") == "AB12"
    assert only(sheet, "City") == "New York"
    assert only(sheet, "State") == "NY"


def test_duplicate_keys_reject_every_row() -> None:
    sheet = read({"MLSNumber": "K1"}, {"MLSNumber": "K2"}, {"MLSNumber": " K1"})
    assert sheet.invalid_rows == [2, 4]
    assert list(sheet.frame.index) == [3]


def test_short_numeric_zip_warns() -> None:
    sheet = read({"ZIP": 2108})
    assert only(sheet, "ZIP") == "2108"
    assert "leading zero" in sheet.warnings["message"].iloc[0]


def test_zip_formats_pad_numbers(tmp_path: Path) -> None:
    zip_style, zip4_style, date_style = (fx.RAW_STYLES[k] for k in ("zip", "zip4", "date"))
    path = fx.write_raw_xlsx(
        tmp_path / "zips.xlsx",
        '<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c>'
        '<c r="B1" t="inlineStr"><is><t>b</t></is></c>'
        '<c r="C1" t="inlineStr"><is><t>c</t></is></c></row>'
        f'<row r="2"><c r="A2" s="{zip_style}"><v>2108</v></c>'
        f'<c r="B2" s="{zip4_style}"><v>21081234</v></c>'
        f'<c r="C2" s="{date_style}"><v>45658</v></c></row>',
    )
    cells = xlsx.read_xlsx_cells(path)
    assert cells.grid[1].tolist() == ["02108", "02108-1234", datetime(2025, 1, 1)]


# --------------------------------------------------------------------------- the xlsx reader


def _rich_sheet(tmp_path: Path, name: str = "rich.xlsx") -> Path:
    shared = [
        "<t>ML-1</t>",
        '<r><rPr><b/></rPr><t xml:space="preserve">Hello </t></r><r><t>World</t></r>'
        '<rPh sb="0" eb="5"><t>ハロー</t></rPh>',
        "<t>Fish &amp; Chips</t>",
        "<t/>",
    ]
    rows = (
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c>'
        '<c r="C1" t="s"><v>2</v></c><c r="D1" t="s"><v>3</v></c>'
        '<c r="E1" t="inlineStr"><is><t>e</t></is></c>'
        '<c r="F1" t="inlineStr"><is><t>f</t></is></c></row>'
        '<row r="3" spans="1:6"><c r="A3" t="str"><f>CONCAT("M","L")</f><v>ML</v></c>'
        '<c r="B3" t="b"><v>1</v></c><c r="C3" t="e"><v>#N/A</v></c>'
        '<c r="D3" t="s" s="0"><v>2</v></c>'
        '<c r="E3" s="1"><f t="shared" si="0"/><v>2108</v></c>'
        '<c r="F3" t="inlineStr"><is><r><t>rich</t></r><r><t> inline</t></r></is></c></row>'
        '<row r="4"><c r="A4"><v>1.5E+3</v></c><c r="B4"><v>-2</v></c>'
        '<c r="C4" t="inlineStr"><is><t xml:space="preserve"> padded </t></is></c>'
        '<c r="D4" s="2"><v>45658.5</v></c><c r="E4" t="n" s="0"/></row>'
    )
    return fx.write_raw_xlsx(tmp_path / name, rows, shared)


def test_reader_reads_what_real_files_hold(tmp_path: Path) -> None:
    cells = xlsx.read_xlsx_cells(_rich_sheet(tmp_path))
    assert cells.rows.tolist() == [1, 3, 4]
    # Column D has an empty header (an empty shared string): its values are noted, not read.
    assert cells.columns == [1, 2, 3, 5, 6]
    grid = cells.grid.tolist()
    assert grid[0] == ["ML-1", "Hello World", "Fish & Chips", "e", "f"]
    assert grid[1] == ["ML", True, "#N/A", "02108", "rich inline"]
    assert grid[2] == [1500.0, -2, " padded ", None, None]
    assert isinstance(grid[2][0], float)
    assert isinstance(grid[2][1], int)
    assert [(n.column, n.message) for n in cells.notes] == [
        ("column D", "has 2 value(s) under a blank header: ignored")
    ]


def test_attributes_in_any_order(tmp_path: Path) -> None:
    path = fx.write_raw_xlsx(
        tmp_path / "order.xlsx",
        '<row r="1"><c r="A1" t="s"><v>0</v></c></row>'
        '<row r="2"><c r="A2" t="n" s="1"><v>501</v></c></row>',
        ["<t>ZIP</t>"],
    )
    assert xlsx.read_xlsx_cells(path).grid.tolist() == [["ZIP"], ["00501"]]


def test_sheet_name_picks_the_worksheet(tmp_path: Path) -> None:
    path = fx.write_xlsx(
        tmp_path / "two.xlsx", ["a"], [[1]], sheet_title="Data", extra_sheets=["Other"]
    )
    assert xlsx.read_xlsx_cells(path, "Data").grid.tolist() == [["a"], [1]]
    assert xlsx.read_xlsx_cells(path, 1).grid.shape == (0, 0)
    with pytest.raises(SheetError, match="no sheet named 'Nope'"):
        read_sheet(path, sheet_name="Nope")
    with pytest.raises(SheetError, match="no sheet number 5"):
        read_sheet(path, sheet_name=5)


# --------------------------------------------------------------------------- units


@pytest.mark.parametrize(
    ("cells", "defaults", "lot_unit", "area_unit", "lot_area"),
    [
        ({"LotSizeAcres": 0.25}, {"AreaUnit": "Square Feet"}, None, "Square Feet", 10_890),
        ({"LotSizeAcres": 1}, {"AreaUnit": "Square Meters"}, None, "Square Meters", 4046.86),
        ({"LotSizeSquareFeet": 1000}, {"AreaUnit": "sqm"}, None, "Square Meters", 92.9),
        ({"LotSizeArea": 2, "LotSizeUnits": "Acres"}, {}, None, "Square Feet", 87_120),
        ({"LotSizeArea": 500, "LotSizeUnits": "Square Meters"}, {}, None, "Square Feet", 5381.96),
        ({"LotSizeArea": 1, "LotSizeUnits": "Hectares"}, {}, None, "Square Feet", 107_639.1),
        ({"LotSizeArea": 3}, {}, "acres", "Square Feet", 130_680),
        ({"LOT SIZE": 5000}, {}, "sqft", "Square Feet", 5000),
        ({"LOT SIZE": 5000}, {"AreaUnit": "Square Meters"}, "sqft", "Square Meters", 464.52),
        ({"LotArea": 700, "AreaUnit": "Square Meters"}, {}, None, "Square Meters", 700),
    ],
)
def test_lot_units(
    cells: dict[str, Any],
    defaults: dict[str, Any],
    lot_unit: str | None,
    area_unit: str,
    lot_area: float,
) -> None:
    drop = tuple(k for k in ("LotArea", "AreaUnit") if k not in cells)
    sheet = read({"BuildingArea": None, "SQUARE FEET": 1000, **cells}, drop=drop,
                 defaults=defaults, lot_unit=lot_unit)  # fmt: skip
    assert only(sheet, "AreaUnit") == area_unit
    assert only(sheet, "LotArea") == pytest.approx(lot_area, abs=0.01)


def test_living_area_in_square_metres_sets_the_area_unit() -> None:
    sheet = read(
        {"LivingArea": 120, "LivingAreaUnits": "Square Meters", "LotSizeSquareFeet": 10_000},
        drop=("BuildingArea", "AreaUnit", "LotArea"),
    )
    assert (only(sheet, "AreaUnit"), only(sheet, "BuildingArea")) == ("Square Meters", 120)
    assert only(sheet, "LotArea") == pytest.approx(929.03)


def test_square_feet_header_converts_to_a_metric_default() -> None:
    sheet = read({"SqFt": 1000}, drop=("BuildingArea", "AreaUnit"),
                 defaults={"AreaUnit": "Square Meters"})  # fmt: skip
    assert only(sheet, "BuildingArea") == 92.9
    assert only(sheet, "LotArea") == 5000  # an API-name LotArea is already in AreaUnit


def test_lot_size_area_without_a_unit_is_a_row_error() -> None:
    sheet = read({"LotSizeArea": 2}, drop=("LotArea",))
    assert sheet.invalid_rows == [2]
    assert "lot_unit" in messages(sheet, 2)[0]


def test_living_area_without_any_unit_is_in_the_listings_own_unit() -> None:
    # No unit anywhere: the area is the listing's own (a plan takes the unit from the listing).
    unitless = read({"LivingArea": 900}, drop=("BuildingArea", "AreaUnit"))
    assert only(unitless, "BuildingArea") == 900
    assert pd.isna(only(unitless, "AreaUnit"))
    assert unitless.invalid_rows == []
    sheet = read({"LivingArea": 900}, drop=("BuildingArea", "AreaUnit"),
                 defaults={"AreaUnit": "Square Feet"})  # fmt: skip
    assert only(sheet, "BuildingArea") == 900


# --------------------------------------------------------------------------- HOA


@pytest.mark.parametrize(
    ("frequency", "monthly"),
    [
        ("Annually", 100),
        ("Semi-Annually", 200),
        ("Quarterly", 400),
        ("Bi-Monthly", 600),
        ("Monthly", 1200),
        ("semi monthly", 2400),
        ("Bi-Weekly", 2600),
        ("Weekly", 5200),
        ("Daily", 36_500),
    ],
)
def test_hoa_frequencies(frequency: str, monthly: float) -> None:
    sheet = read({"AssociationFee": 1200, "AssociationFeeFrequency": frequency})
    assert only(sheet, "HOAMonth") == pytest.approx(monthly)


@pytest.mark.parametrize("frequency", ["One Time", "Seasonal", "Fortnightly"])
def test_hoa_frequencies_that_are_not_monthly_costs_reject_the_row(frequency: str) -> None:
    sheet = read({"AssociationFee": 500, "AssociationFeeFrequency": frequency})
    assert sheet.invalid_rows == [2]
    issue = sheet.errors.iloc[0]
    assert (issue["column"], issue["value"]) == ("AssociationFeeFrequency", frequency)


def test_hoa_without_frequency_warns_and_stays_empty() -> None:
    sheet = read({"AssociationFee": 500, "AssociationFeeFrequency": None})
    assert pd.isna(only(sheet, "HOAMonth"))
    assert "AssociationFeeFrequency" in sheet.warnings["message"].iloc[0]


def test_hoa_month_column_is_already_monthly() -> None:
    assert only(read({"HOA/MONTH": "$1,250"}), "HOAMonth") == 1250


# --------------------------------------------------------------------------- bathrooms, parking


def test_full_and_half_baths() -> None:
    sheet = read(
        {"BathroomsFull": 2, "BathroomsHalf": 1},
        {"BathroomsFull": 3, "BathroomsHalf": None},
        {"BathroomsFull": None, "BathroomsHalf": 1},
        drop=("Bathrooms",),
    )
    assert sheet.frame["Bathrooms"].tolist() == [2.5, 3.0, 0.5]


def test_decimal_baths_only_when_asked() -> None:
    rows = ({"Bathrooms": 2.1}, {"Bathrooms": "3.2"}, {"Bathrooms": 2})
    assert read(*rows).frame["Bathrooms"].tolist() == [2.1, 3.2, 2.0]
    assert read(*rows, decimal_baths=True).frame["Bathrooms"].tolist() == [2.5, 4.0, 2.0]
    unclear = read({"Bathrooms": 2.25}, decimal_baths=True)
    assert unclear.invalid_rows == [2]


def test_bathrooms_total_integer_is_never_bathrooms() -> None:
    sheet = read({"BathroomsTotalInteger": 3}, drop=("Bathrooms",))
    assert pd.isna(only(sheet, "Bathrooms"))
    assert "Bathrooms" in sheet.warnings["field"].tolist()


def test_parking() -> None:
    sheet = read(
        {"GarageSpaces": 2, "CarportSpaces": 1, "OpenParkingSpaces": 2, "CoveredSpaces": 3},
        {"ParkingTotal": 5, "GarageSpaces": 2},
        {"GarageSpaces": 1.5},
        drop=("ParkingSpots",),
    )
    assert sheet.frame["ParkingSpots"].tolist() == [5, 5]
    assert sheet.invalid_rows == [4]


# --------------------------------------------------------------------------- status


@pytest.mark.parametrize(
    ("status", "expected", "kept"),
    [
        ("Active", "Active", None),
        ("Active Under Contract", "Active", "Active Under Contract"),
        ("ACTIVE_UNDER_CONTRACT", "Active", "Active Under Contract"),
        ("Coming Soon", "PreOnMarket", None),
        ("PreOnMarket", "PreOnMarket", None),
        ("Pending", "Active", "Pending"),
        ("Closed", "Sold", None),
        ("Sold", "Sold", None),
        ("A", "Active", None),
        ("U", "Active", "Active Under Contract"),
        ("CS", "PreOnMarket", None),
        ("P", "Active", "Pending"),
        ("S", "Sold", None),
    ],
)
def test_published_statuses(status: str, expected: str, kept: str | None) -> None:
    sheet = read({"Status": status})
    assert only(sheet, "Status") == expected
    assert only(sheet, "ExtensionColumn").get("StandardStatus") == kept


@pytest.mark.parametrize(
    "status", ["Hold", "Withdrawn", "Expired", "Canceled", "Delete", "C", "X", "W", "E", "H"]
)
def test_statuses_that_are_not_published(status: str) -> None:
    sheet = read({"Status": status}, {"Status": "Active"})
    assert list(sheet.frame.index) == [3]
    assert sheet.unpublished.to_dict("records") == [{"row": 2, "key": "M1", "status": status}]
    assert sheet.invalid_rows == []


@pytest.mark.parametrize("status", ["Incomplete", "I", "Bogus"])
def test_incomplete_and_unknown_statuses_are_row_errors(status: str) -> None:
    sheet = read({"Status": status})
    assert sheet.invalid_rows == [2]
    assert sheet.errors.iloc[0]["column"] == "Status"


def test_pending_status_choices() -> None:
    assert only(read({"Status": "Pending"}, pending_status="Sold"), "Status") == "Sold"
    off = read({"Status": "Pending"}, pending_status="off-market")
    assert off.frame.empty
    assert off.unpublished["status"].tolist() == ["Pending"]
    with pytest.raises(SheetError, match="pending_status"):
        read({"Status": "Pending"}, pending_status="Maybe")


def test_unpublished_rows_are_not_validated_but_need_a_key() -> None:
    sheet = read(
        {"Status": "Expired", "Bedrooms": "many"}, {"Status": "Expired", "MLSNumber": None}
    )
    assert sheet.unpublished["row"].tolist() == [2]
    assert sheet.invalid_rows == [3]


def test_status_overrides_for_local_codes() -> None:
    sheet = read({"Status": "C"}, {"Status": "ZZ"}, statuses={"C": "Closed", "ZZ": "Active"})
    assert sheet.frame["Status"].tolist() == ["Sold", "Active"]


# --------------------------------------------------------------------------- sale type, prices


def test_sale_type_from_reso_property_type_and_listing_type() -> None:
    sheet = read(
        {"PropertyType": "Residential Lease"},
        {"PropertyType": "Commercial Lease"},
        {"PropertyType": "Residential"},
        {"PropertyType": "Condo", "listing_type": "for_rent"},
        {"PropertyType": "Condo"},
        drop=("SaleType",),
    )
    assert sheet.frame["SaleType"].tolist() == [
        "for_rent", "for_rent", "for_sale", "for_rent", "for_sale",
    ]  # fmt: skip
    rentals = read({"PropertyType": "Apartment"}, drop=("SaleType",),
                   defaults={"SaleType": "For Rent"})  # fmt: skip
    assert only(rentals, "SaleType") == "for_rent"


def test_prices_follow_the_sale_type_and_status() -> None:
    sheet = read(
        {"ListPrice": 2500, "SaleType": "for_rent"},
        {"ListPrice": 400_000, "ClosePrice": 390_000, "Status": "Closed"},
        {"ListPrice": 400_000, "Status": "Closed"},
        {"ListPrice": 400_000, "ClosePrice": 390_000},
    )
    frame = sheet.frame
    assert frame["RentPrice"].tolist()[0] == 2500
    assert pd.isna(frame["SalePrice"].iloc[0])
    assert frame["SalePrice"].tolist()[1:] == [390_000, 400_000, 400_000]


def test_unit_area_price_is_recomputed() -> None:
    sheet = read(
        {"SalePrice": 300_000, "UnitAreaPrice": 201},
        {"SalePrice": 300_000, "UnitAreaPrice": 250},
        {"SalePrice": None, "UnitAreaPrice": 250},
    )
    assert sheet.frame["UnitAreaPrice"].tolist() == [200.0, 200.0, 250.0]
    assert sheet.warnings["row"].tolist() == [3]


def test_zestimate_hidden_when_the_mls_forbids_display() -> None:
    sheet = read(
        {"estimated_value": 500_000, "InternetAutomatedValuationDisplayYN": False},
        {"estimated_value": 500_000, "InternetAutomatedValuationDisplayYN": "Y"},
    )
    assert pd.isna(sheet.frame["ZestimatePrice"].iloc[0])
    assert sheet.frame["ZestimatePrice"].iloc[1] == 500_000


# --------------------------------------------------------------------------- mapping, defaults


def test_user_mapping_wins() -> None:
    sheet = read(
        {"Beds (total)": 4, "BEDS": 9},
        drop=("Bedrooms",),
        mapping={"Beds (total)": "Bedrooms", "BEDS": "ignore"},
    )
    assert only(sheet, "Bedrooms") == 4
    mapping = sheet.mapping.set_index("header")
    assert mapping.loc["Beds (total)", "how"] == "user mapping"
    assert mapping.loc["BEDS", "how"] == "ignored"
    assert "BEDS" not in only(sheet, "ExtensionColumn")


def test_two_headers_for_one_field() -> None:
    with pytest.raises(SheetError, match="'Bedrooms' and 'BEDS'"):
        read({"BEDS": 3})


def test_unknown_mapping_field() -> None:
    with pytest.raises(SheetError, match="unknown field"):
        read({}, mapping={"Bedrooms": "Rooms"})


def test_mapping_for_a_header_the_sheet_lacks_is_a_warning() -> None:
    sheet = read({}, mapping={"Nope": "City"})
    assert sheet.warnings["column"].tolist() == ["Nope"]
    assert len(sheet.frame) == 1


def test_a_missing_required_column_is_a_sheet_warning_naming_it() -> None:
    # Law 2: the listings the sheet updates keep their own value of the field; only a row to be
    # created needs it (the plan says so). Nothing is rejected here.
    sheet = read({}, drop=("YearBuilt", "CurrencySymbol"))
    assert len(sheet.frame) == 1
    assert sheet.errors.empty
    missing = sheet.warnings[sheet.warnings["row"].isna()]
    assert sorted(missing["field"].tolist()) == ["CurrencySymbol", "YearBuilt"]
    assert all("no column" in message for message in missing["message"])
    assert pd.isna(only(sheet, "YearBuilt"))


def test_missing_required_field_with_a_default() -> None:
    sheet = read({}, {"YearBuilt": None}, drop=("CurrencySymbol",),
                 defaults={"CurrencySymbol": "€", "YearBuilt": 1900})  # fmt: skip
    assert sheet.frame["CurrencySymbol"].tolist() == ["€", "€"]
    assert sheet.frame["YearBuilt"].tolist() == [2001, 1900]


def test_bad_defaults_raise() -> None:
    with pytest.raises(SheetError, match="Bedroomz"):
        read({}, defaults={"Bedroomz": 1})
    with pytest.raises(SheetError, match="AreaUnit"):
        read({}, defaults={"AreaUnit": "acres"})
    with pytest.raises(SheetError, match="Status"):
        read({}, defaults={"Status": "Maybe"})


# --------------------------------------------------------------------------- clear token


def test_clear_token_empties_a_field() -> None:
    sheet = read(
        {"Description": "#CLEAR", "HOAMonth": 10}, {"Description": "Nice", "HOAMonth": " #clear"}
    )
    assert sheet.frame["Description"].isna().tolist() == [True, False]
    assert sheet.frame["HOAMonth"].isna().tolist() == [False, True]
    assert sheet.cleared.to_dict("list") == {
        "Description": [True, False],
        "HOAMonth": [False, True],
    }


def test_clear_token_on_a_required_field_rejects_the_row() -> None:
    sheet = read({"Bedrooms": "#CLEAR"}, defaults={"Bedrooms": 1})
    assert sheet.invalid_rows == [2]
    assert "required" in messages(sheet, 2)[0]


def test_custom_clear_token_and_derived_fields() -> None:
    sheet = read({"AssociationFee": "<empty>", "AssociationFeeFrequency": "Monthly"},
                 clear_token="<empty>")  # fmt: skip
    assert pd.isna(only(sheet, "HOAMonth"))
    assert sheet.cleared["HOAMonth"].tolist() == [True]


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("Latitude", 91),
        ("Longitude", -181),
        ("YearBuilt", 1599),
        ("YearBuilt", 95),
        ("YearBuilt", date.today().year + 6),
        ("SalePrice", -1),
        ("Bedrooms", -2),
        ("Bedrooms", 2.5),
        ("AreaUnit", "Acres"),
        ("SaleType", "auction"),
        ("Tours", "Drive-by"),
        ("SpaceType", "Garage"),
    ],
)
def test_out_of_range_values_reject_the_row(field: str, value: Any) -> None:
    sheet = read({field: value}, {})
    assert sheet.invalid_rows == [2]
    issue = sheet.errors.iloc[0]
    assert issue["field"] == field
    assert issue["column"] == field


def test_enum_spellings_are_normalized() -> None:
    sheet = read(
        {"Tours": "open house", "SpaceType": "room", "AreaUnit": "sq ft", "SaleType": "For Sale"}
    )
    assert (only(sheet, "Tours"), only(sheet, "SpaceType")) == ("OpenHouse", "Room")
    assert (only(sheet, "AreaUnit"), only(sheet, "SaleType")) == ("Square Feet", "for_sale")


def test_long_description_is_cut_with_a_warning() -> None:
    sheet = read({"Description": "x" * 4100})
    assert len(only(sheet, "Description")) == 4000
    assert "4000" in sheet.warnings["message"].iloc[0]


def test_key_argument_picks_the_duplicate_check() -> None:
    rows = ({"Url": "https://a/1"}, {"Url": "https://a/1"})
    assert read(*rows).invalid_rows == []
    assert read(*rows, key="Url").invalid_rows == [2, 3]
    assert read(*rows, key="URL").invalid_rows == [2, 3]
    with pytest.raises(SheetError, match="key"):
        read(*rows, key="Address")


# --------------------------------------------------------------------------- frame and extras


def test_frame_is_canonical() -> None:
    sheet = read({}, {"ID": 77})
    frame = sheet.frame
    assert list(frame.columns) == list(schema.COLUMNS)
    assert frame.index.name == "row"
    assert list(frame.index) == [2, 3]
    for column in schema.COLUMNS:
        expected = pd.Series(dtype=schema.DTYPES[column]).dtype
        assert frame[column].dtype == expected, column
    assert pd.isna(frame.loc[2, "ID"])
    assert frame.loc[3, "ID"] == 77


def test_no_id_column_leaves_id_empty(tmp_path: Path) -> None:
    sheet = read_sheet(fx.write_reso_xlsx(tmp_path), defaults=MONEY)
    assert sheet.frame["ID"].isna().all()


def test_input_frame_is_not_mutated() -> None:
    frame = frame_of({"City": " Boston ", "Bedrooms": "3", "Status": "Pending", "Notes": "x"})
    frame["Bathrooms"] = frame["Bathrooms"].astype("Int64")
    before = frame.copy(deep=True)
    read_sheet(frame)
    pd.testing.assert_frame_equal(frame, before)


@pytest.mark.parametrize("kind", ["xlsx", "csv", "frame"])
def test_empty_sheet_is_a_valid_empty_frame(tmp_path: Path, kind: str) -> None:
    headers = list(BASE)
    if kind == "xlsx":
        source: Any = fx.write_xlsx(tmp_path / "empty.xlsx", headers, [])
    elif kind == "csv":
        source = fx.write_csv(tmp_path / "empty.csv", headers, [])
    else:
        source = pd.DataFrame(columns=headers)
    sheet = read_sheet(source)
    pd.testing.assert_frame_equal(
        sheet.frame, schema.empty_frame().set_axis(pd.Index([], dtype="int64", name="row"))
    )
    assert sheet.issues.empty
    assert sheet.invalid_rows == []
    assert sheet.rows_read == 0


def test_extensions_keep_unmapped_columns_as_text(tmp_path: Path) -> None:
    path = fx.write_xlsx(
        tmp_path / "ext.xlsx",
        [*BASE, "Pool", "Listed", "Score", "Empty", "SALE TYPE"],
        [{**BASE, "MLSNumber": "E1", "Pool": "Yes", "Listed": datetime(2025, 3, 1),
          "Score": 4.0, "Empty": None, "SALE TYPE": "Past Sale"}],
    )  # fmt: skip
    sheet = read_sheet(path)
    assert only(sheet, "ExtensionColumn") == {
        "Pool": "Yes", "Listed": "2025-03-01", "Score": "4", "SALE TYPE": "Past Sale",
    }  # fmt: skip
    off = read_sheet(path, extensions=False)
    assert only(off, "ExtensionColumn") == {}
    assert set(off.mapping.loc[off.mapping["field"].isna(), "how"]) == {"ignored"}


def test_serialized_extension_column_and_images() -> None:
    sheet = read(
        {"ExtensionColumn": '[{"Key": "Pool", "value": "Yes"}]',
         "primary_photo": "https://i/0.jpg", "alt_photos": "https://i/1.jpg, https://i/0.jpg"},
        {"ExtensionColumn": "View: Ocean; Dock: no", "Images": '["https://i/9.jpg"]'},
        {"ExtensionColumn": "not pairs"},
    )  # fmt: skip
    frame = sheet.frame
    assert frame.loc[2, "ExtensionColumn"] == {"Pool": "Yes"}
    assert frame.loc[2, "Images"] == ["https://i/0.jpg", "https://i/1.jpg"]
    assert frame.loc[3, "ExtensionColumn"] == {"View": "Ocean", "Dock": "no"}
    assert frame.loc[3, "Images"] == ["https://i/9.jpg"]
    assert sheet.invalid_rows == [4]


def test_address_from_street_parts() -> None:
    sheet = read(
        {"StreetNumber": "12", "StreetDirPrefix": "N", "StreetName": "Main", "StreetSuffix": "St",
         "UnitNumber": "4"},
        {"StreetNumber": 7, "StreetName": "Elm", "UnitNumber": "Apt 2"},
        {"StreetNumber": 7, "StreetName": "Elm", "UnparsedAddress": "7 Elm Street"},
    )  # fmt: skip
    assert sheet.frame["Address"].tolist() == ["12 N Main St #4", "7 Elm Apt 2", "7 Elm Street"]


def test_csv_encodings(tmp_path: Path) -> None:
    headers = [*BASE, "City"]
    row = {**BASE, "City": "Montréal"}
    for encoding in ("utf-8-sig", "utf-8", "utf-16", "cp1252"):
        path = fx.write_csv(tmp_path / f"{encoding}.csv", headers, [row], encoding=encoding)
        # A file in a legacy encoding is read when told so, never guessed (see
        # test_sheet_files.py for the refusal when it is not).
        sheet = read_sheet(path, encoding="cp1252" if encoding == "cp1252" else None)
        assert only(sheet, "City") == "Montréal"
        assert sheet.mapping["header"].iloc[0] == "MLSNumber"


def test_sheet_reports() -> None:
    sheet = read({}, {"Bedrooms": "x"}, {"Status": "Withdrawn"}, {"ZIP": 501})
    assert repr(sheet) == (
        "<Sheet <DataFrame>: 4 rows read, 2 valid, 1 rejected, 1 not published, 1 warnings>"
    )
    assert sheet.invalid_rows == [3]
    assert len(sheet.errors) == 1
    assert len(sheet.warnings) == 1
    assert "row 3, Bedrooms: 'x' is not a number" in sheet.summary()
    html = sheet._repr_html_()
    assert "2 valid" in html
    assert "<table" in html
    assert list(sheet.issues.columns) == ["row", "column", "field", "value", "message", "severity"]


def test_blank_rows_are_skipped_and_row_numbers_kept(tmp_path: Path) -> None:
    headers = [*BASE, ""]
    rows: list[list[Any]] = [
        [*BASE.values(), None],
        [None] * len(headers),
        ["  ", "-", *([None] * (len(headers) - 2))],
        [*{**BASE, "MLSNumber": "M9"}.values(), "stray"],
    ]
    sheet = read_sheet(fx.write_csv(tmp_path / "gaps.csv", headers, rows))
    assert list(sheet.frame.index) == [2, 5]
    assert sheet.rows_read == 2
    note = sheet.warnings.iloc[0]
    assert note["column"] == f"column {len(headers)}"
    assert "blank header" in note["message"]
