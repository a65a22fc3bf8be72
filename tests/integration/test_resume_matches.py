"""A resume matches its command, and shows what is left before it asks.

After an interrupted ``cleanup --status Sold``, ``cleanup --status
NoSuchStatus --yes`` resumed the old plan and deleted the 20 Sold listings; a ``sync`` of an
edited sheet applied the old plan, not the edit. An auto-resume showed no
more than a summary. Now ``run.json`` keeps the fingerprint of the command that made the plan;
a command of another fingerprint is refused before anything is written, naming each
difference and the two ways on (``--resume``, ``--no-resume``); a resume shows the operations
left as a new plan is shown, and asks as a new plan is asked (``--yes`` skips the question).

The interrupted runs here are real: a child process killed with SIGKILL mid-apply.
"""

from __future__ import annotations

import csv
import json
import random
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import estatebot as eb
from clirun import run_cli, start_cli
from estatebot.cli.run_fingerprint import differences
from estatebot.emulator import EmulatorServer, running
from estatebot.listings import write_frame
from factories import make_listing, sheet_frame

WRITES = ("RealEstateCreate", "RealEstateUpdate", "RealEstateDelete")


@pytest.fixture
def market() -> Iterator[EmulatorServer]:
    """The demo chatbot's 200 listings, 20 of them Sold."""
    with running(seed="demo") as server:
        yield server


def writes(server: EmulatorServer) -> int:
    return sum(server.request_counts[name] for name in WRITES)


def pulled(server: EmulatorServer) -> eb.Client:
    return eb.Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    )


def statuses(server: EmulatorServer) -> dict[str, int]:
    with pulled(server) as client:
        frame = eb.pull_listings(client, server.serial, progress=False)
    return {str(k): int(v) for k, v in frame["Status"].value_counts().items()}


def the_run() -> Path:
    (folder,) = Path("estatebot-runs").iterdir()
    return folder


def status_of_run() -> str:
    return str(json.loads((the_run() / "run.json").read_text(encoding="utf-8"))["status"])


def kill_when(child: subprocess.Popen[str], ready: Callable[[], bool]) -> None:
    """SIGKILL ``child`` once ``ready()`` is true (polled), as a crash or an OOM kill would."""
    deadline = time.monotonic() + 120
    while not ready():
        assert child.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "the run never got there"
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)


def applying() -> bool:
    runs = list(Path("estatebot-runs").glob("*/run.json"))
    return bool(runs) and json.loads(runs[0].read_text(encoding="utf-8"))["status"] == "applying"


def journal_done(events: int) -> Callable[[], bool]:
    def ready() -> bool:
        journals = list(Path("estatebot-runs").glob("*/journal.jsonl"))
        return bool(journals) and journals[0].read_text().count('"event": "done"') >= events

    return ready


# --------------------------------------------------------------------------- cleanup


@pytest.fixture
def interrupted_cleanup(market: EmulatorServer) -> EmulatorServer:
    """``cleanup --status Sold --yes`` killed in its apply, before its deletes were sent."""
    market.faults.latency_ms = 1500
    market.faults.only = {"RealEstateList"}  # the apply's own pull, before any write, is slow
    child = start_cli(market, "cleanup", "--status", "Sold", "--yes")
    kill_when(child, applying)
    market.faults.clear()
    assert status_of_run() == "applying"
    assert writes(market) == 0
    return market


def test_a_cleanup_of_another_status_does_not_resume_the_interrupted_one(
    interrupted_cleanup: EmulatorServer,
) -> None:
    market = interrupted_cleanup
    before = statuses(market)
    assert before["Sold"] == 20

    typo = run_cli(market, "cleanup", "--status", "NoSuchStatus", "--yes")
    assert typo.code == 64, typo.text
    other = run_cli(market, "cleanup", "--status", "Active", "--yes")
    assert other.code == 1, other.text
    assert "--status was Sold, now Active" in other.err
    assert "was planned by another command" in other.err
    assert "--resume finishes that run's plan as it was made" in other.err
    assert "--no-resume abandons it and plans afresh" in other.err
    assert "Nothing was done" in other.err
    assert writes(market) == 0
    assert statuses(market) == before
    assert status_of_run() == "applying"  # still there to be resumed or abandoned


def test_the_same_cleanup_shows_what_is_left_and_asks_before_it_resumes(
    interrupted_cleanup: EmulatorServer,
) -> None:
    market = interrupted_cleanup
    asked = run_cli(market, "cleanup", "--status", "Sold", "--max-rows", "2")
    assert asked.code == 5, asked.text
    assert "Resuming the cleanup interrupted in estatebot-runs/" in asked.out
    assert "0 of 20 operations were done, 20 are left" in asked.out
    assert "Delete (20):" in asked.out  # the plan view of a new run, not a summary alone
    assert "... and 18 more" in asked.out
    assert "Not applied: no terminal to ask on" in asked.out
    assert writes(market) == 0
    assert status_of_run() == "applying"

    done = run_cli(market, "cleanup", "--status", "Sold", "--yes")
    assert done.code == 0, done.text
    assert "Apply: 20 deleted" in done.out
    assert "Sold" not in statuses(market)
    assert status_of_run() == "finished"


