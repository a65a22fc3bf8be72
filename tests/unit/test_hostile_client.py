"""Hostile and broken input to the API client, without a server: keys a header cannot carry,
redaction of every spelling of a key (and of nothing but whole keys), the limits' settings, the
bounded decoding of a reply body, and the message of a redirect.

Replies come from ``httpx.MockTransport``; the same cases against a real server over loopback
are in ``tests/integration/test_hostile_replies.py`` and ``test_hostile_keys.py``.
"""

from __future__ import annotations

import gzip
import json
import time
import traceback
import zlib
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from estatebot import errors
from estatebot.api import AsyncClient, Client, _base, _body, _deadline, _responses
from estatebot.api._redact import MASK, redact, register_secret, spellings
from estatebot.api._retry import RetryPolicy
from estatebot.api.stream import Final, Fragment, StreamDecoder

API_KEY = "unit-hostile-api-key-63f0a1"
SESSION_KEY = "unit-hostile-session-key-b5e27c"
BASE = "http://svc.test"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ESTATEBOT_BASE_URL", "ESTATEBOT_API_KEY", "ESTATEBOT_SESSION_KEY"):
        monkeypatch.delenv(name, raising=False)


def envelope(data: Any) -> bytes:
    return json.dumps({"Data": data, "Success": True, "Code": 200, "Message": ""}).encode()


def mock_client(reply: Callable[[httpx.Request], httpx.Response], **options: Any) -> Client:
    http = httpx.Client(transport=httpx.MockTransport(reply))
    settings = {"base_url": BASE, "api_key": API_KEY, "session_key": SESSION_KEY, **options}
    return Client(http_client=http, **settings)


def everything_about(exc: BaseException) -> str:
    """Every text an exception shows: str, repr, args and the formatted traceback."""
    return f"{exc} {exc!r} {exc.args} {''.join(traceback.format_exception(exc))}"


# --------------------------------------------------------------------------- keys


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\t", " ", " \r\n\t"])
def test_whitespace_around_a_key_is_trimmed(monkeypatch: pytest.MonkeyPatch, ending: str) -> None:
    # A key read from a file or a CRLF .env: sent as is, httpcore refuses the header with an
    # error (and a DEBUG log line) that shows the whole key.
    monkeypatch.setenv("ESTATEBOT_SESSION_KEY", "\t" + SESSION_KEY + ending)
    seen: list[httpx.Request] = []

    def reply(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=envelope({"SuccessCount": 1}))

    with mock_client(reply, api_key=API_KEY + ending, session_key=None) as client:
        assert client.listings.delete("3254a9d0424c4806b9ea3d0763ccf1bf", ["MLS-1"]) == 1
    assert seen[0].headers["authorization"] == API_KEY
    assert seen[0].headers["chatrobot-sessionkey"] == SESSION_KEY


BAD_KEYS = {
    "line break inside": ("unit-bad\nkey-7781", "a line break (U+000A) at position 9"),
    "carriage return inside": ("unit-bad\rkey-7782", "a line break (U+000D) at position 9"),
    "tab inside": ("unit-bad\tkey-7783", "a whitespace character (U+0009) at position 9"),
    "space inside": ("unit-bad key-7784", "a space (U+0020) at position 9 (the service takes"),
    "control character": ("unit-bad\x07key-7785", "a control character (U+0007) at position 9"),
    "non-ASCII": ("unit-clé-bad-key-7786", "a non-ASCII character (U+00E9) at position 8"),
    "typographic quote": ("\u201cunit-bad-key-7787\u201d", "(U+201C) at position 1"),
    "zero-width space": ("unit-bad\u200bkey-7788", "an invisible character (U+200B)"),
}


