"""Fixtures of the foreign-server tests.

* ``server``: a running :class:`~foreign.server.ForeignServer` with one empty chatbot (plus a
  second workspace's chatbot that the keys must not see). Parametrize it indirectly with a
  :class:`~foreign.variant.Variant` (``@pytest.mark.parametrize("server", [...],
  indirect=True)``), or assign ``server.variant`` inside the test.
* ``client`` / ``aclient``: an ``estatebot.Client`` / ``AsyncClient`` for it, with quick retries.

Every test runs in its own temporary folder, so a backup written without a path never lands in
the repository, and with progress bars off.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

import estatebot as eb
from foreign.helpers import aclient_for, client_for
from foreign.server import ForeignServer
from foreign.variant import Variant


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ESTATEBOT_PROGRESS", "0")
    # The server's listings hold no Location (List never returns one): an update sends it empty
    # (the default, which holds such updates back, is tested against the emulator).
    monkeypatch.setenv("ESTATEBOT_BLANK_UNKNOWN_LOCATION", "1")


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[ForeignServer]:
    """A running foreign server; ``request.param`` (a Variant), when given, sets its behaviour."""
    variant = getattr(request, "param", None)
    assert variant is None or isinstance(variant, Variant)
    with ForeignServer(variant) as running:
        yield running


@pytest.fixture
def client(server: ForeignServer) -> Iterator[eb.Client]:
    """A blocking client for ``server``."""
    with client_for(server) as blocking:
        yield blocking


@pytest.fixture
async def aclient(server: ForeignServer) -> AsyncIterator[eb.AsyncClient]:
    """An async client for ``server``."""
    async with aclient_for(server) as awaiting:
        yield awaiting
