"""Client and AsyncClient against the real emulator: paging edges, retries under injected
faults, streams in every framing, closing a stream early, and secrets kept out of the logs."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from estatebot import errors
from estatebot.api import AsyncClient, Client
from estatebot.api.models import ListingPage, StreamResult
from integration.test_client_ops import LISTING, Api, collect


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def api(kind: str, emulator: Any) -> AsyncIterator[Api]:
    # The emulator asks to wait 1 s: within the cap, so a throttled call is waited out and
    # retried (a longer Retry-After is raised at once).
    made = Api(kind, emulator, max_retry_after=1.0)
    yield made
    await made.close()


def chatbot_with(server: Any, count: int) -> str:
    """A new chatbot in the demo workspace holding ``count`` listings."""
    serial = server.add_chatbot(server.api_key, Name=f"{count} listings")
    bodies = [
        {**LISTING, "MLSNumber": f"P{i:04d}", "Url": f"https://homes.test/p/{i}"}
        for i in range(count)
    ]
    server.add_listings(serial, bodies)
    return str(serial)


async def all_pages(api: Api, serial: str, **kwargs: Any) -> list[ListingPage]:
    return await collect(api.client.listings.iter_pages(serial, **kwargs))


def ids(pages: list[ListingPage]) -> list[int]:
    return [int(record["ID"]) for page in pages for record in page.records]


# --------------------------------------------------------------------------- paging


async def test_iter_pages_of_an_empty_chatbot(api: Api, emulator: Any) -> None:
    serial = chatbot_with(emulator, 0)
    assert await all_pages(api, serial, page_size=10) == []
    assert emulator.request_counts["RealEstateList"] == 1


# A full last page is checked with one more (the count may be low, and the contract's rule is to
# stop at a short or empty page); a short last page ends paging at once.
@pytest.mark.parametrize(("count", "size", "requests"), [(20, 10, 3), (10, 10, 2), (23, 10, 3)])
async def test_iter_pages_checks_past_a_full_last_page_only(
    api: Api, emulator: Any, count: int, size: int, requests: int
) -> None:
    serial = chatbot_with(emulator, count)
    pages = await all_pages(api, serial, page_size=size)
    assert len(ids(pages)) == count
    assert len(set(ids(pages))) == count
    assert emulator.request_counts["RealEstateList"] == requests


async def test_list_page_past_the_end(api: Api, emulator: Any) -> None:
    serial = chatbot_with(emulator, 5)
    page = await api(lambda c: c.listings.list_page(serial, page=9, page_size=5))
    assert page.records == []
    assert page.virtual_count == 5


async def test_iter_pages_follows_a_server_cap(api: Api, emulator: Any) -> None:
    serial = chatbot_with(emulator, 20)
    emulator.max_page_size = 7
    pages = await all_pages(api, serial, page_size=10)
    assert [len(p.records) for p in pages] == [7, 7, 6]
    assert sorted(ids(pages)) == sorted(set(ids(pages)))
    assert len(ids(pages)) == 20


async def test_iter_pages_with_filters(api: Api, emulator: Any) -> None:
    expected = await api(lambda c: c.listings.list_page(emulator.serial, sale_type="for_rent"))
    pages = await all_pages(api, emulator.serial, sale_type="for_rent", page_size=2)
    assert len(ids(pages)) == expected.virtual_count


# --------------------------------------------------------------------------- faults and retries


async def test_throttle_burst_is_retried_to_success(api: Api, emulator: Any) -> None:
    emulator.faults.throttle_burst = 2
    page = await api(lambda c: c.listings.list_page(emulator.serial))
    assert page.records
    assert emulator.request_counts["RealEstateList"] == 3


async def test_server_failures_are_retried_to_success(api: Api, emulator: Any) -> None:
    emulator.faults.fail_rate = 0.5
    emulator.faults.only = {"RealEstateList"}
    for _ in range(5):
        await api(lambda c: c.listings.list_page(emulator.serial, page_size=5))
    assert emulator.request_counts["RealEstateList"] > 5  # some attempts failed, none surfaced


async def test_failures_exhaust_retries_then_raise(kind: str, emulator: Any) -> None:
    api = Api(kind, emulator, max_retries=2)
    emulator.faults.fail_rate = 1.0
    with pytest.raises(errors.ServerError):
        await api(lambda c: c.listings.list_page(emulator.serial))
    assert emulator.request_counts["RealEstateList"] == 3
    await api.close()


async def test_throttled_beyond_retries_gives_retry_after(kind: str, emulator: Any) -> None:
    api = Api(kind, emulator, max_retries=0)
    emulator.faults.throttle_burst = 1
    emulator.faults.retry_after_s = 4
    with pytest.raises(errors.RateLimitError) as info:
        await api(lambda c: c.chatbots.edit(emulator.serial, Name="x"))
    assert info.value.retry_after == 4
    assert info.value.message
    await api.close()


async def test_dropped_list_replies_are_retried(api: Api, emulator: Any) -> None:
    emulator.faults.drop_rate = 1.0
    emulator.faults.only = {"RealEstateList"}
    with pytest.raises(errors.APIConnectionError):
        await api(lambda c: c.listings.list_page(emulator.serial))
    assert emulator.request_counts["RealEstateList"] == 4  # 1 + max_retries
    emulator.faults.drop_rate = 0.5
    page = await api(lambda c: c.listings.list_page(emulator.serial))
    assert page.records


async def test_dropped_ask_is_not_retried(api: Api, emulator: Any) -> None:
    session = await api(lambda c: c.chat.create_session(emulator.serial))
    emulator.faults.drop_rate = 1.0
    emulator.faults.only = {"ClientAsk"}
    with pytest.raises(errors.APIConnectionError):
        await api(lambda c: c.chat.ask(session, "Homes in Austin?"))
    assert emulator.request_counts["ClientAsk"] == 1


async def test_failed_ask_is_not_retried(api: Api, emulator: Any) -> None:
    session = await api(lambda c: c.chat.create_session(emulator.serial))
    emulator.faults.fail_rate = 1.0
    emulator.faults.only = {"ClientAsk"}
    with pytest.raises(errors.ServerError):
        await api(lambda c: c.chat.ask(session, "Homes in Austin?"))
    assert emulator.request_counts["ClientAsk"] == 1


async def test_per_call_timeout(kind: str, emulator: Any) -> None:
    api = Api(kind, emulator, max_retries=0)
    emulator.faults.latency_ms = 200
    emulator.faults.only = {"ModelList"}
    with pytest.raises(errors.APITimeoutError):
        await api(lambda c: c.chatbots.models(timeout=0.05))
    assert await api(lambda c: c.chatbots.models(timeout=5))
    await api.close()


# --------------------------------------------------------------------------- streams


async def stream_once(
    api: Api, session: int, question: str, **kwargs: Any
) -> tuple[list[str], StreamResult]:
    texts: list[str] = []
    if isinstance(api.client, Client):
        with api.client.chat.stream(session, question, **kwargs) as s:
            texts.extend(s)
        return texts, s.result
    async with api.client.chat.stream(session, question, **kwargs) as a:
        texts.extend([text async for text in a])
    return texts, a.result


QUESTION = "What homes for rent do you have in Denver?"


async def test_every_framing_gives_the_same_answer(api: Api, emulator: Any) -> None:
    session = await api(lambda c: c.chat.create_session(emulator.serial))
    plain = await api(lambda c: c.chat.ask(session, QUESTION))
    for framing in ("sse", "ndjson", "concatenated"):
        emulator.framing = framing
        texts, result = await stream_once(api, session, QUESTION)
        assert len(texts) > 1, framing
        assert "".join(texts) == result.answer == plain.content, framing
        assert result.complete, framing
        assert result.question_id is not None, framing
        assert result.answer_id is not None, framing
        assert result.total_tokens == plain.total_tokens, framing
    assert emulator.request_counts["ClientAsk"] == 4


async def test_stream_error_before_the_stream(api: Api, emulator: Any) -> None:
    with pytest.raises(errors.NotFoundError):
        await stream_once(api, 424242, QUESTION)


async def test_stream_dropped_mid_way(api: Api, emulator: Any) -> None:
    session = await api(lambda c: c.chat.create_session(emulator.serial))
    emulator.faults.drop_rate = 1.0
    emulator.faults.only = {"ClientAsk"}
    with pytest.raises(errors.APIConnectionError):
        await stream_once(api, session, QUESTION)
    assert emulator.request_counts["ClientAsk"] == 1


def test_breaking_out_closes_the_response(emulator: Any) -> None:
    emulator.stream_delay_ms = 100
    client = Client(base_url=emulator.base_url, api_key=emulator.api_key)
    session = client.chat.create_session(emulator.serial)
    started = time.monotonic()
    with client.chat.stream(session, QUESTION) as s:
        for text in s:
            assert text
            break  # the user pressed Stop
        assert s.response is not None
        assert s.response.is_closed
        assert s.result.complete is False
        assert s.result.answer == s.text
    assert time.monotonic() - started < 1.0  # did not wait for the rest of the answer
    client.close()


async def test_async_stop_mid_stream(emulator: Any) -> None:
    emulator.stream_delay_ms = 100
    async with AsyncClient(base_url=emulator.base_url, api_key=emulator.api_key) as client:
        session = await client.chat.create_session(emulator.serial)
        started = time.monotonic()
        async with client.chat.stream(session, QUESTION) as s:
            async for _text in s:
                break
        assert s.response is not None
        assert s.response.is_closed
        assert s.result.complete is False
        assert time.monotonic() - started < 1.0
        # The connection pool is still usable after the early close.
        assert (await client.chat.ask(session, "Thanks!")).content


async def test_slow_stream_times_out_between_fragments(api: Api, emulator: Any) -> None:
    emulator.stream_delay_ms = 500
    session = await api(lambda c: c.chat.create_session(emulator.serial))
    with pytest.raises(errors.APITimeoutError, match="next fragment"):
        await stream_once(api, session, QUESTION, timeout=0.1)
    assert emulator.request_counts["ClientAsk"] == 1


# --------------------------------------------------------------------------- secrets


async def test_no_key_in_debug_logs(
    api: Api, emulator: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    session = await api(lambda c: c.chat.create_session(emulator.serial))
    await api(lambda c: c.listings.list_page(emulator.serial))
    await api(lambda c: c.listings.delete(emulator.serial, ["nothing"]))
    await stream_once(api, session, QUESTION)
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert "httpcore" in " ".join(r.name for r in caplog.records)
    assert emulator.api_key not in text
    assert emulator.session_key not in text
    ops = [r.getMessage().split()[0] for r in caplog.records if r.name == "estatebot.api"]
    assert ops == ["GetSession", "RealEstateList", "RealEstateDelete", "ClientAsk"]
