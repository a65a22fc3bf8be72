"""Errors that say what to do, per cause, over httpx.MockTransport.

Each cause has its own hint, kept exactly (the command line rewrites the ``pass X= or set VAR``
parts into its flags): an unknown chatbot names the serial asked for, a missing key the setting
that gives it, a refused key the one that was sent, an unreachable host the address and where it
came from; a failed pull adds its paging hint only where paging helps. No hint ever holds a key.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from estatebot.api import AsyncClient, Client, errors
from estatebot.api._config import DEFAULT_BASE_URL
from estatebot.errors import PullError
from factories import wire_listing

API_KEY = "hint-api-key-6b2e0c"
SESSION_KEY = "hint-session-key-d41f"
SERIAL = "deadbeefdeadbeefdeadbeefdeadbeef"
BASE = "http://svc.test:8080"

LISTING = wire_listing(SERIAL)

API = "pass api_key= or set ESTATEBOT_API_KEY"
SESSION = "pass session_key= or set ESTATEBOT_SESSION_KEY"


def refused(label: str, fix: str, status: int) -> str:
    return f"the service refused the {label} (HTTP {status}): {fix} with a valid key"


def no_chatbot(serial: str = SERIAL) -> str:
    return f"(no chatbot '{serial}' for this key: check serial=)"


# name -> (the call, the keys it takes: "api", "session" or "either", whether it names SERIAL)
OPERATIONS: dict[str, tuple[Callable[[Any], Any], str, bool]] = {
    "Edit": (lambda c: c.chatbots.edit(SERIAL, Name="Sunny"), "api", True),
    "ModelList": (lambda c: c.chatbots.models(), "api", False),
    "GetSession": (lambda c: c.chat.create_session(SERIAL), "api", True),
    "ClientAsk": (lambda c: c.chat.ask(5, "hi"), "api", False),
    "RealEstateCreate": (lambda c: c.listings.create(LISTING), "either", True),
    "RealEstateUpdate": (lambda c: c.listings.update(LISTING), "either", True),
    "RealEstateList": (lambda c: c.listings.list_page(SERIAL), "session", True),
    "RealEstateDelete": (lambda c: c.listings.delete(SERIAL, ["MLS-1"]), "either", True),
}


def failure(status: int, message: str) -> httpx.Response:
    body = {"Data": None, "Success": False, "Code": status, "Message": message}
    return httpx.Response(status, json=body)


class Made:
    """A client whose mock service gives ``reply`` to every request, with no retries."""

    def __init__(self, kind: str, reply: httpx.Response | Exception, **options: Any) -> None:
        self.requests: list[httpx.Request] = []

        def answer(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            if isinstance(reply, Exception):
                raise reply
            return reply

        transport = httpx.MockTransport(answer)
        settings: dict[str, Any] = {
            "base_url": BASE,
            "api_key": API_KEY,
            "session_key": SESSION_KEY,
            "max_retries": 0,
            **options,
        }
        self.client: Client | AsyncClient
        if kind == "sync":
            self.client = Client(http_client=httpx.Client(transport=transport), **settings)
        else:
            self.client = AsyncClient(
                http_client=httpx.AsyncClient(transport=transport), **settings
            )

    async def fail(self, fn: Callable[[Any], Any]) -> BaseException:
        with pytest.raises(errors.EstatebotError) as info:
            await _settled(fn(self.client))
        return info.value


async def _settled(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ESTATEBOT_BASE_URL", "ESTATEBOT_API_KEY", "ESTATEBOT_SESSION_KEY"):
        monkeypatch.delenv(name, raising=False)


def assert_no_key(error: BaseException) -> None:
    text = str(error)
    assert API_KEY not in text
    assert SESSION_KEY not in text


# --------------------------------------------------------------------------- unknown chatbot


@pytest.mark.parametrize("name", list(OPERATIONS))
async def test_a_404_names_the_serial_asked_for(kind: str, name: str) -> None:
    fn, _, names_serial = OPERATIONS[name]
    made = Made(kind, failure(404, f"Chatbot '{SERIAL}' not found"))
    error = await made.fail(fn)
    assert isinstance(error, errors.NotFoundError)
    assert error.message == f"Chatbot '{SERIAL}' not found"  # the service's words, unchanged
    if names_serial:
        assert str(error).endswith(f"not found {no_chatbot()}")
    else:  # a session ID or nothing: a 404 there is no unknown chatbot
        assert "check serial=" not in str(error)


async def test_a_404_past_page_1_says_nothing_of_the_chatbot(kind: str) -> None:
    # Page 1 answered, so the chatbot exists: a 404 later is the service's "no more pages".
    made = Made(kind, failure(404, "No more data"))
    error = await made.fail(lambda c: c.listings.list_page(SERIAL, page=3))
    assert isinstance(error, errors.NotFoundError)
    assert "check serial=" not in str(error)


async def test_a_404_under_http_200_names_the_serial_too(kind: str) -> None:
    reply = httpx.Response(200, json={"Success": False, "Code": 404, "Message": "no chatbot"})
    made = Made(kind, reply)
    error = await made.fail(lambda c: c.chatbots.edit(SERIAL, Name="x"))
    assert str(error).endswith(no_chatbot())


# --------------------------------------------------------------------------- missing key


@pytest.mark.parametrize(
    ("name", "unset", "expected"),
    [
        ("Edit", "api_key", f"Edit: no API key: {API}"),
        ("ModelList", "api_key", f"ModelList: no API key: {API}"),
        ("GetSession", "api_key", f"GetSession: no API key: {API}"),
        ("ClientAsk", "api_key", f"ClientAsk: no API key: {API}"),
        ("RealEstateList", "session_key", f"RealEstateList: no session key: {SESSION}"),
        (
            "RealEstateCreate",
            "both",
            f"RealEstateCreate: no API key or session key: {API}, or {SESSION}",
        ),
        (
            "RealEstateDelete",
            "both",
            f"RealEstateDelete: no API key or session key: {API}, or {SESSION}",
        ),
    ],
)
async def test_a_missing_key_says_how_to_set_it_and_sends_nothing(
    kind: str, name: str, unset: str, expected: str
) -> None:
    fn = OPERATIONS[name][0]
    keys = ("api_key", "session_key") if unset == "both" else (unset,)
    made = Made(kind, failure(200, ""), **dict.fromkeys(keys))
    error = await made.fail(fn)
    assert isinstance(error, errors.ConfigurationError)
    assert str(error) == expected
    assert made.requests == []


@pytest.mark.parametrize("blank", ["", "  ", "\r\n"])
async def test_a_blank_key_is_a_missing_key(kind: str, blank: str) -> None:
    made = Made(kind, failure(200, ""), api_key=blank)
    error = await made.fail(lambda c: c.chatbots.models())
    assert str(error) == f"ModelList: no API key: {API}"


# --------------------------------------------------------------------------- refused key


@pytest.mark.parametrize("status", [401, 403])
@pytest.mark.parametrize("name", list(OPERATIONS))
async def test_a_refused_key_names_the_key_that_was_sent(kind: str, name: str, status: int) -> None:
    fn, takes, _ = OPERATIONS[name]
    made = Made(kind, failure(status, "Unauthorized"))
    error = await made.fail(fn)
    assert isinstance(error, errors.AuthenticationError)
    assert error.message == "Unauthorized"
    text = str(error)
    if takes == "api":
        assert text.endswith(f"Unauthorized; {refused('API key', API, status)}")
        assert "session key" not in text
    elif takes == "session":
        assert text.endswith(f"Unauthorized; {refused('session key', SESSION, status)}")
        assert "API key" not in text
    else:  # both keys went: either may be the one refused
        assert refused("API key", API, status) in text
        assert refused("session key", SESSION, status) in text
    assert_no_key(error)


@pytest.mark.parametrize(
    ("held", "sent", "missing"),
    [
        ({"api_key": None}, refused("session key", SESSION, 401), f"no API key: {API}"),
        ({"session_key": None}, refused("API key", API, 401), f"no session key: {SESSION}"),
    ],
)
async def test_a_refusal_of_one_key_names_the_other_the_client_lacks(
    kind: str, held: dict[str, Any], sent: str, missing: str
) -> None:
    # Create takes either key: refused with one, the other (not set) may be the one wanted.
    made = Made(kind, failure(401, "Unauthorized"), **held)
    error = await made.fail(lambda c: c.listings.create(LISTING))
    assert str(error).endswith(f"Unauthorized; {sent}; {missing}")


async def test_a_refusal_without_a_message_still_names_the_key(kind: str) -> None:
    made = Made(kind, httpx.Response(401, text=""))
    error = await made.fail(lambda c: c.chatbots.models())
    assert str(error) == (
        "ModelList failed, HTTP 401: HTTP 401 Unauthorized; " + refused("API key", API, 401)
    )


async def test_a_message_quoting_the_key_is_masked_and_the_hint_kept(kind: str) -> None:
    made = Made(kind, failure(401, f"bad key {API_KEY}"))
    error = await made.fail(lambda c: c.chatbots.models())
    assert_no_key(error)
    assert str(error).endswith(refused("API key", API, 401))


# --------------------------------------------------------------------------- host not reached


@pytest.mark.parametrize(
    "exc",
    [
        httpx.ConnectError("[Errno -2] Name or service not known"),
        httpx.ConnectError("[Errno 111] Connection refused"),
        httpx.ConnectTimeout("timed out"),
    ],
    ids=["dns", "refused", "connect-timeout"],
)
async def test_a_host_not_reached_is_named_with_the_setting(kind: str, exc: Exception) -> None:
    made = Made(kind, exc)
    error = await made.fail(lambda c: c.listings.list_page(SERIAL))
    assert isinstance(error, errors.APIConnectionError)
    assert error.sent is False
    assert str(error) == (
        f"RealEstateList: cannot reach svc.test:8080 ({exc}): check the base URL "
        "(pass base_url= or set ESTATEBOT_BASE_URL)"
    )


@pytest.mark.parametrize(
    ("base_url", "where"),
    [("https://api.example.test", "api.example.test:443"), ("http://[::1]:9", "[::1]:9")],
)
async def test_the_port_is_the_schemes_when_not_given(kind: str, base_url: str, where: str) -> None:
    made = Made(kind, httpx.ConnectError("refused"), base_url=base_url)
    error = await made.fail(lambda c: c.chatbots.models())
    assert f"cannot reach {where} (refused)" in str(error)


async def test_the_default_address_is_named_when_none_was_set(kind: str) -> None:
    made = Made(kind, httpx.ConnectError("[Errno -2] Name or service not known"), base_url=None)
    error = await made.fail(lambda c: c.chatbots.models())
    assert str(error) == (
        "ModelList: cannot reach usapi.hottask.com:443 ([Errno -2] Name or service not known): "
        f"ESTATEBOT_BASE_URL is not set, so the default {DEFAULT_BASE_URL} was used: "
        "pass base_url= or set ESTATEBOT_BASE_URL"
    )


async def test_an_address_from_the_environment_is_not_called_the_default(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ESTATEBOT_BASE_URL", "http://env.test")
    made = Made(kind, httpx.ConnectError("refused"), base_url=None)
    error = await made.fail(lambda c: c.chatbots.models())
    assert "cannot reach env.test:80 (refused): check the base URL" in str(error)


def test_a_copied_client_keeps_whether_the_address_was_the_default() -> None:
    made = Made("sync", httpx.ConnectError("refused"), base_url=None)
    assert Client.like(made.client)._config.default_base_url
    assert not Client.like(Made("sync", httpx.ConnectError("x")).client)._config.default_base_url


async def test_a_key_in_a_transport_error_is_masked(kind: str) -> None:
    made = Made(kind, httpx.ConnectError(f"refused for {API_KEY} and {SESSION_KEY}"))
    error = await made.fail(lambda c: c.listings.delete(SERIAL, ["MLS-1"]))
    assert "cannot reach svc.test:8080" in str(error)
    assert_no_key(error)


async def test_a_failure_after_connecting_keeps_its_own_words(kind: str) -> None:
    made = Made(kind, httpx.RemoteProtocolError("server disconnected"))
    error = await made.fail(lambda c: c.chatbots.models())
    assert str(error) == "ModelList: connection failed (server disconnected)"


# --------------------------------------------------------------------------- a failed pull


def _cause(kind: str) -> errors.EstatebotError:
    causes: dict[str, errors.EstatebotError] = {
        "connection": errors.APIConnectionError("connection failed (x)", operation="L"),
        "timeout": errors.APITimeoutError("timed out (x)", operation="L"),
        "500": errors.ServerError("boom", operation="L", status_code=500),
        "503-code": errors.ServerError("busy", operation="L", status_code=200, code=503),
        "429": errors.RateLimitError("slow", operation="L", status_code=429),
        "408": errors.APIError("late", operation="L", status_code=408),
        "404": errors.NotFoundError("not found", operation="L", status_code=404, hint=no_chatbot()),
        "401": errors.AuthenticationError(
            "no", operation="L", status_code=401, hint=refused("session key", SESSION, 401)
        ),
        "403": errors.AuthenticationError("no", operation="L", status_code=403),
        "400": errors.InvalidRequestError("PageSize: bad", operation="L", status_code=400),
        "config": errors.ConfigurationError(f"L: no session key: {SESSION}"),
    }
    return causes[kind]


SKIP = "(pass on_error='skip' to keep the pages that did arrive)"
AGAIN = "(try again when the service answers)"
PASSING = ["connection", "timeout", "500", "503-code", "429", "408"]
LASTING = ["404", "401", "403", "400", "config"]


@pytest.mark.parametrize("cause", PASSING + LASTING)
@pytest.mark.parametrize("page", [1, 2, 7])
def test_a_pull_gives_its_paging_hint_only_where_it_helps(page: int, cause: str) -> None:
    error = _cause(cause)
    message = str(PullError(page, error))
    assert message.startswith(f"pulling listings failed at page {page}: {error}")
    if cause in LASTING:
        assert message == f"pulling listings failed at page {page}: {error}"
        assert "on_error" not in message
        assert AGAIN not in message
    elif page == 1:  # nothing arrived to keep
        assert message.endswith(AGAIN)
        assert "on_error" not in message
    else:
        assert message.endswith(SKIP)


def test_an_unknown_chatbots_pull_ends_with_the_serial_hint() -> None:
    message = str(PullError(1, _cause("404")))
    assert message.endswith(no_chatbot())


# --------------------------------------------------------------------------- ABP envelopes
# (An ASP.NET deployment on the ABP framework wraps its replies as {"result", "success",
# "error"}: its Data is under Result, and a failure's words under error.message.)


@pytest.mark.parametrize("spelling", ["result", "Result", "RESULT"])
async def test_data_under_result_is_read_as_data(kind: str, spelling: str) -> None:
    abp = {spelling: {"SessionID": 41}, "success": True, "error": None, "__abp": True}
    made = Made(kind, httpx.Response(200, json=abp))
    assert await _settled(made.client.chat.create_session(SERIAL)) == 41


async def test_an_envelope_with_data_and_result_keeps_data(kind: str) -> None:
    both = {"Data": {"SessionID": 7}, "Result": {"SessionID": 8}, "Success": True, "Code": 200}
    made = Made(kind, httpx.Response(200, json=both))
    assert await _settled(made.client.chat.create_session(SERIAL)) == 7


async def test_an_abp_failure_says_its_error_message_and_the_hint(kind: str) -> None:
    abp = {
        "result": None,
        "success": False,
        "error": {"code": 0, "message": "Chatbot not found", "details": "no such serial"},
        "unAuthorizedRequest": False,
    }
    made = Made(kind, httpx.Response(404, json=abp))
    error = await made.fail(lambda c: c.chat.create_session(SERIAL))
    assert isinstance(error, errors.NotFoundError)
    assert error.message == "Chatbot not found: no such serial"
    assert str(error).endswith(no_chatbot())
