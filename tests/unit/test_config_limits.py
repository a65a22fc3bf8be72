"""Impossible settings are refused by name, and a stream has an overall deadline by default.

A timeout of NaN, a negative deadline or an infinite backoff is a
:class:`~estatebot.errors.ConfigurationError` (a ``ValueError``) naming the argument and the
value, raised when the client is made (or, for a call's ``timeout=``, before anything is sent):
never a raw ``ValueError`` from deep inside httpx, asyncio or tenacity, and never a wait that
does not end. A chat stream ends at its ``stream_deadline``, 10 minutes unless set (None: none).
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from estatebot.api import AsyncClient, Client, errors
from estatebot.api._config import DEFAULT_STREAM_DEADLINE

BASE = "http://svc.test"
API_KEY = "limits-api-key-0c5a"

NAN, INF = math.nan, math.inf


def make(**options: Any) -> Client:
    return Client(base_url=BASE, api_key=API_KEY, **options)


# The settings in seconds that must be above 0 (None: no limit).
LIMITS = ["timeout", "deadline", "stream_deadline"]
# The waits that may be 0.
WAITS = ["backoff_base", "backoff_max", "max_retry_after"]


@pytest.mark.parametrize("value", [NAN, INF, -INF, -1, -0.001, 0, "30", True])
@pytest.mark.parametrize("option", LIMITS)
def test_an_impossible_limit_is_refused_by_name(option: str, value: Any) -> None:
    with pytest.raises(errors.ConfigurationError) as info:
        make(**{option: value})
    assert isinstance(info.value, ValueError)
    assert str(info.value) == (
        f"{option} must be a number of seconds above 0, or None for no limit; got {value!r}"
    )


@pytest.mark.parametrize("value", [NAN, INF, -INF, -1, "1", None, False])
@pytest.mark.parametrize("option", WAITS)
def test_an_impossible_wait_is_refused_by_name(option: str, value: Any) -> None:
    with pytest.raises(errors.ConfigurationError) as info:
        make(**{option: value})
    assert isinstance(info.value, ValueError)
    assert str(info.value) == (
        f"{option} must be a finite number of seconds, 0 or more; got {value!r}"
    )


@pytest.mark.parametrize("value", [-1, 1.5, NAN, INF, "3", None, True])
def test_an_impossible_retry_count_is_refused_by_name(value: Any) -> None:
    with pytest.raises(errors.ConfigurationError, match=r"^max_retries must be a whole number"):
        make(max_retries=value)


@pytest.mark.parametrize("value", [NAN, INF, 0, -5, 1e9 + 0.5])
def test_an_impossible_reply_cap_is_refused_by_name(value: Any) -> None:
    with pytest.raises(errors.ConfigurationError, match=r"^max_reply_bytes must be a whole"):
        make(max_reply_bytes=value)


@pytest.mark.parametrize("part", ["connect", "read", "write", "pool"])
@pytest.mark.parametrize("value", [NAN, INF, -2.0, 0.0])
def test_an_impossible_part_of_an_httpx_timeout_is_refused_by_name(part: str, value: float) -> None:
    timeout = httpx.Timeout(5.0, **{part: value})
    with pytest.raises(errors.ConfigurationError) as info:
        make(timeout=timeout)
    assert str(info.value).startswith(f"timeout.{part} must be a number of seconds above 0")


def test_the_async_client_refuses_the_same() -> None:
    with pytest.raises(errors.ConfigurationError, match=r"^deadline must be"):
        AsyncClient(base_url=BASE, api_key=API_KEY, deadline=NAN)


def test_possible_settings_are_kept() -> None:
    client = make(
        timeout=httpx.Timeout(3.0, connect=None),
        deadline=None,
        stream_deadline=None,
        max_retries=0,
        backoff_base=0,
        backoff_max=0,
        max_retry_after=0,
    )
    assert client._config.deadline is None
    assert client._config.stream_deadline is None
    assert client._policy.max_retries == 0
    assert client._policy.backoff_base == 0.0
    assert make(timeout=None)._config.timeout is None


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_a_deadline_is_kept_exactly_when_finite_and_above_0(value: float) -> None:
    if math.isfinite(value) and value > 0:
        assert make(deadline=value)._config.deadline == value
    else:
        with pytest.raises(errors.ConfigurationError, match=r"^deadline must be"):
            make(deadline=value)


# --------------------------------------------------------------------------- a call's timeout


async def _settled(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


class Recorder:
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200, json={"Data": [], "Success": True, "Code": 200})


@pytest.mark.parametrize("value", [NAN, INF, -1.0, 0, "5", httpx.Timeout(1.0, read=NAN)])
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_an_impossible_call_timeout_is_refused_before_sending(kind: str, value: Any) -> None:
    server = Recorder()
    transport = httpx.MockTransport(server)
    client: Client | AsyncClient
    if kind == "sync":
        client = Client(
            base_url=BASE, api_key=API_KEY, http_client=httpx.Client(transport=transport)
        )
    else:
        client = AsyncClient(
            base_url=BASE, api_key=API_KEY, http_client=httpx.AsyncClient(transport=transport)
        )
    with pytest.raises(errors.ConfigurationError, match=r"^timeout(\.read)? must be"):
        await _settled(client.chatbots.models(timeout=value))
    assert server.requests == []


# --------------------------------------------------------------------------- the stream deadline


def test_a_stream_has_a_ten_minute_deadline_by_default() -> None:
    assert DEFAULT_STREAM_DEADLINE == 600.0
    client = make()
    assert client._config.stream_deadline == 600.0
    assert Client.like(make(stream_deadline=None))._config.stream_deadline is None
    assert Client.like(make(stream_deadline=5))._config.stream_deadline == 5.0


class Trickle(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A stream that sends a fragment every ``every`` seconds, for ever."""

    def __init__(self, every: float) -> None:
        self.every = every

    def __iter__(self) -> Iterator[bytes]:
        while True:
            yield b'data: {"content": "."}\n\n'
            time.sleep(self.every)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            yield b'data: {"content": "."}\n\n'
            await asyncio.sleep(self.every)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_trickling_stream_ends_at_its_deadline(kind: str) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": "text/event-stream"}
        return httpx.Response(200, headers=headers, stream=Trickle(0.02))

    transport = httpx.MockTransport(answer)
    options: dict[str, Any] = {"base_url": BASE, "api_key": API_KEY, "stream_deadline": 0.3}
    texts: list[str] = []

    async def consume() -> None:
        if kind == "sync":
            client = Client(http_client=httpx.Client(transport=transport), **options)
            with client.chat.stream(5, "hi") as stream:
                texts.extend(stream)
            return
        aclient = AsyncClient(http_client=httpx.AsyncClient(transport=transport), **options)
        async with aclient.chat.stream(5, "hi") as astream:
            async for text in astream:
                texts.append(text)

    started = time.monotonic()
    with pytest.raises(errors.APITimeoutError) as info:
        await consume()
    assert time.monotonic() - started < 3.0
    assert info.value.deadline == 0.3
    assert "within the 0.3 s stream deadline" in str(info.value)
    assert texts  # what came before the deadline was handed out
