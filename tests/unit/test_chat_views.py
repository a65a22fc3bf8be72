"""What a person sees of chat results, comparisons and panel failures, checked on the HTML."""

from __future__ import annotations

import html
import re
from datetime import datetime, timedelta
from typing import Any

import httpx
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from estatebot.api.client import Client
from estatebot.api.models import Answer
from estatebot.chat.harness.comparison import compare_chat_runs
from estatebot.chat.harness.comparison_html import word_diff_html
from estatebot.chat.harness.naming import is_default_name
from estatebot.chat.harness.results import ChatTestResults
from estatebot.chat.harness.running import run_chat_tests
from estatebot.chat.panel import ChatPanel
from estatebot.chat.panel.failures import CLIENT_CLOSED, describe_failure
from estatebot.chat.panel.render import error_html, retry_text, turn_html
from estatebot.chat.panel.turns import Turn
from estatebot.chat.textview import latency_text, safe_text
from estatebot.errors import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    NotFoundError,
    RateLimitError,
    ServerError,
)

API_KEY = "test-api-key-views-0123456789"
SESSION_KEY = "test-session-key-views-0123456789"
SERIAL = "3254a9d0424c4806b9ea3d0763ccf1bf"


class ScriptedChat:
    """Answers each question with the text scripted for it (an echo otherwise)."""

    def __init__(self, answers: dict[str, str], latency_ms: float = 0.0) -> None:
        self.answers = answers
        self._sessions = 0

    def create_session(self, serial: str) -> int:
        self._sessions += 1
        return 100000 + self._sessions

    def ask(self, session_id: int, content: str, **_: Any) -> Answer:
        text = self.answers.get(content, f"echo: {content}")
        return Answer(messageid=1, content=text, totalToken=42, noAnswer=False)


class ScriptedClient:
    def __init__(self, answers: dict[str, str] | None = None) -> None:
        self.chat = ScriptedChat(answers or {})


def run(cases: list[Any], answers: dict[str, str] | None = None) -> ChatTestResults:
    return run_chat_tests(ScriptedClient(answers), SERIAL, cases, progress=False)


def cell_texts(page: str) -> list[str]:
    return re.findall(r"<td[^>]*>(.*?)</td>", page, flags=re.S)


# --------------------------------------------------------------------------- results


def test_answers_with_dollars_and_markup_are_shown_as_written_and_never_typeset() -> None:
    answer = "Two homes: $650,000 and $700,000 <b>now</b> & *bold* _it_\nSecond line"
    results = run([{"question": "q", "expect_contains": "homes"}], {"q": answer})
    page = results._repr_html_()
    # No dollar sign reaches the page as such: MathJax would pair them into math.
    assert "$" not in page.split("</style>", 1)[1]
    assert "&#36;650,000 and &#36;700,000" in page
    assert "&lt;b&gt;now&lt;/b&gt; &amp; &#42;bold&#42; &#95;it&#95;<br>Second line" in page
    assert "<b>now</b>" not in page
    # The whole view sits in an element MathJax skips (v2 and v3 class names).
    assert re.search(r'class="eb-results tex2jax_ignore mathjax_ignore"', page)


def test_results_colour_pass_and_fail_and_round_latencies() -> None:
    results = run(
        [
            {"question": "ok", "expect_contains": "echo"},
            {"question": "bad", "expect_contains": "nowhere"},
        ]
    )
    frame = results.frame.assign(latency_ms=pd.array([12.810007, 12810.007], dtype="Float64"))
    page = ChatTestResults(frame)._repr_html_()
    assert 'class="eb-outcome eb-outcome-pass">PASS' in page
    assert 'class="eb-outcome eb-outcome-fail">FAIL' in page
    assert 'tr class="eb-fail"' in page
    assert ">13 ms<" in page
    assert ">12.8 s<" in page
    assert "12.810007" not in page
    # Colours come from the notebook's theme, not fixed white cards.
    assert "var(--jp-success-color1" in page
    assert "var(--jp-error-color1" in page
    assert "#ffffff;" not in page.replace("color: #ffffff", "")


