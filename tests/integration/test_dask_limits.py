"""DaskServiceGate on a local cluster of two worker processes, against a real emulator.

Tasks on both workers send requests through clients of their own, each with its copy of one
gate (cap 2). Each request's time on the wire, from the moment it is sent to the moment its
reply's headers arrive, is stamped on the wall clock (the same on every process of this
machine) by httpx event hooks, inside the gate's turn: at most 2 of those spans overlap. A
hold-off set by a task on one worker delays a request of a task on the other.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable, Iterator
from typing import Any

import distributed
import httpx
import pytest

from estatebot.api import Client
from estatebot.emulator import EmulatorServer
from estatebot.errors import ConfigurationError
from estatebot.fleet.dask_limits import DaskServiceGate


def test_without_a_cluster_the_gate_says_what_it_needs() -> None:
    # First in the module: no test has made the module's cluster client yet.
    with pytest.raises(ConfigurationError, match=r"distributed\.Client"):
        DaskServiceGate(2, name="nowhere")


@pytest.fixture(scope="module")
def dask_client() -> Iterator[distributed.Client]:
    with (
        distributed.LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=2,
            dashboard_address=None,
            worker_dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def _tasks() -> tuple[Callable[..., dict[str, Any]], Callable[..., float]]:
    """The tasks, made in a function: the workers cannot import this module (pytest imports
    it by path), and a local function is sent by value."""

    def send_pages(
        base_url: str, api_key: str, session_key: str, gate: DaskServiceGate, count: int
    ) -> dict[str, Any]:
        """A task: ``count`` requests through a client with ``gate``; each one's wire span."""
        spans: list[tuple[float, float]] = []
        sent: dict[int, float] = {}

        def on_request(request: httpx.Request) -> None:
            sent[id(request)] = time.time()

        def on_response(response: httpx.Response) -> None:
            spans.append((sent[id(response.request)], time.time()))

        http = httpx.Client(event_hooks={"request": [on_request], "response": [on_response]})
        started = time.time()
        with (
            http,
            Client(
                base_url=base_url,
                api_key=api_key,
                session_key=session_key,
                gate=gate,
                http_client=http,
            ) as client,
        ):
            for _ in range(count):
                client.chatbots.models()
        return {
            "spans": spans,
            "started": started,
            "worker": distributed.get_worker().address,
            "held_off_seconds": gate.held_off_seconds,
            "peak_in_flight": gate.peak_in_flight,
        }

    def hold_off(gate: DaskServiceGate, seconds: float) -> float:
        """A task: report a 429 to the gate; when it did."""
        gate.hold_off(seconds)
        return time.time()

    return send_pages, hold_off


send_pages, hold_off = _tasks()


def most_at_once(spans: list[tuple[float, float]]) -> int:
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    now = peak = 0
    for _, step in events:  # an end sorts before a start at the same instant
        now += step
        peak = max(peak, now)
    return peak


def workers_of(client: distributed.Client) -> list[str]:
    addresses = sorted(client.scheduler_info()["workers"])
    assert len(addresses) == 2
    return addresses


def test_tasks_on_both_workers_stay_under_the_cap(
    dask_client: distributed.Client, emulator: EmulatorServer
) -> None:
    emulator.faults.latency_ms = 60
    gate = DaskServiceGate(2, name=f"{emulator.base_url}-cap")
    keys = (emulator.base_url, emulator.api_key, emulator.session_key)
    futures = [
        dask_client.submit(send_pages, *keys, gate, 4, pure=False, workers=[address])
        for address in workers_of(dask_client)
        for _ in range(2)
    ]
    results = [future.result(timeout=60) for future in futures]
    spans = [span for result in results for span in result["spans"]]
    assert len(spans) == 16
    assert emulator.request_counts["ModelList"] == 16
    assert {result["worker"] for result in results} == set(workers_of(dask_client))
    assert most_at_once(spans) == 2  # reached across the cluster, never passed
    # Each process saw at most the cap; without the gate four tasks would overlap four ways.
    assert all(result["peak_in_flight"] <= 2 for result in results)


def test_without_the_gate_the_same_tasks_pass_the_cap(
    dask_client: distributed.Client, emulator: EmulatorServer
) -> None:
    # The measure can fail: the same tasks with a cap as large as their number overlap more.
    emulator.faults.latency_ms = 60
    gate = DaskServiceGate(8, name=f"{emulator.base_url}-wide")
    keys = (emulator.base_url, emulator.api_key, emulator.session_key)
    futures = [
        dask_client.submit(send_pages, *keys, gate, 4, pure=False, workers=[address])
        for address in workers_of(dask_client)
        for _ in range(2)
    ]
    spans = [
        span
        for result in [future.result(timeout=60) for future in futures]
        for span in result["spans"]
    ]
    assert most_at_once(spans) > 2


def test_a_hold_off_on_one_worker_delays_the_other(
    dask_client: distributed.Client, emulator: EmulatorServer
) -> None:
    gate = DaskServiceGate(4, name=f"{emulator.base_url}-hold")
    first, second = workers_of(dask_client)
    held_at = dask_client.submit(hold_off, gate, 1.5, pure=False, workers=[first]).result(60)
    keys = (emulator.base_url, emulator.api_key, emulator.session_key)
    result = dask_client.submit(send_pages, *keys, gate, 1, pure=False, workers=[second]).result(60)
    (sent, _), *_ = result["spans"]
    assert result["worker"] == second
    assert sent >= held_at + 1.5 - 0.25  # the other worker waited out (nearly) all of it
    assert result["held_off_seconds"] >= 1.0
    assert gate.hold_off_left == 0.0  # this copy reads the same end, now passed


def test_the_gate_pickles_by_name_and_needs_a_cluster(dask_client: distributed.Client) -> None:
    gate = DaskServiceGate(3, name="by-name")
    copy = pickle.loads(pickle.dumps(gate))
    assert (copy.name, copy.max_in_flight) == ("by-name", 3)
    assert "max_in_flight=3" in repr(copy)
    copy.hold_off(0.4)
    assert gate.hold_off_left > 0.1  # set through the copy, read through the cluster
