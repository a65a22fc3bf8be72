"""Fault injection for the emulator: latency, server errors, throttling and dropped connections.

A :class:`Faults` object is shared by the running app and the test that owns it: change its
attributes at any time and the next request sees the change. Every fault applies only to the
operations named in ``only`` (all operations when ``only`` is None), latency included, so a test
can slow down or break one operation while the others stay clean.

The app asks :meth:`Faults.decide` once per request and acts on the :class:`FaultDecision`:

* ``latency_ms`` — sleep that long before handling the request;
* ``throttle`` — answer 429 with ``Retry-After: retry_after_s`` (the next ``throttle_burst``
  requests get it, then the server is normal again);
* ``rate_limited`` — answer 429 because the chatbot the request is about had ``rate_limit``
  requests already in the last seconds (see below), with ``Retry-After`` the seconds until a
  slot frees, rounded up;
* ``fail`` — answer an HTTP 500 envelope (probability ``fail_rate``);
* ``drop`` — start the real reply and close the connection in the middle of its body
  (probability ``drop_rate``): a plain reply announces its full Content-Length and sends half
  of it, a stream stops after about half of its objects without its end marker. Either way the
  client sees a transport error, never a clean reply.

``rate_limit = RateLimit(N, SECONDS)`` (a pair ``(N, SECONDS)`` is taken too; None turns it
off) admits at most N requests per chatbot in any window of SECONDS seconds: a sliding window,
like the contract's message limit, and per chatbot because the contract's 429 carries the
chatbot's ``RateLimitMessage``. The app names the chatbot a request is about (its body's serial
number; for ClientAsk, the session's chatbot) only when it is one of the caller's own: a
request naming none (ModelList, a wrong key, another workspace's chatbot) is neither counted
nor limited. Only admitted requests count; the window is measured on ``clock``
(``time.monotonic`` unless a test gives another), and setting a new limit starts every window
afresh. From Python::

    from estatebot.emulator.faults import RateLimit

    server.faults.rate_limit = RateLimit(5, 10)  # 5 requests per chatbot in any 10 s, then 429
    server.faults.rate_limit = None              # off

``only_chatbots`` limits the request faults (latency, throttling, the rate limit, failures,
drops; not ``hallucinate_rate``) to the requests about the chatbots it names (serials; None,
the default, means every request): a 429 storm on one chatbot of a fleet while the others stay
clean. A request is about the chatbot the rate limit would count it against (above); one about
no chatbot (ModelList, a wrong key, another workspace's chatbot) is then left alone. It is
checked when set: any collection of serials is taken (kept as a frozenset), a bare string is
refused::

    server.faults.only_chatbots = {server.serials[0]}
    server.faults.throttle_burst = 50            # the next 50 requests about it get 429
    server.faults.only_chatbots = None           # every request again

``spare_next`` lets the next N requests through untouched by any fault (counted down like
``throttle_burst``): with ``only={"RealEstateList"}`` and ``fail_rate=1``, ``spare_next=1``
fails every page of a pull but the first.

One fault changes answers rather than requests: ``hallucinate_rate`` is the share of ClientAsk
answers listing homes in which the emulator states something its listings do not say (a wrong
price, a wrong bedroom count, or a listing it does not have; see :mod:`.hallucinate`). Whether
an answer is falsified, and how, is drawn from ``seed`` and the question's text alone, so the
same question gets the same answer whatever order or concurrency the questions come in.

Random draws come from a :class:`random.Random` seeded with ``seed``, so a run is repeatable;
call :meth:`Faults.reseed` to restart the sequence.
"""

from __future__ import annotations

