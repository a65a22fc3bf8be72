"""Hostile text and numbers in the files estatebot writes: plans, reports, chat results, backups
and sheets read.

Every writer keeps text a spreadsheet would run as a formula as text, removes (and names) the
characters a cell cannot hold, cuts (and names) text longer than a cell holds, and writes what a
format cannot hold either as text that reads back or as a clear error: never a crash, never a
silent blank. The workbooks are written and read back with openpyxl; the plan's workbook is also
checked to cost work in proportion to its rows.
"""

from __future__ import annotations

import cProfile
import json
import pstats
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import load_workbook
from openpyxl.worksheet.worksheet import Worksheet

from estatebot._safe_cells import XLSX_MAX_CHARS, CellWarning
from estatebot.chat.harness.results import ChatTestResults
from estatebot.errors import PlanError
from estatebot.listings.sheet.read import read_sheet
from estatebot.listings.sync.apply.backup import read_backup, read_backup_raw, write_backup
from estatebot.listings.sync.plan.operations import Change, PlannedOp
from estatebot.listings.sync.report.apply_report import (
    FAILED,
    ApplyReport,
    OpOutcome,
    outcomes_frame,
)
from estatebot.listings.sync.sync_plan import SyncPlan, plan_sync
from factories import complete_listing as listing
from factories import remote_frame, sheet_frame

FORMULAS = ["=SUM(A1)", '=HYPERLINK("http://evil.example","go")', "+1+2", "-5% off", "@SUM(A1)"]
LONG = "Sunny. " * 5_999 + "Sunny!!"  # 42,000 characters: more than a cell holds


def header_of(sheet: Worksheet) -> dict[str, int]:
    return {str(cell.value): cell.column for cell in sheet[1]}


def column_cells(sheet: Worksheet, name: str) -> list[Any]:
    column = header_of(sheet)[name]
    return [sheet.cell(row=r, column=column) for r in range(2, sheet.max_row + 1)]


# --------------------------------------------------------------------------- the plan


def hostile_plan(descriptions: list[str], **extra: Any) -> SyncPlan:
    """A plan updating listing n's Description to ``descriptions[n - 1]`` (and ``extra``)."""
    count = len(descriptions)
    remote = remote_frame(*(listing(n) for n in range(1, count + 1)))
    sheet = sheet_frame(
        *(listing(n, Description=text, **extra) for n, text in enumerate(descriptions, start=1))
    )
    return plan_sync(sheet, remote)


def test_plan_workbook_keeps_formula_text_as_marked_text(tmp_path: Path) -> None:
    plan = hostile_plan(FORMULAS)
    book = load_workbook(plan.to_excel(tmp_path / "plan.xlsx"))
    cells = column_cells(book["Update"], "Description")
    assert [c.value for c in cells] == FORMULAS
    assert all(c.data_type == "s" and c.quotePrefix for c in cells)
    # The previous value travels as a comment, and the number stays a number.
    assert [c.comment.text for c in cells] == [f"before: Home {n}" for n in range(1, 6)]
    longitudes = column_cells(book["Update"], "Longitude")
    assert all(c.data_type == "n" and c.value == -97.7431 for c in longitudes)


def test_plan_workbook_removes_control_characters_and_says_where(tmp_path: Path) -> None:
    plan = hostile_plan(["a\x0bb", "fine", "\x1b[31mred\x00"])
    with pytest.warns(CellWarning) as caught:
        path = plan.to_excel(tmp_path / "plan.xlsx")
    cells = column_cells(load_workbook(path)["Update"], "Description")
    assert [c.value for c in cells] == ["ab", "fine", "[31mred"]
    (message,) = [str(w.message) for w in caught]
    assert "plan.xlsx: 2 cells changed" in message
    assert "row 2, Description: removed 1 character a cell cannot hold (U+000B)" in message
    assert "row 4, Description: removed 2 characters a cell cannot hold (U+001B, U+0000)" in message


def test_plan_workbook_cuts_text_longer_than_a_cell_and_says_so(tmp_path: Path) -> None:
    plan = hostile_plan([LONG])
    with pytest.warns(CellWarning, match="row 2, Description: cut to 32,767 of its 42,000"):
        path = plan.to_excel(tmp_path / "plan.xlsx")
    (cell,) = column_cells(load_workbook(path)["Update"], "Description")
    assert len(cell.value) <= XLSX_MAX_CHARS
    assert cell.value.startswith("Sunny. Sunny.")
    assert cell.value.endswith("[cut: 42,000 characters in all]")
    # The saved plan, the artifact apply reads, keeps the text whole.
    saved = json.loads(plan.save(tmp_path / "plan.json").read_text(encoding="utf-8"))
    assert saved["updates"][0]["body"]["Description"] == LONG


