"""Hostile and broken xlsx files against the sheet readers: structure, not bytes, decides.

Each finding's repro is a test here, on files built part by part (:mod:`hostile_workbooks`)
or written by openpyxl and then rewritten:

* 7: a hidden first worksheet is passed over for the first visible one; a hidden one is read
  only when named, with a warning; the "no key column here, try the next sheet" rule looks at
  visible sheets only;
* 8: rows written out of order are read by their numbers, by both engines alike;
* 10: the guard against a cell far right (column XFD) holds whatever the XML's spelling
  (quotes, blanks, character references, prefixes, case), and every guard is decided on the
  XML's structure;
* 12: a read over its memory budget (shared strings repeated, many rows, calamine's grid) stops
  before a reader allocates, with a :class:`SheetError` naming the cause and the budget; padded
  XML is refused quickly;
* 14: a shared-string index past the table and an exhausted memory are a :class:`SheetError`.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
import tracemalloc
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openpyxl.utils.cell import coordinate_to_tuple, get_column_letter

from estatebot.errors import SheetError
from estatebot.listings.sheet import read as read_module
from estatebot.listings.sheet.read import Sheet, read_sheet
from estatebot.listings.sheet.readers import calamine as fastbook
from estatebot.listings.sheet.readers import xml_scan
from estatebot.listings.sheet.readers.budget import TEXT_COST, Budget, budget_of
from estatebot.listings.sheet.readers.xlsx_guard import prepare
from estatebot.listings.sheet.readers.xml_shape import PAD_FLOOR, shape_of

try:
    import fixtures_sheets as fx
    import hostile_workbooks as hw
except ImportError:  # tests/ is on sys.path only when pytest is configured with pythonpath
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import fixtures_sheets as fx
    import hostile_workbooks as hw

ENGINES = ("calamine", "openpyxl")
SHEET = "xl/worksheets/sheet1.xml"
MB = 10**6


def read(path: Path, engine: str = "calamine", **options: Any) -> Sheet:
    return read_sheet(path, engine=engine, progress=False, **options)  # type: ignore[arg-type]


def keys(sheet: Sheet) -> list[str]:
    return [str(k) for k in sheet.frame["MLSNumber"].tolist()]


def messages(sheet: Sheet, containing: str) -> list[str]:
    found = sheet.issues[sheet.issues["message"].str.contains(containing, regex=False)]
    return [str(m) for m in found["message"]]


def listings(*numbers: int) -> str:
    return hw.header_row() + "".join(hw.listing_row(n) for n in numbers)


@pytest.fixture
def no_calamine(monkeypatch: pytest.MonkeyPatch) -> None:
    """calamine's read of an xlsx sheet fails the test: the sheet must go to openpyxl."""

    def never(*_: Any) -> None:
        raise AssertionError("calamine read a sheet left to openpyxl")

    monkeypatch.setattr(fastbook, "_values_beside_survey", never)


def peak_of(action: Any) -> tuple[int, Any]:
    """The peak of Python's allocations while ``action()`` runs, and what it raised."""
    tracemalloc.start()
    try:
        try:
            action()
            raised: Any = None
        except SheetError as error:
            raised = error
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, raised


