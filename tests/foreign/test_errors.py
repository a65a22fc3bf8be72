"""Failures as a deployment reports them, and the error the client must raise for each.

Failures come with their HTTP status (the addendum's decision), or with HTTP 200 and
``Success: false`` with the status in ``Code`` (many .NET services do this), and validation
failures either as an envelope naming every field or as ASP.NET's ``application/problem+json``.
The error's class follows the status, and its message names the fields or the problem's title.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

import estatebot as eb
from foreign.data import make_listing
from foreign.helpers import client_for
from foreign.server import ForeignServer
from foreign.variant import (
    CLIENT_ASK,
    CREATE,
    GET_SESSION,
    LIST,
    UPDATE,
    Throttle,
    Variant,
)

FAILURE_STYLES = {
    "http-status": Variant(),
    "http-200": Variant(http200_failures=True),
    "http-200-code-text-camel": Variant(http200_failures=True, code_text=True, camel_case=True),
    "http-status-no-message-field": Variant(omit_fields=frozenset({"Message"})),
}
STYLE_IDS = list(FAILURE_STYLES)
STYLES = list(FAILURE_STYLES.values())


def _body(serial: str, number: int = 1) -> dict[str, Any]:
    return {**make_listing(number, prefix="E"), "SerialNumber": serial}


def _calls(serial: str, session: int) -> dict[str, Callable[[eb.Client], object]]:
    """One call of each operation on chatbot ``serial`` (and chat session ``session``)."""
    return {
        "Edit": lambda c: c.chatbots.edit(serial, Name="X"),
        "ModelList": lambda c: c.chatbots.models(),
        "GetSession": lambda c: c.chat.create_session(serial),
        "ClientAsk": lambda c: c.chat.ask(session, "Homes?"),
        "RealEstateCreate": lambda c: c.listings.create(_body(serial)),
        "RealEstateUpdate": lambda c: c.listings.update(_body(serial)),
        "RealEstateList": lambda c: c.listings.list_page(serial),
        "RealEstateDelete": lambda c: c.listings.delete(serial, ["E000001"]),
    }


@pytest.mark.parametrize("server", STYLES, ids=STYLE_IDS, indirect=True)
def test_wrong_keys_are_authentication_errors(server: ForeignServer) -> None:
    """Every operation with wrong keys: AuthenticationError (Code 401), never a retry storm."""
    with client_for(server) as good:
        session = good.chat.create_session(server.serial)
    wrong = eb.Client(
        base_url=server.base_url,
        api_key="fk-wrong-" + "9" * 32,
        session_key="fk-wrong-" + "8" * 32,
        timeout=5,
        backoff_base=0.01,
    )
    with wrong:  # built as a user would, with its own HTTP client
        for name, call in _calls(server.serial, session).items():
            before = len(server.seen)
            with pytest.raises(eb.AuthenticationError) as caught:
                call(wrong)
            assert caught.value.operation == name
            assert 401 in (caught.value.code, caught.value.status_code)
            assert len(server.seen) - before == 1, name


@pytest.mark.parametrize("server", STYLES, ids=STYLE_IDS, indirect=True)
def test_chatbots_out_of_reach_are_not_found(server: ForeignServer, client: eb.Client) -> None:
    """Another workspace's chatbot, an unknown serial and an unknown session: NotFoundError for
    every operation that names one (and nothing changes there)."""
    session = client.chat.create_session(server.serial)
    for serial in (server.other_chatbot.serial, "0123456789abcdef0123456789abcdef"):
        for name, call in _calls(serial, session).items():
            if name in ("ModelList", "ClientAsk"):
                continue
            with pytest.raises(eb.NotFoundError) as caught:
                call(client)
            assert caught.value.operation == name
    assert server.other_chatbot.listings == {}
    with pytest.raises(eb.NotFoundError):
        client.chat.ask(424242, "Homes?")
    with pytest.raises(eb.NotFoundError), client.chat.stream(424242, "Homes?") as stream:
        list(stream)


@pytest.mark.parametrize("server", STYLES, ids=STYLE_IDS, indirect=True)
def test_duplicate_create_is_a_conflict(server: ForeignServer, client: eb.Client) -> None:
    """A second listing with a taken MLS number: ConflictError naming it; one listing stays."""
    client.listings.create(_body(server.serial))
    with pytest.raises(eb.ConflictError) as caught:
        client.listings.create({**_body(server.serial), "Url": "https://foreign.example/other"})
    assert "E000001" in str(caught.value)
    assert [item["MLSNumber"] for item in server.listings()] == ["E000001"]


@pytest.mark.parametrize(
    "server",
    [Variant(), Variant(http200_failures=True), Variant(problem_details=True)],
    ids=["envelope", "envelope-http-200", "problem+json"],
    indirect=True,
)
def test_server_side_validation_names_every_field(server: ForeignServer, client: eb.Client) -> None:
    """Rules only the server knows (the contract shows no Temperature or ChatBubbleAlign range,
    no YearBuilt range, no model list): InvalidRequestError naming each bad field; for a
    problem+json reply, its title too."""
    with pytest.raises(eb.InvalidRequestError) as caught:
        client.chatbots.edit(server.serial, Temperature=7, ChatBubbleAlign=5, Model="999")
    message = str(caught.value)
    for field in ("Temperature", "ChatBubbleAlign", "Model"):
        assert field in message
    with pytest.raises(eb.InvalidRequestError) as created:
        client.listings.create({**_body(server.serial), "YearBuilt": 3000})
    assert "YearBuilt" in str(created.value)
    assert server.listings() == []
    if server.variant.problem_details:
        assert "One or more validation errors occurred." in message


# --------------------------------------------------------------------------- Retry-After

THROTTLED: dict[str, tuple[str, Callable[[eb.Client, ForeignServer], object]]] = {
    "list": (LIST, lambda c, s: c.listings.list_page(s.serial)),
    "create": (CREATE, lambda c, s: c.listings.create(_body(s.serial, 7))),
    "update": (UPDATE, lambda c, s: c.listings.update(_body(s.serial, 7))),
    "session": (GET_SESSION, lambda c, s: c.chat.create_session(s.serial)),
    "ask": (CLIENT_ASK, lambda c, s: c.chat.ask(c.chat.create_session(s.serial), "Homes?")),
}


@pytest.mark.parametrize("style", ["seconds", "http-date", "http-200"])
@pytest.mark.parametrize("operation", list(THROTTLED))
def test_retry_after_beyond_the_cap_raises_at_once(
    server: ForeignServer, client: eb.Client, operation: str, style: str
) -> None:
    """429 with Retry-After 120 s (as seconds, or as an HTTP date), over the client's
    ``max_retry_after`` of 60: RateLimitError at once, ``retry_after`` 120, one request."""
    name, call = THROTTLED[operation]
    throttle = Throttle(frozenset({name}), "date+120" if style == "http-date" else "120", 5)
    server.variant = Variant(throttle=throttle, http200_failures=style == "http-200")
    started = time.monotonic()
    with pytest.raises(eb.RateLimitError) as caught:
        call(client, server)
    assert time.monotonic() - started < 3
    assert caught.value.retry_after == pytest.approx(120, abs=2)
    assert len(server.requests(name)) == 1


def test_short_retry_after_is_waited_out(server: ForeignServer, client: eb.Client) -> None:
    """429 with Retry-After 1 on a List: the client waits about a second and succeeds."""
    server.seed(3)
    server.variant = Variant(throttle=Throttle(frozenset({LIST}), "1", 1))
    started = time.monotonic()
    assert len(client.listings.list_page(server.serial).records) == 3
    assert time.monotonic() - started >= 0.9
    assert len(server.requests(LIST)) == 2


def test_raised_max_retry_after_waits_longer(server: ForeignServer) -> None:
    """With ``max_retry_after=0.5`` a Retry-After of 1 s is already beyond it: raised at once."""
    server.variant = Variant(throttle=Throttle(frozenset({LIST}), "1", 1))
    with client_for(server, max_retry_after=0.5) as client, pytest.raises(eb.RateLimitError):
        client.listings.list_page(server.serial)
    assert len(server.requests(LIST)) == 1


# --------------------------------------------------------------------------- credentials


def test_each_operation_takes_its_credential(server: ForeignServer) -> None:
    """List takes the session key only; Update, Delete and Create take either key; Edit,
    GetSession and ClientAsk the API key. A client without the needed key refuses before
    sending; with it, the server accepts the call."""
    bodies = server.seed(3)
    body = {**bodies[0], "Description": "either key", "SerialNumber": server.serial}
    options: dict[str, Any] = {"base_url": server.base_url, "timeout": 5.0}
    api_only = eb.Client(api_key=server.api_key, **options)
    session_only = eb.Client(session_key=server.session_key, **options)
    with api_only, session_only:
        with pytest.raises(eb.ConfigurationError):
            api_only.listings.list_page(server.serial)
        with pytest.raises(eb.ConfigurationError):
            session_only.chat.create_session(server.serial)
        with pytest.raises(eb.ConfigurationError):
            session_only.chatbots.edit(server.serial, Name="No")
        assert server.requests(LIST) == []
        assert len(session_only.listings.list_page(server.serial).records) == 3
        assert api_only.listings.update(body) == 1
        assert session_only.listings.update(body) == 1
        assert session_only.listings.delete(server.serial, [bodies[1]["MLSNumber"]]) == 1
        assert api_only.listings.delete(server.serial, [bodies[2]["MLSNumber"]]) == 1
        new = {**body, "MLSNumber": "K00000001", "Url": "https://foreign.example/k/1"}
        assert session_only.listings.create(new) > 0
        assert api_only.chat.create_session(server.serial) > 0
    assert [item["MLSNumber"] for item in server.listings()] == ["F000001", "K00000001"]
