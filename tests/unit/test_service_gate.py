"""ServiceGate: one cap on requests in flight and one hold-off after a 429, shared by clients.

The clients talk to ``httpx.MockTransport`` handlers here (timing and concurrency are what is
measured, not the wire); the emulator and Dask versions are in ``tests/integration``.
"""

from __future__ import annotations

import asyncio
import pickle
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estatebot.api import AsyncClient, Client, RequestGate, ServiceGate
from estatebot.errors import ConfigurationError, RateLimitError

BASE = "http://svc.test"
API_KEY = "gate-test-api-key-5c1a"
SESSION_KEY = "gate-test-session-key-9e0b"
MODELS = [{"Key": "2", "Value": "gpt-4o", "Status": True}]


def envelope(data: Any = MODELS, *, status: int = 200, **headers: str) -> httpx.Response:
    body = {"Data": data, "Success": status == 200, "Code": status, "Message": ""}
    return httpx.Response(status, json=body, headers=headers)


def make_client(handler: Callable[[httpx.Request], httpx.Response], **options: Any) -> Client:
    transport = httpx.MockTransport(handler)
    return Client(
        base_url=BASE,
        api_key=API_KEY,
        session_key=SESSION_KEY,
        http_client=httpx.Client(transport=transport),
        **options,
    )


class Concurrency:
    """Counts the requests a handler is inside at once; each stays ``hold`` seconds."""

    def __init__(self, hold: float) -> None:
        self.hold = hold
        self.now = 0
        self.peak = 0
        self.calls = 0
        self._lock = threading.Lock()

    def enter(self) -> None:
        with self._lock:
            self.now += 1
            self.calls += 1
            self.peak = max(self.peak, self.now)

    def leave(self) -> None:
        with self._lock:
            self.now -= 1

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.enter()
        try:
            time.sleep(self.hold)
            return envelope()
        finally:
            self.leave()


class ThrottledOnce:
    """Answers the first request with ``first`` (a 429 or 503), then normally; ``hit`` is set
    once that first reply has been given."""

    def __init__(self, first: httpx.Response) -> None:
        self.first: httpx.Response | None = first
        self.hit = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            first, self.first = self.first, None
        if first is not None:
            self.hit.set()
            return first
        return envelope()


def ok(request: httpx.Request) -> httpx.Response:
    return envelope()


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ESTATEBOT_BASE_URL", "ESTATEBOT_API_KEY", "ESTATEBOT_SESSION_KEY"):
        monkeypatch.delenv(name, raising=False)


def seen_by(gate: ServiceGate | None) -> None:
    """Wait until the client that got the 429 has read it (and told the gate, if any)."""
    limit = time.monotonic() + 5
    while gate is not None and gate.throttled == 0 and time.monotonic() < limit:
        time.sleep(0.002)
    if gate is None:
        time.sleep(0.05)


def throttled_then_timed(gate: ServiceGate | None, first: httpx.Response) -> float:
    """Client A gets ``first`` (and retries); once it has, client B's request is timed."""
    throttled = ThrottledOnce(first)
    with make_client(throttled, gate=gate) as a, make_client(ok, gate=gate) as b:
        worker = threading.Thread(target=a.chatbots.models)
        worker.start()
        assert throttled.hit.wait(5)
        seen_by(gate)
        started = time.monotonic()
        assert b.chatbots.models()[0].name == "gpt-4o"
        elapsed = time.monotonic() - started
        worker.join(10)
        assert not worker.is_alive()
    return elapsed


def test_a_429_to_one_client_holds_off_the_other() -> None:
    gate = ServiceGate(4)
    elapsed = throttled_then_timed(gate, envelope(status=429, **{"Retry-After": "1"}))
    assert 0.8 <= elapsed < 3.0
    assert gate.throttled == 1
    assert gate.held_off_seconds >= 0.8


def test_without_a_gate_the_other_client_is_not_held_off() -> None:
    elapsed = throttled_then_timed(None, envelope(status=429, **{"Retry-After": "1"}))
    assert elapsed < 0.5


def test_a_503_without_a_wait_holds_off_for_the_default() -> None:
    gate = ServiceGate(4, default_hold_off=0.6)
    elapsed = throttled_then_timed(gate, envelope(status=503))
    assert 0.45 <= elapsed < 2.5
    assert gate.throttled == 1