# --------------------------------------------------------------------------- 7. hidden sheets


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("state", ["hidden", "veryHidden"])
def test_a_hidden_first_sheet_is_passed_over_for_the_first_visible_one(
    tmp_path: Path, engine: str, state: str
) -> None:
    path = hw.write_book(
        tmp_path / "hidden.xlsx",
        [hw.SheetXml("Old", listings(2), state), hw.SheetXml("Export", listings(5))],
    )
    sheet = read(path, engine)
    assert keys(sheet) == ["M5"]
    assert messages(sheet, "hidden") == []


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("chosen", ["Old", 0])
def test_a_hidden_sheet_is_read_when_named_with_a_warning(
    tmp_path: Path, engine: str, chosen: str | int
) -> None:
    path = hw.write_book(
        tmp_path / "hidden.xlsx",
        [hw.SheetXml("Old", listings(2), "hidden"), hw.SheetXml("Export", listings(5))],
    )
    sheet = read(path, engine, sheet_name=chosen)
    assert keys(sheet) == ["M2"]
    warned = sheet.warnings[sheet.warnings["message"].str.contains("is hidden")]
    assert warned["message"].tolist() == [
        "worksheet 'Old' is hidden in the workbook: it is read because sheet_name names it "
        "(check that it holds the listings meant, not a hidden copy or old data)"
    ]
    assert (
        read(path, engine, sheet_name="Export").warnings["message"].str.contains("hidden").sum()
        == 0
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_the_next_sheet_with_the_key_is_a_visible_one(tmp_path: Path, engine: str) -> None:
    notes = '<row r="1">' + hw.text_cell("A1", "Exported by the MLS") + "</row>"
    path = hw.write_book(
        tmp_path / "three.xlsx",
        [
            hw.SheetXml("Notes", notes),
            hw.SheetXml("Old", listings(2), "hidden"),
            hw.SheetXml("Listings", listings(7)),
        ],
    )
    sheet = read(path, engine)
    assert keys(sheet) == ["M7"]
    assert messages(sheet, "MLSNumber column") == [
        "the first worksheet has no MLSNumber column: read worksheet 3 instead (pass "
        "sheet_name= to choose one)"
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_after_a_hidden_first_sheet_the_rule_starts_at_the_first_visible_one(
    tmp_path: Path, engine: str
) -> None:
    notes = '<row r="1">' + hw.text_cell("A1", "Exported by the MLS") + "</row>"
    path = hw.write_book(
        tmp_path / "three.xlsx",
        [
            hw.SheetXml("Old", listings(2), "hidden"),
            hw.SheetXml("Notes", notes),
            hw.SheetXml("Listings", listings(7)),
        ],
    )
    sheet = read(path, engine)
    assert keys(sheet) == ["M7"]
    assert messages(sheet, "MLSNumber column") == [
        "the first visible worksheet has no MLSNumber column: read worksheet 3 instead (pass "
        "sheet_name= to choose one)"
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_workbook_of_hidden_sheets_is_read_only_by_name(tmp_path: Path, engine: str) -> None:
    path = hw.write_book(tmp_path / "all.xlsx", [hw.SheetXml("Old", listings(2), "hidden")])
    with pytest.raises(SheetError, match="every worksheet of the workbook is hidden"):
        read(path, engine)
    assert keys(read(path, engine, sheet_name="Old")) == ["M2"]


def test_a_hidden_sheet_of_an_ods_workbook_is_passed_over(tmp_path: Path) -> None:
    frame = pd.DataFrame([fx.SHEET_ROW])
    path = tmp_path / "book.ods"
    with pd.ExcelWriter(path, engine="odf") as writer:
        frame.assign(MLSNumber="OLD").to_excel(writer, sheet_name="Old", index=False)
        frame.assign(MLSNumber="NEW").to_excel(writer, sheet_name="Export", index=False)
    _hide_ods_sheet(path, "Old")
    assert keys(read(path)) == ["NEW"]
    named = read(path, sheet_name="Old")
    assert keys(named) == ["OLD"]
    assert messages(named, "is hidden") != []


def _hide_ods_sheet(path: Path, name: str) -> None:
    # An ods sheet is hidden by its table style's display property.
    with zipfile.ZipFile(path) as book:
        parts = {n: book.read(n) for n in book.namelist()}
    content = parts["content.xml"].decode()
    style = (
        '<style:style style:name="hiddenTable" style:family="table">'
        '<style:table-properties table:display="false"/></style:style>'
    )
    content = content.replace("<office:automatic-styles>", "<office:automatic-styles>" + style)
    if style not in content:
        content = content.replace(
            "<office:body>",
            f"<office:automatic-styles>{style}</office:automatic-styles><office:body>",
        )
    content = content.replace(
        f'<table:table table:name="{name}"',
        f'<table:table table:name="{name}" table:style-name="hiddenTable"',
    )
    parts["content.xml"] = content.encode()
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", parts.pop("mimetype"), compress_type=zipfile.ZIP_STORED)
        for member, data in parts.items():
            book.writestr(member, data, compress_type=zipfile.ZIP_DEFLATED)


# --------------------------------------------------------------------------- 8. row order


@pytest.mark.parametrize("engine", ENGINES)
def test_rows_written_out_of_order_are_read_by_their_numbers(tmp_path: Path, engine: str) -> None:
    rows = hw.listing_row(3) + hw.header_row() + hw.listing_row(2)
    path = hw.write_book(tmp_path / "order.xlsx", [hw.SheetXml("Export", rows)])
    sheet = read(path, engine)
    assert sheet.frame.index.tolist() == [2, 3]
    assert keys(sheet) == ["M2", "M3"]
    assert sheet.frame["SalePrice"].tolist() == [100_002, 100_003]
    in_order = hw.write_book(tmp_path / "in_order.xlsx", [hw.SheetXml("Export", listings(2, 3))])
    pd.testing.assert_frame_equal(sheet.frame, read(in_order, engine).frame)
    pd.testing.assert_frame_equal(sheet.issues, read(in_order, engine).issues)


def test_a_row_written_twice_and_a_cell_placed_by_its_reference_read_alike(tmp_path: Path) -> None:
    """A second element of row 2 fills in its cells, and a cell whose reference names row 4
    inside the element of row 9 is in row 4: as calamine reads them, openpyxl reads them."""
    second = (
        '<row r="2">'
        + hw.text_cell("B2", "Active")
        + hw.text_cell("C2", "Austin")
        + '<c r="D2"><v>100002</v></c></row>'
    )
    misplaced = hw.listing_row(4).replace('<row r="4">', '<row r="9">')
    rows = hw.header_row() + '<row r="2">' + hw.text_cell("A2", "M2") + "</row>"
    rows += hw.listing_row(3) + second + misplaced
    path = hw.write_book(tmp_path / "twice.xlsx", [hw.SheetXml("Export", rows)])
    fast, slow = read(path, "calamine"), read(path, "openpyxl")
    assert keys(fast) == ["M2", "M3", "M4"]
    assert fast.frame.index.tolist() == [2, 3, 4]
    assert fast.frame["SalePrice"].tolist() == [100_002, 100_003, 100_004]
    pd.testing.assert_frame_equal(fast.frame, slow.frame)


_CITIES = ["Austin", "Lyon", "Zürich", "São Paulo", "Oslo"]


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["Active", "Pending", "Sold"]),
            st.sampled_from(_CITIES),
            st.integers(1, 10**7),
            st.integers(0, 9),
        ),
        min_size=1,
        max_size=8,
    ),
    data=st.data(),
)
def test_rows_shuffled_in_the_xml_read_as_the_file_in_order(
    rows: list[tuple[str, str, int, int]], data: st.DataObject
) -> None:
    """Any small sheet openpyxl writes, its rows (the header's too) written in any order:
    both engines read it as the file in order."""
    headers = [*fx.SHEET_ROW, "City", "SalePrice"]
    written = [
        {**fx.SHEET_ROW, "MLSNumber": f"M{i}", "Status": status, "City": city,
         "SalePrice": price, "Bedrooms": beds}
        for i, (status, city, price, beds) in enumerate(rows, start=1)
    ]  # fmt: skip
    order = data.draw(st.permutations(range(len(rows) + 1)))
    with tempfile.TemporaryDirectory() as folder:
        original = fx.write_xlsx(Path(folder) / "original.xlsx", headers, written)
        shuffled = hw.shuffle_rows(original, Path(folder) / "shuffled.xlsx", order)
        expected = read(original, "calamine")
        assert len(expected.frame) == len(rows)
        for engine in ENGINES:
            got = read(shuffled, engine)
            pd.testing.assert_frame_equal(got.frame, expected.frame)
            pd.testing.assert_frame_equal(got.issues, expected.issues)


