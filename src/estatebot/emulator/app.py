"""The emulator's HTTP layer: routes, credentials, body binding, envelopes, streams and faults.

:func:`create_app` builds a FastAPI app serving the operations of ``spec/service-interface.md``
with the decisions of ``spec/addendum.md``. Every request goes through the same steps, in order:

1. count it in ``request_counts[operation]`` (so a test can prove that nothing was sent);
2. faults (:mod:`.faults`): latency, then an injected 429 or 500;
3. credential → 401: ``Authorization`` (the raw API key) for Edit, ModelList, GetSession and
   ClientAsk; ``chatrobot-sessionkey`` for RealEstateList; either one for RealEstateCreate,
   RealEstateUpdate and RealEstateDelete;
4. ``Content-Type: application/json`` on POST bodies → 415 (the contract lists it as required);
5. body → 400: field names are bound case-insensitively (ASP.NET style: keys are mapped to the
   model's wire names ignoring case, unknown keys are dropped), then validated in strict JSON
   mode with the models of :mod:`estatebot.api.models`; the message names every bad field;
6. visibility → 404: a chatbot or session of another workspace is reported exactly like an
   unknown one;
7. the operation itself, then (when a drop fault was drawn) a reply cut in the middle.

Every non-stream reply is the envelope ``{"Data", "Version", "Success", "Code", "Message"}`` with
the HTTP status equal to ``Code`` (unknown paths and methods too).

Decisions where the contract is silent (beyond the addendum):

* Edit: a setting sent as ``null`` is left unchanged, like an omitted one; ``Model`` must be a
  ``Key`` of ModelList (enabled or not).
* ModelList answers GET (with or without a body) and POST.
* ClientAsk: the rate limit is on when both ``RateLimitCount`` and ``RateLimitTime`` are above
  0 (a sliding window per session); the monthly limit is checked first (it outlasts any wait)
  and its 429 carries no ``Retry-After``. Only accepted messages count. A stream's final object
  carries ``noAnswer`` besides ``QuestionID``, ``AnswerID``, ``Answer`` and ``TotalToken`` (an
  emulator extension). Streams use the framing of :class:`Options` (``sse``, ``ndjson`` or
  ``concatenated``, always sent as ``text/event-stream``), with ``stream_delay_ms`` between
  objects.
* RealEstateUpdate replaces the whole listing: afterwards it holds exactly the body's fields
  (optional fields left out become absent). Moving its MLSNumber or Url onto another
  listing's is a 409.
* RealEstateList records: ``Images`` and ``ExtensionColumn`` are compact JSON text, ``""`` when
  absent or empty; ``LATITUDE``/``LONGITUDE`` are numbers or null; every other number is plain
  decimal text (``3``, ``2.5``, ``450000``), ``""`` when absent.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
import typing
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any, Literal, TypeVar

from fastapi import FastAPI, Request, Response
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Receive, Scope, Send

from estatebot.api.models import (
    API_VERSION,
    LIST_RECORD_FIELDS,
    AskRequest,
    ChatbotSettings,
    DeleteRequest,
    ListingInput,
    ListingUpdate,
    ListRequest,
    SessionRequest,
    field_problems,
)

from . import answers
from .faults import Faults
from .store import Chatbot, ListingConflict, ListingFilter, Store, month_of

logger = logging.getLogger("estatebot.emulator")

Framing = Literal["sse", "ndjson", "concatenated"]
FRAMINGS: tuple[Framing, ...] = ("sse", "ndjson", "concatenated")

#: The ModelList reply (the addendum's four models); Edit's ``Model`` takes a ``Key``.
AI_MODELS: tuple[dict[str, Any], ...] = (
    {"Key": "2", "Value": "gpt-4o", "Status": True},
    {"Key": "3", "Value": "gpt-4o-mini", "Status": True},
    {"Key": "22", "Value": "claude-3.5-sonnet", "Status": False},
    {"Key": "23", "Value": "claude-3.5-haiku", "Status": False},
)

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

DEFAULT_RATE_LIMIT_MESSAGE = "Too many messages. Please wait a moment and try again."

M = TypeVar("M", bound=BaseModel)
Problem = tuple[str, str, Any]


@dataclass
class Options:
    """Server options that may change while it runs."""

    framing: Framing = "sse"
    max_page_size: int = 100
    stream_delay_ms: float = 0.0


class Failure(Exception):
    """A business failure, answered as an envelope with ``code`` as HTTP status and Code."""

    def __init__(self, code: int, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after


@dataclass(frozen=True)
class _StreamReply:
    """An accepted streamed answer: its fragments and its final object."""

    fragments: list[str]
    final: dict[str, Any]


@dataclass(frozen=True)
class _EncodedData:
    """A reply's ``Data`` already encoded as JSON.

    A List page is spliced from per-listing JSON texts that are encoded once and cached: the
    listings stay the same page after page, and encoding them anew was most of a page's cost.
    """

    json: bytes


# --------------------------------------------------------------------------- wire helpers


def envelope(data: Any = None, code: int = 200, message: str = "") -> dict[str, Any]:
    """The common reply object."""
    return {
        "Data": data,
        "Version": API_VERSION,
        "Success": code == 200,
        "Code": code,
        "Message": message,
    }


def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


def _envelope_bytes(data: Any, code: int, message: str) -> bytes:
    if not isinstance(data, _EncodedData):
        return _json_bytes(envelope(data, code, message))
    # The same text as encoding the whole envelope: "Data" first, then the other members.
    rest = envelope(None, code, message)
    del rest["Data"]
    return b'{"Data": ' + data.json + b", " + _json_bytes(rest)[1:]


def check_framing(value: str) -> Framing:
    """``value`` as a :data:`Framing`, or ``ValueError`` naming the allowed ones."""
    for framing in FRAMINGS:
        if value == framing:
            return framing
    raise ValueError(f"framing must be one of {', '.join(FRAMINGS)}, not {value!r}")


def frame(obj: Mapping[str, Any], framing: Framing) -> bytes:
    """One stream object in the given framing."""
    payload = _json_bytes(obj)
    if framing == "sse":
        return b"data: " + payload + b"\n\n"
    if framing == "ndjson":
        return payload + b"\n"
    return payload


def plain_number(value: Any) -> str:
    """A number as plain decimal text (``3``, ``2.5``, ``450000``); ``""`` for None."""
    if value is None:
        return ""
    if isinstance(value, int):
        return str(value)
    number = float(value)
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))
    text = repr(number)
    # repr switches to exponent notation for very small or large values; spell them out.
    return format(Decimal(text), "f") if "e" in text else text


def _compact_json(items: Any) -> str:
    return json.dumps(items, ensure_ascii=False, separators=(",", ":")) if items else ""


_TEXT_FIELDS = (
    "PropertyType", "Status", "CurrencySymbol", "State", "City", "Address", "ZIP", "Url", "Tours",
    "MLSNumber", "Description", "SpaceType",
)  # fmt: skip
_NUMBER_FIELDS = (
    "Bathrooms", "Bedrooms", "YearBuilt", "DaysOnMarket", "LotArea", "BuildingArea",
    "ParkingSpots", "RentPrice", "DepositFee", "SalePrice", "UnitAreaPrice", "ZestimatePrice",
    "HOAMonth",
)  # fmt: skip


def list_record(listing_id: int, data: Mapping[str, Any]) -> dict[str, Any]:
    """A stored listing as RealEstateList returns it (the fields of ``LIST_RECORD_FIELDS``)."""
    for_rent = data.get("SaleType") == "for_rent"
    values: dict[str, Any] = {
        "ID": listing_id,
        "SaleType": "For Rent" if for_rent else "For Sale",
        "Images": _compact_json(data.get("Images")),
        "ExtensionColumn": _compact_json(data.get("ExtensionColumn")),
        "Price": plain_number(data.get("RentPrice" if for_rent else "SalePrice")),
        "Area": plain_number(data.get("BuildingArea")),
        "LATITUDE": data.get("Latitude"),
        "LONGITUDE": data.get("Longitude"),
    }
    values.update({name: str(data.get(name) or "") for name in _TEXT_FIELDS})
    values.update({name: plain_number(data.get(name)) for name in _NUMBER_FIELDS})
    return {name: values[name] for name in LIST_RECORD_FIELDS}


# --------------------------------------------------------------------------- body binding


def _model_types(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models nested in a field's annotation (``list[X] | None`` → ``[X]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [found for arg in typing.get_args(annotation) for found in _model_types(arg)]


@cache
def _wire_names(model: type[BaseModel]) -> dict[str, tuple[str, type[BaseModel] | None]]:
    """Case-folded wire name → (wire name, nested model of its list items or None)."""
    names: dict[str, tuple[str, type[BaseModel] | None]] = {}
    for name, info in model.model_fields.items():
        wire = info.alias or name
        nested = _model_types(info.annotation)
        names[wire.casefold()] = (wire, nested[0] if nested else None)
    return names


def bind_names(payload: Mapping[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """Map a body's keys onto the model's wire names ignoring case; drop unknown keys."""
    names = _wire_names(model)
    bound: dict[str, Any] = {}
    for key, value in payload.items():
        entry = names.get(str(key).casefold())
        if entry is None:
            continue
        wire, nested = entry
        if nested is not None and isinstance(value, list):
            value = [bind_names(v, nested) if isinstance(v, dict) else v for v in value]
        elif nested is not None and isinstance(value, dict):
            value = bind_names(value, nested)
        bound[wire] = value
    return bound


def _accepts_float(model: type[BaseModel], field: str) -> bool:
    info = model.model_fields.get(field)
    return info is not None and float in _flat_types(info.annotation)


def _flat_types(annotation: Any) -> set[Any]:
    args = typing.get_args(annotation)
    if not args:
        return {annotation}
    return {t for arg in args for t in _flat_types(arg)}


def _describe_problems(model: type[BaseModel], problems: list[Problem]) -> str:
    parts = []
    for field, message, value in problems:
        if message == "Input should be a valid integer" and _accepts_float(model, field):
            # Strict int | float unions report their first member; a fraction is fine here.
            message = "Input should be a valid number"
        parts.append(f"{field}: {message}" + ("" if value is None else f" (got {value!r})"))
    return "Invalid request: " + "; ".join(parts)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_body(
    raw: bytes,
    model: type[M],
    extra_checks: Callable[[dict[str, Any]], list[Problem]] | None = None,
) -> M:
    """Bind and validate a request body, or raise a 400 :class:`Failure` naming every bad field."""
    try:
        payload = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError):
        raise Failure(400, "Invalid request: the body is not valid JSON") from None
    if not isinstance(payload, dict):
        raise Failure(400, "Invalid request: the body must be a JSON object")
    bound = bind_names(payload, model)
    problems: list[Problem] = []
    result: M | None = None
    try:
        result = model.model_validate_json(json.dumps(bound), strict=True)
    except ValidationError as error:
        problems.extend(field_problems(error))
    if extra_checks is not None:
        known = {field for field, _, _ in problems}
        problems.extend(p for p in extra_checks(bound) if p[0] not in known)
    if problems or result is None:
        raise Failure(400, _describe_problems(model, problems))
    return result


def _check_model_key(bound: dict[str, Any]) -> list[Problem]:
    value = bound.get("Model")
    keys = [str(m["Key"]) for m in AI_MODELS]
    if isinstance(value, str) and value not in keys:
        return [("Model", f"must be a Key from ModelList ({', '.join(keys)})", value)]
    return []


# --------------------------------------------------------------------------- responses


class _CutResponse(Response):
    """A reply that announces its full Content-Length, sends half its body and hangs up."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        half = self.body[: max(1, len(self.body) // 2)]
        await send({"type": "http.response.body", "body": half, "more_body": True})
        # Returning without the final body message makes the server close the connection.


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