def test_a_wait_past_max_retry_after_holds_off_no_longer_than_it() -> None:
    # The client gives up on a wait longer than max_retry_after; the fleet waits that long.
    gate = ServiceGate(4)
    throttled = ThrottledOnce(envelope(status=429, **{"Retry-After": "3600"}))
    with (
        make_client(throttled, gate=gate, max_retry_after=0.5) as client,
        pytest.raises(RateLimitError),
    ):
        client.chatbots.models()
    assert gate.throttled == 1
    assert 0.0 < gate.hold_off_left <= 0.5


def test_other_failures_hold_off_nothing() -> None:
    gate = ServiceGate(4)
    failing = ThrottledOnce(envelope(status=500))
    with make_client(failing, gate=gate, backoff_base=0.01, backoff_max=0.02) as client:
        client.chatbots.models()
    assert gate.throttled == 0
    assert gate.hold_off_left == 0.0


def test_ten_threads_never_pass_the_cap() -> None:
    gate = ServiceGate(3)
    handler = Concurrency(hold=0.05)
    clients = [make_client(handler, gate=gate) for _ in range(10)]

    def work(client: Client) -> None:
        for _ in range(3):
            client.chatbots.models()

    threads = [threading.Thread(target=work, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert handler.calls == 30
    assert handler.peak == 3  # reached, never passed
    assert gate.peak_in_flight == 3
    assert gate.in_flight == 0
    for client in clients:
        client.close()


def test_without_a_gate_the_same_threads_pass_three() -> None:
    handler = Concurrency(hold=0.05)
    clients = [make_client(handler) for _ in range(10)]
    barrier = threading.Barrier(10)

    def work(client: Client) -> None:
        barrier.wait()
        client.chatbots.models()

    threads = [threading.Thread(target=work, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert handler.peak > 3


def test_hold_offs_extend_and_never_shorten() -> None:
    gate = ServiceGate(2)
    gate.hold_off(0.6)
    gate.hold_off(0.05)  # shorter: the longer one stands
    assert gate.hold_off_left > 0.5
    started = time.monotonic()
    gate.enter()
    gate.leave()
    assert time.monotonic() - started >= 0.5
    gate.hold_off(0.2)
    gate.hold_off(0.5)  # longer: it extends
    assert gate.hold_off_left > 0.4
    assert gate.throttled == 4


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=0, max_value=100, allow_nan=False), min_size=1, max_size=8))
def test_the_hold_off_is_the_longest_asked(waits: list[float]) -> None:
    gate = ServiceGate(1)
    before = time.monotonic()
    for seconds in waits:
        gate.hold_off(seconds)
    spent = time.monotonic() - before
    longest = max(waits)
    assert longest - spent - 1e-6 <= gate.hold_off_left <= longest + 1e-6
    assert gate.throttled == len(waits)


def test_a_hold_off_begun_while_waiting_for_a_slot_is_waited_out() -> None:
    gate = ServiceGate(1)
    gate.enter()
    entered = threading.Event()

    def second() -> None:
        gate.enter()
        entered.set()
        gate.leave()

    waiter = threading.Thread(target=second)
    waiter.start()
    time.sleep(0.05)
    gate.hold_off(0.5)
    gate.leave()  # the slot frees, but the service is now held off
    assert not entered.wait(0.3)
    assert entered.wait(2)
    waiter.join(2)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "4", None])
def test_an_impossible_cap_is_refused_by_name(bad: Any) -> None:
    with pytest.raises(ConfigurationError, match=rf"max_in_flight.*{bad!r}"):
        ServiceGate(bad)


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_an_impossible_hold_off_is_refused_by_name(bad: float) -> None:
    with pytest.raises(ConfigurationError, match="default_hold_off"):
        ServiceGate(2, default_hold_off=bad)
    gate = ServiceGate(2)
    with pytest.raises(ConfigurationError, match="seconds"):
        gate.hold_off(bad)
    assert gate.hold_off_left == 0.0
    assert gate.throttled == 0


def test_a_client_refuses_what_is_not_a_gate() -> None:
    with pytest.raises(ConfigurationError, match="gate"):
        make_client(ok, gate=object())


def test_like_passes_the_gate_on() -> None:
    gate = ServiceGate(2)
    with make_client(ok, gate=gate) as original:
        copy = Client.like(original)
        async_copy = AsyncClient.like(original)
        assert copy.gate is gate
        assert async_copy.gate is gate
        copy.close()
    with make_client(ok) as plain:
        assert Client.like(plain).gate is None


