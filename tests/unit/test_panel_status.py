"""The chat panel's status is always current: what Send offers, failures that become past, a
broken stream told in plain words, and a question that waited for a busy kernel saying so.

The rules are checked as pure functions (with properties over any time and any mix of turns),
then on a panel against the emulator over loopback, driven through its widgets."""

from __future__ import annotations

import asyncio
import re
import types
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import IPython
import pytest
from hypothesis import given
from hypothesis import strategies as st

from estatebot.api.client import Client
from estatebot.chat.panel import ChatPanel, Turn
from estatebot.chat.panel.arrival import message_wait_s, waited_s
from estatebot.chat.panel.failures import describe_failure
from estatebot.chat.panel.render import error_html, retry_text, status_html, turn_html
from estatebot.chat.panel.status import outdated, seconds_left, send_state, waited_text
from estatebot.emulator import running
from estatebot.errors import APIConnectionError, APITimeoutError

NOW = datetime(2024, 5, 1, 12, 3, 15)
LONG = "show me every home for sale under $5,000,000"
RAW = "peer closed connection without sending complete message body (incomplete chunked read)"


def visible_text(page: str) -> str:
    """What a person reads at first sight: the HTML's text without folded details."""
    page = re.sub(r"<details.*?</details>", "", page, flags=re.S)
    return re.sub(r"<[^>]+>", "", page)


# --------------------------------------------------------------------------- Send


@given(
    asking=st.booleans(),
    closed=st.booleans(),
    offset=st.one_of(st.none(), st.floats(min_value=-120, max_value=120, allow_nan=False)),
)
def test_send_is_enabled_only_when_a_question_can_go_out_now(
    asking: bool, closed: bool, offset: float | None
) -> None:
    retry_at = None if offset is None else NOW + timedelta(seconds=offset)
    state = send_state(asking=asking, retry_at=retry_at, closed=closed, now=NOW)
    limited = retry_at is not None and retry_at > NOW
    assert state.enabled == (not asking and not closed and not limited)
    if limited and not closed:
        left = seconds_left(retry_at, NOW)
        assert state.label == f"Send ({left} s)"
        assert left >= 1
        assert f"{left} s" in state.tooltip
    else:
        assert state.label == "Send"
    if not state.enabled:
        assert state.tooltip != "Send"  # a disabled Send says why


@given(
    offset=st.floats(min_value=0.001, max_value=600, allow_nan=False),
    later=st.floats(min_value=0, max_value=600, allow_nan=False),
)
def test_the_countdown_only_goes_down_and_ends_when_the_limit_does(
    offset: float, later: float
) -> None:
    retry_at = NOW + timedelta(seconds=offset)
    first = seconds_left(retry_at, NOW)
    second = seconds_left(retry_at, NOW + timedelta(seconds=later))
    assert second <= first
    assert (second == 0) == (NOW + timedelta(seconds=later) >= retry_at)
    # The card, the status line and Send read the same number.
    label = send_state(asking=False, retry_at=retry_at, closed=False, now=NOW).label
    assert label == f"Send ({first} s)"
    assert retry_text(retry_at, NOW) == f"Rate limited: retry in {first} s"
    status = status_html(
        session_id=1, last_answer=None, total_tokens=0, busy=False, retry_at=retry_at, now=NOW
    )
    assert f"retry in {first} s" in status


def test_a_limit_that_is_over_counts_nothing() -> None:
    assert seconds_left(None, NOW) == 0
    assert seconds_left(NOW, NOW) == 0
    assert seconds_left(NOW - timedelta(seconds=5), NOW) == 0
    assert seconds_left(NOW + timedelta(seconds=0.2), NOW) == 1


# --------------------------------------------------------------------------- past failures


turns = st.builds(
    Turn,
    role=st.sampled_from(["bot", "bot", "user", "session"]),
    state=st.sampled_from(["done", "failed", "failed", "stopped"]),
    retry_at=st.one_of(st.none(), st.just(NOW + timedelta(seconds=30))),
    past=st.booleans(),
)


@given(st.lists(turns, max_size=12))
def test_an_answer_outdates_every_current_failure_and_a_session_only_the_limits(
    failed: list[Turn],
) -> None:
    current = [t for t in failed if t.state == "failed" and not t.past]
    assert outdated(failed, "answered") == current
    limits = outdated(failed, "session")
    assert limits == [t for t in current if t.retry_at is not None]
    assert all(not t.past for t in limits)


