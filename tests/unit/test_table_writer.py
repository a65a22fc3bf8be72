"""A workbook of tables written in one pass (:func:`estatebot._safe_cells.write_tables`).

Checked on real workbooks read back with openpyxl, as a property over any tables: the sheets in
order, each with its bold frozen header, its widths, every value by the rules of
:mod:`estatebot._safe_cells`, the notes on the cells they name, and every cell changed to fit
returned, named by its row and column.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl import load_workbook
from openpyxl.styles import PatternFill

from estatebot._safe_cells import CellChange, Table, unwritable, without_unwritable, write_tables

FILL = PatternFill(start_color="FFF3B0", end_color="FFF3B0", fill_type="solid")

# Cell text, with what the rules are about (formulas, characters a cell refuses) likely.
texts = st.text(
    alphabet=st.one_of(
        st.sampled_from(["=", "+", "-", "@", "a", "b", " ", "\t", "\x00", "\x0b", "\x1b"]),
        st.characters(codec="utf-8"),
    ),
    min_size=1,
    max_size=12,
).filter(lambda text: without_unwritable(text).strip() != "")
values = st.one_of(st.none(), texts, st.integers(-(10**6), 10**6), st.booleans())
names = st.text(alphabet="abcdefghij", min_size=1, max_size=6)


@st.composite
def tables(draw: st.DrawFn) -> list[Table]:
    """One to three tables of up to four rows, some with notes on their cells."""
    titles = draw(st.lists(names, min_size=1, max_size=3, unique=True))
    made = []
    for title in titles:
        header = draw(st.lists(names, min_size=1, max_size=4, unique=True))
        width = len(header)
        rows = draw(st.lists(st.lists(values, min_size=width, max_size=width), max_size=4))
        notes = st.dictionaries(st.integers(0, width - 1), texts, max_size=2)
        comments = draw(st.lists(notes, max_size=len(rows)))
        widths = draw(st.dictionaries(st.sampled_from(header), st.integers(8, 60).map(float)))
        made.append(Table(title, header, rows, widths, comments, comment_fill=FILL))
    return made


def read_back(value: Any) -> Any:
    """What a cell written with ``value`` reads back as (XML reads a line break as a line feed)."""
    if isinstance(value, str):
        return without_unwritable(value).replace("\r\n", "\n").replace("\r", "\n")
    return value


@settings(max_examples=60, deadline=None)
@given(tables())
def test_each_table_is_its_sheet_with_every_cell_by_the_rules(written: list[Table]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tables.xlsx"
        changes = write_tables(path, written)
        book = load_workbook(path)
    assert book.sheetnames == [table.title for table in written]
    expected_changes = []
    for table in written:
        sheet = book[table.title]
        assert sheet.freeze_panes == "A2"
        assert [cell.value for cell in sheet[1]] == list(table.header)
        assert all(cell.font.bold for cell in sheet[1])
        for index, name in enumerate(table.header):
            if table.widths and name in table.widths:
                letter = sheet.cell(row=1, column=index + 1).column_letter
                assert sheet.column_dimensions[letter].width == table.widths[name]
        rows = list(table.rows)
        notes = [*table.comments, *[{}] * (len(rows) - len(list(table.comments)))]
        assert sheet.max_row <= 1 + len(rows)  # a row of empty cells ends none
        for number, (values_written, noted) in enumerate(zip(rows, notes, strict=True), start=2):
            cells = [sheet.cell(row=number, column=c + 1) for c in range(len(table.header))]
            assert [cell.value for cell in cells] == [read_back(v) for v in values_written]
            for index, cell in enumerate(cells):
                value = values_written[index]
                if isinstance(value, str):
                    assert cell.data_type == "s"  # text stays text, formula or not
                    if unwritable(value):
                        name = table.header[index]
                        expected_changes.append((number, name))
                if index in noted:
                    assert cell.comment is not None
                    assert cell.comment.text == read_back(noted[index])
                    assert cell.fill.fgColor.rgb.endswith("FFF3B0")
                else:
                    assert cell.comment is None
    assert all(isinstance(change, CellChange) for change in changes)
    assert sorted((c.row, c.column) for c in changes) == sorted(expected_changes)
