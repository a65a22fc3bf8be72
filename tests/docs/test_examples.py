"""Every example of the README and the docs runs, twice in a row in one folder.

Each page gets a fresh emulator and a fresh folder holding `sample_data/`, with the environment
a reader of the page would have set (`estatebot serve` prints these lines): the service's
address, keys and chatbot serial, progress bars off, a state folder of its own. Then:

* its Python blocks run in order in one namespace (pytest-examples runs each block as a module
  and reports a failure at its line of the Markdown file), and the whole page runs again in the
  same folder, against the same service;
* every `estatebot` line of its shell blocks runs in bash, and must exit with the code the line
  claims (`# exits 5: ...`; 0 when it claims none), all of them twice in a row in one folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_examples import EvalExample

import estatebot as eb
from doc_blocks import (
    ROOT,
    blocks_not_run,
    page_id,
    pages,
    python_blocks,
    shell_commands,
)

#: The fleet the emulator of every page hosts (the fleets guide uses it).
FLEET_CHATBOTS = 3

PYTHON_PAGES = [page for page in pages() if python_blocks(page)]
SHELL_PAGES = [page for page in pages() if shell_commands(page)]


@pytest.fixture
def reader_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder as a reader's, beside a fresh emulator the environment names. The emulator
    also hosts a fleet of three chatbots, whose sample is in `fleet/`, as
    `estatebot serve --chatbots 3 --write-fleet fleet` leaves them (the fleets guide)."""
    from estatebot.sample.fleet_sample import write_fleet_sample

    folder = tmp_path / "reader"
    folder.mkdir()
    (folder / "sample_data").symlink_to(ROOT / "sample_data", target_is_directory=True)
    write_fleet_sample(folder / "fleet", chatbots=FLEET_CHATBOTS)
    with eb.emulator.running(chatbots=FLEET_CHATBOTS) as server:
        settings = {
            "ESTATEBOT_BASE_URL": server.base_url,
            "ESTATEBOT_API_KEY": server.api_key,
            "ESTATEBOT_SESSION_KEY": server.session_key,
            "ESTATEBOT_SERIAL": server.serial,
            "ESTATEBOT_PROGRESS": "0",
            "ESTATEBOT_STATE_DIR": str(tmp_path / "state"),
            "MPLBACKEND": "Agg",
        }
        for name, value in settings.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("ESTATEBOT_BLANK_UNKNOWN_LOCATION", raising=False)
        monkeypatch.chdir(folder)
        yield folder


def test_the_pages_hold_examples_that_run() -> None:
    # The collection below is not empty by accident: the front page and the guides run.
    names = {page_id(page) for page in PYTHON_PAGES}
    assert {"README.md", "docs/index.md", "docs/guides/sync.md"} <= names
    assert "docs/guides/chat-testing.md" in names
    assert {"README.md", "docs/guides/sync.md"} <= {page_id(page) for page in SHELL_PAGES}


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=page_id)
def test_python_examples_run_twice_in_one_folder(
    page: Path, reader_folder: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    examples = python_blocks(page)
    for attempt in (1, 2):
        runner = EvalExample(tmp_path=tmp_path / f"modules-{attempt}", pytest_request=request)
        (tmp_path / f"modules-{attempt}").mkdir()
        namespace: dict[str, Any] = {}
        for example in examples:
            failure = None
            try:
                found = runner.run(example, module_globals=namespace)
            except Exception as error:
                failure = _told(error)
            if failure is not None:
                # Reported at the block's line, outside the handler: pytest's own report of
                # an error inside the generated module cannot read that module's frames.
                where = f"{page_id(page)}:{example.start_line}"
                pytest.fail(
                    f"run {attempt}, the block at {where} failed:\n{failure}", pytrace=False
                )
            namespace = {k: v for k, v in found.items() if not k.startswith("__")}
        assert namespace, f"{page_id(page)}, run {attempt}: the examples defined nothing"


def _told(error: BaseException) -> str:
    """The error and the frames it passed (file and line), without reading their source."""
    frames = [
        f"  {frame.f_code.co_filename}:{line}"
        for frame, line in traceback.walk_tb(error.__traceback__)
    ]
    return "\n".join([*frames[-8:], f"{type(error).__name__}: {error}"])


def _run(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """``command`` in bash, in ``folder``, with this environment's ``estatebot`` first on PATH."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return subprocess.run(
        ["bash", "-c", command],
        cwd=folder,
        env={**os.environ, "PATH": path},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("page", SHELL_PAGES, ids=page_id)
def test_shell_examples_exit_as_claimed_twice_in_one_folder(
    page: Path, reader_folder: Path
) -> None:
    for attempt in (1, 2):
        for command in shell_commands(page):
            done = _run(command.command, reader_folder)
            assert done.returncode == command.claimed_exit, (
                f"run {attempt}: {command}\nexit {done.returncode}, claimed "
                f"{command.claimed_exit}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )


@pytest.mark.parametrize("page", pages(), ids=page_id)
def test_a_block_not_run_says_why(page: Path) -> None:
    for line, why in blocks_not_run(page):
        assert len(why.split()) >= 3, f"{page_id(page)}:{line}: say why it cannot run here"


@pytest.mark.parametrize("page", SHELL_PAGES, ids=page_id)
def test_no_shell_example_lets_the_shell_expand_a_dollar(page: Path) -> None:
    # "under $700k" in double quotes reaches the program as "under 00k": bash expands $7.
    for command in shell_commands(page):
        for quoted in re.findall(r'"([^"]*)"', command.command.split(" #", 1)[0]):
            assert "$" not in quoted, f"{command}: use single quotes around {quoted!r}"


def test_the_question_of_the_front_page_reaches_the_chatbot_whole(reader_folder: Path) -> None:
    (asked,) = [
        c for c in shell_commands(ROOT / "README.md") if c.command.startswith("estatebot ask")
    ]
    done = _run(asked.command, reader_folder)
    assert done.returncode == 0, done.stderr
    assert "at most $700,000" in done.stdout, done.stdout