# --------------------------------------------------------------------------- 10. XFD spellings

_MAIN = hw.MAIN
#: A stray value in column XFD of row {n}, spelled as hostile writers may.
STRAY_SPELLINGS = {
    "single quotes": "<c r='XFD{n}'><v>1</v></c>",
    "blanks around =": '<c r = "XFD{n}"><v>1</v></c>',
    "a tab before =": '<c r\t="XFD{n}"><v>1</v></c>',
    "a character reference": '<c r="&#88;FD{n}"><v>1</v></c>',
    "another prefix": f'<y:c xmlns:y="{_MAIN}" r="XFD{{n}}"><y:v>1</y:v></y:c>',
    "lower case": '<c r="xfd{n}"><v>1</v></c>',
    "a new line before r": '<c\nr="XFD{n}"><v>1</v></c>',
}


def _stray_rows(spelling: str, count: int) -> str:
    rows = [hw.header_row()]
    for n in range(2, count + 2):
        row = hw.listing_row(n)
        rows.append(row.replace("</row>", spelling.format(n=n) + "</row>"))
    return "".join(rows)


@pytest.mark.parametrize("spelling", STRAY_SPELLINGS.values(), ids=STRAY_SPELLINGS.keys())
def test_a_stray_value_far_right_goes_to_openpyxl_however_it_is_spelled(
    tmp_path: Path, spelling: str, no_calamine: None
) -> None:
    path = hw.write_book(
        tmp_path / "stray.xlsx", [hw.SheetXml("Export", _stray_rows(spelling, 40))]
    )
    assert xml_scan.needs_openpyxl(str(path), SHEET)
    fast = read(path, "calamine")
    assert keys(fast) == [f"M{n}" for n in range(2, 42)]
    stray = messages(fast, "a value right of the last header")
    assert stray[0].startswith("XFD2: a value right of the last header (D1, 'SalePrice')")
    pd.testing.assert_frame_equal(fast.frame, read(path, "openpyxl").frame)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("ref", ["A5000000000", "A1048577", "XFE2", "ZZZZ2"])
def test_a_cell_beyond_the_last_row_or_column_is_refused_naming_it(
    tmp_path: Path, engine: str, ref: str
) -> None:
    rows = listings(2).replace("</row>", f'<c r="{ref}"><v>1</v></c></row>', 2)
    path = hw.write_book(tmp_path / "far.xlsx", [hw.SheetXml("Export", rows)])
    with pytest.raises(SheetError) as refused:
        read(path, engine)
    assert str(refused.value).startswith(
        f"far.xlsx, worksheet 'Export': cell {ref} lies beyond the last row (1,048,576) or "
        "column (XFD, the 16,384th) a worksheet has"
    )


