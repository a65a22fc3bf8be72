"""The rules for writing untrusted text into spreadsheet cells (estatebot._safe_cells).

Each rule is checked on a real workbook written and read back with openpyxl, and the two
reversible encodings (csv's leading quote, the xlsx escape) as properties over any text.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from openpyxl import Workbook, load_workbook

from estatebot._safe_cells import (
    FORMULA_STARTS,
    XLSX_MAX_CHARS,
    CellTooLong,
    CellWarning,
    SheetWriter,
    csv_text,
    escape_xlsx_text,
    excel_length,
    from_csv_text,
    unescape_xlsx_text,
    unwritable,
    warn_changes,
)

# Text a spreadsheet would run as a formula, per OWASP's list of first characters.
FORMULAS = ["=SUM(A1)", '=HYPERLINK("http://x.example","go")', "+1+2", "-5% off", "@SUM(A1)"]
FORMULAS += ["\t=1+1", "\r=1+1"]
# Text with characters an xlsx cell cannot hold, and text that merely looks escaped.
CONTROLS = ["a\x0bb", "nul\x00x", "\x1b[31mred", "bell\x07", "lit _x000B_ here", "_x005F_"]

# Any text, with the characters these rules are about much more likely than chance.
texts = st.text(
    alphabet=st.one_of(
        st.sampled_from(["=", "+", "-", "@", "'", "\t", "\r", "\n", "_", "x", "0", "B", "F"]),
        st.sampled_from(["\x00", "\x0b", "\x1b", "\ufffe", "\ud800", "é", "🏠"]),
        st.characters(),
    ),
    max_size=40,
)


@given(texts)
def test_csv_text_never_starts_a_formula_and_reads_back_exactly(text: str) -> None:
    written = csv_text(text)
    assert not written or written[0] not in FORMULA_STARTS
    assert from_csv_text(written) == text


def test_csv_text_quotes_only_what_needs_it() -> None:
    assert [csv_text(t) for t in FORMULAS] == ["'" + t for t in FORMULAS]
    assert csv_text("'quoted") == "''quoted"  # so that reading takes exactly one off
    assert csv_text("Bright home") == "Bright home"
    assert from_csv_text("'own quote") == "'own quote"  # a quote before plain text is the text's


@given(texts)
def test_xlsx_escape_holds_only_writable_characters_and_reverses_exactly(text: str) -> None:
    escaped = escape_xlsx_text(text)
    assert unwritable(escaped) == []
    assert unescape_xlsx_text(escaped) == text


def test_xlsx_escape_is_the_formats_own() -> None:
    # Excel shows _x000B_ as the character, and _x005F_ as an underscore.
    assert escape_xlsx_text("a\x0bb") == "a_x000B_b"
    assert escape_xlsx_text("lit _x000B_ here") == "lit _x005F_x000B_ here"


def write_rows(path: Path, rows: list[list[object]], **options: Any) -> list[str]:
    """Write ``rows`` under a header with a SheetWriter; returns the warnings' texts."""
    book = Workbook(write_only=True)
    writer = SheetWriter(book, "Data", ["text", "number"], **options)
    for values in rows:
        writer.append(values)
    book.save(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_changes(writer.changes, path.name)
    return [str(w.message) for w in caught if issubclass(w.category, CellWarning)]


def test_formula_text_is_a_string_cell_marked_as_text_and_numbers_stay_numbers(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cells.xlsx"
    write_rows(path, [[text, -5] for text in FORMULAS] + [["plain", -97.7431]])
    sheet = load_workbook(path).active
    assert sheet is not None
    cells = [(row[0], row[1]) for row in sheet.iter_rows(min_row=2)]
    for (text_cell, number_cell), text in zip(cells, [*FORMULAS, "plain"], strict=True):
        assert text_cell.data_type == "s", text
        assert text_cell.value == text.replace("\r", "\n")  # XML reads a CR as a line feed
        assert text_cell.quotePrefix is (text != "plain")
        assert number_cell.data_type == "n"
    assert cells[-1][1].value == -97.7431


def test_characters_a_cell_cannot_hold_are_removed_and_named(tmp_path: Path) -> None:
    path = tmp_path / "cells.xlsx"
    messages = write_rows(path, [[text, 1] for text in CONTROLS])
    sheet = load_workbook(path).active
    assert sheet is not None
    assert [row[0].value for row in sheet.iter_rows(min_row=2)] == [
        "ab",
        "nulx",
        "[31mred",
        "bell",
        "lit _x000B_ here",
        "_x005F_",
    ]
    (message,) = messages
    assert "4 cells changed" in message
    assert "row 2, text: removed 1 character a cell cannot hold (U+000B)" in message
    assert "row 5, text" in message


def test_characters_escaped_for_a_backup_read_back_exactly(tmp_path: Path) -> None:
    path = tmp_path / "cells.xlsx"
    texts = [*CONTROLS, "line one\r\nline two", "\r=1+1"]  # a bare CR would come back as LF
    assert write_rows(path, [[text, 1] for text in texts], characters="escape") == []
    sheet = load_workbook(path).active
    assert sheet is not None
    read = [unescape_xlsx_text(row[0].value) for row in sheet.iter_rows(min_row=2)]
    assert read == texts


def test_text_longer_than_a_cell_is_an_error_naming_row_column_and_length(
    tmp_path: Path,
) -> None:
    with pytest.raises(CellTooLong) as raised:
        write_rows(tmp_path / "x.xlsx", [["short", 1], ["é" * 40_000, 2]], too_long="error")
    assert (raised.value.row, raised.value.column, raised.value.length) == (3, "text", 40_000)
    assert "row 3, column 'text'" in str(raised.value)
    assert "40,000 characters" in str(raised.value)
    assert not (tmp_path / "x.xlsx").exists()


def test_text_longer_than_a_cell_is_cut_marked_and_named(tmp_path: Path) -> None:
    path = tmp_path / "cut.xlsx"
    # Emoji count two units each, as Excel counts: 20,000 of them are 40,000.
    messages = write_rows(path, [["🏠" * 20_000, 1], ["a" * XLSX_MAX_CHARS, 2]])
    sheet = load_workbook(path).active
    assert sheet is not None
    cut, whole = (row[0].value for row in sheet.iter_rows(min_row=2))
    assert excel_length(cut) <= XLSX_MAX_CHARS
    assert cut.startswith("🏠🏠")
    assert cut.endswith("[cut: 40,000 characters in all]")
    assert whole == "a" * XLSX_MAX_CHARS  # exactly the limit fits
    (message,) = messages
    assert "row 2, text: cut to 32,767 of its 40,000 characters" in message


def test_an_infinite_number_is_written_as_text_not_an_empty_cell(tmp_path: Path) -> None:
    path = tmp_path / "inf.xlsx"
    write_rows(path, [["up", float("inf")], ["down", float("-inf")], ["none", float("nan")]])
    sheet = load_workbook(path).active
    assert sheet is not None
    assert [row[1].value for row in sheet.iter_rows(min_row=2)] == ["inf", "-inf", None]
