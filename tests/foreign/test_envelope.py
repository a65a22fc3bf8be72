"""Every operation through the public client against envelope and ``Data`` variants.

The variants are what ASP.NET deployments plausibly send: camelCase names (System.Text.Json's
default), ``Message: null``, envelope fields left out, ``Code`` as text, a byte-order mark, gzip,
``text/plain`` content types, extra fields (``traceId``), bare ``Data`` values, numeric model
keys, casing mixed between operations, Newtonsoft reference wrappers. The client must read each
correctly, and an unknown ``Data`` shape must be an error naming what came, never an empty result.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import estatebot as eb
from foreign.helpers import aclient_for
from foreign.server import ForeignServer
from foreign.variant import DELETE, GET_SESSION, LIST, Variant

ENVELOPES: dict[str, Variant] = {
    "contract": Variant(),
    "camel": Variant(camel_case=True),
    "camel-pascal-ask": Variant(camel_case=True, ask_keys="pascal"),
    "camel-camel-ask": Variant(camel_case=True, ask_keys="camel"),
    "camel-some-operations": Variant(
        camel_case=True, camel_operations=frozenset({LIST, GET_SESSION, DELETE})
    ),
    "null-message-no-version-no-code": Variant(
        null_message=True, omit_fields=frozenset({"Version", "Code"})
    ),
    "no-success": Variant(omit_fields=frozenset({"Success"})),
    "no-message": Variant(omit_fields=frozenset({"Message"})),
    "code-as-text": Variant(code_text=True),
    "bom": Variant(bom=True),
    "gzip": Variant(gzip=True),
    "json-without-charset": Variant(content_type="application/json"),
    "text-plain": Variant(content_type="text/plain; charset=utf-8"),
    "extra-fields": Variant(extra_fields=True),
    "all-at-once": Variant(
        camel_case=True,
        ask_keys="pascal",
        null_message=True,
        omit_fields=frozenset({"Version"}),
        code_text=True,
        bom=True,
        gzip=True,
        extra_fields=True,
        content_type="text/plain",
    ),
}


def _phoenix(server: ForeignServer) -> dict[str, Any]:
    return next(item for item in server.listings() if item["City"] == "Phoenix")


@pytest.mark.parametrize("server", list(ENVELOPES.values()), ids=list(ENVELOPES), indirect=True)
def test_every_operation_reads_its_reply(server: ForeignServer, client: eb.Client) -> None:
    """Each operation returns the contract's value under the variant, and did what it says."""
    bodies = server.seed(6)
    serial = server.serial

    models = client.chatbots.models()
    assert [(m.key, m.name, m.enabled) for m in models][:2] == [
        ("2", "gpt-4o", True),
        ("3", "gpt-4o-mini", True),
    ]
    assert [m.enabled for m in models][2:] == [False, False]

    assert client.chatbots.edit(serial, Name="Casa Foreign", Model="3") == 1
    assert server.chatbot.settings["Name"] == "Casa Foreign"
    assert server.chatbot.settings["Model"] == "3"

    session = client.chat.create_session(serial)
    assert session in server.store.sessions

    answer = client.chat.ask(session, "Anything in Phoenix?")
    assert _phoenix(server)["MLSNumber"] in answer.content
    assert answer.message_id > 0
    assert answer.total_tokens > 0
    assert answer.no_answer is False

    new = {**bodies[0], "MLSNumber": "NEW000001", "Url": "https://foreign.example/new/1"}
    new_id = client.listings.create({**new, "SerialNumber": serial})
    assert new_id in {item["ID"] for item in server.listings()}

    changed = {**new, "SalePrice": 987000, "SerialNumber": serial}
    assert client.listings.update(changed, key_type="MLSNumber") == 1
    stored = {item["MLSNumber"]: item for item in server.listings()}
    assert stored["NEW000001"]["SalePrice"] == 987000
    missing = {**changed, "MLSNumber": "NOPE000000", "Url": "https://foreign.example/nope"}
    assert client.listings.update(missing, key_type="MLSNumber") == 0

    page = client.listings.list_page(serial, page=2, page_size=4)
    assert page.virtual_count == 7
    assert [r["MLSNumber"] for r in page.records] == ["F000005", "F000006", "NEW000001"]
    assert page.records[0]["SaleType"] in ("For Sale", "For Rent")

    assert client.listings.delete(serial, ["NEW000001", "NOPE000000"]) == 1
    assert "NEW000001" not in {item["MLSNumber"] for item in server.listings()}


