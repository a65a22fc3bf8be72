"""Benchmark: ``read_sheet`` on a big MLS export, the calamine engine against openpyxl's.

Writes a ``--rows`` × 30-column xlsx export (a disclaimer row, ZIP codes as numbers under a
``00000`` format: see :mod:`bench.sheets`), then reads it with ``engine="openpyxl"`` (the
reader before calamine, the baseline) and with the default engine, in one run, and checks the
two give the same frame and the same issues. The default engine reads such a sheet by columns:
fastexcel gives calamine's parse as Arrow columns, typed a column at a time with no Python
object per cell. The fast read's peak memory is measured in a child process (calamine's memory
is not Python's, so tracemalloc would not see it): the peak resident size over the size just
before the read (see :mod:`bench._memory`), against the final frame's size. Beside it, the
floor: what calamine alone holds for the sheet, before any of the reader's own work.

Targets: at least 12x faster than openpyxl, same frame and issues, peak memory at most 4x the
frame. Exits with 1 when a target is missed.

    python -m bench.bench_read --rows 50000
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from bench.sheets import export_of
from estatebot.listings.sheet.read import read_sheet

SPEED_TARGET = 12.0
MEMORY_TARGET = 4.0

_MEASURE = """
import json, sys
from bench._memory import peak, reset_peak
from estatebot.listings.sheet.read import read_sheet
# A small read first, so the modules a read imports on first use are not counted.
read_sheet(sys.argv[2], progress=False)
before = reset_peak()
sheet = read_sheet(sys.argv[1], engine=sys.argv[3], progress=False)
high = peak()
frame = int(sheet.frame.memory_usage(deep=True).sum())
print(json.dumps({"before": before, "peak": high, "frame": frame}))
"""

# What calamine alone holds, before any of the reader's own work: the peak of fastexcel's parse
# of the sheet into Arrow columns (what the columnar read starts from: calamine holds the whole
# sheet while the columns are made), then calamine's parsed sheet (compiled memory), and that
# with the sheet's values as Python lists (``to_python``), which the cell-by-cell read starts
# from. With the final frame, the first is the floor of the default read's peak.
_ARROW_FLOOR = """
import json, sys
import fastexcel
from bench._memory import peak, reset_peak
before = reset_peak()
columns = fastexcel.read_excel(sys.argv[1]).load_sheet(0, header_row=0, eager=True)
print(json.dumps({"arrow": peak() - before}))
"""
_FLOOR = """
import json, sys
import python_calamine
from bench._memory import resident
before = resident()
book = python_calamine.CalamineWorkbook.from_path(sys.argv[1])
sheet = book.get_sheet_by_index(0)
parsed = resident()
values = sheet.to_python(skip_empty_area=False)
print(json.dumps({"sheet": parsed - before, "with_values": resident() - before}))
"""


def calamine_floor(path: Path) -> dict[str, int]:
    """The peak of fastexcel's parse into Arrow columns, the memory calamine alone holds for the
    sheet, and that with its values as Python lists (each in a process of its own)."""
    measured: dict[str, int] = {}
    for script in (_ARROW_FLOOR, _FLOOR):
        done = subprocess.run(
            [sys.executable, "-c", script, str(path)], check=True, capture_output=True, text=True
        )
        measured.update(json.loads(done.stdout.strip().splitlines()[-1]))
    return measured


def peak_memory(path: Path, small: Path, engine: str = "calamine") -> dict[str, int]:
    """The resident size before the read, the peak during it, and the frame's size (bytes)."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), str(small), engine],
        check=True,
        capture_output=True,
        text=True,
    )
    measured: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    return measured


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; prints the times, the ratio and the checks; 1 when a target is missed."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=2, help="fast reads (best taken)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        _, path = export_of(args.rows, Path(folder))
        written = time.perf_counter() - started
        size = path.stat().st_size
        print(f"export: {args.rows:,} rows x 30 columns, {size / 1e6:.1f} MB ({written:.1f} s)")
        fast_s = float("inf")
        for _ in range(max(1, args.repeat)):
            started = time.perf_counter()
            fast = read_sheet(path, progress=False)
            fast_s = min(fast_s, time.perf_counter() - started)
        started = time.perf_counter()
        slow = read_sheet(path, engine="openpyxl", progress=False)
        slow_s = time.perf_counter() - started
        _, small = export_of(50, Path(folder))
        memory = peak_memory(path, small)
        baseline_memory = peak_memory(path, small, "openpyxl")
        floor = calamine_floor(path)

    same_frame = fast.frame.equals(slow.frame)
    same_issues = fast.issues.equals(slow.issues)
    ratio = slow_s / fast_s
    used = memory["peak"] - memory["before"]
    times = used / memory["frame"]
    print(f"  read_sheet, engine='openpyxl' (baseline) : {slow_s:8.2f} s")
    print(f"  read_sheet, engine='calamine'            : {fast_s:8.2f} s (best of {args.repeat})")
    print(
        f"  ratio                                    : {ratio:8.1f}x  (target >= {SPEED_TARGET:g}x)"
    )
    print(f"  same frame: {same_frame}, same issues: {same_issues} ({len(fast.issues)} issues)")
    print(
        f"  peak memory of the read: {used / 1e6:.0f} MB over {memory['before'] / 1e6:.0f} MB, "
        f"frame {memory['frame'] / 1e6:.0f} MB: {times:.2f}x (target <= {MEMORY_TARGET:g}x)"
    )
    print(
        f"  (openpyxl's read: {(baseline_memory['peak'] - baseline_memory['before']) / 1e6:.0f} MB)"
    )
    frame_mb = memory["frame"] / 1e6
    print(
        f"  floor: fastexcel's parse into Arrow columns peaks at {floor['arrow'] / 1e6:.0f} MB "
        f"({floor['arrow'] / 1e6 / frame_mb:.2f}x the frame); calamine's parsed sheet alone "
        f"{floor['sheet'] / 1e6:.0f} MB, with its values as Python lists "
        f"{floor['with_values'] / 1e6:.0f} MB; with the frame, "
        f"{(floor['sheet'] / 1e6 + frame_mb) / frame_mb:.2f}x and "
        f"{(floor['with_values'] / 1e6 + frame_mb) / frame_mb:.2f}x before any typing"
    )
    if not same_frame:
        pd.testing.assert_frame_equal(fast.frame, slow.frame)  # prints where they differ
    missed = [
        name
        for name, ok in (
            ("speed", ratio >= SPEED_TARGET),
            ("same frame", same_frame),
            ("same issues", same_issues),
            ("memory", times <= MEMORY_TARGET),
        )
        if not ok
    ]
    print(f"  targets missed: {', '.join(missed) or 'none'}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
