"""What every operation shares: the emulator's live state and the steps before its own work.

Those steps, after the faults: credential → 401 (``Authorization``, the raw API key, for Edit,
ModelList, GetSession and ClientAsk; ``chatrobot-sessionkey`` for RealEstateList; either one for
RealEstateCreate, RealEstateUpdate and RealEstateDelete); ``Content-Type: application/json`` on
POST bodies → 415; a body over ``max_body_bytes`` → 413 (:mod:`~estatebot.emulator.body_size`);
the body → 400 (:mod:`~estatebot.emulator.binding`); visibility → 404: a chatbot of another
workspace is reported exactly like an unknown one.

A body of more than :data:`PARSE_ON_LOOP_BYTES` is parsed in a worker thread: decoding,
checking and validating it takes long enough to hold up every other client if done on the
event loop.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from ..binding import M, Problem, parse_body
from ..body_size import DEFAULT_MAX_BODY_BYTES, read_body
from ..envelope import Failure
from ..faults import Faults
from ..hallucinate import Falsification
from ..questions import Catalog
from ..quoting import quoted
from ..store import Chatbot, Store
from ..streaming import Framing

_API_KEY, _SESSION_KEY = "authorization", "chatrobot-sessionkey"
_CREDENTIALS: dict[str, tuple[str, ...]] = {
    "Edit": (_API_KEY,),
    "ModelList": (_API_KEY,),
    "GetSession": (_API_KEY,),
    "ClientAsk": (_API_KEY,),
    "RealEstateCreate": (_API_KEY, _SESSION_KEY),
    "RealEstateUpdate": (_API_KEY, _SESSION_KEY),
    "RealEstateList": (_SESSION_KEY,),
    "RealEstateDelete": (_API_KEY, _SESSION_KEY),
}
_CREDENTIAL_TEXT = {
    (_API_KEY,): "an API key in the Authorization header",
    (_SESSION_KEY,): "a session key in the chatrobot-sessionkey header",
    (_API_KEY, _SESSION_KEY): (
        "an API key in the Authorization header or a session key in the chatrobot-sessionkey header"
    ),
}

#: Bodies up to this size are parsed on the event loop (well under a millisecond); larger ones
#: in a worker thread.
PARSE_ON_LOOP_BYTES = 64 * 1024


@dataclass
class Options:
    """Server options that may change while it runs."""

    framing: Framing = "sse"
    max_page_size: int = 100
    stream_delay_ms: float = 0.0
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES


class RouteBase:
    """The state the operations share, and the steps they all take (one per app)."""

    def __init__(
        self,
        store: Store,
        faults: Faults,
        options: Options,
        request_counts: Counter[str],
    ) -> None:
        self.store = store
        self.faults = faults
        self.options = options
        self.request_counts = request_counts
        self.clock: Callable[[], float] = time.time
        # ClientAsk's answer catalogs, by chatbot serial (kept while its listings stay the same).
        self._catalogs: dict[str, Catalog] = {}
        # The answers the hallucination fault falsified, by message ID: the ground truth.
        self.falsified: dict[int, Falsification] = {}

    def _authenticate(self, operation: str, request: Request) -> int:
        accepted = _CREDENTIALS[operation]
        for header in accepted:
            value = request.headers.get(header, "")
            if header == _API_KEY:
                workspace = self.store.workspace_by_api_key(value)
            else:
                workspace = self.store.workspace_by_session_key(value)
            if workspace is not None:
                return workspace
        raise Failure(401, f"Unauthorized: this operation needs {_CREDENTIAL_TEXT[accepted]}")

    async def _body(
        self,
        request: Request,
        model: type[M],
        extra_checks: Callable[[dict[str, Any]], list[Problem]] | None = None,
    ) -> M:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json" and not content_type.endswith("+json"):
            raise Failure(415, "Unsupported media type: send the body as application/json")
        raw = await read_body(request, self.options.max_body_bytes)
        if len(raw) <= PARSE_ON_LOOP_BYTES:
            return parse_body(raw, model, extra_checks)
        return await run_in_threadpool(parse_body, raw, model, extra_checks)

    def _chatbot(self, serial: str, workspace: int) -> Chatbot:
        chatbot = self.store.chatbot(serial)
        if chatbot is None or chatbot.workspace_id != workspace:
            raise Failure(404, f"Chatbot {quoted(serial)} not found")
        return chatbot
