"""nbval hooks: every notebook runs against its own fresh emulator.

Run the notebooks with::

    .venv/bin/pytest --nbval-lax --nbval-current-env -p no:cacheprovider notebooks/

Why it is done this way:

* pytest fixtures never reach a notebook: each notebook runs in its own kernel, a separate
  process that inherits the environment of the pytest process **when it is launched**. The only
  channel is therefore ``os.environ``: ``ESTATEBOT_BASE_URL``, ``ESTATEBOT_API_KEY``,
  ``ESTATEBOT_SESSION_KEY`` and ``ESTATEBOT_SERIAL``. A notebook's first cell uses them when
  ``ESTATEBOT_BASE_URL`` is set (and starts its own emulator when it is not, for a user).
* The notebooks change the demo chatbot (apply a sync, delete stale listings, edit settings), so
  each needs a fresh one, not one left behind by the notebook before it.
* nbval launches a notebook's kernel in ``IPyNbFile.setup()``, which pytest's setup of the
  notebook's **first cell** triggers (the file is the cell's parent collector). The
  ``pytest_runtest_setup`` hook below is ``tryfirst``: it runs before pytest's own setup of that
  first cell, so it can stop the previous notebook's emulator (whose kernel was already stopped in
  the previous cell's teardown), start a fresh ``eb.emulator.running()`` in this process and
  export its address before the kernel is launched. The emulator serves from a background thread
  of the pytest process; the kernel reaches it over loopback.
* After a notebook's last cell (whose teardown stops the kernel) the emulator is stopped and the
  original ``ESTATEBOT_*`` values come back, so tests collected in the same session after the
  notebooks see the environment they expect.
* The environment is always pointed at a fresh emulator here, whatever ``ESTATEBOT_*`` values the
  shell had, so running the notebooks from pytest never changes a real chatbot.
* Progress bars are turned off (``ESTATEBOT_PROGRESS=0``; ``TQDM_DISABLE`` does not reach notebook
  bars) so cell outputs stay small and stable.

With ``--nbval-lax`` only the cells marked ``# NBVAL_CHECK_OUTPUT`` are compared with their
stored outputs; every other cell must just run without an error.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Generator
from typing import Any

import pytest

from estatebot.emulator import EmulatorServer, running

_EXPORTED = (
    "ESTATEBOT_BASE_URL",
    "ESTATEBOT_API_KEY",
    "ESTATEBOT_SESSION_KEY",
    "ESTATEBOT_SERIAL",
    "ESTATEBOT_PROGRESS",
    "ESTATEBOT_STATE_DIR",
)


class _PerNotebookEmulator:
    """The emulator of the notebook being run, and the environment as it was before."""

    def __init__(self) -> None:
        self.notebook: Any = None
        self.stack: contextlib.ExitStack | None = None
        self.saved = {name: os.environ.get(name) for name in _EXPORTED}

    def start_for(self, notebook: Any) -> None:
        self.stop()
        self.notebook = notebook
        self.stack = contextlib.ExitStack()
        # The demo chatbot, and the fleet of six chatbots 05_fleet.ipynb syncs.
        server: EmulatorServer = self.stack.enter_context(running(seed="demo", chatbots=6))
        os.environ.update(
            {
                "ESTATEBOT_BASE_URL": server.base_url,
                "ESTATEBOT_API_KEY": server.api_key,
                "ESTATEBOT_SESSION_KEY": server.session_key,
                "ESTATEBOT_SERIAL": server.serial,
                "ESTATEBOT_PROGRESS": "0",
                # The record of values sent, kept with this run, never in the user's folder.
                "ESTATEBOT_STATE_DIR": tempfile.mkdtemp(prefix="estatebot-state-"),
            }
        )

    def stop(self) -> None:
        if self.stack is not None:
            self.stack.close()
        self.stack = None
        self.notebook = None
        self.restore_environment()

    def restore_environment(self) -> None:
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


_state = _PerNotebookEmulator()


def _is_notebook_cell(item: pytest.Item) -> bool:
    return item.parent is not None and str(item.parent.path).endswith(".ipynb")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before a notebook's first cell (and so before its kernel starts): a fresh emulator."""
    if _is_notebook_cell(item) and item.parent is not _state.notebook:
        _state.start_for(item.parent)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    """After a notebook's last cell and its kernel's shutdown: stop its emulator."""
    try:
        return (yield)
    finally:
        last_cell = nextitem is None or nextitem.parent is not item.parent
        if last_cell and item.parent is _state.notebook:
            _state.stop()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Whatever happened, nothing is left running and the environment is as it was."""
    _state.stop()