#: Sheets whose XML is not written plainly, each holding listings M2 and M3.
NOT_PLAIN = {
    "a comment": listings(2, 3).replace('<row r="3">', '<!-- x --><row r="3">'),
    "a CDATA section": listings(2, 3).replace("<t>M3</t>", "<t><![CDATA[M3]]></t>"),
    "a processing instruction": listings(2, 3).replace('<row r="3">', '<?pi x?><row r="3">'),
    "a type in single quotes": listings(2, 3).replace('t="inlineStr"', "t='inlineStr'"),
    "a style with blanks": listings(2, 3).replace('<c r="D3">', '<c r="D3" s = "0">'),
    "a value with attributes": listings(2, 3).replace(
        "<v>100003", '<v xml:space="preserve">100003'
    ),
    "a row under another prefix": listings(2)
    + hw.listing_row(3)
    .replace('<row r="3">', f'<y:row xmlns:y="{_MAIN}" r="3">')
    .replace("</row>", "</y:row>"),
}


@pytest.mark.parametrize("rows", NOT_PLAIN.values(), ids=NOT_PLAIN.keys())
def test_xml_not_written_plainly_is_read_by_openpyxl(
    tmp_path: Path, rows: str, no_calamine: None
) -> None:
    path = hw.write_book(tmp_path / "odd.xlsx", [hw.SheetXml("Export", rows)])
    with zipfile.ZipFile(path) as book:
        assert not shape_of(book, SHEET, "odd").plain
    sheet = read(path, "calamine")
    assert keys(sheet) == ["M2", "M3"]
    assert sheet.frame["SalePrice"].tolist() == [100_002, 100_003]


def test_a_sheet_in_utf16_is_not_plain_and_reads_by_openpyxl(
    tmp_path: Path, no_calamine: None
) -> None:
    text = f'<?xml version="1.0" encoding="UTF-16"?><worksheet xmlns="{_MAIN}"><sheetData>'
    text += listings(2, 3) + "</sheetData></worksheet>"
    part = text.encode("utf-16")  # with its byte-order mark
    path = hw.write_book(tmp_path / "utf16.xlsx", [hw.SheetXml("Export", part=part)])
    with zipfile.ZipFile(path) as book:
        assert shape_of(book, SHEET, "utf16").odd == "it is not UTF-8 text"
    assert keys(read(path, "calamine")) == ["M2", "M3"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("where", [SHEET, "xl/sharedStrings.xml", "xl/styles.xml"])
def test_a_dtd_is_refused_wherever_it_is(tmp_path: Path, engine: str, where: str) -> None:
    dtd = b'<!DOCTYPE x [<!ENTITY big "XFD">]>'
    book = hw.write_book(tmp_path / "plain.xlsx", [hw.SheetXml("Export", listings(2))], ["a"])
    with zipfile.ZipFile(book) as source:
        part = source.read(where)
    start = part.index(b"?>") + 2
    path = hw.write_book(
        tmp_path / "dtd.xlsx",
        [hw.SheetXml("Export", listings(2))],
        ["a"],
        parts={where: part[:start] + dtd + part[start:]},
    )
    with pytest.raises(SheetError, match=r"holds a DTD \(<!DOCTYPE \.\.\.>\)"):
        read(path, engine)


# --------------------------------------------------------------------------- the lexer


#: Spellings of a cell's reference: plain ones, and ones that are not.
PLAIN_SPELLINGS = ['<c r="{ref}">', '<c s="0"  r="{ref}">', '<c r="{lower}">']
ODD_SPELLINGS = [
    "<c r='{ref}'>",
    '<c r ="{ref}">',
    '<c r= "{ref}">',
    '<c r="&#{code};{rest}">',
    '<c\tr="{ref}">',
]


@settings(max_examples=60, deadline=None)
@given(
    cells=st.lists(
        st.tuples(st.integers(1, 3_000), st.integers(1, 900)), min_size=1, max_size=25, unique=True
    ),
    spellings=st.lists(st.sampled_from(PLAIN_SPELLINGS + ODD_SPELLINGS), min_size=25, max_size=25),
)
def test_the_lexer_sees_the_cells_an_xml_parser_sees_or_says_the_xml_is_not_plain(
    cells: list[tuple[int, int]], spellings: list[str]
) -> None:
    """The general rule behind every guard: what the byte lexer reports of a sheet is what a
    parser reads from it, or the sheet is not plain (and openpyxl's parser reads it)."""
    by_row: dict[int, list[str]] = {}
    odd = False
    for (row, column), spelling in zip(sorted(cells), spellings, strict=False):
        ref = f"{get_column_letter(column)}{row}"
        tag = spelling.format(ref=ref, lower=ref.lower(), code=ord(ref[0]), rest=ref[1:])
        by_row.setdefault(row, []).append(f"{tag}<v>{row}</v></c>")
        odd = odd or spelling in ODD_SPELLINGS
    data = "".join(f'<row r="{r}">{"".join(c)}</row>' for r, c in sorted(by_row.items()))
    part = hw.sheet_part(data)
    with tempfile.TemporaryDirectory() as folder:
        path = hw.write_book(Path(folder) / "cells.xlsx", [hw.SheetXml("S", part=part)])
        with zipfile.ZipFile(path) as book:
            shape = shape_of(book, SHEET, "cells")
    assert shape.plain == (not odd), shape.odd
    parsed = [
        coordinate_to_tuple(c.get("r") or "")
        for c in ElementTree.fromstring(part).iter(f"{{{_MAIN}}}c")
    ]
    assert sorted(parsed) == sorted(cells)
    if shape.plain:
        assert shape.max_row == max(r for r, _ in parsed)
        assert shape.max_column == max(c for _, c in parsed)
        assert shape.columns == {c for _, c in parsed}
        assert (shape.cells, shape.rows) == (len(parsed), len(by_row))


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=300).map(lambda b: b.replace(b"\x00", b"<")), size=st.integers(1, 9))
def test_xml_is_cut_before_a_tag_and_nothing_is_lost(data: bytes, size: int) -> None:
    """The lexer's chunks: each after the first begins with "<", and together they are the
    stream (read here in pieces of a few bytes)."""
    import io

    from estatebot.listings.sheet.readers import xml_shape

    original = xml_shape._CHUNK
    xml_shape._CHUNK = size
    try:
        chunks = list(xml_shape.tag_chunks(io.BytesIO(data), "x"))
    finally:
        xml_shape._CHUNK = original
    assert b"".join(chunks) == data
    assert all(chunk.startswith(b"<") for chunk in chunks[1:])
    assert all(chunk for chunk in chunks)