@pytest.mark.parametrize(
    ("ms", "shown"),
    [
        (12.810007, "13 ms"),
        (999.4, "999 ms"),
        (1000, "1.0 s"),
        (12810.007, "12.8 s"),
        (61_000, "1 min 01 s"),
        (None, ""),
    ],
)
def test_latency_is_rounded_for_reading(ms: float | None, shown: str) -> None:
    assert latency_text(ms) == shown


def test_safe_text_escapes_every_special_and_breaks_lines() -> None:
    assert safe_text("a$b<c&d*e_f\\g") == "a&#36;b&lt;c&amp;d&#42;e&#95;f&#92;g"
    assert safe_text("one\r\ntwo\nthree") == "one<br>two<br>three"
    assert safe_text(None) == ""
    assert safe_text(pd.NA) == ""


def test_unnamed_cases_are_named_by_row_in_the_frame_the_view_and_the_workbook(
    tmp_path: Any,
) -> None:
    results = run(["first", {"question": "second", "name": "named"}, "third"])
    assert list(results.frame["case"]) == ["row 1", "named", "row 3"]
    assert results.frame["case"].notna().all()
    assert ">row 1<" in results._repr_html_()
    back = ChatTestResults.from_excel(results.to_excel(tmp_path / "r.xlsx"))
    assert list(back.frame["case"]) == ["row 1", "named", "row 3"]


def test_a_cases_file_names_unnamed_cases_by_their_spreadsheet_row(tmp_path: Any) -> None:
    path = tmp_path / "cases.csv"
    path.write_text("question,name\nfirst,\nsecond,b\n")
    assert list(run(str(path)).frame["case"]) == ["row 2", "b"]  # the header is row 1


def test_a_given_frame_with_blank_cases_gets_row_names() -> None:
    frame = run(["a", "b"]).frame.assign(case=pd.array([None, ""], dtype="string"))
    assert list(ChatTestResults(frame).frame["case"]) == ["row 1", "row 2"]


def test_default_names_still_pair_cases_by_question_when_rows_move() -> None:
    old = run(["a", "b"])
    new = run(["new first", "a", "b"], {"b": "a different answer"})
    changes = compare_chat_runs(old, new)
    assert is_default_name("row 2")
    assert not is_default_name("row two")
    assert list(changes["change"]) == ["added", "answer changed"]
    assert list(changes["question"]) == ["new first", "b"]


def test_plot_draws_latency_per_case_and_the_pass_rate() -> None:
    from matplotlib.figure import Figure

    results = run(
        [{"question": "ok", "expect_contains": "echo"}, {"question": "x", "expect_contains": "zz"}]
    )
    figure = results.plot()
    assert isinstance(figure, Figure)
    latency, rate = figure.axes
    assert [t.get_text() for t in latency.get_yticklabels()] == ["row 1", "row 2"]
    assert len(latency.patches) == 2
    assert rate.get_title() == "50% passed"


# --------------------------------------------------------------------------- comparison


def test_comparison_is_still_a_frame_and_shows_a_word_diff() -> None:
    old = run(
        [{"question": "q", "name": "n", "expect_contains": "$650k"}], {"q": "Homes at $650k now"}
    )
    new = run(
        [{"question": "q", "name": "n", "expect_contains": "$650k"}], {"q": "Homes at $700k now"}
    )
    changes = compare_chat_runs(old, new)
    assert isinstance(changes, pd.DataFrame)
    assert changes.loc[0, "change"] == "now failing"
    assert changes.set_index("case").loc["n", "new_answer"] == "Homes at $700k now"
    page = changes._repr_html_()
    assert "<del>&#36;650k</del><ins>&#36;700k</ins>" in page
    assert "Homes at " in page
    assert " now" in page
    assert 'eb-change-worse">now failing' in page
    assert "pass → fail" in page
    assert "tex2jax_ignore mathjax_ignore" in page


def test_word_diff_escapes_both_sides() -> None:
    assert word_diff_html("<a>", "<b>") == "<del>&lt;a&gt;</del><ins>&lt;b&gt;</ins>"
    assert word_diff_html("same", "same") == "same"


# --------------------------------------------------------------------------- panel failures


