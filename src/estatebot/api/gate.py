"""Request limits shared by many clients of one service: a cap on requests in flight, and a
hold-off that a 429 or 503 to any of them puts on all of them.

A fleet runs one client per chatbot, in many threads (or, with
:class:`~estatebot.fleet.dask_limits.DaskServiceGate`, in many processes), against one service.
Each client given the same gate (``Client(gate=...)``) asks it before every attempt:

* :meth:`RequestGate.enter` waits while the service is held off, then takes one of the
  ``max_in_flight`` slots; :meth:`RequestGate.leave` gives it back once the reply is read (for a
  live chat stream, once its headers arrive: a slot is never held for a whole streamed answer);
* :meth:`RequestGate.hold_off` is called by a client that got a 429 or 503: every client
  sharing the gate then waits out what the service asked for (``Retry-After`` and the like),
  else a short default, so the others stop adding to the load that caused it. The client that
  got it retries as its own retry policy says. Overlapping hold-offs extend, never shorten,
  the wait.

:class:`GateBase` holds those rules once, over four primitives a gate fills in (where the slots
and the hold-off's end are kept); :class:`ServiceGate` keeps them in this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator
from typing import ClassVar, NoReturn, Protocol, TypeVar, runtime_checkable

from estatebot import errors
from estatebot.api._settings import count, wait

__all__ = ["DEFAULT_HOLD_OFF", "GateBase", "RequestGate", "ServiceGate", "aturn", "turn"]

T = TypeVar("T")

#: The hold-off, in seconds, after a 429 or 503 that does not say how long to wait.
DEFAULT_HOLD_OFF = 1.0
#: How often a caller blocked on a full gate looks again for a hold-off begun meanwhile.
_SLOT_POLL = 0.2
#: An awaiting caller finding the gate full looks again after this pause, doubled each time
#: up to the next: short enough to follow a quick reply, long enough to cost nothing.
_FIRST_PAUSE = 0.002
_LONGEST_PAUSE = 0.05


@runtime_checkable
class RequestGate(Protocol):
    """What a client asks of a limiter it shares with the other clients of one service."""

    def enter(self) -> None:
        """Block while the service is held off, then take a slot."""

    async def aenter(self) -> None:
        """Await, without blocking the event loop, while the service is held off; then take
        a slot."""

    def leave(self) -> None:
        """Give back the slot taken by `enter` or `aenter`."""

    async def aleave(self) -> None:
        """Give back the slot taken by `enter` or `aenter`, without blocking the event loop."""

    def hold_off(self, seconds: float | None = None) -> None:
        """Hold off every caller for `seconds` (None: the gate's default), after a 429 or 503.

        Args:
            seconds: The wait the service asked for, or None when it said none.
        """

    async def ahold_off(self, seconds: float | None = None) -> None:
        """`hold_off`, without blocking the event loop.

        Args:
            seconds: The wait the service asked for, or None when it said none.
        """


class GateBase(ABC):
    """The waiting rules every gate shares, and its counters, over four primitives.

    A gate keeps its slots and the end of its hold-off where its callers all see them (a
    semaphore of this process, or of a cluster); the rules of `RequestGate` are written here
    once. The counters are those this object saw: `throttled` (429s and 503s reported),
    `held_off_seconds` (the total time its callers waited on hold-offs), `peak_in_flight`
    (the most of its callers between `enter` and `leave` at once).

    Args:
        max_in_flight: The most requests in flight at once across every client sharing it.
        default_hold_off: The hold-off in seconds after a 429 or 503 that names no wait.

    Raises:
        ConfigurationError: `max_in_flight` is not a whole number of 1 or more, or
            `default_hold_off` is not a finite number of seconds, 0 or more.
    """

    #: Whether the primitives may block (a call to another process): the awaiting methods
    #: then run them in a thread, so the event loop never waits on them.
    _offload: ClassVar[bool] = False

    def __init__(self, max_in_flight: int, default_hold_off: float = DEFAULT_HOLD_OFF) -> None:
        if count(max_in_flight, "max_in_flight") < 1:
            raise errors.ConfigurationError(
                f"max_in_flight must be a whole number, 1 or more; got {max_in_flight!r}"
            )
        self.max_in_flight = max_in_flight
        self.default_hold_off = wait(default_hold_off, "default_hold_off")
        self._reset_counts()

    def _reset_counts(self) -> None:
        self._counting = threading.Lock()
        self._in_flight = 0
        self._peak = 0
        self._throttled = 0
        self._held_off = 0.0

    # ------------------------------------------------------------------ primitives

    @abstractmethod
    def _hold_off_left(self) -> float:
        """The seconds until the hold-off ends (0 or less when there is none)."""

    @abstractmethod
    def _take(self, timeout: float) -> bool:
        """Take a slot, waiting at most `timeout` seconds (0: not at all); whether taken."""

    @abstractmethod
    def _give_back(self) -> None:
        """Give back a slot `_take` took."""

    @abstractmethod
    def _extend_hold_off(self, seconds: float) -> None:
        """Make the hold-off last at least `seconds` from now (never shorter than it was)."""

    # ------------------------------------------------------------------ counters

    @property
    def throttled(self) -> int:
        """How many 429 or 503 replies were reported to this gate."""
        return self._throttled

    @property
    def held_off_seconds(self) -> float:
        """The total seconds this gate's callers spent waiting out hold-offs."""
        return self._held_off

    @property
    def peak_in_flight(self) -> int:
        """The most callers that held a slot of this gate at once."""
        return self._peak

    @property
    def hold_off_left(self) -> float:
        """The seconds until the hold-off ends; 0 when the service is not held off."""
        return max(self._hold_off_left(), 0.0)

    @property
    def in_flight(self) -> int:
        """How many callers hold a slot of this gate now."""
        return self._in_flight

    # ------------------------------------------------------------------ the rules

    def enter(self) -> None:
        """Block while the service is held off, then take a slot (blocking while all are
        taken). A hold-off begun while waiting for a slot is waited out too."""
        while True:
            self._wait_out_hold_off()
            if self._try_enter(_SLOT_POLL):
                return

    async def aenter(self) -> None:
        """`enter`, awaiting: the event loop is never blocked (a full gate is polled)."""
        pause = _FIRST_PAUSE
        while True:
            await self._await_hold_off()
            if await self._settle(self._try_enter, 0.0, undo=self.leave):
                return
            await asyncio.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE)

    def leave(self) -> None:
        """Give back the slot taken by `enter` or `aenter`."""
        with self._counting:
            self._in_flight -= 1
        self._give_back()

    async def aleave(self) -> None:
        """`leave`, without blocking the event loop."""
        await self._settle(self.leave)

    def hold_off(self, seconds: float | None = None) -> None:
        """Hold off every caller of the gate for `seconds` from now, after a 429 or 503; a
        hold-off already longer stays as it is.

        Args:
            seconds: The wait the service asked for; None for the gate's `default_hold_off`.

        Raises:
            ConfigurationError: `seconds` is not a finite number, 0 or more.
        """
        wait_for = self.default_hold_off if seconds is None else wait(seconds, "seconds")
        with self._counting:
            self._throttled += 1
        if wait_for > 0:
            self._extend_hold_off(wait_for)

    async def ahold_off(self, seconds: float | None = None) -> None:
        """`hold_off`, without blocking the event loop.

        Args:
            seconds: The wait the service asked for; None for the gate's `default_hold_off`.
        """
        await self._settle(self.hold_off, seconds)

    # ------------------------------------------------------------------ waiting

    def _try_enter(self, timeout: float) -> bool:
        """Take a slot if one frees within `timeout` while no hold-off is on; whether taken."""
        if not self._take(timeout):
            return False
        try:
            held_off = self._hold_off_left() > 0  # begun while this caller waited for the slot
        except BaseException:
            self._give_back()  # a slot is never kept by a caller that does not go on
            raise
        if held_off:
            self._give_back()
            return False
        with self._counting:
            self._in_flight += 1
            self._peak = max(self._peak, self._in_flight)
        return True

    def _wait_out_hold_off(self) -> None:
        started = time.monotonic()
        waited = False
        while (left := self._hold_off_left()) > 0:
            waited = True
            time.sleep(left)  # then look again: another 429 may have extended it
        if waited:
            self._add_held_off(time.monotonic() - started)

    async def _await_hold_off(self) -> None:
        started = time.monotonic()
        waited = False
        while (left := await self._settle(self._hold_off_left)) > 0:
            waited = True
            await asyncio.sleep(left)
        if waited:
            self._add_held_off(time.monotonic() - started)

    def _add_held_off(self, seconds: float) -> None:
        with self._counting:
            self._held_off += seconds

    async def _settle(
        self,
        work: Callable[..., T],
        *args: object,
        undo: Callable[[], object] | None = None,
    ) -> T:
        """`work(*args)` for an awaiting caller: called at once when the primitives never
        block, else in a thread; should the caller be cancelled meanwhile, a slot the thread
        took is given back by `undo` (when it returns True) rather than lost."""
        if not self._offload:
            return work(*args)
        task = asyncio.ensure_future(asyncio.to_thread(work, *args))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if undo is not None:
                task.add_done_callback(lambda done: _undo_if_taken(done, undo))
            raise