def test_resume_finishes_the_old_plan_as_it_was_made(interrupted_cleanup: EmulatorServer) -> None:
    market = interrupted_cleanup
    before = statuses(market)
    done = run_cli(market, "cleanup", "--status", "Active", "--resume", "--yes")
    assert done.code == 0, done.text
    assert "Resumed as asked (--resume), although --status was Sold, now Active" in done.out
    assert "Apply: 20 deleted" in done.out
    after = statuses(market)
    assert "Sold" not in after
    assert after["Active"] == before["Active"]  # the old plan, not the new command's


# --------------------------------------------------------------------------- sync


@pytest.fixture
def new_eight(emulator: EmulatorServer) -> Path:
    """A sheet of 8 listings the service does not have."""
    rng = random.Random(4)
    frame = sheet_frame(*(make_listing(i, rng, prefix="NEW") for i in range(8)))
    return write_frame(frame, Path("new8.csv"))


@pytest.fixture
def interrupted_sync(emulator: EmulatorServer, new_eight: Path) -> EmulatorServer:
    """``sync new8.csv --yes`` killed after three of its creates."""
    emulator.faults.latency_ms = 300
    emulator.faults.only = set(WRITES)
    child = start_cli(emulator, "sync", str(new_eight), "--yes", "--concurrency", "1")
    kill_when(child, journal_done(3))
    emulator.faults.clear()
    return emulator


def test_a_sync_of_an_edited_sheet_is_refused_then_planned_afresh_with_no_resume(
    interrupted_sync: EmulatorServer, new_eight: Path
) -> None:
    server = interrupted_sync
    with new_eight.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows[-1]["Description"] = "Edited after the run was interrupted."  # not yet created
    mls = rows[-1]["MLSNumber"]
    with new_eight.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    sent = writes(server)

    refused = run_cli(server, "sync", str(new_eight), "--yes")
    assert refused.code == 1, refused.text
    assert "the sheet changed since the interrupted run" in refused.err
    assert "--resume finishes" in refused.err
    assert "--no-resume abandons it" in refused.err
    assert writes(server) == sent
    assert status_of_run() == "applying"

    fresh = run_cli(server, "sync", str(new_eight), "--yes", "--no-resume")
    assert fresh.code == 0, fresh.text
    assert "is abandoned (--no-resume)" in fresh.out
    with pulled(server) as client:
        frame = eb.pull_listings(client, server.serial, progress=False)
    edited = frame.loc[frame["MLSNumber"] == mls, "Description"].tolist()
    assert edited == ["Edited after the run was interrupted."]  # the edit, not the old plan


def test_an_auto_resume_shows_the_operations_left_as_a_plan_and_asks(
    interrupted_sync: EmulatorServer, new_eight: Path
) -> None:
    server = interrupted_sync
    sent = writes(server)
    asked = run_cli(server, "sync", str(new_eight))
    assert asked.code == 5, asked.text
    found = re.search(r"(\d) of 8 operations were done, (\d) are left", asked.out)
    assert found is not None, asked.out
    done, left = int(found.group(1)), int(found.group(2))
    assert done >= 3
    assert done + left == 8
    assert f"Create ({left}):" in asked.out
    assert asked.out.count("  + NEW") == left  # only those left are shown
    assert "Resume applying this plan" not in asked.out  # no terminal: nothing asked ...
    assert "Not applied: no terminal to ask on; pass --yes" in asked.out  # ... nothing applied
    assert writes(server) == sent

    finished = run_cli(server, "sync", str(new_eight), "--yes")
    assert finished.code == 0, finished.text
    assert f"{done} skipped (already done)" in finished.out
    assert status_of_run() == "finished"


# --------------------------------------------------------------------------- fingerprints


FINGERPRINTS = st.dictionaries(
    st.sampled_from(["sheet", "--key", "--status", "--mapping", "--mapping content"]),
    st.text(min_size=1, max_size=5),
)


@given(old=FINGERPRINTS, new=FINGERPRINTS)
def test_differences_name_every_flag_that_changed_and_nothing_else(
    old: dict[str, str], new: dict[str, str]
) -> None:
    said = differences(old, new)
    assert differences(new, new) == []
    changed = {
        name for name in {*old, *new} if old.get(name, "not given") != new.get(name, "not given")
    }
    for name in changed - {"sheet", "--mapping content"}:
        assert any(line.startswith(f"{name} was ") for line in said), (name, said)
    assert ("the sheet changed since the interrupted run" in said) == ("sheet" in changed)
    assert len(said) <= len(changed)
    assert bool(said) == bool(changed)
