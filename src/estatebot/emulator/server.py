"""Run the emulator: in a background thread for tests and notebooks, or in the foreground.

`running` is a context manager yielding an `EmulatorServer` on a free loopback port;
it starts in well under a second and stops cleanly on exit. `serve` blocks and prints the
base URL, the demo credentials (they are the emulator's public demo values, not secrets) and the
faults in effect.

Faults can be set when it starts (`latency_ms`, `fail_rate`, `hallucinate_rate`,
`rate_limit`, and the option `stream_delay_ms`) or changed while it runs, on
`server.faults` (`Faults`):

```python
server.faults.latency_ms = 200
server.faults.rate_limit = (5, 10)   # 5 requests per chatbot in any 10 s, then 429
server.faults.rate_limit = None      # off
server.stream_delay_ms = 50
```
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from os import PathLike
from typing import Any

import uvicorn

from estatebot.api.models import ChatbotSettings

from .app import Emulator, create_app
from .body_size import DEFAULT_MAX_BODY_BYTES, check_limit
from .faults import Faults, RateLimit
from .fleet_seed import FleetSeed, check_fleet_size, load_fleet
from .hallucinate import Falsification
from .seed import (
    DEMO_API_KEY,
    DEMO_SERIAL,
    DEMO_SESSION_KEY,
    SeedSpec,
    load_seed,
    validated_listings,
)
from .store import DEFAULT_CHATBOT_SETTINGS, Store, Workspace
from .streaming import Framing, check_framing

_STARTUP_TIMEOUT_S = 10.0
_CUT_REPLY_LOG = "ASGI callable returned without completing response."


class _QuietDrops(logging.Filter):
    """Hide the server's note about a reply cut short: injected drops do it on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != _CUT_REPLY_LOG


def _quiet_drops() -> None:
    server_log = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _QuietDrops) for f in server_log.filters):
        server_log.addFilter(_QuietDrops())


