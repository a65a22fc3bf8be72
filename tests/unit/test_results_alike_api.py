"""Every result object is held, shown and saved alike (README, "Every result alike").

``Sheet``, ``SyncPlan``, ``ApplyReport``, ``ChatTestResults``, ``ChatRunChanges`` and
``NormalizeResult`` each give ``.frame`` and ``to_frame()`` (a DataFrame), ``summary()`` (a
:class:`~estatebot._summary.Summary`), ``to_excel(path)`` returning the path of a workbook
openpyxl opens, and ``_repr_html_``. Results that record success or failure name it ``.ok`` and
``.failures``; the old names still answer, with a ``DeprecationWarning`` naming the new one.

Made without a service: a frame read as a sheet, a plan against no remote listings, a report
from outcomes, chat runs against a scripted client, records normalized.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import load_workbook

from estatebot._summary import Summary
from estatebot.api.models import Answer
from estatebot.chat.harness.comparison import ChatRunChanges, compare_chat_runs
from estatebot.chat.harness.results import ChatTestResults, main_exit_code
from estatebot.chat.harness.running import run_chat_tests
from estatebot.listings.remote.normalize import NormalizeResult, NormalizeWarning, normalize_records
from estatebot.listings.sheet.read import read_sheet
from estatebot.listings.sheet.result import Sheet
from estatebot.listings.sync.report.apply_report import ApplyReport, OpOutcome, outcomes_frame
from estatebot.listings.sync.sync_plan import SyncPlan, plan_sync
from factories import complete_listing, remote_frame

SERIAL = "3254a9d0424c4806b9ea3d0763ccf1bf"
FORMULA = '=HYPERLINK("https://evil.example","click")'


class ScriptedChat:
    """Answers each question with the text scripted for it (an echo otherwise)."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers

    def create_session(self, serial: str) -> int:
        return 100001

    def ask(self, session_id: int, content: str, **_: Any) -> Answer:
        text = self.answers.get(content, f"echo: {content}")
        return Answer(messageid=1, content=text, totalToken=42, noAnswer=False)


class ScriptedClient:
    def __init__(self, answers: dict[str, str] | None = None) -> None:
        self.chat = ScriptedChat(answers or {})


CASES = [
    {"name": "greets", "question": "hello", "expect_not_contains": "sorry"},
    {"name": "price", "question": "price?", "expect_contains": "$650k"},
]


def chat_run(answers: dict[str, str] | None = None) -> ChatTestResults:
    return run_chat_tests(ScriptedClient(answers), SERIAL, CASES, progress=False)


def a_sheet() -> Sheet:
    # Flat cells, as a spreadsheet holds them; the description would be a formula in Excel.
    flat = {
        k: v
        for k, v in complete_listing(1, Description=FORMULA).items()
        if not isinstance(v, list | dict)
    }
    return read_sheet(pd.DataFrame([flat]))


def a_plan() -> SyncPlan:
    return plan_sync(a_sheet(), remote_frame())


def a_report() -> ApplyReport:
    outcomes = [
        OpOutcome("create", "M1", 2, 7, "done", attempts=1, elapsed_ms=12.5),
        OpOutcome("update", "M2", 3, 8, "failed", code=500, message=FORMULA, attempts=3),
    ]
    return ApplyReport(outcomes_frame(outcomes))


def the_changes() -> ChatRunChanges:
    old = chat_run({"price?": "Homes at $650k now"})
    new = chat_run({"price?": "Homes at $700k now", "hello": FORMULA})
    return compare_chat_runs(old, new)


def normalized() -> NormalizeResult:
    records = [
        {"ID": "1", "MLSNumber": "A1", "Bedrooms": "three", "Description": FORMULA},
        {"ID": "2", "MLSNumber": "A2", "Bedrooms": "2"},
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NormalizeWarning)
        return normalize_records(records)


RESULTS: dict[str, Callable[[], Any]] = {
    "sheet": a_sheet,
    "plan": a_plan,
    "report": a_report,
    "chat": chat_run,
    "changes": the_changes,
    "normalize": normalized,
}


# --------------------------------------------------------------------------- the common interface


@pytest.mark.parametrize("name", list(RESULTS))
def test_each_result_gives_its_frame_under_both_spellings(name: str) -> None:
    result = RESULTS[name]()
    frame = result.frame
    copy = result.to_frame()
    assert type(frame) is pd.DataFrame
    assert type(copy) is pd.DataFrame
    assert list(copy.columns) == list(frame.columns)
    assert len(copy) == len(frame) > 0
    first = frame.iloc[:, 0].copy()
    copy.iloc[:, 0] = None  # a copy: changing it leaves the result alone
    pd.testing.assert_series_equal(result.to_frame().iloc[:, 0], first)


@pytest.mark.parametrize("name", list(RESULTS))
def test_each_summary_is_text_with_its_figures(name: str) -> None:
    summary = RESULTS[name]().summary()
    assert type(summary) is Summary
    assert str(summary).strip()
    assert summary.counts
    for key, figure in summary.items():
        assert summary[key] == figure
        assert figure is None or isinstance(figure, int | float)