import math
import random
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RateLimit:
    """At most ``count`` requests per chatbot in any window of ``seconds`` seconds."""

    count: int
    seconds: float

    def __post_init__(self) -> None:
        count, seconds = self.count, self.seconds
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(
                f"rate_limit: the count of requests must be a whole number >= 1, not {count!r}"
            )
        number = isinstance(seconds, int | float) and not isinstance(seconds, bool)
        if not (number and math.isfinite(seconds) and seconds > 0):
            raise ValueError(
                f"rate_limit: the window must be a positive number of seconds, not {seconds!r}"
            )

    @classmethod
    def of(cls, value: RateLimit | tuple[int, float] | None) -> RateLimit | None:
        """``value`` as a limit: a :class:`RateLimit`, a ``(count, seconds)`` pair or None."""
        if value is None or isinstance(value, RateLimit):
            return value
        if not isinstance(value, tuple) or len(value) != 2:
            raise ValueError(f"rate_limit must be (count, seconds) or None, not {value!r}")
        return cls(*value)

    def __str__(self) -> str:
        return f"{self.count} requests per {self.seconds:g} s"


@dataclass(frozen=True)
class FaultDecision:
    """What to do to one request."""

    latency_ms: float = 0.0
    throttle: bool = False
    fail: bool = False
    drop: bool = False
    #: The throttle is the rate limit's (not ``throttle_burst``'s).
    rate_limited: bool = False
    #: The ``Retry-After`` of a throttled request, in whole seconds (None when not throttled).
    retry_after_s: int | None = None

    @property
    def any(self) -> bool:
        """Whether the request is affected at all."""
        return bool(self.latency_ms) or self.throttle or self.fail or self.drop


