"""The emulator's HTTP layer: the app, its routes, and the steps every request goes through.

:func:`create_app` builds a FastAPI app serving the operations of ``spec/service-interface.md``
with the decisions of ``spec/addendum.md``. Every request goes through the same steps, in order:

0. count it in flight (:class:`CountInFlight`, around every other step) until its reply is
   sent: ``emulator.in_flight`` now, ``emulator.peak_in_flight`` at most, for tests of a
   client's cap on concurrent requests;
1. count it in ``request_counts[operation]`` (so a test can prove that nothing was sent);
2. faults (:mod:`.faults`): latency, then an injected 429 or 500. With a rate limit or
   ``faults.only_chatbots`` set the app first finds the chatbot the request is about, for the
   limit is per chatbot and faults may be limited to some chatbots: the body's serial number
   (for ClientAsk, the session's chatbot), when the request's credential is valid and the
   chatbot is of its workspace (anything else is not counted, and gets its 401 or 404 from the
   steps below). Reading it does not consume the
   body, and a body declaring more than ``max_body_bytes`` (or no length) is not read for it.
   The limit's 429 carries the chatbot's ``RateLimitMessage``, as the contract's does;
3. credential → 401 (:mod:`.routes.base`): ``Authorization`` (the raw API key) for Edit,
   ModelList, GetSession and ClientAsk; ``chatrobot-sessionkey`` for RealEstateList; either one
   for RealEstateCreate, RealEstateUpdate and RealEstateDelete;
4. ``Content-Type: application/json`` on POST bodies → 415 (the contract lists it as required);
5. body → 413 when larger than ``max_body_bytes`` (:mod:`.body_size`), → 400 (:mod:`.binding`)
   when it cannot be read (:mod:`.json_body` names the member at fault) or is invalid: field
   names are bound case-insensitively (ASP.NET style: keys are mapped to the model's wire
   names ignoring case, unknown keys are dropped), values are checked for what no model rule
   covers (nesting, infinity, 64-bit whole numbers, unpaired surrogates), then validated in
   strict JSON mode with the models of :mod:`estatebot.api.models`; the message names every
   bad field;
6. visibility → 404: a chatbot or session of another workspace is reported exactly like an
   unknown one;
7. the operation itself (:mod:`.routes`), then (when a drop fault was drawn) a reply cut in the
   middle.

Every non-stream reply is the envelope ``{"Data", "Version", "Success", "Code", "Message"}``
(:mod:`.envelope`) with the HTTP status equal to ``Code`` (unknown paths and methods too);
streamed replies are framed by :mod:`.streaming`.

The decisions where the contract is silent (beyond the addendum) are in the docstrings of the
operations' modules: :mod:`.routes.chatbots`, :mod:`.routes.chat` and :mod:`.routes.listings`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from estatebot.api.models import API_VERSION

from .body_size import DEFAULT_MAX_BODY_BYTES, check_limit
from .envelope import Failure, envelope_response
from .faults import Faults
from .json_body import INT64_MAX, INT64_MIN, UnreadableBody, decode
from .routes.base import PARSE_ON_LOOP_BYTES, Options
from .routes.chat import DEFAULT_RATE_LIMIT_MESSAGE, ChatRoutes
from .routes.chatbots import AI_MODELS, ChatbotRoutes
from .routes.listings import ListingRoutes, list_record
from .store import Chatbot, Store
from .streaming import Framing, StreamReply, check_framing, stream_response

# The package and the tests import these from here, wherever they are defined.
__all__ = [
    "AI_MODELS",
    "OPERATIONS",
    "CountInFlight",
    "Emulator",
    "Framing",
    "InFlight",
    "Options",
    "create_app",
    "list_record",
]

logger = logging.getLogger("estatebot.emulator")


#: Each operation's method(s) and path.
OPERATIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "Edit": (("POST",), "/chat/Chatbot/Edit"),
    "ModelList": (("GET", "POST"), "/chat/Chatbot/ModelList"),
    "GetSession": (("POST",), "/chat/Chatbot/GetSession"),
    "ClientAsk": (("POST",), "/chat/Chat/ClientAsk"),
    "RealEstateCreate": (("POST",), "/chat/Chatbot/RealEstateCreate"),
    "RealEstateUpdate": (("POST",), "/chat/Chatbot/RealEstateUpdate"),
    "RealEstateList": (("POST",), "/chat/Chatbot/RealEstateList"),
    "RealEstateDelete": (("POST",), "/chat/Chatbot/RealEstateDelete"),
}


class InFlight:
    """How many requests are being handled at once, now and at most (thread-safe: the server
    thread counts, a test or notebook thread reads and resets)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._now = 0
        self._peak = 0

    @property
    def now(self) -> int:
        """Requests arrived whose reply is not sent yet."""
        return self._now

    @property
    def peak(self) -> int:
        """The most requests in flight at once since start or the last :meth:`reset_peak`."""
        return self._peak

    def enter(self) -> None:
        """Count a request in."""
        with self._lock:
            self._now += 1
            self._peak = max(self._peak, self._now)

    def leave(self) -> None:
        """Count a request out."""
        with self._lock:
            self._now -= 1

    def reset_peak(self) -> None:
        """Start measuring the peak afresh, from the requests in flight now."""
        with self._lock:
            self._peak = self._now


