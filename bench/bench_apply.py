"""Benchmark: apply_plan's concurrency against a sequential loop, and resuming after failures.

Against a local emulator whose RealEstateUpdate answers after ``--latency-ms`` (a stand-in for a
distant service):

1. a plan of ``--updates`` updates is applied with ``apply_plan`` at ``--concurrency`` threads
   (the time includes its fresh pull, stale check and backup), then the same request bodies are
   sent by a plain sequential loop of ``client.listings.update``; both times and the ratio are
   printed (target: at least 10x). The emulator runs in a process of its own here, as a real
   service would: in the benchmark's own process its request handling would compete with the
   client's threads for the interpreter lock and measure that instead;
2. a second plan is applied with ``--fail-rate`` of the updates failing (HTTP 500, and a client
   with ``max_retries=0``): every operation must come back either done or reported failed; a
   second run with the same journal completes the rest, and the emulator's request count
   proves that no update succeeded twice.

    python bench/bench_apply.py                # 5,000 updates
    python bench/bench_apply.py --updates 300  # a quick try
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from bench._emulator import client_of, emulator_process
from estatebot.api.client import Client
from estatebot.emulator import running
from estatebot.listings.remote.pull import pull_listings
from estatebot.listings.sync.apply.phases import apply_plan
from estatebot.listings.sync.sync_plan import SyncPlan, plan_sync

SPEED_TARGET = 10.0
_CITIES = [("Austin", "TX", "78701"), ("Denver", "CO", "80202"), ("Miami", "FL", "33130")]


def listings(n: int, seed: int = 11) -> list[dict[str, Any]]:
    """``n`` valid Create bodies (without SerialNumber), all for sale."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for i in range(n):
        city, state, zip_code = _CITIES[i % len(_CITIES)]
        out.append(
            {
                "SaleType": "for_sale",
                "Status": "Active",
                "CurrencySymbol": "$",
                "PropertyType": rng.choice(["Single Family", "Condo", "Townhouse"]),
                "Bedrooms": rng.randint(1, 6),
                "Bathrooms": rng.choice([1, 1.5, 2, 2.5, 3]),
                "Url": f"https://homes.example/b/{i}",
                "MLSNumber": f"B{i:07d}",
                "YearBuilt": rng.randint(1920, 2024),
                "DaysOnMarket": rng.randint(0, 300),
                "LotArea": rng.randrange(1000, 20000, 50),
                "BuildingArea": rng.randrange(600, 4200, 10),
                "AreaUnit": "Square Feet",
                "ParkingSpots": rng.randint(0, 3),
                "Description": f"Listing {i} in {city}.",
                "City": city,
                "State": state,
                "ZIP": zip_code,
                "SalePrice": rng.randrange(150_000, 2_000_000, 1000),
            }
        )
    return out


def repriced(remote: pd.DataFrame, bump: float) -> pd.DataFrame:
    """The remote listings as a sheet with every price raised by ``bump``."""
    sheet = remote.drop(columns=["ID"]).copy()
    sheet["SalePrice"] = sheet["SalePrice"] + bump
    sheet["AreaUnit"] = "Square Feet"  # List never returns it, and an update must send it
    return sheet


def make_plan(client: Client, serial: str, bump: float) -> SyncPlan:
    remote = pull_listings(client, serial, progress=False)
    # The bench's emulator holds no Location: sending it empty loses nothing.
    return plan_sync(repriced(remote, bump), remote, blank_unknown_location=True)


def _outcomes(report_frame: pd.DataFrame) -> dict[str, int]:
    counts = report_frame["outcome"].value_counts()
    return {str(name): int(count) for name, count in counts.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns 0 when the speed target is met and nothing was lost."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--updates", type=int, default=5000)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--fail-rate", type=float, default=0.05)
    args = parser.parse_args(argv)
    n = args.updates
    ok = True

    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        with (
            emulator_process(
                listings(n), args.latency_ms, work, only=["RealEstateUpdate"]
            ) as remote,
            client_of(remote, timeout=60) as client,
        ):
            serial = remote["serial"]
            plan = make_plan(client, serial, 1000.0)
            assert len(plan.updates) == n, plan.summary()
            print(f"{n:,} updates, {args.latency_ms:g} ms latency per update request")
            started = time.perf_counter()
            report = apply_plan(
                plan,
                client,
                serial,
                concurrency=args.concurrency,
                backup=work / "backup.json",
                progress=False,
            )
            concurrent_s = time.perf_counter() - started
            assert report.ok, report
            bodies = [{**(op.body or {}), "SerialNumber": serial} for op in plan.updates]
            started = time.perf_counter()
            for body in bodies:
                client.listings.update(body)
            sequential_s = time.perf_counter() - started
        ratio = sequential_s / concurrent_s
        ok &= ratio >= SPEED_TARGET
        print(
            f"  apply_plan, concurrency {args.concurrency} (with pull, stale check, backup): "
            f"{concurrent_s:8.2f} s"
        )
        print(f"  sequential client.listings.update loop:                    {sequential_s:8.2f} s")
        verdict = "met" if ratio >= SPEED_TARGET else "MISSED"
        print(f"  ratio: {ratio:.1f}x (target ≥ {SPEED_TARGET:g}x: {verdict})")
        ok &= failures_and_resume(args, work)
    return 0 if ok else 1


def failures_and_resume(args: argparse.Namespace, work: Path) -> bool:
    """Apply under injected failures, then again with the journal; True if nothing was lost."""
    n = args.updates
    with (
        running(seed=None) as server,
        Client(
            base_url=server.base_url,
            api_key=server.api_key,
            session_key=server.session_key,
            max_retries=0,
            timeout=60,
        ) as fragile,
    ):
        server.add_listings(server.serial, listings(n), validate=False)
        server.faults.only = {"RealEstateUpdate"}
        server.faults.latency_ms = args.latency_ms
        plan = make_plan(fragile, server.serial, 500.0)
        journal = work / "sync.journal"
        counted = server.request_counts["RealEstateUpdate"]
        server.faults.fail_rate = args.fail_rate
        first = apply_plan(
            plan,
            fragile,
            server.serial,
            concurrency=args.concurrency,
            journal=journal,
            backup=work / "backup2.json",
            progress=False,
        )
        server.faults.fail_rate = 0.0
        second = apply_plan(
            plan,
            fragile,
            server.serial,
            concurrency=args.concurrency,
            journal=journal,
            progress=False,
        )
        requests = server.request_counts["RealEstateUpdate"] - counted
    one, two = _outcomes(first.frame), _outcomes(second.frame)
    accounted = one.get("done", 0) + one.get("failed", 0)
    failures = one.get("failed", 0) + two.get("failed", 0)
    succeeded = requests - failures
    print(f"with {args.fail_rate:.0%} of updates failing (max_retries=0):")
    print(
        f"  first run:  {one.get('done', 0):,} done, {one.get('failed', 0):,} failed "
        f"({accounted:,} of {n:,} accounted for)"
    )
    print(
        f"  second run, same journal: {two.get('skipped (already done)', 0):,} skipped "
        f"(already done), {two.get('done', 0):,} done, {two.get('failed', 0):,} failed"
    )
    print(
        f"  update requests: {requests:,}, failed {failures:,}, succeeded {succeeded:,} "
        f"(each of the {n:,} exactly once: {'yes' if succeeded == n else 'NO'})"
    )
    return accounted == n and second.ok and succeeded == n


if __name__ == "__main__":
    sys.exit(main())
