"""Every failure the command line reports ends with a hint that points the right way, in the
command line's terms: the flag or variable to fix, or to try again, never a Python argument and
never a remedy that cannot help (``--skip-failed-pages`` for a key the service refuses, "try
again" for a key that is not set).

Each row runs the real ``estatebot`` against the emulator over loopback HTTP, broken one way,
and reads the hint in its standard error. The library's warnings reach a person the same way:
one ``warning:`` line each, in the same terms, not Python's warning with a line of source.
"""

from __future__ import annotations

import random
import re
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import openpyxl
import pytest

import estatebot as eb
from clirun import cli_env, run_cli
from estatebot.emulator import EmulatorServer, running
from estatebot.emulator.faults import RateLimit
from factories import make_listing

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
SKIP_PAGES = "(pass --skip-failed-pages to keep the pages that did arrive)"
TRY_AGAIN = "(try again when the service answers)"
CHECK_BASE_URL = "check the base URL (set ESTATEBOT_BASE_URL)"
#: A Python keyword argument in a message (``serial=``, ``on_error='skip'``, ``api_key=``).
PYTHON_ARGUMENT = re.compile(r"\b[a-z][a-z_]*=")


@pytest.fixture
def market() -> Iterator[EmulatorServer]:
    """The demo market: 200 listings, so a pull reads two pages of 100."""
    with running(seed="demo") as server:
        yield server


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def without(*names: str) -> Callable[[EmulatorServer], dict[str, str]]:
    def env(server: EmulatorServer) -> dict[str, str]:
        made = cli_env(server)
        for name in names:
            del made[name]
        return made

    return env


def with_env(**values: str) -> Callable[[EmulatorServer], dict[str, str]]:
    return lambda server: cli_env(server, **values)


def closed_base_url(server: EmulatorServer) -> dict[str, str]:
    return cli_env(server, ESTATEBOT_BASE_URL=f"http://127.0.0.1:{closed_port()}")


def default_base_url(server: EmulatorServer) -> dict[str, str]:
    # The default is the real service: a proxy on a closed loopback port keeps the attempt on
    # this machine, and fails it as an unreachable service would.
    made = without("ESTATEBOT_BASE_URL")(server)
    proxy = f"http://127.0.0.1:{closed_port()}"
    made.update(HTTPS_PROXY=proxy, HTTP_PROXY=proxy, ALL_PROXY=proxy, NO_PROXY="")
    return made


def fail_after_page_1(server: EmulatorServer) -> None:
    server.faults.only = {"RealEstateList"}
    server.faults.spare_next = 1  # page 1 arrives
    server.faults.fail_rate = 1.0  # every later page (and every retry of it) gets a 500


def rate_limit_after_page_1(server: EmulatorServer) -> None:
    server.faults.only = {"RealEstateList"}
    # One page per hour: page 2's Retry-After is longer than the client waits, so it fails.
    server.faults.rate_limit = RateLimit(1, 3600)


def rate_limit_questions(server: EmulatorServer) -> None:
    server.faults.only = {"ClientAsk"}
    server.faults.rate_limit = RateLimit(1, 3600)
    with eb.Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    ) as client:
        client.chat.ask(client.chat.create_session(server.serial), "hello")  # the one slot


def rate_limit_message(server: EmulatorServer) -> str:
    chatbot = server.store.chatbot(server.serial)
    assert chatbot is not None
    return str(chatbot.settings["RateLimitMessage"])


@dataclass(frozen=True)
class Row:
    """One cause: the command run, how the world is broken, what the hint must and must not say."""

    args: tuple[str, ...]
    says: tuple[str | Callable[[EmulatorServer], str], ...]
    not_says: tuple[str, ...]
    env: Callable[[EmulatorServer], dict[str, str]] = cli_env
    faults: Callable[[EmulatorServer], None] | None = None


PULL = ("pull", "--out", "listings.csv")
SYNC = ("sync", str(SAMPLES / "mls_export.xlsx"))
ASK = ("ask", "homes in Austin")

