"""The chat panel after a failure, against the real emulator: Retry, the rate limit's countdown
clearing when sending works again, answer hooks, and Reconnect after the client was closed."""

from __future__ import annotations

import asyncio
import re
from datetime import datetime, timedelta
from typing import Any

from estatebot.api.client import Client
from estatebot.chat.panel import ChatPanel, Turn

AUSTIN = "3 bedroom homes in Austin under $600k"


async def answer(panel: ChatPanel, text: str) -> Turn:
    return await asyncio.wait_for(panel.ask(text), timeout=20)


async def test_retry_after_a_rate_limit_answers_in_place_and_the_countdown_clears(
    client: Client, emulator: Any
) -> None:
    client.chatbots.edit(
        emulator.serial, RateLimitCount=1, RateLimitTime=60, RateLimitMessage="Slow down, please"
    )
    panel = ChatPanel(client, emulator.serial)
    try:
        assert (await answer(panel, AUSTIN)).state == "done"
        refused = await answer(panel, AUSTIN)
        assert refused.state == "failed"
        assert refused.error_title == "Rate limited"
        assert panel.rate_limited_for is not None
        assert re.search(r"Rate limited: retry in \d+ s", panel.turn_views[-1].value)
        button = panel.retry_button(refused)
        assert button is not None
        assert button.description == "Retry"

        # The limit is lifted: Retry asks again in the same place, and the countdown goes.
        client.chatbots.edit(emulator.serial, RateLimitCount=0)
        turns_before = len(panel.turns)
        button.click()
        await asyncio.wait_for(panel.wait(), timeout=20)
        assert refused.state == "done"
        assert "MLS# ATX1001" in refused.text
        assert len(panel.turns) == turns_before
        assert panel.retry_button(refused) is None
        assert panel.rate_limited_for is None
        assert "Rate limited" not in panel.status.value
        assert "Rate limited" not in panel.turn_views[-1].value
    finally:
        panel.close()


async def test_the_countdown_ends_by_itself_when_the_time_is_up(
    client: Client, emulator: Any
) -> None:
    client.chatbots.edit(emulator.serial, RateLimitCount=1, RateLimitTime=60)
    panel = ChatPanel(client, emulator.serial)
    try:
        await answer(panel, AUSTIN)
        refused = await answer(panel, AUSTIN)
        assert "Rate limited: retry in" in panel.status.value
        # As if the minute had passed: the next tick of the countdown clears it.
        past = datetime.now() - timedelta(seconds=1)
        refused.retry_at = past
        panel._retry_at = past
        panel._tick()
        assert panel.rate_limited_for is None
        assert "Rate limited" not in panel.status.value
        assert "Rate limited: you can retry now" in panel.turn_views[-1].value
    finally:
        panel.close()


async def test_answer_hooks_add_html_under_each_complete_answer(
    client: Client, emulator: Any
) -> None:
    panel = ChatPanel(client, emulator.serial)
    try:
        seen: list[str] = []

        @panel.on_answer
        def mark(turn: Turn) -> str:
            seen.append(turn.text)
            return '<span class="badge-checked">checked</span>'

        done = await answer(panel, AUSTIN)
        assert seen == [done.text]
        assert '<div class="eb-extra"><span class="badge-checked">checked</span></div>' in (
            panel.turn_views[-1].value
        )
    finally:
        panel.close()


async def test_a_panel_whose_client_was_closed_reconnects_and_answers(
    client: Client, emulator: Any
) -> None:
    panel = ChatPanel(client, emulator.serial)
    try:
        assert (await answer(panel, AUSTIN)).state == "done"
        client.close()  # what a notebook's clean-up cell does
        closed = await answer(panel, AUSTIN)
        assert closed.state == "failed"
        assert closed.error == "This panel's client was closed"
        assert "client was closed" in panel.status.value
        assert panel.reconnect_button.layout.display is None
        assert emulator.api_key not in panel.transcript_html
        panel.reconnect_button.click()
        assert not panel.client_closed
        again = await answer(panel, AUSTIN)
        assert again.state == "done"
        assert "MLS# ATX1001" in again.text
        assert again.session_id == closed.session_id  # the chat session is kept
    finally:
        panel.close()
