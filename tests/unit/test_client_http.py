"""Client and AsyncClient over httpx.MockTransport: each operation, errors, retries, auth, secrets.

Every test taking ``kind`` runs once with each client; :func:`call` awaits what the async one
returns, so one test body serves both.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
import pytest

from estatebot.api import (
    AsyncClient,
    Client,
    errors,
)
from estatebot.api.models import AIModel, Answer, ListingPage
from estatebot.errors import PullWarning

API_KEY = "mock-api-key-7d3b"
SESSION_KEY = "mock-session-key-1e8f"
SERIAL = "3254a9d0424c4806b9ea3d0763ccf1bf"
BASE = "http://svc.test"

LISTING: dict[str, Any] = {
    "SerialNumber": SERIAL,
    "SaleType": "for_sale",
    "Status": "Active",
    "CurrencySymbol": "$",
    "PropertyType": "House",
    "Bedrooms": 3,
    "Bathrooms": 2.5,
    "Url": "https://homes.test/1",
    "MLSNumber": "MLS-1",
    "YearBuilt": 1999,
    "DaysOnMarket": 4,
    "LotArea": 5000,
    "BuildingArea": 1800,
    "AreaUnit": "Square Feet",
    "ParkingSpots": 2,
}

AnyClient = Client | AsyncClient
Reply = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def envelope(
    data: Any = None, *, status: int = 200, message: str = "", **headers: str
) -> httpx.Response:
    body = {
        "Data": data,
        "Version": "1.0.0",
        "Success": status == 200,
        "Code": status,
        "Message": message,
    }
    return httpx.Response(status, json=body, headers=headers)


class Server:
    """A scripted mock service: answers with ``replies`` in turn (the last one repeats)."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if isinstance(reply, Exception):
            raise reply
        return reply(request) if callable(reply) else reply

    def body(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].content)


class Made:
    """A client under test, its mock server and the pauses it took between attempts."""

    def __init__(self, kind: str, server: Server, **options: Any) -> None:
        self.server = server
        self.sleeps: list[float] = []
        transport = httpx.MockTransport(server)
        settings: dict[str, Any] = {
            "base_url": BASE,
            "api_key": API_KEY,
            "session_key": SESSION_KEY,
            "backoff_base": 0.01,
            "backoff_max": 0.02,
            **options,
        }
        self.client: AnyClient
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


async def call(made: Made, fn: Callable[[Any], Any]) -> Any:
    result = fn(made.client)
    return await result if inspect.isawaitable(result) else result


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ESTATEBOT_BASE_URL", "ESTATEBOT_API_KEY", "ESTATEBOT_SESSION_KEY"):
        monkeypatch.delenv(name, raising=False)


# --------------------------------------------------------------------------- every operation


OPERATIONS: list[tuple[str, Callable[[Any], Any], Any, str, Any]] = [
    (
        "Edit",
        lambda c: c.chatbots.edit(SERIAL, Name="Sunny", Temperature=1),
        1,
        "/chat/Chatbot/Edit",
        {"serialNumber": SERIAL, "Name": "Sunny", "Temperature": 1},
    ),
    (
        "ModelList",
        lambda c: c.chatbots.models(),
        [{"Key": "2", "Value": "gpt-4o", "Status": True}],
        "/chat/Chatbot/ModelList",
        None,
    ),
    (
        "GetSession",
        lambda c: c.chat.create_session(SERIAL),
        {"SessionID": 123456},
        "/chat/Chatbot/GetSession",
        {"serialNumber": SERIAL},
    ),
    (
        "ClientAsk",
        lambda c: c.chat.ask(5, "3 bed homes?"),
        {"messageid": 375561, "content": "Here", "totalToken": 4337},
        "/chat/Chat/ClientAsk",
        {"sessionID": 5, "content": "3 bed homes?", "stream": False},
    ),
    (
        "RealEstateCreate",
        lambda c: c.listings.create(LISTING),
        77,
        "/chat/Chatbot/RealEstateCreate",
        LISTING,
    ),
    (
        "RealEstateUpdate",
        lambda c: c.listings.update(LISTING),
        1,
        "/chat/Chatbot/RealEstateUpdate",
        {**LISTING, "Key": "MLS-1", "KeyType": "MLSNumber"},
    ),
    (
        "RealEstateList",
        lambda c: c.listings.list_page(SERIAL, city="Austin", page=2, page_size=5),
        {"List": [{"ID": 1}], "VirtualCount": 6},
        "/chat/Chatbot/RealEstateList",
        {"SerialNumber": SERIAL, "CityName": "Austin", "PageNumber": 2, "PageSize": 5},
    ),
    (
        "RealEstateDelete",
        lambda c: c.listings.delete(SERIAL, ["MLS-1", "MLS-2"]),
        {"SuccessCount": 2},
        "/chat/Chatbot/RealEstateDelete",
        {"SerialNumber": SERIAL, "Keys": ["MLS-1", "MLS-2"], "KeyType": "MLSNumber"},
    ),
]