@pytest.mark.parametrize(
    ("exc", "title"),
    [
        (
            APITimeoutError("no reply within 30 s", operation="ClientAsk"),
            "The service did not answer in time",
        ),
        (
            APIConnectionError("connect failed", operation="ClientAsk"),
            "Could not reach the service",
        ),
        (
            AuthenticationError("bad key", operation="ClientAsk", code=401, status_code=401),
            "The API key was refused",
        ),
        (
            NotFoundError("no such session", operation="ClientAsk", code=404, status_code=404),
            "The chatbot or chat session was not found (HTTP 404)",
        ),
        (
            ServerError("boom", operation="ClientAsk", code=500, status_code=500),
            "The service failed (HTTP 500)",
        ),
        (RuntimeError("Cannot send a request, as the client has been closed."), CLIENT_CLOSED),
        (KeyError("x"), "Something went wrong"),
    ],
)
def test_failures_are_told_in_words(exc: Exception, title: str) -> None:
    assert describe_failure(exc).title == title


def test_a_refused_key_says_which_and_how_to_set_it() -> None:
    hint = "the service refused the API key (HTTP 401): pass api_key= or set ESTATEBOT_API_KEY"
    refused = AuthenticationError(
        "Unauthorized", operation="ClientAsk", code=401, status_code=401, hint=hint
    )
    failure = describe_failure(refused)
    assert failure.title == "The API key was refused"
    assert failure.detail == f"Unauthorized; {hint}"


def test_a_rate_limit_counts_down_and_then_says_retry_is_possible() -> None:
    failure = describe_failure(
        RateLimitError("Slow down", operation="ClientAsk", code=429, retry_after=12)
    )
    assert failure.title == "Rate limited"
    assert failure.detail == "Slow down"
    assert failure.retry_after == 12
    now = datetime(2024, 5, 1, 12, 0, 0)
    turn = Turn(role="bot", state="failed", error="Slow down", retry_at=now + timedelta(seconds=12))
    assert "Rate limited: retry in 12 s" in error_html(turn, now)
    assert "Slow down" in error_html(turn, now)
    assert (
        retry_text(turn.retry_at, now + timedelta(seconds=13)) == "Rate limited: you can retry now"
    )


def test_a_failed_turn_shows_its_headline_not_a_traceback() -> None:
    turn = Turn(role="bot", state="failed", error_title="The API key was refused", error="401")
    page = turn_html(turn)
    assert "The API key was refused" in page
    assert "Traceback" not in page


def test_a_complete_answer_has_a_muted_line_of_latency_tokens_and_time() -> None:
    done = Turn(
        role="bot",
        text="hi",
        tokens=1234,
        latency_ms=812.4,
        answered_at=datetime(2024, 5, 1, 14, 3, 22),
    )
    assert (
        '<div class="eb-meta eb-answer-meta">812 ms · 1,234 tokens · 14:03:22</div>'
        in turn_html(done)
    )
    unknown = Turn(
        role="bot",
        text="hi",
        tokens=None,
        latency_ms=2500.0,
        answered_at=datetime(2024, 5, 1, 14, 3, 22),
    )
    assert ">2.5 s · 14:03:22<" in turn_html(unknown)  # no tokens reported: none shown


# --------------------------------------------------------------------------- panel title


def offline_client() -> Client:
    # Never used to send: the address is a closed loopback port.
    return Client(base_url="http://127.0.0.1:9", api_key=API_KEY, session_key=SESSION_KEY)


def test_the_title_is_the_chatbots_name_when_the_service_tells_it() -> None:
    with offline_client() as client:
        asked: list[str] = []

        def get(serial: str) -> dict[str, str]:
            asked.append(serial)
            return {"Name": "Sunny Homes"}

        client.chatbots.get = get  # type: ignore[attr-defined]
        panel = ChatPanel(client, SERIAL)
        try:
            assert panel.title == "Sunny Homes"
            assert "Sunny Homes" in panel.header.value
            assert SERIAL in panel.header.value
            assert asked == [SERIAL]  # asked once
        finally:
            panel.close()
        titled = ChatPanel(client, SERIAL, title="Mine")
        assert titled.title == "Mine"
        assert asked == [SERIAL]
        titled.close()


def test_the_title_falls_back_to_the_chatbot_id() -> None:
    with offline_client() as client:
        plain = ChatPanel(client, SERIAL)
        assert plain.title == f"Chatbot {SERIAL}"
        plain.close()

        def refuse(serial: str) -> Any:
            raise NotFoundError("not found", operation="Get", code=404, status_code=404)

        client.chatbots.get = refuse  # type: ignore[attr-defined]
        failed = ChatPanel(client, SERIAL)
        assert failed.title == f"Chatbot {SERIAL}"
        failed.close()


