"""What came back, as ``Data`` or the right error.

:func:`parse_response` reads an HTTP status and an envelope into the reply's ``Data`` or the
matching :class:`~estatebot.errors.APIError`; :func:`parse_data` reads ``Data`` as the
call's result type; :func:`transport_error` turns an httpx failure into an
:class:`~estatebot.errors.APIConnectionError`, and :func:`attempt_error` any failure while a
reply was read (its deadline, its size cap, its encoding) into the project's error;
:func:`is_live_stream` tells a live stream from an envelope. A redirect is never followed: it is
an error saying where the service points to and which base URL to set (:func:`redirect_error`).
Given what the call asked (:class:`~._hints.Asked`), an error also says what to do: check the
serial, the key, the base URL (:mod:`._hints`). The wait a failure asks for is read by
:mod:`._retry_after`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import pydantic_core
from pydantic import ValidationError

from estatebot import errors
from estatebot.api import models
from estatebot.api._base import Call, Operation
from estatebot.api._body import BodyDecodeError, ReplyTooLarge
from estatebot.api._deadline import Deadline, DeadlinePassed
from estatebot.api._hints import Asked, credential_hint, not_found_hint, unreachable
from estatebot.api._reading import without_references
from estatebot.api._redact import MASK, redact
from estatebot.api._retry import NOT_SENT
from estatebot.api._retry_after import parse_retry_after, retry_after_from
from estatebot.api._text import whole_text

__all__ = [
    "StreamBody",
    "api_error",
    "attempt_error",
    "failure_hint",
    "is_live_stream",
    "parse_data",
    "parse_response",
    "parse_retry_after",
    "problem_message",
    "redirect_error",
    "settled",
    "shown_url",
    "transport_error",
]

T = TypeVar("T")

_BOM = b"\xef\xbb\xbf"


def _envelope(content: bytes) -> models.Envelope | None:
    if content.startswith(_BOM):  # some servers put a UTF-8 byte-order mark before the JSON
        content = content[len(_BOM) :]
    try:
        # pydantic's JSON reader: the same values as json.loads, in about two thirds of the time
        # (a List page of 100 listings is some 80 kB).
        raw = pydantic_core.from_json(content, cache_strings="keys")
    except (ValueError, UnicodeDecodeError):
        raw = _with_lone_surrogates(content)
    if not isinstance(raw, dict):
        return None
    if b'"$id"' in content or b'"$values"' in content:
        raw = without_references(raw)
    try:
        envelope = models.Envelope.model_validate(raw)
    except ValidationError:
        return None
    if envelope.success is None:
        # Some replies leave out Success (or send null): then Code alone tells.
        envelope.success = envelope.code is None or 200 <= envelope.code < 300
    return envelope


def _with_lone_surrogates(content: bytes) -> Any:
    """JSON that pydantic's reader refuses for half a character (``"\\ud83c"`` with no low
    half, as a .NET string cut mid-character is written), read by the standard library and
    made whole text (a lone half becomes U+FFFD); None if it is not JSON at all."""
    try:
        return _whole_strings(json.loads(content))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _whole_strings(value: Any) -> Any:
    if isinstance(value, str):
        return whole_text(value)
    if isinstance(value, list):
        return [_whole_strings(item) for item in value]
    if isinstance(value, dict):
        return {whole_text(key): _whole_strings(item) for key, item in value.items()}
    return value


def problem_message(content: bytes) -> str:
    """What an RFC 7807 / ASP.NET problem body says: its title and detail, and every field error
    (``{"errors": {"Bedrooms": ["The Bedrooms field is required."]}}``); empty when it is none."""
    if content.startswith(_BOM):
        content = content[len(_BOM) :]
    try:
        body = pydantic_core.from_json(content)
    except (ValueError, UnicodeDecodeError):
        return ""
    if not isinstance(body, dict):
        return ""
    fields = {str(key).lower(): value for key, value in body.items()}
    parts = [str(fields[name]).strip() for name in ("title", "detail") if fields.get(name)]
    problems = fields.get("errors")
    if isinstance(problems, dict):
        for field, found in problems.items():
            texts = found if isinstance(found, list) else [found]
            parts += [f"{field}: {text}" for text in texts if text]
    elif isinstance(problems, list):
        parts += [str(item) for item in problems if item]
    return "; ".join(parts)


def api_error(
    operation: Operation,
    status: int,
    envelope: models.Envelope | None,
    retry_after: float | None = None,
    content: bytes = b"",
    *,
    asked: Asked | None = None,
) -> errors.APIError:
    """The error for a failed reply: its class from the HTTP status, or from ``Code`` when the
    HTTP status says success (``Success: false`` with HTTP 200). Without an envelope message, a
    problem body (``application/problem+json``, ASP.NET validation) says what went wrong.

    Knowing what the call ``asked``, the error also says what to do (:func:`failure_hint`)."""
    code = envelope.code if envelope is not None else None
    kind = status if status >= 400 else (code if code is not None and code >= 400 else None)
    cls = errors.error_class_for(kind) if kind is not None else errors.APIError
    message = envelope.message if envelope is not None else ""
    if not message and content:
        message = problem_message(content)
    if not message:
        phrase = httpx.codes.get_reason_phrase(status)
        message = f"HTTP {status} {phrase}".strip() if status >= 400 else "the service failed"
    message = redact(message)
    hint = failure_hint(kind, asked) if asked is not None else None
    return cls(
        message,
        operation=operation.name,
        code=code,
        status_code=status,
        retry_after=retry_after,
        hint=redact(hint) if hint else None,
    )


def failure_hint(kind: int | None, asked: Asked) -> str | None:
    """What to do about a failure of status (or ``Code``) ``kind`` to a call that ``asked``:
    check the serial after a 404 to a call naming a chatbot, the key after a 401 or 403."""
    if kind == 404 and asked.serial is not None:
        return not_found_hint(asked.serial)
    if kind in (401, 403) and (asked.sent or asked.unset):
        return credential_hint(kind, asked)
    return None


# Query parameters whose values are credentials more often than not.
_CREDENTIAL_PARAM = re.compile(r"key|token|secret|pass|auth|sig|session|credential", re.IGNORECASE)


#: The longest address a message shows (a hostile Location may be as long as a header can be).
_URL_SHOWN = 300


def shown_url(url: httpx.URL) -> str:
    """``url`` fit for a message: its user and password, the values of query parameters named
    like credentials, and any registered secret masked; cut short past 300 characters."""
    if url.userinfo:
        url = url.copy_with(username=MASK, password=None)
    if url.query:
        params = [
            (name, MASK if _CREDENTIAL_PARAM.search(name) else value)
            for name, value in url.params.multi_items()
        ]
        url = url.copy_with(params=params)
    text = redact(str(url).replace("%5Bredacted%5D", MASK))
    return text if len(text) <= _URL_SHOWN else text[:_URL_SHOWN] + "..."


def redirect_error(
    operation: Operation, status: int, headers: Mapping[str, str], url: str | None
) -> errors.APIError:
    """The error for a 3xx reply: where the service redirects to, and which base URL to set.

    The client never follows a redirect: httpx would carry ``chatrobot-sessionkey`` (and, to the
    same host, ``Authorization``) along to wherever it points.
    """
    phrase = httpx.codes.get_reason_phrase(status)
    fix = "set the base URL (base_url= or ESTATEBOT_BASE_URL)"
    location = headers.get("location", "").strip()
    if not location:
        message = f"the service redirects ({phrase}) without saying where (no Location); {fix}"
        return errors.APIError(message, operation=operation.name, status_code=status)
    try:
        target = httpx.URL(url).join(location) if url else httpx.URL(location)
    except httpx.InvalidURL:
        message = f"the service redirects ({phrase}) to an address that is not a URL"
        return errors.APIError(f"{message}; {fix}", operation=operation.name, status_code=status)
    where = shown_url(target)
    if target.path.endswith(operation.path) and target.host:
        # The same operation at another address: what comes before its path is the base URL.
        base = target.copy_with(
            username=None, password=None, query=None, fragment=None,
            path=target.path[: -len(operation.path)] or "/",
        )  # fmt: skip
        fix = f"set the base URL to {shown_url(base).rstrip('/')} (base_url= or ESTATEBOT_BASE_URL)"
    message = (
        f"the service redirects ({phrase}) to {where}; the client does not follow redirects, "
        f"which could carry the keys to another host: {fix}"
    )
    return errors.APIError(message, operation=operation.name, status_code=status)


@dataclass(frozen=True)
class StreamBody:
    """The whole body of a reply to ``stream: true`` that is labelled JSON but is no envelope:
    the stream's objects as one JSON array (as ASP.NET Core writes an ``IAsyncEnumerable``) or
    one per line. The chat stream decodes it as it would a live one."""

    content: bytes


def parse_response(
    operation: Operation,
    status: int,
    headers: Mapping[str, str],
    content: bytes,
    url: str | None = None,
    *,
    stream: bool = False,
    asked: Asked | None = None,
) -> Any:
    """The ``Data`` of a successful reply; raises the matching :class:`~errors.APIError`.

    ``url`` is the address asked, against which a relative redirect is resolved. For a reply to
    ``stream: true`` read whole (``stream``), a 2xx body that is not an envelope is the stream
    itself: a :class:`StreamBody`. ``asked`` (what the call named and carried) lets an error say
    what to do.
    """
    if 300 <= status < 400:
        raise redirect_error(operation, status, headers, url)
    envelope = _envelope(content)
    if 200 <= status < 300 and envelope is not None and envelope.success:
        return envelope.data
    if 200 <= status < 300 and envelope is None:
        if stream:
            return StreamBody(content)
        raise errors.APIError(
            "the reply is not a JSON envelope", operation=operation.name, status_code=status
        )
    raise api_error(operation, status, envelope, retry_after_from(headers), content, asked=asked)


def parse_data(call: Call[T], data: Any, status: int) -> T:
    """``Data`` as the call's result type; an unreadable shape is an :class:`~errors.APIError`."""
    try:
        return call.parse(data)
    except (ValidationError, TypeError, ValueError) as exc:
        # Never read an unknown shape as empty: say what came instead.
        if isinstance(data, Mapping):
            found = ", ".join(repr(str(key)) for key in list(data)[:20]) or "no fields"
            shape = f"an object with {found}"
        else:
            shape = f"{type(data).__name__} {redact(repr(data))[:80]}"
        if isinstance(exc, ValidationError):
            problems = exc.errors(include_url=False)
            detail = "; ".join(
                f"{'.'.join(str(p) for p in item['loc']) or 'Data'}: {item['msg']}"
                for item in problems[:5]
            )
        else:
            detail = str(exc)
        raise errors.APIError(
            f"unexpected Data in the reply ({shape}): {redact(detail)}",
            operation=call.operation.name,
            status_code=status,
        ) from None


