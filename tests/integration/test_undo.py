"""Undoing a run (``estatebot undo``, ``eb.plan_undo``) against the real emulator over HTTP.

The service is compared as the emulator stores it (``AreaUnit`` and ``Location`` too, which List
never shows), listing by listing and field by field, before the run and after its undo.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

import estatebot as eb
from clirun import cli_env, command, run_cli
from estatebot.emulator import EmulatorServer, running
from estatebot.listings import write_frame

WRITES = ("RealEstateCreate", "RealEstateUpdate", "RealEstateDelete")
FEET = "AreaUnit=Square Feet"


@pytest.fixture
def market() -> Iterator[EmulatorServer]:
    """The demo chatbot with the 200 listings of the sample market."""
    with running(seed="demo") as server:
        yield server


@pytest.fixture
def small() -> Iterator[EmulatorServer]:
    """The demo chatbot with the 16 small-seed listings."""
    with running(seed="small") as server:
        yield server


def client_of(server: EmulatorServer, **options: Any) -> eb.Client:
    return eb.Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key, **options
    )


def pulled(server: EmulatorServer) -> pd.DataFrame:
    with client_of(server) as client:
        return eb.pull_listings(client, server.serial, progress=False)


def stored(server: EmulatorServer) -> dict[str, dict[str, Any]]:
    """Every listing as the emulator stores it (AreaUnit and Location too), by MLS number."""
    ids = [int(i) for i in pulled(server)["ID"]]
    return {d["MLSNumber"]: d for d in server.store.listing_data(server.serial, ids).values()}


def differences(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> list[Any]:
    """Each listing missing or extra, and each field that differs, between two stores (an empty
    list is no value, as the service shows it)."""
    out: list[Any] = sorted(set(before) ^ set(after))
    for key in sorted(set(before) & set(after)):
        for name in sorted(set(before[key]) | set(after[key])):
            was, now = before[key].get(name) or None, after[key].get(name) or None
            if was != now:
                out.append((key, name, was, now))
    return out


def edit_on_the_service(server: EmulatorServer, mls: str, **changes: Any) -> None:
    """Change a listing by hand, as someone would in the service's own screens."""
    ids = pulled(server).set_index("MLSNumber")["ID"]
    listing_id = int(ids[mls])
    data = server.store.listing_data(server.serial, [listing_id])[listing_id]
    body = {**data, **changes, "SerialNumber": server.serial, "Key": str(listing_id)}
    with client_of(server) as client:
        assert client.listings.update({**body, "KeyType": "NewOaks"}) == 1


def new_rows(frame: pd.DataFrame, count: int) -> pd.DataFrame:
    """``count`` new listings: copies of the last rows under new keys."""
    rows = frame.tail(count).copy()
    rows["MLSNumber"] = [f"NEW{i}" for i in range(count)]
    rows["Url"] = [f"https://listings.example.com/new/{i}" for i in range(count)]
    rows["ID"] = pd.NA
    return rows


# --------------------------------------------------------------------------- the whole run


def week_of_edits(server: EmulatorServer) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """Known units and locations on five listings (sent once before), then a sheet that creates
    4, updates 20 and deletes 8 listings: one of those deleted, and two of those updated (their
    Location), have values List never shows, known from what was sent."""
    frame = pulled(server)
    primed = frame.iloc[:5].copy()
    primed["Location"] = [f"Block {i}" for i in range(5)]
    primed["AreaUnit"] = ["Square Meters", *["Square Feet"] * 4]
    primed["Description"] = primed["Description"] + " Recently inspected."
    with client_of(server) as client:
        plan = eb.plan_sync(eb.read_sheet(primed), frame)
        assert len(plan.updates) == 5, plan
        assert plan.apply(client, server.serial, progress=False).ok

    frame = pulled(server)  # AreaUnit and Location of the five filled in from what was sent
    assert list(frame["AreaUnit"].iloc[:2]) == ["Square Meters", "Square Feet"]
    deleted = [0, *range(5, 12)]  # the Square Meters one, and seven whose unit nobody knows
    updated = [3, 4, *range(20, 38)]
    sheet = frame.drop(index=deleted)
    for n, i in enumerate(updated):
        sheet.loc[i, "YearBuilt"] = 1900 + n
        if n % 3 == 0:
            sheet.loc[i, "Description"] = f"Renovated in 2025 ({n})."
        if n % 4 == 1:
            sheet.at[i, "ExtensionColumn"] = {**sheet.at[i, "ExtensionColumn"], "Pool": "Heated"}
        if n % 5 == 2:
            sheet.at[i, "Images"] = [*sheet.at[i, "Images"], "https://photos.example.com/new.jpg"]
    sheet.loc[3, "Location"] = "Moved to block 9"
    sheet.loc[4, "Location"] = "Moved to block 8"
    sheet = pd.concat([sheet, new_rows(frame, 4)], ignore_index=True)
    keys = {
        "deleted": [str(frame.loc[i, "MLSNumber"]) for i in deleted],
        "updated": [str(frame.loc[i, "MLSNumber"]) for i in updated],
    }
    return sheet, keys