def _undo_if_taken(done: asyncio.Future[T], undo: Callable[[], object]) -> None:
    if not done.cancelled() and done.exception() is None and done.result() is True:
        done.get_loop().run_in_executor(None, undo)


class ServiceGate(GateBase):
    """A limit shared by every client of one service in this process, in any thread: at most
    `max_in_flight` requests in flight at once, and a 429 or 503 to any of them holds off all
    of them for the wait the service asked for (else `default_hold_off` seconds).

    Give the same gate to every client of the service: `Client(gate=gate)`,
    `AsyncClient(gate=gate)` (`Client.like` passes it on). Its counters (`throttled`,
    `held_off_seconds`, `peak_in_flight`) tell a report what it did. It cannot be pickled: a
    copy in another process would limit nothing there; use
    `estatebot.fleet.dask_limits.DaskServiceGate` for Dask worker processes.

    Args:
        max_in_flight: The most requests in flight at once across all clients sharing it.
        default_hold_off: The hold-off in seconds after a 429 or 503 that names no wait.

    Raises:
        ConfigurationError: `max_in_flight` is not a whole number of 1 or more, or
            `default_hold_off` is not a finite number of seconds, 0 or more.
    """

    def __init__(self, max_in_flight: int = 16, *, default_hold_off: float = DEFAULT_HOLD_OFF):
        super().__init__(max_in_flight, default_hold_off)
        self._slots = threading.BoundedSemaphore(max_in_flight)
        self._until_lock = threading.Lock()
        self._until = 0.0  # on the monotonic clock

    def _hold_off_left(self) -> float:
        return self._until - time.monotonic()

    def _take(self, timeout: float) -> bool:
        if timeout <= 0:
            return self._slots.acquire(blocking=False)
        return self._slots.acquire(timeout=timeout)

    def _give_back(self) -> None:
        self._slots.release()

    def _extend_hold_off(self, seconds: float) -> None:
        with self._until_lock:
            self._until = max(self._until, time.monotonic() + seconds)

    def __reduce__(self) -> NoReturn:
        raise TypeError(
            "a ServiceGate limits the clients of one process and cannot be pickled: a copy in "
            "another process would limit nothing there. For Dask worker processes use "
            "estatebot.fleet.dask_limits.DaskServiceGate."
        )

    def __repr__(self) -> str:
        left = self.hold_off_left
        holding = f", holding off {left:.1f} s" if left > 0 else ""
        return (
            f"ServiceGate(max_in_flight={self.max_in_flight}, in_flight={self.in_flight}"
            f"{holding}, throttled={self.throttled}, peak_in_flight={self.peak_in_flight})"
        )


@contextlib.contextmanager
def turn(gate: RequestGate | None) -> Iterator[None]:
    """One attempt's turn at `gate`: entered before, left after (nothing when None).

    Args:
        gate: The gate the client shares, or None for none.

    Yields:
        Nothing: the block runs holding a slot.
    """
    if gate is None:
        yield
        return
    gate.enter()
    try:
        yield
    finally:
        gate.leave()


@contextlib.asynccontextmanager
async def aturn(gate: RequestGate | None) -> AsyncIterator[None]:
    """`turn`, awaiting.

    Args:
        gate: The gate the client shares, or None for none.

    Yields:
        Nothing: the block runs holding a slot.
    """
    if gate is None:
        yield
        return
    await gate.aenter()
    try:
        yield
    finally:
        await gate.aleave()