class CountInFlight:
    """ASGI middleware counting each HTTP request from its arrival until the last byte of its
    reply is handed to the server (or it ends otherwise: an error, a dropped connection), so
    the latency fault's sleep and a streamed answer's pauses count."""

    def __init__(self, app: ASGIApp, counter: InFlight) -> None:
        self.app = app
        self.counter = counter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Count one request around the app's handling of it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.counter.enter()
        done = False

        async def counted_send(message: Message) -> None:
            nonlocal done
            await send(message)
            body_ends = message["type"] == "http.response.body" and not message.get("more_body")
            if body_ends and not done:
                done = True
                self.counter.leave()

        try:
            await self.app(scope, receive, counted_send)
        finally:
            if not done:
                done = True
                self.counter.leave()


class Emulator(ChatbotRoutes, ChatRoutes, ListingRoutes):
    """The operations, over a store, with live faults and options (one per app)."""

    def __init__(
        self, store: Store, faults: Faults, options: Options, request_counts: Counter[str]
    ) -> None:
        super().__init__(store, faults, options, request_counts)
        #: The requests being handled at once (counted by :class:`CountInFlight`).
        self.in_flight_counter = InFlight()

    @property
    def in_flight(self) -> int:
        """Requests being handled now: arrived, and their reply not yet sent."""
        return self.in_flight_counter.now

    @property
    def peak_in_flight(self) -> int:
        """The most requests handled at once since start or the last :meth:`reset_peak`."""
        return self.in_flight_counter.peak

    def reset_peak(self) -> None:
        """Measure ``peak_in_flight`` afresh from now (it starts at the requests in flight)."""
        self.in_flight_counter.reset_peak()

    async def dispatch(self, operation: str, request: Request) -> Response:
        """Handle one request of ``operation`` through the steps of the module docstring."""
        self.request_counts[operation] += 1
        chatbot = await self._limited_chatbot(operation, request)
        decision = self.faults.decide(operation, chatbot.serial if chatbot else None)
        if decision.latency_ms:
            await asyncio.sleep(decision.latency_ms / 1000)
        if decision.throttle:
            message = "Too many requests. Please retry later."
            if decision.rate_limited and chatbot is not None:
                limit_message = chatbot.settings.get("RateLimitMessage")
                message = str(limit_message or DEFAULT_RATE_LIMIT_MESSAGE)
            return envelope_response(
                None, 429, message, retry_after=decision.retry_after_s, cut=decision.drop
            )
        if decision.fail:
            return envelope_response(None, 500, "Internal server error", cut=decision.drop)
        handler = self._handlers()[operation]
        try:
            result = await handler(request, self._authenticate(operation, request))
        except Failure as failure:
            return envelope_response(
                None,
                failure.code,
                failure.message,
                retry_after=failure.retry_after,
                cut=decision.drop,
            )
        except Exception:
            # The traceback names no credential: handlers never put one in an exception.
            logger.exception("%s failed", operation)
            return envelope_response(None, 500, "Internal server error", cut=decision.drop)
        if isinstance(result, StreamReply):
            return stream_response(
                result, self.options.framing, self.options.stream_delay_ms, cut=decision.drop
            )
        return envelope_response(result, cut=decision.drop)

    async def _limited_chatbot(self, operation: str, request: Request) -> Chatbot | None:
        """The chatbot the rate limit counts this request against (see the module), or None."""
        if not self.faults.needs_chatbot or not self.faults.applies_to(operation):
            return None
        length = request.headers.get("content-length", "")
        if not length.isdigit() or int(length) > self.options.max_body_bytes:
            return None
        try:
            workspace = self._authenticate(operation, request)
        except Failure:
            return None
        # Starlette keeps the body read here for the handler's own reading of it.
        raw = await request.body()
        try:
            if len(raw) <= PARSE_ON_LOOP_BYTES:
                body = decode(raw)
            else:  # as the operations do: a large body is parsed off the event loop
                body = await run_in_threadpool(decode, raw)
        except UnreadableBody:
            return None
        if not isinstance(body, dict):
            return None
        # Bound as the operations bind their fields: names in any case.
        fields = {str(name).lower(): value for name, value in body.items()}
        serial: object = fields.get("serialnumber")
        if operation == "ClientAsk":
            session = _whole_number(fields.get("sessionid"))
            serial = self.store.session_chatbot(session) if session is not None else None
        chatbot = self.store.chatbot(serial) if isinstance(serial, str) and serial else None
        return chatbot if chatbot is not None and chatbot.workspace_id == workspace else None

    def _handlers(self) -> dict[str, Callable[[Request, int], Awaitable[Any]]]:
        return {
            "Edit": self.edit,
            "ModelList": self.model_list,
            "GetSession": self.get_session,
            "ClientAsk": self.client_ask,
            "RealEstateCreate": self.create_listing,
            "RealEstateUpdate": self.update_listing,
            "RealEstateList": self.list_listings,
            "RealEstateDelete": self.delete_listings,
        }