@pytest.mark.parametrize(
    "server",
    [ENVELOPES["camel"], ENVELOPES["all-at-once"]],
    ids=["camel", "all-at-once"],
    indirect=True,
)
def test_async_client_reads_the_same_replies(server: ForeignServer) -> None:
    """The AsyncClient reads the variant's replies as the blocking one does."""
    server.seed(5)

    async def run() -> tuple[int, eb.Answer, int, int]:
        async with aclient_for(server) as client:
            session = await client.chat.create_session(server.serial)
            answer = await client.chat.ask(session, "Homes in Boston please")
            page = await client.listings.list_page(server.serial, page_size=2)
            deleted = await client.listings.delete(server.serial, ["F000001"])
            return session, answer, len(page.records), deleted

    session, answer, rows, deleted = asyncio.run(run())
    assert session in server.store.sessions
    assert "Boston" in answer.content
    assert (rows, deleted) == (2, 1)


BARE: dict[str, Variant] = {
    "session-bare-int": Variant(session_shape="bare"),
    "session-bare-text": Variant(session_shape="bare_text"),
    "session-sessionId": Variant(session_shape="sessionId"),
    "session-sessionId-camel": Variant(session_shape="sessionId", camel_case=True),
    "delete-bare": Variant(delete_bare=True),
    "delete-bare-camel": Variant(delete_bare=True, camel_case=True),
    "create-text": Variant(create_text=True),
    "numeric-model-keys": Variant(numeric_model_keys=True),
    "numeric-model-keys-camel": Variant(numeric_model_keys=True, camel_case=True),
}


@pytest.mark.parametrize("server", list(BARE.values()), ids=list(BARE), indirect=True)
def test_bare_data_values(server: ForeignServer, client: eb.Client) -> None:
    """Bare ``Data`` where one is plausible: session ID, Delete count, Create ID, model keys."""
    bodies = server.seed(3)
    session = client.chat.create_session(server.serial)
    assert isinstance(session, int)
    assert session in server.store.sessions

    new = {**bodies[0], "MLSNumber": "BARE00001", "Url": "https://foreign.example/bare/1"}
    new_id = client.listings.create({**new, "SerialNumber": server.serial})
    assert isinstance(new_id, int)
    assert new_id == max(item["ID"] for item in server.listings())

    assert client.listings.delete(server.serial, ["F000001", "F000002", "ZZZ"]) == 2

    keys = [model.key for model in client.chatbots.models()]
    assert keys == ["2", "3", "22", "23"]


@pytest.mark.parametrize(
    "server",
    [Variant(list_shape="unknown"), Variant(list_shape="unknown", camel_case=True)],
    ids=["pascal", "camel"],
    indirect=True,
)
def test_unknown_list_shape_is_an_error_naming_the_fields(
    server: ForeignServer, client: eb.Client
) -> None:
    """A List ``Data`` without ``List`` is never read as zero listings: the error names what
    came (``Items``, ``TotalCount``)."""
    server.seed(4)
    with pytest.raises(eb.APIError) as caught:
        client.listings.list_page(server.serial)
    assert "items" in str(caught.value).lower()
    assert "totalcount" in str(caught.value).lower()
    with pytest.raises(eb.EstatebotError) as pulled:
        eb.pull_listings(client, server.serial, progress=False)
    assert "items" in str(pulled.value).lower()


@pytest.mark.parametrize("server", [Variant(session_shape="unknown")], indirect=True)
def test_unknown_session_shape_is_an_error_naming_the_fields(
    server: ForeignServer, client: eb.Client
) -> None:
    """A GetSession ``Data`` with no session ID is an error naming the fields found."""
    with pytest.raises(eb.APIError) as caught:
        client.chat.create_session(server.serial)
    assert "Token" in str(caught.value)
    assert "GetSession" in str(caught.value)


@pytest.mark.parametrize(
    "server",
    [Variant(list_shape="references"), Variant(list_shape="references", camel_case=True)],
    ids=["pascal", "camel"],
    indirect=True,
)
def test_reference_preserving_list_is_read(server: ForeignServer, client: eb.Client) -> None:
    """Newtonsoft's ``PreserveReferencesHandling`` wraps arrays as ``{"$id", "$values"}``: the
    client takes the wrappers off and reads every record."""
    server.seed(9)
    outcome = eb.pull_listings(client, server.serial, progress=False)
    assert sorted(outcome["MLSNumber"]) == [f"F{i:06d}" for i in range(1, 10)]
