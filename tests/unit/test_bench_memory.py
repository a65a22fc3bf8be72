"""The benchmarks' peak-memory measure: a process's own peak, not one inherited from its parent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MB = 1_000_000

# Allocates and touches ``argv[1]`` MB after resetting the peak, frees it, then reports.
_CHILD = """
import json, sys
from bench._memory import peak, reset_peak, resident
before = reset_peak()
block = bytearray(int(sys.argv[1]) * 1_000_000)  # zero-filled: every page touched
del block
grown = peak() - before
again = reset_peak()
print(json.dumps({"grown": grown, "after_reset": peak() - again, "now": resident() - before}))
"""


def _child(megabytes: int) -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(megabytes)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    measured: dict[str, int] = json.loads(done.stdout)
    return measured


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="Linux only")
def test_peak_counts_the_work_after_the_reset_and_not_the_parents_peak() -> None:
    # The parent first holds far more than the child will: a child measuring with ru_maxrss
    # would start from about this much.
    held = bytearray(300 * MB)
    measured = _child(40)
    del held
    # The kernel's resident counters are synced in batches of page faults, so the peak it reports
    # may fall a few pages short of the 40 MB touched: allow 5 % below, nowhere near the 300 MB.
    assert 38 * MB <= measured["grown"] < 100 * MB
    # Freed memory is not counted again once the peak is reset.
    assert measured["after_reset"] < 10 * MB