def test_plan_with_an_infinite_price_is_refused_by_save_naming_where(tmp_path: Path) -> None:
    plan = hostile_plan(["Home 1"], SalePrice=float("inf"))
    target = tmp_path / "plan.json"
    with pytest.raises(PlanError) as raised:
        plan.save(target)
    error = raised.value
    assert (error.row, error.column, error.value) == (2, "SalePrice", float("inf"))
    assert "the update of MLSNumber M1 holds SalePrice = inf" in str(error)
    assert not target.exists()
    # The workbook has no infinite number either: it shows the text, never an empty cell.
    book = load_workbook(plan.to_excel(tmp_path / "plan.xlsx"))
    (price,) = column_cells(book["Update"], "SalePrice")
    assert price.value == "inf"


def test_a_plan_file_holding_infinity_is_refused_on_load(tmp_path: Path) -> None:
    path = hostile_plan(["=SUM(A1)"], SalePrice=460000.0).save(tmp_path / "plan.json")
    path.write_text(path.read_text().replace("460000.0", "Infinity"), encoding="utf-8")
    with pytest.raises(PlanError, match="holds Infinity"):
        SyncPlan.load(path)


def update_ops(count: int) -> SyncPlan:
    """A plan of ``count`` updates, each changing two fields, made without planning."""
    ops = []
    for n in range(count):
        before = listing(n)
        after = {**before, "SalePrice": 460000.0, "Description": f"=Home {n}, new roof"}
        changes = (
            Change("Description", before["Description"], after["Description"]),
            Change("SalePrice", 450000.0, 460000.0),
        )
        ops.append(
            PlannedOp("update", f"M{n}", "MLSNumber", n + 2, n + 1, after, before, "h", changes)
        )
    return SyncPlan(key_type="MLSNumber", updates=ops)


def calls_made(write: Callable[[Path], Path], path: Path) -> int:
    """How many Python function calls ``write(path)`` makes: work counted, not timed."""
    profile = cProfile.Profile()
    profile.runcall(write, path)
    return int(pstats.Stats(profile).total_calls)


def report_of(count: int) -> ApplyReport:
    rows = [
        OpOutcome("update", f"=M{n}", n + 2, n + 1, FAILED, 400, f"-bad price {n}")
        for n in range(count)
    ]
    return ApplyReport(frame=outcomes_frame(rows))


def results_of(count: int) -> ChatTestResults:
    return ChatTestResults(chat_frame(["=1+1"] * count))


@pytest.mark.parametrize(
    "make",
    [update_ops, report_of, results_of],
    ids=["plan with updates", "report with failed rows", "chat results with failures"],
)
def test_workbooks_cost_work_in_proportion_to_their_rows(
    make: Callable[[int], Any], tmp_path: Path
) -> None:
    # Four times the rows must cost about four times the calls. Writing took work in proportion
    # to the square of the rows (each row's cells were found again by scanning every cell
    # written so far): then four times the rows cost about ten times the calls, and more.
    small = calls_made(make(150).to_excel, tmp_path / "small.xlsx")
    large = calls_made(make(600).to_excel, tmp_path / "large.xlsx")
    assert large < 5.5 * small, (small, large)


# --------------------------------------------------------------------------- the apply report


def test_report_workbook_keeps_keys_and_messages_as_text(tmp_path: Path) -> None:
    outcomes = [
        OpOutcome("update", text, n + 2, n + 1, FAILED, 400, text)
        for n, text in enumerate(FORMULAS)
    ]
    outcomes.append(OpOutcome("update", "M9", 9, 9, FAILED, 400, "bad\x0bvalue\x1b"))
    outcomes.append(OpOutcome("create", "M10", 10, None, FAILED, 500, LONG))
    report = ApplyReport(frame=outcomes_frame(outcomes))
    with pytest.warns(CellWarning) as caught:
        path = report.to_excel(tmp_path / "report.xlsx")
    sheet = load_workbook(path)["Report"]
    keys = column_cells(sheet, "key")
    messages = column_cells(sheet, "message")
    assert [c.value for c in keys[:5]] == FORMULAS
    assert all(c.data_type == "s" and c.quotePrefix for c in keys[:5] + messages[:5])
    assert messages[5].value == "badvalue"
    assert messages[6].value.endswith("[cut: 42,000 characters in all]")
    assert all(str(c.fill.fgColor.rgb).endswith("FFC7CE") for c in keys)  # failed rows still red
    (message,) = [str(w.message) for w in caught]
    assert "row 7, message: removed 2 characters" in message
    assert "row 8, message: cut to 32,767 of its 42,000 characters" in message