@pytest.mark.parametrize("source", ["argument", "environment"])
@pytest.mark.parametrize(("key", "problem"), BAD_KEYS.values(), ids=BAD_KEYS.keys())
@pytest.mark.parametrize("cls", [Client, AsyncClient])
def test_a_key_a_header_cannot_carry_is_refused_when_the_client_is_made(
    monkeypatch: pytest.MonkeyPatch, cls: type[Any], source: str, key: str, problem: str
) -> None:
    if source == "argument":
        options, where = {"api_key": key}, "the API key passed as api_key="
    else:
        monkeypatch.setenv("ESTATEBOT_API_KEY", key)
        options, where = {}, "the API key read from ESTATEBOT_API_KEY"
    with pytest.raises(errors.ConfigurationError) as info:
        cls(base_url=BASE, **options)
    message = str(info.value)
    assert message.startswith(f"{where} holds ")
    assert problem in message
    shown = everything_about(info.value)
    for part in key.split():  # neither the key nor any run of it between whitespace
        assert part.strip("\u201c\u201d") not in shown


def test_a_non_ascii_session_key_is_a_configuration_error_not_unicode_encode_error() -> None:
    with pytest.raises(errors.ConfigurationError) as info:
        Client(base_url=BASE, api_key=API_KEY, session_key="sessión-unit-key-5521")
    assert str(info.value).startswith(
        "the session key passed as session_key= holds a non-ASCII character (U+00F3) at position 6"
    )


@pytest.mark.parametrize("blank", ["", " ", "\r\n", "\t \n"])
def test_a_blank_key_counts_as_not_set(blank: str) -> None:
    client = Client(base_url=BASE, api_key=blank, session_key=SESSION_KEY)
    assert repr(client) == f"Client(base_url='{BASE}', api_key=not set, session_key=set)"
    with pytest.raises(
        errors.ConfigurationError, match="no API key: pass api_key= or set ESTATEBOT_API_KEY"
    ):
        client.chatbots.models()


# --------------------------------------------------------------------------- redaction


def test_a_short_key_masks_only_itself_as_a_whole_token() -> None:
    register_secret("ab")
    text = "about a cab: the key ab was refused ('ab', key=ab). ab-1 xab ab_c"
    assert redact(text) == (
        f"about a cab: the key {MASK} was refused ('{MASK}', key={MASK}). ab-1 xab ab_c"
    )


REALISTIC = 'Zq9-unit_Key/with+slash\\and"quote-41'


@pytest.mark.parametrize(
    "text",
    [
        f"https://svc.test/chat?key={REALISTIC}&page=2",
        f"https://svc.test/chat?key={quote(REALISTIC, safe='')}&page=2",
        f"https://user:{quote(REALISTIC, safe='')}@svc.test/",
        f"Authorization: {REALISTIC}\r\nAccept: */*",
        f"X-Echo: {REALISTIC}",
        f"the key '{REALISTIC}' was refused",
        f"the key “{REALISTIC}” was refused",
        f"the key {REALISTIC}.",
        repr(REALISTIC),
        repr(REALISTIC.encode()),
        repr(REALISTIC + "\n"),
        repr("\n" + REALISTIC),
        json.dumps({"key": REALISTIC}),
        json.dumps({"key": REALISTIC}).replace("/", "\\/"),
        repr({"chatrobot-sessionkey": REALISTIC}),
        str(httpx.Headers({"X-Key": REALISTIC}).raw),
    ],
)
def test_a_realistic_key_is_masked_in_every_spelling(text: str) -> None:
    register_secret(REALISTIC)
    cleaned = redact(text)
    for form in spellings(REALISTIC):
        assert form not in cleaned
    assert "Zq9-unit_Key" not in cleaned
    assert MASK in cleaned


def test_a_key_inside_a_longer_token_is_not_that_key() -> None:
    register_secret(REALISTIC)
    assert redact(f"x{REALISTIC}") == f"x{REALISTIC}"
    assert redact(f"{REALISTIC}9") == f"{REALISTIC}9"


def test_a_header_list_in_prose_is_left_alone() -> None:
    text = "Update takes Authorization, Content-Type and chatrobot-sessionkey"
    assert redact(text) == text
    assert redact("Authorization: Bearer unit-bearer-3f9") == f"Authorization: Bearer {MASK}"


