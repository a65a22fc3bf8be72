"""A request lost to a connection the server closed without a reply: sent again only where
sending twice is harmless.

A raw socket server on 127.0.0.1 (port 0) plays the two cases byte for byte: after a reply that
keeps the connection alive it closes the connection without reading the next request (an idle
timeout racing the request), or it reads a request and closes without answering (a crash after
the work was done). A client cannot tell them apart: the connection ends before any byte of a
reply. So, as RFC 9112 (section 9.3.1) asks, an idempotent request (Edit, List, Update, Delete)
is sent again and a chat message or a Create is not: the error says it was sent, and the sync
looks a create up before it sends it again.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

import estatebot as eb
from estatebot import errors
from factories import complete_listing

SERIAL = "abc123"


def _reply(data: object) -> bytes:
    body = json.dumps({"Data": data, "Success": True, "Code": 200, "Message": ""}).encode()
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n"
    )
    return head.encode() + body


def _read_request(conn: socket.socket) -> bytes | None:
    """One whole request (headers and a Content-Length body), or None at the end."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += conn.recv(65536)
    return head


@dataclass
class Server:
    """Answers requests on kept-alive connections; by ``mode``: ``closes_idle`` closes the first
    connection after its first reply without reading the next request, ``takes_and_drops``
    reads every question and closes its connection without a reply."""

    mode: str
    handled: list[bytes] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.closed_once = False
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        with conn:
            served = 0
            while True:
                if served and self.mode == "closes_idle" and not self.closed_once:
                    # The keep-alive ran out as the next request came: it is never read (the
                    # connection is reset under it), which the client cannot see coming.
                    conn.recv(1, socket.MSG_PEEK)
                    self.closed_once = True
                    return
                head = _read_request(conn)
                if head is None:
                    return
                if self.mode == "takes_and_drops" and b"ClientAsk" in head:
                    self.handled.append(head)
                    return  # taken, then the connection ends with no reply
                self.handled.append(head)
                served += 1
                answer = {"messageid": 7, "content": "Hello!"}
                conn.sendall(_reply(answer if b"ClientAsk" in head else 1))

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def closes_idle() -> Iterator[Server]:
    server = Server("closes_idle")
    yield server
    server.close()


@pytest.fixture
def takes_and_drops() -> Iterator[Server]:
    server = Server("takes_and_drops")
    yield server
    server.close()


def _client(server: Server) -> eb.Client:
    return eb.Client(
        base_url=f"http://127.0.0.1:{server.port}", api_key="k", session_key="s", backoff_base=0
    )


def _asks(server: Server) -> int:
    return sum(1 for head in server.handled if b"ClientAsk" in head)


def test_an_idempotent_request_lost_on_a_closed_keep_alive_connection_is_sent_again(
    closes_idle: Server,
) -> None:
    with _client(closes_idle) as client:
        assert client.chatbots.edit(SERIAL, Name="x") == 1  # opens the connection kept alive
        # The server closed it without a word: the edit goes out on it, unread, and again on
        # a new connection.
        assert client.chatbots.edit(SERIAL, Name="y") == 1
    assert sum(1 for head in closes_idle.handled if b"Edit" in head) == 2
    assert closes_idle.connections == 2


def test_a_question_lost_so_is_never_sent_again(closes_idle: Server) -> None:
    with _client(closes_idle) as client:
        assert client.chatbots.edit(SERIAL, Name="x") == 1
        with pytest.raises(errors.APIConnectionError) as lost:
            client.chat.ask(1, "hello")
    # The client cannot know the server did not take it: it says the question went out.
    assert lost.value.sent is True
    assert _asks(closes_idle) == 0
    assert closes_idle.connections == 1


def test_a_question_taken_then_dropped_is_never_sent_again(takes_and_drops: Server) -> None:
    with _client(takes_and_drops) as client:
        assert client.chatbots.edit(SERIAL, Name="x") == 1
        with pytest.raises(errors.APIConnectionError) as lost:
            client.chat.ask(1, "hello")
    assert lost.value.sent is True
    assert _asks(takes_and_drops) == 1


def test_the_async_client_never_sends_a_lost_create_again(closes_idle: Server) -> None:
    async def run() -> None:
        async with eb.AsyncClient(
            base_url=f"http://127.0.0.1:{closes_idle.port}",
            api_key="k",
            session_key="s",
            backoff_base=0,
        ) as client:
            assert await client.chatbots.edit(SERIAL, Name="x") == 1
            with pytest.raises(errors.APIConnectionError) as lost:
                await client.listings.create(
                    complete_listing(1, SerialNumber=SERIAL, ExtensionColumn=[])
                )
            assert lost.value.sent is True

    asyncio.run(run())
    assert closes_idle.connections == 1
