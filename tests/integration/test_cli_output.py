"""What ``estatebot`` prints: the plan of the week-2 sample (golden files), colour only on a
terminal without ``NO_COLOR``, hostile text escaped, progress as ``ESTATEBOT_PROGRESS`` and
``CI`` say.

A golden file is the output with colour off at a fixed width (100 columns), run in an empty
folder, so it holds no path or time that varies. After a deliberate change of the output, write
them again with ``ESTATEBOT_UPDATE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import estatebot as eb
from clirun import cli_env, command, run_cli
from estatebot.emulator import EmulatorServer, running
from estatebot.listings import write_frame

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
WEEK2 = ("plan", str(SAMPLES / "mls_export_week2.xlsx"), "--default", "CurrencySymbol=$")


@pytest.fixture
def market() -> Iterator[EmulatorServer]:
    with running(seed="demo") as server:
        yield server


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("ESTATEBOT_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"the output differs from {path}"


# --------------------------------------------------------------------------- golden files


def test_the_week2_plan_reads_as_the_golden_file(market: EmulatorServer) -> None:
    done = run_cli(market, *WEEK2, "--delete-missing", "--out", "plan.json", "--detailed-exitcode")
    assert done.code == 2, done.text
    assert done.err == ""
    assert not [line for line in done.out.splitlines() if line != line.rstrip()]
    check_golden("plan_week2.txt", done.out)


def test_held_back_and_invalid_rows_read_as_the_golden_file(market: EmulatorServer) -> None:
    pitfalls = str(SAMPLES / "mls_export_pitfalls.xlsx")
    done = run_cli(
        market, "plan", pitfalls, "--default", "CurrencySymbol=$", "--out", "p.json",
        "--detailed-exitcode",
    )  # fmt: skip
    assert done.code == 3, done.text
    check_golden("plan_pitfalls.txt", done.out)


# --------------------------------------------------------------------------- colour


def on_a_terminal(args: tuple[str, ...], **env: str) -> str:
    """Run ``estatebot ARGS`` with its output on a terminal (a pty); what it printed."""
    leader, follower = pty.openpty()
    # A terminal of 100 x 50 (a new pty is 0 x 0, which progress bars take as no room at all).
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 100, 0, 0))
    settings = cli_env(None, **env)
    settings.pop("NO_COLOR")
    settings.update(env)
    child = subprocess.Popen(
        command(*args), env=settings, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
            elif child.poll() is not None:
                break
        child.wait(timeout=60)
    finally:
        os.close(leader)
        if child.poll() is None:
            child.kill()
    return seen.decode("utf-8", errors="replace")


COLOURS = ("\x1b[32m", "\x1b[33m", "\x1b[31m")  # green +, yellow ~, red -


def test_colour_on_a_terminal_and_never_with_no_color_or_in_a_pipe(
    market: EmulatorServer,
) -> None:
    env = {
        "ESTATEBOT_BASE_URL": market.base_url,
        "ESTATEBOT_API_KEY": market.api_key,
        "ESTATEBOT_SESSION_KEY": market.session_key,
        "ESTATEBOT_SERIAL": market.serial,
    }
    coloured = on_a_terminal(WEEK2, **env)
    assert "Plan: 8 create, 21 update, 4 delete" in coloured
    assert all(code in coloured for code in COLOURS), coloured[:500]

    plain = on_a_terminal(WEEK2, NO_COLOR="1", **env)
    assert "Plan: 8 create, 21 update, 4 delete" in plain
    assert not any(code in plain for code in COLOURS)

    piped = run_cli(market, *WEEK2, "--detailed-exitcode", env=cli_env(market, NO_COLOR=""))
    assert piped.code == 2, piped.text
    assert "\x1b" not in piped.out


def test_reading_a_sheet_shows_progress_on_a_terminal(market: EmulatorServer) -> None:
    env = {
        "ESTATEBOT_BASE_URL": market.base_url,
        "ESTATEBOT_API_KEY": market.api_key,
        "ESTATEBOT_SESSION_KEY": market.session_key,
        "ESTATEBOT_SERIAL": market.serial,
    }
    shown = on_a_terminal(WEEK2, ESTATEBOT_PROGRESS="1", **env)
    assert "Reading mls_export_week2.xlsx" in shown
    assert "Pulling listings" in shown
    hidden = on_a_terminal(WEEK2, ESTATEBOT_PROGRESS="0", **env)
    assert "Reading mls_export_week2.xlsx" not in hidden
    assert "Pulling listings" not in hidden
    assert "Plan: 8 create" in hidden


# --------------------------------------------------------------------------- progress


def test_progress_bars_follow_estatebot_progress_and_ci(market: EmulatorServer) -> None:
    args = ("pull", "--out", "listings.csv")
    quiet_ci = run_cli(market, *args, env=cli_env(market, CI="true", ESTATEBOT_PROGRESS=""))
    assert quiet_ci.code == 0, quiet_ci.text
    assert "Pulling listings" not in quiet_ci.err

    env = {k: v for k, v in cli_env(market).items() if k != "ESTATEBOT_PROGRESS"}
    shown = run_cli(market, *args, env=env)
    assert "Pulling listings" in shown.err

    asked = run_cli(market, *args, "--progress", env=cli_env(market, CI="true"))
    assert "Pulling listings" in asked.err  # the flag wins over the environment
    off = run_cli(market, *args, "--no-progress", env=env)
    assert "Pulling listings" not in off.err


# --------------------------------------------------------------------------- hostile text


def test_control_characters_in_listing_text_are_shown_escaped(tmp_path: Path) -> None:
    with running(seed="small") as small:
        with eb.Client(
            base_url=small.base_url, api_key=small.api_key, session_key=small.session_key
        ) as client:
            frame = eb.pull_listings(client, small.serial, progress=False)
        frame.loc[0, "Description"] = "Sunny\x1b[2J\x1b]0;owned\x07 and bright"
        frame.loc[1, "City"] = "Austin\r\nFAKE LINE"
        sheet = write_frame(frame, tmp_path / "hostile.csv")
        for extra in ({}, {"FORCE_COLOR": "1"}):
            done = run_cli(
                small, "plan", str(sheet), "--default", "AreaUnit=Square Feet",
                "--detailed-exitcode", env=cli_env(small, NO_COLOR="", **extra),
            )  # fmt: skip
            assert done.code == 2, done.text
            assert "\x1b[2J" not in done.out
            assert "\x1b]0" not in done.out
            assert "\x07" not in done.out
            assert "\\x1b[2J\\x1b]0;owned\\x07" in done.out
            assert "FAKE LINE" in done.out
            assert "\nFAKE LINE" not in done.out  # the line break is shown, not obeyed