# --------------------------------------------------------------------------- limits


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("deadline", 0, "deadline must be a number of seconds above 0"),
        ("deadline", -1.5, "deadline must be a number of seconds above 0"),
        ("deadline", "30", "deadline must be a number of seconds above 0, or None"),
        ("stream_deadline", 0.0, "stream_deadline must be a number of seconds above 0"),
        ("max_reply_bytes", 0, "max_reply_bytes must be a whole number of bytes above 0"),
        ("max_reply_bytes", 1.5e6, "max_reply_bytes must be a whole number of bytes above 0"),
        ("max_reply_bytes", True, "max_reply_bytes must be a whole number of bytes above 0"),
    ],
)
def test_a_bad_limit_is_refused_naming_it(option: str, value: Any, message: str) -> None:
    with pytest.raises(errors.ConfigurationError, match=message) as info:
        Client(base_url=BASE, api_key=API_KEY, **{option: value})
    assert f"got {value!r}" in str(info.value)


def test_the_default_limits() -> None:
    client = Client(base_url=BASE, api_key=API_KEY)
    assert client._config.max_reply_bytes == 64 * 2**20
    assert client._config.deadline == 120.0
    assert client._config.stream_deadline == 600.0


def test_the_sync_client_bounds_every_socket_read_by_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The deadline of a blocking read depends on this: a change in httpx's layout must show.
    # A proxy from the environment keeps working, and its connections are bounded too.
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    with Client(base_url=BASE, api_key=API_KEY) as client:
        transports = [client._http._transport, *client._http._mounts.values()]
        assert len(transports) == 2
        for transport in transports:
            assert isinstance(transport, httpx.HTTPTransport)
            assert isinstance(transport._pool._network_backend, _deadline.DeadlineBackend)


def test_a_reply_held_whole_is_counted_against_the_cap() -> None:
    big = envelope(["x" * 100] * 2000)  # about 200 kB, already decoded by httpx
    client = mock_client(lambda _: httpx.Response(200, content=big), max_reply_bytes=100_000)
    with pytest.raises(errors.APIError, match="larger than the cap of 100,000 bytes"):
        client.chatbots.models()


def test_a_corrupt_gzip_body_is_an_api_error() -> None:
    body = gzip.compress(envelope([]))[:12] + b"not gzip at all"
    reply = httpx.Response(200, stream=httpx.ByteStream(body), headers={"Content-Encoding": "gzip"})
    client = mock_client(lambda _: reply)
    with pytest.raises(errors.APIError, match="the reply cannot be read: the gzip encoding"):
        client.chatbots.models()


def test_a_deadline_overrun_is_not_retried() -> None:
    overrun = errors.APITimeoutError("late", operation="RealEstateList", deadline=1.0)
    slow = errors.APITimeoutError("slow", operation="RealEstateList")
    policy = RetryPolicy()
    assert not policy.should_retry(_base.LIST, overrun)
    assert policy.should_retry(_base.LIST, slow)


# --------------------------------------------------------------------------- bounded decoding


def read_all(reader: _body.BodyReader, chunks: list[bytes]) -> bytes:
    out = [piece for chunk in chunks for piece in reader.feed(chunk)]
    return b"".join([*out, *reader.end()])


def one_byte_at_a_time(data: bytes) -> list[bytes]:
    return [data[i : i + 1] for i in range(len(data))]


TEXT = envelope([{"Key": str(i), "Value": "model"} for i in range(300)])


def raw_deflate(data: bytes) -> bytes:
    """Deflate without the zlib wrapper, as some servers send "deflate"."""
    packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("gzip", gzip.compress(TEXT)),
        ("x-gzip", gzip.compress(TEXT)),
        ("deflate", zlib.compress(TEXT)),
        ("deflate", raw_deflate(TEXT)),
        ("identity", TEXT),
        ("br", TEXT),  # an encoding not asked for is passed through, as httpx does
        ("gzip, gzip", gzip.compress(gzip.compress(TEXT))),
    ],
)
def test_every_encoding_decodes_whole_and_in_one_byte_chunks(encoding: str, body: bytes) -> None:
    encodings = encoding.split(",")
    assert read_all(_body.BodyReader(10**6, encodings), [body]) == TEXT
    assert read_all(_body.BodyReader(10**6, encodings), one_byte_at_a_time(body)) == TEXT


