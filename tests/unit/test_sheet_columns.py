"""The columnar read of an xlsx sheet (fastexcel's Arrow columns typed a column at a time) gives
the cells the cell-by-cell read gives, and the same listings and issues as openpyxl's engine; a
sheet it cannot read by columns (a column mixing kinds, dates, a header met twice) is read cell by
cell. The pieces it stands on: the raw cells as arrays (:class:`Cells`), the rules every cell
follows (:func:`prepare`), the lexer's kinds and fixes of the cells, the read ahead of a zip
member and the JSON of a cell.

Every workbook is written to disk by openpyxl, or as raw XML parts, and read back.
"""

from __future__ import annotations

import io
import json
import math
import sys
import tempfile
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openpyxl import Workbook

from estatebot.listings.sheet.fields.cell_types import value_text
from estatebot.listings.sheet.fields.cells import Cells
from estatebot.listings.sheet.fields.json_text import json_value
from estatebot.listings.sheet.fields.prepared import BLANK_TOKENS, clean_text, prepare
from estatebot.listings.sheet.read import read_sheet
from estatebot.listings.sheet.readers import calamine_columns, xml_shape
from estatebot.listings.sheet.readers.budget import Budget
from estatebot.listings.sheet.readers.calamine_columns import (
    ColumnGrid,
    read_xlsx_columns,
    reads_by_columns,
)
from estatebot.listings.sheet.readers.xlsx_guard import prepare as prepare_sheet
from estatebot.listings.sheet.readers.xlsx_openpyxl import read_xlsx_cells
from estatebot.listings.sheet.readers.xml_scan import survey
from estatebot.listings.sheet.readers.xml_shape import read_ahead

try:
    import fixtures_sheets as fx
except ImportError:  # tests/ is on sys.path only when pytest is configured with pythonpath
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import fixtures_sheets as fx

SHEET = "xl/worksheets/sheet1.xml"

# Text a spreadsheet holds: letters, digits, spaces of every kind, the blank and clear tokens.
_TEXT = st.one_of(
    st.text(
        alphabet=st.sampled_from([*"ab Z09-.,$#/", "\u00a0", "\u2007", "\u200b", "é", "\t"]),
        max_size=8,
    ).filter(lambda t: not t.startswith("=")),
    st.sampled_from(["", " ", "N/A", "#n/a", "-", "#CLEAR", " #clear ", "yes", "1,250,000"]),
)
_NUMBER = st.one_of(
    st.integers(-(10**6), 10**6),
    st.integers(2**53, 2**60),
    st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False),
    st.sampled_from([3.0, 0.5, -0.0, 1e20, 1.5e-7]),
)
_KINDS = ("text", "number", "bool", "zip", "mixed")


def _cell(kind: str) -> st.SearchStrategy[Any]:
    if kind == "text":
        return _TEXT
    if kind == "number":
        return _NUMBER
    if kind == "bool":
        return st.booleans()
    if kind == "zip":
        return st.integers(0, 99_999)
    return st.one_of(_TEXT, _NUMBER, st.booleans())


@st.composite
def sheets(draw: st.DrawFn) -> dict[str, Any]:
    """A listing sheet: a header row (maybe below empty rows), an MLSNumber column, and columns
    of one kind each (text, numbers, booleans, padded ZIPs) or mixed; cells maybe empty."""
    n = draw(st.integers(1, 12))
    kinds = draw(st.lists(st.sampled_from(_KINDS), min_size=1, max_size=5))
    columns = {"MLSNumber": [f"M{i}" for i in range(n)]}
    for j, kind in enumerate(kinds):
        cells = draw(st.lists(st.one_of(st.none(), _cell(kind)), min_size=n, max_size=n))
        columns[f"{kind.title()} {j}"] = cells
    return {
        "columns": columns,
        "kinds": ["text", *kinds],
        "top": draw(st.integers(1, 3)),
        "twice": draw(st.booleans()) and len(kinds) > 1,
    }


def _write(sheet: dict[str, Any], path: Path) -> Path:
    book = Workbook()
    ws = book.active
    assert ws is not None
    headers = list(sheet["columns"])
    if sheet["twice"]:
        headers[-1] = headers[-2]  # a header met twice
    top = sheet["top"]
    for j, header in enumerate(headers, start=1):
        ws.cell(top, j, header)
    for j, (kind, values) in enumerate(
        zip(sheet["kinds"], sheet["columns"].values(), strict=True), start=1
    ):
        for i, value in enumerate(values, start=top + 1):
            if value is None:
                continue
            cell = ws.cell(i, j, value)
            if kind == "zip" and isinstance(value, int):
                cell.number_format = "00000"
    book.save(path)
    return path


