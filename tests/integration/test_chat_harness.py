"""run_chat_tests against the real emulator: expectations, sessions, rate limits, files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest

from estatebot.api.client import Client
from estatebot.chat.harness.comparison import compare_chat_runs
from estatebot.chat.harness.results import ChatTestResults, main_exit_code
from estatebot.chat.harness.running import run_chat_tests

AUSTIN = "3 bed homes for sale in Austin"
DENVER_RENTALS = "rentals in Denver"
MIAMI = "homes for sale in Miami under $1,000,000"
OFF_TOPIC = "What is the weather like on Mars?"

#: Each expectation type once passing and once failing against the demo chatbot's real answers.
BATCH: list[dict[str, Any]] = [
    {"name": "contains ok", "question": AUSTIN, "expect_contains": "austin|ATX1001"},
    {"name": "contains bad", "question": AUSTIN, "expect_contains": ["Austin", "Denver"]},
    {"name": "not ok", "question": DENVER_RENTALS, "expect_not_contains": "Austin|Miami"},
    {"name": "not bad", "question": DENVER_RENTALS, "expect_not_contains": "den2003"},
    {"name": "regex ok", "question": MIAMI, "expect_regex": r"MLS# MIA\d{4}|\$\d{3},\d{3}"},
    {"name": "regex bad", "question": MIAMI, "expect_regex": r"MLS# (ATX|DEN)\d+"},
    {"name": "none ok", "question": OFF_TOPIC, "expect_no_answer": "TRUE"},
    {"name": "none bad", "question": "Hello!", "expect_no_answer": "yes"},
    {"name": "fast ok", "question": AUSTIN, "max_latency_ms": "10000"},
    {"name": "fast bad", "question": AUSTIN, "max_latency_ms": "0.001"},
    {"name": "cheap ok", "question": AUSTIN, "max_tokens": "100000"},
    {"name": "cheap bad", "question": AUSTIN, "max_tokens": "1"},
]


def test_every_expectation_passes_and_fails_on_real_answers(client: Client, emulator: Any) -> None:
    results = run_chat_tests(client, emulator.serial, BATCH, concurrency=4, progress=False)
    frame = results.frame.set_index("case")
    assert list(frame.index) == [case["name"] for case in BATCH]
    assert frame["error"].isna().all()
    expected_pass = {name: name.endswith(" ok") for name in frame.index}
    assert frame["passed"].to_dict() == expected_pass
    checks = {
        "contains": "expect_contains_pass",
        "not": "expect_not_contains_pass",
        "regex": "expect_regex_pass",
        "none": "expect_no_answer_pass",
        "fast": "max_latency_ms_pass",
        "cheap": "max_tokens_pass",
    }
    for name, row in frame.iterrows():
        column = checks[str(name).split()[0]]
        assert row[column] == expected_pass[str(name)], name
        # Only the case's own expectation is judged; the others are NA.
        others = [c for c in checks.values() if c != column]
        assert row[others].isna().all(), name
    assert frame.loc["contains bad", "why"] == "expect_contains: 'Denver' not found"
    assert frame.loc["not bad", "why"] == "expect_not_contains: 'den2003' found"
    assert "ATX|DEN" in frame.loc["regex bad", "why"]
    assert frame.loc["none bad", "why"] == "expect_no_answer: expected true, got false"
    assert frame.loc["fast bad", "why"].startswith("max_latency_ms: took")
    assert frame.loc["cheap bad", "why"].startswith("max_tokens: used")
    assert "Sunny Homes" in frame.loc["none bad", "answer"]  # the WelcomeMessage
    assert bool(frame.loc["none ok", "no_answer"]) is True
    assert not results.ok
    assert main_exit_code(results) == 1


def test_summary_agrees_with_the_frame(client: Client, emulator: Any) -> None:
    results = run_chat_tests(client, emulator.serial, BATCH[:6], progress=False)
    frame, summary = results.frame, results.summary()
    assert summary["cases"] == len(results) == 6
    assert summary["passed"] == int(frame["passed"].sum()) == 3
    assert summary["failed"] == 3
    assert summary["errors"] == 0
    assert summary["pass_rate"] == pytest.approx(0.5)
    assert summary["tokens_total"] == int(frame["tokens"].sum()) > 0
    assert summary["tokens_mean"] == pytest.approx(frame["tokens"].mean())
    assert summary["latency_max_ms"] == pytest.approx(frame["latency_ms"].max())
    p50, p90, p99 = (summary[f"latency_p{q}_ms"] for q in (50, 90, 99))
    assert p50 is not None
    assert p90 is not None
    assert p99 is not None
    assert 0 < p50 <= p90 <= p99 <= frame["latency_ms"].max()
    assert "not bad" in results._repr_html_()


def test_all_passing_run_exits_zero(client: Client, emulator: Any) -> None:
    cases = [c for c in BATCH if c["name"].endswith(" ok")]
    results = run_chat_tests(client, emulator.serial, cases, progress=False)
    assert results.ok
    assert main_exit_code(results) == 0


def test_conversations_share_one_session_in_order(client: Client, emulator: Any) -> None:
    cases = [
        {"question": "Hello", "conversation": "a"},
        {"question": AUSTIN},
        {"question": DENVER_RENTALS, "conversation": "b"},
        {"question": MIAMI, "conversation": "a"},
        {"question": OFF_TOPIC},
        {"question": "thanks!", "conversation": "a"},
        {"question": AUSTIN, "conversation": "b"},
    ]
    frame = run_chat_tests(client, emulator.serial, cases, concurrency=4, progress=False).frame
    assert frame["error"].isna().all()
    sessions = list(frame["session_id"])
    a, b = [sessions[i] for i in (0, 3, 5)], [sessions[i] for i in (2, 6)]
    assert len(set(a)) == 1
    assert len(set(b)) == 1
    # Two conversations and two lone cases: four distinct sessions.
    assert len({a[0], b[0], sessions[1], sessions[4]}) == 4
    # In order within a conversation: its message ids grow case after case.
    ids = list(frame["message_id"])
    assert ids[0] < ids[3] < ids[5]
    assert ids[2] < ids[6]
    assert list(frame["conversation"].fillna("")) == ["a", "", "b", "a", "", "a", "b"]


def test_rate_limits_are_waited_out_then_recorded(client: Client, emulator: Any) -> None:
    client.chatbots.edit(emulator.serial, RateLimitCount=2, RateLimitTime=2)
    # Three questions per session within two seconds: every third one is turned away once.
    cases = [
        {"question": q, "conversation": conversation, "expect_contains": city}
        for conversation in ("x", "y")
        for q, city in ((AUSTIN, "Austin"), (DENVER_RENTALS, "Denver"), (MIAMI, "Miami"))
    ]
    results = run_chat_tests(client, emulator.serial, cases, concurrency=2, progress=False)
    frame = results.frame
    assert results.ok, frame[["question", "attempts", "error"]]
    assert (frame["attempts"] > 1).any()
    assert set(frame["attempts"]) <= {1, 2, 3, 4}

    again = run_chat_tests(
        client,
        emulator.serial,
        [*cases[:3], {"question": OFF_TOPIC, "expect_no_answer": True}],
        rate_limit_retries=0,
        progress=False,
    ).frame
    assert list(again["attempts"]) == [1, 1, 1, 1]
    assert "RateLimitError" in again.loc[2, "error"]
    assert not again.loc[2, "passed"]
    # The rest of the run went on.
    assert list(again["passed"]) == [True, True, False, True]
    assert again.loc[[0, 1, 3], "error"].isna().all()


def test_cases_from_xlsx_and_results_to_excel(
    client: Client, emulator: Any, tmp_path: Path
) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["ID", "Question", "Expect Contains", "Expect No Answer", "Max Tokens"])
    sheet.append(["t1", AUSTIN, "Austin | ATX1001", None, 100000])
    sheet.append(["t2", OFF_TOPIC, None, True, None])
    sheet.append(["t3", DENVER_RENTALS, "Miami", False, None])
    cases_path = tmp_path / "cases.xlsx"
    book.save(cases_path)

    results = run_chat_tests(client, emulator.serial, cases_path, progress=False)
    frame = results.frame
    assert list(frame["case"]) == ["t1", "t2", "t3"]
    assert list(frame["passed"]) == [True, True, False]
    assert list(frame["expect_no_answer_pass"]) == [pd.NA, True, True]
    assert list(frame["max_tokens_pass"]) == [True, pd.NA, pd.NA]

    out = tmp_path / "results.xlsx"
    results.to_excel(out)
    written = openpyxl.load_workbook(out)
    assert written.sheetnames == ["results", "summary"]
    rows = written["results"]
    header = [cell.value for cell in rows[1]]
    assert header == list(frame.columns)
    fills = [rows.cell(row=r, column=1).fill.start_color.rgb for r in (2, 3, 4)]
    assert fills[0] == fills[1] != fills[2]  # only the failed row is highlighted
    summary = {r[0].value: r[1].value for r in written["summary"].iter_rows(min_row=2)}
    assert summary["cases"] == 3
    assert summary["passed"] == 2
    assert summary["failed"] == 1

    back = ChatTestResults.from_excel(out)
    pd.testing.assert_frame_equal(back.frame, frame)
    assert compare_chat_runs(out, results).empty


def test_compare_runs_after_changing_the_answer_suffix(
    client: Client, emulator: Any, tmp_path: Path
) -> None:
    suffix = "Call Sunny Homes at 555-0100."
    common = [
        {"name": "rentals", "question": DENVER_RENTALS, "expect_contains": "Denver"},
        {"name": "no phone", "question": AUSTIN, "expect_not_contains": "555-0100"},
        {"name": "phone", "question": MIAMI, "expect_contains": "555-0100"},
    ]
    dropped = {"name": "dropped", "question": OFF_TOPIC}
    added = {"name": "added", "question": "Hello"}
    old = run_chat_tests(client, emulator.serial, [*common, dropped], progress=False)
    old.to_excel(tmp_path / "old.xlsx")
    client.chatbots.edit(emulator.serial, AnswerSuffix=suffix)
    new = run_chat_tests(client, emulator.serial, [added, *common], progress=False)

    changes = compare_chat_runs(tmp_path / "old.xlsx", new).set_index("case")
    assert changes["change"].to_dict() == {
        "added": "added",
        "rentals": "answer changed",
        "no phone": "now failing",
        "phone": "now passing",
        "dropped": "removed",
    }
    assert list(changes.columns) == [
        "question",
        "old_passed",
        "new_passed",
        "change",
        "old_answer",
        "new_answer",
    ]
    assert changes.loc["rentals", "new_answer"].endswith(suffix)
    assert not changes.loc["rentals", "old_answer"].endswith(suffix)
    assert changes.loc["no phone", "old_passed"]
    assert not changes.loc["no phone", "new_passed"]
    assert pd.isna(changes.loc["added", "old_passed"])
    assert pd.isna(changes.loc["dropped", "new_answer"])
    # Same inputs, same frames: nothing changed.
    assert compare_chat_runs(new.frame, new).empty
