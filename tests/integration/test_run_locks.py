"""One run at a time per chatbot and per journal: real processes against the emulator.

Two ``estatebot sync --yes`` of one sheet at once, on a service that takes
a second listing with the same MLS number, both created all 8 listings (3 of 3 trials) and both
reported "8 created"; two resumes of one interrupted run shared its journal and started 96 of
98 operations twice. Now ``sync``, ``cleanup``, ``apply``, ``undo`` and ``restore`` hold a lock
per chatbot and service from planning to the end of the apply, and the library locks a journal
while an apply writes it: the second waits ``--lock-wait`` seconds and stops, naming the first.
A process killed while it holds the lock lets go with its death; the next run takes over.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

import estatebot as eb
from clirun import run_cli, start_cli
from estatebot.cli.run_lock import lock_path
from estatebot.emulator import EmulatorServer
from estatebot.listings import write_frame
from estatebot.listings.sync.apply.held_lock import HeldLock, LockHeldError, holder_note_path
from estatebot.listings.sync.apply.journal import Journal
from estatebot.listings.sync.apply.journal import lock_path as journal_lock_path
from factories import make_listing, sheet_frame

WRITES = ("RealEstateCreate", "RealEstateUpdate", "RealEstateDelete")


@pytest.fixture
def new_eight(emulator: EmulatorServer) -> Path:
    """A sheet of 8 listings the service does not have, on a service that would take each of
    them twice (no 409 for a second listing with the same MLS number)."""
    emulator.store.allow_duplicate_keys()
    rng = random.Random(27)
    frame = sheet_frame(*(make_listing(i, rng, prefix="NEW") for i in range(8)))
    return write_frame(frame, Path("new8.csv"))


def slow_writes(server: EmulatorServer, seconds: float) -> None:
    """Each write takes ``seconds``: a run holds the lock long enough to be caught holding it."""
    server.faults.latency_ms = seconds * 1000
    server.faults.only = set(WRITES)


def finish(child: subprocess.Popen[str]) -> tuple[int, str]:
    out, err = child.communicate(timeout=180)
    return child.returncode, out + err


def listings_named_new(server: EmulatorServer) -> Counter[str]:
    """How many listings on the service carry each NEW... MLS number."""
    with eb.Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    ) as client:
        frame = eb.pull_listings(client, server.serial, progress=False)
    return Counter(str(m) for m in frame["MLSNumber"] if str(m).startswith("NEW"))


def journal_events() -> list[dict[str, object]]:
    (journal,) = Path("estatebot-runs").glob("*/journal.jsonl")
    lines = journal.read_text(encoding="utf-8").splitlines()[1:]
    return [json.loads(line) for line in lines if line.strip().endswith("}")]


def wait_for_done(child: subprocess.Popen[str], events: int) -> None:
    deadline = time.monotonic() + 120
    while True:
        assert child.poll() is None, "the run ended before it could be caught"
        assert time.monotonic() < deadline, "the journal never filled"
        journals = list(Path("estatebot-runs").glob("*/journal.jsonl"))
        if journals and journals[0].read_text().count('"event": "done"') >= events:
            return
        time.sleep(0.02)


# --------------------------------------------------------------------------- the command line


def test_two_syncs_at_once_one_does_the_creates_and_the_other_names_it(
    emulator: EmulatorServer, new_eight: Path
) -> None:
    slow_writes(emulator, 0.75)  # 8 creates one at a time: some 6 s holding the lock
    sync = ("sync", str(new_eight), "--yes", "--concurrency", "1", "--lock-wait", "1")
    first, second = start_cli(emulator, *sync), start_cli(emulator, *sync)
    (code_a, text_a), (code_b, text_b) = finish(first), finish(second)

    results = sorted([(code_a, text_a, first.pid), (code_b, text_b, second.pid)])
    (done_code, done_text, done_pid), (busy_code, busy_text, _) = results
    assert done_code == 0, done_text
    assert "Apply: 8 created" in done_text
    assert busy_code == 1, busy_text
    assert "Apply:" not in busy_text
    assert f"chatbot {emulator.serial} at {emulator.base_url} is busy:" in busy_text
    assert f"`estatebot sync {new_eight} --yes --concurrency 1 --lock-wait 1`" in busy_text
    assert f"(PID {done_pid}, started " in busy_text
    assert "--lock-wait SECONDS waits longer" in busy_text
    assert "Traceback" not in busy_text

    assert emulator.request_counts["RealEstateCreate"] == 8
    assert set(listings_named_new(emulator).values()) == {1}
    assert len(listings_named_new(emulator)) == 8
    assert len(list(Path("estatebot-runs").iterdir())) == 1  # the second planned nothing


def test_a_run_killed_holding_the_lock_is_taken_over_by_the_next(
    emulator: EmulatorServer, new_eight: Path
) -> None:
    slow_writes(emulator, 0.3)
    child = start_cli(emulator, "sync", str(new_eight), "--yes", "--concurrency", "1")
    wait_for_done(child, 2)
    note = holder_note_path(lock_path(emulator.base_url, emulator.serial))
    assert json.loads(note.read_text(encoding="utf-8"))["pid"] == child.pid
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert note.exists()  # the killed run could not take its note away; the OS took its lock

    emulator.faults.clear()
    again = run_cli(emulator, "sync", str(new_eight), "--yes")
    assert again.code == 0, again.text
    assert f"taken over from PID {child.pid}, no longer running" in again.err
    assert "Resuming the sync interrupted in estatebot-runs/" in again.out
    # Each listing created once: the creates done were not redone (a request the kill cut off
    # reached the service without a body, and created nothing).
    made = listings_named_new(emulator)
    assert (len(made), set(made.values())) == (8, {1})
    assert not note.exists()  # let go, note first


def test_two_resumes_of_one_interrupted_run_do_not_both_send(
    emulator: EmulatorServer, new_eight: Path
) -> None:
    slow_writes(emulator, 0.3)
    killed = start_cli(emulator, "sync", str(new_eight), "--yes", "--concurrency", "1")
    wait_for_done(killed, 2)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    before = Counter(e["op"] for e in journal_events() if e["event"] == "started")

    slow_writes(emulator, 0.75)  # the resume holds the lock for seconds
    sync = ("sync", str(new_eight), "--yes", "--concurrency", "1", "--lock-wait", "1")
    first, second = start_cli(emulator, *sync), start_cli(emulator, *sync)
    results = sorted([finish(first), finish(second)])
    (done_code, done_text), (busy_code, busy_text) = results
    assert done_code == 0, done_text
    assert "Resuming the sync interrupted in estatebot-runs/" in done_text
    assert busy_code == 1, busy_text
    assert "is busy:" in busy_text
    assert "Resuming" not in busy_text

    after = Counter(e["op"] for e in journal_events() if e["event"] == "started")
    assert all(after[op] - before[op] <= 1 for op in after), (before, after)
    made = listings_named_new(emulator)
    assert (len(made), set(made.values())) == (8, {1})


def test_cleanup_waits_for_a_sync_of_the_same_chatbot_from_another_folder(
    emulator: EmulatorServer, new_eight: Path, tmp_path: Path
) -> None:
    """The lock is the chatbot's, not the runs folder's: another folder collides too."""
    slow_writes(emulator, 0.5)
    child = start_cli(emulator, "sync", str(new_eight), "--yes", "--concurrency", "1")
    wait_for_done(child, 1)
    elsewhere = tmp_path / "elsewhere"
    busy = run_cli(
        emulator, "cleanup", "--status", "Sold", "--yes", "--lock-wait", "0",
        "--runs-dir", str(elsewhere),
    )  # fmt: skip
    assert busy.code == 1, busy.text
    assert f"(PID {child.pid}, started " in busy.err
    (folder,) = Path("estatebot-runs").iterdir()
    assert f"run folder estatebot-runs/{folder.name})" in busy.err
    assert not elsewhere.exists()
    assert emulator.request_counts["RealEstateDelete"] == 0
    code, text = finish(child)
    assert code == 0, text


# --------------------------------------------------------------------------- the library


HOLD_JOURNAL = textwrap.dedent(
    """
    import sys
    from estatebot.listings.sync.apply.journal import Journal
    journal = Journal(sys.argv[1], fingerprint="f", serial="s")
    print("holding", flush=True)
    sys.stdin.read()  # until the test closes it, or kills this process
    journal.close()
    """
)


def hold_journal(path: Path) -> subprocess.Popen[str]:
    """Another Python process with ``path`` open as its journal, as an apply holds it."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_JOURNAL, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ},
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "holding"
    return child


