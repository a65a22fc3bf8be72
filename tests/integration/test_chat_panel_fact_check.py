"""The chat panel's fact-check against the real emulator: a badge under each answer that states
facts the chatbot's listings do not hold, none under grounded answers, the listings pulled once
and again on New session; and the panel's title from the name the client set."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

import estatebot as eb
from estatebot.api.client import Client
from estatebot.chat.panel import ChatPanel, Turn
from estatebot.emulator import EmulatorServer

QUESTIONS = [
    "3 bedroom homes in Austin under $600k",
    "homes for sale in Denver",
    "rentals in Austin",
    "4 bedroom homes in Austin",
    "condos for sale",
]


def _client(server: EmulatorServer) -> Client:
    return Client(base_url=server.base_url, api_key=server.api_key, session_key=server.session_key)


@pytest.fixture
def lying() -> Iterator[EmulatorServer]:
    with eb.emulator.running(seed="small", hallucinate_rate=1.0, fault_seed=3) as server:
        yield server


async def _answer(panel: ChatPanel, text: str) -> Turn:
    return await asyncio.wait_for(panel.ask(text), timeout=30)


async def _ask_every_question(server: EmulatorServer) -> tuple[ChatPanel, list[Turn]]:
    """A fact-checked panel that asked :data:`QUESTIONS` (closed), and its turns."""
    with _client(server) as client:
        panel = ChatPanel(client, server.serial, stream=False, fact_check=True)
        try:
            turns = [await _answer(panel, question) for question in QUESTIONS]
        finally:
            panel.close()
    return panel, turns


def _wait_for_pulls(server: EmulatorServer, count: int) -> None:
    # The panel pulls in the background: wait (boundedly) until the List requests arrived.
    deadline = time.monotonic() + 20
    while server.request_counts["RealEstateList"] < count and time.monotonic() < deadline:
        time.sleep(0.05)


async def test_falsified_answers_get_a_badge_with_the_claims(lying: EmulatorServer) -> None:
    panel, turns = await _ask_every_question(lying)
    falsified = lying.falsified
    lied = [turn for turn in turns if turn.answer_id in falsified]
    assert lied, "the fault falsified no answer: the test shows nothing"
    for turn in lied:
        assert "not in your listings" in turn.extra_html, turn.text
    claims = panel.claims
    doubtful = claims[claims["verdict"] != "supported"]
    assert set(doubtful["turn"]) == {turn.turn for turn in lied}
    truth = next(f for f in falsified.values() if f.kind != "invented")
    assert truth.mls_number in set(doubtful["listing"])
    assert "not in your listings" in panel.transcript_html


async def test_grounded_answers_get_no_badge(emulator: EmulatorServer) -> None:
    panel, turns = await _ask_every_question(emulator)
    assert all(turn.state == "done" for turn in turns)
    assert "not in your listings" not in panel.transcript_html
    claims = panel.claims
    assert not claims.empty  # the answers were checked: their facts hold
    assert set(claims["verdict"]) == {"supported"}


async def test_the_listings_are_pulled_once_and_again_on_new_session(
    emulator: EmulatorServer,
) -> None:
    with _client(emulator) as client:
        panel = ChatPanel(client, emulator.serial, stream=False, fact_check=True)
        try:
            await _answer(panel, QUESTIONS[0])
            await _answer(panel, QUESTIONS[1])
            _wait_for_pulls(emulator, 1)
            once = emulator.request_counts["RealEstateList"]
            assert once >= 1
            await asyncio.wait_for(asyncio.wrap_future(panel.new_session()), timeout=20)
            _wait_for_pulls(emulator, 2 * once)
            await _answer(panel, QUESTIONS[2])
            assert emulator.request_counts["RealEstateList"] == 2 * once
        finally:
            panel.close()


def test_without_fact_check_nothing_is_pulled(emulator: EmulatorServer) -> None:
    with _client(emulator) as client:
        panel = ChatPanel(client, emulator.serial, stream=False)
        try:
            panel.ask_sync(QUESTIONS[0], timeout=30)
        finally:
            panel.close()
    assert emulator.request_counts["RealEstateList"] == 0
    assert panel.claims.empty


def test_the_title_is_the_name_the_client_set(emulator: EmulatorServer) -> None:
    with _client(emulator) as client:
        unnamed = ChatPanel(client, emulator.serial)
        client.chatbots.edit(emulator.serial, Name="Lakeside Realty Bot")
        named = ChatPanel(client, emulator.serial)
        try:
            assert unnamed.title == f"Chatbot {emulator.serial}"
            assert named.title == "Lakeside Realty Bot"
            assert "Lakeside Realty Bot" in named.header.value
        finally:
            unnamed.close()
            named.close()