def _envelope_response(
    data: Any = None,
    code: int = 200,
    message: str = "",
    *,
    retry_after: int | None = None,
    cut: bool = False,
) -> Response:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    cls = _CutResponse if cut else Response
    return cls(
        _envelope_bytes(data, code, message),
        status_code=code,
        headers=headers,
        media_type="application/json",
    )


# --------------------------------------------------------------------------- the service


class Emulator:
    """The operations, over a store, with live faults and options (one per app)."""

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
        self._catalogs: dict[str, answers.Catalog] = {}

    async def dispatch(self, operation: str, request: Request) -> Response:
        """Handle one request of ``operation`` through the steps of the module docstring."""
        self.request_counts[operation] += 1
        decision = self.faults.decide(operation)
        if decision.latency_ms:
            await asyncio.sleep(decision.latency_ms / 1000)
        if decision.throttle:
            return _envelope_response(
                None,
                429,
                "Too many requests. Please retry later.",
                retry_after=max(1, int(self.faults.retry_after_s)),
                cut=decision.drop,
            )
        if decision.fail:
            return _envelope_response(None, 500, "Internal server error", cut=decision.drop)
        handler = self._handlers()[operation]
        try:
            result = await handler(request, self._authenticate(operation, request))
        except Failure as failure:
            return _envelope_response(
                None,
                failure.code,
                failure.message,
                retry_after=failure.retry_after,
                cut=decision.drop,
            )
        except Exception:
            # The traceback names no credential: handlers never put one in an exception.
            logger.exception("%s failed", operation)
            return _envelope_response(None, 500, "Internal server error", cut=decision.drop)
        if isinstance(result, _StreamReply):
            return self._stream_response(result, cut=decision.drop)
        return _envelope_response(result, cut=decision.drop)

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

    # ------------------------------------------------------------------ common steps

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

    @staticmethod
    async def _body(
        request: Request,
        model: type[M],
        extra_checks: Callable[[dict[str, Any]], list[Problem]] | None = None,
    ) -> M:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json" and not content_type.endswith("+json"):
            raise Failure(415, "Unsupported media type: send the body as application/json")
        return parse_body(await request.body(), model, extra_checks)

    def _chatbot(self, serial: str, workspace: int) -> Chatbot:
        chatbot = self.store.chatbot(serial)
        if chatbot is None or chatbot.workspace_id != workspace:
            raise Failure(404, f"Chatbot {serial!r} not found")
        return chatbot

    # ------------------------------------------------------------------ chatbots

    async def edit(self, request: Request, workspace: int) -> int:
        """Edit: change only the settings sent; Data = 1."""
        body = await self._body(request, ChatbotSettings, _check_model_key)
        self._chatbot(body.serial_number, workspace)
        changes = body.model_dump(mode="json", exclude_none=True, exclude={"serial_number"})
        self.store.update_settings(body.serial_number, changes)
        return 1

    async def model_list(self, request: Request, workspace: int) -> list[dict[str, Any]]:
        """ModelList: the available AI models (any body is ignored)."""
        return [dict(m) for m in AI_MODELS]

    async def get_session(self, request: Request, workspace: int) -> dict[str, int]:
        """GetSession: open a chat session; Data = {"SessionID": n}."""
        body = await self._body(request, SessionRequest)
        self._chatbot(body.serial_number, workspace)
        return {"SessionID": self.store.create_session(body.serial_number, self.clock())}

    # ------------------------------------------------------------------ chat

    async def client_ask(self, request: Request, workspace: int) -> Any:
        """ClientAsk: check the session and limits, answer, plain or streamed."""
        body = await self._body(request, AskRequest)
        serial = self.store.session_chatbot(body.session_id)
        chatbot = self.store.chatbot(serial) if serial is not None else None
        if chatbot is None or chatbot.workspace_id != workspace:
            raise Failure(404, f"Session {body.session_id} not found")
        now = self.clock()
        self._check_limits(chatbot, body.session_id, now)
        reply = answers.answer(
            body.content,
            chatbot.settings,
            self._catalog(chatbot.serial),
            attachments=len(body.file_ids or []),
        )
        question_id, answer_id = self.store.record_exchange(body.session_id, chatbot.serial, now)
        if body.stream:
            return _StreamReply(
                fragments=answers.fragments(reply.text),
                final={
                    "QuestionID": question_id,
                    "AnswerID": answer_id,
                    "Answer": reply.text,
                    "TotalToken": reply.total_tokens,
                    "noAnswer": reply.no_answer,
                },
            )
        return {
            "messageid": answer_id,
            "content": reply.text,
            "totalToken": reply.total_tokens,
            "noAnswer": reply.no_answer,
        }

    def _catalog(self, serial: str) -> answers.Catalog:
        # The store returns the same list object until the listings change: reuse the catalog
        # built on it, so a question costs a scan of the listings, not a rebuild.
        listings = self.store.listings(serial, answers.LISTING_FIELDS_USED)
        catalog = self._catalogs.get(serial)
        if catalog is None or catalog.listings is not listings:
            catalog = self._catalogs[serial] = answers.Catalog(listings)
        return catalog

    def _check_limits(self, chatbot: Chatbot, session_id: int, now: float) -> None:
        settings = chatbot.settings
        limit = settings.get("MessageLimit")
        if isinstance(limit, int) and limit >= 0:
            used = self.store.questions_in_month(chatbot.serial, month_of(now))
            if used >= limit:
                raise Failure(
                    429,
                    f"Monthly message limit reached: this chatbot accepts {limit} messages per "
                    "calendar month (UTC).",
                )
        count = settings.get("RateLimitCount") or 0
        window = settings.get("RateLimitTime") or 0
        if count > 0 and window > 0:
            times = self.store.recent_questions(session_id, now - window)
            if len(times) >= count:
                # The slot frees when the oldest of the last `count` messages leaves the window.
                wait = times[len(times) - count] + window - now
                raise Failure(
                    429,
                    str(settings.get("RateLimitMessage") or DEFAULT_RATE_LIMIT_MESSAGE),
                    retry_after=max(1, math.ceil(wait)),
                )

    def _stream_response(self, reply: _StreamReply, *, cut: bool) -> Response:
        framing = self.options.framing
        delay = self.options.stream_delay_ms / 1000
        objects: list[dict[str, Any]] = [{"content": f} for f in reply.fragments]
        objects.append(reply.final)

        async def chunks() -> AsyncIterator[bytes]:
            for position, obj in enumerate(objects):
                if position and delay:
                    await asyncio.sleep(delay)
                yield frame(obj, framing)

        stop_after = max(1, len(objects) // 2) if cut else None
        return _StreamResponse(chunks(), stop_after=stop_after)

    # ------------------------------------------------------------------ listings

    async def create_listing(self, request: Request, workspace: int) -> int:
        """RealEstateCreate: Data = the new listing's ID; 409 on a duplicate MLS number or URL."""
        body = await self._body(request, ListingInput)
        self._chatbot(body.SerialNumber, workspace)
        data = body.model_dump(mode="json", exclude_none=True, exclude={"SerialNumber"})
        try:
            return self.store.create_listing(body.SerialNumber, data)
        except ListingConflict as conflict:
            raise Failure(409, str(conflict)) from None

    async def update_listing(self, request: Request, workspace: int) -> int:
        """RealEstateUpdate: replace the listing the key finds; Data = the number updated."""
        body = await self._body(request, ListingUpdate)
        self._chatbot(body.SerialNumber, workspace)
        data = body.model_dump(
            mode="json", exclude_none=True, exclude={"SerialNumber", "Key", "KeyType"}
        )
        updated = 0
        try:
            for listing_id in self.store.find_listing_ids(
                body.SerialNumber, body.KeyType, body.Key
            ):
                updated += self.store.replace_listing(body.SerialNumber, listing_id, data)
        except ListingConflict as conflict:
            raise Failure(409, str(conflict)) from None
        return updated

    async def list_listings(self, request: Request, workspace: int) -> _EncodedData:
        """RealEstateList: one page by ID order, and VirtualCount = the total matching."""
        body = await self._body(request, ListRequest)
        self._chatbot(body.SerialNumber, workspace)
        size = min(body.PageSize, max(1, self.options.max_page_size))
        filters = ListingFilter(
            city=body.CityName, sale_type=body.SaleType, mls_number=body.MLSNumber
        )
        ids, total = self.store.page_ids(
            body.SerialNumber, filters, (body.PageNumber - 1) * size, size
        )
        # Records are encoded once per listing and kept until the chatbot's listings change.
        encoded = self.store.derived(body.SerialNumber)
        missing = [i for i in ids if i not in encoded]
        if missing:
            for i, data in self.store.listing_data(body.SerialNumber, missing).items():
                encoded[i] = _json_bytes(list_record(i, data))
        records = b", ".join(encoded[i] for i in ids if i in encoded)
        return _EncodedData(b'{"List": [' + records + b'], "VirtualCount": %d}' % total)

    async def delete_listings(self, request: Request, workspace: int) -> dict[str, int]:
        """RealEstateDelete: Data = {"SuccessCount": the number deleted}; unknown keys ignored."""
        body = await self._body(request, DeleteRequest)
        self._chatbot(body.SerialNumber, workspace)
        count = self.store.delete_listings(body.SerialNumber, body.KeyType, body.Keys)
        return {"SuccessCount": count}


# --------------------------------------------------------------------------- the app


def create_app(
    store: Store,
    faults: Faults | None = None,
    framing: Framing | str = "sse",
    *,
    max_page_size: int = 100,
    stream_delay_ms: float = 0.0,
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
        ),
        request_counts if request_counts is not None else Counter(),
    )
    app = FastAPI(title="estatebot emulator", version=API_VERSION)
    app.state.emulator = emulator

    for operation, (methods, path) in OPERATIONS.items():
        app.add_api_route(path, _endpoint(emulator, operation), methods=list(methods))

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, StarletteHTTPException) else 500
        message = exc.detail if isinstance(exc, StarletteHTTPException) else "Internal server error"
        return _envelope_response(None, status, str(message))

    app.add_exception_handler(StarletteHTTPException, http_error)
    return app


def _endpoint(emulator: Emulator, operation: str) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return await emulator.dispatch(operation, request)

    endpoint.__name__ = operation
    return endpoint
