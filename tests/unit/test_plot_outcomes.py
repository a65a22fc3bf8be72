"""A case that passed is a pass wherever its flag comes from: Python's, numpy's or pandas' own
boolean. ``value is True`` holds for Python's only, and a results frame hands out numpy's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.colors import to_hex
from openpyxl import load_workbook

from estatebot.chat.harness.case_cells import is_true
from estatebot.chat.harness.checks import outcome
from estatebot.chat.harness.results import ChatTestResults
from estatebot.chat.harness.results_plot import OUTCOME_COLOURS

PASS, FAIL, ERROR = (OUTCOME_COLOURS[k] for k in ("pass", "fail", "error"))


def results_of(passed: list[Any], errors: list[str | None] | None = None, **dtype: str) -> Any:
    """Results of ``len(passed)`` answered cases, ``passed`` held in the dtype asked for."""
    n = len(passed)
    frame = pd.DataFrame(
        {
            "case": [f"case {i}" for i in range(n)],
            "conversation": [None] * n,
            "question": [f"question {i}" for i in range(n)],
            "answer": ["an answer"] * n,
            "no_answer": [False] * n,
            "tokens": [10] * n,
            "latency_ms": [640.0 + i for i in range(n)],
            "session_id": [1] * n,
            "message_id": list(range(n)),
            "attempts": [1] * n,
            "error": errors or [None] * n,
            "why": ["" if p else "expect_contains: 'x' not found" for p in passed],
            "passed": pd.Series(passed, dtype=dtype.get("dtype", "boolean")),
        }
    )
    return ChatTestResults(frame)


def bar_colours(results: ChatTestResults) -> tuple[list[str], list[str]]:
    """The colours of the latency bars (one per case) and of the outcome bar's parts."""
    latency, rate = results.plot().axes
    cases = [to_hex(p.get_facecolor()) for p in latency.patches]
    parts = [to_hex(p.get_facecolor()) for p in rate.patches if p.get_height() > 0]
    return cases, parts


@pytest.mark.parametrize(
    "flag",
    [True, np.True_, np.bool_(1), pd.array([True], dtype="boolean")[0], pd.Series([True])[0]],
)
def test_every_kind_of_true_is_a_pass(flag: Any) -> None:
    assert is_true(flag)
    assert outcome(flag, None) == "pass"
    assert outcome(flag, pd.NA) == "pass"


@pytest.mark.parametrize("flag", [False, np.False_, pd.NA, None, np.nan, 1, "True", "yes"])
def test_anything_else_is_a_fail(flag: Any) -> None:
    assert not is_true(flag)
    assert outcome(flag, None) == "fail"


def test_an_error_wins_over_a_pass() -> None:
    assert outcome(np.True_, "timed out") == "error"
    assert outcome(True, "timed out") == "error"


@given(st.lists(st.booleans(), min_size=1, max_size=40))
def test_a_boolean_column_reads_as_it_says_element_by_element(flags: list[bool]) -> None:
    for dtype in ("boolean", "bool", "object"):
        column = pd.Series(flags, dtype=dtype)
        assert [outcome(v, None) for v in column] == ["pass" if f else "fail" for f in flags]
        assert [is_true(v) for v in column.to_numpy()] == flags


@pytest.mark.parametrize("dtype", ["boolean", "bool"])
def test_the_plot_colours_each_case_by_its_outcome(dtype: str) -> None:
    cases, parts = bar_colours(results_of([True, False, True, True], dtype=dtype))
    assert cases == [PASS, FAIL, PASS, PASS]
    assert parts == [PASS, FAIL]  # three passed, then one failed, stacked


def test_every_case_passed_is_an_all_green_bar() -> None:
    results = results_of([True] * 5)
    cases, parts = bar_colours(results)
    assert set(cases) == {PASS}
    assert parts == [PASS]
    assert results.plot().axes[1].get_title() == "100% passed"


def test_an_error_is_orange_in_the_plot() -> None:
    cases, parts = bar_colours(results_of([False, True], errors=["timed out", None]))
    assert cases == [ERROR, PASS]
    assert parts == [PASS, ERROR]


def test_the_workbook_highlights_only_the_cases_that_failed(tmp_path: Path) -> None:
    results = results_of([True, False, True])
    path = results.to_excel(tmp_path / "results.xlsx")
    sheet = load_workbook(path)["results"]
    fills = [row[0].fill.fill_type for row in sheet.iter_rows(min_row=2)]
    assert fills == [None, "solid", None]
