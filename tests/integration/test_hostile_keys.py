"""Keys as they come from files and ``.env`` files, against the real emulator over loopback: a
key ending in a line break or a tab works, one a header cannot carry is refused naming its
variable, and no key shows in a DEBUG log line, an exception or the command line's output."""

from __future__ import annotations

import json
import logging
import traceback
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from typer.testing import CliRunner

from estatebot import errors
from estatebot.api import AsyncClient, Client
from estatebot.cli import app


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def forms(key: str) -> list[str]:
    """The key and the spellings it would take in a log line or a message."""
    return [key, repr(key)[1:-1], json.dumps(key)[1:-1], quote(key, safe="")]


async def exercise(kind: str, server: Any, **options: Any) -> None:
    """A few operations of every kind of credential, and a stream."""
    settings = {"base_url": server.base_url, **options}
    if kind == "sync":
        with Client(**settings) as client:
            assert client.chatbots.models()
            session = client.chat.create_session(server.serial)
            assert client.listings.list_page(server.serial, page_size=5).records
            with client.chat.stream(session, "Any homes in Austin?") as s:
                assert "".join(s)
    else:
        async with AsyncClient(**settings) as aclient:
            assert await aclient.chatbots.models()
            session = await aclient.chat.create_session(server.serial)
            assert (await aclient.listings.list_page(server.serial, page_size=5)).records
            async with aclient.chat.stream(session, "Any homes in Austin?") as a:
                assert "".join([text async for text in a])


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\t"])
async def test_keys_from_a_crlf_env_file_work(
    kind: str, emulator: Any, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    monkeypatch.setenv("ESTATEBOT_API_KEY", emulator.api_key + ending)
    monkeypatch.setenv("ESTATEBOT_SESSION_KEY", emulator.session_key + ending)
    await exercise(kind, emulator)


async def test_keys_read_from_a_file_work(kind: str, emulator: Any, tmp_path: Path) -> None:
    path = tmp_path / "keys.txt"
    path.write_bytes(f"{emulator.api_key}\r\n{emulator.session_key}\r\n".encode())
    with path.open(newline="") as lines:  # as a script reads them: each ends in "\r\n"
        api_line, session_line = lines.readlines()
    assert api_line.endswith("\r\n")
    await exercise(kind, emulator, api_key=api_line, session_key=session_line)


async def test_no_debug_log_line_holds_a_key(
    kind: str, emulator: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("ESTATEBOT_API_KEY", emulator.api_key + "\r\n")
    monkeypatch.setenv("ESTATEBOT_SESSION_KEY", emulator.session_key + "\t")
    await exercise(kind, emulator)
    wrong = "wrong-integration-key-8d41f0"
    with pytest.raises(errors.AuthenticationError) as info:
        await exercise(kind, emulator, api_key=wrong + "\r\n")
    assert any(r.name.startswith("httpcore") for r in caplog.records)  # DEBUG was on
    logged = "\n".join(f"{r.getMessage()} {r.args}" for r in caplog.records)
    shown = f"{logged}\n{caplog.text}\n{''.join(traceback.format_exception(info.value))}"
    for key in (emulator.api_key, emulator.session_key, wrong):
        for form in forms(key):
            assert form not in shown


def test_the_command_line_refuses_a_broken_key_naming_its_variable(
    emulator: Any, tmp_path: Path
) -> None:
    broken = f"{emulator.api_key}\n{emulator.api_key}"  # two lines pasted as one key
    env = {
        "ESTATEBOT_BASE_URL": emulator.base_url,
        "ESTATEBOT_API_KEY": broken,
        "ESTATEBOT_SESSION_KEY": emulator.session_key,
        "ESTATEBOT_PROGRESS": "0",
    }
    out = tmp_path / "listings.csv"
    result = CliRunner().invoke(
        app, ["pull", "--serial", emulator.serial, "--out", str(out)], env=env
    )
    assert result.exit_code == 1
    assert "the API key read from ESTATEBOT_API_KEY holds a line break (U+000A)" in result.output
    assert emulator.api_key not in result.output
    assert emulator.request_counts.get("RealEstateList", 0) == 0
    assert not out.exists()


def test_the_command_line_works_with_a_crlf_key(emulator: Any, tmp_path: Path) -> None:
    env = {
        "ESTATEBOT_BASE_URL": emulator.base_url,
        "ESTATEBOT_API_KEY": emulator.api_key + "\r\n",
        "ESTATEBOT_SESSION_KEY": emulator.session_key + "\r\n",
        "ESTATEBOT_PROGRESS": "0",
    }
    out = tmp_path / "listings.csv"
    result = CliRunner().invoke(
        app, ["pull", "--serial", emulator.serial, "--out", str(out)], env=env
    )
    assert result.exit_code == 0, result.output
    assert "16 listings written" in result.output
