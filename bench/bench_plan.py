"""Benchmark: plan_sync over a large listing set, side by side with datacompy.Compare.

Builds ``--rows`` remote listings (every canonical column filled) and a sheet that is the same
listings without IDs, with a ``--changed`` share of them edited (price, description, photos,
bedrooms), then times ``plan_sync`` and, when datacompy is importable, ``datacompy.Compare`` on
the same two frames (joined on MLSNumber with a cent tolerance, its nearest equivalent). The two
are run in turns, ``--repeat`` times each, and the best times are compared, so that both see the
same machine load.

It prints where a plan's time goes: cleaning the remote side (its text trimmed in Arrow, its
``Images`` and ``ExtensionColumn`` checked and joined once), its fingerprint (hashing those joined
texts), a plan where nothing changed, the same plan with the changes, and the plan of a sheet
without ``Images`` and ``ExtensionColumn`` (the best a plan could do if those two columns cost
nothing, as they might if they came as Arrow lists), with datacompy's time over it.

Then, at scale: ``--big-rows`` listings against as many rows (a million by default), the same
share changed, planned in a child process that measures its own peak resident memory (see
:mod:`bench._memory`) over what it held before (the two frames, unpickled), against the two
frames' size.

Targets: ``plan_sync`` under ``--limit`` seconds (3 by default) and at least 3x faster than
datacompy (ratio datacompy ÷ plan_sync); at scale, under ``--big-limit`` seconds (4) with a peak
under 2x the two frames. Exits with 1 when a target is missed.

    python -m bench.bench_plan --rows 100000 --repeat 3
    python -m bench.bench_plan --big-rows 0          # without the run at scale
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings import schema
from estatebot.listings.sync.plan.remote_side import clean_remote
from estatebot.listings.sync.sync_plan import plan_sync
from estatebot.listings.sync.values.hashing import frame_fingerprint

CITIES = ("Austin", "Dallas", "Houston", "San Antonio", "El Paso", "Plano", "Waco")


def make_remote(rows: int, seed: int = 7) -> pd.DataFrame:
    """A canonical frame of ``rows`` realistic, fully filled listings (IDs from 1)."""
    rng = np.random.default_rng(seed)
    ids = np.arange(1, rows + 1)
    mls = [f"ATX-{i:07d}" for i in ids]
    rent = rng.random(rows) < 0.2
    price = np.round(rng.uniform(90_000, 2_500_000, rows), 2)
    area = np.round(rng.uniform(600, 6000, rows), 0)
    data = {
        "ID": ids,
        "SaleType": np.where(rent, "for_rent", "for_sale"),
        "Status": rng.choice(["Active", "PreOnMarket", "Sold"], rows, p=[0.8, 0.1, 0.1]),
        "CurrencySymbol": "$",
        "PropertyType": rng.choice(["Single Family", "Condo", "Townhouse"], rows),
        "Bedrooms": rng.integers(0, 7, rows),
        "Bathrooms": rng.integers(2, 9, rows) / 2,
        "Url": [f"https://homes.example/listing/{i}" for i in ids],
        "MLSNumber": mls,
        "YearBuilt": rng.integers(1900, 2025, rows),
        "DaysOnMarket": rng.integers(0, 400, rows),
        "LotArea": np.round(area * rng.uniform(1.5, 6, rows), 2),
        "BuildingArea": area,
        "AreaUnit": "Square Feet",
        "Images": [[f"https://img.example/{i}/{n}.jpg" for n in range(3)] for i in ids],
        "Tours": rng.choice(["OpenHouse", "3D"], rows),
        "ParkingSpots": rng.integers(0, 4, rows),
        "Description": [f"Bright home number {i}, close to parks and schools." for i in ids],
        "ExtensionColumn": [{"Pool": "Yes", "ListingKey": f"K{i}"} for i in ids],
        "Location": "TX",
        "Address": [f"{i % 9000 + 100} Main St" for i in ids],
        "City": rng.choice(CITIES, rows),
        "State": "TX",
        "ZIP": [f"{78000 + i % 999:05d}" for i in ids],
        "Latitude": np.round(rng.uniform(29, 33, rows), 6),
        "Longitude": np.round(rng.uniform(-100, -95, rows), 6),
        "SalePrice": np.where(rent, np.nan, price),
        "UnitAreaPrice": np.where(rent, np.nan, np.round(price / area, 2)),
        "HOAMonth": np.round(rng.uniform(0, 600, rows), 2),
        "ZestimatePrice": np.where(rent, np.nan, np.round(price * 1.02, 2)),
        "RentPrice": np.where(rent, np.round(rng.uniform(900, 9000, rows), 2), np.nan),
        "SpaceType": ["Entire place" if r else None for r in rent],
        "DepositFee": np.where(rent, 1000.0, np.nan),
    }
    return schema.conform(pd.DataFrame(data))


def make_sheet(remote: pd.DataFrame, changed: float, seed: int = 11) -> pd.DataFrame:
    """The remote listings without IDs, with a ``changed`` share of them edited."""
    rng = np.random.default_rng(seed)
    sheet = remote.drop(columns=["ID"]).copy()
    picked = rng.choice(len(sheet), int(len(sheet) * changed), replace=False)
    quarter = np.array_split(picked, 4)
    price = sheet["SalePrice"].copy()
    price.iloc[quarter[0]] = price.iloc[quarter[0]] + 1000
    sheet["SalePrice"] = price
    text = sheet["Description"].copy()
    text.iloc[quarter[1]] = text.iloc[quarter[1]] + " Newly renovated kitchen."
    sheet["Description"] = text
    images = sheet["Images"].copy()
    images.iloc[quarter[2]] = [list(reversed(v)) for v in images.iloc[quarter[2]]]
    sheet["Images"] = images
    beds = sheet["Bedrooms"].copy()
    beds.iloc[quarter[3]] = beds.iloc[quarter[3]] + 1
    sheet["Bedrooms"] = beds
    sheet.index = pd.RangeIndex(2, len(sheet) + 2, name="row")
    return sheet


def _for_datacompy(frame: pd.DataFrame) -> pd.DataFrame:
    # datacompy compares scalar columns: lists and mappings go in as JSON text.
    out = frame.copy()
    for column in (*schema.LIST_COLUMNS, *schema.DICT_COLUMNS):
        out[column] = [json.dumps(v, sort_keys=True) for v in out[column]]
    return out


def datacompy_run(sheet: pd.DataFrame, remote: pd.DataFrame) -> Callable[[], int] | None:
    """A function running datacompy's comparison of the two frames (returning the number of
    mismatching rows), or None when datacompy is not installed."""
    try:
        import datacompy
    except ImportError:
        return None
    # datacompy 0.x names the pandas comparison Compare; 1.x names it PandasCompare.
    compare_class: Any = getattr(datacompy, "PandasCompare", None) or getattr(
        datacompy, "Compare", None
    )
    if compare_class is None:
        return None
    left = _for_datacompy(sheet.reset_index(drop=True))
    right = _for_datacompy(remote.drop(columns=["ID"]))

    def run() -> int:
        compare = compare_class(
            left, right, join_columns=["MLSNumber"], abs_tol=0.005, ignore_spaces=True
        )
        return len(compare.all_mismatch())

    return run


def stages(sheet: pd.DataFrame, remote: pd.DataFrame, repeat: int) -> dict[str, float]:
    """Where a plan's time goes (best of ``repeat`` each): cleaning the remote side, its
    fingerprint, a plan where nothing changed (pairing and comparing every row, no bodies) and
    the same plan with the sheet's changes (the rest is building the updates)."""
    unchanged = make_sheet(remote, 0.0)
    side = clean_remote(remote)
    runs: dict[str, Callable[[], Any]] = {
        "clean the remote side": lambda: clean_remote(remote),
        "fingerprint of the remote side": lambda: frame_fingerprint(
            side.clean, is_clean=True, joined=side.joined
        ),
        "plan, nothing changed": lambda: plan_sync(unchanged, remote),
        "plan, with the changes": lambda: plan_sync(sheet, remote),
        # Neither column stated, so neither is checked, joined or compared: no plan that brings
        # them as Arrow lists instead of Python objects can go under this.
        "plan, no Images/ExtensionColumn": lambda: plan_sync(
            sheet.drop(columns=list(OBJECT_COLUMNS)), remote
        ),
    }
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(max(1, repeat)):
        for name, run in runs.items():
            best[name] = min(best[name], _timed(run)[0])
    return best


