"""Everything the clients share that does no I/O.

* the :class:`Operation` table: name, method, path, credential, retry safety;
* :class:`Call`: one prepared call (operation, validated body, parser of its ``Data``);
* :func:`validate`: arguments checked with the models before anything is sent;
* :class:`ClientConfig`: base URL, keys and timeout from arguments or the environment, and the
  headers each operation sends;
* :func:`parse_response`: HTTP status + envelope into ``Data`` or the right error;
* :class:`RetryPolicy`: when and how long to wait before another attempt, as tenacity settings.

The sync and async clients (:mod:`estatebot.api.client`) add only the send loop.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import Enum
from functools import cached_property
from typing import Any, Generic, Protocol, TypeVar

import httpx
import pydantic_core
import tenacity
from pydantic import BaseModel, SecretStr, ValidationError

from estatebot.api import errors, models
from estatebot.api._redact import redact, register_secret

logger = logging.getLogger("estatebot.api")

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

#: A timeout in seconds or as an :class:`httpx.Timeout`; None on a call means the client's.
TimeoutArg = float | httpx.Timeout | None

DEFAULT_BASE_URL = "https://usapi.hottask.com"
ENV_BASE_URL = "ESTATEBOT_BASE_URL"
ENV_API_KEY = "ESTATEBOT_API_KEY"
ENV_SESSION_KEY = "ESTATEBOT_SESSION_KEY"
USER_AGENT = "estatebot-python"


# --------------------------------------------------------------------------- operations


class Credential(Enum):
    """Which key an operation is authorized by."""

    API_KEY = "api key"
    SESSION_KEY = "session key"
    EITHER = "either key"


@dataclass(frozen=True)
class Operation:
    """One operation of the service.

    ``retry_after_send`` says whether another attempt is safe once the request may have reached
    the server. Connect failures prove it did not, so every operation retries those.
    """

    name: str
    method: str
    path: str
    credential: Credential
    retry_after_send: bool = True


EDIT = Operation("Edit", "POST", "/chat/Chatbot/Edit", Credential.API_KEY)
MODEL_LIST = Operation("ModelList", "GET", "/chat/Chatbot/ModelList", Credential.API_KEY)
# A spare session left by a retried GetSession is harmless, so it is retried like the rest.
GET_SESSION = Operation("GetSession", "POST", "/chat/Chatbot/GetSession", Credential.API_KEY)
# A second ClientAsk would be a second question: charged, counted against the rate limit and
# answered twice. Never retried once sent.
CLIENT_ASK = Operation(
    "ClientAsk", "POST", "/chat/Chat/ClientAsk", Credential.API_KEY, retry_after_send=False
)
# Create is not idempotent, but the service refuses a second listing with the same MLSNumber or
# Url (409), so a retry can never make a duplicate. The addendum lets it take either key.
CREATE = Operation("RealEstateCreate", "POST", "/chat/Chatbot/RealEstateCreate", Credential.EITHER)
UPDATE = Operation("RealEstateUpdate", "POST", "/chat/Chatbot/RealEstateUpdate", Credential.EITHER)
LIST = Operation("RealEstateList", "POST", "/chat/Chatbot/RealEstateList", Credential.SESSION_KEY)
DELETE = Operation("RealEstateDelete", "POST", "/chat/Chatbot/RealEstateDelete", Credential.EITHER)

OPERATIONS: dict[str, Operation] = {
    op.name: op for op in (EDIT, MODEL_LIST, GET_SESSION, CLIENT_ASK, CREATE, UPDATE, LIST, DELETE)
}


# --------------------------------------------------------------------------- calls


@dataclass(frozen=True)
class Call(Generic[T]):
    """One call ready to send: its operation, JSON body and the parser of the reply's ``Data``."""

    operation: Operation
    body: dict[str, Any] | None
    parse: Callable[[Any], T]
    timeout: TimeoutArg = None


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


