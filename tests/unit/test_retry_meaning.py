"""Retries by what a failure means, over httpx.MockTransport.

429 and 503 say the service did not handle the request, so every operation waits them out and
sends it again (a chat message's 429 excepted: it is the chatbot's rate-limit message, raised for
the chat to show). The wait is the one the service asks for, read from ``Retry-After`` (seconds
or an HTTP date), ``RateLimit-Reset`` or ``X-RateLimit-Reset`` (seconds or a Unix time). Other
failures after sending are retried only where resending is safe: never a create, and a delete's
count is the answer to the attempt that was answered, never a sum.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from estatebot.api import AsyncClient, Client, _base, errors
from estatebot.api._retry import RetryPolicy
from estatebot.api._retry_after import parse_retry_after, reset_seconds, retry_after_from
from estatebot.api.listings import delete_count
from factories import wire_listing

API_KEY = "retry-api-key-51c0"
SESSION_KEY = "retry-session-key-9a7e"
SERIAL = "3254a9d0424c4806b9ea3d0763ccf1bf"
BASE = "http://svc.test"

LISTING = wire_listing(SERIAL)

Reply = httpx.Response | Exception


def envelope(data: Any = None, *, status: int = 200, **headers: str) -> httpx.Response:
    body = {"Data": data, "Success": status == 200, "Code": status, "Message": ""}
    return httpx.Response(status, json=body, headers=headers)


class Made:
    """A client whose mock service answers ``replies`` in turn (the last repeats) and whose
    waits between attempts are recorded instead of slept."""

    def __init__(self, kind: str, *replies: Reply, **options: Any) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []
        self.sleeps: list[float] = []
        transport = httpx.MockTransport(self._answer)
        settings: dict[str, Any] = {
            "base_url": BASE,
            "api_key": API_KEY,
            "session_key": SESSION_KEY,
            "backoff_base": 0.01,
            "backoff_max": 0.02,
            **options,
        }
        self.client: Client | AsyncClient
        if kind == "sync":
            self.client = Client(http_client=httpx.Client(transport=transport), **settings)
            self.client._sleep = self.sleeps.append
        else:
            self.client = AsyncClient(
                http_client=httpx.AsyncClient(transport=transport), **settings
            )

            async def sleep(seconds: float) -> None:
                self.sleeps.append(seconds)

            self.client._sleep = sleep

    def _answer(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        return reply

    async def call(self, fn: Callable[[Any], Any]) -> Any:
        result = fn(self.client)
        return await result if inspect.isawaitable(result) else result


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# name -> (the call, the Data of its success, the result that Data gives)
OPERATIONS: dict[str, tuple[Callable[[Any], Any], Any, Any]] = {
    "Edit": (lambda c: c.chatbots.edit(SERIAL, Name="Sunny"), 1, 1),
    "ModelList": (lambda c: c.chatbots.models(), [], []),
    "GetSession": (lambda c: c.chat.create_session(SERIAL), {"SessionID": 9}, 9),
    "ClientAsk": (lambda c: c.chat.ask(5, "hi"), {"messageid": 1, "content": "yes"}, None),
    "RealEstateCreate": (lambda c: c.listings.create(LISTING), 77, 77),
    "RealEstateUpdate": (lambda c: c.listings.update(LISTING), 1, 1),
    "RealEstateList": (
        lambda c: c.listings.list_page(SERIAL),
        {"List": [], "VirtualCount": 0},
        None,
    ),
    "RealEstateDelete": (lambda c: c.listings.delete(SERIAL, ["MLS-1"]), {"SuccessCount": 1}, 1),
}


def _hint_headers(hint: str) -> tuple[dict[str, str], float, float]:
    """The headers of one way of asking for a wait, and the range the wait must fall in."""
    if hint == "retry-after-0":
        return {"Retry-After": "0"}, 0.0, 0.0
    if hint == "retry-after-date":
        when = format_datetime(datetime.now(UTC) + timedelta(seconds=3), usegmt=True)
        return {"Retry-After": when}, 1.0, 3.0  # an HTTP date counts whole seconds
    if hint == "ratelimit-reset":
        return {"RateLimit-Reset": "2"}, 2.0, 2.0
    if hint == "x-ratelimit-reset-epoch":
        return {"X-RateLimit-Reset": str(int(time.time()) + 3)}, 1.0, 3.0
    raise AssertionError(hint)


HINTS = ["retry-after-0", "retry-after-date", "ratelimit-reset", "x-ratelimit-reset-epoch"]


@pytest.mark.parametrize("hint", HINTS)
@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("name", list(OPERATIONS))
async def test_a_request_not_handled_is_waited_out_and_sent_again(
    kind: str, name: str, status: int, hint: str
) -> None:
    fn, data, result = OPERATIONS[name]
    headers, shortest, longest = _hint_headers(hint)
    made = Made(kind, envelope(status=status, **headers), envelope(data))
    if name == "ClientAsk" and status == 429:
        # The chatbot's rate-limit message is for the person chatting: raised at once, with
        # the wait, for the chat panel or the test harness to count down.
        with pytest.raises(errors.RateLimitError) as info:
            await made.call(fn)
        assert len(made.requests) == 1
        assert made.sleeps == []
        assert info.value.retry_after is not None
        assert shortest - 0.5 <= info.value.retry_after <= longest
        return
    answered = await made.call(fn)
    if result is not None:
        assert answered == result
    assert len(made.requests) == 2
    (wait,) = made.sleeps
    assert shortest - 0.5 <= wait <= longest
    first, second = made.requests
    assert first.content == second.content  # the same request, sent again


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("name", ["RealEstateCreate", "RealEstateDelete", "Edit"])
async def test_a_wait_longer_than_max_retry_after_is_raised_at_once(
    kind: str, name: str, status: int
) -> None:
    fn, data, _ = OPERATIONS[name]
    made = Made(kind, envelope(status=status, **{"Retry-After": "120"}), envelope(data))
    with pytest.raises(errors.APIError) as info:
        await made.call(fn)
    assert info.value.status_code == status
    assert info.value.retry_after == 120.0
    assert len(made.requests) == 1
    assert made.sleeps == []


@pytest.mark.parametrize("status", [429, 503])
async def test_a_request_never_handled_is_tried_max_retries_plus_one_times(
    kind: str, status: int
) -> None:
    made = Made(kind, envelope(status=status, **{"Retry-After": "0"}), max_retries=2)
    with pytest.raises(errors.APIError):
        await made.call(lambda c: c.listings.create(LISTING))
    assert len(made.requests) == 3
    assert made.sleeps == [0.0, 0.0]


@pytest.mark.parametrize(
    "failure",
    [
        lambda: envelope(status=500),
        lambda: envelope(status=502),
        lambda: envelope(status=408),
        lambda: httpx.RemoteProtocolError("server disconnected"),
        lambda: httpx.ReadTimeout("slow"),
    ],
    ids=["500", "502", "408", "dropped", "read-timeout"],
)
async def test_a_create_that_may_have_been_carried_out_is_never_sent_again(
    kind: str, failure: Callable[[], Reply]
) -> None:
    # The sync runner looks the listing up before sending a create again (sender._create).
    made = Made(kind, failure(), envelope(77))
    with pytest.raises((errors.APIError, errors.APIConnectionError)):
        await made.call(lambda c: c.listings.create(LISTING))
    assert len(made.requests) == 1


async def test_a_create_that_never_left_is_sent_again(kind: str) -> None:
    made = Made(kind, httpx.ConnectError("refused"), envelope(77))
    assert await made.call(lambda c: c.listings.create(LISTING)) == 77
    assert len(made.requests) == 2


@pytest.mark.parametrize(
    "failure",
    [
        lambda: envelope(status=500),
        lambda: httpx.RemoteProtocolError("server disconnected"),
        lambda: httpx.ReadTimeout("slow"),
    ],
    ids=["500", "dropped", "read-timeout"],
)
async def test_a_failed_delete_is_sent_again(kind: str, failure: Callable[[], Reply]) -> None:
    made = Made(kind, failure(), envelope({"SuccessCount": 1}))
    assert await made.call(lambda c: c.listings.delete(SERIAL, ["MLS-1"])) == 1
    assert len(made.requests) == 2


async def test_a_deletes_count_after_attempts_not_handled_is_the_answer(kind: str) -> None:
    # A 503 (even one carrying a count in its Data) and a 429 did nothing: the answer to the
    # attempt that worked is the whole count, and no failed reply's count is added to it.
    failed = httpx.Response(
        503, json={"Data": {"SuccessCount": 2}, "Success": False, "Code": 503, "Message": ""}
    )
    throttled = envelope(status=429, **{"Retry-After": "0"})
    made = Made(kind, failed, throttled, envelope({"SuccessCount": 1}))
    assert await made.call(lambda c: c.listings.delete(SERIAL, ["MLS-1", "MLS-2"])) == 1
    assert len(made.requests) == 3


async def test_a_deletes_count_of_every_key_after_a_lost_reply_is_the_answer(kind: str) -> None:
    # The resend deleted every key asked, so the lost attempt can have deleted none of them.
    made = Made(kind, httpx.RemoteProtocolError("dropped"), envelope({"SuccessCount": 2}))
    assert await made.call(lambda c: c.listings.delete(SERIAL, ["MLS-1", "MLS-2"])) == 2
    assert len(made.requests) == 2


@pytest.mark.parametrize(
    ("failure", "raised"),
    [
        (lambda: httpx.RemoteProtocolError("dropped"), errors.APIConnectionError),
        (lambda: httpx.ReadTimeout("slow"), errors.APITimeoutError),
        (lambda: envelope(status=500), errors.ServerError),
    ],
    ids=["dropped", "read-timeout", "500"],
)
async def test_a_deletes_count_is_never_too_low_after_a_lost_reply(
    kind: str, failure: Callable[[], Reply], raised: type[errors.EstatebotError]
) -> None:
    # The first attempt may have deleted both listings unanswered; the resend finds them gone
    # and answers 0. Neither 0 ("nothing deleted") nor a sum is the count: it is unknown, and
    # that is raised as the lost attempt's failure, which the sync runner then looks up.
    made = Made(kind, failure(), envelope({"SuccessCount": 0}))
    with pytest.raises(raised) as info:
        await made.call(lambda c: c.listings.delete(SERIAL, ["MLS-1", "MLS-2"]))
    assert len(made.requests) == 2
    assert "answered 0 of the 2 listings deleted" in str(info.value)
    assert "how many this delete deleted is unknown" in str(info.value)
    if isinstance(info.value, errors.APIConnectionError):
        assert info.value.sent is True


def _failure(kind: str) -> errors.EstatebotError:
    if kind == "dropped":
        return errors.APIConnectionError("dropped", operation="RealEstateDelete", sent=True)
    if kind == "never-sent":
        return errors.APIConnectionError("refused", operation="RealEstateDelete", sent=False)
    status = int(kind)
    return errors.error_class_for(status)("x", operation="RealEstateDelete", status_code=status)


@given(
    answered=st.integers(min_value=0, max_value=12),
    asked=st.integers(min_value=1, max_value=12),
    failures=st.lists(st.sampled_from(["dropped", "never-sent", "429", "503", "500", "408"])),
)
def test_a_deletes_count_is_the_answer_or_unknown_never_a_sum_or_too_low(
    answered: int, asked: int, failures: list[str]
) -> None:
    errs = [_failure(kind) for kind in failures]
    unsure = any(kind in ("dropped", "500", "408") for kind in failures)
    if unsure and answered < asked:
        with pytest.raises((errors.APIConnectionError, errors.APIError)):
            delete_count(answered, errs, asked)
    else:
        assert delete_count(answered, errs, asked) == answered


async def test_a_chat_message_that_may_have_been_answered_is_never_sent_again(kind: str) -> None:
    made = Made(kind, httpx.ReadTimeout("slow"), envelope({"messageid": 1, "content": "x"}))
    with pytest.raises(errors.APITimeoutError):
        await made.call(lambda c: c.chat.ask(5, "hello"))
    assert len(made.requests) == 1


# --------------------------------------------------------------------------- the policy


@pytest.mark.parametrize("operation", list(_base.OPERATIONS.values()), ids=lambda op: op.name)
@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("where", ["http", "envelope"])
def test_not_handled_is_retried_for_every_operation(
    operation: _base.Operation, status: int, where: str
) -> None:
    # The status may come as the HTTP status or as the envelope's Code under HTTP 200.
    http = status if where == "http" else 200
    error = errors.error_class_for(status)("x", operation=operation.name, code=status)
    error.status_code = http
    expected = not (operation is _base.CLIENT_ASK and status == 429)
    assert RetryPolicy().should_retry(operation, error) is expected


# --------------------------------------------------------------------------- reading the wait

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "0"}, 0.0),
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "Sat, 01 Mar 2025 12:00:30 GMT"}, 30.0),
        ({"retry-after": "Sat, 01 Mar 2025 11:00:00 GMT"}, 0.0),  # a date gone by
        ({"ratelimit-reset": "12"}, 12.0),
        ({"ratelimit": "limit=100, remaining=0, reset=25"}, 25.0),
        ({"ratelimit": '"default";r=0;t=40'}, 40.0),
        ({"x-ratelimit-reset": "15"}, 15.0),
        ({"x-ratelimit-reset": str(int(NOW.timestamp()) + 42)}, 42.0),  # a Unix time
        ({"x-ratelimit-reset": str(int(NOW.timestamp() * 1000) + 5000)}, 5.0),  # in ms
        ({"x-ratelimit-reset": str(int(NOW.timestamp()) - 100)}, 0.0),  # gone by
        # Retry-After first, then RateLimit-Reset, then X-RateLimit-Reset.
        ({"retry-after": "3", "ratelimit-reset": "9", "x-ratelimit-reset": "11"}, 3.0),
        ({"ratelimit-reset": "9", "x-ratelimit-reset": "11"}, 9.0),
        ({"retry-after": "soon", "x-ratelimit-reset": "11"}, 11.0),  # unreadable: the next
        ({"retry-after": "nan", "ratelimit-reset": "inf"}, None),
        ({}, None),
    ],
)
def test_the_wait_asked_for(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_from(headers, now=NOW) == expected


def test_the_wait_is_read_without_case_from_httpx_headers() -> None:
    headers = httpx.Headers({"X-RateLimit-Reset": "4"})
    assert retry_after_from(headers, now=NOW) == 4.0


@given(st.floats(min_value=0, max_value=1e8, allow_nan=False))
def test_any_delta_in_seconds_is_read_as_is(delta: float) -> None:
    text = repr(delta)
    assert parse_retry_after(text) == delta
    assert reset_seconds(text, now=NOW.timestamp()) == delta


@given(st.integers(min_value=0, max_value=10**7))
def test_a_unix_time_is_read_as_the_seconds_until_it(ahead: int) -> None:
    now = NOW.timestamp()
    assert reset_seconds(str(int(now) + ahead), now=now) == pytest.approx(ahead, abs=1e-6)
    in_ms = str(int(now * 1000) + ahead * 1000)
    assert reset_seconds(in_ms, now=now) == pytest.approx(ahead, abs=1e-3)
