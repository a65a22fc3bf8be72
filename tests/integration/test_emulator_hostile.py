"""Hostile and broken input to the emulator, over loopback HTTP: a 4xx envelope naming the field,
nothing written, nothing blown up, and no client held up by another's request."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estatebot.api.models import (
    AskRequest,
    ChatbotSettings,
    DeleteRequest,
    ListingUpdate,
    ListRequest,
    SessionRequest,
)
from estatebot.emulator import EmulatorServer, answers, running
from estatebot.emulator.body_size import DEFAULT_MAX_BODY_BYTES
from estatebot.emulator.routes import base as route_base
from estatebot.emulator.store import month_of
from integration.test_emulator import ENVELOPE_KEYS, PATHS, failure, listing, ok

INT64_MAX = 2**63 - 1

# One client for the module: a new client per request costs more than the request. No
# keep-alive: a server that still has a connection open takes longer to stop.
HTTP = httpx.Client(timeout=30.0, headers={"Connection": "close"})


@pytest.fixture(scope="module", autouse=True)
def _close_http() -> Iterator[None]:
    yield
    HTTP.close()


def post_raw(
    server: EmulatorServer, operation: str, raw: bytes, *, timeout: float = 30.0
) -> httpx.Response:
    """POST raw bytes as a JSON body, with both credentials (each operation takes one of them)."""
    headers = {
        "Authorization": server.api_key,
        "chatrobot-sessionkey": server.session_key,
        "Content-Type": "application/json",
    }
    url = server.base_url + PATHS[operation]
    return HTTP.post(url, content=raw, headers=headers, timeout=timeout)


def session(server: EmulatorServer) -> int:
    raw = json.dumps({"serialNumber": server.serial}).encode()
    return int(ok(post_raw(server, "GetSession", raw))["SessionID"])


def list_page(server: EmulatorServer, **body: Any) -> dict[str, Any]:
    raw = json.dumps({"SerialNumber": server.serial, **body}).encode()
    data = ok(post_raw(server, "RealEstateList", raw))
    assert isinstance(data, dict)
    return data


def with_raw_value(body: dict[str, Any], field: str, raw_value: bytes) -> bytes:
    """``body`` as JSON text with ``field`` set to ``raw_value`` exactly as written."""
    marker = "\x00field-value\x00"
    text = json.dumps({**body, field: marker}).encode()
    return text.replace(json.dumps(marker).encode(), raw_value)


def short_id(value: object) -> str:
    """A test ID for a parameter: huge values are shortened."""
    text = value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else str(value)
    return text if len(text) <= 30 else f"{text[:12]}...({len(text)} chars)"


def valid_bodies(server: EmulatorServer) -> dict[str, dict[str, Any]]:
    """A valid body for each operation that takes one."""
    sid = session(server)
    return {
        "Edit": {"serialNumber": server.serial, "Name": "Renamed"},
        "GetSession": {"serialNumber": server.serial},
        "ClientAsk": {"sessionID": sid, "content": "3 bed homes in Austin"},
        "RealEstateCreate": listing(server.serial),
        "RealEstateUpdate": {**listing(server.serial), "Key": "10001", "KeyType": "NewOaks"},
        "RealEstateList": {"SerialNumber": server.serial},
        "RealEstateDelete": {"SerialNumber": server.serial, "Keys": ["x"], "KeyType": "URL"},
    }


BODY_OPERATIONS = [
    "Edit",
    "GetSession",
    "ClientAsk",
    "RealEstateCreate",
    "RealEstateUpdate",
    "RealEstateList",
    "RealEstateDelete",
]


def snapshot(server: EmulatorServer) -> tuple[Any, ...]:
    """Everything a request could write: settings, listings, accepted messages."""
    chatbot = server.store.chatbot(server.serial)
    assert chatbot is not None
    listings = list_page(server, PageSize=100)
    messages = server.store.questions_in_month(server.serial, month_of(server.emulator.clock()))
    return chatbot.settings, listings, messages


# --------------------------------------------------------------------------- nesting


@pytest.mark.parametrize("operation", BODY_OPERATIONS)
def test_a_body_nested_a_hundred_thousand_deep_is_a_400(
    emulator: EmulatorServer, operation: str
) -> None:
    before = snapshot(emulator)
    message = failure(post_raw(emulator, operation, b"[" * 100_000 + b"]" * 100_000), 400)
    assert (
        message == "Invalid request: body: must not nest arrays or objects more than 32 levels deep"
    )
    assert snapshot(emulator) == before


@pytest.mark.parametrize("operation", BODY_OPERATIONS)
def test_a_field_nested_a_hundred_thousand_deep_is_named(
    emulator: EmulatorServer, operation: str
) -> None:
    body = valid_bodies(emulator)[operation]
    field = next(iter(body))  # the chatbot or session: every body has one
    deep = b"[" * 100_000 + b"]" * 100_000
    before = snapshot(emulator)
    message = failure(post_raw(emulator, operation, with_raw_value(body, field, deep)), 400)
    assert f"{field}: must not nest arrays or objects more than 32 levels deep" in message
    assert snapshot(emulator) == before


def test_nesting_the_parser_reads_is_still_limited_and_its_path_named(
    emulator: EmulatorServer,
) -> None:
    body = listing(emulator.serial, ExtensionColumn=[{"Key": "Pool", "value": "Yes"}])
    body["Images"] = [["x"]]
    for _ in range(40):
        body["Images"] = [body["Images"]]
    message = failure(post_raw(emulator, "RealEstateCreate", json.dumps(body).encode()), 400)
    # The 33rd array is the one refused: 32 indexes lead to it.
    path = "Images" + ".0" * 32
    assert (
        message
        == f"Invalid request: {path}: must not nest arrays or objects more than 32 levels deep"
    )


# --------------------------------------------------------------------------- NewOaks keys


@pytest.mark.parametrize(
    "key",
    [
        "²",  # str.isdigit() says yes, int() says no
        "١٠٠٠١",  # Arabic-Indic digits: int() reads 10001, an existing listing
        "10001²",
        "9" * 5000,  # int() refuses more than 4300 digits
        str(2**63),  # beyond SQLite's INTEGER
        str(2**200),
    ],
    ids=short_id,
)
def test_a_newoaks_key_that_can_name_no_listing_matches_nothing(
    emulator: EmulatorServer, key: str
) -> None:
    before = snapshot(emulator)
    update = {**listing(emulator.serial, SalePrice=1), "Key": key, "KeyType": "NewOaks"}
    assert ok(post_raw(emulator, "RealEstateUpdate", json.dumps(update).encode())) == 0
    delete = {"SerialNumber": emulator.serial, "Keys": [key, "10002²"], "KeyType": "NewOaks"}
    assert ok(post_raw(emulator, "RealEstateDelete", json.dumps(delete).encode())) == {
        "SuccessCount": 0
    }
    assert snapshot(emulator) == before


def test_a_newoaks_key_with_leading_zeros_and_spaces_still_matches(
    emulator: EmulatorServer,
) -> None:
    update = {**listing(emulator.serial, SalePrice=1), "Key": " 0010001 ", "KeyType": "NewOaks"}
    assert ok(post_raw(emulator, "RealEstateUpdate", json.dumps(update).encode())) == 1
    [record] = list_page(emulator, MLSNumber="NEW0001")["List"]
    assert record["ID"] == 10001


def test_a_delete_of_a_hundred_thousand_keys_deletes_the_ones_that_exist(
    emulator: EmulatorServer,
) -> None:
    keys = [f"NOPE{i}" for i in range(100_000)] + ["ATX1001", "ATX1002", "ATX1001"]
    delete = {"SerialNumber": emulator.serial, "Keys": keys, "KeyType": "MLSNumber"}
    data = ok(post_raw(emulator, "RealEstateDelete", json.dumps(delete).encode()))
    assert data == {"SuccessCount": 2}
    assert list_page(emulator, MLSNumber="ATX1001")["VirtualCount"] == 0


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    ("operation", "field", "value"),
    [
        ("ClientAsk", "sessionID", 2**63),
        ("ClientAsk", "sessionID", -(2**64)),
        ("RealEstateList", "PageNumber", 2**70),
        ("RealEstateList", "PageSize", 2**64),
        ("Edit", "RateLimitCount", 2**64),
        ("Edit", "Temperature", -(2**63) - 1),
        ("RealEstateCreate", "Bedrooms", 2**70),
        ("RealEstateCreate", "YearBuilt", -(10**400)),
        ("RealEstateUpdate", "SalePrice", 10**30),
        ("RealEstateDelete", "KeyType", 2**64),
    ],
    ids=short_id,
)
def test_whole_numbers_beyond_64_bits_are_refused_naming_the_field(
    emulator: EmulatorServer, operation: str, field: str, value: int
) -> None:
    body = valid_bodies(emulator)[operation]
    before = snapshot(emulator)
    message = failure(
        post_raw(emulator, operation, with_raw_value(body, field, b"%d" % value)), 400
    )
    assert f"{field}: must be a whole number from -9223372036854775808 to {INT64_MAX}" in message
    assert len(message) < 500  # the value is quoted shortened
    assert snapshot(emulator) == before


@pytest.mark.parametrize(
    ("field", "raw_value"),
    [
        ("SalePrice", b"1e400"),
        ("BuildingArea", b"1E+999"),
        ("LotArea", b"9" * 400 + b".0"),
        ("YearBuilt", b"-1e400"),
        ("RentPrice", b"Infinity"),
        ("HOAMonth", b"NaN"),
        ("DepositFee", b"-Infinity"),
    ],
    ids=short_id,
)
def test_non_finite_numbers_are_refused_and_the_chatbot_keeps_answering(
    emulator: EmulatorServer, field: str, raw_value: bytes
) -> None:
    before = snapshot(emulator)
    raw = with_raw_value(listing(emulator.serial), field, raw_value)
    message = failure(post_raw(emulator, "RealEstateCreate", raw), 400)
    assert f"{field}: " in message
    assert "finite" in message
    update = with_raw_value(valid_bodies(emulator)["RealEstateUpdate"], field, raw_value)
    assert f"{field}: " in failure(post_raw(emulator, "RealEstateUpdate", update), 400)
    assert snapshot(emulator) == before
    asked = {"sessionID": session(emulator), "content": "homes under $500k"}
    assert "I found" in ok(post_raw(emulator, "ClientAsk", json.dumps(asked).encode()))["content"]


def test_a_huge_number_in_a_question_is_not_a_price(emulator: EmulatorServer) -> None:
    content = "homes under $" + "9" * 400 + " or with " + "9" * 400 + " beds in Austin"
    asked = {"sessionID": session(emulator), "content": content}
    data = ok(post_raw(emulator, "ClientAsk", json.dumps(asked).encode()))
    assert "Austin" in data["content"]


# --------------------------------------------------------------------------- body size


def test_a_five_megabyte_question_gets_a_413_naming_the_limit(emulator: EmulatorServer) -> None:
    before = snapshot(emulator)
    asked = {"sessionID": session(emulator), "content": "3 beds " * 750_000}
    response = post_raw(emulator, "ClientAsk", json.dumps(asked).encode())
    message = failure(response, 413)
    assert f"the limit of {DEFAULT_MAX_BODY_BYTES} bytes (max_body_bytes)" in message
    assert snapshot(emulator) == before


def test_a_chunked_body_over_the_limit_gets_a_413(emulator: EmulatorServer) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"SerialNumber": "' + emulator.serial.encode() + b'", "CityName": "'
        for _ in range(50):
            yield b"x" * 65536
        yield b'"}'

    headers = {"chatrobot-sessionkey": emulator.session_key, "Content-Type": "application/json"}
    url = emulator.base_url + PATHS["RealEstateList"]
    response = HTTP.post(url, content=chunks(), headers=headers)
    assert "content-length" not in response.request.headers  # sent chunked
    assert "max_body_bytes" in failure(response, 413)


def test_the_body_limit_is_an_option(emulator: EmulatorServer) -> None:
    emulator.max_body_bytes = 4096
    before = snapshot(emulator)
    long = listing(emulator.serial, Description="d" * 5000)
    message = failure(post_raw(emulator, "RealEstateCreate", json.dumps(long).encode()), 413)
    assert "the limit of 4096 bytes" in message
    assert snapshot(emulator) == before
    emulator.max_body_bytes = 8192
    ok(post_raw(emulator, "RealEstateCreate", json.dumps(long).encode()))
    with pytest.raises(ValueError, match="max_body_bytes"):
        emulator.max_body_bytes = 0
    with running(seed=None, max_body_bytes=100) as small:
        assert small.max_body_bytes == 100
        asked = {"sessionID": session(small), "content": "x" * 100}
        failure(post_raw(small, "ClientAsk", json.dumps(asked).encode()), 413)


HOSTILE_TEXT = (
    "1" * 3000
    + "x two"
    + " " * 3000
    + "rooms "
    + "3 beds $300k austin ATX1001 1 - 2 " * 400
    + "9" * 2000
    + "k "
)


def test_a_long_question_under_the_limit_is_answered_and_says_what_was_read(
    emulator: EmulatorServer,
) -> None:
    content = (HOSTILE_TEXT * 100)[:1_500_000]
    asked = {"sessionID": session(emulator), "content": content}
    # Well under a second on any machine; the generous timeout only bounds a failure.
    data = ok(post_raw(emulator, "ClientAsk", json.dumps(asked).encode(), timeout=20))
    assert data["content"].endswith(
        f"(I read only the first {answers.MAX_READ_CHARS:,} characters of your message.)"
    )
    # Tokens count the whole message, not only what was read.
    assert data["totalToken"] > answers.count_tokens(content[: answers.MAX_READ_CHARS]) * 10


# --------------------------------------------------------------------------- the event loop


def test_a_slow_answer_does_not_hold_up_other_clients(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, release = threading.Event(), threading.Event()
    real_answer = answers.answer

    def slow_answer(*args: Any, **kwargs: Any) -> answers.Reply:
        started.set()
        release.wait(timeout=30)  # stands for a long computation; ends when the test says
        return real_answer(*args, **kwargs)

    monkeypatch.setattr(answers, "answer", slow_answer)
    asked = json.dumps({"sessionID": session(emulator), "content": "homes in Austin"}).encode()
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(post_raw, emulator, "ClientAsk", asked)
        try:
            assert started.wait(timeout=10)
            # The answer is still being worked out: another client is served meanwhile.
            page = list_page(emulator, PageSize=2)
            assert page["VirtualCount"] == 16
            assert not pending.done()
        finally:
            release.set()
        assert "Austin" in ok(pending.result(timeout=30))["content"]


def test_a_large_body_is_parsed_off_the_event_loop(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, release = threading.Event(), threading.Event()
    real_parse = route_base.parse_body

    def slow_parse(raw: bytes, *args: Any) -> Any:
        if len(raw) > route_base.PARSE_ON_LOOP_BYTES:
            started.set()
            release.wait(timeout=30)
        return real_parse(raw, *args)

    monkeypatch.setattr(route_base, "parse_body", slow_parse)
    big = listing(emulator.serial, Description="d" * 100_000)
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(post_raw, emulator, "RealEstateCreate", json.dumps(big).encode())
        try:
            assert started.wait(timeout=10)
            assert list_page(emulator, PageSize=1)["VirtualCount"] == 16
            assert not pending.done()
        finally:
            release.set()
        assert isinstance(ok(pending.result(timeout=30)), int)


def test_the_rate_limit_holds_for_messages_answered_at_the_same_time(
    emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One message a minute; two arrive together and are answered side by side in worker
    # threads. Both pass the check before the work; only one may pass the one after it.
    raw = json.dumps({"serialNumber": emulator.serial, "RateLimitCount": 1}).encode()
    assert ok(post_raw(emulator, "Edit", raw)) == 1
    both_answering = threading.Barrier(2, timeout=10)
    real_answer = answers.answer

    def answer_together(*args: Any, **kwargs: Any) -> answers.Reply:
        both_answering.wait()
        return real_answer(*args, **kwargs)

    monkeypatch.setattr(answers, "answer", answer_together)
    asked = json.dumps({"sessionID": session(emulator), "content": "homes in Austin"}).encode()
    with ThreadPoolExecutor(max_workers=2) as pool:
        replies = list(pool.map(lambda _: post_raw(emulator, "ClientAsk", asked), range(2)))
    assert sorted(r.status_code for r in replies) == [200, 429]
    assert (
        emulator.store.questions_in_month(emulator.serial, month_of(emulator.emulator.clock())) == 1
    )


def test_a_hundred_thousand_bad_items_get_a_short_400_at_once(emulator: EmulatorServer) -> None:
    before = snapshot(emulator)
    delete = {"SerialNumber": emulator.serial, "Keys": list(range(100_000)), "KeyType": "URL"}
    # Typically a fraction of a second; the timeout only bounds a failure.
    response = post_raw(emulator, "RealEstateDelete", json.dumps(delete).encode(), timeout=20)
    message = failure(response, 400)
    assert message.startswith("Invalid request: Keys.0: Input should be a valid string (got 0)")
    assert message.endswith("more problems")
    assert len(message) < 2000
    assert snapshot(emulator) == before


# --------------------------------------------------------------------------- hostile values

HUGE = b'"' + b"x" * 300_000 + b'"'
ROWS: list[tuple[str, str, bytes]] = [
    # Edit
    ("Edit", "serialNumber", b"1"),
    ("Edit", "serialNumber", b"null"),
    ("Edit", "Name", b"{}"),
    ("Edit", "Temperature", b'"hot"'),
    ("Edit", "Temperature", b"1.5"),
    ("Edit", "Temperature", b"NaN"),
    ("Edit", "ChatBubbleColor", b'"rgb(300,0,0)"'),
    ("Edit", "TimeZone", b'"Europe/Nowhere"'),
    ("Edit", "TalkToHumanEmail", b'"a@"'),
    ("Edit", "RateLimitCount", b"-1"),
    ("Edit", "MessageLimit", b"-2"),
    ("Edit", "Model", HUGE),
    ("Edit", "ChatbotPopupOnce", b'"yes"'),
    ("Edit", "WelcomeMessage", b'"hi \\ud800"'),
    ("Edit", "FacebookUrl", b'"javascript:alert(1)"'),
    # GetSession
    ("GetSession", "serialNumber", b'""'),
    ("GetSession", "serialNumber", b"[]"),
    ("GetSession", "serialNumber", b'"\xff\xfe"'),
    # ClientAsk
    ("ClientAsk", "sessionID", b'"1"'),
    ("ClientAsk", "sessionID", b"1.5"),
    ("ClientAsk", "sessionID", b"null"),
    ("ClientAsk", "content", b"5"),
    ("ClientAsk", "content", b'"\\udc00"'),
    ("ClientAsk", "content", b'"   "'),
    ("ClientAsk", "chatAskType", b'"Hologram"'),
    ("ClientAsk", "chatAskType", HUGE),
    ("ClientAsk", "fileIds", b'"1"'),
    ("ClientAsk", "fileIds", b"[1.5]"),
    ("ClientAsk", "stream", b'"yes"'),
    # RealEstateCreate
    ("RealEstateCreate", "Bedrooms", b'"3"'),
    ("RealEstateCreate", "Bedrooms", b"-1"),
    ("RealEstateCreate", "SaleType", HUGE),
    ("RealEstateCreate", "SaleType", b'"for_sale\\u0000"'),
    ("RealEstateCreate", "Status", b"null"),
    ("RealEstateCreate", "Images", b'"a"'),
    ("RealEstateCreate", "Images", b"[" + b'"x",' * 50_000 + b"1]"),
    ("RealEstateCreate", "ExtensionColumn", b'[{"Key": 1, "value": "x"}]'),
    ("RealEstateCreate", "Latitude", b"91"),
    ("RealEstateCreate", "Tours", b'"4D"'),
    ("RealEstateCreate", "AreaUnit", b'"acres"'),
    ("RealEstateCreate", "Description", b'"\xc3\x28"'),
    ("RealEstateCreate", "City", b'"\xed\xa0\x80"'),  # a surrogate written as UTF-8 bytes
    # RealEstateUpdate
    ("RealEstateUpdate", "Key", b'""'),
    ("RealEstateUpdate", "Key", b"5"),
    ("RealEstateUpdate", "KeyType", b'"ID"'),
    ("RealEstateUpdate", "KeyType", b'"newoaks"'),
    # RealEstateList
    ("RealEstateList", "PageNumber", b"0"),
    ("RealEstateList", "PageNumber", b"-1"),
    ("RealEstateList", "PageNumber", b'"1"'),
    ("RealEstateList", "PageNumber", b"1.5"),
    ("RealEstateList", "PageSize", b"0"),
    ("RealEstateList", "PageSize", b"-5"),
    ("RealEstateList", "PageSize", b"null"),
    ("RealEstateList", "SaleType", b'"rent"'),
    ("RealEstateList", "CityName", b"5"),
    ("RealEstateList", "SerialNumber", b'""'),
    # RealEstateDelete
    ("RealEstateDelete", "Keys", b"[]"),
    ("RealEstateDelete", "Keys", b'"x"'),
    ("RealEstateDelete", "Keys", b'[""]'),
    ("RealEstateDelete", "Keys", b"[null]"),
    ("RealEstateDelete", "Keys", b"[1]"),
    ("RealEstateDelete", "KeyType", b'"ID"'),
    ("RealEstateDelete", "KeyType", b"null"),
]


@pytest.mark.parametrize(("operation", "field", "raw_value"), ROWS, ids=short_id)
def test_a_hostile_value_is_a_400_naming_its_field(
    emulator: EmulatorServer, operation: str, field: str, raw_value: bytes
) -> None:
    body = valid_bodies(emulator)[operation]
    before = snapshot(emulator)
    response = post_raw(emulator, operation, with_raw_value(body, field, raw_value))
    message = failure(response, 400)
    assert message.startswith("Invalid request: ")
    assert f"{field}: " in message or f"{field}." in message
    assert len(message) < 1000  # hostile values are quoted shortened
    assert snapshot(emulator) == before


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"", "not valid JSON"),
        (b"   ", "not valid JSON"),
        (b"[]", "must be a JSON object, not an array"),
        (b'"x"', "must be a JSON object, not a string"),
        (b"null", "must be a JSON object, not null"),
        (b"42", "must be a JSON object, not a number"),
        (b"\xff\xfe{}", "not valid UTF-8 (byte 0 is 0xff)"),
        (b'{"a": 1,}', "not valid JSON"),
        (b"{} x", "not valid JSON: Extra data"),
        (b"[" * 100_000, "must not nest arrays or objects more than 32 levels deep"),
    ],
    ids=short_id,
)
def test_a_body_that_is_no_object_is_a_400_naming_the_body(
    emulator: EmulatorServer, raw: bytes, problem: str
) -> None:
    before = snapshot(emulator)
    for operation in BODY_OPERATIONS:
        message = failure(post_raw(emulator, operation, raw), 400)
        assert message.startswith(f"Invalid request: body: {problem}"), operation
    assert snapshot(emulator) == before


def test_odd_but_valid_values_are_served(emulator: EmulatorServer) -> None:
    assert len(list_page(emulator, PageSize=10**12)["List"]) == 16  # clamped, not refused
    assert list_page(emulator, PageNumber=10**15) == {"List": [], "VirtualCount": 16}
    assert list_page(emulator, CityName="x" * 300_000) == {"List": [], "VirtualCount": 0}
    assert list_page(emulator, CityName="Aus\x00tin") == {"List": [], "VirtualCount": 0}
    body = listing(emulator.serial, City="Nul\x00City", Description="🏠" * 1000)
    new_id = ok(post_raw(emulator, "RealEstateCreate", json.dumps(body).encode()))
    [record] = list_page(emulator, MLSNumber="NEW0001")["List"]
    assert (record["ID"], record["City"], record["Description"]) == (
        new_id,
        "Nul\x00City",
        "🏠" * 1000,
    )


def test_a_reply_holding_an_unpaired_surrogate_is_escaped(empty_emulator: EmulatorServer) -> None:
    # The server's own helpers take what they are given; the reply escapes what UTF-8 cannot hold.
    server = empty_emulator
    server.store.update_settings(server.serial, {"WelcomeMessage": "Hi\ud800there"})
    asked = {"sessionID": session(server), "content": "hello"}
    response = post_raw(server, "ClientAsk", json.dumps(asked).encode())
    assert response.status_code == 200
    assert b"Hi\\ud800there" in response.content
    assert response.json()["Data"]["content"] == "Hi\ud800there"


# --------------------------------------------------------------------------- fuzzing

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
RAW_VALUES = st.sampled_from(
    [
        b"NaN",
        b"Infinity",
        b"1e400",
        b"-1e400",
        b"1" + b"0" * 5000,
        b"%d" % 2**64,
        b"[" * 40 + b"]" * 40,
        b'"\\ud800"',
        b'"\xff"',
        b'"\x00"',
        b'{"\\udfff": 1}',
        HUGE,
    ]
)
ANY_VALUE = JSON_VALUES.map(lambda value: json.dumps(value).encode()) | RAW_VALUES

MODELS = {
    "Edit": ChatbotSettings,
    "GetSession": SessionRequest,
    "ClientAsk": AskRequest,
    "RealEstateCreate": ListingUpdate,  # Key and KeyType are dropped, like any unknown name
    "RealEstateUpdate": ListingUpdate,
    "RealEstateList": ListRequest,
    "RealEstateDelete": DeleteRequest,
}
#: Fields whose bad value a whole-body rule reports under another field's name.
ALSO_NAMED = {("ClientAsk", "chatAskType"): ("fileIds", "content")}


@pytest.mark.parametrize("operation", BODY_OPERATIONS)
def test_fuzzed_field_values_never_get_a_500(operation: str) -> None:
    model = MODELS[operation]
    names = [info.alias or name for name, info in model.model_fields.items()]
    with running(seed="small") as server:
        body = valid_bodies(server)[operation]

        @settings(max_examples=60, deadline=None, database=None)
        @given(field=st.sampled_from(names), raw_value=ANY_VALUE)
        def check(field: str, raw_value: bytes) -> None:
            response = post_raw(server, operation, with_raw_value(body, field, raw_value))
            assert_well_answered(operation, field, response)

        check()


def test_a_fuzzed_stream_flag_that_asks_for_events_gets_them() -> None:
    # "stream": true (a value the fuzzing draws) is a valid request for the answer as events;
    # any other value but false is refused naming the field (the flag takes JSON booleans only).
    with running(seed="small") as server:
        body = valid_bodies(server)["ClientAsk"]
        kinds = {}
        for raw in (b"true", b"false", b"1", b'"true"'):
            response = post_raw(server, "ClientAsk", with_raw_value(body, "stream", raw))
            assert_well_answered("ClientAsk", "stream", response)
            kinds[raw] = (response.status_code, response.headers["content-type"].split(";")[0])
    assert kinds == {
        b"true": (200, "text/event-stream"),
        b"false": (200, "application/json"),
        b"1": (400, "application/json"),
        b'"true"': (400, "application/json"),
    }


def assert_well_answered(operation: str, field: str, response: httpx.Response) -> None:
    """A reply to a body whose ``field`` was fuzzed: never a 500; an envelope whose code is the
    status, a 400 naming the field; or, when the body asked for them, a 200 of events."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        assert response.status_code == 200
        events = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
        assert events
        assert all(isinstance(json.loads(event), dict) for event in events)
        return
    reply = response.json()
    assert set(reply) == ENVELOPE_KEYS
    assert response.status_code < 500, reply
    assert reply["Code"] == response.status_code
    if response.status_code == 400:
        named = (field, *ALSO_NAMED.get((operation, field), ()))
        assert any(
            f"{name}: " in reply["Message"] or f"{name}." in reply["Message"] for name in named
        ), reply
        assert len(reply["Message"]) < 2000
