"""How the bytes travel: compressed bodies (gzip, deflate zlib-wrapped and raw), HTTP/1.0 bodies
ended by closing the connection, kept-alive connections the server closes every few replies,
ABP's envelope (``Data`` under ``result``), and HTML error pages from IIS or a proxy.

Every operation, blocking and async, must read the same results through each of them, and a
failure must be the error of its status with the server's message, never a decoding error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import estatebot as eb
from foreign.data import make_listing
from foreign.helpers import aclient_for, carried_out
from foreign.server import ForeignServer
from foreign.variant import (
    CLIENT_ASK,
    CREATE,
    DELETE,
    EDIT,
    GET_SESSION,
    LIST,
    MODEL_LIST,
    UPDATE,
    HtmlPage,
    Variant,
)

TRANSPORTS: dict[str, Variant] = {
    "gzip": Variant(gzip=True),
    "deflate-zlib": Variant(deflate="zlib"),
    "deflate-raw": Variant(deflate="raw"),
    "gzip-then-raw-deflate": Variant(gzip=True, deflate="raw"),
    "http10-close-delimited": Variant(close_delimited=True),
    "http10-close-delimited-deflate-raw": Variant(close_delimited=True, deflate="raw"),
    "keep-alive-closed-every-3": Variant(close_every=3),
    "keep-alive-closed-every-reply": Variant(close_every=1),
    "data-under-result": Variant(abp_envelope=True),
    "data-under-result-gzip": Variant(abp_envelope=True, gzip=True),
}
QUESTION = "Any homes in Boston?"
SEEDED = 12


def _new(serial: str) -> dict[str, Any]:
    return {**make_listing(1, prefix="T"), "SerialNumber": serial}


def _changed(server: ForeignServer) -> dict[str, Any]:
    return {**make_listing(2), "SalePrice": 654321, "SerialNumber": server.serial}


def _check_effects(server: ForeignServer, stored: list[dict[str, Any]], new_id: int) -> None:
    """The tour's writes, each carried out once: one created, one updated, one deleted."""
    by_mls = {item["MLSNumber"]: item for item in server.listings()}
    assert new_id in server.chatbot.listings
    assert by_mls["T000001"]["MLSNumber"] == "T000001"
    assert by_mls["F000002"]["SalePrice"] == 654321
    assert "F000003" not in by_mls
    assert len(by_mls) == SEEDED
    assert carried_out(server, stored) == {
        "create T000001": 1,
        "update F000002": 1,
        "delete F000003": 1,
    }


@pytest.mark.parametrize("server", list(TRANSPORTS.values()), ids=list(TRANSPORTS), indirect=True)
def test_every_operation_reads_through(server: ForeignServer, client: eb.Client) -> None:
    """Models, Edit, a session, a question (whole and streamed), Create, Update, a page,
    Delete and a whole pull: each result is what the server holds or wrote."""
    server.seed(SEEDED)
    stored = server.listings()

    assert [model.key for model in client.chatbots.models()] == ["2", "3", "22", "23"]
    assert client.chatbots.edit(server.serial, Name="Tour Homes") == 1
    assert server.chatbot.settings["Name"] == "Tour Homes"
    session = client.chat.create_session(server.serial)
    assert session in server.store.sessions
    assert client.chat.ask(session, QUESTION).content == server.answers[-1]
    with client.chat.stream(session, QUESTION) as stream:
        text = "".join(stream)
    assert text == server.answers[-1]
    assert stream.result.answer == text
    assert stream.result.complete is True

    new_id = client.listings.create(_new(server.serial))
    assert client.listings.update(_changed(server)) == 1
    page = client.listings.list_page(server.serial, page_size=5)
    assert [record.get("ID", record.get("id")) for record in page.records] == [
        item["ID"] for item in server.listings()[:5]
    ]
    assert client.listings.delete(server.serial, ["F000003"]) == 1
    frame = eb.pull_listings(client, server.serial, progress=False)
    assert sorted(frame["MLSNumber"]) == sorted(item["MLSNumber"] for item in server.listings())
    _check_effects(server, stored, new_id)
    if server.variant.close_every:
        # The variant did close connections: one per few requests was needed.
        assert server.connections >= len(server.seen) // server.variant.close_every


@pytest.mark.parametrize("server", list(TRANSPORTS.values()), ids=list(TRANSPORTS), indirect=True)
def test_every_operation_reads_through_async(server: ForeignServer) -> None:
    """The AsyncClient through the same transports: the same results."""
    server.seed(SEEDED)
    stored = server.listings()

    async def tour() -> tuple[int, str, str, list[str]]:
        async with aclient_for(server) as client:
            assert len(await client.chatbots.models()) == 4
            session = await client.chat.create_session(server.serial)
            answer = (await client.chat.ask(session, QUESTION)).content
            async with client.chat.stream(session, QUESTION) as stream:
                streamed = "".join([piece async for piece in stream])
            new_id = await client.listings.create(_new(server.serial))
            assert await client.listings.update(_changed(server)) == 1
            assert await client.listings.delete(server.serial, ["F000003"]) == 1
            frame = await eb.apull_listings(client, server.serial, progress=False)
            return new_id, answer, streamed, [str(mls) for mls in frame["MLSNumber"]]

    new_id, answer, streamed, pulled = asyncio.run(tour())
    assert [answer, streamed] == server.answers
    assert sorted(pulled) == sorted(item["MLSNumber"] for item in server.listings())
    _check_effects(server, stored, new_id)


