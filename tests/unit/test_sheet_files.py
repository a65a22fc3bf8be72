"""read_sheet on hostile and broken files: a clear error, nothing wrong read, nothing blown up.

Every file here is a real one, written to disk (xlsx with openpyxl or as raw XML parts, csv as
bytes) and read back through ``read_sheet``: text decoding, non-finite and malformed numbers,
formula cells without a saved value and merged cells, broken files, a stray cell far right, and
delimiters other than the comma.
"""

from __future__ import annotations

import codecs
import csv
import math
import sys
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest

from estatebot.errors import SheetError, SheetNotFoundError
from estatebot.listings.sheet.read import Sheet, read_sheet
from estatebot.listings.sheet.readers import xlsx_openpyxl as xlsx

try:
    import fixtures_sheets as fx
except ImportError:  # tests/ is on sys.path only when pytest is configured with pythonpath
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import fixtures_sheets as fx

#: A complete listing by API field names (every required field present).
BASE: dict[str, Any] = fx.SHEET_ROW
HEADERS = [*BASE, "City", "SalePrice", "Description"]


def listing(i: int, **values: Any) -> dict[str, Any]:
    """Listing ``i`` (MLS number ``M{i}``) with ``values`` over :data:`BASE`."""
    return {**BASE, "MLSNumber": f"M{i}", "Url": f"https://example.com/{i}", **values}


def csv_bytes(rows: list[dict[str, Any]], delimiter: str = ",") -> bytes:
    """``rows`` under :data:`HEADERS` as UTF-8 csv bytes."""
    lines = [delimiter.join(HEADERS)]
    for row in rows:
        lines.append(delimiter.join("" if row.get(h) is None else str(row[h]) for h in HEADERS))
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")


def errors_of(sheet: Sheet, row: int) -> list[tuple[str, str, str]]:
    """(column, value, message) of each error on ``row``."""
    found = sheet.errors[sheet.errors["row"] == row]
    return [
        (str(r.column), "" if pd.isna(r.value) else str(r.value), str(r.message))
        for r in found.itertuples()
    ]


# --------------------------------------------------------------------------- 1. text decoding


def test_a_stray_latin1_byte_rejects_its_row_and_nothing_is_read_as_cp1252(
    tmp_path: Path,
) -> None:
    rows = [listing(i, Description="Café near the park") for i in range(1, 21)]
    data = csv_bytes(rows)
    # Row 22: the same text typed in a Latin-1 editor: é is the single byte 0xE9.
    data += (
        csv_bytes([listing(21, Description="Caf\xe9 corner", City="Montr\xe9al")])
        .split(b"\r\n", 1)[1]
        .replace("é".encode(), b"\xe9")
    )
    path = tmp_path / "mixed.csv"
    path.write_bytes(data)

    sheet = read_sheet(path)

    assert list(sheet.frame.index) == list(range(2, 22))
    assert set(sheet.frame["Description"]) == {"Café near the park"}  # never "CafÃ©"
    assert sheet.invalid_rows == [22]
    assert sorted(errors_of(sheet, 22)) == [
        ("City", "Montr\\xe9al", errors_of(sheet, 22)[0][2]),
        ("Description", "Caf\\xe9 corner", errors_of(sheet, 22)[0][2]),
    ]
    assert "not valid utf-8" in errors_of(sheet, 22)[0][2]
    assert "encoding=" in errors_of(sheet, 22)[0][2]


def test_one_stray_byte_in_an_ascii_file_is_refused_unless_told_it_is_utf8(
    tmp_path: Path,
) -> None:
    path = tmp_path / "ascii.csv"
    path.write_bytes(
        csv_bytes([listing(1), listing(2, City="Quebec")]).replace(b"Quebec", b"Qu\xe9bec")
    )
    with pytest.raises(SheetError, match=r"ascii\.csv is not UTF-8 text .*encoding='cp1252'"):
        read_sheet(path)  # one bad byte and no UTF-8 at all: the file is not UTF-8
    sheet = read_sheet(path, encoding="utf-8")  # told it is UTF-8: the cell is the error
    assert sheet.invalid_rows == [3]
    assert errors_of(sheet, 3)[0][:2] == ("City", "Qu\\xe9bec")