_CELL_KINDS = st.sampled_from(["shared", "formula", "number", "inline", "bad index"])


@settings(max_examples=80, deadline=None)
@given(
    kinds=st.lists(st.lists(_CELL_KINDS, min_size=1, max_size=6), min_size=1, max_size=12),
    size=st.integers(3, 120),
)
def test_the_shape_of_a_sheet_does_not_depend_on_where_its_stream_is_cut(
    kinds: list[list[str]], size: int
) -> None:
    """Read in pieces of a few bytes, a sheet has the shape it has read at once: every tag,
    value and cell type is seen whole, on whichever side of a chunk's edge it falls."""
    from estatebot.listings.sheet.readers import xml_shape

    def cell(ref: str, kind: str, n: int) -> str:
        if kind == "shared":
            return f'<c r="{ref}" s="0" t="s"><v>{n % 3}</v></c>'
        if kind == "bad index":
            return f'<c r="{ref}" t="s"><v>{n + 3}</v></c>'
        if kind == "formula":
            return f'<c r="{ref}" t="str"><f>A1</f><v>text{n}</v></c>'
        if kind == "inline":
            return hw.text_cell(ref, f"inline {n}")
        return f'<c r="{ref}"><v>{n}.25</v></c>'

    rows = "".join(
        f'<row r="{r}">'
        + "".join(cell(f"{get_column_letter(j)}{r}", k, r * j) for j, k in enumerate(row, 1))
        + "</row>"
        for r, row in enumerate(kinds, start=1)
    )
    with tempfile.TemporaryDirectory() as folder:
        path = hw.write_book(Path(folder) / "cut.xlsx", [hw.SheetXml("S", rows)], ["a", "bb", "c"])
        with zipfile.ZipFile(path) as book:
            sizes = xml_shape.shared_string_sizes(book, "xl/sharedStrings.xml", "s")
            whole = shape_of(book, SHEET, "cut", sizes)
            original = xml_shape._CHUNK
            xml_shape._CHUNK = size
            try:
                cut = shape_of(book, SHEET, "cut", sizes)
                assert (
                    xml_shape.shared_string_sizes(book, "xl/sharedStrings.xml", "s") == sizes
                ).all()
            finally:
                xml_shape._CHUNK = original
    assert list(sizes) == [1, 2, 1]
    assert cut == whole
    shared = [k for row in kinds for k in row if k == "shared"]
    assert whole.shared_refs == len(shared)
    assert whole.plain == (not any("bad index" in row for row in kinds)), whole.odd


