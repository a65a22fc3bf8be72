"""Request limits shared across the worker processes of a Dask cluster.

:class:`DaskServiceGate` is :class:`~estatebot.api.ServiceGate` for a fleet whose chatbots run
as Dask tasks: the cap on requests in flight is a ``distributed.Semaphore`` and the end of the
hold-off an entry of the scheduler's metadata (``Client.set_metadata``), both kept by the
scheduler, so a 429 seen by a task on one
worker holds off the requests of every worker. Needs the ``dask`` extra
(``pip install 'estatebot[dask]'``).
"""

from __future__ import annotations

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

# distributed's primitives carry no type hints: reached through Any, so the strict checker
# takes them as they are rather than refusing every call.
_cluster: Any = distributed

#: How old, in seconds, the hold-off a copy last read from the scheduler may be before it reads
#: it again: one scheduler call per this long at most, not one per request.
HOLD_OFF_REFRESH = 0.2


class DaskServiceGate(GateBase):
    """A `ServiceGate` shared by the clients of every worker process of a Dask cluster.

    At most `max_in_flight` attempts are in flight at once across the whole cluster, and a
    429 or 503 to any client holds off the clients of every worker for the wait the service
    asked for (else `default_hold_off` seconds). Make it where a `distributed.Client` is
    current (or pass `client=`) and ship it inside the tasks: it pickles by its name, and each
    copy attaches itself to the cluster (`distributed.get_client()` in the worker) when first
    used. Copies made with the same `name` and cap share their slots; with the same `name`,
    their hold-off. Each copy reads the hold-off from the scheduler at most every
    `HOLD_OFF_REFRESH` seconds (one it sets itself takes effect at once), so a hold-off
    reaches the other workers within that time.

    The counters (`throttled`, `held_off_seconds`, `peak_in_flight`) count what the callers
    of this copy did, in its process; the cap and the hold-off are the cluster's.

    A slot of a worker that dies is given back by the scheduler once its lease times out
    (30 s by default). For a quicker release, shorten the Dask settings
    `distributed.scheduler.locks.lease-timeout` and
    `distributed.scheduler.locks.lease-validation-interval` (smaller than the timeout), in
    the scheduler's and the workers' configuration, e.g.
    `dask.config.set({"distributed.scheduler.locks.lease-timeout": "5s",
    "distributed.scheduler.locks.lease-validation-interval": "1s"})` before the cluster
    starts. A lease is refreshed every fifth of the timeout while held, so it must stay well
    above the time one request may take.

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

    # Every primitive is a call to the scheduler: an awaiting client runs them in a thread.
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
        self._attach_lock = threading.Lock()
        self._slots: Any = None  # distributed.Semaphore, once attached
        self._cluster: Any = None  # the distributed.Client the metadata is read through
        self._until_guard: Any = None  # distributed.Lock
        self._known_until = 0.0  # wall clock: every worker's clock reads the same
        self._read_at = -HOLD_OFF_REFRESH
        if client is None:
            try:
                client = distributed.get_client()
            except ValueError as exc:
                raise ConfigurationError(
                    "DaskServiceGate needs a cluster: make a distributed.Client first or pass "
                    "client="
                ) from exc
        self._attach(client)

    # ------------------------------------------------------------------ the cluster's objects

    def _attach(self, client: distributed.Client | None = None) -> Any:
        """The cluster's objects of this gate, made on first use in this process."""
        with self._attach_lock:
            if self._slots is None:
                prefix = f"estatebot-gate:{self.name}"
                bound: dict[str, Any] = {}
                if client is not None:
                    bound = {"scheduler_rpc": client.scheduler, "loop": client.loop}
                # The cap is in the semaphore's name: the scheduler refuses one name with two
                # caps, and two runs with different caps should not fail on each other.
                # Metadata rather than a Variable: it reads with a default, never set or not.
                self._cluster = client if client is not None else distributed.get_client()
                self._until_guard = _cluster.Lock(f"{prefix}:hold-off-guard", **bound)
                self._slots = _cluster.Semaphore(
                    max_leases=self.max_in_flight,
                    name=f"{prefix}:slots-{self.max_in_flight}",
                    **bound,
                )
            return self._slots

    @property
    def _until_key(self) -> list[str]:
        return ["estatebot-gate", self.name, "hold-off-until"]

    def _read_until(self) -> float:
        """The hold-off's end as the scheduler holds it (0 when none was ever set)."""
        self._attach()
        return float(self._cluster.get_metadata(self._until_key, default=0.0))

    # ------------------------------------------------------------------ the primitives

    def _hold_off_left(self) -> float:
        now = time.monotonic()
        if now - self._read_at >= HOLD_OFF_REFRESH:
            until = self._read_until()
            with self._attach_lock:
                self._known_until = max(self._known_until, until)
                self._read_at = now
        return self._known_until - time.time()

    def _take(self, timeout: float) -> bool:
        return bool(self._attach().acquire(timeout=max(timeout, 0.0)))

    def _give_back(self) -> None:
        self._attach().release()

    def _extend_hold_off(self, seconds: float) -> None:
        until = time.time() + seconds
        with self._attach_lock:
            self._known_until = max(self._known_until, until)
        self._attach()
        # Read and write under the cluster's lock: two 429s at once must not shorten the wait.
        with self._until_guard:
            if until > self._read_until():
                self._cluster.set_metadata(self._until_key, until)

    # ------------------------------------------------------------------ shipping

    def __getstate__(self) -> dict[str, Any]:
        # Only what names the gate: the copy attaches to the cluster where it is used.
        return {
            "max_in_flight": self.max_in_flight,
            "name": self.name,
            "default_hold_off": self.default_hold_off,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.max_in_flight = state["max_in_flight"]
        self.name = state["name"]
        self.default_hold_off = state["default_hold_off"]
        self._reset_counts()
        self._attach_lock = threading.Lock()
        self._slots = None
        self._cluster = None
        self._until_guard = None
        self._known_until = 0.0
        self._read_at = -HOLD_OFF_REFRESH

    def __repr__(self) -> str:
        left = self._known_until - time.time()
        holding = f", holding off {left:.1f} s" if left > 0 else ""
        return (
            f"DaskServiceGate(max_in_flight={self.max_in_flight}, name={self.name!r}"
            f"{holding}, throttled={self.throttled}, peak_in_flight={self.peak_in_flight})"
        )
