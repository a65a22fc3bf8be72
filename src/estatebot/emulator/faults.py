"""Fault injection for the emulator: latency, server errors, throttling and dropped connections.

A :class:`Faults` object is shared by the running app and the test that owns it: change its
attributes at any time and the next request sees the change. Every fault applies only to the
operations named in ``only`` (all operations when ``only`` is None), latency included, so a test
can slow down or break one operation while the others stay clean.

The app asks :meth:`Faults.decide` once per request and acts on the :class:`FaultDecision`:

* ``latency_ms`` — sleep that long before handling the request;
* ``throttle`` — answer 429 with ``Retry-After: retry_after_s`` (the next ``throttle_burst``
  requests get it, then the server is normal again);
* ``fail`` — answer an HTTP 500 envelope (probability ``fail_rate``);
* ``drop`` — start the real reply and close the connection in the middle of its body
  (probability ``drop_rate``): a plain reply announces its full Content-Length and sends half
  of it, a stream stops after about half of its objects without its end marker. Either way the
  client sees a transport error, never a clean reply.

One fault changes answers rather than requests: ``hallucinate_rate`` is the share of ClientAsk
answers listing homes in which the emulator states something its listings do not say (a wrong
price, a wrong bedroom count, or a listing it does not have; see :mod:`.hallucinate`). Whether
an answer is falsified, and how, is drawn from ``seed`` and the question's text alone, so the
same question gets the same answer whatever order or concurrency the questions come in.

Random draws come from a :class:`random.Random` seeded with ``seed``, so a run is repeatable;
call :meth:`Faults.reseed` to restart the sequence.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass, field


@dataclass(frozen=True)
class FaultDecision:
    """What to do to one request."""

    latency_ms: float = 0.0
    throttle: bool = False
    fail: bool = False
    drop: bool = False

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
    _rng: random.Random = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

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
        self.only = None

    def applies_to(self, operation: str) -> bool:
        """Whether faults apply to this operation name (``only`` unset means all)."""
        return self.only is None or operation in self.only

    def decide(self, operation: str) -> FaultDecision:
        """Draw the faults for one request of ``operation``; consumes one throttle slot if used."""
        if not self.applies_to(operation):
            return FaultDecision()
        throttle = self.throttle_burst > 0
        if throttle:
            self.throttle_burst -= 1
        # Draw both numbers every time so the sequence does not depend on which rates are set.
        fail_draw = self._rng.random()
        drop_draw = self._rng.random()
        return FaultDecision(
            latency_ms=max(0.0, float(self.latency_ms)),
            throttle=throttle,
            fail=not throttle and fail_draw < self.fail_rate,
            drop=drop_draw < self.drop_rate,
        )

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