def _homogeneous(sheet: dict[str, Any]) -> bool:
    """Whether each column holds one kind of value (empty text is no value of its own)."""
    for kind, values in zip(sheet["kinds"], sheet["columns"].values(), strict=True):
        types = {bool if isinstance(v, bool) else str if isinstance(v, str) else float
                 for v in values if v is not None and v != ""}  # fmt: skip
        if kind == "mixed" and len(types) > 1:
            return False
    return True


def _same_cells(by_columns: ColumnGrid, by_cells: Any) -> None:
    assert by_columns.rows.tolist() == by_cells.rows[1:].tolist()
    assert by_columns.named == by_cells.columns
    assert by_columns.headers == [value_text(v) for v in by_cells.grid[0]]
    for k, column in enumerate(by_columns.columns):
        assert column.values(range(len(column))) == by_cells.grid[1:, k].tolist(), k
    assert sorted(map(repr, by_columns.notes)) == sorted(map(repr, by_cells.notes))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sheet=sheets())
def test_the_columnar_read_gives_the_cells_and_listings_of_the_cell_by_cell_read(
    sheet: dict[str, Any],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = _write(sheet, Path(folder) / "export.xlsx")
        by_columns = read_xlsx_columns(path, None, Budget())
        by_cells = read_xlsx_cells(path, engine="calamine")
        if isinstance(by_columns, ColumnGrid):
            _same_cells(by_columns, by_cells)
        else:
            assert by_columns.grid.tolist() == by_cells.grid.tolist()
        # A sheet whose columns each hold one kind, under headers met once, is read by columns.
        assert isinstance(by_columns, ColumnGrid) == (_homogeneous(sheet) and not sheet["twice"]), (
            sheet
        )
        fast = read_sheet(path, progress=False)
        slow = read_sheet(path, engine="openpyxl", progress=False)
    pd.testing.assert_frame_equal(fast.frame, slow.frame)
    pd.testing.assert_frame_equal(fast.issues, slow.issues)


def _raw(rows: str, folder: Path, name: str = "raw.xlsx") -> Path:
    header = (
        '<row r="1"><c r="A1" t="inlineStr"><is><t>MLSNumber</t></is></c>'
        '<c r="B1" t="inlineStr"><is><t>SalePrice</t></is></c>'
        '<c r="C1" t="inlineStr"><is><t>ZIP</t></is></c></row>'
    )
    return fx.write_raw_xlsx(folder / name, header + rows)


def _listing(row: int, price: str, zip_code: str, zip_style: str = ' s="1"') -> str:
    return (
        f'<row r="{row}"><c r="A{row}" t="inlineStr"><is><t>M{row}</t></is></c>'
        f'<c r="B{row}"><v>{price}</v></c><c r="C{row}"{zip_style}><v>{zip_code}</v></c></row>'
    )


def test_numbers_written_with_a_point_an_exponent_or_many_digits_and_padded_zips(
    tmp_path: Path,
) -> None:
    """The lexer finds what the survey finds; the columnar cells are those read cell by cell."""
    rows = (
        _listing(2, "3.0", "2108")
        + _listing(3, "1.5E+3", "78001")
        + _listing(4, "12345678901234567890", "501", zip_style=' s="3"')
        + _listing(5, "250000", "2108.0")
        + _listing(6, "-7.", "99", zip_style="")
    )
    path = _raw(rows, tmp_path)
    prepared = prepare_sheet(path, None, Budget())
    found = survey(str(path), SHEET, prepared.pads or {})
    assert prepared.shape.numbers == found.numbers
    assert [a.tolist() for a in prepared.shape.styled] == [list(a) for a in found.styled]
    assert prepared.shape.numbers == {
        (2, 2): b"3.0",
        (3, 2): b"1.5E+3",
        (4, 2): b"12345678901234567890",
        (5, 3): b"2108.0",
        (6, 2): b"-7.",
    }
    grid = read_xlsx_columns(path, None, Budget())
    assert isinstance(grid, ColumnGrid)
    _same_cells(grid, read_xlsx_cells(path, engine="calamine"))
    prices = grid.columns[1].values(range(5))
    assert prices == [3.0, 1500.0, 12345678901234567890, 250000, -7.0]
    assert [type(p) for p in prices] == [float, float, int, int, float]
    assert grid.columns[2].values(range(5)) == ["02108", "78001", "00000-0501", "02108", 99]


@pytest.mark.parametrize(
    ("rows", "why"),
    [
        (_listing(2, "5", "2108") + '<row r="3"><c r="A3" t="inlineStr"><is><t>M3</t></is></c>'
         '<c r="B3" t="inlineStr"><is><t>$1,200</t></is></c></row>', "text among numbers"),
        (_listing(2, "5", "2108") + '<row r="3"><c r="A3" t="inlineStr"><is><t>M3</t></is></c>'
         '<c r="B3" t="b"><v>1</v></c></row>', "a boolean among numbers"),
    ],
)  # fmt: skip
def test_a_column_mixing_kinds_is_known_before_any_parse_and_read_cell_by_cell(
    tmp_path: Path, rows: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _raw(rows, tmp_path)
    assert not reads_by_columns(prepare_sheet(path, None, Budget()).shape), why

    def never(*_: Any) -> None:
        raise AssertionError("the columnar read parsed a sheet it cannot read")

    monkeypatch.setattr(calamine_columns, "_read_columns", never)
    grid = read_xlsx_columns(path, None, Budget())
    assert not isinstance(grid, ColumnGrid)
    assert grid.grid.tolist() == read_xlsx_cells(path, engine="openpyxl").grid.tolist()


def test_a_date_column_is_read_cell_by_cell_once_fastexcel_types_it(tmp_path: Path) -> None:
    rows = "".join(
        f'<row r="{r}"><c r="A{r}" t="inlineStr"><is><t>M{r}</t></is></c>'
        f'<c r="B{r}"><v>{r * 100}</v></c><c r="C{r}" s="2"><v>{45000 + r}.25</v></c></row>'
        for r in range(2, 5)
    )
    path = _raw(rows, tmp_path)
    assert reads_by_columns(prepare_sheet(path, None, Budget()).shape)  # numbers, by their XML
    grid = read_xlsx_columns(path, None, Budget())
    assert not isinstance(grid, ColumnGrid)
    assert grid.grid[1:, 2].tolist() == [datetime(2023, 3, 15 + r, 6) for r in range(2, 5)]
    fast = read_sheet(path, progress=False)
    slow = read_sheet(path, engine="openpyxl", progress=False)
    pd.testing.assert_frame_equal(fast.frame, slow.frame)
    pd.testing.assert_frame_equal(fast.issues, slow.issues)


def test_a_header_fastexcel_would_rename_is_read_cell_by_cell(tmp_path: Path) -> None:
    book = Workbook()
    ws = book.active
    assert ws is not None
    ws.append(["MLSNumber", "Notes", "Notes_1", "Notes"])
    ws.append(["M1", "a", "b", "c"])
    path = tmp_path / "twice.xlsx"
    book.save(path)
    grid = read_xlsx_columns(path, None, Budget())
    assert not isinstance(grid, ColumnGrid)
    assert grid.grid.tolist() == [["MLSNumber", "Notes", "Notes_1", "Notes"], ["M1", "a", "b", "c"]]


def test_what_the_grid_cannot_show_is_noted_as_the_cell_by_cell_read_notes_it(
    tmp_path: Path,
) -> None:
    """Values under a blank header and right of the last one, formula errors, a formula with no
    saved value, a merged range: the same notes, and the same listings and issues."""
    import hostile_workbooks as hw

    def row(r: int, *cells: str) -> str:
        return f'<row r="{r}">' + "".join(cells) + "</row>"

    rows = (
        hw.header_row(["MLSNumber", " ", "City", "SalePrice"])
        + row(2, hw.text_cell("A2", "M2"), hw.text_cell("B2", "under a blank header"),
              hw.text_cell("C2", "Austin"), '<c r="D2"><v>100</v></c>',
              hw.text_cell("G2", "right of the headers"))
        + row(3, hw.text_cell("A3", "M3"), '<c r="C3" t="e"><f>1/0</f><v>#DIV/0!</v></c>',
              '<c r="D3"><f>D2*2</f></c>')
        + row(4, hw.text_cell("A4", "M4"), hw.text_cell("C4", "Waco"), '<c r="D4"><v>7</v></c>',
              '<c r="F4"><v>5</v></c>')
        + row(5, hw.text_cell("A5", "M5"), '<c r="C5" t="e"><v>#N/A</v></c>')
    )  # fmt: skip
    part = hw.sheet_part(rows).replace(
        b"</sheetData>", b'</sheetData><mergeCells count="1"><mergeCell ref="C4:D4"/></mergeCells>'
    )
    path = hw.write_book(tmp_path / "notes.xlsx", [hw.SheetXml("Export", part=part)])
    grid = read_xlsx_columns(path, None, Budget())
    assert isinstance(grid, ColumnGrid)
    by_cells = read_xlsx_cells(path, engine="calamine")
    _same_cells(grid, by_cells)
    assert len(grid.notes) >= 5
    assert sorted(map(repr, grid.notes)) == sorted(
        map(repr, read_xlsx_cells(path, engine="openpyxl").notes)
    )
    fast = read_sheet(path, progress=False)
    slow = read_sheet(path, engine="openpyxl", progress=False)
    pd.testing.assert_frame_equal(fast.frame, slow.frame)
    pd.testing.assert_frame_equal(fast.issues, slow.issues)


def test_dates_under_a_blank_header_are_counted_as_the_cell_by_cell_read_counts_them(
    tmp_path: Path,
) -> None:
    header = (
        '<row r="1"><c r="A1" t="inlineStr"><is><t>MLSNumber</t></is></c>'
        '<c r="B1" t="inlineStr"><is><t> </t></is></c>'
        '<c r="C1" t="inlineStr"><is><t>City</t></is></c></row>'
    )
    rows = "".join(
        f'<row r="{r}"><c r="A{r}" t="inlineStr"><is><t>M{r}</t></is></c>'
        f'<c r="B{r}" s="2"><v>4500{r}</v></c>'
        f'<c r="C{r}" t="inlineStr"><is><t>Austin</t></is></c></row>'
        for r in range(2, 5)
    )
    path = fx.write_raw_xlsx(tmp_path / "blank.xlsx", header + rows)
    grid = read_xlsx_columns(path, None, Budget())
    assert isinstance(grid, ColumnGrid)
    _same_cells(grid, read_xlsx_cells(path, engine="calamine"))
    assert [n.message for n in grid.notes] == ["has 3 value(s) under a blank header: ignored"]


def test_a_nan_written_as_a_number_is_refused_naming_its_cell_as_before(tmp_path: Path) -> None:
    path = _raw(_listing(2, "5", "2108") + _listing(3, "NaN", "2108"), tmp_path)
    with pytest.raises(ValueError, match="B3: NaN is not a number"):
        read_xlsx_cells(path, engine="calamine")
    with pytest.raises(ValueError, match="B3: NaN is not a number"):
        read_xlsx_columns(path, None, Budget())


# --------------------------------------------------------------------------- the lexer's part


#: A cell of each kind, as a worksheet's XML writes it (``bit`` is ``n % 2``).
_XML_CELL_OF_KIND = {
    "s": '<c r="{ref}" t="s"><v>{bit}</v></c>',
    "str": '<c r="{ref}" t="str"><f>A1</f><v>text{n}</v></c>',
    "inline": '<c r="{ref}" t="inlineStr"><is><t>inline {n}</t></is></c>',
    "b": '<c r="{ref}" t="b"><v>{bit}</v></c>',
    "e": '<c r="{ref}" t="e"><v>#REF!</v></c>',
    "styled": '<c r="{ref}" s="1"><v>{n}</v></c>',
    "point": '<c r="{ref}"><v>{n}.0</v></c>',
    "empty": '<c r="{ref}" s="1"/>',
    "n": '<c r="{ref}"><v>{n}.25</v></c>',
}


def _xml_cell(ref: str, kind: str, n: int) -> str:
    return _XML_CELL_OF_KIND[kind].format(ref=ref, n=n, bit=n % 2)


_XML_KINDS = st.sampled_from(sorted(_XML_CELL_OF_KIND))


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.lists(st.lists(_XML_KINDS, min_size=1, max_size=5), min_size=1, max_size=10),
    size=st.integers(3, 200),
)
def test_the_kinds_and_fixes_of_the_cells_do_not_depend_on_where_the_stream_is_cut(
    kinds: list[list[str]], size: int
) -> None:
    """Read in pieces of a few bytes, the lexer finds the kinds, numbers and styled cells it
    finds reading the sheet at once, and those the survey finds."""
    rows = "".join(
        f'<row r="{r}">'
        + "".join(_xml_cell(f"{chr(64 + j)}{r}", k, r * j) for j, k in enumerate(row, 1))
        + "</row>"
        for r, row in enumerate(kinds, start=1)
    )
    with tempfile.TemporaryDirectory() as folder:
        path = fx.write_raw_xlsx(Path(folder) / "cut.xlsx", rows, ["<t>a</t>", "<t>b</t>"])
        with zipfile.ZipFile(path) as book:
            whole = xml_shape.shape_of(book, SHEET, "cut", fixes={1})
            chunk, lex = xml_shape._CHUNK, xml_shape._LEX_CHUNK
            xml_shape._CHUNK, xml_shape._LEX_CHUNK = size, max(1, size // 3)
            try:
                cut = xml_shape.shape_of(book, SHEET, "cut", fixes={1})
            finally:
                xml_shape._CHUNK, xml_shape._LEX_CHUNK = chunk, lex
        found = survey(str(path), SHEET, {1})
    assert cut == whole
    assert whole.numbers == found.numbers
    assert [list(a) for a in whole.styled] == [list(a) for a in found.styled]
    # The top row is the first holding a value (a styled empty cell holds none).
    holding = [r for r, row in enumerate(kinds, 1) if any(k != "empty" for k in row)]
    top = holding[0] if holding else 0
    expected: dict[int, int] = {}
    for row in kinds[top:]:
        for j, kind in enumerate(row, 1):
            bit = {"s": 2, "str": 2, "inline": 2, "b": 4, "e": 8, "empty": 0}.get(kind, 1)
            if bit:
                expected[j] = expected.get(j, 0) | bit
    assert whole.top_row == top
    assert whole.kinds == expected


# --------------------------------------------------------------------------- cells as arrays

_VALUES = st.one_of(
    st.none(),
    st.text(max_size=5),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.datetimes(),
)


@given(values=st.lists(_VALUES, max_size=30), data=st.data())
def test_cells_give_back_the_values_they_were_made_of(values: list[Any], data: Any) -> None:
    cells = Cells.of_values(np.array(values, dtype=object) if values else np.empty(0, object))

    def same(a: Any, b: Any) -> bool:
        if isinstance(a, float) and math.isnan(a):
            return isinstance(b, float) and math.isnan(b)
        return type(a) is type(b) and a == b

    assert len(cells) == len(values)
    assert all(same(cells.value(i), v) for i, v in enumerate(values))
    chosen = data.draw(st.lists(st.integers(0, max(len(values) - 1, 0)), max_size=len(values)))
    chosen = sorted(chosen) if values else []
    taken = cells.take(np.array(chosen, dtype=np.int64))
    assert all(same(taken.value(k), values[i]) for k, i in enumerate(chosen))
    start = data.draw(st.integers(0, len(values)))
    assert all(same(a, b) for a, b in zip(cells[start:].values(range(len(values) - start)),
                                          values[start:], strict=True))  # fmt: skip


@given(texts=st.lists(st.one_of(st.none(), _TEXT), max_size=25))
def test_the_rules_every_cell_follows_are_the_same_whether_or_not_a_text_needs_cleaning(
    texts: list[str | None],
) -> None:
    """The check that spares most columns the cleaning never changes what the cleaning gives."""
    column = prepare(Cells.of_values(np.array(texts, dtype=object)), "#CLEAR")
    cleaned = clean_text(pd.Series(texts, dtype="string[pyarrow]")).tolist()
    for i, text in enumerate(cleaned):
        blank = text is pd.NA or text.upper() in BLANK_TOKENS or text.upper() == "#CLEAR"
        assert column.present[i] == (not blank)
        assert column.cleared[i] == (text is not pd.NA and text.upper() == "#CLEAR")
        assert (column.text[i] is pd.NA) == blank
        if not blank:
            assert column.text[i] == text


@given(data=st.binary(max_size=5000), size=st.integers(1, 700))
def test_a_stream_read_ahead_gives_its_bytes_in_order(data: bytes, size: int) -> None:
    pieces = []
    with read_ahead(io.BytesIO(data), size) as ahead:
        while piece := ahead.read(size):
            pieces.append(piece)
    assert b"".join(pieces) == data
    assert all(len(p) == size for p in pieces[:-1])


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@given(value=_JSON, tail=st.sampled_from(["", " ", "x", "]", ",1"]))
def test_a_cells_json_reads_as_json_loads_reads_it(value: Any, tail: str) -> None:
    text = (json.dumps(value) + tail).strip()
    try:
        expected: Any = json.loads(text)
    except ValueError:
        # Whatever json.loads says of it, json_value refuses it too (its messages differ).
        with pytest.raises(ValueError, match=r"\w"):
            json_value(text)
    else:
        assert json_value(text) == expected
