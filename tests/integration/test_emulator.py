"""The emulator over loopback HTTP with raw httpx: the contract and the addendum's decisions."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from estatebot.api.models import LIST_RECORD_FIELDS
from estatebot.emulator import SAMPLE_LISTINGS, EmulatorServer, running
from estatebot.emulator.app import OPERATIONS

PATHS = {operation: path for operation, (_, path) in OPERATIONS.items()}
ENVELOPE_KEYS = {"Data", "Version", "Success", "Code", "Message"}


def call(
    server: EmulatorServer,
    operation: str,
    body: Any = None,
    *,
    headers: dict[str, str] | None = None,
    credential: str = "auto",
) -> httpx.Response:
    """Send one operation: the right credential unless ``headers``/``credential`` say otherwise."""
    if headers is None:
        headers = credentials(server, credential, operation)
    if operation == "ModelList":
        return httpx.get(server.base_url + PATHS[operation], headers=headers)
    return httpx.post(server.base_url + PATHS[operation], json=body, headers=headers)


def credentials(server: EmulatorServer, kind: str, operation: str = "") -> dict[str, str]:
    if kind == "auto":
        kind = "session" if operation == "RealEstateList" else "api"
    return {
        "api": {"Authorization": server.api_key},
        "session": {"chatrobot-sessionkey": server.session_key},
        "none": {},
    }[kind]


def ok(response: httpx.Response) -> Any:
    """The Data of a successful envelope (asserting its shape)."""
    body = response.json()
    assert response.status_code == 200, body
    assert set(body) == ENVELOPE_KEYS
    assert (body["Success"], body["Code"], body["Message"], body["Version"]) == (
        True,
        200,
        "",
        "1.0.0",
    )
    return body["Data"]


def failure(response: httpx.Response, code: int) -> str:
    """The Message of a failed envelope with this code (asserting HTTP status == Code)."""
    body = response.json()
    assert response.status_code == code, body
    assert set(body) == ENVELOPE_KEYS
    assert (body["Success"], body["Code"], body["Data"]) == (False, code, None)
    assert body["Message"]
    return str(body["Message"])


def listing(serial: str, mls: str = "NEW0001", **changes: Any) -> dict[str, Any]:
    """A valid Create body."""
    body: dict[str, Any] = {
        "SerialNumber": serial,
        "SaleType": "for_sale",
        "Status": "Active",
        "CurrencySymbol": "$",
        "PropertyType": "Condo",
        "Bedrooms": 2,
        "Bathrooms": 1.5,
        "Url": f"https://homes.example/{mls}",
        "MLSNumber": mls,
        "YearBuilt": 2001,
        "DaysOnMarket": 4,
        "LotArea": 0,
        "BuildingArea": 980,
        "AreaUnit": "Square Feet",
        "ParkingSpots": 1,
        "City": "Boulder",
        "SalePrice": 510000,
        "Tours": "3D",
        "Description": "Bright corner unit.",
    }
    body.update(changes)
    return body


def list_page(server: EmulatorServer, **body: Any) -> dict[str, Any]:
    data = ok(call(server, "RealEstateList", {"SerialNumber": server.serial, **body}))
    assert isinstance(data, dict)
    return data


def session(server: EmulatorServer) -> int:
    return int(ok(call(server, "GetSession", {"serialNumber": server.serial}))["SessionID"])


def ask(server: EmulatorServer, session_id: int, content: str, **more: Any) -> httpx.Response:
    return call(server, "ClientAsk", {"sessionID": session_id, "content": content, **more})


def edit(server: EmulatorServer, **settings: Any) -> None:
    assert ok(call(server, "Edit", {"serialNumber": server.serial, **settings})) == 1


# --------------------------------------------------------------------------- envelope, happy paths


def test_model_list_with_and_without_a_body(emulator: EmulatorServer) -> None:
    url = emulator.base_url + PATHS["ModelList"]
    headers = {"Authorization": emulator.api_key}
    bare = ok(httpx.get(url, headers=headers))
    with_body = ok(httpx.request("GET", url, headers=headers, content=b"{}"))
    assert bare == with_body
    assert [m["Key"] for m in bare] == ["2", "3", "22", "23"]
    assert bare[0] == {"Key": "2", "Value": "gpt-4o", "Status": True}


def test_chat_happy_path(emulator: EmulatorServer) -> None:
    first, second = session(emulator), session(emulator)
    assert first >= 100001
    assert second > first
    data = ok(ask(emulator, first, "3 bed homes in Austin under $500k"))
    assert set(data) == {"messageid", "content", "totalToken", "noAnswer"}
    assert isinstance(data["messageid"], int)
    assert data["totalToken"] > 0
    assert data["noAnswer"] is False
    assert "MLS# ATX1001" in data["content"]


def test_off_topic_question_is_a_no_answer(emulator: EmulatorServer) -> None:
    data = ok(ask(emulator, session(emulator), "What is the capital of France?"))
    assert data["noAnswer"] is True


def test_listing_lifecycle(emulator: EmulatorServer) -> None:
    serial = emulator.serial
    new_id = ok(call(emulator, "RealEstateCreate", listing(serial)))
    assert isinstance(new_id, int)
    [record] = list_page(emulator, MLSNumber="NEW0001")["List"]
    assert record["ID"] == new_id
    assert record["Price"] == "510000"

    update = {**listing(serial, SalePrice=499000), "Key": str(new_id), "KeyType": "NewOaks"}
    assert ok(call(emulator, "RealEstateUpdate", update)) == 1
    [record] = list_page(emulator, MLSNumber="NEW0001")["List"]
    assert record["Price"] == "499000"

    delete = {"SerialNumber": serial, "Keys": ["NEW0001"], "KeyType": "MLSNumber"}
    assert ok(call(emulator, "RealEstateDelete", delete)) == {"SuccessCount": 1}
    assert list_page(emulator, MLSNumber="NEW0001") == {"List": [], "VirtualCount": 0}


def test_the_demo_data(emulator: EmulatorServer, empty_emulator: EmulatorServer) -> None:
    assert emulator.serial == "3254a9d0424c4806b9ea3d0763ccf1bf"
    assert (emulator.api_key, emulator.session_key) == ("demo-api-key", "demo-session-key")
    assert list_page(emulator)["VirtualCount"] == len(SAMPLE_LISTINGS)
    assert list_page(empty_emulator) == {"List": [], "VirtualCount": 0}
    assert empty_emulator.serial == emulator.serial


def test_unknown_paths_get_an_envelope(emulator: EmulatorServer) -> None:
    failure(httpx.post(emulator.base_url + "/chat/Chatbot/Nope", json={}), 404)


# --------------------------------------------------------------------------- validation, binding


def test_every_bad_field_is_named(emulator: EmulatorServer) -> None:
    body = listing(emulator.serial, Bedrooms="x", SaleType="sold", Latitude=200)
    del body["Status"]
    message = failure(call(emulator, "RealEstateCreate", body), 400)
    assert message.startswith("Invalid request: ")
    for name in ("Bedrooms", "SaleType", "Latitude", "Status"):
        assert f"{name}: " in message
    assert "Bedrooms: Input should be a valid number (got 'x')" in message
    assert "Status: Field required" in message


def test_a_number_sent_as_text_is_a_wrong_type(emulator: EmulatorServer) -> None:
    message = failure(
        call(emulator, "RealEstateCreate", listing(emulator.serial, Bedrooms="3")), 400
    )
    assert "Bedrooms" in message


def test_bodies_that_are_not_json_objects(emulator: EmulatorServer) -> None:
    url = emulator.base_url + PATHS["Edit"]
    headers = {"Authorization": emulator.api_key, "Content-Type": "application/json"}
    assert "not valid JSON" in failure(httpx.post(url, content=b"{nope", headers=headers), 400)
    assert "JSON object" in failure(httpx.post(url, content=b"[1, 2]", headers=headers), 400)
    wrong_type = {"Authorization": emulator.api_key, "Content-Type": "text/plain"}
    failure(httpx.post(url, content=b"{}", headers=wrong_type), 415)


def test_field_names_bind_case_insensitively(emulator: EmulatorServer) -> None:
    body = {key.upper(): value for key, value in listing(emulator.serial).items()}
    body["ExtensionColumn"] = [{"KEY": "Pool", "VALUE": "Yes"}]
    body["SomethingUnknown"] = 1  # dropped, as ASP.NET binding does
    ok(call(emulator, "RealEstateCreate", body))
    [record] = list_page(emulator, mlsnumber="NEW0001")["List"]
    assert record["ExtensionColumn"] == '[{"Key":"Pool","value":"Yes"}]'
    sid = int(ok(call(emulator, "GetSession", {"SerialNumber": emulator.serial}))["SessionID"])
    ok(call(emulator, "ClientAsk", {"SESSIONID": sid, "Content": "hello"}))


def test_edit_model_must_come_from_the_model_list(emulator: EmulatorServer) -> None:
    body = {"serialNumber": emulator.serial, "Model": "gpt-4o", "Temperature": "hot"}
    message = failure(call(emulator, "Edit", body), 400)
    assert "Model: " in message
    assert "Temperature: " in message
    edit(emulator, Model="22")


def test_ask_rules_are_enforced(emulator: EmulatorServer) -> None:
    sid = session(emulator)
    assert "content" in failure(ask(emulator, sid, "  "), 400)
    body = {"sessionID": sid, "content": "", "chatAskType": "Video", "fileIds": [1, 2]}
    assert "fileIds" in failure(call(emulator, "ClientAsk", body), 400)
    image = {"sessionID": sid, "content": "", "chatAskType": "Image", "fileIds": [1, 2]}
    assert ok(call(emulator, "ClientAsk", image))["noAnswer"] is True


# --------------------------------------------------------------------------- credentials


@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("headers", [{}, {"Authorization": "nope", "chatrobot-sessionkey": "nope"}])
def test_missing_or_wrong_credential_is_401(
    emulator: EmulatorServer, operation: str, headers: dict[str, str]
) -> None:
    failure(call(emulator, operation, {"SerialNumber": emulator.serial}, headers=headers), 401)
    assert emulator.request_counts[operation] == 1


@pytest.mark.parametrize(
    ("operation", "accepted"),
    [
        ("Edit", {"api"}),
        ("ModelList", {"api"}),
        ("GetSession", {"api"}),
        ("ClientAsk", {"api"}),
        ("RealEstateCreate", {"api", "session"}),
        ("RealEstateUpdate", {"api", "session"}),
        ("RealEstateList", {"session"}),
        ("RealEstateDelete", {"api", "session"}),
    ],
)
def test_each_operation_takes_its_credential(
    emulator: EmulatorServer, operation: str, accepted: set[str]
) -> None:
    sid = session(emulator)
    bodies: dict[str, dict[str, Any]] = {
        "Edit": {"serialNumber": emulator.serial, "Name": "Renamed"},
        "ModelList": {},
        "GetSession": {"serialNumber": emulator.serial},
        "ClientAsk": {"sessionID": sid, "content": "hello"},
        "RealEstateCreate": listing(emulator.serial),
        "RealEstateUpdate": {**listing(emulator.serial), "Key": "ATX1001", "KeyType": "MLSNumber"},
        "RealEstateList": {"SerialNumber": emulator.serial},
        "RealEstateDelete": {"SerialNumber": emulator.serial, "Keys": ["x"], "KeyType": "URL"},
    }
    for kind in ("api", "session"):
        body = dict(bodies[operation])
        if operation == "RealEstateCreate":
            body["MLSNumber"] = body["Url"] = f"via-{kind}"
        response = call(emulator, operation, body, credential=kind)
        if kind in accepted:
            ok(response)
        else:
            failure(response, 401)


def test_other_workspaces_chatbots_look_unknown(emulator: EmulatorServer) -> None:
    other = emulator.add_workspace()
    serial = emulator.add_chatbot(other, Name="Other")
    emulator.add_listings(serial, [dict(SAMPLE_LISTINGS[0])])
    theirs = {"SerialNumber": serial}
    unknown = {"SerialNumber": "0" * 32}
    for body in (theirs, unknown):
        failure(call(emulator, "RealEstateList", body), 404)
        failure(call(emulator, "GetSession", {"serialNumber": body["SerialNumber"]}), 404)
        failure(call(emulator, "Edit", {"serialNumber": body["SerialNumber"], "Name": "x"}), 404)
        failure(call(emulator, "RealEstateCreate", listing(body["SerialNumber"])), 404)
    delete = {"SerialNumber": serial, "Keys": ["ATX1001"], "KeyType": "MLSNumber"}
    failure(call(emulator, "RealEstateDelete", delete), 404)
    # The owner sees it, and the 404 above did not touch it.
    owner = {"chatrobot-sessionkey": other.session_key}
    data = ok(call(emulator, "RealEstateList", theirs, headers=owner))
    assert data["VirtualCount"] == 1


def test_other_workspaces_sessions_look_unknown(emulator: EmulatorServer) -> None:
    other = emulator.add_workspace()
    serial = emulator.add_chatbot(other.api_key)
    headers = {"Authorization": other.api_key}
    theirs = ok(call(emulator, "GetSession", {"serialNumber": serial}, headers=headers))
    failure(ask(emulator, int(theirs["SessionID"]), "hello"), 404)
    failure(ask(emulator, 999_999_999, "hello"), 404)
    ok(
        call(
            emulator,
            "ClientAsk",
            {"sessionID": theirs["SessionID"], "content": "hi"},
            headers=headers,
        )
    )


def test_checks_run_credential_then_body_then_visibility(emulator: EmulatorServer) -> None:
    foreign = emulator.add_chatbot(emulator.add_workspace())
    bad_and_foreign = listing(foreign, Bedrooms="x")
    failure(call(emulator, "RealEstateCreate", bad_and_foreign, credential="none"), 401)
    failure(call(emulator, "RealEstateCreate", bad_and_foreign), 400)
    failure(call(emulator, "RealEstateCreate", listing(foreign)), 404)


# --------------------------------------------------------------------------- listing rules


def test_list_records_are_serialized_as_decided(emulator: EmulatorServer) -> None:
    [sale] = list_page(emulator, MLSNumber="ATX1001")["List"]
    assert tuple(sale) == LIST_RECORD_FIELDS
    assert isinstance(sale["ID"], int)
    assert sale["LATITUDE"] == 30.2541
    assert sale["LONGITUDE"] == -97.7631
    assert sale["SaleType"] == "For Sale"
    assert sale["Price"] == sale["SalePrice"] == "450000"
    assert sale["Area"] == sale["BuildingArea"] == "1850"
    assert (sale["Bedrooms"], sale["Bathrooms"], sale["YearBuilt"]) == ("3", "2", "1998")
    assert json.loads(sale["Images"]) == [
        "https://images.example.com/atx1001/1.jpg",
        "https://images.example.com/atx1001/2.jpg",
    ]
    assert sale["ExtensionColumn"] == '[{"Key":"Pool","value":"Yes"}]'
    assert sale["UnitAreaPrice"] == "243.24"
    assert (sale["RentPrice"], sale["DepositFee"], sale["SpaceType"], sale["HOAMonth"]) == (
        "",
        "",
        "",
        "",
    )
    assert sale["Tours"] == "OpenHouse"
    assert all(
        isinstance(sale[f], str)
        for f in LIST_RECORD_FIELDS
        if f not in {"ID", "LATITUDE", "LONGITUDE"}
    )

    [rent] = list_page(emulator, MLSNumber="ATX1003")["List"]
    assert rent["SaleType"] == "For Rent"
    assert rent["Price"] == rent["RentPrice"] == "2400"
    assert (rent["SalePrice"], rent["Tours"], rent["SpaceType"]) == ("", "", "Entire place")


def test_absent_values_are_empty_and_coordinates_null(emulator: EmulatorServer) -> None:
    body = listing(emulator.serial, Bathrooms=2.25, Images=[], YearBuilt=1999.0)
    del body["Description"], body["City"]
    ok(call(emulator, "RealEstateCreate", body))
    [record] = list_page(emulator, MLSNumber="NEW0001")["List"]
    assert (record["LATITUDE"], record["LONGITUDE"]) == (None, None)
    assert (record["Images"], record["ExtensionColumn"], record["Description"]) == ("", "", "")
    assert (record["Bathrooms"], record["YearBuilt"], record["City"]) == ("2.25", "1999", "")


def test_filters(emulator: EmulatorServer) -> None:
    austin = list_page(emulator, CityName="aUsTiN")
    assert austin["VirtualCount"] == 4
    assert {r["City"] for r in austin["List"]} == {"Austin"}
    assert list_page(emulator, CityName="San Antonio", SaleType="for_rent")["VirtualCount"] == 2
    assert list_page(emulator, MLSNumber="atx1001")["VirtualCount"] == 0  # exact
    assert list_page(emulator, CityName="Nowhere") == {"List": [], "VirtualCount": 0}


def test_paging(empty_emulator: EmulatorServer) -> None:
    server = empty_emulator
    assert list_page(server, PageSize=20) == {"List": [], "VirtualCount": 0}
    ids = server.add_listings(server.serial, [listing_body(i) for i in range(40)])
    pages = [list_page(server, PageNumber=n, PageSize=20) for n in (1, 2, 3)]
    assert [len(p["List"]) for p in pages] == [20, 20, 0]
    assert all(p["VirtualCount"] == 40 for p in pages)
    assert [r["ID"] for p in pages for r in p["List"]] == ids == sorted(ids)
    assert len(list_page(server)["List"]) == 20  # default page size


def test_page_size_is_capped(empty_emulator: EmulatorServer) -> None:
    server = empty_emulator
    server.add_listings(server.serial, [listing_body(i) for i in range(150)], validate=False)
    assert len(list_page(server, PageSize=500)["List"]) == 100
    server.max_page_size = 7
    page = list_page(server, PageNumber=2, PageSize=20)
    assert [r["MLSNumber"] for r in page["List"]] == [f"B{i:04d}" for i in range(7, 14)]
    assert page["VirtualCount"] == 150


def listing_body(i: int) -> dict[str, Any]:
    body = listing("", f"B{i:04d}")
    del body["SerialNumber"]
    return body


def test_create_conflicts(emulator: EmulatorServer) -> None:
    serial = emulator.serial
    assert "MLSNumber" in failure(
        call(emulator, "RealEstateCreate", listing(serial, "ATX1001")), 409
    )
    same_url = listing(serial, Url="https://listings.example.com/atx1002")
    assert "Url" in failure(call(emulator, "RealEstateCreate", same_url), 409)
    other = emulator.add_chatbot(emulator.api_key)
    ok(call(emulator, "RealEstateCreate", listing(other, "ATX1001")))  # per chatbot


def test_update_by_each_key_type_replaces_the_listing(emulator: EmulatorServer) -> None:
    serial = emulator.serial
    new_id = ok(call(emulator, "RealEstateCreate", listing(serial)))
    keys = [
        ("MLSNumber", "NEW0001"),
        ("URL", "https://homes.example/NEW0001"),
        ("NewOaks", str(new_id)),
    ]
    for rooms, (key_type, key) in enumerate(keys, start=3):
        body = {**listing(serial, Bedrooms=rooms), "Key": key, "KeyType": key_type}
        del body["Tours"], body["Description"]
        assert ok(call(emulator, "RealEstateUpdate", body)) == 1
        [record] = list_page(emulator, MLSNumber="NEW0001")["List"]
        assert (record["ID"], record["Bedrooms"]) == (new_id, str(rooms))
        assert (record["Tours"], record["Description"]) == ("", "")  # full replacement


def test_update_without_a_match_changes_nothing(emulator: EmulatorServer) -> None:
    body = {**listing(emulator.serial), "Key": "NOPE", "KeyType": "MLSNumber"}
    assert ok(call(emulator, "RealEstateUpdate", body)) == 0
    assert ok(call(emulator, "RealEstateUpdate", {**body, "KeyType": "NewOaks"})) == 0
    assert list_page(emulator)["VirtualCount"] == len(SAMPLE_LISTINGS)


def test_update_onto_another_listings_mls_number_conflicts(emulator: EmulatorServer) -> None:
    body = {**listing(emulator.serial, "ATX1002"), "Key": "ATX1001", "KeyType": "MLSNumber"}
    failure(call(emulator, "RealEstateUpdate", body), 409)
    assert list_page(emulator, MLSNumber="ATX1001")["VirtualCount"] == 1


def test_delete_ignores_unknown_keys(emulator: EmulatorServer) -> None:
    [record] = list_page(emulator, MLSNumber="MIA3001")["List"]
    body = {
        "SerialNumber": emulator.serial,
        "Keys": [str(record["ID"]), "123", "x"],
        "KeyType": "NewOaks",
    }
    assert ok(call(emulator, "RealEstateDelete", body)) == {"SuccessCount": 1}
    by_url = {
        "SerialNumber": emulator.serial,
        "Keys": ["https://listings.example.com/mia3002", "https://nowhere.example"],
        "KeyType": "URL",
    }
    assert ok(call(emulator, "RealEstateDelete", by_url)) == {"SuccessCount": 1}
    assert list_page(emulator, CityName="Miami")["VirtualCount"] == 2


# --------------------------------------------------------------------------- settings, limits


def test_edit_changes_only_the_fields_sent(emulator: EmulatorServer) -> None:
    edit(emulator, WelcomeMessage="Howdy from the emulator!")
    edit(emulator, Name="Renamed", RateLimitMessage=None)
    sid = session(emulator)
    assert ok(ask(emulator, sid, "hello"))["content"] == "Howdy from the emulator!"
    chatbot = emulator.store.chatbot(emulator.serial)
    assert chatbot is not None
    assert chatbot.settings["Name"] == "Renamed"
    assert chatbot.settings["TimeZone"] == "America/Chicago"
    assert chatbot.settings["RateLimitMessage"]  # null left it unchanged


def test_answer_suffix_is_appended(emulator: EmulatorServer) -> None:
    edit(emulator, AnswerSuffix="-- Sunny Homes")
    content = ok(ask(emulator, session(emulator), "rentals in Denver"))["content"]
    assert content.endswith("\n-- Sunny Homes")
    assert content.startswith("I found 2 listings")


def test_rate_limit_then_recovery(emulator: EmulatorServer) -> None:
    edit(emulator, RateLimitCount=2, RateLimitTime=1, RateLimitMessage="Slow down, please.")
    sid, other = session(emulator), session(emulator)
    ok(ask(emulator, sid, "hello"))
    ok(ask(emulator, sid, "hello"))
    limited = ask(emulator, sid, "hello")
    assert failure(limited, 429) == "Slow down, please."
    assert limited.headers["Retry-After"] == "1"
    ok(ask(emulator, other, "hello"))  # per session
    time.sleep(1.05)
    ok(ask(emulator, sid, "hello"))


def test_monthly_limit_counts_only_accepted_messages(emulator: EmulatorServer) -> None:
    edit(emulator, MessageLimit=2)
    sid = session(emulator)
    ok(ask(emulator, sid, "hello"))
    ok(ask(emulator, session(emulator), "hello"))  # per chatbot, across sessions
    for _ in range(2):
        assert "monthly" in failure(ask(emulator, sid, "hello"), 429).lower()
    edit(emulator, MessageLimit=3)
    ok(ask(emulator, sid, "hello"))  # the refused ones did not count
    edit(emulator, MessageLimit=-1)
    ok(ask(emulator, sid, "hello"))


# --------------------------------------------------------------------------- streaming


def stream_bytes(server: EmulatorServer, content: str) -> httpx.Response:
    return ask(server, session(server), content, stream=True)


def decode_concatenated(text: str) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    objects, position = [], 0
    while position < len(text):
        obj, position = decoder.raw_decode(text, position)
        objects.append(obj)
    return objects


@pytest.mark.parametrize("framing", ["sse", "ndjson", "concatenated"])
def test_stream_framings(emulator: EmulatorServer, framing: str) -> None:
    emulator.set_framing(framing)
    response = stream_bytes(emulator, "rentals in Denver")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    raw = response.content.decode("utf-8")
    if framing == "sse":
        assert raw.startswith("data: {")
        assert raw.endswith("}\n\n")
        events = raw[:-2].split("\n\n")
        assert all(e.startswith("data: ") and "\n" not in e for e in events)
        objects = [json.loads(e.removeprefix("data: ")) for e in events]
    elif framing == "ndjson":
        assert raw.endswith("}\n")
        assert "data:" not in raw
        objects = [json.loads(line) for line in raw.splitlines()]
    else:
        assert "}{" in raw
        assert "\n" not in raw
        objects = decode_concatenated(raw)
    *parts, final = objects
    assert len(parts) > 3
    assert all(set(p) == {"content"} for p in parts)
    assert set(final) == {"QuestionID", "AnswerID", "Answer", "TotalToken", "noAnswer"}
    assert "".join(p["content"] for p in parts) == final["Answer"]
    assert final["AnswerID"] > final["QuestionID"]
    assert "MLS# DEN2002" in final["Answer"]
    assert "[DONE]" not in raw


def test_a_failure_before_the_stream_is_a_plain_envelope(emulator: EmulatorServer) -> None:
    response = ask(emulator, 424242, "hello", stream=True)
    assert response.headers["content-type"] == "application/json"
    failure(response, 404)
    edit(emulator, MessageLimit=0)
    failure(stream_bytes(emulator, "hello"), 429)


def test_a_stream_can_be_stopped_in_the_middle(emulator: EmulatorServer) -> None:
    emulator.stream_delay_ms = 200
    sid = session(emulator)
    started = time.monotonic()
    body = {"sessionID": sid, "content": "homes for sale", "stream": True}
    headers = {"Authorization": emulator.api_key}
    with httpx.stream(
        "POST", emulator.base_url + PATHS["ClientAsk"], json=body, headers=headers
    ) as r:
        first = next(r.iter_bytes())
    # The whole answer has dozens of fragments 0.2 s apart: stopping after one is quick.
    assert time.monotonic() - started < 1.5
    assert first.startswith(b'data: {"content": ')


# --------------------------------------------------------------------------- faults


def test_fail_rate_one_gives_500(emulator: EmulatorServer) -> None:
    emulator.faults.fail_rate = 1.0
    failure(call(emulator, "ModelList"), 500)
    failure(call(emulator, "RealEstateList", {"SerialNumber": emulator.serial}), 500)


def test_throttle_burst_then_normal(emulator: EmulatorServer) -> None:
    emulator.faults.throttle_burst = 2
    emulator.faults.retry_after_s = 3
    for _ in range(2):
        response = call(emulator, "ModelList")
        failure(response, 429)
        assert response.headers["Retry-After"] == "3"
    ok(call(emulator, "ModelList"))


def test_drop_is_a_transport_error(emulator: EmulatorServer) -> None:
    emulator.faults.drop_rate = 1.0
    with pytest.raises(httpx.RemoteProtocolError):
        call(emulator, "RealEstateList", {"SerialNumber": emulator.serial})
    with pytest.raises(httpx.RemoteProtocolError):
        stream_bytes(emulator, "homes for sale")
    emulator.faults.drop_rate = 0.0
    ok(call(emulator, "RealEstateList", {"SerialNumber": emulator.serial}))


def test_latency_is_added(emulator: EmulatorServer) -> None:
    emulator.faults.latency_ms = 150
    started = time.monotonic()
    ok(call(emulator, "ModelList"))
    assert time.monotonic() - started >= 0.15


def test_only_restricts_faults(emulator: EmulatorServer) -> None:
    emulator.faults.fail_rate = 1.0
    emulator.faults.only = {"RealEstateList"}
    ok(call(emulator, "ModelList"))
    failure(call(emulator, "RealEstateList", {"SerialNumber": emulator.serial}), 500)
    assert emulator.request_counts["RealEstateList"] == 1
    assert emulator.request_counts["RealEstateDelete"] == 0


# --------------------------------------------------------------------------- server options


def test_running_starts_quickly_and_takes_options(tmp_path: Path) -> None:
    started = time.monotonic()
    with running(latency_ms=0, fail_rate=1.0, max_page_size=5, framing="ndjson") as server:
        assert time.monotonic() - started < 1.0
        failure(call(server, "ModelList"), 500)
        assert (server.max_page_size, server.framing) == (5, "ndjson")


def test_seed_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "listings.json"
    path.write_text(json.dumps([listing_body(1), listing_body(2)]), encoding="utf-8")
    with running(seed=str(path)) as server:
        page = list_page(server)
        assert [r["MLSNumber"] for r in page["List"]] == ["B0001", "B0002"]


def test_a_database_file_keeps_its_state(tmp_path: Path) -> None:
    db = tmp_path / "emulator.sqlite"
    with running(db=db, seed="small") as server:
        ok(call(server, "RealEstateCreate", listing(server.serial)))
    with running(db=db, seed="small") as server:  # the seed is not loaded twice
        assert list_page(server)["VirtualCount"] == len(SAMPLE_LISTINGS) + 1


def test_bulk_listings_page_quickly(empty_emulator: EmulatorServer) -> None:
    bodies = [listing_body(i) for i in range(20_000)]
    ids = empty_emulator.add_listings(empty_emulator.serial, bodies, validate=False)
    assert len(ids) == 20_000
    started = time.monotonic()
    page = list_page(empty_emulator, PageNumber=150, PageSize=100)
    assert time.monotonic() - started < 1.0
    assert page["List"][0]["ID"] == ids[14_900]
    assert page["VirtualCount"] == 20_000
