"""The workflow notebooks: how they are stored, and how their first cell connects.

nbval runs the notebooks themselves (``pytest --nbval-lax --nbval-current-env notebooks/``); these
tests check what nbval cannot: the notebooks are committed without run outputs (except the expected
outputs of the ``# NBVAL_CHECK_OUTPUT`` cells), and the first code cell starts a local emulator
when ``ESTATEBOT_BASE_URL`` is unset and uses the configured service when it is set.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import nbformat
import pytest

from estatebot.emulator import DEMO_API_KEY, DEMO_SESSION_KEY, EmulatorServer

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = (
    "01_sync_mls_spreadsheet.ipynb",
    "02_chatbot_testing.ipynb",
    "03_stale_cleanup.ipynb",
    "04_chatbot_settings.ipynb",
)
#: The notebook of a fleet: stored like the others; its first cell hosts a fleet, not a chatbot.
FLEET_NOTEBOOK = "05_fleet.ipynb"
STORED = (*NOTEBOOKS, FLEET_NOTEBOOK)
CHECK_MARKER = "# NBVAL_CHECK_OUTPUT"
ENV_NAMES = ("ESTATEBOT_BASE_URL", "ESTATEBOT_API_KEY", "ESTATEBOT_SESSION_KEY", "ESTATEBOT_SERIAL")


def _read(name: str) -> Any:
    return nbformat.read(NOTEBOOKS_DIR / name, as_version=4)


def _code_cells(notebook: Any) -> list[Any]:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def _is_checked(cell: Any) -> bool:
    return CHECK_MARKER in cell.source.splitlines()[:1]


@contextlib.contextmanager
def _first_cell_run(name: str) -> Iterator[dict[str, Any]]:
    """Run the notebook's first code cell as the kernel would (cwd = notebooks/); yield its names.

    Whatever the cell started is closed afterwards through its ``resources`` stack.
    """
    source = _code_cells(_read(name))[0].source
    namespace: dict[str, Any] = {"__name__": "__main__"}
    # A first cell may export the service it started (the fleet's does, for its workers): the
    # variables are put back as they were, so no later test of this process sees them.
    with mock.patch.dict(os.environ):
        try:
            exec(compile(source, f"{name}:first cell", "exec"), namespace)
            yield namespace
        finally:
            resources = namespace.get("resources")
            if resources is not None:
                resources.close()


def test_every_workflow_notebook_is_there() -> None:
    found = sorted(path.name for path in NOTEBOOKS_DIR.glob("*.ipynb"))
    assert found == sorted(STORED)


@pytest.mark.parametrize("name", STORED)
def test_notebook_is_valid_and_opens_with_a_markdown_introduction(name: str) -> None:
    notebook = _read(name)
    nbformat.validate(notebook)
    assert notebook.cells[0].cell_type == "markdown"
    assert notebook.cells[0].source.startswith("# ")
    assert notebook.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("name", STORED)
def test_notebook_has_no_stored_outputs_except_its_checked_cells(name: str) -> None:
    for number, cell in enumerate(_code_cells(_read(name))):
        if _is_checked(cell):
            continue
        assert cell.outputs == [], f"{name} code cell {number} has stored outputs"
        assert cell.execution_count is None, f"{name} code cell {number} has an execution count"


@pytest.mark.parametrize("name", STORED)
def test_checked_cells_exist_and_hold_their_expected_output(name: str) -> None:
    checked = [cell for cell in _code_cells(_read(name)) if _is_checked(cell)]
    assert checked, f"{name} has no {CHECK_MARKER} cell"
    for cell in checked:
        # nbval compares only cells whose reference was run, so the count must be set.
        assert cell.execution_count is not None
        assert cell.outputs, f"{name}: a checked cell without its expected output"
        for output in cell.outputs:
            assert output.output_type == "stream", output
            assert output.name == "stdout", output
            assert output.text.strip()


@pytest.mark.parametrize("name", STORED)
def test_no_error_outputs_and_no_keys(name: str) -> None:
    for cell in _code_cells(_read(name)):
        for output in cell.outputs:
            assert output.output_type != "error"
            assert output.get("name") != "stderr"
            assert DEMO_API_KEY not in str(output)
            assert DEMO_SESSION_KEY not in str(output)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_first_cell_starts_the_emulator_when_no_service_is_configured(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for variable in ENV_NAMES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(NOTEBOOKS_DIR)
    with _first_cell_run(name) as namespace:
        server = namespace["server"]
        assert isinstance(server, EmulatorServer)
        assert namespace["client"].base_url == server.base_url
        assert namespace["serial"] == server.serial
        assert namespace["ROOT"] == NOTEBOOKS_DIR.parent
        listings = namespace["client"].listings.list_page(namespace["serial"], page_size=1)
        assert listings.virtual_count == 200  # a fresh demo chatbot
    printed = capsys.readouterr().out
    assert "ESTATEBOT_BASE_URL is not set: started the local emulator" in printed
    assert server.api_key not in printed
    assert server.session_key not in printed


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_first_cell_uses_the_configured_service(
    name: str,
    emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ESTATEBOT_BASE_URL", emulator.base_url)
    monkeypatch.setenv("ESTATEBOT_API_KEY", emulator.api_key)
    monkeypatch.setenv("ESTATEBOT_SESSION_KEY", emulator.session_key)
    monkeypatch.setenv("ESTATEBOT_SERIAL", emulator.serial)
    monkeypatch.chdir(NOTEBOOKS_DIR)
    with _first_cell_run(name) as namespace:
        assert "server" not in namespace  # no emulator of its own
        assert namespace["client"].base_url == emulator.base_url
        assert namespace["serial"] == emulator.serial
        namespace["client"].listings.list_page(namespace["serial"], page_size=1)
    printed = capsys.readouterr().out
    assert f"Using the service at {emulator.base_url}" in printed
    assert emulator.api_key not in printed
    assert emulator.session_key not in printed


def test_the_fleet_notebook_hosts_a_fleet_when_no_service_is_configured(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for variable in ENV_NAMES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(NOTEBOOKS_DIR)
    with _first_cell_run(FLEET_NOTEBOOK) as namespace:
        server = namespace["server"]
        assert isinstance(server, EmulatorServer)
        assert len(server.serials) == namespace["CHATBOTS"]
        assert namespace["sample"].serials == server.serials
        assert (namespace["folder"] / "manifest.xlsx").is_file()
    printed = capsys.readouterr().out
    assert f"with a fleet of {len(server.serials)} chatbots" in printed
    assert server.api_key not in printed


def test_the_fleet_notebook_uses_the_configured_service(
    emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ESTATEBOT_BASE_URL", emulator.base_url)
    monkeypatch.setenv("ESTATEBOT_API_KEY", emulator.api_key)
    monkeypatch.setenv("ESTATEBOT_SESSION_KEY", emulator.session_key)
    monkeypatch.chdir(NOTEBOOKS_DIR)
    with _first_cell_run(FLEET_NOTEBOOK) as namespace:
        assert "server" not in namespace  # no emulator of its own
    printed = capsys.readouterr().out
    assert f"Using the service at {emulator.base_url}" in printed
    assert emulator.api_key not in printed
