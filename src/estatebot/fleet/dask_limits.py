"""Request limits shared across the worker processes of a Dask cluster.

:class:`DaskServiceGate` is :class:`~estatebot.api.ServiceGate` for a fleet whose chatbots run
as Dask tasks. The cap on requests in flight is split among the cluster's workers when the gate
is made: each worker process holds its share as a semaphore of its own, which every task of that
process shares, so a request costs no call to the scheduler. (A ``distributed.Semaphore`` costs
two scheduler calls per request, and under a fleet's load its calls were seen to hang.) The end
of a hold-off is an entry of the scheduler's metadata (``Client.set_metadata``), one per process
that saw a 429, read at most every :data:`HOLD_OFF_REFRESH` seconds by each process, so a 429
seen by a task on one worker holds off the requests of every worker. Needs the ``dask`` extra
(``pip install 'estatebot[dask]'``).
"""

from __future__ import annotations

import math
import os
import threading
import time
import uuid
from typing import Any

try:
    import distributed
except ImportError as exc:  # pragma: no cover - the extra is a dev dependency
    raise ImportError(
        "estatebot.fleet.dask_limits needs Dask's distributed scheduler: "
        "pip install 'estatebot[dask]'"
    ) from exc

from estatebot.api.gate import DEFAULT_HOLD_OFF, GateBase
from estatebot.errors import ConfigurationError

__all__ = ["HOLD_OFF_REFRESH", "DaskServiceGate"]


#: How old, in seconds, the hold-off a copy last read from the scheduler may be before it reads
#: it again: one scheduler call per this long at most, not one per request.
HOLD_OFF_REFRESH = 0.2