def test_a_file_wholly_in_cp1252_is_refused_with_the_encoding_option(tmp_path: Path) -> None:
    rows = [
        listing(i, City="Montréal", Description="À côté du marché, très éclairé")
        for i in range(1, 6)
    ]
    path = fx.write_csv(tmp_path / "windows.csv", HEADERS, rows, encoding="cp1252")
    with pytest.raises(SheetError) as raised:
        read_sheet(path)
    message = str(raised.value)
    assert "windows.csv" in message
    assert "not UTF-8" in message
    assert "encoding='cp1252'" in message
    sheet = read_sheet(path, encoding="cp1252")
    assert sheet.invalid_rows == []
    assert set(sheet.frame["City"]) == {"Montréal"}
    assert set(sheet.frame["Description"]) == {"À côté du marché, très éclairé"}


@pytest.mark.parametrize("codec", ["utf-8-sig", "utf-16-le", "utf-16-be", "utf-32"])
def test_a_byte_order_mark_says_the_encoding(tmp_path: Path, codec: str) -> None:
    text = csv_bytes([listing(1, City="Zürich")]).decode("utf-8")
    bom = {"utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE}.get(codec, b"")
    path = tmp_path / f"{codec}.csv"
    path.write_bytes(bom + text.encode(codec))
    sheet = read_sheet(path)
    assert sheet.frame["City"].tolist() == ["Zürich"]
    assert sheet.frame["MLSNumber"].tolist() == ["M1"]


def test_utf16_without_a_byte_order_mark_is_refused_naming_the_option(tmp_path: Path) -> None:
    path = tmp_path / "no_bom.csv"
    path.write_bytes(csv_bytes([listing(1)]).decode().encode("utf-16-le"))
    with pytest.raises(SheetError, match=r"no_bom\.csv .*encoding='utf-16-le'"):
        read_sheet(path)
    assert read_sheet(path, encoding="utf-16-le").frame["MLSNumber"].tolist() == ["M1"]


def test_an_unknown_encoding_or_a_bad_byte_in_a_header_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "head.csv"
    path.write_bytes(
        csv_bytes([listing(1)]).replace(b"City", b"Cit\xe9", 1).replace(b"M1", "é".encode())
    )
    with pytest.raises(SheetError, match=r"header 15 on line 1 .*value 'Cit\\\\xe9'"):
        read_sheet(path)
    with pytest.raises(SheetError, match="not a text encoding"):
        read_sheet(path, encoding="no-such-codec")


# --------------------------------------------------------------------------- 2. numbers

NUMERIC_FIELDS = (
    "SalePrice", "BuildingArea", "LotArea", "Bedrooms", "Bathrooms", "YearBuilt",
    "DaysOnMarket", "Latitude", "Longitude", "ParkingSpots", "HOAMonth", "DepositFee",
)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("inf", "is not a finite number"),
        ("Infinity", "is not a finite number"),
        ("-inf", "is not a finite number"),
        ("1e309", "is not a finite number"),
        ("1e400", "is not a finite number"),
        ("NaN", "is not a number"),
        ("$1,2,3", "misplaced thousands separators"),
        ("1,5", "misplaced thousands separators"),
        ("1 2 3", "misplaced thousands separators"),
    ],
)
def test_non_finite_and_misgrouped_numbers_reject_their_row_in_every_numeric_field(
    tmp_path: Path, text: str, message: str
) -> None:
    headers = [*BASE, *[f for f in NUMERIC_FIELDS if f not in BASE]]
    rows = [listing(i, **{name: text}) for i, name in enumerate(NUMERIC_FIELDS, start=1)]
    sheet = read_sheet(fx.write_csv(tmp_path / "numbers.csv", headers, rows))
    assert sheet.frame.empty
    for row, name in enumerate(NUMERIC_FIELDS, start=2):
        found = errors_of(sheet, row)
        assert (name, text) in [(c, v) for c, v, _ in found], (name, found)
        assert any(message in m for c, _, m in found if c == name), (name, found)


