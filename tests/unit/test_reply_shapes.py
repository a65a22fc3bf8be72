"""Plausible reply shapes of a deployment written by others (an ASP.NET-style service).

Decoding edge cases over httpx.MockTransport: envelope and ``Data`` names in any case, null
``Message``, a byte-order mark, bare ``Data`` values, camelCase List records, and an unknown
shape read as an error that names what came, never as an empty result.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import estatebot as eb
from estatebot import errors
from factories import make_listing

SERIAL = "3254a9d0424c4806b9ea3d0763ccf1bf"


def client_answering(body: Any, *, raw: bytes | None = None) -> eb.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        content = raw if raw is not None else json.dumps(body).encode("utf-8")
        return httpx.Response(200, content=content, headers={"content-type": "application/json"})

    http = httpx.Client(transport=httpx.MockTransport(handler))
    return eb.Client(
        base_url="http://svc.test", api_key="shapes-key-81d", session_key="shapes-session-2b7",
        http_client=http,
        max_retries=0,
    )  # fmt: skip


@pytest.fixture
def closing() -> Iterator[list[eb.Client]]:
    made: list[eb.Client] = []
    yield made
    for client in made:
        client.close()


def answering(closing: list[eb.Client], body: Any, raw: bytes | None = None) -> eb.Client:
    client = client_answering(body, raw=raw)
    closing.append(client)
    return client


def dotnet(data: Any) -> dict[str, Any]:
    """An envelope as ASP.NET Core writes it by default: camelCase, null message."""
    return {"data": data, "version": "1.0.0", "success": True, "code": 200, "message": None}


def test_a_null_message_and_camel_case_envelope_are_a_success(closing: list[eb.Client]) -> None:
    client = answering(closing, dotnet(1))
    assert client.chatbots.edit(SERIAL, Name="Sunny") == 1


@pytest.mark.parametrize(
    "envelope",
    [
        {"Data": 1},  # no Success, Code, Message or Version at all
        {"Data": 1, "Success": None, "Code": None, "Message": None, "Version": None},
        {"Data": 1, "Code": 200},
    ],
)
def test_a_sparse_envelope_is_read_by_what_it_says(
    closing: list[eb.Client], envelope: dict[str, Any]
) -> None:
    assert answering(closing, envelope).chatbots.edit(SERIAL, Name="Sunny") == 1


def test_a_byte_order_mark_before_the_json_is_skipped(closing: list[eb.Client]) -> None:
    raw = b"\xef\xbb\xbf" + json.dumps({"Data": 1, "Success": True, "Code": 200}).encode()
    assert answering(closing, None, raw=raw).chatbots.edit(SERIAL, Name="Sunny") == 1


@pytest.mark.parametrize("data", [123456, "123456", {"sessionId": 123456}, {"SessionID": 123456}])
def test_a_session_id_in_any_plausible_shape(closing: list[eb.Client], data: Any) -> None:
    assert answering(closing, dotnet(data)).chat.create_session(SERIAL) == 123456


def test_model_list_with_numeric_keys_and_camel_case(closing: list[eb.Client]) -> None:
    data = [{"key": 2, "value": "gpt-4o", "status": True}, {"Key": "3", "Value": "mini"}]
    models = answering(closing, dotnet(data)).chatbots.models()
    assert [(m.key, m.name, m.enabled) for m in models] == [
        ("2", "gpt-4o", True),
        ("3", "mini", True),
    ]


@pytest.mark.parametrize("data", [7, "7", {"successCount": 7}, {"SuccessCount": 7}])
def test_a_delete_count_in_any_plausible_shape(closing: list[eb.Client], data: Any) -> None:
    client = answering(closing, dotnet(data))
    assert client.listings.delete(SERIAL, keys=["A"], key_type="MLSNumber") == 7


def test_a_chat_answer_in_pascal_case(closing: list[eb.Client]) -> None:
    data = {"MessageId": 375561, "Content": "Hello", "TotalToken": 12, "NoAnswer": True}
    answer = answering(closing, dotnet(data)).chat.ask(1, "Hi")
    assert (answer.message_id, answer.content, answer.total_tokens) == (375561, "Hello", 12)
    assert answer.no_answer is True


def test_a_camel_case_list_page_and_records_are_read(closing: list[eb.Client]) -> None:
    record = {
        "id": 5,
        "mlsNumber": "M-5",
        "city": "Austin",
        "latitude": 30.1,
        "saleType": "For Sale",
    }
    page = answering(closing, dotnet({"list": [record], "virtualCount": 1})).listings.list_page(
        SERIAL
    )
    assert page.virtual_count == 1
    (read,) = page.records
    assert read["MLSNumber"] == "M-5"
    assert read["LATITUDE"] == 30.1
    assert read["ID"] == 5


@pytest.mark.parametrize(
    "data", [{"items": [], "total": 0}, {"List": None, "VirtualCount": 3}, [], "none"]
)
def test_a_list_reply_without_records_is_an_error_never_zero_listings(
    closing: list[eb.Client], data: Any
) -> None:
    client = answering(closing, dotnet(data))
    with pytest.raises(errors.APIError, match=r"RealEstateList.*unexpected Data") as caught:
        client.listings.list_page(SERIAL)
    if isinstance(data, dict):
        assert repr(next(iter(data))) in str(caught.value)  # names what came instead
    with pytest.raises(eb.PullError, match="unexpected Data"):
        eb.pull_listings(client, SERIAL, progress=False)


def test_dotnet_reference_wrappers_are_taken_off(closing: list[eb.Client]) -> None:
    # ReferenceHandler.Preserve: lists as {"$id", "$values"}, objects with "$id", repeats as $ref.
    first = {"$id": "3", "ID": 1, "MLSNumber": "M-1", "City": "Austin"}
    data = {
        "$id": "1",
        "List": {"$id": "2", "$values": [first, {"$ref": "3"}, {"$id": "4", "ID": 2}]},
        "VirtualCount": 3,
    }
    page = answering(closing, dotnet(data)).listings.list_page(SERIAL)
    assert page.virtual_count == 3
    assert [record.get("ID") for record in page.records] == [1, 1, 2]
    assert page.records[1] == {"ID": 1, "MLSNumber": "M-1", "City": "Austin"}
    assert all("$id" not in record for record in page.records)


def test_a_model_list_in_a_reference_wrapper(closing: list[eb.Client]) -> None:
    data = {"$id": "1", "$values": [{"$id": "2", "Key": "2", "Value": "gpt-4o", "Status": True}]}
    assert [m.key for m in answering(closing, dotnet(data)).chatbots.models()] == ["2"]


def test_an_unrecognised_session_shape_names_the_fields_found(closing: list[eb.Client]) -> None:
    client = answering(closing, dotnet({"token": "abc"}))
    with pytest.raises(errors.APIError, match="'token'"):
        client.chat.create_session(SERIAL)


def test_a_problem_details_reply_keeps_its_title_and_every_field_error(
    closing: list[eb.Client],
) -> None:
    body = {
        "type": "https://tools.ietf.org/html/rfc9110#section-15.5.1",
        "title": "One or more validation errors occurred.",
        "status": 400,
        "errors": {"Name": ["The Name field is required."], "Temperature": ["Out of range."]},
    }

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json=body, headers={"content-type": "application/problem+json"})

    http = httpx.Client(transport=httpx.MockTransport(handler))
    client = eb.Client(
        base_url="http://svc.test", api_key="problem-key-9f2", session_key="problem-session-4c1",
        http_client=http,
    )  # fmt: skip
    closing.append(client)
    with pytest.raises(errors.InvalidRequestError) as caught:
        client.chatbots.edit(SERIAL, Name="x")
    message = str(caught.value)
    assert "One or more validation errors occurred." in message
    assert "Name: The Name field is required." in message
    assert "Temperature: Out of range." in message


@pytest.mark.parametrize("data", [1, "1", 1.0, " 1 ", True, {"count": 1}, {"RowsAffected": "1"}])
def test_an_update_count_in_any_plausible_shape(closing: list[eb.Client], data: Any) -> None:
    listing = {**make_listing(1, random.Random(1)), "SerialNumber": SERIAL}
    client = answering(closing, dotnet(data))
    assert client.listings.update(listing, key_type="MLSNumber") == 1


@pytest.mark.parametrize(
    "data", [10001, "10001", 10001.0, {"id": 10001}, {"ID": 10001, "MLSNumber": "M-1"}]
)
def test_a_new_listing_id_in_any_plausible_shape(closing: list[eb.Client], data: Any) -> None:
    listing = {**make_listing(1, random.Random(1)), "SerialNumber": SERIAL}
    assert answering(closing, dotnet(data)).listings.create(listing) == 10001


@pytest.mark.parametrize("data", [True, 1.5, "ten", {"a": 1, "b": 2}, [1]])
def test_an_unreadable_count_or_id_is_an_error_naming_what_came(
    closing: list[eb.Client], data: Any
) -> None:
    listing = {**make_listing(1, random.Random(1)), "SerialNumber": SERIAL}
    with pytest.raises(errors.APIError, match=r"RealEstateCreate.*unexpected Data") as caught:
        answering(closing, dotnet(data)).listings.create(listing)
    if isinstance(data, dict):
        assert "'a', 'b'" in str(caught.value)