class DaskServiceGate(GateBase):
    """A `ServiceGate` shared by the clients of every worker process of a Dask cluster.

    At most `max_in_flight` attempts are in flight at once across the whole cluster: the cap
    is split evenly among the workers the cluster has when the gate is made (at least one slot
    each), and each worker process keeps its share for all its tasks. A 429 or 503 to any
    client holds off the clients of every worker for the wait the service asked for (else
    `default_hold_off` seconds). Make it where a `distributed.Client` is current (or pass
    `client=`) and ship it inside the tasks: it pickles by its name and share, and each copy
    finds its process's slots and the cluster's hold-off where it is used. Each process reads
    the hold-off from the scheduler at most every `HOLD_OFF_REFRESH` seconds (one it sets
    itself takes effect at once), so a hold-off reaches the other workers within that time.

    Workers that join after the gate was made get a share too, so the cap then holds per
    share: make the gate once the cluster has its workers. A worker that dies takes its slots
    with it; the one that replaces it starts with a full share.

    The counters (`throttled`, `held_off_seconds`, `peak_in_flight`) count what the callers
    of this copy did, in its process; the cap and the hold-off are the cluster's.

    Args:
        max_in_flight: The most requests in flight at once across the cluster.
        name: The gate's name on the cluster (a service's base URL, say); None for a new
            one of its own.
        default_hold_off: The hold-off in seconds after a 429 or 503 that names no wait.
        client: The `distributed.Client` of the cluster; None for the current one.

    Raises:
        ConfigurationError: `max_in_flight` is not a whole number of 1 or more,
            `default_hold_off` is not a finite number of seconds, 0 or more, or no
            `distributed.Client` is current and none is given.
    """

    # Reading the hold-off is a call to the scheduler: an awaiting client runs it in a thread.
    _offload = True

    def __init__(
        self,
        max_in_flight: int = 16,
        name: str | None = None,
        *,
        default_hold_off: float = DEFAULT_HOLD_OFF,
        client: distributed.Client | None = None,
    ) -> None:
        super().__init__(max_in_flight, default_hold_off)
        self.name = name if name is not None else uuid.uuid4().hex
        if client is None:
            try:
                client = distributed.get_client()
            except ValueError as exc:
                raise ConfigurationError(
                    "DaskServiceGate needs a cluster: make a distributed.Client first or pass "
                    "client="
                ) from exc
        workers = len(client.scheduler_info().get("workers", {})) or 1
        #: This process's share of the cap (each worker process holds one).
        self.share = max(1, math.floor(max_in_flight / workers))
        self._cluster: Any = client

    # ------------------------------------------------------------------ the process's parts

    def _process(self) -> _ProcessPart:
        return _ProcessPart.of(self.name, self.share)

    def _client(self) -> Any:
        if self._cluster is None:
            self._cluster = distributed.get_client()
        return self._cluster

    # ------------------------------------------------------------------ the primitives

    def _hold_off_left(self) -> float:
        return self._process().hold_off_left(self._client)

    def _take(self, timeout: float) -> bool:
        slots = self._process().slots
        if timeout <= 0:
            return slots.acquire(blocking=False)
        return slots.acquire(timeout=timeout)

    def _give_back(self) -> None:
        self._process().slots.release()

    def _extend_hold_off(self, seconds: float) -> None:
        self._process().extend(self._client, time.time() + seconds)

    # ------------------------------------------------------------------ shipping

    def __getstate__(self) -> dict[str, Any]:
        # Only what names the gate: the copy finds its process's parts where it is used.
        return {
            "max_in_flight": self.max_in_flight,
            "name": self.name,
            "share": self.share,
            "default_hold_off": self.default_hold_off,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.max_in_flight = state["max_in_flight"]
        self.name = state["name"]
        self.share = state["share"]
        self.default_hold_off = state["default_hold_off"]
        self._reset_counts()
        self._cluster = None

    def __repr__(self) -> str:
        left = self._process().known_until - time.time()
        holding = f", holding off {left:.1f} s" if left > 0 else ""
        return (
            f"DaskServiceGate(max_in_flight={self.max_in_flight}, share={self.share}, "
            f"name={self.name!r}{holding}, throttled={self.throttled}, "
            f"peak_in_flight={self.peak_in_flight})"
        )


class _ProcessPart:
    """One gate's parts in one process: its share of the slots, and the hold-off as last read
    (every copy of the gate in the process uses the same)."""

    def __init__(self, name: str, share: int) -> None:
        self.name = name
        self.slots = threading.BoundedSemaphore(share)
        self.lock = threading.Lock()
        self.known_until = 0.0  # wall clock: every worker's clock reads the same
        self.own_until = 0.0  # the latest end this process wrote
        self.read_at = -HOLD_OFF_REFRESH

    @classmethod
    def of(cls, name: str, share: int) -> _ProcessPart:
        with _PARTS_LOCK:
            part = _PARTS.get((name, share))
            if part is None:
                part = _PARTS[(name, share)] = cls(name, share)
            return part

    @property
    def key(self) -> list[str]:
        return ["estatebot-gate", self.name, "hold-off-until"]

    def hold_off_left(self, client: Any) -> float:
        now = time.monotonic()
        with self.lock:
            stale = now - self.read_at >= HOLD_OFF_REFRESH
            if stale:
                self.read_at = now  # one reader per refresh; the others use what is known
        if stale:
            try:
                ends = client().get_metadata(self.key, default={}) or {}
            except (OSError, TimeoutError, ValueError):
                # The scheduler is slow or away: the hold-off is advice, so the requests go on
                # by what this process knows, and the next refresh asks again.
                ends = {}
            latest = max((float(end) for end in ends.values()), default=0.0)
            with self.lock:
                self.known_until = max(self.known_until, latest)
        return self.known_until - time.time()

    def extend(self, client: Any, until: float) -> None:
        with self.lock:
            self.known_until = max(self.known_until, until)
            if until <= self.own_until:
                return
            self.own_until = until
        # Each process writes its own entry, never another's: two 429s at once in two
        # processes cannot shorten each other's hold-off, and readers take the latest end.
        client().set_metadata([*self.key, f"{_process_name()}"], until)


#: Each gate's parts in this process, by name and share.
_PARTS: dict[tuple[str, int], _ProcessPart] = {}
_PARTS_LOCK = threading.Lock()


def _process_name() -> str:
    try:
        return str(distributed.get_worker().address)
    except ValueError:
        return f"client {os.getpid()}"