def test_numbers_grouped_by_three_still_read(tmp_path: Path) -> None:
    rows = [
        listing(1, SalePrice="$1,250,000"),
        listing(2, SalePrice="1 250 000"),
        listing(3, SalePrice="USD 1,000.50"),
        listing(4, SalePrice="€ 975000"),
        listing(5, SalePrice="1.5e6"),
    ]
    sheet = read_sheet(fx.write_csv(tmp_path / "good.csv", HEADERS, rows))
    assert sheet.frame["SalePrice"].tolist() == [1_250_000, 1_250_000, 1000.5, 975_000, 1.5e6]


def test_an_xlsx_numeric_cell_holding_infinity_rejects_its_row(tmp_path: Path) -> None:
    # openpyxl reads <v>1E+309</v> as float("inf"); Excel never writes it, other tools may.
    header = "".join(
        f'<c r="{openpyxl.utils.get_column_letter(j)}1" t="inlineStr"><is><t>{h}</t></is></c>'
        for j, h in enumerate([*BASE, "SalePrice"], start=1)
    )

    def row(n: int, price: str) -> str:
        cells = []
        for j, value in enumerate([*listing(n).values(), None], start=1):
            ref = f"{openpyxl.utils.get_column_letter(j)}{n + 1}"
            if value is None:
                cells.append(f'<c r="{ref}"><v>{price}</v></c>')
            elif isinstance(value, str):
                cells.append(f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>')
            else:
                cells.append(f'<c r="{ref}"><v>{value}</v></c>')
        return f'<row r="{n + 1}">{"".join(cells)}</row>'

    path = fx.write_raw_xlsx(
        tmp_path / "inf.xlsx",
        f'<row r="1">{header}</row>{row(1, "1E+309")}{row(2, "-1E+400")}{row(3, "250000")}',
    )
    assert math.isinf(xlsx.read_xlsx_cells(path).grid[1][-1])
    sheet = read_sheet(path)
    assert sheet.invalid_rows == [2, 3]
    assert errors_of(sheet, 2) == [("SalePrice", "inf", errors_of(sheet, 2)[0][2])]
    assert "finite" in errors_of(sheet, 2)[0][2]
    assert sheet.frame["SalePrice"].tolist() == [250_000]


def test_a_value_computed_to_infinity_rejects_its_row() -> None:
    frame = pd.DataFrame(
        [listing(1, SalePrice=1e300, BuildingArea=1e-10), listing(2, SalePrice=9e5)]
    )
    sheet = read_sheet(frame)
    assert sheet.invalid_rows == [2]
    assert errors_of(sheet, 2)[0][0] == "UnitAreaPrice"
    assert "infinite" in errors_of(sheet, 2)[0][2]
    numbers = sheet.frame.select_dtypes("number").to_numpy(dtype=float, na_value=0.0)
    assert not (abs(numbers) == math.inf).any()


def test_infinite_cells_of_a_frame_and_defaults_are_refused() -> None:
    sheet = read_sheet(pd.DataFrame([listing(1, SalePrice=math.inf), listing(2, SalePrice=1.0)]))
    assert sheet.invalid_rows == [2]
    with pytest.raises(SheetError, match=r"default SalePrice is not a finite number"):
        read_sheet(pd.DataFrame([listing(1)]), defaults={"SalePrice": "inf"})
    with pytest.raises(SheetError, match=r"override LotArea is not a finite number"):
        read_sheet(pd.DataFrame([listing(1)]), overrides={"LotArea": float("-inf")})


def test_a_whole_number_too_large_to_hold_rejects_its_row() -> None:
    sheet = read_sheet(pd.DataFrame([listing(1, DaysOnMarket="1e20"), listing(2)]))
    assert sheet.invalid_rows == [2]
    assert errors_of(sheet, 2) == [
        ("DaysOnMarket", "1e20", "is too large for a whole number (over 9,007,199,254,740,991)")
    ]


# --------------------------------------------------------------------------- 3. formulas, merges


def _workbook(rows: list[dict[str, Any]]) -> tuple[openpyxl.Workbook, Any]:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(HEADERS)
    for row in rows:
        sheet.append([row.get(h) for h in HEADERS])
    return workbook, sheet


def test_a_formula_with_no_saved_value_rejects_its_row_naming_the_cell(tmp_path: Path) -> None:
    workbook, sheet = _workbook([listing(i, SalePrice=500_000 + i) for i in range(1, 7)])
    price = HEADERS.index("SalePrice") + 1
    letter = openpyxl.utils.get_column_letter(price)
    sheet.cell(row=7, column=price, value="=2*250000")  # openpyxl saves no result
    path = tmp_path / "formula.xlsx"
    workbook.save(path)

    read = read_sheet(path, defaults={"SalePrice": 1})
    assert read.invalid_rows == [7]
    ((column, _, message),) = errors_of(read, 7)
    assert column == "SalePrice"
    assert message.startswith(f"{letter}7: a formula with no saved value")
    assert "save it" in message
    # The default never stands in for the unknown value.
    assert 7 not in read.frame.index
    assert read.frame["SalePrice"].tolist() == [500_001, 500_002, 500_003, 500_004, 500_005]


def test_formulas_with_saved_values_and_formula_errors(tmp_path: Path) -> None:
    headers = ["MLSNumber", "SalePrice", "City"]
    cells = "".join(
        f'<c r="{c}1" t="inlineStr"><is><t>{h}</t></is></c>'
        for c, h in zip("ABC", headers, strict=True)
    )
    path = fx.write_raw_xlsx(
        tmp_path / "saved.xlsx",
        f'<row r="1">{cells}</row>'
        '<row r="2"><c r="A2" t="inlineStr"><is><t>M1</t></is></c>'
        '<c r="B2"><f>2*5</f><v>10</v></c><c r="C2" t="str"><f>""</f><v></v></c></row>'
        '<row r="3"><c r="A3" t="inlineStr"><is><t>M2</t></is></c>'
        '<c r="B3" t="e"><f>1/0</f><v>#DIV/0!</v></c><c r="C3" t="e"><v>#REF!</v></c></row>',
    )
    sheet = read_sheet(path, defaults={k: v for k, v in BASE.items() if k != "MLSNumber"})
    assert sheet.frame["SalePrice"].tolist() == [10]
    assert sheet.invalid_rows == [3]
    messages = {c: m for c, _, m in errors_of(sheet, 3)}
    assert messages["City"].startswith("C3: the formula gives the error #REF!")
    assert messages["SalePrice"].startswith("B3: the formula gives the error #DIV/0!")


def test_cells_hidden_by_a_merge_reject_their_rows_naming_the_range(tmp_path: Path) -> None:
    workbook, sheet = _workbook([listing(i, City="Austin") for i in range(1, 11)])
    city = openpyxl.utils.get_column_letter(HEADERS.index("City") + 1)
    for r in range(5, 11):
        sheet[f"{city}{r}"] = None
    sheet.merge_cells(f"{city}4:{city}9")  # rows 5-9 show Austin on screen, hold nothing
    path = tmp_path / "merged.xlsx"
    workbook.save(path)

    read = read_sheet(path)
    assert read.invalid_rows == [5, 6, 7, 8, 9]
    assert list(read.frame.index) == [2, 3, 4, 10, 11]
    for row in range(5, 10):
        ((column, _, message),) = errors_of(read, row)
        assert column == "City"
        assert message.startswith(
            f"{city}4:{city}9 merged: only {city}4 holds the value, so {city}{row} reads as blank"
        )
    assert read.frame.loc[4, "City"] == "Austin"


def test_a_disclaimer_merged_across_its_row_is_still_skipped(tmp_path: Path) -> None:
    workbook, sheet = _workbook([listing(1)])
    sheet.insert_rows(2)
    sheet["A2"] = fx.DISCLAIMER
    sheet.merge_cells(f"A2:{openpyxl.utils.get_column_letter(len(HEADERS))}2")
    path = tmp_path / "disclaimer.xlsx"
    workbook.save(path)
    read = read_sheet(path)
    assert read.invalid_rows == []
    assert list(read.frame.index) == [3]


# --------------------------------------------------------------------------- 4. broken files


def _real_xlsx(tmp_path: Path) -> Path:
    return fx.write_xlsx(tmp_path / "real.xlsx", HEADERS, [listing(i) for i in range(1, 30)])


def _ods(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        archive.writestr("content.xml", "<office:document-content/>")
    return path


@pytest.mark.parametrize(
    ("name", "make", "expected"),
    [
        ("empty.csv", lambda d: b"", r"empty\.csv is empty \(0 bytes\)"),
        ("empty.xlsx", lambda d: b"", r"empty\.xlsx is empty \(0 bytes\)"),
        ("blank.csv", lambda d: b"\r\n \r\n", r"blank\.csv holds no text"),
        (
            "truncated.xlsx",
            lambda d: _real_xlsx(d).read_bytes()[:3000],
            r"truncated\.xlsx cannot be read as an xlsx workbook .*truncated or damaged",
        ),
        (
            "old.xlsx",
            lambda d: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(2000),
            r"old\.xlsx cannot be read as an xls workbook .*truncated or damaged.*save it as",
        ),
        (
            "calc.xlsx",
            lambda d: _ods(d / "made.zip").read_bytes(),
            r"calc\.xlsx cannot be read as an ods workbook .*truncated or damaged.*save it as",
        ),
        (
            "other.xlsx",
            lambda d: _zip_of({"word/document.xml": "<w/>"}, d / "z.zip"),
            r"other\.xlsx cannot be read as an xlsx workbook \(KeyError",
        ),
        (
            "nan.xlsx",
            lambda d: fx.write_raw_xlsx(
                d / "n.xlsx",
                '<row r="1"><c r="A1" t="inlineStr"><is><t>MLSNumber</t></is></c></row>'
                '<row r="2"><c r="A2"><v>NaN</v></c></row>',
            ).read_bytes(),
            r"nan\.xlsx cannot be read as an xlsx workbook \(ValueError",
        ),
    ],
)
def test_broken_files_are_a_clear_sheet_error(
    tmp_path: Path, name: str, make: Any, expected: str
) -> None:
    made = tmp_path / "made"
    made.mkdir()
    path = tmp_path / name
    path.write_bytes(make(made))
    with pytest.raises(SheetError, match=expected):
        read_sheet(path)


def _zip_of(parts: dict[str, str], path: Path) -> bytes:
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in parts.items():
            archive.writestr(member, text)
    return path.read_bytes()


def test_an_xlsx_saved_under_a_csv_name_is_read_as_a_workbook(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes(_real_xlsx(tmp_path).read_bytes())
    assert len(read_sheet(path).frame) == 29


def test_a_runaway_quoted_cell_over_the_field_limit_is_a_sheet_error(tmp_path: Path) -> None:
    limit = csv.field_size_limit()
    data = csv_bytes([listing(1), listing(2)])
    # An opening quote on row 3 that never closes swallows everything after it.
    data += b'M3,Active,"' + b"x" * (limit + 10) + b"\r\n"
    path = tmp_path / "runaway.csv"
    path.write_bytes(data)
    with pytest.raises(
        SheetError, match=r"runaway\.csv: a cell of the record starting on line 4 .*quote"
    ):
        read_sheet(path)


def _two_sheets(path: Path) -> Path:
    """A workbook with the worksheets "A" and "B", each holding one listing."""
    workbook = openpyxl.Workbook()
    first = workbook.active
    assert first is not None
    first.title = "A"
    second = workbook.create_sheet("B")
    for sheet in (first, second):
        sheet.append(HEADERS)
        sheet.append([listing(1).get(h) for h in HEADERS])
    workbook.save(path)
    return path


@pytest.mark.parametrize("engine", ["calamine", "openpyxl"])
def test_a_missing_worksheet_is_a_sheet_not_found_error_naming_the_ones_there(
    tmp_path: Path, engine: str
) -> None:
    path = _two_sheets(tmp_path / "two.xlsx")
    with pytest.raises(SheetNotFoundError) as by_name:
        read_sheet(path, sheet_name="C", engine=engine)
    assert (by_name.value.requested, by_name.value.sheets) == ("C", ["A", "B"])
    assert str(by_name.value) == "no sheet named 'C'; sheets: ['A', 'B'] (value 'C')"

    with pytest.raises(SheetNotFoundError) as by_number:
        read_sheet(path, sheet_name=2, engine=engine)  # 0-based: a third sheet
    assert (by_number.value.requested, by_number.value.sheets) == (2, ["A", "B"])
    assert str(by_number.value) == (
        "the workbook has 2 sheet(s), no sheet number 2: ['A', 'B'] (value 2)"
    )
    assert isinstance(by_number.value, SheetError)  # caught by every `except SheetError`
    assert len(read_sheet(path, sheet_name="B", engine=engine).frame) == 1


def test_a_sheet_not_found_error_is_public_and_survives_pickling() -> None:
    import pickle

    import estatebot

    assert estatebot.SheetNotFoundError is SheetNotFoundError
    error = pickle.loads(pickle.dumps(SheetNotFoundError("C", ["A", "B"])))
    assert (error.requested, error.sheets, error.value) == ("C", ["A", "B"], "C")
    assert str(error) == str(SheetNotFoundError("C", ["A", "B"]))


# --------------------------------------------------------------------------- 5. stray cell


def test_a_stray_cell_far_right_is_reported_and_costs_nothing(tmp_path: Path) -> None:
    workbook, sheet = _workbook([listing(i, City="Austin") for i in range(1, 201)])
    sheet["XFD51"] = "stray"
    path = tmp_path / "stray.xlsx"
    workbook.save(path)

    cells = xlsx.read_xlsx_cells(path)
    assert cells.grid.shape == (201, len(HEADERS))  # the header's width, not 16,384 columns
    tracemalloc.start()
    try:
        read = read_sheet(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # A 200 × 16,384 grid of cells would take 26 MB for its pointers alone.
    assert peak < 12_000_000, peak
    assert len(read.frame) == 200
    assert read.invalid_rows == []
    last = openpyxl.utils.get_column_letter(len(HEADERS))
    stray = read.warnings[read.warnings["message"].str.startswith("XFD51")]
    assert stray["message"].tolist() == [
        f"XFD51: a value right of the last header ({last}1, 'Description'): ignored"
    ]
    assert stray["row"].tolist() == [51]


def test_values_under_a_blank_header_are_counted_by_column(tmp_path: Path) -> None:
    workbook, sheet = _workbook([listing(i) for i in range(1, 4)])
    sheet.insert_cols(3)
    sheet["C2"], sheet["C4"] = "note", 7
    path = tmp_path / "gap.xlsx"
    workbook.save(path)
    read = read_sheet(path)
    assert len(read.frame) == 3
    assert read.warnings[["column", "message"]].values.tolist() == [
        ["column C", "has 2 value(s) under a blank header: ignored"]
    ]


# --------------------------------------------------------------------------- 6. delimiters


@pytest.mark.parametrize(("delimiter", "suffix"), [(";", ".csv"), ("\t", ".txt"), ("|", ".csv")])
def test_the_delimiter_is_detected(tmp_path: Path, delimiter: str, suffix: str) -> None:
    rows = [listing(1, SalePrice="1250000", City="Lyon"), listing(2, Description="calm, bright")]
    path = tmp_path / f"export{suffix}"
    path.write_bytes(codecs.BOM_UTF8 + csv_bytes(rows, delimiter))  # as European Excel saves
    read = read_sheet(path)
    assert read.invalid_rows == []
    assert read.frame["MLSNumber"].tolist() == ["M1", "M2"]
    assert read.frame["SalePrice"].tolist()[0] == 1_250_000
    assert read.frame["Description"].tolist()[1] == "calm, bright"


def test_semicolons_in_the_text_of_a_comma_file_do_not_make_it_a_semicolon_file(
    tmp_path: Path,
) -> None:
    rows = [listing(i, Description="View: sea; Dock: yes; Pool: no") for i in range(1, 4)]
    path = fx.write_csv(tmp_path / "comma.csv", HEADERS, rows)
    read = read_sheet(path)
    assert read.frame["Description"].tolist() == ["View: sea; Dock: yes; Pool: no"] * 3


def test_a_row_of_spaces_above_the_header_is_not_taken_for_it(tmp_path: Path) -> None:
    workbook, sheet = _workbook([listing(1), listing(2)])
    sheet.insert_rows(1)
    sheet["A1"] = "   "
    path = tmp_path / "spaces.xlsx"
    workbook.save(path)
    read = read_sheet(path)
    assert read.frame["MLSNumber"].tolist() == ["M1", "M2"]
    assert list(read.frame.index) == [3, 4]
