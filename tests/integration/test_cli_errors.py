"""Bad input to ``estatebot`` gets one line in the command line's terms, never a traceback
(``--debug`` shows one), and an exit code of the table: usage errors 64, errors 1."""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from clirun import cli_env, run_cli, serving
from estatebot.emulator import EmulatorServer, running

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
#: A key long and distinctive enough that finding it in output means it leaked.
SECRET = "sk-cli-test-9d1f4e2a7b6c3058e1f2a3b4c5d6e7f8"


@pytest.fixture
def small() -> Iterator[EmulatorServer]:
    with running(seed="small") as server:
        yield server


def test_version_prints_the_version() -> None:
    done = run_cli(None, "--version")
    assert done.code == 0, done.text
    assert re.fullmatch(r"estatebot \d+\.\d+\.\d+\S*\n", done.out)


@pytest.mark.parametrize(
    "args",
    [
        ("plann",),  # a typo of a command
        ("plan", str(SAMPLES / "mls_export.xlsx"), "--lot-uint", "sqft"),  # of a flag
        ("plan",),  # a missing argument
        ("plan", str(SAMPLES / "mls_export.xlsx"), "--default", "CurrencySymbol"),  # malformed
        ("plan", str(SAMPLES / "mls_export.xlsx"), "--key", "Address"),  # not a choice
        ("plan", str(SAMPLES / "mls_export.xlsx"), "--max-rows", "-1"),  # out of range
        ("sync", str(SAMPLES / "no-such-file.xlsx")),  # a file that is not there
        ("serve", "--framing", "xml"),
        ("serve", "--seed", "no-such-seed.json"),
        ("serve", "--max-body-bytes", "0"),
    ],
)
def test_usage_errors_exit_64_never_a_result_code(small: EmulatorServer, args: tuple[str]) -> None:
    done = run_cli(small, *args)
    assert done.code == 64, done.text  # never 2 ("changes") or 1
    assert "Usage: estatebot" in done.err
    assert "Traceback" not in done.text
    assert done.out == ""


def test_a_malformed_pair_names_the_flag(small: EmulatorServer) -> None:
    done = run_cli(small, "plan", str(SAMPLES / "mls_export.xlsx"), "--set", "ParkingSpots")
    assert done.code == 64, done.text
    assert "Invalid value for --set: expected FIELD=VALUE, got 'ParkingSpots'" in done.err


def test_debug_shows_the_traceback_of_an_error_and_only_then(small: EmulatorServer) -> None:
    Path("broken.json").write_text("not a plan", "utf-8")
    plain = run_cli(small, "apply", "broken.json")
    assert plain.code == 1, plain.text
    assert plain.err.startswith("error: broken.json is not a saved plan: not JSON")
    assert "Traceback" not in plain.text

    debug = run_cli(small, "--debug", "apply", "broken.json")
    assert debug.code == 1, debug.text
    assert "Traceback (most recent call last)" in debug.err
    assert "error: broken.json is not a saved plan" in debug.err

    by_env = run_cli(small, "apply", "broken.json", env=cli_env(small, ESTATEBOT_DEBUG="1"))
    assert "Traceback (most recent call last)" in by_env.err


def test_the_run_settings_live_in_the_context_not_in_a_module(small: EmulatorServer) -> None:
    import estatebot.cli.error_messages as error_messages
    from estatebot.cli.error_messages import Settings
    from estatebot.cli.main import app

    # Nothing module-level a run could change: no ``settings`` global, no Settings held by any
    # module of the command line, and the settings themselves cannot be changed.
    assert not hasattr(error_messages, "settings")
    for name, module in list(sys.modules.items()):
        if name.startswith("estatebot.cli"):
            held = [key for key, value in vars(module).items() if isinstance(value, Settings)]
            assert not held, f"{name} holds run settings: {held}"
    assert Settings.__dataclass_params__.frozen  # type: ignore[attr-defined]

    # Two runs in one process: --debug in the first does not leak into the second.
    Path("broken.json").write_text("not a plan", "utf-8")
    runner = CliRunner()
    debug = runner.invoke(app, ["--debug", "apply", "broken.json"], env=cli_env(small))
    assert debug.exit_code == 1, debug.output
    assert "Traceback (most recent call last)" in debug.stderr
    assert "error: broken.json is not a saved plan" in debug.stderr
    plain = runner.invoke(app, ["apply", "broken.json"], env=cli_env(small))
    assert plain.exit_code == 1, plain.output
    assert plain.stderr.startswith("error: broken.json is not a saved plan: not JSON")
    assert "Traceback" not in plain.output