@dataclass
class Faults:
    """Mutable fault settings, read by the server on every request."""

    latency_ms: float = 0.0
    fail_rate: float = 0.0
    throttle_burst: int = 0
    retry_after_s: int = 1
    drop_rate: float = 0.0
    hallucinate_rate: float = 0.0
    only: Collection[str] | None = None
    seed: int | None = 0
    rate_limit: RateLimit | None = None
    spare_next: int = 0
    only_chatbots: frozenset[str] | None = None
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    _rng: random.Random = field(init=False, repr=False, compare=False)
    # The times of the requests admitted in the current window, per chatbot serial, oldest first.
    _admitted: dict[str, deque[float]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def __setattr__(self, name: str, value: Any) -> None:
        # A limit is checked when set (not on the next request, where a bad one would be a 500)
        # and a new one starts every window afresh.
        if name == "rate_limit":
            value = RateLimit.of(value)
            object.__setattr__(self, "_admitted", {})
        elif name == "only_chatbots":
            value = _serials(value)
        object.__setattr__(self, name, value)

    def reseed(self, seed: int | None = None) -> None:
        """Restart the random sequence (with a new seed when given)."""
        if seed is not None:
            self.seed = seed
        self._rng = random.Random(self.seed)

    def clear(self) -> None:
        """Turn every fault off (the seed is kept)."""
        self.latency_ms = 0.0
        self.fail_rate = 0.0
        self.throttle_burst = 0
        self.drop_rate = 0.0
        self.hallucinate_rate = 0.0
        self.rate_limit = None
        self.spare_next = 0
        self.only = None
        self.only_chatbots = None

    def applies_to(self, operation: str) -> bool:
        """Whether faults apply to this operation name (``only`` unset means all)."""
        return self.only is None or operation in self.only

    def applies_to_chatbot(self, chatbot: str | None) -> bool:
        """Whether faults apply to a request about ``chatbot`` (``only_chatbots`` unset means
        every request, about a chatbot or not)."""
        return self.only_chatbots is None or chatbot in self.only_chatbots

    @property
    def needs_chatbot(self) -> bool:
        """Whether deciding needs the chatbot a request is about (a rate limit or
        ``only_chatbots`` is set): the app finds it only then."""
        return self.rate_limit is not None or self.only_chatbots is not None

    def decide(self, operation: str, chatbot: str | None = None) -> FaultDecision:
        """Draw the faults for one request of ``operation`` about ``chatbot`` (a serial, or None
        when it names none); consumes one throttle or spare slot if used, and counts the request
        against the rate limit when admitted."""
        if not self.applies_to(operation) or not self.applies_to_chatbot(chatbot):
            return FaultDecision()
        if self.spare_next > 0:
            self.spare_next -= 1
            return FaultDecision()
        throttle = self.throttle_burst > 0
        if throttle:
            self.throttle_burst -= 1
        wait = None if throttle or chatbot is None else self._admit(chatbot)
        refused = throttle or wait is not None
        if throttle:
            wait = max(1, int(self.retry_after_s))
        # Draw both numbers every time so the sequence does not depend on which rates are set.
        fail_draw = self._rng.random()
        drop_draw = self._rng.random()
        return FaultDecision(
            latency_ms=max(0.0, float(self.latency_ms)),
            throttle=refused,
            fail=not refused and fail_draw < self.fail_rate,
            drop=drop_draw < self.drop_rate,
            rate_limited=refused and not throttle,
            retry_after_s=wait,
        )

    def _admit(self, chatbot: str) -> int | None:
        """Count a request about ``chatbot``: None when the rate limit admits it, else the whole
        seconds until the oldest request in the window leaves it (and a slot frees)."""
        limit = self.rate_limit
        if limit is None:
            return None
        now = self.clock()
        times = self._admitted.setdefault(chatbot, deque())
        while times and times[0] <= now - limit.seconds:
            times.popleft()
        if len(times) < limit.count:
            times.append(now)
            return None
        # Rounded up to whole seconds, past float noise (3.15 + 1.0 - 3.15 is a hair over 1).
        return max(1, math.ceil(round(times[0] + limit.seconds - now, 9)))

    def in_effect(self) -> list[str]:
        """The faults that are on, in words, one item each (an empty list when none is)."""
        shown = [
            f"latency {self.latency_ms:g} ms" if self.latency_ms else "",
            f"{_share(self.fail_rate)} of requests fail with 500" if self.fail_rate else "",
            f"{_share(self.drop_rate)} of replies cut off" if self.drop_rate else "",
            f"the next {self.throttle_burst} requests get 429" if self.throttle_burst else "",
            f"at most {self.rate_limit} per chatbot, then 429" if self.rate_limit else "",
            f"{_share(self.hallucinate_rate)} of answers listing homes misstate one"
            if self.hallucinate_rate
            else "",
        ]
        limits = []
        if self.only is not None:
            limits.append(", ".join(sorted(self.only)))
        if self.only_chatbots is not None:
            limits.append(f"chatbots {', '.join(sorted(self.only_chatbots)) or '(none)'}")
        only = f" (only {'; '.join(limits)})" if limits else ""
        return [text + only for text in shown if text]

    def hallucination(self, question: str) -> random.Random | None:
        """A generator to falsify the answer to ``question`` with, or None to answer truly.

        Drawn from ``seed`` and the question alone (not from the request sequence): under one
        seed a question is always answered the same way, whatever else is asked meanwhile.
        """
        if self.hallucinate_rate <= 0 or not self.applies_to("ClientAsk"):
            return None
        # A str seed is hashed with SHA-512: stable across runs and processes.
        seed = f"{self.seed}\x1f{question}" if self.seed is not None else None
        rng = random.Random(seed)
        return rng if rng.random() < self.hallucinate_rate else None


def _serials(value: object) -> frozenset[str] | None:
    """``only_chatbots`` as set: None, or a collection of serials (a bare string, which would
    be taken letter by letter, is refused)."""
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise ValueError(
            f"only_chatbots must be None or a collection of chatbot serials, not {value!r}"
        )
    serials = frozenset(value)
    wrong = sorted(repr(s) for s in serials if not isinstance(s, str) or not s)
    if wrong:
        raise ValueError(
            f"only_chatbots: a chatbot serial is a non-empty string, not {', '.join(wrong)}"
        )
    return serials


def _share(rate: float) -> str:
    """A rate as a percentage: ``0.25`` -> ``25%``."""
    return f"{rate * 100:g}%"
