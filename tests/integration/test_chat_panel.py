"""ChatPanel against the real emulator over loopback, driven through its widgets (no browser)."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest

from estatebot.api.client import AsyncClient, Client
from estatebot.chat.panel import HISTORY_COLUMNS, ChatPanel, Turn
from estatebot.emulator import running

AUSTIN = "3 bedroom homes in Austin under $600k"
OFF_TOPIC = "what is the capital of France"
LONG = "show me every home for sale under $5,000,000"
# Appended to every answer by the chatbot: makes an answer of well over a hundred fragments.
LONG_SUFFIX = " ".join(f"Note {i}: every listing is checked by a local agent." for i in range(40))


def client_for(server: Any) -> Client:
    return Client(base_url=server.base_url, api_key=server.api_key, session_key=server.session_key)


@pytest.fixture(scope="module")
def slow_emulator() -> Iterator[Any]:
    """An emulator that waits between stream fragments, so a test can act mid-answer."""
    with running(seed="small", stream_delay_ms=30) as server:
        yield server


@pytest.fixture
def slow_client(slow_emulator: Any) -> Iterator[Client]:
    with client_for(slow_emulator) as made:
        yield made
        made.chatbots.edit(slow_emulator.serial, AnswerSuffix="")


@pytest.fixture
def panels() -> Iterator[Callable[..., ChatPanel]]:
    made: list[ChatPanel] = []

    def make(client: Client | AsyncClient, serial: str, **options: Any) -> ChatPanel:
        panel = ChatPanel(client, serial, **options)
        made.append(panel)
        return panel

    yield make
    for panel in made:
        panel.close()


async def send(panel: ChatPanel, text: str) -> Turn:
    """Type a question, press Send, wait for the answer: what a user does."""
    panel.input.value = text
    panel.send_button.click()
    answer = await asyncio.wait_for(panel.wait(), timeout=20)
    assert answer is not None or panel.turns[-1].state == "failed"
    return panel.turns[-1]


async def until(condition: Callable[[], bool], limit_s: float = 10) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.002)


def record_values(panel: ChatPanel) -> dict[int, list[tuple[float, str]]]:
    """Every ``value`` each transcript widget sends, with when, keyed by turn number."""
    sent: dict[int, list[tuple[float, str]]] = {}
    seen: set[int] = {id(view) for view in panel.turn_views}

    def on_children(change: dict[str, Any]) -> None:
        for view in change["new"]:
            if id(view) in seen:
                continue
            seen.add(id(view))
            number = int(re.search(r'data-turn="(\d+)"', view.value).group(1))  # type: ignore[union-attr]
            values = sent.setdefault(number, [])
            view.observe(
                lambda c, values=values: values.append((time.monotonic(), c["new"])),
                names="value",
            )

    panel.transcript.observe(on_children, names="children")
    return sent


# --------------------------------------------------------------------------- answers


async def test_send_streams_the_answer_into_the_transcript(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial, title="Sunny Homes")
    bot = await send(panel, AUSTIN)

    assert bot.role == "bot"
    assert bot.state == "done"
    assert "MLS# ATX1001" in bot.text
    html = panel.transcript_html
    assert "3 bedroom homes in Austin under $600k" in html
    assert "MLS# ATX1001" in html
    assert "<ol>" in html  # the numbered list of matches is rendered as Markdown
    assert panel.input.value == ""
    assert bot.session_id == panel.session_id is not None
    assert bot.tokens is not None
    assert bot.tokens > 0
    assert bot.latency_ms is not None
    assert bot.latency_ms > 0
    status = panel.status.value
    assert f"Session <b>{panel.session_id}</b>" in status
    assert f"Last answer: <b>{bot.tokens:,}</b> tokens, <b>{bot.latency_ms:,.0f}</b> ms" in status
    assert f"Total: <b>{bot.tokens:,}</b> tokens" in status
    assert panel.stop_button.disabled


async def test_enter_in_the_input_sends(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial)
    panel.input.value = AUSTIN
    # What the browser sends when Enter is pressed in the box.
    panel.input._handle_custom_msg({"event": "submit"}, [])
    await asyncio.wait_for(panel.wait(), timeout=20)
    assert [t.role for t in panel.turns] == ["user", "bot"]
    assert "MLS# ATX1001" in panel.turns[-1].text


async def test_tokens_add_up_and_each_question_gets_its_ids(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial)
    first = await panel.ask(AUSTIN)
    second = await panel.ask("rentals in Denver")
    assert first.tokens
    assert second.tokens
    assert panel.total_tokens == first.tokens + second.tokens
    assert f"Total: <b>{panel.total_tokens:,}</b> tokens" in panel.status.value
    question = panel.turns[2]
    assert question.role == "user"
    assert question.question_id == second.question_id is not None
    assert first.answer_id is not None
    assert second.answer_id is not None
    assert second.answer_id > first.answer_id


async def test_no_answer_is_marked(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial)
    answered = await send(panel, AUSTIN)
    refused = await send(panel, OFF_TOPIC)
    assert answered.no_answer is False
    assert refused.no_answer is True
    views = panel.turn_views
    assert "eb-no-answer" not in views[1].value
    assert "eb-no-answer" in views[3].value
    assert "no answer</span>" in views[3].value


async def test_a_non_streaming_panel_shows_the_whole_answer(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial, stream=False)
    values = record_values(panel)
    bot = await send(panel, AUSTIN)
    assert bot.state == "done"
    assert "MLS# ATX1001" in bot.text
    assert bot.answer_id is not None
    assert len(values[2]) == 1  # waiting → the answer, in one update


# --------------------------------------------------------------------------- failures


async def test_a_rate_limit_shows_the_chatbots_message_and_when_to_retry(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    client.chatbots.edit(
        emulator.serial, RateLimitCount=1, RateLimitTime=60, RateLimitMessage="Slow down, please"
    )
    panel = panels(client, emulator.serial)
    assert (await send(panel, AUSTIN)).state == "done"
    refused = await send(panel, "rentals in Denver")

    assert refused.state == "failed"
    assert refused.error == "Slow down, please"
    assert refused.retry_at is not None
    expected = datetime.now() + timedelta(seconds=60)
    assert abs((refused.retry_at - expected).total_seconds()) < 5
    html = panel.turn_views[-1].value
    assert "Slow down, please" in html
    assert re.search(r"Rate limited: retry in \d+ s", html)
    assert "rate limited" in html
    assert re.search(r"Rate limited: retry in \d+ s", panel.status.value)
    assert panel.rate_limited_for is not None
    assert "Traceback" not in panel.transcript_html


async def test_a_server_failure_is_shown_and_the_panel_stays_usable(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial)
    await panel.ask(AUSTIN)  # the session exists, so only ClientAsk fails below
    emulator.faults.fail_rate = 1.0
    emulator.faults.only = {"ClientAsk"}
    failed = await send(panel, "rentals in Denver")
    assert failed.state == "failed"
    assert failed.error is not None
    assert "ClientAsk" in failed.error
    assert "500" in failed.error
    assert "eb-failed" in panel.turn_views[-1].value
    assert "Traceback" not in panel.transcript_html

    emulator.faults.clear()
    recovered = await send(panel, AUSTIN)
    assert recovered.state == "done"
    assert "MLS# ATX1001" in recovered.text


async def test_a_stream_dropped_midway_keeps_the_text_and_says_why(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial)
    await panel.ask(AUSTIN)
    emulator.faults.drop_rate = 1.0
    emulator.faults.only = {"ClientAsk"}
    dropped = await send(panel, LONG)
    assert dropped.state == "failed"
    assert dropped.text  # the fragments that arrived stay
    assert dropped.error is not None
    assert html_text(panel.turn_views[-1].value).count(dropped.text[:20]) == 1


def html_text(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


async def test_keys_never_reach_the_widgets_or_the_history(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    # A service message that quotes the key: the panel must not show it.
    client.chatbots.edit(
        emulator.serial,
        RateLimitCount=1,
        RateLimitTime=60,
        RateLimitMessage=f"Slow down, {emulator.api_key} / {emulator.session_key}",
    )
    panel = panels(client, emulator.serial)
    await send(panel, AUSTIN)
    refused = await send(panel, AUSTIN)
    assert refused.state == "failed"
    assert refused.error is not None
    assert refused.error.startswith("Slow down, ")
    shown = [panel.transcript_html, panel.status.value, panel.history.to_csv(), repr(panel.turns)]
    for secret in (emulator.api_key, emulator.session_key):
        assert all(secret not in text for text in shown)


# --------------------------------------------------------------------------- safety


async def test_html_in_an_answer_is_escaped_and_markdown_rendered(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    client.chatbots.edit(
        emulator.serial,
        AnswerSuffix="<script>alert(1)</script> **bold** <img src=x onerror=alert(2)> "
        "[home](javascript:alert(3)) [site](https://example.com/a)",
    )
    panel = panels(client, emulator.serial)
    bot = await send(panel, AUSTIN)
    assert "<script>alert(1)</script>" in bot.text  # the answer itself is kept verbatim
    html = panel.transcript_html
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<strong>bold</strong>" in html
    assert "<img" not in html
    assert "javascript:" not in html.replace("[home](javascript:alert(3))", "")
    assert '<a href="https://example.com/a" target="_blank"' in html


async def test_a_question_with_html_is_shown_as_text(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial)
    await send(panel, "<b>homes</b> in Austin")
    assert "&lt;b&gt;homes&lt;/b&gt; in Austin" in panel.turn_views[0].value


# --------------------------------------------------------------------------- streaming


async def test_widget_updates_are_coalesced_and_the_final_text_is_exact(
    slow_client: Client, slow_emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    slow_client.chatbots.edit(slow_emulator.serial, AnswerSuffix=LONG_SUFFIX)
    slow_emulator.emulator.options.stream_delay_ms = 3
    try:
        session = slow_client.chat.create_session(slow_emulator.serial)
        with slow_client.chat.stream(session, LONG) as reference:
            fragments = list(reference)
        expected = reference.result.answer

        panel = panels(slow_client, slow_emulator.serial, update_interval=0.05)
        values = record_values(panel)
        bot = await send(panel, LONG)
    finally:
        slow_emulator.emulator.options.stream_delay_ms = 30

    times = [when for when, _ in values[2]]
    updates = [value for _, value in values[2]]
    assert len(fragments) > 100
    assert bot.text == expected
    # The answer's text ends the body; the line of figures under it follows.
    body = re.sub(r'<div class="eb-meta eb-answer-meta">.*?</div>', "", updates[-1])
    assert html_text(body).rstrip().endswith(LONG_SUFFIX[-30:])
    assert 2 <= len(updates) <= len(fragments) // 4
    # At most one re-render per interval while streaming (the final render may follow sooner).
    gaps = [later - earlier for earlier, later in pairwise(times[:-1])]
    assert all(gap >= 0.045 for gap in gaps), gaps
    # The first fragment is shown at once, not held back until the interval ends.
    assert fragments[0].strip() in html_text(updates[0])
    assert "eb-streaming" in updates[0]
    assert "eb-streaming" not in updates[-1]


async def test_stop_keeps_the_partial_answer_and_the_panel_usable(
    slow_client: Client, slow_emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    full = slow_client.chat.ask(slow_client.chat.create_session(slow_emulator.serial), LONG)
    panel = panels(slow_client, slow_emulator.serial)
    panel.input.value = LONG
    panel.send_button.click()
    bot = panel.turns[-1]
    await until(lambda: bot.state == "streaming")
    assert not panel.stop_button.disabled
    panel.stop_button.click()
    stopped_at = time.monotonic()
    await asyncio.wait_for(panel.wait(), timeout=10)

    # The stream (about 40 fragments 30 ms apart) was left at once, not read to its end.
    assert time.monotonic() - stopped_at < 0.5
    assert bot.state == "stopped"
    assert 0 < len(bot.text) < len(full.content)
    assert full.content.startswith(bot.text)
    assert "eb-badge-stopped" in panel.turn_views[-1].value
    assert panel.stop_button.disabled
    assert panel.history["state"].tolist() == ["done", "stopped"]

    again = await send(panel, AUSTIN)
    assert again.state == "done"
    assert "MLS# ATX1001" in again.text


# --------------------------------------------------------------------------- attachments


async def test_attachments_breaking_the_rules_are_shown_and_not_sent(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial)
    asked_before = emulator.request_counts["ClientAsk"]

    panel.ask_type.value = "Audio"
    panel.file_ids.value = "101, 102"
    panel.input.value = "what is in this recording?"
    panel.send_button.click()
    notice = panel.turns[-1]
    assert notice.role == "notice"
    assert notice.error is not None
    assert "fileIds" in notice.error
    assert "exactly one" in notice.error
    assert "Not sent" in panel.turn_views[-1].value
    assert panel.input.value == "what is in this recording?"  # kept, to be fixed

    panel.ask_type.value = "Text"
    panel.file_ids.value = "7"
    panel.send_button.click()
    assert "only allowed when chatAskType is Image, Audio or Video" in (panel.turns[-1].error or "")

    panel.ask_type.value = "Image"
    panel.file_ids.value = "1, two"
    panel.send_button.click()
    assert "whole numbers" in (panel.turns[-1].error or "")

    await panel.wait()
    assert emulator.request_counts["ClientAsk"] == asked_before
    assert [t.role for t in panel.turns] == ["notice"] * 3
    assert panel.session_id is None


async def test_an_image_question_with_files_is_sent(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial)
    panel.ask_type.value = "Image"
    panel.file_ids.value = "101, 102"
    bot = await send(panel, "")
    question = panel.turns[0]
    assert question.ask_type == "Image"
    assert question.file_ids == (101, 102)
    assert "Image · files 101, 102" in panel.turn_views[0].value
    assert bot.state == "done"
    assert bot.text
    assert panel.file_ids.value == ""


# --------------------------------------------------------------------------- history, sessions


async def test_history_has_one_typed_row_per_turn_and_clear_empties_it(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial)
    empty = panel.history
    assert list(empty.columns) == list(HISTORY_COLUMNS)
    assert len(empty) == 0

    bot = await panel.ask(AUSTIN)
    history = panel.history
    assert list(history.columns) == list(HISTORY_COLUMNS)
    assert {c: str(t) for c, t in history.dtypes.items()} == HISTORY_COLUMNS
    assert history["turn"].tolist() == [1, 2]
    assert history["role"].tolist() == ["user", "bot"]
    assert history.loc[0, "text"] == AUSTIN
    assert history.loc[1, "text"] == bot.text
    assert history.loc[1, "answer_id"] == bot.answer_id
    assert history["question_id"].tolist() == [bot.question_id, bot.question_id]
    assert history.loc[1, "tokens"] == bot.tokens
    assert history.loc[1, "latency_ms"] == bot.latency_ms
    assert not history.loc[1, "no_answer"]
    assert history["error"].isna().all()
    assert (history["session_id"] == panel.session_id).all()

    panel.clear()
    assert len(panel.history) == 0
    assert panel.transcript.children == ()
    assert panel.total_tokens == 0
    assert "Total: <b>0</b> tokens" in panel.status.value


async def test_new_session_changes_the_session_and_marks_it(
    client: Client, emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(client, emulator.serial)
    first = await panel.ask(AUSTIN)
    panel.new_session_button.click()
    second = await send(panel, AUSTIN)

    assert first.session_id is not None
    assert second.session_id is not None
    assert second.session_id != first.session_id
    assert panel.session_id == second.session_id
    marker = panel.turns[2]
    assert marker.role == "session"
    assert marker.session_id == second.session_id
    assert f"New session {second.session_id}" in panel.turn_views[2].value
    assert f"Session <b>{second.session_id}</b>" in panel.status.value
    assert panel.history["role"].tolist() == ["user", "bot", "session", "user", "bot"]


# --------------------------------------------------------------------------- ways to run


def test_ask_sync_from_a_plain_thread(client: Client, emulator: Any) -> None:
    panel = ChatPanel(client, emulator.serial)
    results: list[Turn] = []
    problems: list[BaseException] = []

    def script() -> None:
        try:
            assert asyncio.get_event_loop_policy()  # no loop runs in this thread
            results.append(panel.ask_sync(AUSTIN, timeout=20))
        except BaseException as exc:
            problems.append(exc)

    worker = threading.Thread(target=script)
    worker.start()
    worker.join(30)
    panel.close()
    assert not problems
    assert results[0].state == "done"
    assert "MLS# ATX1001" in results[0].text
    assert "MLS# ATX1001" in panel.transcript_html


@pytest.fixture
async def async_client(slow_emulator: Any) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(
        base_url=slow_emulator.base_url,
        api_key=slow_emulator.api_key,
        session_key=slow_emulator.session_key,
    ) as made:
        yield made


async def test_an_async_client_streams_stops_and_refuses_to_block_its_loop(
    async_client: AsyncClient, slow_emulator: Any, panels: Callable[..., ChatPanel]
) -> None:
    panel = panels(async_client, slow_emulator.serial)
    values = record_values(panel)
    bot = await send(panel, AUSTIN)
    assert bot.state == "done"
    assert "MLS# ATX1001" in bot.text
    assert len(values[2]) >= 2  # streamed: at least one partial update and the final one
    assert f"Session <b>{panel.session_id}</b>" in panel.status.value

    future = panel.submit()  # nothing typed: nothing sent
    assert future is None
    panel.input.value = LONG
    future = panel.submit()
    assert future is not None
    streaming = panel.turns[-1]
    await until(lambda: streaming.state == "streaming")
    panel.stop()
    stopped = await asyncio.wrap_future(future)
    assert stopped is streaming
    assert stopped.state == "stopped"
    assert stopped.text

    with pytest.raises(RuntimeError, match=r"await panel\.ask"):
        panel.ask_sync(AUSTIN)
    assert (await panel.ask(AUSTIN)).state == "done"