EXPECTED_RESULTS: dict[str, Any] = {
    "Edit": 1,
    "ModelList": [AIModel(Key="2", Value="gpt-4o", Status=True)],
    "GetSession": 123456,
    "ClientAsk": Answer(messageid=375561, content="Here", totalToken=4337, noAnswer=False),
    "RealEstateCreate": 77,
    "RealEstateUpdate": 1,
    "RealEstateList": ListingPage(List=[{"ID": 1}], VirtualCount=6),
    "RealEstateDelete": 2,
}


@pytest.mark.parametrize(("name", "fn", "data", "path", "body"), OPERATIONS)
async def test_each_operation_sends_its_body_and_unwraps_data(
    kind: str, name: str, fn: Callable[[Any], Any], data: Any, path: str, body: Any
) -> None:
    made = Made(kind, Server(envelope(data)))
    assert await call(made, fn) == EXPECTED_RESULTS[name]
    (request,) = made.server.requests
    assert request.url.path == path
    if body is None:
        assert request.method == "GET"
        assert request.content == b""
    else:
        assert request.method == "POST"
        assert made.server.body() == body


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, errors.InvalidRequestError),
        (401, errors.AuthenticationError),
        (404, errors.NotFoundError),
        (409, errors.ConflictError),
    ],
)
async def test_client_errors_map_and_are_not_retried(
    kind: str, status: int, cls: type[errors.APIError]
) -> None:
    made = Made(kind, Server(envelope(status=status, message="MLSNumber: bad")))
    with pytest.raises(cls) as info:
        await call(made, lambda c: c.listings.update(LISTING))
    assert info.value.message == "MLSNumber: bad"
    assert info.value.operation == "RealEstateUpdate"
    assert len(made.server.requests) == 1


async def test_success_false_with_http_200(kind: str) -> None:
    reply = httpx.Response(200, json={"Success": False, "Code": 404, "Message": "no chatbot"})
    made = Made(kind, Server(reply))
    with pytest.raises(errors.NotFoundError, match="no chatbot"):
        await call(made, lambda c: c.chatbots.edit(SERIAL, Name="x"))


async def test_non_json_error_body(kind: str) -> None:
    made = Made(kind, Server(httpx.Response(502, text="<html>gateway</html>")), max_retries=0)
    with pytest.raises(errors.ServerError, match="HTTP 502 Bad Gateway"):
        await call(made, lambda c: c.listings.list_page(SERIAL))


# --------------------------------------------------------------------------- retries


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503])
async def test_retryable_statuses_are_retried_then_succeed(kind: str, status: int) -> None:
    made = Made(kind, Server(envelope(status=status), envelope(status=status), envelope(1)))
    assert await call(made, lambda c: c.chatbots.edit(SERIAL, Name="x")) == 1
    assert len(made.server.requests) == 3
    assert len(made.sleeps) == 2
    assert all(0 <= s <= 0.02 for s in made.sleeps)


async def test_retries_stop_after_max_retries(kind: str) -> None:
    made = Made(kind, Server(envelope(status=500, message="boom")), max_retries=2)
    with pytest.raises(errors.ServerError, match="boom"):
        await call(made, lambda c: c.listings.list_page(SERIAL))
    assert len(made.server.requests) == 3


