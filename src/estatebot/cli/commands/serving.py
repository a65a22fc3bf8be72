"""``estatebot serve``: the local emulator of the service, in the foreground."""

from __future__ import annotations

import errno
import math
import re
import sqlite3
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from estatebot.errors import EstatebotError

__all__ = ["serve"]


class Framing(StrEnum):
    """How a streamed answer is framed."""

    SSE = "sse"
    NDJSON = "ndjson"
    CONCATENATED = "concatenated"


class ServeError(EstatebotError):
    """The emulator cannot start as asked (a seed file, a port)."""


def _seed(value: str) -> str | None:
    """``--seed``: demo, small, none, or a JSON file (read when the emulator starts)."""
    if value.lower() == "none":
        return None
    if value.lower() in ("demo", "small"):
        return value.lower()
    if not Path(value).is_file():
        raise typer.BadParameter(
            f"{value!r} is neither demo, small, none nor a JSON file of listings",
            param_hint="--seed",
        )
    return value


#: ``--rate-limit``'s form: N/SECONDS, a whole number of requests per a number of seconds.
_RATE_LIMIT = re.compile(r"\s*(\d+)\s*/\s*(\d+(?:\.\d*)?|\.\d+)\s*")


def _rate_limit(value: str | None) -> tuple[int, float] | None:
    """``--rate-limit N/SECONDS`` as ``(N, SECONDS)``; anything else is a usage error naming the
    flag and the form it takes."""
    if value is None:
        return None
    found = _RATE_LIMIT.fullmatch(value)
    count, seconds = (int(found[1]), float(found[2])) if found else (0, 0.0)
    if count < 1 or not 0 < seconds < math.inf:
        raise typer.BadParameter(
            f"expected N/SECONDS, at least 1 request in more than 0 seconds (e.g. 5/10: 5 "
            f"requests per chatbot in any 10 seconds), got {value!r}",
            param_hint="--rate-limit",
        )
    return count, seconds


def _finite(value: float) -> float:
    """A number flag's value if it is finite: a range with no maximum lets ``inf`` through
    (and some versions of Typer, ``nan``)."""
    if not math.isfinite(value):
        raise typer.BadParameter(f"expected a finite number, got {value}")
    return value


def _write_fleet(folder: Path, chatbots: int, listings_per_chatbot: int, seed: int) -> None:
    """``--write-fleet FOLDER``: the fleet sample matching the emulator about to start."""
    if chatbots == 0:
        raise typer.BadParameter(
            "there is no fleet to write: pass --chatbots N", param_hint="--write-fleet"
        )
    from estatebot.sample.fleet_sample import write_fleet_sample

    try:
        sample = write_fleet_sample(folder, chatbots, listings_per_chatbot, seed=seed)
    except OSError as error:
        raise ServeError(f"--write-fleet {folder}: {error.strerror or error}") from None
    print(f"Fleet sample in {sample.folder}: {sample.manifest.name} lists every serial", flush=True)


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free port).")
    ] = 8765,
    db: Annotated[str, typer.Option(help="SQLite file, or :memory:.")] = ":memory:",
    seed: Annotated[
        str,
        typer.Option(
            help="demo (the 200-listing sample market), small (16 listings), none, or a JSON "
            "file of Create bodies."
        ),
    ] = "demo",
    latency_ms: Annotated[
        float,
        typer.Option(min=0, callback=_finite, help="Latency added to every request, in ms."),
    ] = 0,
    fail_rate: Annotated[
        float,
        typer.Option(
            min=0.0, max=1.0, callback=_finite, help="Share of requests that fail with 500."
        ),
    ] = 0.0,
    stream_delay_ms: Annotated[
        float,
        typer.Option(
            min=0,
            callback=_finite,
            help="Pause between the objects of a streamed answer, in ms.",
        ),
    ] = 0,
    rate_limit: Annotated[
        str | None,
        typer.Option(
            metavar="N/SECONDS",
            help="At most N requests about one chatbot in any SECONDS (per chatbot, as the "
            "contract's rate limit and its RateLimitMessage are a chatbot's); more get 429 with "
            "that message and Retry-After, the seconds until one may pass. E.g. 5/10.",
            show_default=False,
        ),
    ] = None,
    hallucinate_rate: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            callback=_finite,
            help="Share of answers listing homes that misstate one listing (a wrong price or "
            "bedroom count, or a listing the chatbot does not have), to try a fact-check on.",
        ),
    ] = 0.0,
    fault_seed: Annotated[
        int,
        typer.Option(help="Seed of the injected faults: the same seed, the same faults."),
    ] = 0,
    framing: Annotated[
        Framing, typer.Option(case_sensitive=False, help="How streamed answers are framed.")
    ] = Framing.SSE,
    max_body_bytes: Annotated[
        int,
        typer.Option(min=1, help="The largest request body accepted (a larger one gets 413)."),
    ] = 2 * 1024 * 1024,
    chatbots: Annotated[
        int,
        typer.Option(
            min=0,
            max=9999,
            help="Fleet chatbots to add to the demo workspace, besides the demo chatbot, each "
            "with listings of its own (the banner shows their first serials).",
        ),
    ] = 0,
    listings_per_chatbot: Annotated[
        int, typer.Option(min=0, max=99_999, help="Listings of each fleet chatbot.")
    ] = 20,
    fleet_seed: Annotated[
        int, typer.Option(help="Seed of the fleet's listings: the same seed, the same listings.")
    ] = 0,
    write_fleet: Annotated[
        Path | None,
        typer.Option(
            metavar="FOLDER",
            help="Also write the fleet's sample into FOLDER first: a shared MLS export, a sheet "
            "per chatbot and manifests listing every serial.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run the local emulator of the service until interrupted (Ctrl-C).

    It listens first, then prints its address, the demo credentials and the faults in effect:
    a port already taken is an error before anything says the emulator is up.
    """
    limit = _rate_limit(rate_limit)  # a usage error first, whatever else is wrong
    try:
        from estatebot.emulator import serve as run_server
    except ImportError as error:  # the optional extra is not installed
        raise ServeError(str(error)) from None

    chosen = _seed(seed)
    if write_fleet is not None:
        _write_fleet(write_fleet, chatbots, listings_per_chatbot, fleet_seed)
    try:
        run_server(
            host=host,
            port=port,
            db=db,
            seed=chosen,
            latency_ms=latency_ms,
            fail_rate=fail_rate,
            hallucinate_rate=hallucinate_rate,
            fault_seed=fault_seed,
            framing=framing.value,
            stream_delay_ms=stream_delay_ms,
            max_body_bytes=max_body_bytes,
            rate_limit=limit,
            chatbots=chatbots,
            listings_per_chatbot=listings_per_chatbot,
            fleet_seed=fleet_seed,
        )
    except OSError as error:
        if error.filename is not None:  # the seed or the database file
            flag = "--seed" if str(error.filename) == str(seed) else "--db"
            raise ServeError(f"{flag} {error.filename}: {error.strerror}") from None
        if error.errno in (errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL):
            raise ServeError(
                f"cannot listen on {host}:{port}: {error.strerror}; pass another --port "
                "(--port 0 picks a free one)"
            ) from None
        raise
    except sqlite3.Error as error:
        raise ServeError(f"--db {db}: {error}") from None
    except ValueError as error:  # a seed file that is not a JSON list of valid listings
        raise ServeError(f"--seed {seed}: {error}") from None
    except KeyboardInterrupt:
        return  # stopped as asked: exit 0
