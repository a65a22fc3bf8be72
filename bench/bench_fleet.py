"""Benchmark: a fleet sync against the same syncs one after another, and against its bound.

Two emulators, each in its own process, host the same fleet (``--chatbots`` chatbots with
``--listings`` listings each) and answer every request after ``--latency-ms``. The fleet's
sample (a sheet per chatbot, ``--changed`` of each sheet's rows repriced) is written untimed.

1. **One after another**, two ways: the shell loop of today (``estatebot sync SHEET --serial S
   --yes`` for each chatbot, a process each), and the same work in one process with no process
   starts (read its sheet, pull, plan, save the plan and its workbook, apply with a journal and
   a backup at concurrency 8, write the report), the stricter baseline.
2. **The fleet** on the other emulator: ``plan_fleet`` and ``FleetPlan.apply`` with
   ``--workers`` chatbots at once per process (``--dask N`` worker processes of a local Dask
   cluster, 2 by default: one per core here; ``--dask 0`` for threads of this process) and
   ``--max-in-flight`` requests in flight across the fleet.

Figures: the ratio sequential / fleet (target >= 8x) and the fleet against its latency bound
under the cap: every request the fleet sent (counted by its emulator) at ``--max-in-flight`` at
a time, each costing the latency (target <= 1.5x). Both fleets must end in step.

    python -m bench.bench_fleet                          # 100 chatbots x 2,000 listings
    python -m bench.bench_fleet --chatbots 10 --listings 500 --dask 0   # threads
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TARGET_SPEEDUP = 8.0
TARGET_BOUND = 1.5

_SERVE = """
import json, sys
from estatebot.emulator import running
chatbots, listings, latency = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
with running(seed=None, chatbots=chatbots, listings_per_chatbot=listings) as server:
    server.faults.latency_ms = latency
    print(json.dumps({"base_url": server.base_url, "api_key": server.api_key,
                      "session_key": server.session_key}), flush=True)
    for line in sys.stdin:
        print(json.dumps(dict(server.request_counts)), flush=True)
