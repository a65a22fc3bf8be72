"""The reader against what spreadsheet programs do to a file.

Real xlsx files written with openpyxl (read by both engines, calamine and openpyxl) and csv
files, each holding a quirk an analyst's Excel or Calc leaves behind: numbers stored as text,
dates kept as serial numbers under a date format (the 1904 date system too), MLS numbers saved
as numbers (16 and more digits, which a spreadsheet shows as 1.23E+15 or keeps only 15 digits
of), ``TRUE``/``FALSE`` booleans, a block of empty formatted rows below the listings, and an
extra sheet beside the listings.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import openpyxl
import pandas as pd
import pytest
from openpyxl.utils.datetime import CALENDAR_MAC_1904

import estatebot as eb
from estatebot.listings.schema import empty_frame

Engine = Literal["calamine", "openpyxl"]
ENGINES: list[Engine] = ["calamine", "openpyxl"]
HEADERS = (
    "MLSNumber", "Url", "SaleType", "Status", "CurrencySymbol", "PropertyType", "Bedrooms",
    "Bathrooms", "YearBuilt", "DaysOnMarket", "LotArea", "BuildingArea", "AreaUnit",
    "ParkingSpots", "SalePrice", "ZIP",
)  # fmt: skip


def listing(n: int, **cells: Any) -> dict[str, Any]:
    """A valid listing row (as typed cells), with ``cells`` replacing some."""
    row: dict[str, Any] = {
        "MLSNumber": f"Q{n:04d}",
        "Url": f"https://quirks.example/{n}",
        "SaleType": "for_sale",
        "Status": "Active",
        "CurrencySymbol": "$",
        "PropertyType": "Condo",
        "Bedrooms": 3,
        "Bathrooms": 2.5,
        "YearBuilt": 1998,
        "DaysOnMarket": 5,
        "LotArea": 0,
        "BuildingArea": 1200,
        "AreaUnit": "Square Feet",
        "ParkingSpots": 1,
        "SalePrice": 450000,
        "ZIP": "02116",
    }
    row.update(cells)
    return row


def workbook(
    path: Path,
    rows: Sequence[Mapping[str, Any]],
    *,
    headers: Sequence[str] = HEADERS,
    formats: Mapping[str, str] | None = None,
    before: Sequence[tuple[str, list[list[Any]]]] = (),
    after: Sequence[tuple[str, list[list[Any]]]] = (),
    epoch: dt.datetime | None = None,
) -> Path:
    """An xlsx with a "Listings" sheet of ``rows`` (number ``formats`` by header), and other
    sheets (title, rows) placed before and after it."""
    book = openpyxl.Workbook()
    if epoch is not None:
        book.epoch = epoch
    sheet = book.active
    assert sheet is not None
    sheet.title = "Listings"
    sheet.append(list(headers))
    for row in rows:
        sheet.append([row.get(name) for name in headers])
    for name, number_format in (formats or {}).items():
        column = list(headers).index(name) + 1
        for r in range(2, len(rows) + 2):
            sheet.cell(r, column).number_format = number_format
    for at, (title, cells) in enumerate(before):
        extra = book.create_sheet(title, at)
        for line in cells:
            extra.append(line)
    for title, cells in after:
        extra = book.create_sheet(title)
        for line in cells:
            extra.append(line)
    book.save(path)
    return path


def errors_at(sheet: eb.Sheet, column: str) -> set[int]:
    """The sheet rows with an error in ``column``."""
    errors = sheet.errors
    return {int(row) for row in errors.loc[errors["column"] == column, "row"]}


def keys(sheet: eb.Sheet) -> list[str]:
    """The MLS numbers of the rows read (``<NA>`` for a row read without one)."""
    return [str(key) for key in sheet.frame["MLSNumber"]]


def read(path: Path, engine: Engine = "calamine", **options: Any) -> eb.Sheet:
    """``path`` read by ``engine``, without a progress bar."""
    return eb.read_sheet(path, engine=engine, progress=False, **options)


# --------------------------------------------------------------------------- numbers as text

NUMBER_FIELDS = ["Bedrooms", "Bathrooms", "YearBuilt", "DaysOnMarket", "LotArea",
                 "BuildingArea", "ParkingSpots", "SalePrice"]  # fmt: skip


@pytest.mark.parametrize("engine", ENGINES)
def test_numbers_stored_as_text_read_as_the_same_numbers(tmp_path: Path, engine: Engine) -> None:
    """Cells holding numbers as text (Excel's green triangle: ``"3"``, ``" 2.5 "``,
    ``"$450,000"``) read as the numbers the numeric cells of the same listing give."""
    numeric = listing(1)
    as_text = listing(
        2, Bedrooms="3", Bathrooms=" 2.5 ", YearBuilt="1998", DaysOnMarket="5", LotArea="0",
        BuildingArea="1,200", ParkingSpots="1", SalePrice="$450,000",
    )  # fmt: skip
    sheet = read(workbook(tmp_path / "text.xlsx", [numeric, as_text]), engine)
    assert sheet.issues.empty, sheet.issues.to_string()
    frame = sheet.frame.reset_index(drop=True)
    assert len(frame) == 2
    for name in NUMBER_FIELDS:
        assert frame.loc[0, name] == frame.loc[1, name], name
        assert float(frame.loc[1, name]) == float(numeric[name]), name


# --------------------------------------------------------------------------- dates


@pytest.mark.parametrize("epoch", [None, CALENDAR_MAC_1904], ids=["1900", "1904"])
@pytest.mark.parametrize("engine", ENGINES)
def test_dates_read_as_dates_not_as_their_serial_numbers(
    tmp_path: Path, engine: Engine, epoch: dt.datetime | None
) -> None:
    """A date cell is a serial number under a date format (counted from 1900, or from 1904 in
    an old Mac workbook); the reader gives the date, never the serial nor a shifted date."""
    headers = (*HEADERS, "List Date", "Last Price Change")
    row = listing(1, **{"List Date": dt.date(2024, 3, 15)})
    row["Last Price Change"] = dt.datetime(2024, 3, 16, 10, 30)
    path = workbook(
        tmp_path / "dates.xlsx",
        [row],
        headers=headers,
        formats={"List Date": "yyyy-mm-dd", "Last Price Change": "yyyy-mm-dd hh:mm"},
        epoch=epoch,
    )
    sheet = read(path, engine)
    assert sheet.errors.empty, sheet.errors.to_string()
    extensions = sheet.frame["ExtensionColumn"].iloc[0]
    assert extensions["List Date"] == "2024-03-15"
    assert extensions["Last Price Change"].startswith("2024-03-16 10:30")


# --------------------------------------------------------------------------- MLS numbers


#: MLS numbers as a spreadsheet saves them: (the cell, the true key when the file still holds
#: its exact digits, else None: the digits are lost and only an issue naming the cell is right).
MLS_CELLS: list[tuple[Any, str | None]] = [
    (123456, "123456"),  # a number column, short: exact
    (123456789012345, "123456789012345"),  # 15 digits: Excel keeps them all
    (1234567890123456, "1234567890123456"),  # 16 digits the xml still holds (Excel shows 1.23E+15)
    (12345678901234567, "12345678901234567"),  # 17 digits: more than a float holds exactly
    (1.23456789012346e15, None),  # what Excel keeps of 1234567890123456: a digit lost
    ("1.23457E+15", None),  # the text a csv saved by Excel holds
    (654321.0, "654321"),  # a whole number saved as a float
]


def check_keys(sheet: eb.Sheet, cells: list[tuple[Any, str | None]]) -> None:
    """Each row is either read with its exact key, or rejected with an error naming its
    MLSNumber cell; no row is read under a key it does not hold (nothing is guessed)."""
    read_keys = {int(row): str(key) for row, key in sheet.frame["MLSNumber"].items()}
    flagged = errors_at(sheet, "MLSNumber")
    for n, (cell, exact) in enumerate(cells):
        row = n + 2
        if row in read_keys:
            assert exact is not None, f"row {row}: {cell!r} read as {read_keys[row]!r}"
            assert read_keys[row] == exact, f"row {row}: {cell!r} read as {read_keys[row]!r}"
        else:
            assert row in flagged, f"row {row}: {cell!r} neither read exactly nor named"
            message = " ".join(sheet.errors.loc[sheet.errors["row"] == row, "message"])
            assert "digits" in message or "number" in message, message
    plan = eb.plan_sync(sheet, empty_frame())
    wanted = {exact for _, exact in cells if exact is not None}
    assert {op.key for op in plan.creates} <= wanted, [op.key for op in plan.creates]


@pytest.mark.parametrize("engine", ENGINES)
def test_mls_numbers_saved_as_numbers_are_exact_or_named(tmp_path: Path, engine: Engine) -> None:
    """MLS numbers saved as numbers: short ones read as their digits; long ones either keep
    the exact digits the file holds or are rejected naming the cell, never read as a key that
    differs from the one in the file."""
    rows = [
        listing(n, MLSNumber=cell, Url=f"https://quirks.example/{n}")
        for n, (cell, _) in enumerate(MLS_CELLS)
    ]
    sheet = read(workbook(tmp_path / "mls.xlsx", rows), engine)
    check_keys(sheet, MLS_CELLS)
    assert sheet.frame["MLSNumber"].iloc[0] == "123456"  # a short one is read, not rejected


def test_mls_numbers_in_a_csv_keep_their_digits_or_are_named(tmp_path: Path) -> None:
    """In csv every cell is text: 16+ digits are kept exactly; Excel's ``1.23457E+15`` (the
    digits already lost) is rejected naming the cell."""
    cells: list[tuple[Any, str | None]] = [
        ("1234567890123456", "1234567890123456"),
        ("12345678901234567890", "12345678901234567890"),
        ("1.23457E+15", None),
        ("0012345", "0012345"),  # leading zeros kept as written
    ]
    rows = [
        listing(n, MLSNumber=cell, Url=f"https://quirks.example/{n}")
        for n, (cell, _) in enumerate(cells)
    ]
    path = tmp_path / "mls.csv"
    pd.DataFrame(rows, columns=list(HEADERS)).to_csv(path, index=False)
    sheet = read(path)
    check_keys(sheet, cells)
    assert len(sheet.frame) == 3


# --------------------------------------------------------------------------- booleans


@pytest.mark.parametrize("engine", ENGINES)
def test_true_and_false_read_alike_from_xlsx_booleans_and_csv_text(
    tmp_path: Path, engine: Engine
) -> None:
    """A yes/no column kept as an extra holds TRUE/FALSE whether the cells are xlsx booleans or
    csv text; a boolean in a number field is an error naming the cell, never 1 or 0."""
    headers = (*HEADERS, "Waterfront")
    rows = [
        {**listing(1), "Waterfront": True},
        {**listing(2), "Waterfront": False},
        {**listing(3, ParkingSpots=True), "Waterfront": True},
    ]
    book = read(workbook(tmp_path / "bools.xlsx", rows, headers=headers), engine)
    csv = tmp_path / "bools.csv"
    pd.DataFrame(
        [{**row, "Waterfront": "TRUE" if row["Waterfront"] else "FALSE"} for row in rows],
        columns=list(headers),
    ).assign(ParkingSpots=["1", "1", "TRUE"]).to_csv(csv, index=False)
    text = read(csv)
    for sheet in (book, text):
        values = [ext.get("Waterfront") for ext in sheet.frame["ExtensionColumn"]]
        assert values == ["TRUE", "FALSE"], values
        assert errors_at(sheet, "ParkingSpots") == {4}
        assert 4 not in set(sheet.frame.index)


# --------------------------------------------------------------------------- trailing rows


@pytest.mark.parametrize("engine", ENGINES)
def test_a_block_of_empty_formatted_rows_below_the_listings_is_no_listings(
    tmp_path: Path, engine: Engine
) -> None:
    """Formatted empty rows (and cells holding an empty text) below the listings, as a sheet
    keeps after rows were cleared, are not listings and raise no issue."""
    path = workbook(tmp_path / "trailing.xlsx", [listing(1), listing(2), listing(3)])
    book = openpyxl.load_workbook(path)
    sheet = book["Listings"]
    for r in range(5, 1005):
        for c in (1, 3, 7):
            sheet.cell(r, c).number_format = "0.00"
        sheet.cell(r, 2).value = ""
    book.save(path)
    result = read(path, engine)
    assert keys(result) == ["Q0001", "Q0002", "Q0003"]
    assert result.issues.empty, result.issues.to_string()


def test_empty_trailing_lines_of_a_csv_are_no_listings(tmp_path: Path) -> None:
    """A csv saved from a sheet with cleared rows ends in lines of bare commas: no listings,
    no issues."""
    path = tmp_path / "trailing.csv"
    frame = pd.DataFrame([listing(1), listing(2)], columns=list(HEADERS))
    text = frame.to_csv(index=False) + ("," * (len(HEADERS) - 1) + "\n") * 200
    path.write_text(text, encoding="utf-8")
    result = read(path)
    assert keys(result) == ["Q0001", "Q0002"]
    assert result.issues.empty, result.issues.to_string()


# --------------------------------------------------------------------------- extra sheets

NOTES = [["Exported by the MLS on 2024-03-15"], ["Field", "Meaning"], ["PRICE", "List price"]]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_listings_sheet_is_read_not_the_extra_one_after_it(
    tmp_path: Path, engine: Engine
) -> None:
    """A workbook with the listings first and a notes sheet after them: the listings are
    read, and nothing of the notes."""
    path = workbook(tmp_path / "extra.xlsx", [listing(1), listing(2)], after=[("Notes", NOTES)])
    sheet = read(path, engine)
    assert keys(sheet) == ["Q0001", "Q0002"]
    assert sheet.issues.empty, sheet.issues.to_string()


@pytest.mark.parametrize("engine", ENGINES)
def test_an_extra_sheet_first_is_not_read_as_listings(tmp_path: Path, engine: Engine) -> None:
    """A notes sheet placed before the listings: the reader either reads the listings sheet,
    or refuses with a SheetError that says no column maps to the key (naming MLSNumber); it
    never reads the notes as listings ("1 rows read, 1 valid"). ``sheet_name`` picks it."""
    path = workbook(tmp_path / "extra.xlsx", [listing(1), listing(2)], before=[("Notes", NOTES)])
    outcome: eb.Sheet | str
    try:
        outcome = read(path, engine)
    except eb.SheetError as error:
        outcome = str(error)
    if isinstance(outcome, str):
        assert "MLSNumber" in outcome, outcome
    else:
        assert keys(outcome) == ["Q0001", "Q0002"], outcome.summary()
    assert keys(read(path, engine, sheet_name="Listings")) == ["Q0001", "Q0002"]