def test_a_past_rate_limit_is_greyed_with_its_time_and_no_countdown() -> None:
    turn = Turn(
        role="bot",
        state="failed",
        error_title="Rate limited",
        error="Slow down",
        retry_at=NOW + timedelta(seconds=59),
        failed_at=NOW,
    )
    live = turn_html(turn)
    assert "eb-past" not in live
    assert "rate limited" in live
    turn.past = True
    page = turn_html(turn)
    text = visible_text(page)
    assert "Was rate limited at 12:03:15" in text
    assert "retry in" not in text
    assert "eb-past" in page
    assert "eb-badge-rate-limited" not in page  # the red badge goes
    assert "was rate limited" in text
    assert "Slow down" in text  # the chatbot's own words stay


def test_a_past_error_says_when_it_failed_and_what() -> None:
    turn = Turn(
        role="bot",
        state="failed",
        error_title="The service failed (HTTP 500)",
        error="ClientAsk: HTTP 500",
        failed_at=NOW,
        past=True,
    )
    text = visible_text(turn_html(turn))
    assert "Failed at 12:03:15: The service failed (HTTP 500)" in text
    assert "earlier error" in text
    assert "eb-badge-error" not in turn_html(turn)


# --------------------------------------------------------------------------- a broken stream


def broken_stream(cause: Exception) -> APIConnectionError:
    """The client's error for ``cause``, raised from it as the client raises it."""
    try:
        message = f"the stream broke off ({cause})"
        raise APIConnectionError(message, operation="ClientAsk") from cause
    except APIConnectionError as exc:
        return exc


@given(arrived=st.integers(min_value=1, max_value=10**6))
def test_a_stream_lost_midway_is_told_in_words_with_what_had_arrived(arrived: int) -> None:
    failure = describe_failure(broken_stream(httpx.RemoteProtocolError(RAW)), arrived=arrived)
    assert failure.title.startswith(
        "The connection to the service was lost while the answer was arriving; "
    )
    assert failure.title.endswith(f"{arrived:,} character{'s' if arrived > 1 else ''} had arrived")
    assert RAW not in failure.title
    assert failure.detail == ""  # nothing raw in sight
    assert failure.technical.startswith("APIConnectionError: ")
    assert RAW in failure.technical


def test_the_card_of_a_broken_stream_folds_the_raw_text_away() -> None:
    failure = describe_failure(broken_stream(httpx.RemoteProtocolError(RAW)), arrived=292)
    turn = Turn(
        role="bot",
        state="failed",
        text="I found 8 listings",
        error_title=failure.title,
        error=failure.technical,
        error_details=failure.technical,
    )
    page = turn_html(turn)
    text = visible_text(page)
    assert "292 characters had arrived" in text
    assert "peer closed" not in text
    assert "<details" in page
    assert "<details open" not in page
    assert RAW in page  # kept, folded under Details
    assert re.search(r"<summary>Details</summary><code>APIConnectionError: ", page)


def test_a_reply_cut_before_any_text_and_a_host_never_reached_differ() -> None:
    cut = describe_failure(broken_stream(httpx.RemoteProtocolError(RAW)))
    assert cut.title == "The connection to the service was lost before the answer arrived"
    assert cut.detail == ""
    unreached = describe_failure(broken_stream(httpx.ConnectError("connection refused")), arrived=0)
    assert unreached.title == "Could not reach the service"
    assert "connection refused" in unreached.detail  # it names what was tried: in sight
    slow = describe_failure(
        APITimeoutError("timed out waiting for the next fragment", operation="ClientAsk"),
        arrived=40,
    )
    assert slow.title == (
        "The service stopped sending while the answer was arriving; 40 characters had arrived"
    )
    assert slow.technical.startswith("APITimeoutError: ")


def test_a_failure_without_details_shows_no_details() -> None:
    turn = Turn(role="bot", state="failed", error_title="Rate limited", error="Slow down")
    assert "<details" not in error_html(turn)


# --------------------------------------------------------------------------- a busy kernel