def test_an_unreachable_host_is_named_and_no_page_skipping_offered(
    small: EmulatorServer,
) -> None:
    closed = cli_env(small, ESTATEBOT_BASE_URL="http://127.0.0.1:9")
    pulled = run_cli(small, "pull", "--out", "x.csv", env=closed)
    assert pulled.code == 1, pulled.text
    # Nothing arrived (page 1 never did): skipping pages would keep nothing; the host is named.
    assert "cannot reach 127.0.0.1:9" in pulled.err
    assert "set ESTATEBOT_BASE_URL" in pulled.err
    assert "--skip-failed-pages" not in pulled.err
    synced = run_cli(small, "sync", str(SAMPLES / "mls_export.xlsx"), env=closed)
    assert synced.code == 1, synced.text
    assert "set ESTATEBOT_BASE_URL" in synced.err
    assert "--skip-failed-pages" not in synced.err


def test_a_key_never_reaches_the_output_even_with_debug(small: EmulatorServer) -> None:
    env = cli_env(small, ESTATEBOT_API_KEY=SECRET, ESTATEBOT_SESSION_KEY=SECRET + "-session")
    for args in (("pull", "--out", "x.csv"), ("--debug", "pull", "--out", "x.csv")):
        done = run_cli(small, *args, env=env)
        assert done.code == 1, done.text  # the emulator does not know the key
        assert "error:" in done.err
        assert SECRET not in done.text

    closed = cli_env(small, ESTATEBOT_API_KEY=SECRET, ESTATEBOT_BASE_URL="http://127.0.0.1:9")
    done = run_cli(small, "--debug", "ask", "hello", env=closed)
    assert done.code == 1, done.text
    assert SECRET not in done.text


def test_missing_credentials_name_the_variable_not_an_argument(small: EmulatorServer) -> None:
    env = cli_env(small)
    del env["ESTATEBOT_API_KEY"]
    done = run_cli(small, "ask", "hello", env=env)
    assert done.code == 1, done.text
    assert "set ESTATEBOT_API_KEY" in done.err
    assert "api_key=" not in done.err


def test_a_cases_file_without_cases_is_an_error(small: EmulatorServer) -> None:
    Path("cases.csv").write_text("question,expect_contains\n", "utf-8")
    done = run_cli(small, "test-chat", "cases.csv")
    assert done.code == 1, done.text
    assert "error: cases.csv holds no test case" in done.err


# --------------------------------------------------------------------------- serve


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_serve_on_a_busy_port_says_so_before_printing_anything() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = run_cli(None, "serve", "--port", str(port), "--seed", "none", timeout=60)
    assert done.code == 1, done.text
    assert done.err.startswith(f"error: cannot listen on 127.0.0.1:{port}")
    assert "--port 0 picks a free one" in done.err
    assert "ESTATEBOT_API_KEY=" not in done.text  # no address or credentials for a dead server
    assert "Traceback" not in done.text


def test_serve_names_a_seed_file_that_holds_no_listings(tmp_path: Path) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text('{"not": "a list"}', "utf-8")
    done = run_cli(None, "serve", "--port", "0", "--seed", str(seed), timeout=60)
    assert done.code == 1, done.text
    assert done.err.startswith(f"error: --seed {seed}: ")
    assert "a seed file holds a JSON list of listing objects" in done.err
    assert "Traceback" not in done.text


def test_serve_caps_request_bodies_at_max_body_bytes() -> None:
    port = free_port()
    with serving("--port", str(port), "--seed", "small", "--max-body-bytes", "2000"):
        url = f"http://127.0.0.1:{port}/chat/Chatbot/Edit"
        reply = httpx.post(url, content=b"{" + b" " * 3000 + b"}", timeout=10,
                           headers={"Authorization": "demo-api-key",
                                    "Content-Type": "application/json"})  # fmt: skip
        assert reply.status_code == 413
        assert "2000" in reply.text