#: Transport failures that mean the host was not reached: a name that does not resolve, a
#: refused connection, no answer to the connection attempt.
_UNREACHED = (httpx.ConnectError, httpx.ConnectTimeout)


def settled(call: Call[T], result: T, failures: Sequence[errors.EstatebotError]) -> T:
    """``result``, checked against the failed attempts before it by the call's
    ``after_retries`` (when it has one and there were any)."""
    if call.after_retries is None or not failures:
        return result
    return call.after_retries(result, failures)


def transport_error(
    operation: Operation,
    exc: httpx.TransportError,
    *,
    mid_stream: bool = False,
    asked: Asked | None = None,
) -> errors.APIConnectionError:
    """An httpx transport failure as :class:`~errors.APIConnectionError` (or its timeout kind).

    A host that cannot be reached is named, with the setting that chose it (``asked`` says where
    the call went). Raise it ``from exc``: the retry policy reads the cause to know whether
    anything was sent.
    """
    detail = redact(str(exc)) or type(exc).__name__
    sent = not isinstance(exc, NOT_SENT)
    if isinstance(exc, _UNREACHED) and asked is not None and asked.base_url:
        message = redact(unreachable(asked, detail))
        if isinstance(exc, httpx.TimeoutException):
            return errors.APITimeoutError(message, operation=operation.name, sent=sent)
        return errors.APIConnectionError(message, operation=operation.name, sent=sent)
    if isinstance(exc, httpx.TimeoutException):
        what = "timed out waiting for the next fragment" if mid_stream else "timed out"
        return errors.APITimeoutError(f"{what} ({detail})", operation=operation.name, sent=sent)
    what = "the stream broke off" if mid_stream else "connection failed"
    return errors.APIConnectionError(f"{what} ({detail})", operation=operation.name, sent=sent)


