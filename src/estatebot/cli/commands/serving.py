"""``estatebot serve``: the local emulator of the service, in the foreground."""

from __future__ import annotations

import errno
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
        float, typer.Option(min=0, help="Latency added to every request, in ms.")
    ] = 0,
    fail_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of requests that fail with 500.")
    ] = 0.0,
    hallucinate_rate: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
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
) -> None:
    """Run the local emulator of the service until interrupted (Ctrl-C).

    It listens first, then prints its address and the demo credentials: a port already taken
    is an error before anything says the emulator is up.
    """
    try:
        from estatebot.emulator import serve as run_server
    except ImportError as error:  # the optional extra is not installed
        raise ServeError(str(error)) from None

    chosen = _seed(seed)
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
            max_body_bytes=max_body_bytes,
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
