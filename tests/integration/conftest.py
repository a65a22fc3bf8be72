"""Fixtures for tests that talk to a real emulator over loopback HTTP.

* ``emulator`` — a fresh :class:`estatebot.emulator.EmulatorServer` per test, seeded with the
  demo workspace and its 16 small-seed listings (``running(seed="small")``): ``.base_url``,
  ``.api_key``, ``.session_key``, ``.serial`` (the demo chatbot "Sunny Homes"), live
  ``.faults``, ``.request_counts``, and ``add_workspace()`` / ``add_chatbot()`` /
  ``add_listings()`` to build more state.
* ``empty_emulator`` — the same with the demo workspace and chatbot but no listings
  (``running(seed=None)``).
* ``client`` — a :class:`estatebot.Client` of ``emulator`` with its keys, closed after the test
  (a module may define its own, with other options).

Each server starts in a few milliseconds on a free port and stops at the end of its test, so
tests never share state. Change faults or options on the server object inside a test; they
die with it.

The emulator's seeded listings hold no Location, and List never returns one: every test here
runs as a brokerage whose chatbots never use Location (``ESTATEBOT_BLANK_UNKNOWN_LOCATION=1``),
so an update sends it empty. The tests of the default, which holds such an update back, unset it
(``tests/integration/test_unknown_location.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from estatebot.api.client import Client
from estatebot.emulator import EmulatorServer, running


@pytest.fixture(autouse=True)
def _no_location_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ESTATEBOT_BLANK_UNKNOWN_LOCATION", "1")


@pytest.fixture
def emulator() -> Iterator[EmulatorServer]:
    """A running emulator with the demo workspace and the 16 small-seed listings."""
    with running(seed="small") as server:
        yield server


@pytest.fixture
def empty_emulator() -> Iterator[EmulatorServer]:
    """A running emulator with the demo workspace and chatbot but no listings."""
    with running(seed=None) as server:
        yield server


@pytest.fixture
def client(emulator: EmulatorServer) -> Iterator[Client]:
    """A client of ``emulator`` with the demo keys."""
    with Client(
        base_url=emulator.base_url, api_key=emulator.api_key, session_key=emulator.session_key
    ) as made:
        yield made