def _timed(run: Callable[[], Any]) -> tuple[float, float, Any]:
    start, start_cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - start, time.process_time() - start_cpu, result


RATIO_TARGET = 3.0
#: The columns the frames hold as Python objects (lists and mappings).
OBJECT_COLUMNS = ("Images", "ExtensionColumn")
MEMORY_TARGET = 2.0

_BUILD = """
import pickle, sys
from bench.bench_plan import make_remote, make_sheet
remote = make_remote(int(sys.argv[1]))
sheet = make_sheet(remote, float(sys.argv[2]))
with open(sys.argv[3], "wb") as handle:
    pickle.dump((sheet, remote), handle, protocol=5)
"""

_MEASURE = """
import gc, json, pickle, sys, time
from bench._memory import peak, reset_peak
from estatebot.listings.sync.sync_plan import plan_sync
with open(sys.argv[1], "rb") as handle:
    sheet, remote = pickle.load(handle)
size = int(sheet.memory_usage(deep=True).sum() + remote.memory_usage(deep=True).sum())
plan_sync(sheet.head(1000), remote.head(1000))  # modules a plan imports on first use
gc.collect()
before = reset_peak()
started, cpu = time.perf_counter(), time.process_time()
plan = plan_sync(sheet, remote)
wall, cpu = time.perf_counter() - started, time.process_time() - cpu
print(json.dumps({"wall": wall, "cpu": cpu, "before": before, "peak": peak(), "frames": size,
                  "summary": plan.summary()}))
"""


