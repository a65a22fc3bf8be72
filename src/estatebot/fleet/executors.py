"""Where a fleet's chatbots are worked on: threads here, any ``concurrent.futures.Executor``, or
a Dask cluster, and the request limits they share.

:func:`resolve` turns ``executor=`` into a :class:`Workers`: None is a thread pool of this
process (ended with the run); an ``Executor`` is used as given (never shut down here); a
``distributed.Client`` runs each chatbot as a Dask task (``pure=False``: every task runs, and
a task of a worker that dies is run again on another, which the journals make safe). The gate
that caps requests in flight per service and spreads a 429 to every chatbot of that service is
a :class:`~estatebot.api.ServiceGate` in one process, a
:class:`~estatebot.fleet.dask_limits.DaskServiceGate` on a cluster. With another executor of
processes the gate is left out (a copy in each process would not be shared); say so in the
docs rather than cap each process wrongly.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from estatebot.errors import ConfigurationError

__all__ = ["DEFAULT_MAX_IN_FLIGHT", "DEFAULT_WORKERS", "Workers", "resolve"]

T = TypeVar("T")
R = TypeVar("R")

#: Requests in flight per service across the whole fleet, by default.
DEFAULT_MAX_IN_FLIGHT = 32
#: Chatbots worked on at once by the default thread pool.
DEFAULT_WORKERS = 8


@dataclass
class Workers:
    """An executor for a fleet run, and what kind it is."""

    executor: cf.Executor
    #: "threads" (this process), "dask" (a cluster) or "processes" (another executor).
    kind: str
    owned: bool = False
    dask_client: Any = None
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT
    _gates: dict[str, Any] = field(default_factory=dict)

    def gate_for(self, base_url: str) -> Any:
        """The one gate of the service at ``base_url`` for this run (None where it cannot be
        shared: a process executor that is not Dask)."""
        if self.kind == "processes" or self.max_in_flight <= 0:
            return None
        if base_url not in self._gates:
            if self.kind == "dask":
                from estatebot.fleet.dask_limits import DaskServiceGate

                # Named by service and cap: the scheduler keeps one semaphore per name.
                name = f"estatebot {base_url} {self.max_in_flight}"
                self._gates[base_url] = DaskServiceGate(
                    self.max_in_flight, name=name, client=self.dask_client
                )
            else:
                from estatebot.api import ServiceGate

                self._gates[base_url] = ServiceGate(self.max_in_flight)
        return self._gates[base_url]

    @property
    def gates(self) -> dict[str, Any]:
        """The gates made so far, by service address."""
        return dict(self._gates)

    def map_unordered(
        self, work: Callable[[T], R], jobs: Iterable[T], *, done: Callable[[R], object]
    ) -> list[R]:
        """Run ``work`` on every job; ``done`` is called here, in this process, as each ends
        (for a progress bar and the run's record). The results come back in the jobs' order.
        A job's exception (a unit never raises for its chatbot's trouble, so this is a bug or
        a lost cluster) is raised once the others have ended."""
        jobs = list(jobs)
        futures = {self.executor.submit(work, job): place for place, job in enumerate(jobs)}
        results: dict[int, R] = {}
        first_error: BaseException | None = None
        for future in cf.as_completed(futures):
            try:
                result = future.result()
            except BaseException as error:
                first_error = first_error or error
                continue
            results[futures[future]] = result
            done(result)
        if first_error is not None:
            raise first_error
        return [results[place] for place in range(len(jobs))]

    def everywhere(self, work: Callable[..., Any], *args: Any) -> Iterator[Any]:
        """``work(*args)`` on every worker that may run a chatbot: each Dask worker, a few
        tasks of another executor, nothing for threads of this process."""
        if self.kind == "threads":
            return iter(())
        if self.kind == "dask":
            return iter(self.dask_client.run(work, *args).values())
        count = max(2, os.cpu_count() or 2)
        futures = [self.executor.submit(work, *args) for _ in range(count)]
        return (future.result() for future in futures)

    def close(self) -> None:
        """End the thread pool this run made (an executor passed in is left running)."""
        if self.owned:
            self.executor.shutdown(wait=True, cancel_futures=True)


def resolve(
    executor: Any = None,
    *,
    workers: int = DEFAULT_WORKERS,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
) -> Workers:
    """The :class:`Workers` of ``executor``: None (a thread pool of ``workers`` threads), a
    ``concurrent.futures.Executor``, or a ``distributed.Client``."""
    if workers < 1:
        raise ConfigurationError(f"workers must be at least 1, got {workers}")
    if executor is None:
        pool = cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="estatebot-fleet")
        return Workers(pool, "threads", owned=True, max_in_flight=max_in_flight)
    if _is_dask_client(executor):
        _quiet_the_profilers(executor)
        return Workers(
            executor.get_executor(pure=False), "dask", dask_client=executor,
            max_in_flight=max_in_flight,
        )  # fmt: skip
    if isinstance(executor, cf.ThreadPoolExecutor):
        return Workers(executor, "threads", max_in_flight=max_in_flight)
    if isinstance(executor, cf.Executor):
        return Workers(executor, "processes", max_in_flight=max_in_flight)
    raise ConfigurationError(
        f"executor must be a concurrent.futures.Executor or a distributed.Client, got "
        f"{type(executor).__name__}"
    )


def _quiet_the_profilers(client: Any) -> None:
    """Stop the statistical profiler of every worker of the cluster, present and to come.

    A Dask worker samples its threads' stacks with ``sys._current_frames()`` every 10 ms, and
    it collects garbage with a callback watching how long collections take. On CPython before
    3.12 a collection that starts inside ``sys._current_frames()`` can deadlock the process
    while other threads start and stop (CPython issue 106883), and a fleet's chatbots start and
    stop threads all the time: a worker of the fleet's benchmark froze so, every thread waiting
    for the interpreter lock. Without the profiler nothing calls it; the dashboard's profile
    page of a fleet's run is empty, nothing else changes.
    """
    if sys.version_info >= (3, 12):
        return
    from distributed.diagnostics.plugin import WorkerPlugin

    class QuietProfiler(WorkerPlugin):
        """Stops a worker's profiler as it joins (a worker restarted after a kill too)."""

        name = "estatebot-quiet-profiler"

        def setup(self, worker: Any) -> None:
            for callback in ("profile", "profile-cycle"):
                if callback in worker.periodic_callbacks:
                    worker.periodic_callbacks[callback].stop()

    client.register_plugin(QuietProfiler(), name=QuietProfiler.name)


def _is_dask_client(executor: Any) -> bool:
    module = type(executor).__module__ or ""
    return module.startswith("distributed") and hasattr(executor, "get_executor")


def dask_client_at(address: str) -> Any:
    """A ``distributed.Client`` connected to the scheduler at ``address``."""
    try:
        from distributed import Client
    except ImportError:
        raise ConfigurationError(
            "--dask needs Dask's distributed scheduler: pip install 'estatebot[dask]'"
        ) from None
    try:
        return Client(address, timeout=10)  # type: ignore[no-untyped-call]
    except OSError as error:
        raise ConfigurationError(
            f"no Dask scheduler answers at {address} ({error}); start one "
            "(`dask scheduler`, `dask worker ADDRESS`) or leave out --dask"
        ) from None
