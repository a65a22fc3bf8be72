"""Shared limits over real HTTP: clients of two chatbots of one emulator share a ServiceGate.

The emulator's ``rate_limit`` throttles each chatbot on its own, so without a gate a 429 to one
chatbot leaves the other's requests alone; with a gate, the other chatbot's client is held off
too. A live chat stream holds its slot only until its headers arrive.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from estatebot.api import Client, ServiceGate
from estatebot.emulator import EmulatorServer


@pytest.fixture
def second_serial(emulator: EmulatorServer) -> str:
    """A second chatbot of the demo workspace, with no listings."""
    return emulator.add_chatbot(emulator.api_key, Name="Second Office")


def client_of(emulator: EmulatorServer, gate: ServiceGate | None) -> Client:
    return Client(
        base_url=emulator.base_url,
        api_key=emulator.api_key,
        session_key=emulator.session_key,
        gate=gate,
    )


@pytest.fixture
def clients(
    emulator: EmulatorServer, request: pytest.FixtureRequest
) -> Iterator[tuple[Client, Client, ServiceGate | None]]:
    gate = ServiceGate(8) if request.param else None
    with client_of(emulator, gate) as first, client_of(emulator, gate) as second:
        yield first, second, gate


def throttle_first_chatbot(emulator: EmulatorServer, client: Client) -> threading.Thread:
    """Use up the first chatbot's limit so its next page gets a 429 (and is retried)."""
    emulator.faults.rate_limit = (2, 1.0)
    client.listings.list_page(emulator.serial)
    client.listings.list_page(emulator.serial)
    worker = threading.Thread(target=client.listings.list_page, args=(emulator.serial,))
    worker.start()
    return worker


def wait_for_throttle(gate: ServiceGate | None, before: float) -> None:
    limit = time.monotonic() + 5
    while time.monotonic() < limit:
        if gate is not None and gate.throttled:
            return
        if gate is None and time.monotonic() - before > 0.2:
            return  # the third page has long since been answered with its 429
        time.sleep(0.005)
    raise AssertionError("the first chatbot was never throttled")


@pytest.mark.parametrize("clients", [True], indirect=True)
def test_a_429_on_one_chatbot_slows_the_other(
    emulator: EmulatorServer,
    second_serial: str,
    clients: tuple[Client, Client, ServiceGate | None],
) -> None:
    first, second, gate = clients
    assert gate is not None
    before = time.monotonic()
    worker = throttle_first_chatbot(emulator, first)
    wait_for_throttle(gate, before)
    started = time.monotonic()
    page = second.listings.list_page(second_serial)
    elapsed = time.monotonic() - started
    worker.join(10)
    assert page.virtual_count == 0
    assert elapsed >= 0.6  # held off for (most of) the second the emulator asked for
    assert gate.throttled >= 1
    assert gate.held_off_seconds >= 0.6
    assert gate.in_flight == 0


@pytest.mark.parametrize("clients", [False], indirect=True)
def test_without_a_gate_the_other_chatbot_is_not_slowed(
    emulator: EmulatorServer,
    second_serial: str,
    clients: tuple[Client, Client, ServiceGate | None],
) -> None:
    first, second, _ = clients
    before = time.monotonic()
    worker = throttle_first_chatbot(emulator, first)
    wait_for_throttle(None, before)
    started = time.monotonic()
    second.listings.list_page(second_serial)
    elapsed = time.monotonic() - started
    worker.join(10)
    assert elapsed < 0.4
    assert emulator.request_counts["RealEstateList"] >= 5  # the 429 and its retry came


def test_threads_of_many_chatbots_stay_under_the_cap(emulator: EmulatorServer) -> None:
    emulator.faults.latency_ms = 40
    serials = [emulator.add_chatbot(emulator.api_key, Name=f"Office {n}") for n in range(6)]
    gate = ServiceGate(2)
    inside: list[int] = []
    lock = threading.Lock()

    def work(serial: str) -> None:
        with client_of(emulator, gate) as client:
            for _ in range(2):
                client.listings.list_page(serial)
                with lock:
                    inside.append(gate.in_flight)

    threads = [threading.Thread(target=work, args=(serial,)) for serial in serials]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    elapsed = time.monotonic() - started
    assert emulator.request_counts["RealEstateList"] == 12
    assert gate.peak_in_flight == 2
    # 12 requests of at least 40 ms, two at a time: at least six rounds.
    assert elapsed >= 6 * 0.04
    assert all(count <= 2 for count in inside)


def test_a_live_stream_gives_its_slot_back_once_it_has_begun(emulator: EmulatorServer) -> None:
    emulator.stream_delay_ms = 150
    gate = ServiceGate(1)
    with client_of(emulator, gate) as chatting, client_of(emulator, gate) as other:
        session = chatting.chat.create_session(emulator.serial)
        with chatting.chat.stream(session, "Which homes do you have with 3 bedrooms?") as stream:
            pieces = iter(stream)
            first = next(pieces)
            assert gate.in_flight == 0  # the answer is still coming; the slot is free
            started = time.monotonic()
            other.chatbots.models()
            elapsed = time.monotonic() - started
            rest = "".join(pieces)
        assert first
        assert rest
    assert elapsed < 0.5
    assert gate.peak_in_flight == 1
