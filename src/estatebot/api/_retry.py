"""The retry policy: whether a failed attempt deserves another, and how long to wait first.

:class:`RetryPolicy` gives its answers as tenacity settings, which the send loops of
:mod:`estatebot.api.client` run; :func:`log_attempt` is their one DEBUG line per request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import httpx
import tenacity

from estatebot import errors
from estatebot.api._base import Operation
from estatebot.api._settings import count, wait

logger = logging.getLogger("estatebot.api")

#: Transport failures that prove the request never reached the server.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
#: Statuses that say the server did not handle the request: safe to send again, whatever it is.
NOT_HANDLED = frozenset({429, 503})
#: Other statuses worth another attempt, where the operation may be sent again (and any 5xx).
RETRY_STATUSES = frozenset({408})


def _not_sent(exc: BaseException) -> bool:
    return isinstance(exc, errors.APIConnectionError) and isinstance(exc.__cause__, NOT_SENT)


def may_have_run(exc: BaseException) -> bool:
    """Whether the service may have carried out, unanswered, the request that failed with
    ``exc``: a transport failure once it was sent (dropped, reset, timed out), a 408 or a 5xx.
    Not a request that never left, nor one the service says it did not handle (429, 503), nor
    one it refused (another 4xx)."""
    if isinstance(exc, errors.APIConnectionError):
        return exc.sent and not _not_sent(exc)
    if isinstance(exc, errors.APIError):
        kind = exc.kind
        return kind is not None and kind not in NOT_HANDLED and (kind == 408 or kind >= 500)
    return False


def _not_handled(operation: Operation, exc: BaseException) -> bool:
    if not isinstance(exc, errors.APIError) or exc.kind not in NOT_HANDLED:
        return False
    return exc.kind != 429 or operation.retry_throttled


@dataclass(frozen=True)
class RetryPolicy:
    """When another attempt is made, and after how long.

    ``max_retries`` attempts after the first; a jittered exponential backoff from
    ``backoff_base`` seconds up to ``backoff_max``; the wait the service asks for
    (``Retry-After``, ``RateLimit-Reset``, ``X-RateLimit-Reset``: see :mod:`._retry_after`) is
    honoured instead. One longer than ``max_retry_after`` seconds is not waited out at all: the
    error is raised at once, with its ``retry_after``, for the caller to decide. Each setting
    must be a finite number, none below 0 (:class:`~errors.ConfigurationError` names it).

    What is retried goes by what the failure means (see :class:`~._base.Operation`): a request
    that never left or that the server says it did not handle (429, 503), for every operation;
    any other transport failure, 408 or 5xx only where the operation may be sent again.
    """

    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        count(self.max_retries, "max_retries")
        for name in ("backoff_base", "backoff_max", "max_retry_after"):
            wait(getattr(self, name), name)

    def should_retry(self, operation: Operation, exc: BaseException | None) -> bool:
        """Whether the failure ``exc`` of ``operation`` deserves another attempt."""
        if exc is None:
            return False
        if isinstance(exc, errors.APITimeoutError) and exc.deadline is not None:
            # The caller's bound on a whole reply: a server that trickled once will do so again.
            return False
        if _not_sent(exc):
            return True
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None and retry_after > self.max_retry_after:
            return False  # waiting less than asked would only be refused again
        if _not_handled(operation, exc):
            return True
        if not operation.retry_after_send:
            return False
        if isinstance(exc, errors.APIConnectionError):  # reset, dropped, read timeout
            return True
        if isinstance(exc, errors.APIError):
            status = exc.kind
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
