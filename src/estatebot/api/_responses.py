"""What came back, as ``Data`` or the right error.

:func:`parse_response` reads an HTTP status and an envelope into the reply's ``Data`` or the
matching :class:`~estatebot.api.errors.APIError`; :func:`parse_data` reads ``Data`` as the
call's result type; :func:`transport_error` turns an httpx failure into an
:class:`~estatebot.api.errors.APIConnectionError`; :func:`check_reply` tells a live stream
from an envelope.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import httpx
import pydantic_core
from pydantic import ValidationError

from estatebot.api import errors, models
from estatebot.api._base import Call, Operation
from estatebot.api._reading import without_references
from estatebot.api._redact import redact
from estatebot.api._retry import NOT_SENT

T = TypeVar("T")

_BOM = b"\xef\xbb\xbf"


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
    if content.startswith(_BOM):  # some servers put a UTF-8 byte-order mark before the JSON
        content = content[len(_BOM) :]
    try:
        # pydantic's JSON reader: the same values as json.loads, in about two thirds of the time
        # (a List page of 100 listings is some 80 kB).
        raw = pydantic_core.from_json(content, cache_strings="keys")
    except (ValueError, UnicodeDecodeError):
        return None
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
) -> errors.APIError:
    """The error for a failed reply: its class from the HTTP status, or from ``Code`` when the
    HTTP status says success (``Success: false`` with HTTP 200). Without an envelope message, a
    problem body (``application/problem+json``, ASP.NET validation) says what went wrong."""
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
    retry_after = parse_retry_after(headers.get("retry-after"))
    raise api_error(operation, status, envelope, retry_after, content)


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


def transport_error(
    operation: Operation, exc: httpx.TransportError, *, mid_stream: bool = False
) -> errors.APIConnectionError:
    """An httpx transport failure as :class:`~errors.APIConnectionError` (or its timeout kind).

    Raise it ``from exc``: the retry policy reads the cause to know whether anything was sent.
    """
    detail = redact(str(exc)) or type(exc).__name__
    sent = not isinstance(exc, NOT_SENT)
    if isinstance(exc, httpx.TimeoutException):
        what = "timed out waiting for the next fragment" if mid_stream else "timed out"
        return errors.APITimeoutError(f"{what} ({detail})", operation=operation.name, sent=sent)
    what = "the stream broke off" if mid_stream else "connection failed"
    return errors.APIConnectionError(f"{what} ({detail})", operation=operation.name, sent=sent)


def is_live_stream(response: httpx.Response) -> bool:
    """A 200 reply to ``stream: true`` that is a stream and not a JSON envelope."""
    content_type = response.headers.get("content-type", "")
    return response.status_code == 200 and not content_type.startswith("application/json")


def check_reply(operation: Operation, response: httpx.Response, *, stream: bool) -> Any:
    """The ``Data`` of a read reply, None for a live stream; raises for a failure."""
    if stream and is_live_stream(response):
        return None
    return parse_response(operation, response.status_code, response.headers, response.content)
