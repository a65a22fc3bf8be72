"""An emulator in a child process, for timings.

In the benchmark's own process the emulator's server thread and the code being measured would
share one interpreter lock, and on two cores the server's work would be counted against the
client. A child process serves instead: it loads the listings, prints how to reach it, and
serves until its standard input is closed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from estatebot.api.client import Client

_SERVE = """
import json, sys
from estatebot.emulator import running
with open(sys.argv[1], encoding="utf-8") as handle:
    bodies = json.load(handle)
only = set(filter(None, sys.argv[3].split(",")))
with running(seed=None) as server:
    server.add_listings(server.serial, bodies, validate=False)
    server.faults.only = only or None
    server.faults.latency_ms = float(sys.argv[2])
    print(json.dumps({"base_url": server.base_url, "api_key": server.api_key,
                      "session_key": server.session_key, "serial": server.serial}), flush=True)
    sys.stdin.read()
"""


@contextmanager
def emulator_process(
    bodies: list[dict[str, Any]],
    latency_ms: float,
    folder: Path,
    *,
    only: Sequence[str] = (),
) -> Iterator[dict[str, str]]:
    """An emulator holding ``bodies`` with ``latency_ms`` added to the ``only`` operations (all
    when empty); yields its ``base_url``, ``api_key``, ``session_key`` and ``serial``."""
    data = folder / "listings.json"
    data.write_text(json.dumps(bodies), encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, "-c", _SERVE, str(data), str(latency_ms), ",".join(only)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        yield json.loads(child.stdout.readline())
    finally:
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def client_of(server: dict[str, str], **options: Any) -> Client:
    """A client of the emulator that :func:`emulator_process` yielded, with ``options``."""
    return Client(
        base_url=server["base_url"],
        api_key=server["api_key"],
        session_key=server["session_key"],
        **options,
    )