@dataclass
class EmulatorServer:
    """A running emulator: where it listens, the demo credentials, and live controls.

    `faults` and the options (`framing`, `max_page_size`, `stream_delay_ms`,
    `max_body_bytes`) can be changed at any time; `request_counts[operation]` counts the
    requests each operation got; `emulator.in_flight` and `emulator.peak_in_flight` count the
    requests being handled at once. `running` makes it.

    Attributes:
        base_url: where it listens, `http://127.0.0.1:<port>`.
        store: the emulator's database.
        emulator: the app's state: faults, options, request counts.
        api_key: the demo workspace's API key (a public demo value, not a secret).
        session_key: the demo workspace's session key (a public demo value, not a secret).
        serial: the demo chatbot's serial.
        serials: the fleet chatbots' serials (`fleet_serials(chatbots)`), in the demo
            workspace besides the demo chatbot; empty without a fleet.
    """

    base_url: str
    store: Store
    emulator: Emulator
    api_key: str = DEMO_API_KEY
    session_key: str = DEMO_SESSION_KEY
    serial: str = DEMO_SERIAL
    serials: list[str] = field(default_factory=list)

    def __repr__(self) -> str:
        return f"EmulatorServer(base_url={self.base_url!r}, serial={self.serial!r})"

    @property
    def faults(self) -> Faults:
        """The live fault settings."""
        return self.emulator.faults

    @property
    def falsified(self) -> dict[int, Falsification]:
        """The answers the hallucination fault falsified, by message ID, with what each
        misstates (the ground truth a fact-checker is measured against)."""
        return self.emulator.falsified

    @property
    def request_counts(self) -> Counter[str]:
        """Requests received per operation name (`"RealEstateList"`, ...); 0 when none."""
        return self.emulator.request_counts

    @property
    def framing(self) -> Framing:
        """The stream framing: `"sse"`, `"ndjson"` or `"concatenated"`."""
        return self.emulator.options.framing

    @framing.setter
    def framing(self, value: Framing | str) -> None:
        self.set_framing(value)

    def set_framing(self, framing: Framing | str) -> None:
        """Change the stream framing for the next streamed answers.

        Args:
            framing: `"sse"`, `"ndjson"` or `"concatenated"`.

        Raises:
            ValueError: `framing` is none of these.
        """
        self.emulator.options.framing = check_framing(framing)

    @property
    def max_page_size(self) -> int:
        """The RealEstateList page-size cap."""
        return self.emulator.options.max_page_size

    @max_page_size.setter
    def max_page_size(self, value: int) -> None:
        self.emulator.options.max_page_size = value

    @property
    def stream_delay_ms(self) -> float:
        """The pause between streamed objects."""
        return self.emulator.options.stream_delay_ms

    @stream_delay_ms.setter
    def stream_delay_ms(self, value: float) -> None:
        self.emulator.options.stream_delay_ms = value

    @property
    def max_body_bytes(self) -> int:
        """The largest request body accepted; a larger one gets a 413."""
        return self.emulator.options.max_body_bytes

    @max_body_bytes.setter
    def max_body_bytes(self, value: int) -> None:
        self.emulator.options.max_body_bytes = check_limit(value)

    def add_workspace(self) -> Workspace:
        """A new workspace with random credentials.

        Returns:
            The workspace, with its `api_key`, `session_key` and `id`.
        """
        return self.store.add_workspace()

    def add_chatbot(self, workspace: Workspace | str, **settings: Any) -> str:
        """A new chatbot in a workspace (or the workspace of an API key); returns its serial.

        `settings` are Edit field names (validated like an Edit body); the rest default to
        the store's defaults.

        Args:
            workspace: the workspace, or its API key.
            **settings: the chatbot's settings by Edit field name (`Name=...`).

        Returns:
            The new chatbot's serial.

        Raises:
            ValueError: no workspace has the API key given, or a setting is invalid (a
                pydantic `ValidationError`, which is a `ValueError`).
        """
        if isinstance(workspace, Workspace):
            workspace_id: int | None = workspace.id
        else:
            workspace_id = self.store.workspace_by_api_key(workspace)
        if workspace_id is None:
            raise ValueError("no workspace has this API key")
        checked = ChatbotSettings.model_validate({"serialNumber": "x", **settings})
        given = checked.model_dump(mode="json", exclude_none=True, exclude={"serial_number"})
        return self.store.add_chatbot(workspace_id, {**DEFAULT_CHATBOT_SETTINGS, **given})

    def add_listings(
        self, serial: str, listings: Iterable[Mapping[str, Any]], *, validate: bool = True
    ) -> list[int]:
        """Bulk-insert Create bodies (without SerialNumber) into a chatbot; returns their IDs.

        With `validate` (the default) each body is checked with `ListingInput` (lax mode,
        about 10 µs a listing); pass `validate=False` for bodies known to be valid.
        Raises `ValueError` for an invalid body and `ListingConflict` for a duplicate MLS
        number or URL; either way nothing is inserted.

        Args:
            serial: the chatbot's serial.
            listings: the Create bodies, without `SerialNumber`.
            validate: check each body first; False stores them as given.

        Returns:
            The new listings' IDs, in the order of `listings`.

        Raises:
            ValueError: a body is invalid (names its position); only with `validate`.
            ListingConflict: an MLS number or URL is already taken on the chatbot, or repeats
                among `listings`.
        """
        items = list(listings)
        stored = validated_listings(items, serial) if validate else items
        return self.store.add_listings(serial, stored)