ROWS: dict[str, Row] = {
    "unknown serial, pull": Row(
        (*PULL, "--serial", "deadbeef"),
        says=("(no chatbot 'deadbeef' for this key: check --serial / ESTATEBOT_SERIAL)",),
        not_says=("--skip-failed-pages", "try again"),
    ),
    "unknown serial, ask": Row(
        (*ASK, "--serial", "deadbeef"),
        says=("(no chatbot 'deadbeef' for this key: check --serial / ESTATEBOT_SERIAL)",),
        not_says=("--skip-failed-pages", "try again"),
    ),
    "missing API key": Row(
        ASK,
        env=without("ESTATEBOT_API_KEY"),
        says=("set ESTATEBOT_API_KEY",),
        not_says=("try again", "--skip-failed-pages"),
    ),
    "missing session key": Row(
        PULL,
        env=without("ESTATEBOT_SESSION_KEY"),
        says=("set ESTATEBOT_SESSION_KEY",),
        not_says=("try again", "--skip-failed-pages"),
    ),
    "refused session key": Row(
        PULL,
        env=with_env(ESTATEBOT_SESSION_KEY="not-the-session-key"),
        says=("HTTP 401", "set ESTATEBOT_SESSION_KEY with a valid key"),
        not_says=("--skip-failed-pages", "try again"),
    ),
    "refused API key": Row(
        ASK,
        env=with_env(ESTATEBOT_API_KEY="not-the-api-key"),
        says=("HTTP 401", "set ESTATEBOT_API_KEY with a valid key"),
        not_says=("--skip-failed-pages", "try again"),
    ),
    "closed port": Row(
        PULL,
        env=closed_base_url,
        says=("cannot reach 127.0.0.1:", CHECK_BASE_URL, TRY_AGAIN),
        not_says=("--skip-failed-pages",),
    ),
    "unresolvable host": Row(
        PULL,
        env=with_env(ESTATEBOT_BASE_URL="http://nosuch.invalid"),
        says=("cannot reach nosuch.invalid:80", CHECK_BASE_URL),
        not_says=("--skip-failed-pages",),
    ),
    "base URL not set": Row(
        PULL,
        env=default_base_url,
        says=("ESTATEBOT_BASE_URL is not set, so the default", "set ESTATEBOT_BASE_URL"),
        not_says=("--skip-failed-pages",),
    ),
    "500 on page 2, pull": Row(
        PULL, faults=fail_after_page_1, says=("page 2", SKIP_PAGES), not_says=("try again",)
    ),
    "500 on page 2, sync": Row(
        SYNC,
        faults=fail_after_page_1,
        says=("page 2", TRY_AGAIN),
        not_says=("--skip-failed-pages",),
    ),
    "429 on page 2, pull": Row(
        PULL,
        faults=rate_limit_after_page_1,
        says=("HTTP 429", rate_limit_message, SKIP_PAGES),
        not_says=("set ESTATEBOT_", "--serial"),
    ),
    "429 on a question": Row(
        ASK,
        faults=rate_limit_questions,
        says=("HTTP 429", rate_limit_message),
        not_says=("set ESTATEBOT_", "--serial", "--skip-failed-pages"),
    ),
}


@pytest.mark.parametrize("row", list(ROWS.values()), ids=list(ROWS))
def test_the_hint_points_the_right_way(market: EmulatorServer, row: Row) -> None:
    if row.faults is not None:
        row.faults(market)
    done = run_cli(market, *row.args, env=row.env(market))
    assert done.code == 1, done.text
    assert "Traceback" not in done.text
    error = [line for line in done.err.splitlines() if line.startswith("error: ")]
    assert len(error) == 1, done.err
    for phrase in row.says:
        expected = phrase(market) if callable(phrase) else phrase
        assert expected in error[0], f"{expected!r} missing from: {error[0]}"
    for phrase in row.not_says:
        assert phrase not in done.err, f"{phrase!r} misleads in: {error[0]}"
    assert not PYTHON_ARGUMENT.search(error[0]), f"a Python argument in: {error[0]}"


def test_pages_skipped_by_pull_are_one_warning_line(market: EmulatorServer) -> None:
    fail_after_page_1(market)
    done = run_cli(market, *PULL, "--skip-failed-pages")
    assert done.code == 0, done.text
    assert re.match(r"\d+ listings written to listings\.csv$", done.out.strip()), done.out
    warned = [line for line in done.err.splitlines() if line.strip()]
    assert warned == [
        "warning: 1 page(s) could not be fetched and were skipped: [2]; their listings are not "
        "in the file"
    ], done.err


def test_a_cell_made_safe_in_the_workbook_is_one_warning_line(
    empty_emulator: EmulatorServer,
) -> None:
    formula = '=HYPERLINK("https://phish.example","Click")'
    # A vertical tab inside (at the end it would be trimmed as space before it reached a cell).
    broken = formula.replace(",", ",\x0b")
    empty_emulator.add_listings(
        empty_emulator.serial,
        [
            # A formula's text with a character no cell can hold: the character goes, said so.
            make_listing(0, random.Random(0)) | {"Description": broken},
            # A formula's text alone is kept whole, as text: nothing to warn of.
            make_listing(1, random.Random(1)) | {"Description": "=1+1"},
        ],
    )
    done = run_cli(empty_emulator, "pull", "--out", "listings.xlsx")
    assert done.code == 0, done.text
    assert done.err.splitlines() == [
        "warning: listings.xlsx: 1 cell changed to fit a spreadsheet: row 2, Description: "
        "removed 1 character a cell cannot hold (U+000B)"
    ], done.err
    assert "CellWarning" not in done.text
    assert ".py:" not in done.text  # no line of our source

    sheet = openpyxl.load_workbook("listings.xlsx").active
    assert sheet is not None
    header = [cell.value for cell in sheet[1]]
    column = header.index("Description")
    descriptions = [row[column] for row in sheet.iter_rows(min_row=2)]
    assert sorted(str(cell.value) for cell in descriptions) == sorted([formula, "=1+1"])
    assert all(cell.data_type == "s" for cell in descriptions)  # text, never a formula
