"""The README's "Sixty seconds in code", run as a reader runs it: twice in a row, in one folder.

The code is taken from README.md itself, so this test follows the README. Each run starts its
own emulator (``eb.emulator.running()``), on another port: the second run must not trip over
what the first left in the folder (a journal written for the first emulator), because each run
keeps its journal and backup in a folder of its own.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def sixty_seconds() -> str:
    """The first Python block under the README's "Sixty seconds in code"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Sixty seconds in code")
    found = re.search(r"```python\n(.*?)```", readme[start:], re.DOTALL)
    assert found is not None, "no Python block under 'Sixty seconds in code'"
    return found.group(1)


def run_in(folder: Path, code: str) -> subprocess.CompletedProcess[str]:
    """``python -c CODE`` in ``folder``, progress bars off, as a reader's terminal runs it."""
    env = {**os.environ, "ESTATEBOT_PROGRESS": "0", "PYTHONUNBUFFERED": "1"}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_sixty_second_example_runs_twice_in_one_folder(tmp_path: Path) -> None:
    code = sixty_seconds()
    assert "eb.emulator.running()" in code  # each run has an emulator of its own
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data", target_is_directory=True)

    for attempt in (1, 2):
        done = run_in(tmp_path, code)
        assert done.returncode == 0, f"run {attempt}:\n{done.stdout}\n{done.stderr}"
        assert "8 create, 21 update, 4 delete" in done.stdout, done.stdout
        assert "8 created, 21 updated, 4 deleted" in done.stdout, done.stdout
        assert "Austin" in done.stdout  # the streamed answer

    # Each run left its journal and backup in a folder of its own, and nothing loose beside.
    runs = sorted(p for p in tmp_path.iterdir() if p.name != "sample_data")
    assert len(runs) == 2, runs
    for folder in runs:
        assert folder.is_dir(), folder
        assert (folder / "journal.jsonl").stat().st_size > 0
        assert (folder / "backup.xlsx").stat().st_size > 0


def test_a_journal_of_another_service_is_an_error_that_names_it(tmp_path: Path) -> None:
    # What the example did before: one journal file for every run. The second run's emulator
    # is another service: its journal cannot speak for it, and the error says what to do.
    fixed = sixty_seconds().replace('f"{run}/journal.jsonl"', '"sync.journal"')
    assert '"sync.journal"' in fixed
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data", target_is_directory=True)
    first = run_in(tmp_path, fixed)
    assert first.returncode == 0, first.stderr
    second = run_in(tmp_path, fixed)
    assert second.returncode != 0
    last = second.stderr.strip().splitlines()[-1]
    assert last.startswith("estatebot.errors.PlanError: the journal sync.journal (written 20")
    assert "was written for the service at http://127.0.0.1:" in last
    assert "each run needs a journal of its own: pass a new journal= path" in last
