"""A failed request in a person's words: what the chat panel says instead of the exception.

:func:`describe_failure` maps the client's exception classes to a short headline ("The service
did not answer in time") and keeps the detail (the service's message, redacted) for the line
under it. Nothing here can show a credential: every detail passes through the API layer's
redaction, and the headlines are fixed sentences.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    limit) and ``closed`` (the client was closed: offer Reconnect)."""

    title: str
    detail: str = ""
    retry_after: float | None = None
    closed: bool = False


def is_closed_client_error(exc: BaseException) -> bool:
    """Whether ``exc`` is httpx refusing to send on a closed client."""
    return isinstance(exc, RuntimeError) and "client has been closed" in str(exc)


def _status(exc: APIError) -> str:
    return f" (HTTP {exc.status_code})" if exc.status_code else ""


def describe_failure(exc: BaseException) -> Failure:
    """``exc`` as the panel shows it (see :class:`Failure`)."""
    if is_closed_client_error(exc):
        return Failure(CLIENT_CLOSED, closed=True)  # the status line offers Reconnect
    if isinstance(exc, RateLimitError):
        return Failure("Rate limited", redact(exc.message or ""), retry_after=exc.retry_after)
    if isinstance(exc, RequestValidationError):
        detail = "; ".join(f"{p.field}: {p.message}" for p in exc.problems)
        return Failure("The question was not sent", redact(detail))
    if isinstance(exc, APITimeoutError):
        return Failure("The service did not answer in time", redact(str(exc)))
    if isinstance(exc, APIConnectionError):
        return Failure("Could not reach the service", redact(str(exc)))
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