def test_a_bomb_is_never_inflated_far_past_the_cap() -> None:
    bomb = gzip.compress(bytes(16 * 2**20))
    reader = _body.BodyReader(2**20, ["gzip"])
    produced: list[int] = []

    def drain() -> None:
        produced.extend(len(piece) for piece in reader.feed(bomb))

    with pytest.raises(_body.ReplyTooLarge) as info:
        drain()
    assert info.value.cap == 2**20
    assert reader.size <= 2**20 + _body.PIECE  # one piece past the cap at most
    assert all(size <= _body.PIECE for size in produced)


def test_the_cap_is_exact() -> None:
    assert read_all(_body.BodyReader(len(TEXT), ["gzip"]), [gzip.compress(TEXT)]) == TEXT
    with pytest.raises(_body.ReplyTooLarge):
        read_all(_body.BodyReader(len(TEXT) - 1, ["gzip"]), [gzip.compress(TEXT)])


# --------------------------------------------------------------------------- redirects


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_reply_says_where_it_points(status: int) -> None:
    location = "https://usapi.example/chat/Chatbot/RealEstateList"
    with pytest.raises(errors.APIError) as info:
        _responses.parse_response(
            _base.LIST, status, {"location": location}, b"", BASE + _base.LIST.path
        )
    assert str(info.value) == (
        f"RealEstateList failed, HTTP {status}: the service redirects "
        f"({httpx.codes.get_reason_phrase(status)}) to {location}; the client does not follow "
        "redirects, which could carry the keys to another host: set the base URL to "
        "https://usapi.example (base_url= or ESTATEBOT_BASE_URL)"
    )


def test_a_redirect_without_location_still_says_redirect() -> None:
    with pytest.raises(errors.APIError, match=r"redirects \(Found\) without saying where"):
        _responses.parse_response(_base.LIST, 302, {}, b"")


def test_a_redirect_location_shows_no_credentials() -> None:
    register_secret(API_KEY)
    location = f"https://me:pw-5512@other.example/login?next=/x&api_key={API_KEY}&sig=abc981"
    with pytest.raises(errors.APIError) as info:
        _responses.parse_response(_base.LIST, 302, {"location": location}, b"")
    text = str(info.value)
    for secret in ("me:", "pw-5512", API_KEY, "abc981"):
        assert secret not in text
    assert f"https://{MASK}@other.example/login?next=%2Fx&api_key={MASK}&sig={MASK}" in text
    assert "set the base URL (base_url= or ESTATEBOT_BASE_URL)" in text


def test_a_huge_location_is_cut_short() -> None:
    location = "https://other.example/" + "a" * 5_000
    with pytest.raises(errors.APIError) as info:
        _responses.parse_response(_base.LIST, 301, {"location": location}, b"")
    assert len(str(info.value)) < 600
    assert "https://other.example/aaaa" in str(info.value)


# --------------------------------------------------------------------------- stream decoding


def test_an_endless_json_object_in_a_stream_costs_linear_time() -> None:
    # Parsing the unfinished object again at every chunk took quadratic time: 32 MiB of one
    # string in 64 KiB chunks took some 30 s. Read once, it takes well under a second.
    decoder = StreamDecoder()
    chunk = b"a" * 2**16
    started = time.monotonic()
    assert decoder.feed(b'{"content": "') == []
    for _ in range(512):
        assert decoder.feed(chunk) == []
    assert decoder.feed(b'"}') == [Fragment("a" * 2**25)]
    assert time.monotonic() - started < 10.0


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_json_objects_split_anywhere_with_brackets_and_escapes_in_strings(size: int) -> None:
    tricky = 'quote \\" backslash \\\\ braces {}[] ] } end'
    body = "".join(json.dumps({"content": tricky}) for _ in range(50))
    body += json.dumps({"Answer": "done", "TotalToken": 5})
    data = body.encode()
    decoder = StreamDecoder()
    events = [
        event for i in range(0, len(data), size) for event in decoder.feed(data[i : i + size])
    ]
    events += decoder.flush()
    assert events == [Fragment(tricky)] * 50 + [Final({"Answer": "done", "TotalToken": 5})]