async def test_connect_errors_are_retried(kind: str) -> None:
    refused = httpx.ConnectError("connection refused")
    made = Made(kind, Server(refused, refused, envelope({"List": [], "VirtualCount": 0})))
    page = await call(made, lambda c: c.listings.list_page(SERIAL))
    assert page.virtual_count == 0
    assert len(made.server.requests) == 3


async def test_connect_errors_exhaust_to_api_connection_error(kind: str) -> None:
    made = Made(kind, Server(httpx.ConnectError("refused")), max_retries=1)
    with pytest.raises(
        errors.APIConnectionError,
        match=r"cannot reach svc\.test:80 \(refused\): check the base URL",
    ):
        await call(made, lambda c: c.listings.list_page(SERIAL))
    assert len(made.server.requests) == 2


async def test_read_timeout_is_retried_for_list_and_mapped(kind: str) -> None:
    made = Made(kind, Server(httpx.ReadTimeout("slow")), max_retries=1)
    with pytest.raises(errors.APITimeoutError):
        await call(made, lambda c: c.listings.list_page(SERIAL))
    assert len(made.server.requests) == 2


async def test_retry_after_seconds_is_honoured(kind: str) -> None:
    throttled = envelope(status=429, message="slow down", **{"Retry-After": "0.05"})
    made = Made(kind, Server(throttled, envelope(1)))
    assert await call(made, lambda c: c.listings.update(LISTING)) == 1
    assert made.sleeps == [0.05]


async def test_retry_after_http_date_is_honoured(kind: str) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=3), usegmt=True)
    throttled = envelope(status=429, **{"Retry-After": when})
    made = Made(kind, Server(throttled, envelope(1)))
    assert await call(made, lambda c: c.listings.update(LISTING)) == 1
    (wait,) = made.sleeps
    assert 1.5 <= wait <= 3.0


async def test_a_retry_after_beyond_the_cap_is_raised_at_once(kind: str) -> None:
    # Waiting the cap and asking again would only be refused again: the caller decides.
    throttled = envelope(status=429, **{"Retry-After": "3600"})
    made = Made(kind, Server(throttled, envelope(1)), max_retry_after=0.5)
    with pytest.raises(errors.RateLimitError) as info:
        await call(made, lambda c: c.listings.update(LISTING))
    assert info.value.retry_after == 3600.0
    assert made.sleeps == []


async def test_rate_limit_error_carries_retry_after_when_retries_run_out(kind: str) -> None:
    throttled = envelope(status=429, message="Too many messages", **{"Retry-After": "2"})
    made = Made(kind, Server(throttled), max_retries=0)
    with pytest.raises(errors.RateLimitError) as info:
        await call(made, lambda c: c.listings.list_page(SERIAL))
    assert info.value.retry_after == 2.0
    assert info.value.message == "Too many messages"


@pytest.mark.parametrize(
    "failure",
    [
        lambda: envelope(status=500),
        lambda: envelope(status=429, **{"Retry-After": "0"}),
        lambda: httpx.RemoteProtocolError("server disconnected"),
        lambda: httpx.ReadTimeout("slow"),
    ],
    ids=["500", "429", "dropped", "read-timeout"],
)
async def test_client_ask_is_never_retried_once_sent(
    kind: str, failure: Callable[[], Reply]
) -> None:
    made = Made(kind, Server(failure(), envelope({"messageid": 1, "content": "x"})))
    with pytest.raises((errors.APIError, errors.APIConnectionError)):
        await call(made, lambda c: c.chat.ask(5, "hello"))
    assert len(made.server.requests) == 1


async def test_client_ask_is_retried_when_nothing_was_sent(kind: str) -> None:
    answer = envelope({"messageid": 1, "content": "hi"})
    made = Made(kind, Server(httpx.ConnectError("refused"), httpx.ConnectTimeout("t"), answer))
    assert (await call(made, lambda c: c.chat.ask(5, "hello"))).content == "hi"
    assert len(made.server.requests) == 3


# --------------------------------------------------------------------------- auth and config


