"""What a resource builds on: the operation table, prepared calls, and the seam to its client.

* the :class:`Operation` table: name, method, path, credential, retry safety;
* :class:`Call`: one prepared call (operation, validated body, parser of its ``Data``);
* :func:`validate`: arguments checked with the models before anything is sent;
* :class:`SyncResource` / :class:`AsyncResource`: the resources' bases, which hand each call to
  their client through :class:`SyncSender` / :class:`AsyncSender`.

The rest of what the clients share does no I/O either, one job to a module:
:mod:`._config` (settings and the headers of each operation), :mod:`._responses` (a reply or a
transport failure as ``Data`` or the right error) and :mod:`._retry` (the retry policy). The
sync and async clients (:mod:`estatebot.api.client`) add only the send loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, Protocol, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from estatebot import errors
from estatebot.api import models

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

#: A timeout in seconds or as an :class:`httpx.Timeout`; None on a call means the client's.
TimeoutArg = float | httpx.Timeout | None


# --------------------------------------------------------------------------- operations


class Credential(Enum):
    """Which key an operation is authorized by."""

    API_KEY = "api key"
    SESSION_KEY = "session key"
    EITHER = "either key"


@dataclass(frozen=True)
class Operation:
    """One operation of the service.

    Retries go by what a failure means. Some prove the request was not carried out: a connect
    failure (it never left) and HTTP 429 and 503 (the server says it did not handle it). Those
    are retried for every operation, a 429 only where ``retry_throttled`` (a chat message is
    not: its 429 is the chatbot's rate-limit message, for the person chatting, and the chat
    panel and the test harness wait it out themselves). ``retry_after_send`` says whether
    another attempt is safe after any other failure, once the request may have been carried out
    unanswered (a dropped connection, a read timeout, a 500).
    """

    name: str
    method: str
    path: str
    credential: Credential
    retry_after_send: bool = True
    retry_throttled: bool = True


EDIT = Operation("Edit", "POST", "/chat/Chatbot/Edit", Credential.API_KEY)
MODEL_LIST = Operation("ModelList", "GET", "/chat/Chatbot/ModelList", Credential.API_KEY)
# A spare session left by a retried GetSession is harmless, so it is retried like the rest.
GET_SESSION = Operation("GetSession", "POST", "/chat/Chatbot/GetSession", Credential.API_KEY)
# A second ClientAsk would be a second question: charged, counted against the rate limit and
# answered twice. Never retried once it may have been answered (a 503 was not); a 429 is shown.
CLIENT_ASK = Operation(
    "ClientAsk",
    "POST",
    "/chat/Chat/ClientAsk",
    Credential.API_KEY,
    retry_after_send=False,
    retry_throttled=False,
)
# Create is not idempotent, and a deployment need not refuse a second listing with the same
# MLSNumber or Url: once the request may have been carried out it is never sent again blind
# (the sync runner, listings.sync.apply.sender, looks the key up first). A 429 or 503 did
# nothing, so those are waited out. The addendum lets it take either key.
CREATE = Operation(
    "RealEstateCreate",
    "POST",
    "/chat/Chatbot/RealEstateCreate",
    Credential.EITHER,
    retry_after_send=False,
)
UPDATE = Operation("RealEstateUpdate", "POST", "/chat/Chatbot/RealEstateUpdate", Credential.EITHER)
LIST = Operation("RealEstateList", "POST", "/chat/Chatbot/RealEstateList", Credential.SESSION_KEY)
# Delete is idempotent: deleting a deleted listing changes nothing (unknown keys are ignored), so
# a failed one is sent again. Its count is the answer to the attempt that was answered, never
# a sum: after an unanswered attempt that did the work, the answer may count fewer.
DELETE = Operation("RealEstateDelete", "POST", "/chat/Chatbot/RealEstateDelete", Credential.EITHER)

OPERATIONS: dict[str, Operation] = {
    op.name: op for op in (EDIT, MODEL_LIST, GET_SESSION, CLIENT_ASK, CREATE, UPDATE, LIST, DELETE)
}


# --------------------------------------------------------------------------- calls


@dataclass(frozen=True)
class Call(Generic[T]):
    """One call ready to send: its operation, JSON body and the parser of the reply's ``Data``.

    ``serial`` is the chatbot the call names, when a 404 to it means that chatbot is unknown
    (its error then says to check the serial). ``after_retries``, if set, checks the result
    against the failed attempts before the one answered (a delete's count, after an attempt that
    may have deleted listings unanswered): it returns the result or raises.
    """

    operation: Operation
    body: dict[str, Any] | None
    parse: Callable[[Any], T]
    timeout: TimeoutArg = None
    serial: str | None = None
    after_retries: Callable[[T, Sequence[errors.EstatebotError]], T] | None = None


def validate(operation: Operation, model: type[M], data: Mapping[str, Any]) -> M:
    """``data`` (wire names) as ``model``, or :class:`~errors.RequestValidationError`.

    Keys whose value is None are left out first, so an optional argument left at None is
    "not given" rather than "null".
    """
    try:
        return model.model_validate({k: v for k, v in data.items() if v is not None})
    except ValidationError as exc:
        problems = [errors.FieldProblem(*p) for p in models.field_problems(exc)]
        raise errors.RequestValidationError(operation.name, problems) from None


def as_wire_dict(value: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    """A model (by wire names, unset fields left out) or a mapping as a plain dict."""
    if isinstance(value, BaseModel):
        return value.model_dump(by_alias=True, exclude_none=True)
    return dict(value)


def _integer(value: Any) -> int | None:
    # An integer as a .NET service may write one: a number, 1.0, "1", " 1 ", or a boolean result.
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit():
            return int(text)
        try:
            number = float(text)
        except ValueError:
            return None
        return int(number) if number.is_integer() else None
    return None


def parse_int(data: Any) -> int:
    """``Data`` that must be an integer (Edit's 1, Update's count): a number, numeric text, a
    boolean result, or an object holding one number only (``{"count": 1}``)."""
    value = _integer(data)
    if value is None and isinstance(data, Mapping) and len(data) == 1:
        value = _integer(next(iter(data.values())))
    if value is None:
        raise TypeError(f"expected an integer, got {type(data).__name__}")
    return value


# Names a created listing's ID may come under when Create answers with an object.
_ID_NAMES = ("id", "listingid", "newoaksid", "realestateid")


def parse_new_id(data: Any) -> int:
    """Create's ``Data``: the new ID as :func:`parse_int` reads it, or the ``ID`` of an object
    (the created listing echoed back, in any case)."""
    if isinstance(data, Mapping):
        by_name = {str(key).lower(): value for key, value in data.items()}
        for name in _ID_NAMES:
            value = _integer(by_name.get(name))
            if value is not None and not isinstance(by_name.get(name), bool):
                return value
    if isinstance(data, bool):  # true/false says nothing of which listing was made
        raise TypeError("expected the new listing's ID, got bool")
    return parse_int(data)


# --------------------------------------------------------------------------- the send loop's seams

#: What one successful attempt gives: the response and, unless it is a live stream, its ``Data``.
Reply = tuple[httpx.Response, Any]


class SyncSender(Protocol):
    """What a sync resource needs of its client."""

    def _request(self, call: Call[T]) -> T: ...

    def _send(
        self,
        call: Call[Any],
        *,
        stream: bool,
        failures: list[errors.EstatebotError] | None = None,
    ) -> Reply: ...

    def _live_body(self, operation: Operation, response: httpx.Response) -> Iterator[bytes]: ...


class AsyncSender(Protocol):
    """What an async resource needs of its client."""

    async def _request(self, call: Call[T]) -> T: ...

    async def _send(
        self,
        call: Call[Any],
        *,
        stream: bool,
        failures: list[errors.EstatebotError] | None = None,
    ) -> Reply: ...

    def _live_body(
        self, operation: Operation, response: httpx.Response
    ) -> AsyncIterator[bytes]: ...


class SyncResource:
    """Base of the sync resources (``client.chatbots``, ``client.chat``, ``client.listings``)."""

    def __init__(self, client: SyncSender) -> None:
        self._client = client


class AsyncResource:
    """Base of the async resources."""

    def __init__(self, client: AsyncSender) -> None:
        self._client = client
