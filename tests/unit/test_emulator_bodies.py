"""The emulator's reading of request bodies: JSON decoding, value checks, messages, key lookup."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estatebot.api.models import AskRequest, DeleteRequest, ListingInput
from estatebot.emulator.binding import MAX_LISTED_PROBLEMS, parse_body
from estatebot.emulator.envelope import Failure, json_bytes
from estatebot.emulator.json_body import (
    INT64_MAX,
    MAX_DEPTH,
    UnreadableBody,
    decode,
    value_problems,
)
from estatebot.emulator.quoting import quoted
from estatebot.emulator.store import Store


def refusal(raw: bytes, model: Any = DeleteRequest) -> str:
    """The message of the 400 a body gets."""
    with pytest.raises(Failure) as caught:
        parse_body(raw, model)
    assert caught.value.code == 400
    return caught.value.message


# --------------------------------------------------------------------------- decoding


@pytest.mark.parametrize(
    ("raw", "member", "problem"),
    [
        (b'{"Keys": ["a"], "KeyType": "\xff"}', "KeyType", "not valid UTF-8 (byte 28 is 0xff)"),
        (b'{"Keys": ' + b"[" * 50_000, "Keys", "must not nest"),
        (b'{"Keys": [1], "a": ' + b"[" * 50_000, "a", "must not nest"),
        (b'{"Keys": NaN}', "Keys", "NaN is not valid JSON"),
        (b'{"x": 1, "Keys": -Infinity}', "Keys", "-Infinity is not valid JSON"),
        (b'{"Keys": ' + b"1" * 5000 + b"}", "Keys", "Exceeds the limit (4300 digits)"),
        (b'{"Keys": [1, }', "Keys", "not valid JSON: Expecting value"),
        (b'{"Keys": [1] "KeyType": 1}', None, "not valid JSON: Expecting ',' delimiter"),
        (b"[" * 50_000, None, "must not nest"),
        (b"\xff", None, "not valid UTF-8 (byte 0 is 0xff)"),
        (b'{"Ke\xffys": 1}', None, "not valid UTF-8"),
    ],
)
def test_a_body_that_cannot_be_read_names_the_member_at_fault(
    raw: bytes, member: str | None, problem: str
) -> None:
    with pytest.raises(UnreadableBody) as caught:
        decode(raw)
    assert caught.value.member == member
    assert caught.value.problem.startswith(problem)


def test_a_byte_order_mark_is_allowed_and_utf8_is_required() -> None:
    assert decode(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}
    with pytest.raises(UnreadableBody, match="UTF-8"):
        decode('{"a": 1}'.encode("utf-16"))


def test_the_member_is_named_by_its_field_name_whatever_its_case() -> None:
    message = refusal(b'{"serialnumber": "x", "keys": ' + b"[" * 50_000)
    assert message == (
        f"Invalid request: Keys: must not nest arrays or objects more than {MAX_DEPTH} levels deep"
    )


# --------------------------------------------------------------------------- values


def walk(value: Any) -> list[tuple[str, str, Any]]:
    # A body text with many brackets: the values are always walked (see the shortcut's test).
    return value_problems({"f": value}, b"[" * (MAX_DEPTH + 1))


@pytest.mark.parametrize(
    ("value", "path", "problem"),
    [
        (INT64_MAX + 1, "f", "must be a whole number"),
        (-(2**63) - 1, "f", "must be a whole number"),
        ([1, {"x": [2**64]}], "f.1.x.0", "must be a whole number"),
        (float("inf"), "f", "must be a finite number"),
        ([0.5, float("-inf")], "f.1", "must be a finite number"),
        ("ok\ud800", "f", "must be valid Unicode text"),
        ({"k": ["\udfff"]}, "f.k.0", "must be valid Unicode text"),
        ({"\ud800": 1}, "f", "must have member names of valid Unicode text"),
    ],
)
def test_values_no_model_rule_catches(value: Any, path: str, problem: str) -> None:
    [(found_path, message, _)] = walk(value)
    assert found_path == path
    assert message.startswith(problem)


def test_nesting_is_limited_and_the_path_leads_to_the_first_level_too_many() -> None:
    value: Any = 1
    for _ in range(MAX_DEPTH):
        value = [value]
    assert walk(value) == []
    [(path, message, _)] = walk([value])
    assert path == "f" + ".0" * MAX_DEPTH
    assert message == f"must not nest arrays or objects more than {MAX_DEPTH} levels deep"


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda children: (
            st.lists(children, max_size=3)
            | st.dictionaries(st.text(max_size=4), children, max_size=3)
        ),
        max_leaves=8,
    )
)
def test_a_value_is_refused_exactly_when_it_holds_a_problem(value: Any) -> None:
    # Whatever the shortcut on the body's text skips, a value with a problem is never missed.
    raw = json.dumps({"f": value}).encode()
    try:
        decoded = decode(raw)
    except UnreadableBody:
        return  # NaN or Infinity: refused before any value check
    assert value_problems(decoded, raw) == value_problems(decoded, b"[" * (MAX_DEPTH + 1))


def test_ordinary_values_are_fine() -> None:
    body = {"f": [1, 2.5, -3, INT64_MAX, "café 🏠", {"Key": "Pool", "value": "Yes"}], "g": None}
    assert value_problems(body, json.dumps(body).encode()) == []


# --------------------------------------------------------------------------- messages


def test_a_message_names_every_field_and_stays_short() -> None:
    body = {
        "SerialNumber": "x" * 300_000,
        "Keys": list(range(100_000)),
        "KeyType": "y" * 300_000,
    }
    message = refusal(json.dumps(body).encode())
    assert len(message) < 2000
    assert "Keys.0: Input should be a valid string (got 0)" in message
    assert "KeyType: Input should be 'NewOaks', 'MLSNumber' or 'URL' (got 'yyyy" in message
    listed = message.count("Keys.")
    assert listed == MAX_LISTED_PROBLEMS - 1  # the first of each field, then as many as fit
    assert message.endswith(f"and {100_000 - listed} more problems")


def test_a_field_with_a_bad_value_is_reported_once() -> None:
    body = b'{"sessionID": %d, "content": "hi", "fileIds": [1e999]}' % (2**64)
    message = refusal(body, AskRequest)
    assert message == (
        "Invalid request: sessionID: must be a whole number from -9223372036854775808 to "
        "9223372036854775807 (got 18446744073709551616); fileIds.0: must be a finite number, "
        "no larger than 1.8e308 (got inf)"
    )


def test_values_are_quoted_shortened() -> None:
    assert quoted("x" * 1000) == "'" + "x" * 27 + "..." + "x" * 28 + "'"
    assert quoted("a\ud800b") == "'a\\ud800b'"
    assert quoted(list(range(100))) == "[0, 1, 2, 3, ...]"
    assert len(quoted(2**1000)) < 50


def test_a_reply_with_text_utf8_cannot_hold_is_escaped() -> None:
    assert json_bytes({"a": "é\ud800"}) == b'{"a": "\\u00e9\\ud800"}'
    assert json_bytes({"a": "é"}) == '{"a": "é"}'.encode()


def test_a_listing_body_with_problems_everywhere() -> None:
    body = {
        "SerialNumber": "x",
        "SaleType": "for_sale",
        "Bedrooms": "(infinity)",
        "Images": [["x"]] * 3,
        "City": "a\udc00",
    }
    raw = json.dumps(body).encode().replace(b'"(infinity)"', b"1e400")
    message = refusal(raw, ListingInput)
    for field in ("Bedrooms", "Images.0", "City", "Status", "Url"):
        assert f"{field}: " in message
    assert message.count("Bedrooms") == 1


# --------------------------------------------------------------------------- NewOaks keys


@pytest.fixture
def store() -> Any:
    store = Store()
    workspace = store.add_workspace()
    serial = store.add_chatbot(workspace.id, {})
    listing = {"SaleType": "for_sale", "MLSNumber": "M1", "Url": "https://a/1"}
    [listing_id] = store.add_listings(serial, [listing])
    yield store, serial, listing_id
    store.close()


@pytest.mark.parametrize(
    "key",
    ["²", "١٠٠٠١", "10001²", "9" * 5000, str(2**63), "-10001", "+10001", "10 001", "", "0x2711"],
)
def test_a_newoaks_key_is_ascii_digits_within_64_bits(store: Any, key: str) -> None:
    db, serial, listing_id = store
    assert listing_id == 10001
    assert db.find_listing_ids(serial, "NewOaks", key) == []
    assert db.delete_listings(serial, "NewOaks", [key]) == 0
    assert db.count_listings(serial) == 1


@pytest.mark.parametrize("key", ["10001", " 10001 ", "000010001", "0" * 5000 + "10001"])
def test_a_newoaks_key_names_its_listing(store: Any, key: str) -> None:
    db, serial, listing_id = store
    assert db.find_listing_ids(serial, "NewOaks", key) == [listing_id]


def test_many_keys_are_looked_up_together(store: Any) -> None:
    db, serial, listing_id = store
    keys = [f"X{i}" for i in range(5000)] + ["M1", "M1"]
    assert db.find_many_listing_ids(serial, "MLSNumber", keys) == [listing_id]
    assert db.delete_listings(serial, "MLSNumber", keys) == 1
    assert db.count_listings(serial) == 0