@pytest.mark.parametrize("name", list(RESULTS))
def test_each_to_excel_returns_the_path_of_a_workbook(name: str, tmp_path: Path) -> None:
    result = RESULTS[name]()
    target = tmp_path / "out" / f"{name}.xlsx"
    written = result.to_excel(target)
    assert isinstance(written, Path)
    assert written == target
    book = load_workbook(written)
    assert book.sheetnames
    # No cell holds a formula: untrusted text starting with "=" stays text.
    cells = [cell for sheet in book.worksheets for row in sheet.iter_rows() for cell in row]
    assert not [cell.coordinate for cell in cells if cell.data_type == "f"]
    book.close()


@pytest.mark.parametrize("name", list(RESULTS))
def test_each_result_shows_itself_as_html(name: str) -> None:
    page = RESULTS[name]()._repr_html_()
    assert isinstance(page, str)
    assert "<" in page


# --------------------------------------------------------------------------- success and failure


def test_a_report_and_chat_results_say_ok_and_list_failures() -> None:
    report = a_report()
    assert report.ok is False
    assert list(report.failures["key"]) == ["M2"]
    chat = chat_run()
    assert chat.ok is False
    assert list(chat.failures["case"]) == ["price"]
    assert main_exit_code(chat) == 1
    assert chat_run({"price?": "$650k"}).ok is True
    assert ApplyReport(outcomes_frame([])).ok is True


def test_the_old_names_warn_and_still_answer() -> None:
    report = a_report()
    with pytest.warns(DeprecationWarning, match=r"ApplyReport\.failures"):
        failed = report.failed
    pd.testing.assert_frame_equal(failed, report.failures)
    chat = chat_run()
    with pytest.warns(DeprecationWarning, match=r"ChatTestResults\.ok"):
        passed = chat.passed
    assert passed is chat.ok is False


def test_the_new_names_do_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        report, chat = a_report(), chat_run()
        assert not report.ok
        assert len(report.failures) == 1
        assert not chat.ok
        assert len(chat.failures) == 1
        assert "(see .failures)" not in str(report)  # under ten failures: all listed


# --------------------------------------------------------------------------- the changes


def test_the_changes_are_still_used_as_a_frame() -> None:
    changes = the_changes()
    assert isinstance(changes, pd.DataFrame)
    assert len(changes) == 2
    assert not changes.empty
    assert list(changes["change"]) == ["answer changed", "now failing"]
    assert [row.case for row in changes.frame.itertuples()] == ["greets", "price"]
    assert type(changes.set_index("case")) is pd.DataFrame  # derived frames are plain


def test_the_changes_sum_up_by_kind() -> None:
    summary = the_changes().summary()
    assert summary == "2 cases changed: 1 now failing, 1 answer changed"
    assert summary["changed"] == 2
    assert summary["now_failing"] == 1
    assert summary["answer_changed"] == 1
    assert summary["removed"] == 0
    nothing = compare_chat_runs(chat_run(), chat_run())
    assert nothing.empty
    assert nothing.summary() == "no case changed its outcome or answer"
    assert nothing.summary()["changed"] == 0


def test_the_changes_workbook_keeps_answers_as_text(tmp_path: Path) -> None:
    written = the_changes().to_excel(tmp_path / "changes.xlsx")
    book = load_workbook(written)
    assert book.sheetnames == ["changes", "summary"]
    sheet = book["changes"]
    header = [cell.value for cell in sheet[1]]
    column = header.index("new_answer") + 1
    answer = sheet.cell(row=2, column=column)
    assert answer.value == FORMULA
    assert answer.data_type == "s"
    summary = {row[0].value: row[1].value for row in book["summary"].iter_rows(min_row=2)}
    assert summary["now_failing"] == 1


# --------------------------------------------------------------------------- normalizing


def test_a_normalize_summary_keeps_its_text_and_gains_figures() -> None:
    result = normalized()
    summary = result.summary()
    assert summary == "2 listings, 1 values unreadable or missing (now NA): Bedrooms 1"
    assert summary["listings"] == 2
    assert summary["problems"] == 1
    assert summary["Bedrooms"] == 1
    assert repr(result) == f"<NormalizeResult {summary}>"


def test_a_normalize_workbook_holds_listings_and_problems(tmp_path: Path) -> None:
    written = normalized().to_excel(tmp_path / "normalized.xlsx")
    book = load_workbook(written)
    assert book.sheetnames == ["Listings", "Problems"]
    problems = list(book["Problems"].values)
    assert problems[0] == ("row", "ID", "MLSNumber", "column", "value", "message")
    assert problems[1][:5] == (0, 1, "A1", "Bedrooms", "three")
    listings = list(book["Listings"].values)
    assert listings[0][0] == "row"
    assert FORMULA in listings[1]


def test_a_normalize_view_escapes_what_the_service_sent() -> None:
    records = [{"ID": "1", "MLSNumber": "A1", "Bedrooms": "<script>x</script>"}]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NormalizeWarning)
        page = normalize_records(records)._repr_html_()
    assert "<script>x" not in page
    assert "&lt;script&gt;x" in page
    assert "Bedrooms" in page