def test_two_processes_applying_with_one_journal_collide(
    emulator: EmulatorServer, client: eb.Client, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.jsonl"
    remote = eb.pull_listings(client, emulator.serial, progress=False)
    rng = random.Random(3)
    sheet = sheet_frame(*(make_listing(i, rng, prefix="LIB") for i in range(3)))
    plan = eb.plan_sync(sheet, remote)
    assert len(plan.creates) == 3

    holder = hold_journal(journal)
    try:
        started = time.monotonic()
        with pytest.raises(LockHeldError) as caught:
            eb.apply_plan(plan, client, emulator.serial, journal=journal, progress=False)
        assert 4 <= time.monotonic() - started < 30  # it waited its while first
        assert caught.value.holder is not None
        assert caught.value.holder.pid == holder.pid
        assert f"the journal {journal} is in use by " in str(caught.value)
        assert f"(PID {holder.pid}, started " in str(caught.value)
        assert sum(emulator.request_counts[name] for name in WRITES) == 0
    finally:
        holder.kill()
        holder.wait(timeout=30)

    # Killed, it let go: the next apply takes the journal over and does the work.
    report = eb.apply_plan(plan, client, emulator.serial, journal=journal, progress=False)
    assert report.ok
    assert emulator.request_counts["RealEstateCreate"] == 3


def test_one_process_cannot_open_one_journal_twice(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with Journal(path, fingerprint="f", serial="s") as first:
        with pytest.raises(LockHeldError, match=f"PID {os.getpid()}"):
            Journal(path, fingerprint="f", serial="s", lock_wait=0.2)
        first.record("update:A", "started", attempts=1)
    with Journal(path, fingerprint="f", serial="s", lock_wait=0) as again:
        assert again.records()["update:A"].unconfirmed
    assert not holder_note_path(journal_lock_path(path)).exists()


def test_a_lock_note_left_by_a_killed_holder_is_told_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    script = textwrap.dedent(
        """
        import sys
        from estatebot.listings.sync.apply.held_lock import HeldLock
        lock = HeldLock(sys.argv[1], what="x", command="estatebot sync a.csv")
        lock.acquire()
        print("holding", flush=True)
        sys.stdin.read()
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "holding"
    with pytest.raises(LockHeldError, match=r"`estatebot sync a\.csv` \(PID \d+"):
        HeldLock(path, what="x", wait=0.1).acquire()
    child.kill()
    child.wait(timeout=30)

    lock = HeldLock(path, what="x", wait=0)
    left = lock.acquire()
    assert left is not None
    assert left.pid == child.pid
    assert left.command == "estatebot sync a.csv"
    assert not left.running
    assert json.loads(holder_note_path(path).read_text())["pid"] == os.getpid()
    lock.release()
    assert not holder_note_path(path).exists()