def at_scale(rows: int, changed: float) -> dict[str, Any]:
    """Plan ``rows`` × ``rows`` in a child process: its times, memory and summary."""
    with tempfile.TemporaryDirectory() as folder:
        frames = f"{folder}/frames.pickle"
        subprocess.run(
            [sys.executable, "-c", _BUILD, str(rows), str(changed), frames],
            check=True,
        )
        done = subprocess.run(
            [sys.executable, "-c", _MEASURE, frames], check=True, capture_output=True, text=True
        )
    measured: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return measured


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; prints the times, the ratio and the checks; 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--changed", type=float, default=0.05)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--limit", type=float, default=3.0, help="seconds plan_sync may take")
    parser.add_argument("--big-rows", type=int, default=1_000_000, help="0: no run at scale")
    parser.add_argument("--big-limit", type=float, default=4.0, help="seconds at scale")
    args = parser.parse_args(argv)

    remote = make_remote(args.rows)
    sheet = make_sheet(remote, args.changed)
    other = datacompy_run(sheet, remote)
    best, best_cpu, best_other = float("inf"), float("inf"), float("inf")
    summary, mismatches = "", 0
    for _ in range(max(1, args.repeat)):  # in turns, so both see the same load
        wall, cpu, plan = _timed(lambda: plan_sync(sheet, remote))
        best, best_cpu = min(best, wall), min(best_cpu, cpu)
        summary = plan.summary()
        del plan  # not kept alive while the other side runs
        if other is not None:
            wall, _, mismatches = _timed(other)
            best_other = min(best_other, wall)

    edited = int(args.rows * args.changed)
    print(f"rows: {args.rows:,}, changed: {edited:,} ({args.changed:.0%})")
    print(f"plan_sync: best {best:.3f} s of {args.repeat} ({best_cpu:.3f} s CPU): {summary}")
    missed = []
    if other is None:
        print("datacompy.Compare: not installed, ratio skipped")
    else:
        ratio = best_other / best
        print(f"datacompy.Compare: best {best_other:.3f} s of {args.repeat} ({mismatches} rows)")
        verdict = "ok" if ratio >= RATIO_TARGET else "MISSED"
        print(f"ratio datacompy / plan_sync: {ratio:.2f}x (target >= {RATIO_TARGET:g}x): {verdict}")
        if ratio < RATIO_TARGET:
            missed.append("ratio")
    spent = stages(sheet, remote, args.repeat)
    print("where a plan's time goes (best of each):")
    for name, seconds in spent.items():
        print(f"  {name:<32}: {seconds:.3f} s")
    building = spent["plan, with the changes"] - spent["plan, nothing changed"]
    print(f"  {'so, building the updates':<32}: {building:.3f} s ({edited:,} rows edited)")
    if other is not None:
        ceiling = best_other / spent["plan, no Images/ExtensionColumn"]
        print(
            f"  {'so, at best without them':<32}: datacompy / plan {ceiling:.2f}x (the most "
            "bringing them as Arrow lists could reach)"
        )
    verdict = "ok" if best < args.limit else "MISSED"
    print(f"plan_sync under {args.limit:g} s: {best:.3f} s: {verdict}")
    if best >= args.limit:
        missed.append("time")
    if args.big_rows:
        del remote, sheet
        big = at_scale(args.big_rows, args.changed)
        wall, cpu = float(big["wall"]), float(big["cpu"])
        used = int(big["peak"]) - int(big["before"])
        times = used / int(big["frames"])
        print(f"at scale: {args.big_rows:,} x {args.big_rows:,} rows: {big['summary']}")
        verdict = "ok" if wall < args.big_limit else "MISSED"
        print(f"  plan_sync: {wall:.2f} s ({cpu:.2f} s CPU), under {args.big_limit:g} s: {verdict}")
        verdict = "ok" if times < MEMORY_TARGET else "MISSED"
        print(
            f"  peak memory: {used / 1e6:,.0f} MB over {int(big['before']) / 1e6:,.0f} MB held "
            f"before, frames {int(big['frames']) / 1e6:,.0f} MB: {times:.2f}x "
            f"(target < {MEMORY_TARGET:g}x): {verdict}"
        )
        if wall >= args.big_limit:
            missed.append("time at scale")
        if times >= MEMORY_TARGET:
            missed.append("memory at scale")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