# --------------------------------------------------------------------------- chat results


def chat_frame(answers: list[str], questions: list[str] | None = None) -> pd.DataFrame:
    count = len(answers)
    return pd.DataFrame(
        {
            "case": [f"case {n}" for n in range(count)],
            "conversation": [None] * count,
            "question": questions or [f"question {n}" for n in range(count)],
            "answer": answers,
            "no_answer": [False] * count,
            "tokens": [10] * count,
            "latency_ms": [12.5] * count,
            "session_id": [1] * count,
            "message_id": list(range(count)),
            "attempts": [1] * count,
            "error": [None] * count,
            "why": ["did not contain Austin"] * count,
            "passed": [False] * count,
        }
    )


def test_chat_results_keep_formula_text_as_text_and_read_back_exactly(tmp_path: Path) -> None:
    results = ChatTestResults(chat_frame(FORMULAS, questions=[f"@{t}" for t in FORMULAS]))
    path = results.to_excel(tmp_path / "results.xlsx")
    sheet = load_workbook(path)["results"]
    cells = column_cells(sheet, "answer") + column_cells(sheet, "question")
    assert all(c.data_type == "s" and c.quotePrefix for c in cells)
    back = ChatTestResults.from_excel(path)
    pd.testing.assert_frame_equal(back.frame, results.frame)


def test_chat_results_remove_control_characters_and_cut_long_answers(tmp_path: Path) -> None:
    results = ChatTestResults(chat_frame(["\x1b[1mBold\x1b[0m answer", LONG, "fine"]))
    with pytest.warns(CellWarning) as caught:
        path = results.to_excel(tmp_path / "results.xlsx")
    answers = [c.value for c in column_cells(load_workbook(path)["results"], "answer")]
    assert answers[0] == "[1mBold[0m answer"
    assert answers[1].endswith("[cut: 42,000 characters in all]")
    assert answers[2] == "fine"
    (message,) = [str(w.message) for w in caught]
    assert "row 2, answer: removed 2 characters" in message
    assert "row 3, answer: cut to 32,767" in message


# --------------------------------------------------------------------------- backups


@pytest.mark.parametrize("suffix", [".json", ".xlsx"])
def test_a_backup_holds_an_infinite_number_and_reads_it_back(tmp_path: Path, suffix: str) -> None:
    frame = remote_frame(listing(1, SalePrice=float("inf")), listing(2, Longitude=-97.7431))
    raw = [{"SalePrice": float("inf"), "MLSNumber": "M1"}, None]
    path = write_backup(frame, tmp_path / f"backup{suffix}", serial="demo-serial", raw=raw)
    if suffix == ".json":
        # Strict JSON: no bare Infinity token, which most readers refuse.
        json.loads(path.read_text(encoding="utf-8"), parse_constant=pytest.fail)
    back = read_backup(path)
    assert back["SalePrice"].tolist() == [float("inf"), 450000.0]
    assert back["Longitude"].tolist() == [-97.7431, -97.7431]
    assert read_backup_raw(path) == [{"SalePrice": "Infinity", "MLSNumber": "M1"}, None]


# --------------------------------------------------------------------------- the sheet read


def test_a_sheet_written_to_excel_keeps_formula_text_as_text_and_names_removed_characters(
    tmp_path: Path,
) -> None:
    rows = [
        {**listing(1), "Description": "=SUM(A1) and a\x0bb"},
        {**listing(2), "Description": "-5% off", "City": "@Austin"},
    ]
    sheet = read_sheet(pd.DataFrame(rows))
    with pytest.warns(CellWarning, match=r"row 2, Description: removed 1 character .*U\+000B"):
        path = sheet.to_excel(tmp_path / "sheet.xlsx")
    listings = load_workbook(path)["Listings"]
    cells = column_cells(listings, "Description") + column_cells(listings, "City")
    assert [c.value for c in cells] == ["=SUM(A1) and ab", "-5% off", "Austin", "@Austin"]
    assert [c.quotePrefix for c in cells] == [True, True, False, True]
    assert all(c.data_type == "s" for c in cells)
