"""How long a service asks to be left alone: its wait headers read in one place.

Services say it in different headers, so :func:`retry_after_from` reads, in this order:

* ``Retry-After`` (RFC 9110): delta-seconds or an HTTP date;
* ``RateLimit-Reset`` (the IETF rate-limit draft, up to its 7th version): delta-seconds; or the
  ``reset=`` / ``t=`` parameter of a combined ``RateLimit`` field (the draft's later versions);
* ``X-RateLimit-Reset`` (GitHub, Twitter and many gateways): delta-seconds, or the Unix time the
  window resets at when the number is that of a date (above 10^9; in milliseconds above 10^12).

The first that reads as a number of seconds wins; one in the past is 0. Every path that builds a
failure's ``retry_after`` goes through here.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["parse_retry_after", "reset_seconds", "retry_after_from"]

#: Above this a reset value is a Unix time in seconds (10^9 s is September 2001), not a wait.
EPOCH_SECONDS = 1e9
#: Above this it is a Unix time in milliseconds.
EPOCH_MILLISECONDS = 1e12

# The reset parameter of a combined ``RateLimit`` field: ``reset=30`` or ``t=30``.
_RESET_PARAMETER = re.compile(r"(?:^|[\s;,])(?:reset|t)\s*=\s*\"?([0-9.]+)", re.IGNORECASE)


def _number(text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` header in seconds: delta-seconds or an HTTP date; None if absent/bad."""
    if value is None or not value.strip():
        return None
    seconds = _number(value)
    if seconds is None:
        try:
            when = parsedate_to_datetime(value.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # an HTTP date is always GMT
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(seconds, 0.0)


def reset_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """A rate-limit reset header in seconds from ``now`` (a Unix time, by default the clock's):
    delta-seconds, or a Unix time in seconds or milliseconds; None if absent or not a number."""
    if value is None:
        return None
    number = _number(value)
    if number is None:
        return None
    if number > EPOCH_SECONDS:
        epoch = number / 1000 if number > EPOCH_MILLISECONDS else number
        number = epoch - (time.time() if now is None else now)
    return max(number, 0.0)


def _combined_reset(value: str | None) -> str | None:
    if value is None:
        return None
    match = _RESET_PARAMETER.search(value)
    return match.group(1) if match else None


def retry_after_from(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """The wait in seconds a reply's headers ask for (see the module), or None if none does.

    ``headers`` are looked up without case (pass an :class:`httpx.Headers`, or a mapping with
    lower-case names).
    """
    moment = now or datetime.now(UTC)
    seconds = parse_retry_after(headers.get("retry-after"), now=moment)
    resets = (
        headers.get("ratelimit-reset"),
        _combined_reset(headers.get("ratelimit")),
        headers.get("x-ratelimit-reset"),
    )
    for value in resets:
        if seconds is not None:
            break
        seconds = reset_seconds(value, now=moment.timestamp())
    return seconds