def test_a_real_export_over_many_chunks_stays_plain_and_is_read_by_calamine(
    tmp_path: Path,
) -> None:
    """Shared strings, decimals and zero-padded numbers over several chunks of the lexer: no
    chunk's edge makes the sheet look other than plain."""
    path = fx.write_big_xlsx(tmp_path / "export.xlsx", 8_000)
    with zipfile.ZipFile(path) as book:
        assert book.getinfo(SHEET).file_size > 4 * 2**20
    prepared = prepare(path, None, Budget())
    assert prepared.shape.plain, prepared.shape.odd
    assert prepared.calamine
    fast, slow = read(path, "calamine"), read(path, "openpyxl")
    assert len(fast.frame) == 8_000
    pd.testing.assert_frame_equal(fast.frame, slow.frame)
    pd.testing.assert_frame_equal(fast.issues, slow.issues)


def test_every_shared_string_is_counted_once_across_the_lexers_chunks(tmp_path: Path) -> None:
    """A cell's type and its value may fall on either side of a chunk's edge: each value is
    still counted once, with its cell's type."""
    strings = ["Active", "Pending", "Closed"]
    count = 40_000
    rows = hw.header_row() + "".join(
        f'<row r="{n}">{hw.text_cell(f"A{n}", f"M{n}")}<c r="B{n}" t="s"><v>{n % 3}</v></c>'
        f'<c r="C{n}" t="str"><f>X{n}</f><v>Austin</v></c><c r="D{n}"><v>{n}.5</v></c></row>'
        for n in range(2, count + 2)
    )
    path = hw.write_book(tmp_path / "many.xlsx", [hw.SheetXml("Export", rows)], strings)
    with zipfile.ZipFile(path) as book:
        assert book.getinfo(SHEET).file_size > 4 * 2**20
    shape = prepare(path, None, Budget()).shape
    assert shape.plain, shape.odd
    assert shape.shared_refs == count
    assert shape.shared_text == sum(len(strings[n % 3]) for n in range(2, count + 2))
    assert keys(read(path))[:2] == ["M2", "M3"]


# --------------------------------------------------------------------------- 12. the budget


def _repeats(count: int, length: int, *, quote: str = '"') -> Path:
    q = quote
    rows = hw.header_row(("MLSNumber", "Description")) + "".join(
        f'<row r="{r}">{hw.text_cell(f"A{r}", f"M{r}")}<c r={q}B{r}{q} t={q}s{q}><v>0</v></c></row>'
        for r in range(2, count + 2)
    )
    folder = Path(tempfile.mkdtemp())
    return hw.write_book(folder / "repeats.xlsx", [hw.SheetXml("Export", rows)], ["x" * length])


@pytest.mark.parametrize("engine", ENGINES)
def test_shared_strings_repeated_past_the_budget_are_refused_before_reading(engine: str) -> None:
    path = _repeats(2_000, 30_000)
    peak, refused = peak_of(lambda: read(path, engine, max_memory="200 MB"))
    assert isinstance(refused, SheetError)
    estimate = re.search(r"would take about ([0-9.]+) MB", str(refused))
    # The repeated text is most of it: each of 60 MB of characters copied several times.
    copies = 60 * TEXT_COST
    assert estimate is not None, refused
    assert copies <= float(estimate.group(1)) < 1.05 * copies, refused
    assert str(refused) == (
        "repeats.xlsx, worksheet 'Export': 2,000 cells repeat shared strings holding 60.0 MB of "
        "text in all (the longest string is 30,000 characters), and every cell gets its own "
        f"copy: reading it would take about {estimate.group(1)} MB, over the memory budget of "
        "200.0 MB (pass max_memory= to allow more, e.g. max_memory='8 GiB', or split the sheet "
        "into smaller files)"
    )
    assert peak < 20 * MB, peak


def test_openpyxl_stops_repeated_shared_strings_as_it_reads_xml_not_plain() -> None:
    """XML not plain has no estimate before reading: openpyxl's reader counts as it goes."""
    path = _repeats(2_000, 30_000, quote="'")
    peak, refused = peak_of(lambda: read(path, "openpyxl", max_memory="200 MB"))
    assert isinstance(refused, SheetError)
    message = str(refused)
    assert message.startswith("repeats.xlsx, worksheet 'Export': ")
    assert "cells repeat shared strings" in message
    assert "the longest string is 30,000 characters" in message
    assert "over the memory budget of 200.0 MB" in message
    assert peak < 60 * MB, peak


@pytest.mark.parametrize("engine", ENGINES)
def test_many_sparse_rows_past_the_budget_are_refused_before_reading(engine: str) -> None:
    headers = [*hw.HEADERS, *(f"Extra{j}" for j in range(16))]
    rows = hw.header_row(headers) + "".join(
        f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>' for r in range(2, 20_002)
    )
    path = hw.write_book(Path(tempfile.mkdtemp()) / "sparse.xlsx", [hw.SheetXml("Export", rows)])
    peak, refused = peak_of(lambda: read(path, engine, max_memory="30 MB"))
    assert isinstance(refused, SheetError)
    assert str(refused).startswith(
        "sparse.xlsx, worksheet 'Export': it holds 20,001 rows of 20 columns: reading it would "
        "take about "
    )
    assert "over the memory budget of 30.0 MB" in str(refused)
    assert peak < 30 * MB, peak


