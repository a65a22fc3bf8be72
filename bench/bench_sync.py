"""Benchmark: a whole sync, stage by stage, against the latency bounds of its requests.

An emulator in its own process holds ``--listings`` listings and answers every request after
``--latency-ms``. The export is those listings as a ``--listings``-row xlsx (written with
openpyxl, untimed) with a ``--changed`` share of them edited. Then, timed stage by stage:

1. read: ``read_sheet`` of the xlsx;
2. pull: ``pull_listings`` at ``--concurrency``;
3. plan: ``plan_sync``;
4. apply: ``apply_plan`` at ``--concurrency`` with a journal and a backup (it pulls again to
   check the plan is not stale, writes the backup, then sends the updates).

The bound is what no sync can go under: the read's floor (calamine's own parse of the file,
before any of the reader's work, timed on the same file in the same run) plus what the latency
alone costs: the pull's (page 1, then the other pages ``--concurrency`` at a time) and the
writes' (the updates ``--concurrency`` at a time). Target: the whole sync within 1.5x of that
sum. Exits with 1 when it is missed.

For information it also prints what the apply's guarantees add at their latency alone: the
pull that checks the plan is not stale before the first write, and the requests that re-check
the listings written once that check is older than the re-check delay (law 14, counted as the
List requests of the apply beyond a pull's pages).

    python -m bench.bench_sync                      # 50,000 listings, 5% changed
    python -m bench.bench_sync --listings 5000
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import python_calamine

from bench._emulator import client_of, emulator_process
from bench.bench_plan import make_sheet
from bench.sheets import write_export
from estatebot.listings.remote.pull import pull_listings
from estatebot.listings.sheet.read import read_sheet
from estatebot.listings.sync.apply.phases import apply_plan
from estatebot.listings.sync.sync_plan import plan_sync

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
# The same listing factory the tests use, so the benchmark measures the data the tests check.
from factories import make_listing

TARGET = 1.5
PAGE = 100
T = TypeVar("T")


def latency_bound(requests: int, concurrency: int, latency_s: float) -> float:
    """The time ``requests`` take at ``concurrency`` when each costs only its latency."""
    return math.ceil(requests / concurrency) * latency_s


def _counted(owner: Any, name: str) -> list[int]:
    """Count the calls of ``owner.name`` from now on (the count is the list's one item)."""
    calls = [0]
    method = getattr(owner, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return method(*args, **kwargs)

    setattr(owner, name, counting)
    return calls


def calamine_parse_seconds(path: Path, repeat: int = 3) -> float:
    """The read's floor: calamine's own parse of the file's first sheet (opening the workbook
    and reading the sheet into calamine's range), the best of ``repeat``, with no Python value
    made of a cell."""
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter()
        python_calamine.CalamineWorkbook.from_path(str(path)).get_sheet_by_index(0)
        best = min(best, time.perf_counter() - started)
    return best


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; prints each stage's time, the bound and the ratio."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--listings", type=int, default=50_000)
    parser.add_argument("--changed", type=float, default=0.05)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args(argv)

    rng = random.Random(11)
    bodies = [make_listing(i, rng, prefix="S") for i in range(args.listings)]
    stages: list[tuple[str, float]] = []

    def timed(name: str, run: Callable[[], T]) -> T:
        started = time.perf_counter()
        result = run()
        stages.append((name, time.perf_counter() - started))
        return result

    with (
        tempfile.TemporaryDirectory() as folder,
        emulator_process(bodies, args.latency_ms, Path(folder)) as server,
        client_of(server, timeout=60) as client,
    ):
        serial = server["serial"]
        work = Path(folder)
        # The export: what the service holds, a share of it edited (untimed).
        before = pull_listings(client, serial, concurrency=args.concurrency, progress=False)
        edited = make_sheet(before, args.changed).reset_index(drop=True)
        edited["AreaUnit"] = "Square Feet"  # List never returns it; the export gives it
        path = write_export(edited, work / "export.xlsx")

        sheet = timed("read the xlsx (read_sheet)", lambda: read_sheet(path, progress=False))
        list_calls = _counted(client.listings, "list_page")
        remote = timed(
            f"pull (pull_listings, concurrency {args.concurrency})",
            lambda: pull_listings(client, serial, concurrency=args.concurrency, progress=False),
        )
        # The bench's emulator holds no Location: sending it empty loses nothing.
        plan = timed(
            "plan (plan_sync)",
            lambda: plan_sync(sheet, remote, blank_unknown_location=True),
        )
        pull_calls, list_calls[0] = list_calls[0], 0  # the pages a whole pull asks for
        report: Any = timed(
            f"apply (apply_plan, concurrency {args.concurrency}, journal, backup)",
            lambda: apply_plan(
                plan,
                client,
                serial,
                concurrency=args.concurrency,
                journal=work / "sync.journal",
                backup=work / "backup.json",
                sent_values=False,
                progress=False,
            ),
        )

        read_floor = calamine_parse_seconds(path)
    latency = args.latency_ms / 1000
    pages = math.ceil(args.listings / PAGE)
    pull_bound = latency + latency_bound(pages - 1, args.concurrency, latency)
    writes = len(plan.creates) + len(plan.updates) + len(plan.deletes)
    write_bound = latency_bound(writes, args.concurrency, latency)
    bound = read_floor + pull_bound + write_bound
    total = sum(seconds for _, seconds in stages)
    ratio = total / bound
    # What the apply's guarantees add: the pull that checks the plan is not stale before the
    # first write, and the requests that look again at the listings written once the check is
    # older than the re-check delay (law 14: their pages, or each alone), at their latency alone.
    rechecks = max(0, list_calls[0] - pull_calls)
    guarded = bound + pull_bound + latency_bound(rechecks, args.concurrency, latency)
    print(
        f"sync: {args.listings:,} rows against {args.listings:,} listings, "
        f"{args.latency_ms:g} ms latency, plan: {plan.summary()}"
    )
    for name, seconds in stages:
        print(f"  {name:<58} {seconds:7.2f} s  ({seconds / total:4.0%})")
    print(f"  {'whole sync':<58} {total:7.2f} s")
    print(
        f"  bound: read floor {read_floor:.2f} s (calamine's own parse) + pull {pull_bound:.2f} s "
        f"({pages} pages) + writes {write_bound:.2f} s ({writes:,} requests) = {bound:.2f} s"
    )
    verdict = "ok" if ratio <= TARGET else "MISSED"
    print(f"  whole sync / bound: {ratio:.2f}x (target <= {TARGET:g}x): {verdict}")
    print(
        f"  the apply's guarantees at their latency alone: its stale check's pull "
        f"{pull_bound:.2f} s + {rechecks:,} re-check requests "
        f"{latency_bound(rechecks, args.concurrency, latency):.2f} s; bound with them "
        f"{guarded:.2f} s = {guarded / bound:.2f}x the bound; whole sync / it: "
        f"{total / guarded:.2f}x"
    )
    print(f"  apply: {'ok' if report.ok else 'NOT OK'}, sheet issues: {len(sheet.issues)}")
    return 0 if ratio <= TARGET and report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
