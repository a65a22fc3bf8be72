"""The checks of a client's numeric settings, each refusing an impossible value by its name.

A timeout of NaN, a negative deadline or an infinite backoff would otherwise fail far from where
it was set (a ``ValueError`` from deep inside httpx or asyncio, or a wait that never ends). Each
check raises :class:`~estatebot.errors.ConfigurationError` (a ``ValueError``) naming the argument
and the value given, before anything is sent.
"""

from __future__ import annotations

import math
from typing import Any

import httpx

from estatebot import errors

__all__ = ["byte_count", "count", "seconds", "timeout", "wait"]


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def seconds(value: Any, argument: str) -> float | None:
    """A limit in seconds: a finite number above 0, or None for no limit."""
    if value is None:
        return None
    if not _is_number(value) or not (0 < value < math.inf):
        raise errors.ConfigurationError(
            f"{argument} must be a number of seconds above 0, or None for no limit; got {value!r}"
        )
    return float(value)


def wait(value: Any, argument: str) -> float:
    """A wait in seconds: a finite number, 0 or more."""
    if not _is_number(value) or not (0 <= value < math.inf):
        raise errors.ConfigurationError(
            f"{argument} must be a finite number of seconds, 0 or more; got {value!r}"
        )
    return float(value)


def count(value: Any, argument: str) -> int:
    """A number of times: a whole number, 0 or more."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise errors.ConfigurationError(
            f"{argument} must be a whole number, 0 or more; got {value!r}"
        )
    return value


def byte_count(value: Any, argument: str) -> int:
    """A size in bytes: a whole number above 0."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise errors.ConfigurationError(
            f"{argument} must be a whole number of bytes above 0; got {value!r}"
        )
    return value


_TIMEOUT_PARTS = ("connect", "read", "write", "pool")


def timeout(value: Any, argument: str = "timeout") -> float | httpx.Timeout | None:
    """A timeout as httpx takes it: seconds above 0 (finite), an :class:`httpx.Timeout` whose
    every part is so or None, or None for none."""
    if isinstance(value, httpx.Timeout):
        for part in _TIMEOUT_PARTS:
            seconds(getattr(value, part), f"{argument}.{part}")
        return value
    return seconds(value, argument)