def test_a_sheet_over_budget_is_refused_without_reading_the_rest_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a read needs only grows as the sheet is read: past the budget, the lexer stops."""
    from estatebot.listings.sheet.readers import xml_shape

    rows = hw.header_row() + "".join(
        f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>' for r in range(2, 300_002)
    )
    path = hw.write_book(tmp_path / "long.xlsx", [hw.SheetXml("Export", rows)])
    fed: list[int] = []
    feed = xml_shape._SheetLexer.feed

    def counted(self: Any, chunk: bytes) -> None:
        fed.append(len(chunk))
        feed(self, chunk)

    monkeypatch.setattr(xml_shape._SheetLexer, "feed", counted)
    with pytest.raises(SheetError, match=r"over the memory budget of 5\.0 MB"):
        read(path, max_memory="5 MB")
    with zipfile.ZipFile(path) as book:
        size = book.getinfo(SHEET).file_size
    assert sum(fed) < size / 4, (sum(fed), size)


def test_a_lone_value_far_down_is_read_by_openpyxl_when_calamines_grid_would_not_fit(
    tmp_path: Path, no_calamine: None
) -> None:
    headers = [*hw.HEADERS, *(f"Extra{j}" for j in range(60))]
    far = hw.listing_row(1_048_576)
    path = hw.write_book(
        tmp_path / "far.xlsx", [hw.SheetXml("Export", hw.header_row(headers) + far)]
    )
    assert not prepare(path, None, Budget()).calamine
    sheet = read(path, "calamine")
    assert keys(sheet) == ["M1048576"]
    assert sheet.frame.index.tolist() == [1_048_576]


def test_calamine_reads_a_far_value_whose_grid_fits(tmp_path: Path) -> None:
    path = hw.write_book(tmp_path / "near.xlsx", [hw.SheetXml("Export", listings(2, 500))])
    assert prepare(path, None, Budget()).calamine
    assert keys(read(path)) == ["M2", "M500"]


def test_calamines_grid_is_checked_again_from_its_own_size(tmp_path: Path) -> None:
    import python_calamine

    path = hw.write_book(tmp_path / "far.xlsx", [hw.SheetXml("Export", listings(200_000))])
    book = python_calamine.CalamineWorkbook.from_path(str(path))
    try:
        sheet = book.get_sheet_by_index(0)
        with pytest.raises(SheetError) as refused:
            fastbook._check_grid(sheet, Budget(10 * MB), "far.xlsx")
    finally:
        book.close()
    assert str(refused.value).startswith(
        "far.xlsx: its cells reach row 200,000 and column 4, and the reader holds every cell "
        "from A1 to there: 800,000 cells, most of them empty: reading it would take about "
        "38.4 MB, over the memory budget of 10.0 MB"
    )


def _padded(kind: str) -> Iterator[bytes]:
    """A worksheet part padded past the floor: one tag stretched by blanks, blanks between
    tags, empty elements, or a comment."""
    size = PAD_FLOOR + 4 * 2**20
    yield hw.DECLARATION + f'<worksheet xmlns="{_MAIN}"><sheetData>'.encode()
    yield hw.header_row().encode()
    if kind == "a tag stretched by blanks":
        yield b'<row r="2"'
        yield from _blanks(size)
        yield b">" + hw.listing_row(2)[len('<row r="2">') :].encode()
    elif kind == "blanks between tags":
        yield hw.listing_row(2).encode()
        yield from _blanks(size)
    elif kind == "empty elements":
        yield hw.listing_row(2).encode()
        for _ in range(size // 2**20):
            yield b"<x/>" * (2**18)
    else:
        yield b"<!--"
        yield from _blanks(size)
        yield b"-->"
    yield b"</sheetData></worksheet>"


def _blanks(size: int) -> Iterator[bytes]:
    for _ in range(size // 2**20):
        yield b" " * 2**20


PADDINGS = ["a tag stretched by blanks", "blanks between tags", "empty elements", "a comment"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", PADDINGS)
def test_padded_xml_is_refused_quickly(tmp_path: Path, engine: str, kind: str) -> None:
    path = hw.write_book(tmp_path / "padded.xlsx", [hw.SheetXml("Export", part=_padded(kind))])
    started = time.perf_counter()
    peak, refused = peak_of(lambda: read(path, engine))
    assert isinstance(refused, SheetError)
    assert str(refused).startswith(
        "padded.xlsx, worksheet 'Export' is padded: " if kind != "empty elements" else "padded"
    ), refused
    assert "No spreadsheet program writes that" in str(refused)
    assert time.perf_counter() - started < 20
    assert peak < 120 * MB, peak


@pytest.mark.parametrize("part", ["xl/sharedStrings.xml", "xl/styles.xml"])
def test_a_padded_part_beside_the_sheet_is_refused_naming_it(tmp_path: Path, part: str) -> None:
    def padded() -> Iterator[bytes]:
        yield hw.DECLARATION + f'<sst xmlns="{_MAIN}" count="0" uniqueCount="0">'.encode()
        yield from _blanks(PAD_FLOOR + 2 * 2**20)
        yield b"</sst>"

    path = hw.write_book(
        tmp_path / "padded.xlsx", [hw.SheetXml("Export", listings(2))], parts={part: padded()}
    )
    with pytest.raises(SheetError) as refused:
        read(path)
    assert str(refused.value).startswith(f"padded.xlsx (its part {part}) is padded: ")


@pytest.mark.parametrize(
    ("given", "limit"),
    [
        (10**9, 10**9),
        ("8 GiB", 8 * 2**30),
        ("500 MB", 500 * MB),
        ("1.5GB", 1_500_000_000),
        ("64 MiB", 64 * 2**20),
        ("4096", 4096),
    ],
)
def test_max_memory_takes_bytes_or_a_size(given: int | str, limit: int) -> None:
    assert budget_of(given).limit == limit


@pytest.mark.parametrize("given", [0, -5, "lots", "", True, 1.5, "8 XB", "0 MB"])
def test_a_max_memory_that_is_no_size_is_a_sheet_error(tmp_path: Path, given: Any) -> None:
    path = hw.write_book(tmp_path / "ok.xlsx", [hw.SheetXml("Export", listings(2))])
    with pytest.raises(SheetError, match="max_memory must be a number of bytes"):
        read(path, max_memory=given)


def test_a_csv_over_the_budget_is_refused_before_its_cells_are_typed(tmp_path: Path) -> None:
    path = fx.write_csv(tmp_path / "big.csv", [*fx.SHEET_ROW], [fx.SHEET_ROW] * 3_000)
    with pytest.raises(SheetError, match=r"big\.csv: it holds 3,000 rows of 14 columns"):
        read(path, max_memory="5 MB")
    assert len(read(path, max_memory="1 GiB").issues) > 0  # read, duplicates reported


# --------------------------------------------------------------------------- 14. raw errors


@pytest.mark.parametrize("engine", ENGINES)
def test_a_shared_string_past_the_table_is_a_sheet_error_naming_the_cell(
    tmp_path: Path, engine: str
) -> None:
    rows = hw.header_row() + (
        '<row r="2">' + hw.text_cell("A2", "M2") + '<c r="B2" t="s"><v>7</v></c></row>'
    )
    path = hw.write_book(tmp_path / "strings.xlsx", [hw.SheetXml("Export", rows)], ["Active"])
    with pytest.raises(SheetError) as refused:
        read(path, engine)
    assert str(refused.value).startswith(
        "strings.xlsx, worksheet 'Export': cell B2 names shared string number 7, but the "
        "workbook holds 1 shared strings: the file is damaged"
    )


def test_a_negative_shared_string_index_is_no_string_of_the_table(tmp_path: Path) -> None:
    rows = hw.header_row() + (
        '<row r="2">' + hw.text_cell("A2", "M2") + '<c r="B2" t="s"><v>-1</v></c></row>'
    )
    path = hw.write_book(tmp_path / "strings.xlsx", [hw.SheetXml("Export", rows)], ["Active"])
    for engine in ENGINES:
        with pytest.raises(SheetError, match="cell B2 names shared string number -1"):
            read(path, engine)


def test_a_style_the_workbook_lacks_reads_as_no_format(tmp_path: Path) -> None:
    rows = listings(2).replace('<c r="D2">', '<c r="D2" s="999">')
    path = hw.write_book(tmp_path / "style.xlsx", [hw.SheetXml("Export", rows)])
    for engine in ENGINES:
        assert read(path, engine).frame["SalePrice"].tolist() == [100_002]


@pytest.mark.parametrize(("target", "step"), [("read_table", "reading"), ("derive", "typing")])
def test_running_out_of_memory_is_a_sheet_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, step: str
) -> None:
    import pyarrow as pa

    def exhausted(*_: Any, **__: Any) -> Any:
        raise pa.lib.ArrowMemoryError("malloc of size 1073741824 failed")

    path = hw.write_book(tmp_path / "ok.xlsx", [hw.SheetXml("Export", listings(2))])
    monkeypatch.setattr(read_module, target, exhausted)
    with pytest.raises(SheetError) as refused:
        read(path)
    assert str(refused.value).startswith(
        f"ok.xlsx: the memory ran out while {step} the cells (ArrowMemoryError): the machine "
        "has less free memory than the read needs"
    )
    assert refused.value.__cause__ is None
    assert not isinstance(refused.value, MemoryError)
