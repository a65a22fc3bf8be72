"""Being told to come back later: 429 with each form of the hint, and 503 ``Retry-After: 0``.

The hints are ``Retry-After`` in seconds or as an HTTP date, the IETF draft's
``RateLimit-Reset: <seconds>`` and the widespread ``X-RateLimit-Reset: <epoch seconds>``. The
server enforces the wait (``Throttle.hold``): a request before it has passed is refused again,
so only a client that read the hint gets through with its few retries. A refused request did
nothing, so every operation, Create and Delete included, is waited out and sent again, and each
write is carried out exactly once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

import estatebot as eb
from foreign.data import make_listing
from foreign.helpers import carried_out
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
    Throttle,
    Variant,
)


def _throttle(name: str, operation: str) -> Throttle:
    ops = frozenset({operation})
    return {
        "retry-after-seconds": Throttle(ops, "1", hold=True),
        "retry-after-date": Throttle(ops, "date+1", hold=True),
        "ratelimit-reset": Throttle(ops, "1", hint="ratelimit_reset", hold=True),
        "x-ratelimit-reset": Throttle(ops, "1", hint="x_ratelimit_reset", hold=True),
        "503-retry-after-0": Throttle(ops, "0", status=503),
    }[name]


HINTS = (
    "retry-after-seconds",
    "retry-after-date",
    "ratelimit-reset",
    "x-ratelimit-reset",
    "503-retry-after-0",
)


def _create(client: eb.Client, server: ForeignServer) -> None:
    new_id = client.listings.create({**make_listing(1, prefix="R"), "SerialNumber": server.serial})
    assert new_id in server.chatbot.listings
    assert [item["MLSNumber"] for item in server.listings()].count("R000001") == 1


def _update(client: eb.Client, server: ForeignServer) -> None:
    body = {**make_listing(2), "SalePrice": 424242, "SerialNumber": server.serial}
    assert client.listings.update(body) == 1
    stored = {item["MLSNumber"]: item for item in server.listings()}
    assert stored["F000002"]["SalePrice"] == 424242


def _delete(client: eb.Client, server: ForeignServer) -> None:
    assert client.listings.delete(server.serial, ["F000001", "F000003"]) == 2
    assert [item["MLSNumber"] for item in server.listings()] == ["F000002"]


def _list(client: eb.Client, server: ForeignServer) -> None:
    assert [r["MLSNumber"] for r in client.listings.list_page(server.serial).records] == [
        "F000001",
        "F000002",
        "F000003",
    ]


def _edit(client: eb.Client, server: ForeignServer) -> None:
    assert client.chatbots.edit(server.serial, Name="Patient Homes") == 1
    assert server.chatbot.settings["Name"] == "Patient Homes"


def _models(client: eb.Client, server: ForeignServer) -> None:
    assert [model.key for model in client.chatbots.models()] == ["2", "3", "22", "23"]


def _session(client: eb.Client, server: ForeignServer) -> None:
    assert client.chat.create_session(server.serial) in server.store.sessions


#: Each operation that a refusal must not stop, with a check of its result on the server.
OPERATIONS: dict[str, tuple[str, Callable[[eb.Client, ForeignServer], None]]] = {
    "create": (CREATE, _create),
    "update": (UPDATE, _update),
    "delete": (DELETE, _delete),
    "list": (LIST, _list),
    "edit": (EDIT, _edit),
    "models": (MODEL_LIST, _models),
    "session": (GET_SESSION, _session),
}


@pytest.mark.parametrize("hint", HINTS)
@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_refused_operation_succeeds_after_the_wait(
    server: ForeignServer, client: eb.Client, operation: str, hint: str
) -> None:
    """The first request is refused (nothing done) with the hint; the client waits as told,
    sends it again, and the operation's result is right. A write is carried out once."""
    server.seed(3)
    stored = server.listings()
    name, run = OPERATIONS[operation]
    throttle = _throttle(hint, name)
    server.variant = Variant(throttle=throttle)
    started = time.monotonic()

    run(client, server)

    replies = [seen.status for seen in server.requests(name)]
    assert replies[0] == throttle.status
    assert replies.count(200) == 1, replies
    assert replies[-1] == 200
    if throttle.hold:
        # The hint was read: the retry came after the wait (1 s, a date up to 2 s ahead).
        assert time.monotonic() - started >= 0.9
        assert len(replies) == 2, f"retried before the wait was over: {replies}"
    writes = carried_out(server, stored)
    assert all(count == 1 for count in writes.values()), writes
    assert sum(writes.values()) == (
        {"create": 1, "update": 1, "delete": 2}.get(operation, 0)  # Delete named two keys
    )


@pytest.mark.parametrize("hint", HINTS)
def test_refused_question_is_never_asked_twice(
    server: ForeignServer, client: eb.Client, hint: str
) -> None:
    """A chat question refused with a hint: either answered after one retry, or the error
    (429 or 503, with the wait read from the hint) is raised; never two answers."""
    server.seed(3)
    session = client.chat.create_session(server.serial)
    throttle = _throttle(hint, CLIENT_ASK)
    server.variant = Variant(throttle=throttle)
    outcome: Any
    try:
        outcome = client.chat.ask(session, "Homes in Boston?")
    except (eb.RateLimitError, eb.ServerError) as error:
        outcome = error
    if isinstance(outcome, eb.APIError):
        assert server.answers == []
        assert outcome.status_code == throttle.status
        assert outcome.retry_after is not None, "the hint was not read"
        assert outcome.retry_after <= 2.5
        if throttle.hold:
            assert outcome.retry_after >= 0.5
    else:
        assert len(server.answers) == 1
        assert outcome.content == server.answers[0]


def _seconds(hint: str) -> Throttle:
    return {
        "retry-after-date": Throttle(frozenset({LIST}), "date+120", 5),
        "ratelimit-reset": Throttle(frozenset({LIST}), "120", 5, hint="ratelimit_reset"),
        "x-ratelimit-reset": Throttle(frozenset({LIST}), "120", 5, hint="x_ratelimit_reset"),
    }[hint]


@pytest.mark.parametrize("hint", ["retry-after-date", "ratelimit-reset", "x-ratelimit-reset"])
def test_a_long_wait_in_any_hint_is_not_waited_out(
    server: ForeignServer, client: eb.Client, hint: str
) -> None:
    """A wait of 120 s, beyond the client's ``max_retry_after`` of 60, in any hint form:
    RateLimitError at once with ``retry_after`` about 120 (an epoch read as seconds would be
    some 1.7e9), sent once."""
    server.variant = Variant(throttle=_seconds(hint))
    started = time.monotonic()
    with pytest.raises(eb.RateLimitError) as caught:
        client.listings.list_page(server.serial)
    assert time.monotonic() - started < 3
    assert caught.value.retry_after == pytest.approx(120, abs=2)
    assert len(server.requests(LIST)) == 1