def parse_int(data: Any) -> int:
    """``Data`` that must be an integer (Edit, Update, Create)."""
    if isinstance(data, bool) or not isinstance(data, int | str):
        raise TypeError(f"expected an integer, got {type(data).__name__}")
    return int(data)


# --------------------------------------------------------------------------- configuration


def _secret(value: str | SecretStr | None, env: str) -> SecretStr | None:
    raw = value.get_secret_value() if isinstance(value, SecretStr) else value
    raw = raw if raw is not None else os.environ.get(env)
    if not raw:
        return None
    register_secret(raw)
    return SecretStr(raw)


@dataclass(frozen=True)
class ClientConfig:
    """A client's settings: from arguments, else from the environment, else defaults."""

    base_url: str
    api_key: SecretStr | None = field(default=None, repr=False)
    session_key: SecretStr | None = field(default=None, repr=False)
    timeout: float | httpx.Timeout = 30.0

    @classmethod
    def from_args(
        cls,
        *,
        base_url: str | None,
        api_key: str | SecretStr | None,
        session_key: str | SecretStr | None,
        timeout: float | httpx.Timeout,
    ) -> ClientConfig:
        """Resolve each setting: the argument, else its environment variable, else a default."""
        url = (base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")
        parsed = httpx.URL(url)
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise errors.ConfigurationError(
                f"base URL {url!r} is not an http(s) URL: pass base_url= or set {ENV_BASE_URL}"
            )
        return cls(
            base_url=url,
            api_key=_secret(api_key, ENV_API_KEY),
            session_key=_secret(session_key, ENV_SESSION_KEY),
            timeout=timeout,
        )

    def describe(self, class_name: str) -> str:
        """The repr of a client: its base URL and which keys are set, never a key."""
        api = "set" if self.api_key else "not set"
        session = "set" if self.session_key else "not set"
        return f"{class_name}(base_url={self.base_url!r}, api_key={api}, session_key={session})"

    def headers_for(self, operation: Operation) -> dict[str, str]:
        """The headers of one operation; :class:`~errors.ConfigurationError` if its key is missing.

        Update, Delete and Create take either key and get every key that is set, as the
        contract's header list and its examples disagree on which one they need.
        """
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if operation.method != "GET":
            headers["Content-Type"] = "application/json"
        wants_api = operation.credential in (Credential.API_KEY, Credential.EITHER)
        wants_session = operation.credential in (Credential.SESSION_KEY, Credential.EITHER)
        if wants_api and self.api_key:
            headers["Authorization"] = self.api_key.get_secret_value()
        if wants_session and self.session_key:
            headers["chatrobot-sessionkey"] = self.session_key.get_secret_value()
        if "Authorization" not in headers and "chatrobot-sessionkey" not in headers:
            raise errors.ConfigurationError(_missing_key_message(operation))
        return headers

    def request_args(self, call: Call[Any], *, stream: bool = False) -> dict[str, Any]:
        """Keyword arguments of ``httpx.Client.build_request`` for ``call``."""
        body = call.body
        if stream and body is not None:
            body = {**body, "stream": True}
        return {
            "method": call.operation.method,
            "url": self.base_url + call.operation.path,
            "headers": self.headers_for(call.operation),
            "json": body,
            "timeout": call.timeout if call.timeout is not None else self.timeout,
        }


def _missing_key_message(operation: Operation) -> str:
    api = f"pass api_key= or set {ENV_API_KEY}"
    session = f"pass session_key= or set {ENV_SESSION_KEY}"
    if operation.credential is Credential.API_KEY:
        return f"{operation.name} needs the API key: {api}"
    if operation.credential is Credential.SESSION_KEY:
        return f"{operation.name} needs the session key: {session}"
    return f"{operation.name} needs the API key or the session key: {api}, or {session}"


# --------------------------------------------------------------------------- responses


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` header in seconds: delta-seconds or an HTTP date; None if absent/bad."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # an HTTP date is always GMT
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(seconds, 0.0)


def _envelope(content: bytes) -> models.Envelope | None:
    try:
        # pydantic's JSON reader: the same values as json.loads, in about two thirds of the time
        # (a List page of 100 listings is some 80 kB).
        raw = pydantic_core.from_json(content, cache_strings="keys")
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(raw, dict):
        return None
    try:
        envelope = models.Envelope.model_validate(raw)
    except ValidationError:
        return None
    # Some replies leave out Success; then Code alone tells success from failure.
    lowered = {str(key).lower() for key in raw}
    if "success" not in lowered and envelope.code in (None, 200):
        envelope.success = True
    return envelope


def api_error(
    operation: Operation,
    status: int,
    envelope: models.Envelope | None,
    retry_after: float | None = None,
) -> errors.APIError:
    """The error for a failed reply: its class from the HTTP status, or from ``Code`` when the
    HTTP status says success (``Success: false`` with HTTP 200)."""
    code = envelope.code if envelope is not None else None
    kind = status if status >= 400 else (code if code is not None and code >= 400 else None)
    cls = errors.error_class_for(kind) if kind is not None else errors.APIError
    message = envelope.message if envelope is not None else ""
    if not message:
        phrase = httpx.codes.get_reason_phrase(status)
        message = f"HTTP {status} {phrase}".strip() if status >= 400 else "the service failed"
    message = redact(message)
    return cls(
        message, operation=operation.name, code=code, status_code=status, retry_after=retry_after
    )


def parse_response(
    operation: Operation, status: int, headers: Mapping[str, str], content: bytes
) -> Any:
    """The ``Data`` of a successful reply; raises the matching :class:`~errors.APIError`."""
    envelope = _envelope(content)
    if 200 <= status < 300 and envelope is not None and envelope.success:
        return envelope.data
    if 200 <= status < 300 and envelope is None:
        raise errors.APIError(
            "the reply is not a JSON envelope", operation=operation.name, status_code=status
        )
    raise api_error(operation, status, envelope, parse_retry_after(headers.get("retry-after")))


def parse_data(call: Call[T], data: Any, status: int) -> T:
    """``Data`` as the call's result type; an unreadable shape is an :class:`~errors.APIError`."""
    try:
        return call.parse(data)
    except (ValidationError, TypeError, ValueError) as exc:
        raise errors.APIError(
            f"unexpected Data in the reply: {redact(str(exc))}",
            operation=call.operation.name,
            status_code=status,
        ) from None


def transport_error(
    operation: Operation, exc: httpx.TransportError, *, mid_stream: bool = False
) -> errors.APIConnectionError:
    """An httpx transport failure as :class:`~errors.APIConnectionError` (or its timeout kind).

    Raise it ``from exc``: the retry policy reads the cause to know whether anything was sent.
    """
    detail = redact(str(exc)) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        what = "timed out waiting for the next fragment" if mid_stream else "timed out"
        return errors.APITimeoutError(f"{what} ({detail})", operation=operation.name)
    what = "the stream broke off" if mid_stream else "connection failed"
    return errors.APIConnectionError(f"{what} ({detail})", operation=operation.name)


# --------------------------------------------------------------------------- retries

#: Transport failures that prove the request never reached the server.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
RETRY_STATUSES = frozenset({408, 429})


def _not_sent(exc: BaseException) -> bool:
    return isinstance(exc, errors.APIConnectionError) and isinstance(exc.__cause__, NOT_SENT)


@dataclass(frozen=True)
class RetryPolicy:
    """When another attempt is made, and after how long.

    ``max_retries`` attempts after the first; a jittered exponential backoff from
    ``backoff_base`` seconds up to ``backoff_max``; a ``Retry-After`` from the service is
    honoured instead, capped at ``max_retry_after`` seconds.
    """

    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    max_retry_after: float = 60.0

    def should_retry(self, operation: Operation, exc: BaseException | None) -> bool:
        """Whether the failure ``exc`` of ``operation`` deserves another attempt."""
        if exc is None:
            return False
        if _not_sent(exc):
            return True
        if not operation.retry_after_send:
            return False
        if isinstance(exc, errors.APIConnectionError):  # reset, dropped, read timeout
            return True
        if isinstance(exc, errors.APIError):
            status = exc.status_code if exc.status_code and exc.status_code >= 400 else exc.code
            return status is not None and (status in RETRY_STATUSES or status >= 500)
        return False

    def wait_seconds(self, retry_state: tenacity.RetryCallState) -> float:
        """The pause before the next attempt (a tenacity ``wait`` callable)."""
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(exc, errors.APIError) and exc.retry_after is not None:
            return min(exc.retry_after, self.max_retry_after)
        return float(self._backoff(retry_state))

    @cached_property
    def _backoff(self) -> tenacity.wait_exponential_jitter:
        return tenacity.wait_exponential_jitter(
            multiplier=self.backoff_base, max=self.backoff_max, jitter=self.backoff_base
        )

    def tenacity_args(self, operation: Operation) -> dict[str, Any]:
        """Keyword arguments for ``tenacity.Retrying`` / ``AsyncRetrying`` for one operation."""

        def retry(state: tenacity.RetryCallState) -> bool:
            return state.outcome is not None and self.should_retry(
                operation, state.outcome.exception()
            )

        return {
            "stop": tenacity.stop_after_attempt(self.max_retries + 1),
            "wait": self.wait_seconds,
            "retry": retry,
            "reraise": True,
            "before_sleep": _log_retry(operation),
        }


def _log_retry(operation: Operation) -> Callable[[tenacity.RetryCallState], None]:
    def log(state: tenacity.RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait = state.next_action.sleep if state.next_action else 0.0
        logger.debug(
            "%s: retrying in %.2f s after attempt %d failed: %s",
            operation.name, wait, state.attempt_number, type(exc).__name__,
        )  # fmt: skip

    return log


def log_attempt(operation: Operation, attempt: int, elapsed_s: float, status: int | str) -> None:
    """The one DEBUG line per request: operation, status, attempt, elapsed time (no headers)."""
    logger.debug("%s %s (attempt %d, %.0f ms)", operation.name, status, attempt, elapsed_s * 1000)


# --------------------------------------------------------------------------- the send loop's seams

#: What one successful attempt gives: the response and, unless it is a live stream, its ``Data``.
Reply = tuple[httpx.Response, Any]


def is_live_stream(response: httpx.Response) -> bool:
    """A 200 reply to ``stream: true`` that is a stream and not a JSON envelope."""
    content_type = response.headers.get("content-type", "")
    return response.status_code == 200 and not content_type.startswith("application/json")


def check_reply(operation: Operation, response: httpx.Response, *, stream: bool) -> Any:
    """The ``Data`` of a read reply, None for a live stream; raises for a failure."""
    if stream and is_live_stream(response):
        return None
    return parse_response(operation, response.status_code, response.headers, response.content)


class SyncSender(Protocol):
    """What a sync resource needs of its client."""

    def _request(self, call: Call[T]) -> T: ...

    def _send(self, call: Call[Any], *, stream: bool) -> Reply: ...


class AsyncSender(Protocol):
    """What an async resource needs of its client."""

    async def _request(self, call: Call[T]) -> T: ...

    async def _send(self, call: Call[Any], *, stream: bool) -> Reply: ...


class SyncResource:
    """Base of the sync resources (``client.chatbots``, ``client.chat``, ``client.listings``)."""

    def __init__(self, client: SyncSender) -> None:
        self._client = client


class AsyncResource:
    """Base of the async resources."""

    def __init__(self, client: AsyncSender) -> None:
        self._client = client
