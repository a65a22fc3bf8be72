"""Benchmark: pull_listings against a naive sequential page loop, side by side in one run.

Against the emulator with 20 ms added to every request and 20,000 listings (by default):

* the naive loop fetches page after page with httpx (PageSize 100, the server cap), stops at the
  first short page, then builds ``pd.DataFrame(records)``: untyped text, no normalization;
* :func:`pull_listings` fetches page 1, then the rest 8 at a time, and normalizes into the typed
  canonical frame.

Targets: pull_listings at least 6x faster, while doing more (typed, normalized, de-duplicated);
and within 1.3x of the latency bound: page 1, then the other pages ``--concurrency`` at a time,
each costing only its latency (what no client can beat).

    python -m bench.bench_pull               # 20,000 listings
    python -m bench.bench_pull --listings 2000
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pandas as pd

from bench._emulator import client_of, emulator_process
from estatebot.listings.remote.pull import pull_listings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
# The same listing factory the tests use, so the benchmark measures the data the tests check.
from factories import make_listing

SPEED_TARGET = 6.0
BOUND_TARGET = 1.3


def naive_pull(base_url: str, session_key: str, serial: str) -> pd.DataFrame:
    """What one would write first: one page after another, then a frame of raw records."""
    records: list[dict[str, Any]] = []
    page = 1
    with httpx.Client(base_url=base_url, timeout=30) as http:
        while True:
            reply = http.post(
                "/chat/Chatbot/RealEstateList",
                headers={"chatrobot-sessionkey": session_key},
                json={"SerialNumber": serial, "PageNumber": page, "PageSize": 100},
            )
            rows = reply.json()["Data"]["List"]
            records.extend(rows)
            if len(rows) < 100:
                return pd.DataFrame(records)
            page += 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the figures; exit 1 when the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listings", type=int, default=20_000)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=2, help="best of this many runs each")
    args = parser.parse_args(argv)

    rng = random.Random(11)
    listings = [make_listing(i, rng, prefix="B") for i in range(args.listings)]
    with (
        tempfile.TemporaryDirectory() as folder,
        emulator_process(listings, args.latency_ms, Path(folder)) as server,
    ):
        # One untimed pass first, so both timed runs see a warm server (its record cache).
        naive_pull(server["base_url"], server["session_key"], server["serial"])
        naive_times, pull_times = [], []
        with client_of(server) as client:
            for _ in range(args.repeat):  # alternated, so both see the same machine load
                started = time.perf_counter()
                raw = naive_pull(server["base_url"], server["session_key"], server["serial"])
                naive_times.append(time.perf_counter() - started)
                started = time.perf_counter()
                frame = pull_listings(
                    client, server["serial"], concurrency=args.concurrency, progress=False
                )
                pull_times.append(time.perf_counter() - started)
    naive_s, pull_s = min(naive_times), min(pull_times)

    if len(raw) != args.listings or len(frame) != args.listings:
        print(f"row counts differ: naive {len(raw)}, pull {len(frame)}, expected {args.listings}")
        return 1
    ratio = naive_s / pull_s
    print(f"pull: {args.listings:,} listings, {args.latency_ms} ms latency per request")
    best = f"(best of {args.repeat})"
    pulled = f"pull_listings (concurrency {args.concurrency})"
    print(f"  naive sequential loop + pd.DataFrame : {naive_s:8.2f} s {best}")
    print(f"  {pulled:<36} : {pull_s:8.2f} s {best}")
    print(f"  ratio                                : {ratio:8.1f}x  (target >= {SPEED_TARGET:g}x)")
    pages = math.ceil(args.listings / 100)
    latency = args.latency_ms / 1000
    bound = latency * (1 + math.ceil((pages - 1) / args.concurrency))
    over = pull_s / bound
    print(
        f"  latency bound (page 1, then {pages - 1} pages {args.concurrency} at a time): "
        f"{bound:.2f} s; pull_listings / bound: {over:.2f}x (target <= {BOUND_TARGET:g}x)"
    )
    return 0 if ratio >= SPEED_TARGET and over <= BOUND_TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