def _whole_number(value: object) -> int | None:
    """``value`` if it is a whole number SQLite holds (a larger one is the handler's 400 to give,
    not an error here), else None."""
    if isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX:
        return value
    return None


# --------------------------------------------------------------------------- the app


def create_app(
    store: Store,
    faults: Faults | None = None,
    framing: Framing | str = "sse",
    *,
    max_page_size: int = 100,
    stream_delay_ms: float = 0.0,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    request_counts: Counter[str] | None = None,
) -> FastAPI:
    """The emulator app over ``store``; ``app.state.emulator`` is its :class:`Emulator`.

    ``faults``, the options (``app.state.emulator.options``) and ``request_counts`` may be
    changed while the app serves; the next request sees the change.
    """
    emulator = Emulator(
        store,
        faults if faults is not None else Faults(),
        Options(
            framing=check_framing(framing),
            max_page_size=max_page_size,
            stream_delay_ms=stream_delay_ms,
            max_body_bytes=check_limit(max_body_bytes),
        ),
        request_counts if request_counts is not None else Counter(),
    )
    app = FastAPI(title="estatebot emulator", version=API_VERSION)
    app.state.emulator = emulator
    app.add_middleware(CountInFlight, counter=emulator.in_flight_counter)

    for operation, (methods, path) in OPERATIONS.items():
        app.add_api_route(path, _endpoint(emulator, operation), methods=list(methods))

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, StarletteHTTPException) else 500
        message = exc.detail if isinstance(exc, StarletteHTTPException) else "Internal server error"
        return envelope_response(None, status, str(message))

    app.add_exception_handler(StarletteHTTPException, http_error)
    return app


def _endpoint(emulator: Emulator, operation: str) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return await emulator.dispatch(operation, request)

    endpoint.__name__ = operation
    return endpoint
