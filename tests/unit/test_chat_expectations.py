"""Chat test cases: parsing, validation and every expectation check, with no service involved."""

from __future__ import annotations

import io
import re
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from tqdm.auto import tqdm

from estatebot.api.models import Answer
from estatebot.chat.harness import running
from estatebot.chat.harness.case_cells import parse_bool, split_values
from estatebot.chat.harness.cases import ChatCase, load_cases
from estatebot.chat.harness.checks import Observed, judge
from estatebot.chat.harness.comparison import compare_chat_runs
from estatebot.chat.harness.results import ChatTestResults, main_exit_code
from estatebot.chat.harness.running import rate_limit_wait, run_chat_tests
from estatebot.errors import NotFoundError, RateLimitError, SheetError

ANSWER = "We have a 3 bed, 2 bath home in Austin, TX for $450,000 (MLS AUS-1001)."


def observed(answer: str = ANSWER, *, no_answer: bool = False, tokens: int = 120) -> Observed:
    return Observed(answer=answer, no_answer=no_answer, tokens=tokens, latency_ms=250.0)


def one(**record: Any) -> ChatCase:
    return load_cases([{"question": "3 bed homes in Austin?", **record}])[0]


# --------------------------------------------------------------------------- each expectation


@pytest.mark.parametrize(
    ("record", "passes", "why"),
    [
        ({"expect_contains": "austin"}, True, ""),
        ({"expect_contains": "Austin|3 bed|$450,000"}, True, ""),
        ({"expect_contains": ["AUSTIN", "mls aus-1001"]}, True, ""),
        ({"expect_contains": "Austin|Denver"}, False, "expect_contains: 'Denver' not found"),
        ({"expect_not_contains": "Denver|Miami"}, True, ""),
        ({"expect_not_contains": ["denver", "austin"]}, False, "'austin' found"),
        ({"expect_regex": r"\d+ bed"}, True, ""),
        ({"expect_regex": r"(Austin|Denver), (TX|CO)"}, True, ""),
        ({"expect_regex": r"\$\d{3},\d{3}|^We"}, True, ""),
        ({"expect_regex": r"\d+ bed|Denver"}, False, "expect_regex: 'Denver' did not match"),
        ({"expect_no_answer": "no"}, True, ""),
        ({"expect_no_answer": "TRUE"}, False, "expect_no_answer: expected true, got false"),
        ({"max_latency_ms": "1000"}, True, ""),
        ({"max_latency_ms": 100}, False, "max_latency_ms: took 250 ms, limit 100 ms"),
        ({"max_tokens": "120"}, True, ""),
        ({"max_tokens": "100.0"}, False, "max_tokens: used 120 tokens, limit 100"),
    ],
)
def test_each_expectation_passes_and_fails(record: dict[str, Any], passes: bool, why: str) -> None:
    case = one(**record)
    verdict = judge(case, observed())
    (expectation,) = case.expectations()
    assert verdict.checks == {expectation: passes}
    assert verdict.passed is passes
    assert why in "; ".join(verdict.failures)
    if passes:
        assert verdict.failures == ()


def test_no_answer_expectation_true_against_a_no_answer() -> None:
    verdict = judge(one(expect_no_answer=True), observed("Sorry, I can't help.", no_answer=True))
    assert verdict.checks == {"expect_no_answer": True}


def test_several_failures_are_all_named() -> None:
    case = one(expect_contains="Denver", expect_not_contains="Austin", max_tokens=5)
    verdict = judge(case, observed())
    assert verdict.checks == {
        "expect_contains": False,
        "expect_not_contains": False,
        "max_tokens": False,
    }
    assert len(verdict.failures) == 3


def test_case_without_expectations_passes() -> None:
    case = one()
    assert case.expectations() == ()
    assert judge(case, observed("")).passed


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a|b", ("a", "b")),
        (" a | b |", ("a", "b")),
        (r"a\|b|c", ("a|b", "c")),
        (["x|y", " z "], ("x|y", "z")),
        (("p",), ("p",)),
        ("", ()),
        (None, ()),
        (float("nan"), ()),
    ],
)
def test_split_values_plain(value: Any, expected: tuple[str, ...]) -> None:
    assert split_values(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a|b", ("a", "b")),
        ("(a|b)|c", ("(a|b)", "c")),
        ("[|]x|y", ("[|]x", "y")),
        (r"a\|b", (r"a\|b",)),
    ],
)
def test_split_values_regex_keeps_groups_and_escapes(value: str, expected: tuple[str, ...]) -> None:
    assert split_values(value, regex=True) == expected