async def test_headers_carry_raw_keys_per_operation(kind: str) -> None:
    made = Made(kind, Server(envelope(1), envelope({"List": []}), envelope({"SuccessCount": 1})))
    await call(made, lambda c: c.chatbots.edit(SERIAL, Name="x"))
    await call(made, lambda c: c.listings.list_page(SERIAL))
    await call(made, lambda c: c.listings.delete(SERIAL, "MLS-1"))
    edit, listing, delete = (r.headers for r in made.server.requests)
    assert edit["Authorization"] == API_KEY
    assert "chatrobot-sessionkey" not in edit
    assert listing["chatrobot-sessionkey"] == SESSION_KEY
    assert "Authorization" not in listing
    assert (delete["Authorization"], delete["chatrobot-sessionkey"]) == (API_KEY, SESSION_KEY)
    assert edit["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    ("missing", "fn", "variable"),
    [
        ("session_key", lambda c: c.listings.list_page(SERIAL), "ESTATEBOT_SESSION_KEY"),
        ("api_key", lambda c: c.chat.ask(5, "hi"), "ESTATEBOT_API_KEY"),
        ("api_key", lambda c: c.chat.stream(5, "hi").__iter__().__next__(), "ESTATEBOT_API_KEY"),
    ],
)
def test_missing_credential_sends_nothing(
    missing: str, fn: Callable[[Any], Any], variable: str
) -> None:
    made = Made("sync", Server(envelope(1)), **{missing: None})
    with pytest.raises(errors.ConfigurationError, match=variable):
        fn(made.client)
    assert made.server.requests == []


def test_credentials_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESTATEBOT_SESSION_KEY", "env-session-key")
    server = Server(envelope({"List": []}))
    client = Client(base_url=BASE, http_client=httpx.Client(transport=httpx.MockTransport(server)))
    client.listings.list_page(SERIAL)
    assert server.requests[0].headers["chatrobot-sessionkey"] == "env-session-key"


async def test_timeout_per_client_and_per_call(kind: str) -> None:
    made = Made(kind, Server(envelope(1)), timeout=7.0)
    await call(made, lambda c: c.chatbots.edit(SERIAL, Name="x"))
    await call(made, lambda c: c.chatbots.edit(SERIAL, Name="x", timeout=0.5))
    first, second = (r.extensions["timeout"] for r in made.server.requests)
    assert first["read"] == 7.0
    assert second["read"] == 0.5


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("fn", "fields"),
    [
        (lambda c: c.chatbots.edit(SERIAL, Nmae="typo"), ["Nmae"]),
        (lambda c: c.chatbots.edit(SERIAL, ChatBubbleColor="red"), ["ChatBubbleColor"]),
        (lambda c: c.chat.ask(5, "", ask_type="Audio", file_ids=[1, 2]), ["fileIds"]),
        (lambda c: c.chat.ask(5, "hi", ask_type="Smell"), ["chatAskType"]),
        (lambda c: c.listings.create({**LISTING, "SaleType": "lease"}), ["SaleType"]),
        (lambda c: c.listings.list_page(SERIAL, page=-1), ["PageNumber"]),
        (lambda c: c.listings.delete(SERIAL, []), ["Keys"]),
    ],
)
async def test_invalid_calls_name_fields_and_send_nothing(
    kind: str, fn: Callable[[Any], Any], fields: list[str]
) -> None:
    made = Made(kind, Server(envelope(1)))
    with pytest.raises(errors.RequestValidationError) as info:
        await call(made, fn)
    assert info.value.fields == fields
    assert made.server.requests == []


# --------------------------------------------------------------------------- secrets


def test_repr_shows_which_keys_are_set_never_the_keys() -> None:
    made = Made("sync", Server(envelope(1)), session_key=None)
    text = repr(made.client)
    assert text == "Client(base_url='http://svc.test', api_key=set, session_key=not set)"
    async_text = repr(AsyncClient(base_url=BASE, api_key=API_KEY, session_key=SESSION_KEY))
    assert API_KEY not in async_text
    assert SESSION_KEY not in async_text


async def test_exception_text_never_holds_a_key(kind: str) -> None:
    quoted = envelope(status=401, message=f"key {API_KEY} / {SESSION_KEY} is not valid")
    refused = httpx.ConnectError(f"refused for {SESSION_KEY}")
    made = Made(kind, Server(quoted, refused), max_retries=0)
    with pytest.raises(errors.AuthenticationError) as auth:
        await call(made, lambda c: c.listings.delete(SERIAL, "x"))
    with pytest.raises(errors.APIConnectionError) as conn:
        await call(made, lambda c: c.listings.delete(SERIAL, "x"))
    for exc in (auth.value, conn.value):
        text = f"{exc} {exc!r} {exc.args}"
        assert API_KEY not in text
        assert SESSION_KEY not in text