@pytest.mark.parametrize(
    "sent",
    ["2024-05-01T12:03:08.500Z", datetime(2024, 5, 1, 12, 3, 8, 500000, tzinfo=UTC)],
)
def test_the_wait_is_read_from_the_message_header_date(sent: Any) -> None:
    now = datetime(2024, 5, 1, 12, 3, 15, tzinfo=UTC)
    assert waited_s(sent, now) == pytest.approx(6.5)


def test_a_date_that_cannot_be_read_or_lies_ahead_is_no_wait() -> None:
    now = datetime(2024, 5, 1, 12, 3, 15, tzinfo=UTC)
    assert waited_s(None, now) is None
    assert waited_s("yesterday", now) is None
    assert waited_s("2024-05-01T12:03:20Z", now) == 0.0  # the browser's clock is ahead
    assert waited_s(datetime(2024, 5, 1, 12, 3, 14), now) == pytest.approx(1.0)  # naive: UTC


@given(st.floats(min_value=0, max_value=10_000, allow_nan=False))
def test_the_note_says_whole_seconds_and_never_zero(seconds: float) -> None:
    note = waited_text(seconds)
    shown = int(re.search(r"waited (\d+) s$", note).group(1))  # type: ignore[union-attr]
    assert shown >= 1
    assert abs(shown - seconds) <= max(0.5, 1 - seconds)
    assert note.startswith("sent while the kernel was busy")


class FakeKernel:
    """A kernel whose current shell message is ``parent`` (what ipykernel's get_parent gives)."""

    def __init__(self, parent: dict[str, Any]) -> None:
        self.parent = parent

    def get_parent(self, channel: str | None = None) -> dict[str, Any]:
        assert channel == "shell"
        return self.parent


def in_kernel(monkeypatch: pytest.MonkeyPatch, sent: datetime) -> None:
    shell = types.SimpleNamespace(
        kernel=FakeKernel({"header": {"msg_type": "comm_msg", "date": sent}})
    )
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)


def test_outside_a_kernel_no_wait_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    assert message_wait_s() is None


def test_a_click_made_from_a_cells_code_did_not_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel's current message is the cell's execute_request, sent long ago: no click waited.
    sent = datetime.now(UTC) - timedelta(seconds=30)
    cell = {"header": {"msg_type": "execute_request", "date": sent}}
    monkeypatch.setattr(
        IPython, "get_ipython", lambda: types.SimpleNamespace(kernel=FakeKernel(cell))
    )
    assert message_wait_s() is None
    in_kernel(monkeypatch, sent)
    assert message_wait_s() == pytest.approx(30, abs=1)


# --------------------------------------------------------------------------- on a live panel


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with running(seed="small", stream_delay_ms=20) as made:
        yield made


@pytest.fixture
def client(server: Any) -> Iterator[Client]:
    with Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    ) as made:
        yield made
    server.faults.clear()


@pytest.fixture
def panel(client: Client, server: Any) -> Iterator[ChatPanel]:
    made = ChatPanel(client, server.serial)
    yield made
    made.close()


async def until(condition: Callable[[], bool], limit_s: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + limit_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.005)


def press_enter(panel: ChatPanel, text: str) -> None:
    panel.input.value = text
    panel.input._handle_custom_msg({"event": "submit"}, [])  # what the browser sends


async def test_send_is_disabled_while_an_answer_streams_and_enter_adds_nothing(
    panel: ChatPanel,
) -> None:
    assert not panel.send_button.disabled
    press_enter(panel, LONG)
    bot = panel.turns[-1]
    await until(lambda: bot.state == "streaming")
    assert panel.send_button.disabled
    assert not panel.sending.enabled
    press_enter(panel, "and rentals?")  # pressed again while streaming: nothing is added
    assert len(panel.turns) == 2
    assert panel.input.value == "and rentals?"  # kept for later
    await asyncio.wait_for(panel.wait(), timeout=20)
    assert bot.state == "done"
    assert not panel.send_button.disabled
    assert panel.send_button.description == "Send"