@pytest.mark.parametrize("server", [Variant(close_every=1, close_silently=True)], indirect=True)
def test_a_silently_closed_connection_never_sends_a_question_or_a_create_twice(
    server: ForeignServer, client: eb.Client
) -> None:
    """A server that closes every kept-alive connection without saying so races the next
    request: the request may be lost unread, or (to the client, the same) taken and unanswered.
    What may be sent twice reads through; a question or a Create is either answered or raised
    as sent, and never sent a second time (RFC 9112, section 9.3.1)."""
    server.seed(SEEDED)
    stored = server.listings()
    for _ in range(5):
        assert client.chatbots.edit(server.serial, Name="Tour Homes") == 1
        assert len(client.listings.list_page(server.serial, page_size=5).records) == 5
    frame = eb.pull_listings(client, server.serial, progress=False)
    assert len(frame) == SEEDED
    session = client.chat.create_session(server.serial)
    lost: list[eb.APIConnectionError] = []
    for attempt in range(5):
        asked = len(server.requests(CLIENT_ASK))
        try:
            client.chat.ask(session, f"{QUESTION} ({attempt})")
        except eb.APIConnectionError as error:
            lost.append(error)
        assert len(server.requests(CLIENT_ASK)) - asked <= 1
    created = 0
    for number in range(3, 6):
        try:
            client.listings.create(
                {**make_listing(number, prefix="T"), "SerialNumber": server.serial}
            )
            created += 1
        except eb.APIConnectionError as error:
            lost.append(error)
    assert all(error.sent for error in lost)  # said to have gone out: never sent again
    done = carried_out(server, stored)
    assert all(count == 1 for name, count in done.items() if name.startswith("create"))
    assert sum(1 for name in done if name.startswith("create")) >= created


@pytest.mark.parametrize("server", list(TRANSPORTS.values()), ids=list(TRANSPORTS), indirect=True)
def test_failures_read_through(server: ForeignServer, client: eb.Client) -> None:
    """Through each transport a failure is the error of its status with the server's words:
    401, 404 (an unknown chatbot), 409 naming the MLS number, 400 naming the field."""
    server.seed(3)
    wrong = eb.Client(
        base_url=server.base_url,
        api_key="fk-wrong-" + "7" * 32,
        session_key="fk-wrong-" + "6" * 32,
        timeout=5,
        backoff_base=0.01,
    )
    with wrong, pytest.raises(eb.AuthenticationError) as denied:
        wrong.listings.list_page(server.serial)
    assert denied.value.status_code == 401
    with pytest.raises(eb.NotFoundError) as unknown:
        client.listings.list_page("0123456789abcdef0123456789abcdef")
    assert "0123456789abcdef0123456789abcdef" in str(unknown.value)
    taken = {**make_listing(1), "Url": "https://foreign.example/x", "SerialNumber": server.serial}
    with pytest.raises(eb.ConflictError) as conflict:
        client.listings.create(taken)
    assert "F000001" in str(conflict.value)
    with pytest.raises(eb.InvalidRequestError) as invalid:
        client.listings.create({**_new(server.serial), "YearBuilt": 3000})
    assert "YearBuilt" in str(invalid.value)
    assert len(server.listings()) == 3
    assert len(server.requests(CREATE)) == 2  # neither refused create was sent again


# --------------------------------------------------------------------------- HTML error pages


def _body(serial: str) -> dict[str, Any]:
    return {**make_listing(2), "SerialNumber": serial}


def _stream(client: eb.Client, server: ForeignServer, session: int) -> object:
    with client.chat.stream(session, QUESTION) as stream:
        return "".join(stream)


#: One call of each operation (the session is made before the HTML pages start).
HTML_CALLS: dict[str, tuple[str, Callable[[eb.Client, ForeignServer, int], object]]] = {
    "Edit": (EDIT, lambda c, s, _: c.chatbots.edit(s.serial, Name="X")),
    "ModelList": (MODEL_LIST, lambda c, s, _: c.chatbots.models()),
    "GetSession": (GET_SESSION, lambda c, s, _: c.chat.create_session(s.serial)),
    "ClientAsk": (CLIENT_ASK, lambda c, s, session: c.chat.ask(session, QUESTION)),
    "ClientAsk-stream": (CLIENT_ASK, _stream),
    "RealEstateCreate": (CREATE, lambda c, s, _: c.listings.create(_new(s.serial))),
    "RealEstateUpdate": (UPDATE, lambda c, s, _: c.listings.update(_body(s.serial))),
    "RealEstateList": (LIST, lambda c, s, _: c.listings.list_page(s.serial)),
    "RealEstateDelete": (DELETE, lambda c, s, _: c.listings.delete(s.serial, ["F000001"])),
}
HTML_ERRORS: dict[int, type[eb.APIError]] = {403: eb.AuthenticationError, 404: eb.NotFoundError}


@pytest.mark.parametrize("status", list(HTML_ERRORS))
@pytest.mark.parametrize("call", list(HTML_CALLS))
def test_html_error_page_is_the_error_of_its_status(
    server: ForeignServer, client: eb.Client, call: str, status: int
) -> None:
    """IIS's HTML 403 or 404 page instead of an envelope: the error of that status, naming the
    operation, with a message free of markup and of any decoding complaint; sent once, and
    nothing changed."""
    server.seed(3)
    before = server.listings()
    session = client.chat.create_session(server.serial)
    operation, run = HTML_CALLS[call]
    sent = len(server.requests(operation))
    server.variant = Variant(html_page=HtmlPage(frozenset({operation}), status, count=99))

    with pytest.raises(HTML_ERRORS[status]) as caught:
        run(client, server, session)

    error = caught.value
    assert error.status_code == status
    assert error.operation == operation
    message = str(error)
    assert "<" not in message, message
    for complaint in ("not a JSON envelope", "cannot be read", "decode", "Expecting value"):
        assert complaint not in message, message
    assert len(server.requests(operation)) == sent + 1
    assert server.listings() == before
