"""Errors that say what to do, against the real emulator over loopback HTTP.

An unknown serial, a missing key, a refused key, a closed port and a name that does not resolve
each end in the hint of their cause, exactly as the library writes it (the command line rewrites
the ``pass X= or set VAR`` parts), and never show a key.
"""

from __future__ import annotations

import socket

import pytest

import estatebot as eb
from estatebot.api import Client, errors
from estatebot.emulator import EmulatorServer

UNKNOWN = "0123456789abcdef0123456789abcdef"
WRONG_API_KEY = "wrong-api-key-7e21c9"
WRONG_SESSION_KEY = "wrong-session-key-5b0d44"

API = "pass api_key= or set ESTATEBOT_API_KEY"
SESSION = "pass session_key= or set ESTATEBOT_SESSION_KEY"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ESTATEBOT_BASE_URL", "ESTATEBOT_API_KEY", "ESTATEBOT_SESSION_KEY"):
        monkeypatch.delenv(name, raising=False)


def no_chatbot(serial: str) -> str:
    return f"(no chatbot '{serial}' for this key: check serial=)"


def test_an_unknown_serial_is_named_with_what_to_check(client: Client) -> None:
    calls = [
        lambda: client.listings.list_page(UNKNOWN),
        lambda: client.chat.create_session(UNKNOWN),
        lambda: client.chatbots.edit(UNKNOWN, Name="x"),
        lambda: client.listings.delete(UNKNOWN, ["MLS-1"]),
    ]
    for call in calls:
        with pytest.raises(errors.NotFoundError) as info:
            call()
        assert str(info.value).endswith(no_chatbot(UNKNOWN)), str(info.value)
        assert info.value.status_code == 404


def test_a_pull_of_an_unknown_serial_has_no_paging_hint(client: Client) -> None:
    with pytest.raises(eb.PullError) as info:
        eb.pull_listings(client, UNKNOWN, progress=False)
    text = str(info.value)
    assert text.endswith(no_chatbot(UNKNOWN))
    assert "on_error" not in text
    assert "try again" not in text


def test_a_missing_key_says_which_and_how_and_sends_nothing(emulator: EmulatorServer) -> None:
    before = dict(emulator.request_counts)
    with Client(base_url=emulator.base_url, session_key=emulator.session_key) as client:
        with pytest.raises(errors.ConfigurationError) as info:
            client.chatbots.models()
        assert str(info.value) == f"ModelList: no API key: {API}"
    with Client(base_url=emulator.base_url, api_key=emulator.api_key) as client:
        with pytest.raises(errors.ConfigurationError) as info:
            client.listings.list_page(emulator.serial)
        assert str(info.value) == f"RealEstateList: no session key: {SESSION}"
    assert dict(emulator.request_counts) == before


def test_a_refused_key_names_the_key_sent(emulator: EmulatorServer) -> None:
    wrong = Client(base_url=emulator.base_url, api_key=WRONG_API_KEY, session_key=WRONG_SESSION_KEY)
    with wrong:
        with pytest.raises(errors.AuthenticationError) as api:
            wrong.chatbots.models()
        with pytest.raises(errors.AuthenticationError) as session:
            wrong.listings.list_page(emulator.serial)
        with pytest.raises(eb.PullError) as pulled:
            eb.pull_listings(wrong, emulator.serial, progress=False)
    assert str(api.value).endswith(
        f"the service refused the API key (HTTP 401): {API} with a valid key"
    )
    assert str(session.value).endswith(
        f"the service refused the session key (HTTP 401): {SESSION} with a valid key"
    )
    # A refused key is not a paging matter: no on_error= hint, no "try again".
    assert str(pulled.value).endswith(f"{SESSION} with a valid key")
    for error in (api.value, session.value, pulled.value):
        assert WRONG_API_KEY not in str(error)
        assert WRONG_SESSION_KEY not in str(error)


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on: bound by the system (port 0), then released."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_closed_port_names_the_address_and_the_setting(closed_port: int) -> None:
    base = f"http://127.0.0.1:{closed_port}"
    client = Client(base_url=base, api_key=WRONG_API_KEY, max_retries=1, backoff_base=0.01)
    with client, pytest.raises(errors.APIConnectionError) as info:
        client.chatbots.models()
    text = str(info.value)
    assert text.startswith(f"ModelList: cannot reach 127.0.0.1:{closed_port} (")
    assert text.endswith("): check the base URL (pass base_url= or set ESTATEBOT_BASE_URL)")
    assert info.value.sent is False
    assert WRONG_API_KEY not in text


def test_a_closed_port_on_page_1_of_a_pull_says_try_again(closed_port: int) -> None:
    base = f"http://127.0.0.1:{closed_port}"
    client = Client(base_url=base, session_key=WRONG_SESSION_KEY, max_retries=0)
    with client, pytest.raises(eb.PullError) as info:
        eb.pull_listings(client, UNKNOWN, progress=False)
    text = str(info.value)
    assert f"cannot reach 127.0.0.1:{closed_port}" in text
    assert text.endswith("(try again when the service answers)")
    assert "on_error" not in text


def test_a_name_that_does_not_resolve_is_named() -> None:
    # .invalid is reserved (RFC 6761): it never resolves, so nothing outside is reached.
    client = Client(base_url="http://nosuch.invalid", api_key=WRONG_API_KEY, max_retries=0)
    with client, pytest.raises(errors.APIConnectionError) as info:
        client.chatbots.models()
    text = str(info.value)
    assert text.startswith("ModelList: cannot reach nosuch.invalid:80 (")
    assert text.endswith("): check the base URL (pass base_url= or set ESTATEBOT_BASE_URL)")
    assert WRONG_API_KEY not in text
