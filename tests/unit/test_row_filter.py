"""Filters of a shared sheet's rows (`where`), and a Sheet narrowed to some of its rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.factories import complete_listing, remote_frame
from tests.fixtures_sheets import MLS_HEADERS, MLS_ROWS, write_xlsx

import estatebot as eb
from estatebot.errors import SheetError
from estatebot.fleet.row_filter import Condition, FilterError, RowFilter, select_sheet_rows

HEADERS = ["ListAgentMlsId", "City", "Office Id"]


def _columns(*columns: list[object]) -> list[np.ndarray]:
    out = []
    for values in columns:
        array = np.empty(len(values), dtype=object)
        array[:] = values
        out.append(array)
    return out


def test_parse_reads_each_form() -> None:
    parsed = RowFilter.parse("City = New York AND Status != Sold and Office in (O1, 'O 2')")
    assert parsed.conditions == (
        Condition("City", "=", ("New York",)),
        Condition("Status", "!=", ("Sold",)),
        Condition("Office", "in", ("O1", "O 2")),
    )
    assert RowFilter.parse("x not in (\"a\"\"b\", 'O''Brien')").conditions == (
        Condition("x", "not in", ('a"b', "O'Brien")),
    )
    assert RowFilter.parse("Office == ''").conditions == (Condition("Office", "=", ("",)),)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "blank"),
        ("City Austin", "expected =, !=, in or not in"),
        ("City = ", "expected a value after ="),
        ("a = b or c = d", "'or' is not supported"),
        ("a = 'x", "unclosed quote"),
        ("a in (b, c", "expected ')'"),
        ("a = b c = d", "expected 'and' or the end"),
    ],
)
def test_a_bad_filter_says_what_and_where(text: str, expected: str) -> None:
    with pytest.raises(FilterError) as caught:
        RowFilter.parse(text)
    assert expected in caught.value.reason
    assert caught.value.column == "where"
    assert caught.value.value == text
    assert isinstance(caught.value, SheetError)
    if text:
        assert "at character" in caught.value.reason


def test_rows_compare_trimmed_text_exactly_and_numbers_as_shown() -> None:
    columns = _columns(
        [123.0, "123", " 123 ", "a123", None, 123],
        ["Austin", "Dallas", "Austin", "Austin", "Austin", "Waco"],
        ["O1", "O2", None, "O1", "O3", "O2"],
    )
    rows = np.arange(2, 8)
    picked = RowFilter.parse("list agent mls id = 123").rows(HEADERS, columns, rows)
    assert picked.tolist() == [2, 3, 4, 7]  # "a123" is another agent: case counts
    assert picked.dtype == np.int64
    both = RowFilter.parse("ListAgentMlsId = 123 and city != Austin")
    assert both.rows(HEADERS, columns, rows).tolist() == [3, 7]
    offices = RowFilter.parse("OFFICE_ID in (O1, O3)")
    assert offices.rows(HEADERS, columns, rows).tolist() == [2, 5, 6]
    blank = RowFilter.parse("Office-Id = ''")
    assert blank.rows(HEADERS, columns, rows).tolist() == [4]
    assert RowFilter.parse("Office Id not in (O1, O2)").rows(HEADERS, columns, rows).tolist() == [
        4,
        6,
    ]


def test_an_unknown_column_names_the_headers_and_the_closest() -> None:
    with pytest.raises(FilterError) as caught:
        RowFilter.parse("ListAgentMls = A1").rows(HEADERS, _columns([], [], []), np.arange(0))
    message = str(caught.value)
    assert "'ListAgentMls'" in message
    assert "'City'" in message
    assert "did you mean 'ListAgentMlsId'" in message


def test_a_column_matching_two_headers_is_refused() -> None:
    with pytest.raises(FilterError, match="more than one header"):
        RowFilter.parse("city = A").rows(["City", "CITY"], _columns(["A"], ["A"]), [2])


def test_select_sheet_rows_reads_the_file_raw(tmp_path: Path) -> None:
    path = tmp_path / "shared.csv"
    path.write_text("MLS,Agent\nM1,A1\n,\nM2,A2\nM3,A1\n", encoding="utf-8")
    assert select_sheet_rows(path, "Agent = A1").tolist() == [2, 5]
    assert select_sheet_rows(path, RowFilter.parse("Agent in (A2)")).tolist() == [4]


_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12
).map(str.strip)


@st.composite
def _conditions(draw: st.DrawFn) -> Condition:
    column = draw(_TEXT.filter(bool))
    op = draw(st.sampled_from(["=", "!=", "in", "not in"]))
    count = 1 if op in ("=", "!=") else draw(st.integers(1, 4))
    values = tuple(draw(st.lists(_TEXT, min_size=count, max_size=count)))
    return Condition(column, op, values)


@given(st.lists(_conditions(), min_size=1, max_size=4))
def test_a_filter_written_back_reads_as_itself(conditions: list[Condition]) -> None:
    written = RowFilter(tuple(conditions))
    assert RowFilter.parse(str(written)) == written


@given(st.lists(st.sampled_from(["A1", "a1", " A1", "B2", None, 7, 7.0]), max_size=12))
def test_equal_and_not_equal_split_the_rows(cells: list[object]) -> None:
    columns = _columns(cells, [None] * len(cells), [None] * len(cells))
    rows = np.arange(2, 2 + len(cells))
    equal = RowFilter.parse("ListAgentMlsId = A1").rows(HEADERS, columns, rows)
    other = RowFilter.parse("ListAgentMlsId != A1").rows(HEADERS, columns, rows)
    assert sorted([*equal, *other]) == rows.tolist()
    assert set(equal).isdisjoint(other)
    expected = [
        r for r, c in zip(rows, cells, strict=True) if isinstance(c, str) and c.strip() == "A1"
    ]
    assert equal.tolist() == expected


# --------------------------------------------------------------------------- Sheet.only_rows

AGENT = "List Agent MLS ID"


def _mls_rows() -> list[dict[str, object]]:
    rows = []
    for i, row in enumerate(MLS_ROWS):
        rows.append({**row, AGENT: "A1" if i % 2 else "B2"})
    # A cleared cell and a value the reader derives, on one agent's row each.
    rows[0] = {**rows[0], "Garage Type": "#CLEAR"}
    return rows


def test_only_rows_is_the_sheet_of_those_rows_alone(tmp_path: Path) -> None:
    headers = [*MLS_HEADERS, AGENT]
    rows = _mls_rows()
    shared = write_xlsx(tmp_path / "shared.xlsx", headers, rows)
    picked = select_sheet_rows(shared, f"{AGENT} = A1")
    assert len(picked)
    # The same rows alone: the others left blank, so every row keeps its number.
    alone_rows = [row if i + 2 in set(picked) else {} for i, row in enumerate(rows)]
    alone = write_xlsx(tmp_path / "alone.xlsx", headers, alone_rows)

    defaults = {"CurrencySymbol": "$", "State": "RI"}
    sheet = eb.read_sheet(shared, defaults=defaults, progress=False)
    before = sheet.frame.copy()
    narrowed = sheet.only_rows(picked)
    expected = eb.read_sheet(alone, defaults=defaults, progress=False)

    assert sheet.frame.equals(before)  # the input sheet is left as it was
    assert narrowed is not sheet
    assert narrowed.rows_read == expected.rows_read
    pd.testing.assert_frame_equal(narrowed.frame, expected.frame)
    pd.testing.assert_frame_equal(narrowed.issues, expected.issues)
    pd.testing.assert_frame_equal(narrowed.unpublished, expected.unpublished)
    for name in ("cleared", "defaulted", "derived"):
        mine, theirs = getattr(narrowed, name), getattr(expected, name)
        pd.testing.assert_frame_equal(mine[theirs.columns], theirs, check_index_type=False)
        assert not mine.drop(columns=theirs.columns).to_numpy().any()
    assert narrowed.cleared_keys.to_dict() == expected.cleared_keys.to_dict()
    assert narrowed.invalid_rows == expected.invalid_rows

    remote = remote_frame(
        *(complete_listing(i, MLSNumber=str(24_000_000 + i)) for i in range(0, 11, 3))
    )
    for delete_missing in (False, True):
        options = {"delete_missing": delete_missing, "max_delete_fraction": 1.0}
        mine = eb.plan_sync(narrowed, remote, **options)
        theirs = eb.plan_sync(expected, remote, **options)
        assert mine.summary() == theirs.summary()
        assert mine.summary()["update"] + mine.summary()["delete"] > 0
        assert mine.fingerprint == theirs.fingerprint


def test_only_rows_keeps_sheet_wide_issues_and_ignores_unknown_rows(tmp_path: Path) -> None:
    headers = [*MLS_HEADERS, AGENT, "Stray"]
    shared = write_xlsx(tmp_path / "shared.xlsx", headers, _mls_rows())
    sheet = eb.read_sheet(shared, progress=False)
    wide = sheet.issues[sheet.issues["row"].isna()]
    assert len(wide)  # the sheet lacks required fields: warnings with no row
    narrowed = sheet.only_rows([2, 10_000])
    assert narrowed.issues["row"].isna().sum() == len(wide)
    assert set(narrowed.issues["row"].dropna()) <= {2}
    assert list(narrowed.frame.index) == [2]
    assert narrowed.only_rows([]).frame.empty
    assert narrowed.only_rows([]).rows_read == 0