def test_undo_leaves_the_service_exactly_as_before_the_run(market: EmulatorServer) -> None:
    sheet, keys = week_of_edits(market)
    before = stored(market)
    done = run_cli(
        market, "sync", str(write_frame(sheet, Path("listings.xlsx"))), "--delete-missing",
        "--default", FEET, "--yes",
    )  # fmt: skip
    assert done.code == 0, done.text
    assert "Apply: 4 created, 20 updated, 8 deleted" in done.out
    (run,) = Path("estatebot-runs").iterdir()
    assert f"or: estatebot undo {run}" in done.out  # the report names the undo of the run
    after_run = stored(market)
    assert after_run[keys["updated"][0]]["Location"] == "Moved to block 9"
    assert keys["deleted"][0] not in after_run

    # Without a unit for the seven deleted listings nobody sent a unit to, they are listed as
    # invalid, naming AreaUnit and the flag that gives it, and not created: a unit is never
    # guessed. The rest is undone, the Square Meters listing created again with its own unit.
    first = run_cli(market, "undo", "--yes", "--max-rows", "0")
    assert first.code == 4, first.text  # part of the work could not be done
    text = re.sub(r"\s+", " ", first.out)
    assert f"Undoing the run in {run}." in text
    assert "Invalid rows (7):" in text
    assert text.count("AreaUnit: unknown") == 7
    assert 'undo never guesses a unit: give it with --default "AreaUnit=Square Feet"' in text
    assert "Apply: 1 created, 20 updated, 4 deleted" in text
    now = stored(market)
    assert not set(keys["deleted"][1:]) & set(now)
    assert now[keys["deleted"][0]]["AreaUnit"] == "Square Meters"

    # With the unit given, what is left is done, and the service is as it was, field by field.
    second = run_cli(market, "undo", "--default", FEET, "--yes", "--detailed-exitcode")
    assert second.code == 2, second.text  # changes made
    assert "Apply: 7 created" in second.out
    assert "25 listings the run touched are already as before it: left alone" in second.out
    assert differences(before, stored(market)) == []
    assert {before[k]["Location"] for k in keys["updated"][:2]} == {"Block 3", "Block 4"}

    # Undone, the run has nothing left to undo.
    third = run_cli(market, "undo", "--yes", "--detailed-exitcode")
    assert third.code == 0, third.text
    assert "Nothing to undo: the listings are as they were before the run." in third.out


# --------------------------------------------------------------------------- resumable