def _bind_socket(host: str, port: int) -> socket.socket:
    # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY on accepted connections only for a
    # socket whose proto says TCP, and without it every keep-alive request waits ~40 ms (Nagle).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def _build(
    db: str | PathLike[str],
    seed: SeedSpec | FleetSeed,
    latency_ms: float,
    fail_rate: float,
    framing: Framing | str,
    max_page_size: int,
    stream_delay_ms: float,
    max_body_bytes: int,
    hallucinate_rate: float = 0.0,
    fault_seed: int | None = 0,
    rate_limit: RateLimit | tuple[int, float] | None = None,
    chatbots: int = 0,
    listings_per_chatbot: int = 20,
    fleet_seed: int = 0,
) -> tuple[Store, Emulator, Any, list[str]]:
    if not 0.0 <= hallucinate_rate <= 1.0:
        raise ValueError(f"hallucinate_rate must be between 0 and 1, got {hallucinate_rate}")
    # Checked before the store is made: a bad limit or fleet size leaves no database file.
    limit = RateLimit.of(rate_limit)
    if isinstance(seed, FleetSeed):
        if chatbots not in (0, seed.chatbots):
            raise ValueError(
                f"seed=FleetSeed({seed.chatbots}) and chatbots={chatbots} disagree: give one"
            )
        chatbots, listings_per_chatbot = seed.chatbots, seed.listings_per_chatbot
        fleet_seed, seed = seed.fleet_seed, seed.demo
    check_fleet_size(chatbots, listings_per_chatbot)
    store = Store(str(db))
    load_seed(store, seed)
    workspace = store.workspace_by_api_key(DEMO_API_KEY)
    assert workspace is not None  # load_seed made it
    serials = load_fleet(store, workspace, chatbots, listings_per_chatbot, fleet_seed)
    faults = Faults(
        latency_ms=latency_ms,
        fail_rate=fail_rate,
        hallucinate_rate=hallucinate_rate,
        seed=fault_seed,
        rate_limit=limit,
    )
    app = create_app(
        store,
        faults,
        framing,
        max_page_size=max_page_size,
        stream_delay_ms=stream_delay_ms,
        max_body_bytes=max_body_bytes,
    )
    return store, app.state.emulator, app, serials


def _faults_shown(emulator: Emulator) -> list[str]:
    """The banner's lines on faults: each one in effect (with the fault seed when any is drawn
    at random), or that there are none."""
    faults = emulator.faults
    shown = faults.in_effect()
    delay = emulator.options.stream_delay_ms
    if delay:
        shown.append(f"{delay:g} ms between the objects of a streamed answer")
    if not shown:
        return ["faults: none"]
    drawn = faults.fail_rate or faults.drop_rate or faults.hallucinate_rate
    seed = [f"fault seed {faults.seed}"] if drawn else []
    return ["faults:", *(f"  {line}" for line in [*shown, *seed])]


#: How many fleet serials the banner shows.
_SERIALS_SHOWN = 3


def _fleet_shown(serials: list[str], listings_per_chatbot: int, fleet_seed: int) -> list[str]:
    """The banner's lines on the fleet: its size, its first serials, and where to get them all
    (none without a fleet)."""
    if not serials:
        return []
    n = len(serials)
    more = f", ... ({n - _SERIALS_SHOWN} more)" if n > _SERIALS_SHOWN else ""
    seed = f" --seed {fleet_seed}" if fleet_seed else ""
    return [
        f"Fleet: {n} chatbots with {listings_per_chatbot} listings each in the demo workspace "
        "(same keys), besides the demo chatbot:",
        f"  serials {', '.join(serials[:_SERIALS_SHOWN])}{more}",
        f"  all of them: estatebot.emulator.fleet_serials({n}), or their manifest and sheets with",
        f"  python -m estatebot.sample.fleet_sample FOLDER --chatbots {n} "
        f"--listings-per-chatbot {listings_per_chatbot}{seed}",
    ]