def test_log_records_never_hold_a_key(caplog: pytest.LogCaptureFixture) -> None:
    def leaky(request: httpx.Request) -> httpx.Response:
        # A library logging the raw headers, the worst case the filter must catch.
        logging.getLogger("httpx").debug("sending %s", request.headers.raw)
        logging.getLogger("httpcore.http11").debug("headers=%r", dict(request.headers))
        return envelope({"SuccessCount": 1})

    caplog.set_level(logging.DEBUG)
    made = Made("sync", Server(leaky))
    made.client.listings.delete(SERIAL, ["MLS-1"])
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert "chatrobot-sessionkey" in text  # the header names are kept...
    assert API_KEY not in text
    assert SESSION_KEY not in text
    lines = [r.getMessage() for r in caplog.records if r.name == "estatebot.api"]
    assert lines
    assert lines[-1].startswith("RealEstateDelete 200 (attempt 1, ")


# --------------------------------------------------------------------------- streaming


class Chunks(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A response body delivered in chunks, optionally breaking off with ``error``."""

    def __init__(self, chunks: list[bytes], error: Exception | None = None) -> None:
        self.chunks = chunks
        self.error = error
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks
        if self.error:
            raise self.error

    async def __aiter__(self) -> Any:
        for chunk in self.chunks:
            yield chunk
        if self.error:
            raise self.error

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


FINAL = {"QuestionID": 1, "AnswerID": 2, "Answer": "Hello there", "TotalToken": 9}
SSE = [
    b'data: {"content": "Hel"}\n\n',
    b'data: {"content": "lo th',
    b'ere"}\n\ndata: ' + json.dumps(FINAL).encode() + b"\n\n",
]
NDJSON = [b'{"content": "Hel"}\n{"content": "lo there"}\n', json.dumps(FINAL).encode()]


def stream_reply(body: Chunks, content_type: str = "text/event-stream") -> httpx.Response:
    return httpx.Response(200, headers={"content-type": content_type}, stream=body)


async def consume(made: Made, **kwargs: Any) -> tuple[list[str], Any]:
    texts: list[str] = []
    if isinstance(made.client, Client):
        with made.client.chat.stream(5, "hi", **kwargs) as s:
            texts.extend(s)
        return texts, s
    async with made.client.chat.stream(5, "hi", **kwargs) as a:
        texts.extend([text async for text in a])
    return texts, a


@pytest.mark.parametrize("chunks", [SSE, NDJSON], ids=["sse", "ndjson"])
async def test_stream_yields_fragments_and_result(kind: str, chunks: list[bytes]) -> None:
    body = Chunks(chunks)
    made = Made(kind, Server(stream_reply(body)))
    texts, s = await consume(made)
    assert "".join(texts) == "Hello there"
    assert s.result.answer == "Hello there"
    assert (s.result.question_id, s.result.answer_id, s.result.complete) == (1, 2, True)
    assert s.text == "Hello there"
    assert made.server.body()["stream"] is True
    assert body.closed


async def test_stream_without_final_object_is_incomplete(kind: str) -> None:
    made = Made(kind, Server(stream_reply(Chunks([b'data: {"content": "Part"}\n\n']))))
    texts, s = await consume(made)
    assert texts == ["Part"]
    assert s.result.complete is False
    assert s.result.answer == "Part"


async def test_stream_error_envelope_before_stream(kind: str) -> None:
    made = Made(kind, Server(envelope(status=429, message="Too fast", **{"Retry-After": "3"})))
    with pytest.raises(errors.RateLimitError, match="Too fast") as info:
        await consume(made)
    assert info.value.retry_after == 3.0
    assert len(made.server.requests) == 1  # ClientAsk: not retried


async def test_stream_failure_inside_the_stream(kind: str) -> None:
    chunks = [
        b'data: {"content": "Hi"}\n\n',
        b'data: {"Success": false, "Code": 500, "Message": "model down"}\n\n',
    ]
    made = Made(kind, Server(stream_reply(Chunks(chunks))))
    with pytest.raises(errors.ServerError, match="model down"):
        await consume(made)


@pytest.mark.parametrize(
    ("error", "cls"),
    [
        (httpx.RemoteProtocolError("peer closed"), errors.APIConnectionError),
        (httpx.ReadTimeout("no fragment"), errors.APITimeoutError),
    ],
)
async def test_stream_broken_mid_way(
    kind: str, error: Exception, cls: type[errors.APIConnectionError]
) -> None:
    body = Chunks([b'data: {"content": "Hi"}\n\n'], error)
    made = Made(kind, Server(stream_reply(body)))
    with pytest.raises(cls):
        await consume(made)
    assert body.closed
    assert len(made.server.requests) == 1


async def test_stream_connect_error_is_retried(kind: str) -> None:
    made = Made(kind, Server(httpx.ConnectError("refused"), stream_reply(Chunks(SSE))))
    texts, _ = await consume(made)
    assert "".join(texts) == "Hello there"


async def test_stream_malformed_body_is_an_api_error(kind: str) -> None:
    made = Made(kind, Server(stream_reply(Chunks([b"data: {not json}\n\n"]))))
    with pytest.raises(errors.APIError, match="malformed stream"):
        await consume(made)


async def test_stream_answered_with_plain_json(kind: str) -> None:
    made = Made(kind, Server(envelope({"messageid": 8, "content": "Whole", "totalToken": 3})))
    texts, s = await consume(made)
    assert texts == ["Whole"]
    assert (s.result.answer_id, s.result.answer, s.result.complete) == (8, "Whole", True)


def test_sync_stream_break_closes_response_and_result_rules() -> None:
    body = Chunks(SSE)
    made = Made("sync", Server(stream_reply(body)))
    assert isinstance(made.client, Client)
    with made.client.chat.stream(5, "hi") as s:
        with pytest.raises(RuntimeError, match="not ended"):
            _ = s.result
        for _text in s:
            break
        assert body.closed  # breaking out closed the response at once
        assert s.result.complete is False
        assert s.result.answer == "Hel"
        assert list(s) == []  # consumed


async def test_async_stream_closes_on_leaving_the_block() -> None:
    body = Chunks(SSE)
    made = Made("async", Server(stream_reply(body)))
    assert isinstance(made.client, AsyncClient)
    async with made.client.chat.stream(5, "hi") as s:
        async for _text in s:
            break
    assert body.closed
    assert s.result.complete is False


def test_stream_iterated_without_with_closes_at_the_end() -> None:
    body = Chunks(SSE)
    made = Made("sync", Server(stream_reply(body)))
    assert isinstance(made.client, Client)
    s = made.client.chat.stream(5, "hi")
    assert s.response is None  # nothing sent before iteration
    assert "".join(s) == "Hello there"
    assert body.closed


# --------------------------------------------------------------------------- lifecycle


def test_context_manager_closes_only_an_owned_http_client() -> None:
    with Client(base_url=BASE, api_key=API_KEY) as owned:
        pass
    assert owned._http.is_closed
    injected = httpx.Client(transport=httpx.MockTransport(Server(envelope(1))))
    with Client(base_url=BASE, api_key=API_KEY, http_client=injected):
        pass
    assert not injected.is_closed


async def test_async_context_manager_closes() -> None:
    async with AsyncClient(base_url=BASE, api_key=API_KEY) as client:
        pass
    assert client._http.is_closed


def paged(
    total: int,
    *,
    cap: int = 100,
    count: Callable[[int], int | None] = lambda page: None,
    past_end: bool = False,
) -> Callable[[httpx.Request], httpx.Response]:
    """A List service of ``total`` listings: page cap, ``count(page)`` as VirtualCount, and,
    with ``past_end``, a page past the last refused with 404 "No more data"."""

    def serve(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if body["PageNumber"] < 1:  # pages count from 1 here
            return envelope(None, status=400, message="PageNumber must be 1 or more")
        size = min(body["PageSize"], cap)
        start = (body["PageNumber"] - 1) * size
        if past_end and body["PageNumber"] > 1 and start >= total:
            return envelope(None, status=404, message="No more data")
        ids = list(range(start, min(start + size, total)))
        data: dict[str, Any] = {"List": [{"ID": i} for i in ids]}
        if (virtual := count(body["PageNumber"])) is not None:
            data["VirtualCount"] = virtual
        return envelope(data)

    return serve


async def listed(made: Made, **options: Any) -> list[int]:
    pages = made.client.listings.iter_pages(SERIAL, **options)
    if isinstance(made.client, Client):
        return [r["ID"] for page in pages for r in page.records]
    return [r["ID"] async for page in pages for r in page.records]


async def test_iter_pages_under_a_cap_with_no_count_yields_every_listing(kind: str) -> None:
    made = Made(kind, Server(paged(137, cap=50)))
    assert await listed(made, page_size=100) == list(range(137))
    assert [made.server.body(i)["PageSize"] for i in range(3)] == [100, 50, 50]


@pytest.mark.parametrize("count", [lambda page: 100, lambda page: None])
async def test_iter_pages_ends_on_a_page_refused_past_the_end(
    kind: str, count: Callable[[int], int | None]
) -> None:
    made = Made(kind, Server(paged(100, count=count, past_end=True)))
    assert await listed(made, page_size=50) == list(range(100))
    assert [made.server.body(i)["PageNumber"] for i in range(3)] == [1, 2, 3]


async def test_iter_pages_ends_on_a_refusal_under_a_count_too_high_and_warns(kind: str) -> None:
    # The service says 200 but holds 100, and refuses page 3: the end, with the shortfall said.
    made = Made(kind, Server(paged(100, count=lambda page: 200, past_end=True)))
    with pytest.warns(PullWarning, match="100 of 200 listings arrived"):
        assert await listed(made, page_size=50) == list(range(100))


@pytest.mark.parametrize("count", [0, 1])
async def test_iter_pages_reads_a_count_below_the_first_page_as_missing(
    kind: str, count: int
) -> None:
    made = Made(kind, Server(paged(137, cap=50, count=lambda page: count)))
    assert await listed(made, page_size=100) == list(range(137))


async def test_iter_pages_reports_a_listing_vanishing_mid_pull(kind: str) -> None:
    # 120 listings counted on page 1; one is deleted before page 2, which says 119: listing 50
    # slides onto page 1 unseen.
    def serve(request: httpx.Request) -> httpx.Response:
        number = json.loads(request.content)["PageNumber"]
        ids = list(range(50)) if number == 1 else list(range(51, 120))[(number - 2) * 50 :][:50]
        return envelope({"List": [{"ID": i} for i in ids], "VirtualCount": 120 - (number > 1)})

    made = Made(kind, Server(serve))
    with pytest.warns(PullWarning, match="count went from 120 to 119"):
        seen = await listed(made, page_size=50)
    assert len(seen) == 119


async def test_iter_pages_hands_out_a_listing_once(kind: str) -> None:
    # A listing added at the front mid-pull pushes the last of page 1 onto page 2.
    def serve(request: httpx.Request) -> httpx.Response:
        number = json.loads(request.content)["PageNumber"]
        ids = [0, 1, 2] if number == 1 else [2, 3]
        return envelope({"List": [{"ID": i} for i in ids], "VirtualCount": 4 + (number > 1)})

    made = Made(kind, Server(serve))
    with pytest.warns(PullWarning, match="count went from 4 to 5"):
        assert await listed(made, page_size=3) == [0, 1, 2, 3]


async def test_iter_pages_follows_a_server_cap(kind: str) -> None:
    def pages(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        start = (body["PageNumber"] - 1) * min(body["PageSize"], 4)
        ids = list(range(start, min(start + min(body["PageSize"], 4), 10)))
        return envelope({"List": [{"ID": i} for i in ids], "VirtualCount": 10})

    made = Made(kind, Server(pages))
    result = made.client.listings.iter_pages(SERIAL, page_size=100)
    if isinstance(made.client, Client):
        seen = [r["ID"] for page in result for r in page.records]
    else:
        seen = [r["ID"] async for page in result for r in page.records]
    assert seen == list(range(10))
    assert [made.server.body(i)["PageSize"] for i in range(3)] == [100, 4, 4]