def test_the_panel_controls_wrap_instead_of_clipping() -> None:
    with offline_client() as client:
        panel = ChatPanel(client, SERIAL)
        try:
            rows = [child for child in panel.children if child.layout.flex_flow == "row wrap"]
            assert len(rows) == 3
            assert panel.new_session_button.layout.flex == "0 0 auto"
            assert panel.new_session_button.layout.width == "auto"
            assert panel.reconnect_button.layout.display == "none"
        finally:
            panel.close()


def test_a_closed_client_is_reported_and_a_reconnected_one_has_the_same_settings() -> None:
    client = offline_client()
    panel = ChatPanel(client, SERIAL)
    try:
        client.close()
        turn = panel.ask_sync("anything", timeout=10)
        assert turn.state == "failed"
        assert turn.error_title == CLIENT_CLOSED
        assert panel.client_closed
        assert panel.reconnect_button.layout.display is None
        assert "This panel&#x27;s client was closed" in panel.status.value or (
            "This panel's client was closed" in panel.status.value
        )
        assert panel.retry_button(turn) is not None
        fresh = panel.reconnect()
        assert fresh is panel.client
        assert fresh is not client
        assert not panel.client_closed
        assert panel.reconnect_button.layout.display == "none"
        assert fresh.base_url == client.base_url
        assert API_KEY not in repr(fresh)
        assert fresh._config.api_key is not None
        assert fresh._config.api_key.get_secret_value() == API_KEY
        assert isinstance(fresh._http, httpx.Client)
        assert not fresh._http.is_closed
    finally:
        panel.close()
    assert fresh._http.is_closed  # a client Reconnect made is closed with the panel


def test_long_unchanged_stretches_of_a_diff_are_shortened_around_the_change() -> None:
    old = " ".join(f"w{i}" for i in range(40))
    new = old.replace("w20", "changed")
    shown = word_diff_html(old, new, context=3)
    assert shown.startswith('<span class="eb-gap">…</span> w17 w18 w19 <del>w20</del>')
    assert "<ins>changed</ins> w21 w22 w23 " in shown
    assert "w5 " not in shown
    assert "w30" not in shown
    assert word_diff_html(old, new).count("w") == 40  # no context: every word is shown


def test_a_fact_checked_run_shows_its_claims_per_case() -> None:
    from factories import complete_listing, remote_frame

    listings = remote_frame(complete_listing(1, SalePrice=450000.0, Bedrooms=3))
    answers = {
        "true": "MLS M1 is listed at $450,000 with 3 beds.",
        "false": "MLS M1 is listed at $520,000 with 3 beds.",
    }
    cases = [
        {"question": "true", "expect_grounded": True},
        {"question": "false", "expect_grounded": True},
    ]
    results = run_chat_tests(
        ScriptedClient(answers), SERIAL, cases, listings=listings, progress=False
    )
    page = results._repr_html_()
    assert "<th>facts</th>" in page
    cells = cell_texts(page)
    assert "2 held" in cells
    assert any("1 held" in c and "1 contradicted" in c for c in cells)
    assert results.frame["passed"].tolist() == [True, False]


@given(st.text(alphabet=st.characters(blacklist_characters="\r\n"), max_size=60))
def test_safe_text_shows_exactly_the_characters_given(text: str) -> None:
    # One pass of escaping: "What's" must not come back as "What&#x27;s" on the page.
    assert html.unescape(safe_text(text)) == text


async def test_a_blocking_client_like_an_async_one_has_its_settings_and_keys() -> None:
    from estatebot.api.client import AsyncClient

    async with AsyncClient(
        base_url="http://127.0.0.1:9", api_key=API_KEY, session_key=SESSION_KEY, max_retries=1
    ) as source:
        twin = Client.like(source)
    try:
        assert isinstance(twin, Client)
        assert twin.base_url == source.base_url
        assert twin._policy.max_retries == 1
        assert twin._config.session_key is not None
        assert twin._config.session_key.get_secret_value() == SESSION_KEY
        assert SESSION_KEY not in repr(twin)
    finally:
        twin.close()
