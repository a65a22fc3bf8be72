"""``python -m bench`` (``make bench``): every benchmark, one after another, figures printed.

Each benchmark measures its subject against its baseline in the same run and prints the ratio.
The exit status is non-zero when any target was missed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from bench import (
    bench_apply,
    bench_fleet,
    bench_normalize,
    bench_plan,
    bench_pull,
    bench_read,
    bench_sync,
)

BENCHMARKS: list[tuple[str, Callable[[Sequence[str] | None], int]]] = [
    ("read", bench_read.main),
    ("pull", bench_pull.main),
    ("normalize", bench_normalize.main),
    ("plan", bench_plan.main),
    ("apply", bench_apply.main),
    ("sync", bench_sync.main),
    ("fleet", bench_fleet.main),
]


def main() -> int:
    """Run every benchmark (or those named on the command line)."""
    wanted = set(sys.argv[1:])
    missed = []
    for name, run in BENCHMARKS:
        if wanted and name not in wanted:
            continue
        print(f"\n######## {name}", flush=True)
        if run([]) != 0:
            missed.append(name)
    print(f"\nbenchmarks missing their target: {', '.join(missed) or 'none'}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
