"""A failed request in a person's words: what the chat panel says instead of the exception.

:func:`describe_failure` maps the client's exception classes to a short headline ("The service
did not answer in time") and keeps the detail (the service's message, redacted) for the line
under it. Nothing here can show a credential: every detail passes through the API layer's
redaction, and the headlines are fixed sentences.

A transport failure's text ("peer closed connection without sending complete message body") is
no headline: the headline says what happened in plain words ("The connection to the service was
lost while the answer was arriving; 412 characters had arrived") and the exception's kind and
text go to ``technical``, which the panel folds away under the card (and keeps in the history).
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from estatebot.api._redact import redact
from estatebot.errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ConfigurationError,
    EstatebotError,
    InvalidRequestError,
    NotFoundError,
    RateLimitError,
    RequestValidationError,
    ServerError,
)

__all__ = ["CLIENT_CLOSED", "Failure", "describe_failure", "is_closed_client_error"]

#: The headline of a panel whose client was closed (Reconnect makes a new one).
CLIENT_CLOSED = "This panel's client was closed"


@dataclass(frozen=True)
class Failure:
    """What the panel shows for a failure: ``title`` (a sentence), ``detail`` (the service's
    message for a rate limit or a refused key, else the error's full text naming the operation
    and status; always redacted; may be empty), ``retry_after`` (seconds, for a rate
    limit), ``closed`` (the client was closed: offer Reconnect) and ``technical`` (a transport
    failure's exception kind and text, redacted: for a folded "Details", never the headline)."""

    title: str
    detail: str = ""
    retry_after: float | None = None
    closed: bool = False
    technical: str = ""


def is_closed_client_error(exc: BaseException) -> bool:
    """Whether ``exc`` is httpx refusing to send on a closed client."""
    return isinstance(exc, RuntimeError) and "client has been closed" in str(exc)


def _status(exc: APIError) -> str:
    return f" (HTTP {exc.status_code})" if exc.status_code else ""


def _characters(count: int) -> str:
    return f"{count:,} character{'' if count == 1 else 's'}"


def _technical(exc: BaseException) -> str:
    return redact(f"{type(exc).__name__}: {exc}")


def _transport_failure(exc: APIConnectionError, arrived: int) -> Failure:
    """A transport failure: where it struck (before any text or amid the answer) in words, its
    text folded. A host never reached keeps its text in sight: it names the address and the
    setting that chose it."""
    if isinstance(exc, APITimeoutError):
        if arrived:
            title = (
                "The service stopped sending while the answer was arriving; "
                f"{_characters(arrived)} had arrived"
            )
            return Failure(title, technical=_technical(exc))
        return Failure("The service did not answer in time", technical=_technical(exc))
    if arrived:
        title = (
            "The connection to the service was lost while the answer was arriving; "
            f"{_characters(arrived)} had arrived"
        )
        return Failure(title, technical=_technical(exc))
    cause = exc.__cause__
    if isinstance(cause, httpx.TransportError) and not isinstance(
        cause, httpx.ConnectError | httpx.ConnectTimeout
    ):
        # Reached, then cut off (a reply dropped half-way): not a host that cannot be reached.
        title = "The connection to the service was lost before the answer arrived"
        return Failure(title, technical=_technical(exc))
    return Failure("Could not reach the service", redact(str(exc)))


def describe_failure(exc: BaseException, *, arrived: int = 0) -> Failure:
    """``exc`` as the panel shows it (see :class:`Failure`); ``arrived`` is how many characters
    of the answer had arrived when it failed."""
    if is_closed_client_error(exc):
        return Failure(CLIENT_CLOSED, closed=True)  # the status line offers Reconnect
    if isinstance(exc, RateLimitError):
        return Failure("Rate limited", redact(exc.message or ""), retry_after=exc.retry_after)
    if isinstance(exc, RequestValidationError):
        detail = "; ".join(f"{p.field}: {p.message}" for p in exc.problems)
        return Failure("The question was not sent", redact(detail))
    if isinstance(exc, APIConnectionError):
        return _transport_failure(exc, arrived)
    if isinstance(exc, AuthenticationError):
        # The service's words, and the hint that names the key and the variable that sets it.
        detail = exc.message or ""
        if exc.hint:
            detail = f"{detail}; {exc.hint}" if detail else exc.hint
        return Failure("The API key was refused", redact(detail))
    if isinstance(exc, NotFoundError):
        return Failure("The chatbot or chat session was not found" + _status(exc), redact(str(exc)))
    if isinstance(exc, ServerError):
        return Failure("The service failed" + _status(exc), redact(str(exc)))
    if isinstance(exc, InvalidRequestError):
        return Failure("The service refused the question", redact(str(exc)))
    if isinstance(exc, ConfigurationError):
        return Failure("The client is not set up", redact(str(exc)))
    if isinstance(exc, APIError):
        title = "The service answered with an error" + _status(exc)
        return Failure(title, redact(str(exc)))
    if isinstance(exc, EstatebotError):
        return Failure("The request failed", redact(str(exc)))
    # Never a traceback in the transcript: the kind of failure and its message.
    return Failure("Something went wrong", redact(f"{type(exc).__name__}: {exc}"))