@contextmanager
def running(
    *,
    seed: SeedSpec | FleetSeed = "demo",
    db: str | PathLike[str] = ":memory:",
    latency_ms: float = 0,
    fail_rate: float = 0.0,
    framing: Framing | str = "sse",
    max_page_size: int = 100,
    stream_delay_ms: float = 0,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    port: int = 0,
    hallucinate_rate: float = 0.0,
    fault_seed: int | None = 0,
    rate_limit: RateLimit | tuple[int, float] | None = None,
    chatbots: int = 0,
    listings_per_chatbot: int = 20,
    fleet_seed: int = 0,
) -> Iterator[EmulatorServer]:
    """Serve the emulator on 127.0.0.1 in a background thread for the `with` block.

    `seed`: `"demo"` (demo workspace with the 200 sample-market listings), `"small"`
    (demo workspace with 16 hand-written listings), None (demo workspace, no listings) or a
    path to a JSON list of Create bodies (see `estatebot.emulator.seed`). `max_body_bytes`
    caps a request body (a larger one gets a 413). `port=0` picks a free port. The server
    accepts connections when the block starts and is stopped at its end.

    `hallucinate_rate` is the share of answers listing homes that misstate one listing (a
    wrong price or bedroom count, or a listing the chatbot does not have), drawn from
    `fault_seed` and each question's text: the same seed falsifies the same answers.
    `server.falsified` records each one by message ID. `rate_limit` (`(count, seconds)`)
    admits at most `count` requests per chatbot in any `seconds` (see
    `estatebot.emulator.faults`).

    `chatbots` adds a fleet to the demo workspace, besides the demo chatbot (which stays as it
    is): chatbots with the serials `fleet_serials(chatbots)` (`server.serials`), named
    `Agent 001 Homes`, ..., with `listings_per_chatbot` listings each, drawn from `fleet_seed`
    (see `estatebot.emulator.fleet_seed`; `estatebot.sample.fleet_sample` writes the matching
    spreadsheets and manifest). 100 chatbots of 2,000 listings load in a few seconds.

    Args:
        seed: the listings of the demo chatbot: `"demo"`, `"small"`, None or a path, as above;
            or a `FleetSeed(N)`, which also hosts a fleet of N chatbots (as `chatbots=N`).
        db: the SQLite database: `":memory:"` (the default) or a file path; the seed's
            listings are loaded only when the demo chatbot has none.
        latency_ms: a delay added before each request is handled, in milliseconds.
        fail_rate: the share of requests answered with an HTTP 500 envelope (0 to 1).
        framing: the stream framing: `"sse"`, `"ndjson"` or `"concatenated"`.
        max_page_size: the most listings a RealEstateList page returns.
        stream_delay_ms: the pause between the objects of a streamed answer, in milliseconds.
        max_body_bytes: the largest request body accepted, in bytes.
        port: the loopback port; 0 picks a free one.
        hallucinate_rate: the share of answers listing homes that misstate one (0 to 1).
        fault_seed: the seed of the faults' random draws; the same seed repeats a run.
        rate_limit: `(count, seconds)` or a `RateLimit`; None for no limit.
        chatbots: how many fleet chatbots to add besides the demo chatbot (0 to 9,999).
        listings_per_chatbot: the listings of each fleet chatbot (0 to 99,999).
        fleet_seed: the seed of the fleet's listings; the same seed, the same listings.

    Yields:
        The running server: its `base_url`, the demo credentials and the live controls.

    Raises:
        ValueError: `hallucinate_rate` is outside 0 to 1, `rate_limit` is not a positive
            `(count, seconds)`, `framing` is unknown, `max_body_bytes` is not positive,
            `chatbots` or `listings_per_chatbot` is out of range, or the seed file is not a
            JSON list of valid listings.
        ListingConflict: the seed file holds two listings with the same MLS number or URL.
        OSError: `port` cannot be bound (taken, say), or the seed file cannot be read.
        RuntimeError: the server did not start within 10 seconds.
    """
    store, emulator, app, serials = _build(
        db,
        seed,
        latency_ms,
        fail_rate,
        framing,
        max_page_size,
        stream_delay_ms,
        max_body_bytes,
        hallucinate_rate,
        fault_seed,
        rate_limit,
        chatbots,
        listings_per_chatbot,
        fleet_seed,
    )
    sock = _bind_socket("127.0.0.1", port)
    _quiet_drops()
    config = uvicorn.Config(
        app,
        log_config=None,  # leave the host process's logging alone
        log_level=logging.WARNING,
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=1,
        ws="none",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="estatebot-emulator", daemon=True
    )
    thread.start()
    try:
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the emulator did not start")
            time.sleep(0.002)
        bound_port = sock.getsockname()[1]
        yield EmulatorServer(
            base_url=f"http://127.0.0.1:{bound_port}",
            store=store,
            emulator=emulator,
            serials=serials,
        )
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()
        store.close()


