"""Streamed replies: the framings of a stream and the response that sends it.

A stream is a sequence of JSON objects (``{"content": fragment}`` per fragment, then the final
object) in one of three framings, ``sse``, ``ndjson`` or ``concatenated``, always sent as
``text/event-stream``, one chunk per object, with an optional delay between objects. A drop
fault hangs up after half the objects; a client that stops reading stops the production.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import Response
from starlette.types import Receive, Scope, Send

from .envelope import json_bytes

Framing = Literal["sse", "ndjson", "concatenated"]
FRAMINGS: tuple[Framing, ...] = ("sse", "ndjson", "concatenated")


@dataclass(frozen=True)
class StreamReply:
    """An accepted streamed answer: its fragments and its final object."""

    fragments: list[str]
    final: dict[str, Any]


def check_framing(value: str) -> Framing:
    """``value`` as a :data:`Framing`, or ``ValueError`` naming the allowed ones."""
    for framing in FRAMINGS:
        if value == framing:
            return framing
    raise ValueError(f"framing must be one of {', '.join(FRAMINGS)}, not {value!r}")


def frame(obj: Mapping[str, Any], framing: Framing) -> bytes:
    """One stream object in the given framing."""
    payload = json_bytes(obj)
    if framing == "sse":
        return b"data: " + payload + b"\n\n"
    if framing == "ndjson":
        return payload + b"\n"
    return payload


class _StreamResponse(Response):
    """A streamed reply, sent one chunk per object, optionally cut after ``stop_after`` chunks."""

    def __init__(
        self, chunks: AsyncIterator[bytes], *, stop_after: int | None = None, status: int = 200
    ) -> None:
        super().__init__(status_code=status)
        self.chunks = chunks
        self.stop_after = stop_after
        self.raw_headers = [
            (b"content-type", b"text/event-stream"),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
        ]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        disconnected = asyncio.Event()

        async def watch() -> None:
            # The body was read already: the next message is the client's disconnect.
            while (await receive())["type"] != "http.disconnect":
                pass
            disconnected.set()

        watcher = asyncio.create_task(watch())
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": self.status_code,
                    "headers": self.raw_headers,
                }
            )
            sent = 0
            async for chunk in self.chunks:
                if disconnected.is_set():
                    return  # the client stopped reading: stop producing
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                sent += 1
                if self.stop_after is not None and sent >= self.stop_after:
                    return  # an injected drop: hang up without ending the body
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            watcher.cancel()


def stream_response(
    reply: StreamReply, framing: Framing, delay_ms: float, *, cut: bool
) -> Response:
    """``reply`` as a stream in ``framing``, ``delay_ms`` apart; ``cut`` hangs up halfway."""
    delay = delay_ms / 1000
    objects: list[dict[str, Any]] = [{"content": f} for f in reply.fragments]
    objects.append(reply.final)

    async def chunks() -> AsyncIterator[bytes]:
        for position, obj in enumerate(objects):
            if position and delay:
                await asyncio.sleep(delay)
            yield frame(obj, framing)

    stop_after = max(1, len(objects) // 2) if cut else None
    return _StreamResponse(chunks(), stop_after=stop_after)
