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

logger = logging.getLogger("estatebot.api")

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
    honoured instead. One longer than ``max_retry_after`` seconds is not waited out at all: the
    error is raised at once, with its ``retry_after``, for the caller to decide.
    """

    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    max_retry_after: float = 60.0

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
        if not operation.retry_after_send:
            return (
                operation.retry_throttled
                and isinstance(exc, errors.APIError)
                and 429 in (exc.status_code, exc.code)
            )
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