def test_an_undo_killed_midway_resumes_with_its_journal(
    small: EmulatorServer, tmp_path: Path
) -> None:
    frame = pulled(small)
    sheet = pd.concat([frame.drop(index=[0, 1]), new_rows(frame, 2)], ignore_index=True)
    for i in (4, 5, 6, 7):
        sheet.loc[i, "YearBuilt"] = 2010 + i
        sheet.loc[i, "Description"] = f"Renovated ({i})."
    before = stored(small)
    with client_of(small) as client:
        plan = eb.plan_sync(eb.read_sheet(sheet, defaults={"AreaUnit": "Square Feet"}), frame,
                            delete_missing=True)  # fmt: skip
        report = plan.apply(client, small.serial, journal=tmp_path / "sync.journal",
                            backup=tmp_path / "backup.xlsx", progress=False)  # fmt: skip
        assert "2 created, 4 updated, 2 deleted" in str(report.summary()), report.summary()

        undo = eb.plan_undo(
            client, small.serial, plan, journal=tmp_path / "sync.journal",
            backup=tmp_path / "backup.xlsx", defaults={"AreaUnit": "Square Feet"},
        )  # fmt: skip
        assert isinstance(undo, eb.SyncPlan)
        assert str(undo.summary()).startswith("2 create, 4 update, 2 delete"), undo
        assert {op.key_type for op in undo.deletes} == {"NewOaks"}  # by ID
        journal = tmp_path / "undo.journal"
        sent_before = {name: small.request_counts[name] for name in WRITES}

        writes = {"count": 0}

        def die_after_the_fourth_write(response: httpx.Response) -> None:
            # The service carried the request out; the process dies before hearing it.
            if response.request.url.path.rsplit("/", 1)[-1] in WRITES:
                writes["count"] += 1
                if writes["count"] == 4:
                    raise KeyboardInterrupt

        hooked = httpx.Client(event_hooks={"response": [die_after_the_fourth_write]})
        doomed = client_of(small, http_client=hooked, max_retries=0)
        try:
            undo.apply(doomed, small.serial, journal=journal, concurrency=1, progress=False)
        except KeyboardInterrupt:
            pass
        finally:
            hooked.close()
        assert 4 <= writes["count"] < 7, writes  # killed in the middle of the updates
        confirmed = journal.read_text().count('"event": "done"')

        resumed = undo.apply(client, small.serial, journal=journal, progress=False)
    assert resumed.ok, resumed
    outcomes = resumed.frame["outcome"].value_counts().to_dict()
    assert outcomes == {"skipped (already done)": confirmed, "done": 8 - confirmed}, outcomes
    # Nothing was sent twice: the write the kill left unanswered is found done on the service.
    sent = {name: small.request_counts[name] - sent_before[name] for name in WRITES}
    assert sent == {"RealEstateCreate": 2, "RealEstateUpdate": 4, "RealEstateDelete": 1}
    assert differences(before, stored(small)) == []


