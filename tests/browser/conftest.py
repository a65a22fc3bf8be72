"""Fixtures for end-to-end tests in a real browser: the emulator, JupyterLab and Chromium.

JupyterLab runs as a subprocess on 127.0.0.1 with a token; its kernels inherit the
``ESTATEBOT_*`` variables, so a notebook's ``Client()`` talks to the in-process emulator. Every
process started here is stopped in a ``finally``.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from estatebot.emulator import running

CHROMIUM = Path("/usr/bin/chromium")
# The flags known to work for headless Chromium on these machines (see DESIGN.md).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
JUPYTER = Path(sys.executable).with_name("jupyter")
LAB_START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Lab:
    """A running JupyterLab: where it listens, its token and the folder it serves."""

    url: str
    token: str
    root: Path

    def page(self, path: str) -> str:
        """The browser address of ``path`` (under ``/lab/tree``), token included."""
        return f"{self.url}/lab/tree/{path}?token={self.token}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, token: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=2) as response:
        return int(response.status)


def _wait_for_lab(proc: subprocess.Popen[bytes], url: str, token: str, log: Path) -> None:
    deadline = time.monotonic() + LAB_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"JupyterLab exited early:\n{log.read_text()[-3000:]}")
        try:
            if _get(f"{url}/api/status", token) == 200:
                return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"JupyterLab did not start in time:\n{log.read_text()[-3000:]}")


def _stop_lab(proc: subprocess.Popen[bytes], url: str, token: str) -> None:
    # Ask the server to shut down (it stops its kernels too), then make sure it is gone.
    if proc.poll() is None:
        try:
            request = urllib.request.Request(
                f"{url}/api/shutdown", method="POST", headers={"Authorization": f"token {token}"}
            )
            urllib.request.urlopen(request, timeout=5).close()
        except (urllib.error.URLError, OSError):
            proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


@pytest.fixture(scope="module")
def chat_emulator() -> Iterator[Any]:
    """The demo emulator, streaming slowly enough for the answer to arrive in visible steps."""
    with running(seed="small", stream_delay_ms=15) as server:
        yield server


@pytest.fixture(scope="module")
def lab(chat_emulator: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab serving a fresh folder, with the emulator's address and keys in its env."""
    base = tmp_path_factory.mktemp("lab")
    root = base / "notebooks"
    root.mkdir()
    token = secrets.token_hex(16)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "ESTATEBOT_BASE_URL": chat_emulator.base_url,
        "ESTATEBOT_API_KEY": chat_emulator.api_key,
        "ESTATEBOT_SESSION_KEY": chat_emulator.session_key,
        "ESTATEBOT_PROGRESS": "0",
        # Keep Jupyter's and IPython's state out of the user's home.
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "IPYTHONDIR": str(base / "ipython"),
        "PATH": f"{JUPYTER.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    settings = base / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # No news check (no network here) and no prompt asking about it over the page.
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    command = [
        str(JUPYTER),
        "lab",
        "--no-browser",
        f"--IdentityProvider.token={token}",
        "--ServerApp.ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={base / 'settings'}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
        # Nothing here may reach the network: no extension catalogue, no terminals.
        "--LabApp.extension_manager=readonly",
        "--ServerApp.terminals_enabled=False",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # containers often run as root
    log = base / "lab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=root)
    try:
        _wait_for_lab(proc, url, token, log)
        yield Lab(url=url, token=token, root=root)
    finally:
        _stop_lab(proc, url, token)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium (the system's), through Playwright."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (install the chromium package)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()
