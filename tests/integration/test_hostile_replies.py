"""Client and AsyncClient against a hostile server over loopback HTTP: replies trickled a byte at
a time (in the head or the body), a stream that never ends or stalls, gzip bombs, and redirects.

The server is a small standard-library HTTP server on 127.0.0.1 (port 0) whose one reply the
test scripts; each test has its own, stopped at its end (a trickle stops with it). Every test
taking ``kind`` runs once with each client.
"""

from __future__ import annotations

import gzip
import inspect
import json
import struct
import sys
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from estatebot import errors
from estatebot.api import AsyncClient, Client

API_KEY = "hostile-api-key-4b7e91"
SESSION_KEY = "hostile-session-key-0c2d58"
SERIAL = "3254a9d0424c4806b9ea3d0763ccf1bf"
MODELS = "/chat/Chatbot/ModelList"
LIST = "/chat/Chatbot/RealEstateList"


# --------------------------------------------------------------------------- the server


@dataclass(frozen=True)
class Seen:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Hostile

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _serve(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.seen.append(Seen(self.command, self.path, headers))
        try:
            self.server.reply(self)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test output clean

    def pause(self, seconds: float) -> bool:
        """Wait ``seconds``; False once the server is stopping."""
        return not self.server.stopping.wait(seconds)

    def send(self, status: int, body: bytes = b"", **headers: str) -> None:
        """A whole reply at once."""
        self.send_response(status)
        for name, value in {"Content-Length": str(len(body)), **headers}.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)


Reply = Callable[[_Handler], None]