def test_regex_is_case_insensitive() -> None:
    (pattern,) = one(expect_regex="austin, tx").expect_regex
    assert pattern.flags & re.IGNORECASE


@pytest.mark.parametrize("text", ["TRUE", "true", "Yes", "y", "1", "on", "T", 1, True, 1.0])
def test_parse_bool_true(text: Any) -> None:
    assert parse_bool(text) is True


@pytest.mark.parametrize("text", ["FALSE", "false", "No", "n", "0", "off", "F", 0, False])
def test_parse_bool_false(text: Any) -> None:
    assert parse_bool(text) is False


def test_parse_bool_blank_is_no_expectation() -> None:
    assert parse_bool("  ") is None
    assert one(expect_no_answer="").expect_no_answer is None


# --------------------------------------------------------------------------- validation


def test_missing_question_names_row_and_column() -> None:
    frame = pd.DataFrame({"question": ["Hi", "  "], "expect_contains": ["a", "b"]})
    with pytest.raises(SheetError) as info:
        load_cases(frame)
    assert (info.value.row, info.value.column) == (1, "question")
    assert "row 1" in str(info.value)


def test_missing_question_column() -> None:
    with pytest.raises(SheetError, match="question"):
        load_cases(pd.DataFrame({"name": ["a"]}))


def test_unknown_column_suggests_the_close_one() -> None:
    with pytest.raises(SheetError, match="did you mean 'expect_contains'") as info:
        load_cases([{"question": "Hi"}, {"question": "Hi", "expect_contain": "x"}])
    assert (info.value.row, info.value.column) == (1, "expect_contain")


def test_invalid_regex_names_row_column_value() -> None:
    with pytest.raises(SheetError, match="expect_regex") as info:
        load_cases(pd.DataFrame({"question": ["a", "b"], "expect_regex": ["ok", "(unclosed"]}))
    assert info.value.row == 1
    assert info.value.column == "expect_regex"
    assert info.value.value == "(unclosed"


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("max_latency_ms", "fast"),
        ("max_latency_ms", "-5"),
        ("max_tokens", "12.5"),
        ("expect_no_answer", "maybe"),
    ],
)
def test_bad_values_are_value_errors_naming_the_cell(column: str, value: str) -> None:
    with pytest.raises(ValueError, match=column) as info:
        load_cases([{"question": "Hi", column: value}])
    assert isinstance(info.value, SheetError)
    assert (info.value.row, info.value.column, info.value.value) == (0, column, value)