"""


@contextmanager
def fleet_emulator(chatbots: int, listings: int, latency_ms: float) -> Iterator[Any]:
    """An emulator process hosting the fleet; yields (its address and keys, a function that
    returns its request counts so far)."""
    child = subprocess.Popen(
        [sys.executable, "-c", _SERVE, str(chatbots), str(listings), str(latency_ms)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None
    assert child.stdout is not None

    def counts() -> dict[str, int]:
        assert child.stdin is not None
        assert child.stdout is not None
        child.stdin.write("\n")
        child.stdin.flush()
        return dict(json.loads(child.stdout.readline()))

    try:
        yield json.loads(child.stdout.readline()), counts
    finally:
        child.stdin.close()
        try:
            child.wait(timeout=20)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _environ(server: dict[str, str]) -> None:
    os.environ["ESTATEBOT_BASE_URL"] = server["base_url"]
    os.environ["ESTATEBOT_API_KEY"] = server["api_key"]
    os.environ["ESTATEBOT_SESSION_KEY"] = server["session_key"]


def one_after_another(sample: Any, server: dict[str, str], work: Path) -> float:
    """Each chatbot synced as ``estatebot sync`` does it, one after another; the seconds."""
    from estatebot.api.client import Client
    from estatebot.fleet.manifest import read_manifest
    from estatebot.listings.remote.pull import pull_listings
    from estatebot.listings.sheet.read import read_sheet
    from estatebot.listings.sync.sync_plan import plan_sync

    manifest = read_manifest(sample.manifest_own_sheets)
    started, cpu = time.perf_counter(), time.process_time()
    with Client(**_keys(server), timeout=60) as client:
        for place, entry in enumerate(manifest.entries):
            folder = work / f"{place:03d}"
            folder.mkdir(parents=True)
            sheet = read_sheet(entry.sheet, defaults=dict(entry.defaults) or None, progress=False)
            remote = pull_listings(client, entry.serial, concurrency=8, progress=False)
            plan = plan_sync(sheet, remote, key=entry.key, delete_missing=entry.delete_missing)
            plan.save(folder / "plan.json")
            plan.to_excel(folder / "plan.xlsx")
            report = plan.apply(
                client, entry.serial, concurrency=8, journal=folder / "journal.jsonl",
                backup=folder / "backup.json", progress=False,
            )  # fmt: skip
            report.to_excel(folder / "report.xlsx")
            if not report.ok:
                raise SystemExit(f"the sequential sync of {entry.label} failed: {report.summary()}")
    seconds = time.perf_counter() - started
    print(
        f"    (of which this process's CPU: {time.process_time() - cpu:.1f} s; the rest waits "
        "on the service, whose own work runs in the emulator's process)",
        flush=True,
    )
    return seconds


def shell_loop(sample: Any, server: dict[str, str], work: Path) -> float:
    """``estatebot sync`` run for each chatbot, one after another; the seconds."""
    from estatebot.fleet.manifest import read_manifest

    manifest = read_manifest(sample.manifest_own_sheets)
    env = {
        **os.environ,
        "ESTATEBOT_BASE_URL": server["base_url"],
        "ESTATEBOT_API_KEY": server["api_key"],
        "ESTATEBOT_SESSION_KEY": server["session_key"],
    }
    started = time.perf_counter()
    for entry in manifest.entries:
        done = subprocess.run(
            [sys.executable, "-m", "estatebot.cli", "sync", str(entry.sheet), "--serial",
             entry.serial, "--yes", "--runs-dir", str(work), "--no-progress"],
            env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise SystemExit(
                f"estatebot sync of {entry.label} exited {done.returncode}: {done.stderr}"
            )
    return time.perf_counter() - started


def _keys(server: dict[str, str]) -> dict[str, str]:
    return {k: server[k] for k in ("base_url", "api_key", "session_key")}


def the_fleet(sample: Any, work: Path, args: argparse.Namespace) -> tuple[float, Any]:
    """The fleet planned and applied as one run; the seconds and the report."""
    import estatebot as eb

    executor: Any = None
    cluster: Any = None
    if args.dask:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=args.dask, threads_per_worker=args.workers, processes=True,
            dashboard_address=":0", silence_logs=50,
        )  # fmt: skip
        executor = Client(cluster)
    try:
        started = time.perf_counter()
        options = {"executor": executor, "workers": args.workers, "progress": False}
        plan = eb.plan_fleet(
            sample.manifest_own_sheets, max_in_flight=args.max_in_flight, **options
        )
        planned = time.perf_counter() - started
        report = plan.apply(runs_dir=work, max_in_flight=args.max_in_flight, **options)
        seconds = time.perf_counter() - started
        print(f"    (plan {planned:.1f} s, apply {seconds - planned:.1f} s)", flush=True)
    finally:
        if executor is not None:
            executor.close()
            cluster.close()
    return seconds, report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; prints both runs, the ratio and the bound."""
    from estatebot.sample.fleet_sample import write_fleet_sample

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--chatbots", type=int, default=100)
    parser.add_argument("--listings", type=int, default=2000)
    parser.add_argument("--changed", type=float, default=0.05)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=8, help="chatbots at once (per process)")
    parser.add_argument("--max-in-flight", type=int, default=32)
    parser.add_argument(
        "--dask", type=int, default=2, help="local Dask worker processes (0: threads here)"
    )
    args = parser.parse_args(argv)
    # The fleet's emulator holds no Location: sending it empty loses nothing (as bench_sync).
    os.environ["ESTATEBOT_BLANK_UNKNOWN_LOCATION"] = "1"
    os.environ["ESTATEBOT_PROGRESS"] = "0"

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        started = time.perf_counter()
        sample = write_fleet_sample(
            work / "sample", chatbots=args.chatbots, listings_per_chatbot=args.listings,
            changed=args.changed,
        )  # fmt: skip
        print(
            f"fleet: {args.chatbots} chatbots x {args.listings:,} listings, {args.changed:.0%} "
            f"changed, {args.latency_ms:g} ms latency (sample written in "
            f"{time.perf_counter() - started:.1f} s)",
            flush=True,
        )
        with fleet_emulator(args.chatbots, args.listings, args.latency_ms) as (server, _):
            _environ(server)
            looped = shell_loop(sample, server, work / "loop")
        print(f"  shell loop of estatebot sync              {looped:8.2f} s", flush=True)
        with fleet_emulator(args.chatbots, args.listings, args.latency_ms) as (server, _):
            _environ(server)
            sequential = one_after_another(sample, server, work / "sequential")
        print(f"  one after another in one process          {sequential:8.2f} s", flush=True)
        with fleet_emulator(args.chatbots, args.listings, args.latency_ms) as (server, counts):
            _environ(server)
            before = sum(counts().values())
            fleet_seconds, report = the_fleet(sample, work / "fleet", args)
            requests = sum(counts().values()) - before
            import estatebot as eb

            in_step = eb.plan_fleet(sample.manifest_own_sheets, progress=False).is_empty
        how = f"{args.dask} Dask worker processes x {args.workers}" if args.dask else (
            f"{args.workers} threads"
        )  # fmt: skip
        print(f"  the fleet ({how}, cap {args.max_in_flight})  {fleet_seconds:8.2f} s")
    bound = math.ceil(requests / max(args.max_in_flight, 1)) * args.latency_ms / 1000
    speedup = sequential / fleet_seconds
    print(f"  shell loop / fleet: {looped / fleet_seconds:.2f}x")
    over_bound = fleet_seconds / bound
    print(f"  report: {report.summary()}; in step afterwards: {in_step}")
    print(
        f"  latency bound: {requests:,} requests at {args.max_in_flight} in flight x "
        f"{args.latency_ms:g} ms = {bound:.2f} s"
    )
    ok_speed, ok_bound = speedup >= TARGET_SPEEDUP, over_bound <= TARGET_BOUND
    print(
        f"  one after another in one process / fleet: {speedup:.2f}x "
        f"(target >= {TARGET_SPEEDUP:g}x): "
        f"{'ok' if ok_speed else 'MISSED'}"
    )
    print(
        f"  fleet / latency bound: {over_bound:.2f}x (target <= {TARGET_BOUND:g}x): "
        f"{'ok' if ok_bound else 'MISSED'}"
    )
    return 0 if ok_speed and ok_bound and report.ok and in_step else 1


if __name__ == "__main__":
    raise SystemExit(main())