def serve(
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    db: str | PathLike[str] = ":memory:",
    seed: SeedSpec | FleetSeed = "demo",
    latency_ms: float = 0,
    fail_rate: float = 0.0,
    framing: Framing | str = "sse",
    max_page_size: int = 100,
    stream_delay_ms: float = 0,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    hallucinate_rate: float = 0.0,
    fault_seed: int | None = 0,
    rate_limit: RateLimit | tuple[int, float] | None = None,
    chatbots: int = 0,
    listings_per_chatbot: int = 20,
    fleet_seed: int = 0,
) -> None:
    """Serve the emulator in the foreground until interrupted; prints how to reach it and the
    faults in effect.

    `hallucinate_rate`, `fault_seed`, `rate_limit` and the fleet (`chatbots`,
    `listings_per_chatbot`, `fleet_seed`) are as for `running`; the banner gives the fleet's
    size and first serials.

    Args:
        host: the address to listen on.
        port: the port to listen on; 0 picks a free one (the printed address shows it).
        db: the SQLite database: `":memory:"` (the default) or a file path; the seed's
            listings are loaded only when the demo chatbot has none.
        seed: the listings of the demo chatbot: `"demo"`, `"small"`, None or a path to a JSON
            list of Create bodies, as for `running`.
        latency_ms: a delay added before each request is handled, in milliseconds.
        fail_rate: the share of requests answered with an HTTP 500 envelope (0 to 1).
        framing: the stream framing: `"sse"`, `"ndjson"` or `"concatenated"`.
        max_page_size: the most listings a RealEstateList page returns.
        stream_delay_ms: the pause between the objects of a streamed answer, in milliseconds.
        max_body_bytes: the largest request body accepted, in bytes.
        hallucinate_rate: the share of answers listing homes that misstate one (0 to 1).
        fault_seed: the seed of the faults' random draws; the same seed repeats a run.
        rate_limit: `(count, seconds)` or a `RateLimit`; None for no limit.
        chatbots: how many fleet chatbots to add besides the demo chatbot (0 to 9,999).
        listings_per_chatbot: the listings of each fleet chatbot (0 to 99,999).
        fleet_seed: the seed of the fleet's listings; the same seed, the same listings.

    Raises:
        ValueError: `hallucinate_rate` is outside 0 to 1, `rate_limit` is not a positive
            `(count, seconds)`, `framing` is unknown, `max_body_bytes` is not positive,
            `chatbots` or `listings_per_chatbot` is out of range, or the seed file is not a
            JSON list of valid listings.
        ListingConflict: the seed file holds two listings with the same MLS number or URL.
        OSError: `host` and `port` cannot be bound (the port is taken, say), or the seed file
            cannot be read.
    """
    store, emulator, app, serials = _build(
        db,
        seed,
        latency_ms,
        fail_rate,
        framing,
        max_page_size,
        stream_delay_ms,
        max_body_bytes,
        hallucinate_rate,
        fault_seed,
        rate_limit,
        chatbots,
        listings_per_chatbot,
        fleet_seed,
    )
    try:
        # Listening before the address is printed: whoever reads it can connect at once, and a
        # port already taken fails here, before anything says the emulator is up.
        sock = _bind_socket(host, port)
        base_url = f"http://{host}:{sock.getsockname()[1]}"
        print(f"estatebot emulator on {base_url}", flush=True)
        for line in _faults_shown(emulator):
            print(f"  {line}")
        for line in _fleet_shown(serials, listings_per_chatbot, fleet_seed):
            print(line)
        # Lines a shell takes as they are: pasted into another terminal, they point every
        # estatebot command there at this emulator and its demo chatbot.
        print("Use it from another terminal (paste these lines):")
        print(f"  export ESTATEBOT_BASE_URL={base_url}")
        print(f"  export ESTATEBOT_API_KEY={DEMO_API_KEY}")
        print(f"  export ESTATEBOT_SESSION_KEY={DEMO_SESSION_KEY}")
        print(f"  export ESTATEBOT_SERIAL={DEMO_SERIAL}  # the demo chatbot serial", flush=True)
        config = uvicorn.Config(app, access_log=False, log_level="info")
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        store.close()