def test_csv_rows_are_named_as_in_the_sheet(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_text("Question,Max Latency MS\nHi,100\nHello,slow\n")
    with pytest.raises(SheetError) as info:
        load_cases(path)
    # The header is row 1, so the second case is row 3, as a spreadsheet shows it.
    assert (info.value.row, info.value.column, info.value.value) == (3, "max_latency_ms", "slow")


def test_duplicate_names_are_rejected() -> None:
    with pytest.raises(SheetError, match="not unique"):
        load_cases([{"question": "a", "name": "x"}, {"question": "b", "id": "x"}])


def test_frames_are_not_modified_and_headers_are_normalized() -> None:
    frame = pd.DataFrame({"Question": ["Hi"], "Expect Contains": ["a|b"], "ID": [7.0]})
    before = frame.copy()
    (case,) = load_cases(frame)
    assert (case.question, case.expect_contains, case.name) == ("Hi", ("a", "b"), "7")
    pd.testing.assert_frame_equal(frame, before)


# ------------------------------------------------------------- runner, stand-in client


class FakeChat:
    """Answers ``echo: <question>``; raises what ``script`` says for a question, in turn."""

    def __init__(self, script: dict[str, list[Exception]]) -> None:
        self.script = script
        self.sessions = 0
        self.lock = threading.Lock()
        self.asked: list[tuple[int, str]] = []

    def create_session(self, serial: str) -> int:
        with self.lock:
            self.sessions += 1
            return self.sessions

    def ask(self, session_id: int, content: str, *, timeout: float | None = None) -> Answer:
        with self.lock:
            self.asked.append((session_id, content))
            pending = self.script.get(content, [])
            if pending:
                raise pending.pop(0)
        return Answer.model_validate({"messageid": 1, "content": f"echo: {content}"})


class FakeClient:
    def __init__(self, script: dict[str, list[Exception]] | None = None) -> None:
        self.chat = FakeChat(script or {})


def limited(retry_after: float | None = 0.0) -> RateLimitError:
    return RateLimitError("slow down", operation="ClientAsk", code=429, retry_after=retry_after)


def test_rate_limits_are_retried_and_other_errors_recorded() -> None:
    client = FakeClient(
        {
            "a": [limited(), limited()],
            "b": [limited(), limited(), limited()],
            "c": [NotFoundError("gone", operation="ClientAsk", code=404)],
        }
    )
    cases = [{"question": q, "expect_contains": q} for q in ("a", "b", "c", "d")]
    results = run_chat_tests(client, "s", cases, rate_limit_retries=2, progress=False)
    frame = results.frame
    assert list(frame["question"]) == ["a", "b", "c", "d"]
    assert list(frame["attempts"]) == [3, 3, 1, 1]
    assert list(frame["passed"]) == [True, False, False, True]
    assert "gave up after 3 attempts" in frame.loc[1, "error"]
    assert "NotFoundError" in frame.loc[2, "error"]
    assert results.summary()["errors"] == 2
    assert main_exit_code(results) == 1


def test_rate_limit_wait_honours_retry_after_and_caps() -> None:
    assert rate_limit_wait(2.0, 1, 60.0) == 2.0
    assert rate_limit_wait(120.0, 1, 60.0) == 60.0
    assert rate_limit_wait(None, 1, 60.0) == 1.0
    assert rate_limit_wait(None, 3, 60.0) == 4.0
    assert rate_limit_wait(None, 10, 5.0) == 5.0


def test_conversations_share_a_session_in_order() -> None:
    client = FakeClient()
    cases = [
        {"question": "1", "conversation": "c"},
        {"question": "x"},
        {"question": "2", "conversation": "c"},
        {"question": "3", "conversation": "c"},
    ]
    frame = run_chat_tests(client, "s", cases, concurrency=3, progress=False).frame
    assert frame.loc[0, "session_id"] == frame.loc[2, "session_id"] == frame.loc[3, "session_id"]
    assert frame.loc[1, "session_id"] != frame.loc[0, "session_id"]
    conversation = [q for sid, q in client.chat.asked if sid == frame.loc[0, "session_id"]]
    assert conversation == ["1", "2", "3"]


def test_empty_run_keeps_columns_and_fails_the_exit_code() -> None:
    results = run_chat_tests(FakeClient(), "s", [], progress=False)
    assert list(results.frame.columns)[:3] == ["case", "conversation", "question"]
    assert len(results) == 0
    assert main_exit_code(results) == 1


def test_compare_rejects_duplicate_keys() -> None:
    frame = run_chat_tests(FakeClient(), "s", ["a", "a"], progress=False).frame
    with pytest.raises(ValueError, match="name them"):
        compare_chat_runs(frame, frame)


def test_html_escapes_answers() -> None:
    results = run_chat_tests(
        FakeClient(), "s", [{"question": "<b>x</b>", "expect_contains": "zzz"}], progress=False
    )
    page = results._repr_html_()
    assert "&lt;b&gt;x&lt;/b&gt;" in page
    assert "<b>x</b>" not in page
    assert isinstance(results, ChatTestResults)


async def test_runs_inside_a_running_event_loop() -> None:
    # As in a notebook cell: an event loop is running, and the harness must not start another.
    results = run_chat_tests(FakeClient(), "s", ["a", "b"], concurrency=2, progress=False)
    assert list(results.frame["answer"]) == ["echo: a", "echo: b"]


def test_progress_bar_counts_every_case(monkeypatch: pytest.MonkeyPatch) -> None:
    bars: list[tqdm[Any]] = []

    def recording_bar(total: int | None, desc: str, **_: Any) -> tqdm[Any]:
        bars.append(tqdm(total=total, desc=desc, file=io.StringIO()))
        return bars[-1]

    monkeypatch.setattr(running, "progress_bar", recording_bar)
    cases = [{"question": str(i), "conversation": "c" if i % 2 else None} for i in range(5)]
    run_chat_tests(FakeClient(), "s", cases, concurrency=3)
    (bar,) = bars
    assert (bar.total, bar.n) == (5, 5)