def test_running_the_same_undo_again_resumes_an_interrupted_one(small: EmulatorServer) -> None:
    frame = pulled(small)
    sheet = pd.concat([frame.drop(index=[0]), new_rows(frame, 2)], ignore_index=True)
    for i in range(1, 6):
        sheet.loc[i, "YearBuilt"] = 2010 + i
    before = stored(small)
    path = write_frame(sheet, Path("listings.csv"))
    done = run_cli(small, "sync", str(path), "--delete-missing", "--default", FEET, "--yes")
    assert "Apply: 2 created, 5 updated, 1 deleted" in done.out, done.text

    small.faults.latency_ms = 150  # each write takes a while: the undo is caught midway
    small.faults.only = set(WRITES)
    child = subprocess.Popen(
        command("undo", "--default", FEET, "--yes", "--concurrency", "1"),
        env=cli_env(small), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not any(
        j.read_text().count('"event": "done"') >= 2
        for j in Path("estatebot-runs").glob("undo-*/journal.jsonl")
    ):
        assert child.poll() is None, child.communicate()  # ended before it was interrupted
        assert time.monotonic() < deadline, "the undo's journal never filled"
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, out + err
    assert "or run the same `estatebot undo` again: it resumes" in err

    small.faults.clear()
    again = run_cli(small, "undo", "--default", FEET, "--yes")
    assert again.code == 0, again.text
    assert "Resuming the undo interrupted in estatebot-runs/undo-" in again.out
    assert "skipped (already done)" in again.out
    assert len(list(Path("estatebot-runs").glob("undo-*"))) == 1  # the same undo, resumed
    assert differences(before, stored(small)) == []


# --------------------------------------------------------------------------- later edits


def test_a_listing_changed_after_the_run_is_not_overwritten(small: EmulatorServer) -> None:
    frame = pulled(small)
    gone, edited, kept = (str(frame.loc[i, "MLSNumber"]) for i in (0, 3, 4))
    sheet = frame.copy()
    for i in (3, 4, 5):
        sheet.loc[i, "YearBuilt"] = 2000 + i
    sheet = pd.concat([sheet.drop(index=[0]), new_rows(frame, 1)], ignore_index=True)
    before = stored(small)
    path = write_frame(sheet, Path("listings.csv"))
    done = run_cli(small, "sync", str(path), "--delete-missing", "--default", FEET, "--yes")
    assert done.code == 0, done.text
    assert "Apply: 1 created, 3 updated, 1 deleted" in done.out

    # Meanwhile, by hand on the service: a field the run changed, the listing it created, and
    # the listing it deleted, made again with another description.
    edit_on_the_service(small, edited, YearBuilt=1888)
    edit_on_the_service(small, "NEW0", Description="Staged and photographed again.")
    with client_of(small) as client:
        remade = {**before[gone], "Description": "Back on the market."}
        client.listings.create({**remade, "SerialNumber": small.serial})

    undone = run_cli(small, "undo", "--default", FEET, "--yes", "--max-rows", "0")
    assert undone.code == 4, undone.text  # part of the work could not be done
    assert "Apply: 2 updated" in undone.out  # the rest is undone
    text = re.sub(r"\s+", " ", undone.out)
    assert (
        f"{edited} YearBuilt: changed on the service after the run (the run set 2003, it is now "
        "1888); not undone, so the later edit stays"
    ) in text
    assert (
        "NEW0 Description: changed on the service after the run (the run created it with "
    ) in text
    assert f"{gone} exists again on the service (ID " in text
    assert "Description: it was " in text
    assert "Refused: 3 listings changed on the service after the run are not undone" in text
    now = stored(small)
    assert now[edited]["YearBuilt"] == 1888
    assert now["NEW0"]["Description"] == "Staged and photographed again."
    assert now[gone]["Description"] == "Back on the market."
    assert now[kept]["YearBuilt"] == before[kept]["YearBuilt"]


def test_a_restore_that_leaves_the_runs_creates_names_undo(small: EmulatorServer) -> None:
    frame = pulled(small)
    sheet = pd.concat([frame, new_rows(frame, 2)], ignore_index=True)
    sheet.loc[3, "YearBuilt"] = 2020
    path = write_frame(sheet, Path("listings.csv"))
    done = run_cli(small, "sync", str(path), "--default", FEET, "--yes")
    assert "Apply: 2 created, 1 updated" in done.out, done.text
    (run,) = Path("estatebot-runs").iterdir()

    restored = run_cli(small, "restore", str(run / "backup.json"))
    assert restored.code == 0, restored.text
    assert (
        "this run also created 2 listings, which a restore leaves in place: `estatebot undo "
        f"{run} --serial {small.serial}` removes them"
    ) in re.sub(r"\s+", " ", restored.out)
    with client_of(small) as client:  # the Python restore names the Python twin
        report = eb.restore(run / "backup.json", client, small.serial)
    assert (
        f"leaves in place: eb.plan_undo(client, {small.serial!r}, {str(run)!r})"
        f".apply(client, {small.serial!r}) removes them"
    ) in " ".join(report.notes)


def test_a_cleanup_is_undone_too(small: EmulatorServer) -> None:
    before = stored(small)
    done = run_cli(small, "cleanup", "--status", "Sold", "--status", "PreOnMarket", "--yes")
    assert "Apply: 2 deleted" in done.out, done.text
    undone = run_cli(small, "undo", "--default", FEET, "--yes", "--detail", "full")
    assert undone.code == 0, undone.text
    assert "Apply: 2 created" in undone.out
    assert differences(before, stored(small)) == []


# --------------------------------------------------------------------------- no run


def test_undo_without_a_runs_folder_is_an_error_naming_it() -> None:
    done = run_cli(None, "undo", "--serial", "3254a9d0424c4806b9ea3d0763ccf1bf")
    assert done.code == 1, done.text
    assert "error: no runs folder estatebot-runs: nothing to undo" in done.err
    elsewhere = run_cli(None, "undo", "--serial", "x", "--runs-dir", "elsewhere")
    assert elsewhere.code == 1, elsewhere.text
    assert "no runs folder elsewhere" in elsewhere.err
    assert "Traceback" not in done.text + elsewhere.text