async def test_a_limit_disables_send_with_a_countdown_and_an_answer_makes_it_past(
    panel: ChatPanel, server: Any
) -> None:
    await panel.ask("Hello!")
    server.faults.fail_rate = 1.0
    server.faults.only = {"ClientAsk"}
    broken = await panel.ask("rentals in Denver")
    assert broken.state == "failed"
    assert panel.retry_button(broken) is not None
    server.faults.clear()
    server.faults.rate_limit = (1, 60)
    assert (await panel.ask("Hello!")).state == "done"
    # The answer outdated the server failure: greyed, its Retry gone.
    assert broken.past
    assert panel.retry_button(broken) is None
    assert "Failed at" in visible_text(panel.turn_views[broken.turn - 1].value)
    limited = await panel.ask("Hello again!")
    assert limited.state == "failed"
    assert limited.retry_at is not None
    assert panel.send_button.disabled
    assert re.fullmatch(r"Send \(\d+ s\)", panel.send_button.description)
    cards = len(panel.turns)
    for _ in range(3):  # Enter again and again: no more failed cards
        press_enter(panel, "anything?")
    assert len(panel.turns) == cards

    server.faults.rate_limit = None
    assert (await panel.ask("Hello!")).state == "done"  # code may still ask: it works again
    assert limited.past
    assert panel.retry_button(limited) is None
    assert panel.failed_turns == []
    card = visible_text(panel.turn_views[limited.turn - 1].value)
    assert re.search(r"Was rate limited at \d\d:\d\d:\d\d", card)
    assert "retry in" not in card
    assert not panel.send_button.disabled
    assert panel.send_button.description == "Send"
    panel._tick()  # a countdown tick that was already due draws no countdown back
    assert "retry in" not in visible_text(panel.transcript_html)
    assert "Rate limited" not in panel.status.value


async def test_a_new_session_ends_the_old_sessions_limit(panel: ChatPanel, server: Any) -> None:
    await panel.ask("Hello!")
    server.faults.rate_limit = (1, 60)  # a new limit counts afresh: one more is let through
    await panel.ask("Hello!")
    limited = await panel.ask("Hello again!")
    assert limited.retry_at is not None
    assert panel.send_button.disabled
    server.faults.rate_limit = None
    await asyncio.wrap_future(panel.new_session())
    assert limited.past
    assert panel.rate_limited_for is None
    assert not panel.send_button.disabled


async def test_a_stream_dropped_midway_says_so_in_words(panel: ChatPanel, server: Any) -> None:
    await panel.ask("Hello!")
    server.faults.drop_rate = 1.0
    server.faults.only = {"ClientAsk"}
    dropped = await panel.ask(LONG)
    assert dropped.state == "failed"
    assert dropped.text
    card = visible_text(panel.turn_views[dropped.turn - 1].value)
    assert (
        "The connection to the service was lost while the answer was arriving; "
        f"{len(dropped.text):,} characters had arrived"
    ) in card
    assert "peer closed" not in card
    assert dropped.error_details is not None
    assert dropped.error_details.startswith("APIConnectionError: ")
    history = panel.history
    assert history["error"].iloc[-1] == dropped.error_details  # the details stay in the history


async def test_a_question_the_busy_kernel_read_late_says_how_long_it_waited(
    panel: ChatPanel, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_kernel(monkeypatch, datetime.now(UTC) - timedelta(seconds=7.2))
    panel.input.value = "Hello!"
    panel.send_button.click()
    question = panel.turns[0]
    assert question.kernel_wait_s == pytest.approx(7.2, abs=1)
    assert "sent while the kernel was busy; waited 7 s" in panel.turn_views[0].value
    await asyncio.wait_for(panel.wait(), timeout=20)

    in_kernel(monkeypatch, datetime.now(UTC) - timedelta(seconds=0.05))  # an idle kernel
    panel.input.value = "Hello again!"
    panel.send_button.click()
    assert panel.turns[2].kernel_wait_s is None
    assert "kernel was busy" not in panel.turn_views[2].value
    await asyncio.wait_for(panel.wait(), timeout=20)


async def test_a_click_the_kernel_read_but_could_not_send_is_not_shown_as_queued(
    panel: ChatPanel, server: Any
) -> None:
    server.faults.rate_limit = (1, 60)
    await panel.ask("Hello!")
    assert (await panel.ask("Hello again!")).retry_at is not None
    panel.input.value = "still there?"
    panel.send_button.click()  # read, refused: the page's waiting note must not show
    assert "eb-heard" in panel.send_button._dom_classes
    panel.input.value = "edited"
    assert "eb-heard" not in panel.send_button._dom_classes