def test_the_gate_is_a_request_gate_and_shows_its_state() -> None:
    gate = ServiceGate(3)
    assert isinstance(gate, RequestGate)
    assert "max_in_flight=3" in repr(gate)
    assert "holding off" not in repr(gate)
    gate.hold_off(5)
    shown = repr(gate)
    assert "holding off" in shown
    assert "throttled=1" in shown


def test_a_client_with_a_gate_shows_no_key() -> None:
    gate = ServiceGate(2)
    with make_client(ok, gate=gate) as client:
        assert API_KEY not in repr(client)
        assert SESSION_KEY not in repr(client)
        assert API_KEY not in repr(gate)


def test_pickling_the_gate_says_to_use_the_dask_gate() -> None:
    gate = ServiceGate(2)
    with pytest.raises(TypeError, match="DaskServiceGate"):
        pickle.dumps(gate)


# --------------------------------------------------------------------------- async


def make_async_client(handler: Any, **options: Any) -> AsyncClient:
    transport = httpx.MockTransport(handler)
    return AsyncClient(
        base_url=BASE,
        api_key=API_KEY,
        session_key=SESSION_KEY,
        http_client=httpx.AsyncClient(transport=transport),
        **options,
    )


async def test_an_async_client_waits_out_a_hold_off_without_blocking_the_loop() -> None:
    gate = ServiceGate(2)

    async def handler(request: httpx.Request) -> httpx.Response:
        return envelope()

    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            await asyncio.sleep(0.01)
            ticks += 1

    async with make_async_client(handler, gate=gate) as client:
        gate.hold_off(0.5)
        ticking = asyncio.create_task(ticker())
        started = time.monotonic()
        await client.chatbots.models()
        elapsed = time.monotonic() - started
        stop.set()
        await ticking
    assert elapsed >= 0.45
    assert ticks >= 15  # the loop kept running while the request waited
    assert gate.held_off_seconds >= 0.45


async def test_async_clients_never_pass_the_cap() -> None:
    gate = ServiceGate(2)
    counter = Concurrency(hold=0.0)

    async def handler(request: httpx.Request) -> httpx.Response:
        counter.enter()
        try:
            await asyncio.sleep(0.03)
            return envelope()
        finally:
            counter.leave()

    clients = [make_async_client(handler, gate=gate) for _ in range(8)]
    await asyncio.gather(*(client.chatbots.models() for client in clients for _ in range(2)))
    assert counter.calls == 16
    assert counter.peak == 2
    assert gate.in_flight == 0
    for client in clients:
        await client.aclose()


async def test_an_async_429_holds_off_a_sync_client_of_the_same_gate() -> None:
    gate = ServiceGate(4)
    throttled = ThrottledOnce(envelope(status=429, **{"Retry-After": "1"}))

    async def handler(request: httpx.Request) -> httpx.Response:
        return throttled(request)

    def timed_sync_request() -> float:
        with make_client(ok, gate=gate) as other:
            started = time.monotonic()
            other.chatbots.models()
            return time.monotonic() - started

    async with make_async_client(handler, gate=gate) as client:
        first = asyncio.create_task(client.chatbots.models())
        assert await asyncio.to_thread(throttled.hit.wait, 5)
        await asyncio.to_thread(seen_by, gate)
        elapsed = await asyncio.to_thread(timed_sync_request)
        await first
    assert gate.throttled == 1
    assert 0.8 <= elapsed < 3.0


async def test_a_cancelled_waiter_keeps_no_slot() -> None:
    gate = ServiceGate(1)
    gate.enter()
    waiting = asyncio.create_task(gate.aenter())
    await asyncio.sleep(0.05)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    gate.leave()
    await asyncio.wait_for(gate.aenter(), 1)  # the one slot is free again
    assert gate.in_flight == 1
    await gate.aleave()
    assert gate.in_flight == 0


def test_a_slot_is_given_back_when_looking_at_the_hold_off_fails() -> None:
    gate = ServiceGate(max_in_flight=1)
    calls = {"n": 0}
    real = gate._hold_off_left

    def failing() -> float:
        calls["n"] += 1
        if calls["n"] == 2:  # the look taken while holding the slot
            raise TimeoutError("the scheduler did not answer")
        return real()

    gate._hold_off_left = failing  # type: ignore[method-assign]
    with pytest.raises(TimeoutError):
        gate.enter()
    gate._hold_off_left = real  # type: ignore[method-assign]
    assert gate.in_flight == 0
    gate.enter()  # the one slot is free again: this would block forever otherwise
    gate.leave()