class Hostile(ThreadingHTTPServer):
    """A local server answering every request with ``reply``; ``seen`` lists the requests."""

    daemon_threads = True

    def __init__(self, reply: Reply | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.reply: Reply = reply or ok_envelope([])
        self.seen: list[Seen] = []
        self.stopping = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client hanging up is expected
            super().handle_error(request, client_address)

    def __enter__(self) -> Hostile:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        self.shutdown()
        self.server_close()


def envelope(data: Any) -> bytes:
    return json.dumps({"Data": data, "Success": True, "Code": 200, "Message": ""}).encode()


def ok_envelope(data: Any) -> Reply:
    return lambda h: h.send(200, envelope(data), Content_Type="application/json")


def trickle_body(every: float = 0.2, seconds: float = 10.0) -> Reply:
    """A head at once, then a body of one byte every ``every`` seconds for ``seconds``."""

    def reply(h: _Handler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", "100000")
        h.end_headers()
        end = time.monotonic() + seconds
        while time.monotonic() < end and h.pause(every):
            h.wfile.write(b" ")

    return reply


def trickle_head(every: float = 0.2, seconds: float = 10.0) -> Reply:
    """The head itself one byte every ``every`` seconds, for ``seconds``."""

    def reply(h: _Handler) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 1000
        end = time.monotonic() + seconds
        for byte in head:
            if time.monotonic() >= end or not h.pause(every):
                break
            h.wfile.write(bytes([byte]))
        h.close_connection = True

    return reply


def sse_stream(every: float, seconds: float, *, after_first: float = 0.0) -> Reply:
    """An SSE answer: one fragment every ``every`` seconds for ``seconds`` (after the first
    fragment, a silence of ``after_first`` seconds if given)."""

    def reply(h: _Handler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True
        h.wfile.write(b'data: {"content": "Hi"}\n\n')
        if after_first and not h.pause(after_first):
            return
        end = time.monotonic() + seconds
        while time.monotonic() < end and h.pause(every):
            h.wfile.write(b'data: {"content": "."}\n\n')

    return reply


def encoded(body: bytes, encoding: str, content_type: str = "application/json") -> Reply:
    return lambda h: h.send(200, body, Content_Type=content_type, Content_Encoding=encoding)


def redirect(status: int, location: str) -> Reply:
    return lambda h: h.send(status, b"", Location=location)


def gzip_of_zeros(mebibytes: int) -> bytes:
    """A valid gzip body that inflates to ``mebibytes`` MiB of zero bytes, a thousandth of that
    on the wire. One MiB is compressed once and its deflate block repeated: a full flush makes
    each repeat stand alone, which is much quicker than compressing every MiB."""
    block = bytes(2**20)
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    unit = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(mebibytes):
        crc = zlib.crc32(block, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    last_block = b"\x03\x00"  # an empty final block
    trailer = struct.pack("<II", crc, (mebibytes << 20) & 0xFFFFFFFF)
    return header + unit * mebibytes + last_block + trailer


@pytest.fixture
def hostile() -> Iterator[Hostile]:
    with Hostile() as server:
        yield server


@pytest.fixture
def target() -> Iterator[Hostile]:
    """A second server, where a redirect points: it must never be reached."""
    with Hostile() as server:
        yield server


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# --------------------------------------------------------------------------- the client


class Made:
    """A client of ``kind`` on ``server``, callable uniformly from an async test."""

    def __init__(self, kind: str, server: Hostile, **options: Any) -> None:
        settings: dict[str, Any] = {
            "base_url": server.base_url,
            "api_key": API_KEY,
            "session_key": SESSION_KEY,
            "backoff_base": 0.01,
            "backoff_max": 0.02,
            **options,
        }
        self.client: Client | AsyncClient = (Client if kind == "sync" else AsyncClient)(**settings)

    async def __call__(self, fn: Callable[[Any], Any]) -> Any:
        result = fn(self.client)
        return await result if inspect.isawaitable(result) else result

    async def stream(self, texts: list[str]) -> None:
        """Ask a streamed question and collect its fragments into ``texts`` as they come."""
        if isinstance(self.client, AsyncClient):
            async with self.client.chat.stream(5, "Any rentals?") as s:
                async for text in s:
                    texts.append(text)
        else:
            with self.client.chat.stream(5, "Any rentals?") as sync:
                texts.extend(sync)

    async def close(self) -> None:
        http = self.client._http
        if isinstance(self.client, AsyncClient):
            await self.client.aclose()
            await http.aclose()  # type: ignore[union-attr]
        else:
            self.client.close()
            http.close()


@pytest.fixture
async def made(kind: str, hostile: Hostile) -> Any:
    """A factory of clients on ``hostile``, closed at the end of the test."""
    clients: list[Made] = []

    def make(**options: Any) -> Made:
        clients.append(Made(kind, hostile, **options))
        return clients[-1]

    yield make
    for one in clients:
        await one.close()


def models(client: Any) -> Any:
    return client.chatbots.models()


# --------------------------------------------------------------------------- deadlines


@pytest.mark.parametrize("reply", [trickle_body, trickle_head], ids=["body", "head"])
async def test_a_trickled_reply_fails_at_the_deadline(
    hostile: Hostile, made: Any, reply: Callable[[], Reply]
) -> None:
    # Each byte comes well within the read timeout, so only an overall deadline can end this:
    # without one the call lasts as long as the server trickles (10 s here).
    hostile.reply = reply()
    api = made(timeout=2.0, deadline=1.0)
    started = time.monotonic()
    with pytest.raises(errors.APITimeoutError) as info:
        await api(models)
    elapsed = time.monotonic() - started
    assert elapsed < 3.0
    assert "within the 1 s deadline" in str(info.value)
    assert info.value.deadline == 1.0
    assert len(hostile.seen) == 1  # not retried: a server that trickled once will again


async def test_a_prompt_reply_is_not_cut_by_the_deadline(hostile: Hostile, made: Any) -> None:
    hostile.reply = ok_envelope([{"Key": "2", "Value": "gpt-4o", "Status": True}])
    api = made(deadline=1.0, stream_deadline=1.0)
    found = await api(models)
    assert [model.name for model in found] == ["gpt-4o"]


async def test_a_stream_past_its_deadline_ends_with_what_came(hostile: Hostile, made: Any) -> None:
    hostile.reply = sse_stream(every=0.2, seconds=10.0)
    api = made(timeout=2.0, stream_deadline=1.0)
    texts: list[str] = []
    started = time.monotonic()
    with pytest.raises(errors.APITimeoutError) as info:
        await api.stream(texts)
    assert time.monotonic() - started < 3.0
    assert "within the 1 s stream deadline" in str(info.value)
    assert info.value.deadline == 1.0
    assert texts[0] == "Hi"  # what arrived before was handed out as it came


async def test_a_stalled_stream_fails_on_the_idle_gap(hostile: Hostile, made: Any) -> None:
    hostile.reply = sse_stream(every=0.2, seconds=1.0, after_first=10.0)
    api = made(timeout=0.5)
    texts: list[str] = []
    started = time.monotonic()
    with pytest.raises(errors.APITimeoutError, match="waiting for the next fragment") as info:
        await api.stream(texts)
    assert time.monotonic() - started < 3.0
    assert info.value.deadline is None
    assert texts == ["Hi"]


# --------------------------------------------------------------------------- size caps


async def test_a_gzip_bomb_is_stopped_at_the_cap_in_bounded_memory(
    hostile: Hostile, made: Any
) -> None:
    bomb = gzip_of_zeros(64)  # 64 KiB on the wire
    hostile.reply = encoded(bomb, "gzip")
    api = made(max_reply_bytes=1_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(errors.APIError) as info:
            await api(models)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "larger than the cap of 1,000,000 bytes" in str(info.value)
    assert "max_reply_bytes" in str(info.value)
    assert info.value.status_code == 200
    assert peak < 16 * 2**20  # httpx alone inflates a 64 KiB chunk to 64 MB at once
    assert len(hostile.seen) == 1


async def test_the_default_cap_stops_a_large_bomb(hostile: Hostile, made: Any) -> None:
    hostile.reply = encoded(gzip_of_zeros(256), "gzip")
    api = made()
    tracemalloc.start()
    try:
        with pytest.raises(errors.APIError, match=r"cap of 67,108,864 bytes \(64 MiB\)"):
            await api(models)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20


async def test_a_deflate_bomb_is_stopped_too(hostile: Hostile, made: Any) -> None:
    hostile.reply = encoded(zlib.compress(bytes(8 * 2**20), 9), "deflate")
    api = made(max_reply_bytes=2**20)
    with pytest.raises(errors.APIError, match=r"cap of 1,048,576 bytes \(1 MiB\)"):
        await api(models)


async def test_a_gzip_bomb_in_a_stream_is_stopped_at_the_cap(hostile: Hostile, made: Any) -> None:
    # SSE comments: a decoder skips them, so without a cap they would pile up to the end.
    body = gzip.compress(b'data: {"content": "Hi"}\n\n' + b": keep-alive\n" * 500_000)
    hostile.reply = encoded(body, "gzip", "text/event-stream")
    api = made(max_reply_bytes=3_000_000)
    texts: list[str] = []
    with pytest.raises(errors.APIError, match="larger than the cap of 3,000,000 bytes"):
        await api.stream(texts)
    assert texts == ["Hi"]  # what came within the cap was handed out


async def test_a_compressed_reply_within_the_cap_is_read(hostile: Hostile, made: Any) -> None:
    data = [{"Key": str(i), "Value": "m" * 50, "Status": True} for i in range(2000)]
    hostile.reply = encoded(gzip.compress(envelope(data)), "gzip")
    api = made(max_reply_bytes=200_000)
    found = await api(models)
    assert len(found) == 2000


# --------------------------------------------------------------------------- redirects


@pytest.mark.parametrize("status", [301, 302, 307, 308])
async def test_a_redirect_says_where_and_nothing_follows_it(
    kind: str, hostile: Hostile, target: Hostile, made: Any, status: int
) -> None:
    hostile.reply = redirect(status, target.base_url + LIST)
    # Even an http_client set to follow redirects must not: it would carry the session key.
    http = (httpx.Client if kind == "sync" else httpx.AsyncClient)(follow_redirects=True)
    api = made(http_client=http, max_retries=2)
    with pytest.raises(errors.APIError) as info:
        await api(lambda c: c.listings.list_page(SERIAL))
    text = str(info.value)
    assert info.value.status_code == status
    assert "the service failed" not in text
    assert f"redirects ({httpx.codes.get_reason_phrase(status)}) to {target.base_url}{LIST}" in text
    assert f"set the base URL to {target.base_url} " in text
    assert target.seen == []
    assert len(hostile.seen) == 1  # a redirect is not retried


async def test_a_redirect_shows_no_credentials(hostile: Hostile, made: Any) -> None:
    location = "https://admin:hunter2-pw@api.example:8443/v2" + MODELS + "?access_token=tok-991"
    hostile.reply = redirect(301, location)
    api = made()
    with pytest.raises(errors.APIError) as info:
        await api(models)
    text = f"{info.value} {info.value!r}"
    for secret in ("admin", "hunter2-pw", "tok-991"):
        assert secret not in text
    assert "redirects (Moved Permanently) to https://[redacted]@api.example:8443/v2" in text
    assert "set the base URL to https://api.example:8443/v2 " in text


async def test_a_relative_redirect_is_resolved(hostile: Hostile, made: Any) -> None:
    hostile.reply = redirect(308, "/v2" + MODELS)
    api = made()
    with pytest.raises(errors.APIError) as info:
        await api(models)
    assert f"set the base URL to {hostile.base_url}/v2 " in str(info.value)
