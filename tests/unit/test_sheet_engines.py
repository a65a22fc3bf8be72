"""The workbook readers: the fast reader (calamine) and openpyxl give the same listings and the
same issues from real xlsx files; real .xls and .ods exports read; the engine is a choice of
``read_sheet``; reading a file shows its progress.

Every file is written to disk by a real writer (openpyxl, pandas' odf writer, xlwt) or as raw
XML parts, and read back through ``read_sheet``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import xlwt  # type: ignore[import-untyped]

from estatebot.errors import SheetError
from estatebot.listings.sheet.read import Sheet, read_sheet
from estatebot.listings.sheet.readers import xlsx_openpyxl as xlsx

try:
    import fixtures_sheets as fx
except ImportError:  # tests/ is on sys.path only when pytest is configured with pythonpath
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import fixtures_sheets as fx

HEADERS = [*fx.SHEET_ROW, "City", "ZIP", "SalePrice"]


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            **fx.SHEET_ROW,
            "MLSNumber": f"M{i}",
            "Url": f"https://example.com/{i}",
            "City": "Austin",
            "ZIP": "78701",
            "SalePrice": 250_000 + i,
        }
        for i in range(1, n + 1)
    ]


def _same(fast: Sheet, slow: Sheet) -> None:
    pd.testing.assert_frame_equal(fast.frame, slow.frame)
    pd.testing.assert_frame_equal(fast.issues, slow.issues)
    pd.testing.assert_frame_equal(fast.mapping, slow.mapping)
    pd.testing.assert_frame_equal(fast.cleared, slow.cleared)


@pytest.mark.parametrize(
    "write",
    [
        fx.write_pitfalls_xlsx,
        lambda d: fx.write_mls_xlsx(d),
        lambda d: fx.write_reso_xlsx(d),
    ],
    ids=["pitfalls", "mls", "reso"],
)
def test_both_engines_read_the_same_listings_and_issues(tmp_path: Path, write: Any) -> None:
    path = write(tmp_path)
    options: dict[str, Any] = {"defaults": {"CurrencySymbol": "$", "ParkingSpots": 0}}
    fast = read_sheet(path, engine="calamine", **options)
    slow = read_sheet(path, engine="openpyxl", **options)
    assert len(fast.frame) > 0
    _same(fast, slow)


def test_both_engines_read_the_same_cells_of_hand_made_xml(tmp_path: Path) -> None:
    # Formula errors, unsaved formulas, merges, numbers in every notation, zero-padded formats.
    zip_style = fx.RAW_STYLES["zip"]
    path = fx.write_raw_xlsx(
        tmp_path / "raw.xlsx",
        '<row r="1"><c r="A1" t="inlineStr"><is><t>MLSNumber</t></is></c>'
        '<c r="B1" t="inlineStr"><is><t>ZIP</t></is></c>'
        '<c r="C1" t="inlineStr"><is><t>Bedrooms</t></is></c>'
        '<c r="E1" t="inlineStr"><is><t>SalePrice</t></is></c></row>'
        f'<row r="2"><c r="A2"><v>123456789012</v></c><c r="B2" s="{zip_style}"><v>501</v></c>'
        '<c r="C2"><v>3.0</v></c><c r="D2"><v>7</v></c><c r="E2"><v>1.5E+5</v></c></row>'
        '<row r="3"><c r="A3"><v>12345678901234567</v></c><c r="B3" t="e"><v>#REF!</v></c>'
        '<c r="C3" t="e"><v>#N/A</v></c><c r="E3"><f>A1*2</f></c></row>'
        '<row r="4"><c r="A4" t="inlineStr"><is><t>M4</t></is></c><c r="B4"><v>2108</v></c>'
        '<c r="C4"><v>2.5</v></c><c r="E4"><v>-1E+400</v></c><c r="H4"><v>9</v></c></row>',
    )
    fast = xlsx.read_xlsx_cells(path, engine="calamine")
    slow = xlsx.read_xlsx_cells(path, engine="openpyxl")
    assert fast.rows.tolist() == slow.rows.tolist() == [1, 2, 3, 4]
    assert fast.columns == slow.columns
    assert fast.grid.tolist() == slow.grid.tolist()
    assert [type(v) for v in fast.grid.ravel()] == [type(v) for v in slow.grid.ravel()]
    assert fast.grid[1].tolist() == [123456789012, "00501", 3.0, 150000.0]
    assert sorted(map(repr, fast.notes)) == sorted(map(repr, slow.notes))
    assert any("#REF!" in n.message for n in fast.notes)


def test_a_stray_value_far_right_is_read_by_openpyxl_with_the_same_result(tmp_path: Path) -> None:
    path = fx.write_xlsx(tmp_path / "stray.xlsx", HEADERS, _rows(5))
    workbook = __import__("openpyxl").load_workbook(path)
    workbook.active["XFD4"] = "stray"
    workbook.save(path)
    _same(read_sheet(path, engine="calamine"), read_sheet(path, engine="openpyxl"))
    assert read_sheet(path).warnings["message"].str.startswith("XFD4").sum() == 1


def test_a_real_ods_export_reads_like_its_xlsx(tmp_path: Path) -> None:
    rows = _rows(4)
    frame = pd.DataFrame(rows, columns=HEADERS)
    ods = tmp_path / "export.ods"
    frame.to_excel(ods, engine="odf", index=False)
    xlsx_path = fx.write_xlsx(tmp_path / "export.xlsx", HEADERS, rows)
    from_ods, from_xlsx = read_sheet(ods), read_sheet(xlsx_path)
    assert from_ods.invalid_rows == []
    assert from_ods.frame["MLSNumber"].tolist() == ["M1", "M2", "M3", "M4"]
    assert from_ods.frame["SalePrice"].tolist() == [250_001, 250_002, 250_003, 250_004]
    pd.testing.assert_frame_equal(from_ods.frame, from_xlsx.frame)


def _write_xls(path: Path, headers: list[str], rows: list[dict[str, Any]]) -> Path:
    book = xlwt.Workbook()
    sheet = book.add_sheet("Export")
    for j, header in enumerate(headers):
        sheet.write(0, j, header)
    for i, row in enumerate(rows, start=1):
        for j, header in enumerate(headers):
            if row.get(header) is not None:
                sheet.write(i, j, row[header])
    book.save(str(path))
    return path


def test_a_real_xls_export_reads_like_its_xlsx(tmp_path: Path) -> None:
    rows = _rows(3)
    xls = _write_xls(tmp_path / "export.xls", HEADERS, rows)
    assert xls.read_bytes()[:4] == b"\xd0\xcf\x11\xe0"  # a real Excel 97-2003 file
    xlsx_path = fx.write_xlsx(tmp_path / "export.xlsx", HEADERS, rows)
    from_xls = read_sheet(xls)
    assert from_xls.invalid_rows == []
    pd.testing.assert_frame_equal(from_xls.frame, read_sheet(xlsx_path).frame)
    # Known by its bytes, whatever its name says.
    renamed = tmp_path / "export-renamed.xlsx"
    renamed.write_bytes(xls.read_bytes())
    assert read_sheet(renamed).frame["MLSNumber"].tolist() == ["M1", "M2", "M3"]


def test_a_text_table_named_xls_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "mls.xls"
    path.write_text("<table><tr><td>MLS#</td></tr></table>", encoding="utf-8")
    with pytest.raises(SheetError, match=r"mls\.xls cannot be read as an xls workbook"):
        read_sheet(path)


def test_the_engine_is_a_choice_and_a_wrong_one_is_named(tmp_path: Path) -> None:
    rows = _rows(2)
    xls = _write_xls(tmp_path / "export.xls", HEADERS, rows)
    with pytest.raises(SheetError, match="only the calamine engine") as info:
        read_sheet(xls, engine="openpyxl")
    assert info.value.value == "openpyxl"
    path = fx.write_xlsx(tmp_path / "export.xlsx", HEADERS, rows)
    with pytest.raises(SheetError, match="engine must be one of calamine, openpyxl") as info:
        read_sheet(path, engine="xlrd")  # type: ignore[arg-type]
    assert info.value.value == "xlrd"


def test_reading_a_file_shows_its_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = fx.write_xlsx(tmp_path / "export.xlsx", HEADERS, _rows(3))
    read_sheet(path, progress=True)
    shown = capsys.readouterr().err
    assert "Reading export.xlsx" in shown
    # A step for the cells, one per column cleaned, then typing, deriving and checking.
    steps = 4 + len(HEADERS)
    assert f"{steps}/{steps}" in shown
    assert "cleaning the columns" in shown
    read_sheet(path, progress=False)
    assert "Reading" not in capsys.readouterr().err


_HEADER_ROW = (
    '<row r="1"><c r="A1" t="inlineStr"><is><t>MLSNumber</t></is></c>'
    '<c r="B1" t="inlineStr"><is><t>Bedrooms</t></is></c></row>'
)
_LEFT_TO_OPENPYXL = {
    "a cell without coordinates": '<row r="2"><c t="inlineStr"><is><t>M2</t></is></c>'
    '<c r="B2"><v>3</v></c></row>',
    "a rich-text inline string": '<row r="2"><c r="A2" t="inlineStr"><is><r><t>M</t></r>'
    '<r><t>2</t></r></is></c><c r="B2"><v>3</v></c></row>',
    "a stray value in column XFD": '<row r="2"><c r="A2" t="inlineStr"><is><t>M2</t></is></c>'
    '<c r="B2"><v>3</v></c><c r="XFD2"><v>1</v></c></row>',
}


@pytest.mark.parametrize("rows", _LEFT_TO_OPENPYXL.values(), ids=_LEFT_TO_OPENPYXL.keys())
def test_sheets_calamine_must_not_read_go_to_openpyxl_before_calamine_starts(
    tmp_path: Path, rows: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from estatebot.listings.sheet.readers import calamine as fastbook
    from estatebot.listings.sheet.readers import xml_scan as xlsxscan

    path = fx.write_raw_xlsx(tmp_path / "odd.xlsx", _HEADER_ROW + rows)
    assert xlsxscan.needs_openpyxl(str(path), "xl/worksheets/sheet1.xml")

    def never(*_: Any) -> None:
        raise AssertionError("calamine read a sheet left to openpyxl")

    # calamine's dense grid of a sheet reaching column XFD is what must never be built.
    monkeypatch.setattr(fastbook, "_values_beside_survey", never)
    fast = xlsx.read_xlsx_cells(path, engine="calamine")
    slow = xlsx.read_xlsx_cells(path, engine="openpyxl")
    assert fast.grid.tolist() == slow.grid.tolist()
    assert fast.grid[1].tolist()[:2] == ["M2", 3]


def test_an_ordinary_sheet_is_read_by_calamine_beside_the_survey(tmp_path: Path) -> None:
    from estatebot.listings.sheet.readers import xml_scan as xlsxscan

    rows = "".join(
        f'<row r="{n}"><c r="A{n}" t="inlineStr"><is><t>M{n}</t></is></c>'
        f'<c r="B{n}"><v>{n}</v></c><c r="AD{n}"><v>1</v></c></row>'
        for n in range(2, 40)
    )
    path = fx.write_raw_xlsx(tmp_path / "plain.xlsx", _HEADER_ROW + rows)
    assert not xlsxscan.needs_openpyxl(str(path), "xl/worksheets/sheet1.xml")
    fast = xlsx.read_xlsx_cells(path, engine="calamine")
    slow = xlsx.read_xlsx_cells(path, engine="openpyxl")
    assert fast.grid.tolist() == slow.grid.tolist()
    assert sorted(map(repr, fast.notes)) == sorted(map(repr, slow.notes))