def attempt_error(
    operation: Operation,
    exc: Exception,
    deadline: Deadline,
    *,
    cap: int,
    mid_stream: bool = False,
    status: int | None = None,
    asked: Asked | None = None,
) -> errors.EstatebotError:
    """A failure while a reply (or a stream) was sent or read, as the project's error.

    ``exc`` is an httpx transport error, or the :class:`DeadlinePassed`, :class:`ReplyTooLarge`
    or :class:`BodyDecodeError` of the reading; ``mid_stream`` says it came while the body of a
    live stream was read. A timeout once the ``deadline`` has run out is the deadline's, named as
    such (and not retried); any other is the transport's. ``asked`` says where the call went.
    """
    if isinstance(exc, ReplyTooLarge):
        size = f" ({cap / 2**20:g} MiB)" if cap >= 2**20 else ""
        return errors.APIError(
            f"the reply is larger than the cap of {cap:,} bytes{size} set by max_reply_bytes; "
            "reading stopped there and none of it was used",
            operation=operation.name,
            status_code=status,
        )
    if isinstance(exc, BodyDecodeError):
        return errors.APIError(
            f"the reply cannot be read: {exc}", operation=operation.name, status_code=status
        )
    timed_out = isinstance(exc, DeadlinePassed | httpx.TimeoutException)
    if timed_out and deadline.seconds is not None and deadline.passed():
        if mid_stream:
            what = f"the streamed answer did not end within the {deadline.seconds:g} s stream "
            what += "deadline (stream_deadline= on the client)"
        else:
            what = f"no complete reply within the {deadline.seconds:g} s deadline "
            what += "(deadline= on the client)"
        sent = not isinstance(exc, NOT_SENT)
        return errors.APITimeoutError(
            what, operation=operation.name, sent=sent, deadline=deadline.seconds
        )
    if isinstance(exc, httpx.TransportError):
        return transport_error(operation, exc, mid_stream=mid_stream, asked=asked)
    raise TypeError(f"not a failure of a reply: {type(exc).__name__}")  # pragma: no cover


def is_live_stream(response: httpx.Response) -> bool:
    """A 200 reply to ``stream: true`` that is a stream and not a JSON envelope."""
    content_type = response.headers.get("content-type", "")
    return response.status_code == 200 and not content_type.startswith("application/json")
