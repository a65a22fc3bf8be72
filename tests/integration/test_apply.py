"""apply_plan and restore against the real emulator over loopback.

Plans are made with ``plan_sync`` from a modified copy of the pulled listings; afterwards the
listings are pulled again and compared with what the plan meant, field by field (the fields the
service returns).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl import load_workbook

from estatebot.api.client import Client
from estatebot.emulator import EmulatorServer, running
from estatebot.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.remote.pull import pull_listings
from estatebot.listings.sync.apply.backup import read_backup
from estatebot.listings.sync.apply.journal_records import read_journal
from estatebot.listings.sync.apply.phases import apply_plan
from estatebot.listings.sync.apply.restore import restore
from estatebot.listings.sync.apply.stale_check import ROUND_TRIP_FIELDS
from estatebot.listings.sync.sync_plan import SyncPlan, plan_sync
from estatebot.listings.sync.values.compare import canonical_value
from factories import make_listings

WRITES = ("RealEstateCreate", "RealEstateUpdate", "RealEstateDelete")
ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- helpers


def client_for(server: EmulatorServer, **options: Any) -> Client:
    return Client(
        base_url=server.base_url,
        api_key=server.api_key,
        session_key=server.session_key,
        **options,
    )


@pytest.fixture(autouse=True)
def _work_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A run without a backup path writes its backup in the current folder: keep it in tmp.
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with running(seed=None) as emulator:
        emulator.add_listings(emulator.serial, make_listings(12))
        yield emulator


@pytest.fixture
def client(server: EmulatorServer) -> Iterator[Client]:
    with client_for(server) as c:
        yield c


def pull(client: Client, server: EmulatorServer) -> pd.DataFrame:
    return pull_listings(client, server.serial, progress=False)


def snapshot(frame: pd.DataFrame) -> dict[str, tuple[Any, ...]]:
    """Listings by MLS number, as the canonical values of the fields the service returns."""
    out: dict[str, tuple[Any, ...]] = {}
    for record in schema.conform(frame).to_dict("records"):
        values = tuple(canonical_value(c, record[c]) for c in ROUND_TRIP_FIELDS)
        out[str(record["MLSNumber"])] = values
    return out


def desired_from(
    remote: pd.DataFrame,
    *,
    prices: dict[str, float] | None = None,
    drop: Sequence[str] = (),
    new: int = 0,
) -> pd.DataFrame:
    """The remote listings as a sheet: new sale prices for some, some dropped, ``new`` added.

    AreaUnit is never returned by the service, so a sheet must give it for the rows it sends.
    """
    sheet = remote.drop(columns=["ID"]).reset_index(drop=True)
    for mls, price in (prices or {}).items():
        at = sheet.index[sheet["MLSNumber"] == mls]
        sheet.loc[at, "SalePrice"] = price
        sheet.loc[at, "AreaUnit"] = "Square Feet"
    sheet = sheet[~sheet["MLSNumber"].isin(list(drop))]
    if new:
        bodies = make_listings(new, seed=99, prefix="N")
        for body in bodies:
            body["ExtensionColumn"] = {i["Key"]: i["value"] for i in body["ExtensionColumn"]}
        sheet = pd.concat([sheet, schema.conform(pd.DataFrame(bodies))], ignore_index=True)
    return sheet.reset_index(drop=True)


def writes(server: EmulatorServer) -> dict[str, int]:
    return {name: server.request_counts[name] for name in WRITES}


def on_sale(remote: pd.DataFrame, count: int) -> list[str]:
    """MLS numbers of the first ``count`` listings for sale (their price is SalePrice)."""
    return [str(m) for m in remote.loc[remote["SaleType"] == "for_sale", "MLSNumber"][:count]]


# --------------------------------------------------------------------------- end to end


def test_apply_does_exactly_the_plan(
    server: EmulatorServer, client: Client, tmp_path: Path
) -> None:
    remote = pull(client, server)
    changed = on_sale(remote, 2)
    gone = on_sale(remote, 3)[2]
    desired = desired_from(remote, prices={m: 777_000.0 for m in changed}, drop=[gone], new=1)
    plan = plan_sync(desired, remote, delete_missing=True)
    assert plan.counts()["create"] == 1
    assert plan.counts()["update"] == 2
    assert plan.counts()["delete"] == 1
    before = writes(server)

    report = apply_plan(plan, client, server.serial, backup=tmp_path / "b.json", progress=False)

    assert report.ok
    assert report.summary() == "1 created, 2 updated, 1 deleted, 9 unchanged"
    assert list(report.frame.columns) == [
        "action",
        "key",
        "row",
        "id",
        "outcome",
        "code",
        "message",
        "attempts",
        "elapsed_ms",
    ]
    created = report.frame[report.frame["action"] == "create"]
    assert created["id"].notna().all()
    sent = {name: writes(server)[name] - before[name] for name in WRITES}
    assert sent == {"RealEstateCreate": 1, "RealEstateUpdate": 2, "RealEstateDelete": 1}

    after = pull(client, server)
    assert snapshot(after) == snapshot(desired)
    assert int(created["id"].iloc[0]) in set(after["ID"].tolist())


def test_an_empty_plan_sends_nothing(server: EmulatorServer, client: Client) -> None:
    remote = pull(client, server)
    plan = plan_sync(desired_from(remote), remote)
    before = dict(server.request_counts)
    report = apply_plan(plan, client, server.serial, progress=False)
    assert report.ok
    assert report.summary() == "12 unchanged"
    assert report.backup_path is None
    assert dict(server.request_counts) == before  # not even a pull


@settings(max_examples=6, deadline=None)
@given(concurrency=st.integers(1, 16))
def test_the_pull_that_checks_the_plan_keeps_to_the_apply_s_concurrency(concurrency: int) -> None:
    # 30 pages of listings, each List request held 40 ms: a pull at the library's default of 8
    # threads would have 8 pages in flight, whatever the apply was told.
    with (
        running(seed=None) as server,
        client_for(server) as client,
        tempfile.TemporaryDirectory() as folder,
    ):
        server.add_listings(server.serial, make_listings(3000))
        remote = pull(client, server)
        plan = plan_sync(desired_from(remote, prices={on_sale(remote, 1)[0]: 1.0}), remote)
        server.faults.only = {"RealEstateList"}
        server.faults.latency_ms = 40
        server.emulator.reset_peak()
        report = apply_plan(
            plan, client, server.serial, concurrency=concurrency, progress=False,
            backup=Path(folder) / "b.json",
        )  # fmt: skip
        assert report.ok
        assert server.request_counts["RealEstateList"] >= 2 * 30  # the two pulls' pages
        # Every page of the check's pull waits out its latency beside the others, up to the
        # limit and never past it.
        assert server.emulator.peak_in_flight == concurrency


# --------------------------------------------------------------------------- stale plans


def test_a_stale_plan_is_refused_and_force_goes_on(
    server: EmulatorServer, client: Client, tmp_path: Path
) -> None:
    remote = pull(client, server)
    first, second = on_sale(remote, 2)
    plan = plan_sync(desired_from(remote, prices={first: 1.0, second: 2.0}, new=1), remote)
    # Someone changes a listing, and creates the new one, between plan and apply.
    changed = next(op.body for op in plan.updates if op.key == first)
    assert changed is not None
    client.listings.update({**changed, "SerialNumber": server.serial, "SalePrice": 5.0})
    new_body = next(op.body for op in plan.creates)
    assert new_body is not None
    server.add_listings(server.serial, [new_body])
    before = writes(server)
    journal = tmp_path / "j.jsonl"

    with pytest.raises(PlanError) as caught:
        apply_plan(plan, client, server.serial, journal=journal, progress=False)
    message = str(caught.value)
    assert "stale" in message
    assert first in message
    assert "N000000" in message
    assert second not in message
    assert writes(server) == before
    assert not journal.exists()
    assert not list(tmp_path.glob("estatebot-backup-*"))

    report = apply_plan(
        plan,
        client,
        server.serial,
        journal=journal,
        backup=tmp_path / "b.json",
        force=True,
        progress=False,
    )
    assert "force=True" in report.notes[0]
    outcomes = dict(zip(report.frame["key"], report.frame["outcome"], strict=True))
    assert outcomes[first] == "done"
    assert outcomes[second] == "done"
    assert outcomes["N000000"] == "failed"  # 409: it exists now
    failed = report.failures
    assert list(failed["code"]) == [409]
    after = pull(client, server).set_index("MLSNumber")
    assert after.loc[first, "SalePrice"] == 1.0


def test_forced_deletes_in_chunks_note_what_the_service_counted(
    server: EmulatorServer, client: Client
) -> None:
    remote = pull(client, server)
    doomed = [str(m) for m in remote["MLSNumber"][:5]]
    plan = plan_sync(
        desired_from(remote, drop=doomed), remote, delete_missing=True, max_delete_fraction=0.5
    )
    client.listings.delete(server.serial, [plan.deletes[0].key])
    before = writes(server)

    report = apply_plan(plan, client, server.serial, force=True, delete_chunk=2, progress=False)

    assert report.backup_path is not None
    assert report.backup_path.parent == Path.cwd()
    assert writes(server)["RealEstateDelete"] - before["RealEstateDelete"] == 3
    assert report.summary() == "5 deleted, 7 unchanged"
    notes = report.frame.loc[report.frame["key"] == plan.deletes[0].key, "message"].iloc[0]
    assert "reported 1 of the 2" in notes
    assert set(pull(client, server)["MLSNumber"]) == set(remote["MLSNumber"]) - set(doomed)


def test_a_failed_row_is_reported_and_the_rest_go_on(
    server: EmulatorServer, client: Client, tmp_path: Path
) -> None:
    remote = pull(client, server)
    first, second = on_sale(remote, 2)
    plan = plan_sync(desired_from(remote, prices={first: 10.0, second: 20.0}), remote)
    client.listings.delete(server.serial, [first])  # gone: the update will match nothing

    report = apply_plan(plan, client, server.serial, force=True, progress=False)

    assert not report.ok
    assert report.summary() == "1 updated, 10 unchanged, 1 failed"
    assert list(report.failures["key"]) == [first]
    assert "nothing updated" in report.failures["message"].iloc[0]
    assert f"failed update {first}" in str(report)

    path = report.to_excel(tmp_path / "report.xlsx")
    sheet = load_workbook(path).active
    assert sheet is not None
    fills = {
        sheet.cell(row=r, column=2).value: sheet.cell(row=r, column=1).fill.fgColor.rgb
        for r in range(2, sheet.max_row + 1)
    }
    assert str(fills[first]).endswith("FFC7CE")
    assert not str(fills[second]).endswith("FFC7CE")

    html = report._repr_html_()
    assert html.index(first) < html.index(second)  # the failure first
    assert "#ffc7ce" not in html  # no fixed light fill: the theme's colours
    assert server.api_key not in html
    assert server.api_key not in str(report)
    assert server.session_key not in report.frame.to_string()


# --------------------------------------------------------------------------- backup and restore


@pytest.mark.parametrize("suffix", [".xlsx", ".json"])
def test_backup_then_restore_brings_listings_back(
    server: EmulatorServer, client: Client, tmp_path: Path, suffix: str
) -> None:
    remote = pull(client, server)
    changed, gone = on_sale(remote, 2)
    plan = plan_sync(
        desired_from(remote, prices={changed: 1.0}, drop=[gone]), remote, delete_missing=True
    )
    path = tmp_path / f"backup{suffix}"

    report = apply_plan(plan, client, server.serial, backup=path, progress=False)

    assert report.backup_path == path
    saved = read_backup(path)
    assert sorted(saved["MLSNumber"]) == sorted([changed, gone])
    assert list(saved.columns) == list(schema.COLUMNS)
    original = snapshot(remote)
    assert snapshot(saved) == {k: original[k] for k in (changed, gone)}
    assert snapshot(pull(client, server)) != original

    # The deleted listing was never sent by estatebot: List never shows its unit, and a restore
    # never guesses one; the user gives it (the emulator's listings are in square feet).
    unknown = restore(path, client, server.serial, progress=False)
    assert unknown.summary() == "1 updated, 1 failed"
    assert "AreaUnit is unknown" in unknown.failures["message"].iloc[0]
    restored = restore(
        path, client, server.serial, progress=False, defaults={"AreaUnit": "Square Feet"}
    )

    assert restored.ok
    assert restored.summary() == "1 created, 1 unchanged"
    assert snapshot(pull(client, server)) == original


def test_a_backup_is_written_even_when_not_asked(
    server: EmulatorServer, client: Client, tmp_path: Path
) -> None:
    remote = pull(client, server)
    (changed,) = on_sale(remote, 1)
    plan = plan_sync(desired_from(remote, prices={changed: 3.0}), remote)
    report = apply_plan(plan, client, server.serial, journal=tmp_path / "j.jsonl", progress=False)
    assert report.backup_path is not None
    assert report.backup_path.parent == tmp_path
    assert report.backup_path.name.startswith("estatebot-backup-")
    assert str(report.backup_path) in report.notes[0]
    assert str(report.backup_path) in str(report)
    assert list(read_backup(report.backup_path)["MLSNumber"]) == [changed]


def test_restore_leaves_listings_that_already_match_alone(
    server: EmulatorServer, client: Client, tmp_path: Path
) -> None:
    remote = pull(client, server)
    (changed,) = on_sale(remote, 1)
    plan = plan_sync(desired_from(remote, prices={changed: 3.0}), remote)
    apply_plan(plan, client, server.serial, backup=tmp_path / "b.json", progress=False)
    restore(tmp_path / "b.json", client, server.serial, progress=False)
    before = writes(server)
    again = restore(tmp_path / "b.json", client, server.serial, progress=False)
    assert again.summary() == "1 unchanged"
    assert writes(server) == before


# --------------------------------------------------------------------------- journal and resume


def journal_events(path: Path) -> list[dict[str, Any]]:
    return read_journal(path).events


def test_resume_after_failures_finishes_without_doing_anything_twice(
    tmp_path: Path,
) -> None:
    with running(seed=None) as server, client_for(server, max_retries=0) as client:
        server.add_listings(server.serial, make_listings(60))
        remote = pull(client, server)
        keys = on_sale(remote, 40)
        desired = desired_from(remote, prices={k: 1000.0 + i for i, k in enumerate(keys)})
        plan = plan_sync(desired, remote)
        assert len(plan.updates) == 40
        journal = tmp_path / "sync.journal"
        server.faults.fail_rate = 0.3
        server.faults.only = {"RealEstateUpdate"}

        first = apply_plan(plan, client, server.serial, journal=journal, progress=False)

        failed = len(first.failures)
        assert 0 < failed < 40
        assert set(first.failures["code"]) == {500}
        assert (first.frame["outcome"] == "done").sum() == 40 - failed

        server.faults.clear()
        second = apply_plan(plan, client, server.serial, journal=journal, progress=False)

        assert second.ok
        outcomes = Counter(second.frame.loc[second.frame["action"] == "update", "outcome"])
        assert outcomes == {"skipped (already done)": 40 - failed, "done": failed}
        retried = second.frame[second.frame["outcome"] == "done"]
        assert set(retried["attempts"]) == {2}

        events = journal_events(journal)
        done = Counter(e["op"] for e in events if e["event"] == "done")
        assert done == {f"update:{k}": 1 for k in keys}
        failures = sum(1 for e in events if e["event"] == "failed")
        # Every Update request either failed (and is journaled as such) or succeeded once.
        assert server.request_counts["RealEstateUpdate"] - failures == 40
        assert snapshot(pull(client, server)) == snapshot(desired)


def test_unconfirmed_operations_are_settled_from_the_service(
    server: EmulatorServer, client: Client, tmp_path: Path
) -> None:
    remote = pull(client, server)
    changed, other, gone = on_sale(remote, 3)
    desired = desired_from(remote, prices={changed: 11.0, other: 12.0}, drop=[gone], new=1)
    plan = plan_sync(desired, remote, delete_missing=True)
    journal = tmp_path / "j.jsonl"
    apply_plan(plan, client, server.serial, journal=journal, progress=False)
    # As if killed after sending but before hearing back: drop some "done" lines.
    unconfirmed = {"create:N000000", f"update:{changed}", f"delete:{gone}"}
    kept = [
        line
        for line in journal.read_text(encoding="utf-8").splitlines()
        if not (json.loads(line).get("event") == "done" and json.loads(line)["op"] in unconfirmed)
    ]
    journal.write_text("\n".join(kept) + "\n", encoding="utf-8")
    before = writes(server)

    report = apply_plan(plan, client, server.serial, journal=journal, progress=False)

    assert writes(server) == before  # each was found done on the service: nothing re-sent
    assert report.ok
    by_key = report.frame.set_index("key")
    for key in ("N000000", changed, gone):
        assert by_key.loc[key, "outcome"] == "done"
        assert "found applied" in by_key.loc[key, "message"]
    assert by_key.loc[other, "outcome"] == "skipped (already done)"
    assert pd.notna(by_key.loc["N000000", "id"])
    done = Counter(e["op"] for e in journal_events(journal) if e["event"] == "done")
    assert set(done.values()) == {1}
    assert len(done) == 4


def test_a_journal_of_another_plan_is_refused(
    server: EmulatorServer, client: Client, tmp_path: Path
) -> None:
    remote = pull(client, server)
    first, second = on_sale(remote, 2)
    plan_a = plan_sync(desired_from(remote, prices={first: 1.0}), remote)
    plan_b = plan_sync(desired_from(remote, prices={second: 2.0}), remote)  # same listings
    journal = tmp_path / "j.jsonl"
    apply_plan(plan_a, client, server.serial, journal=journal, progress=False)
    before = dict(server.request_counts)

    with pytest.raises(PlanError, match="another plan"):
        apply_plan(plan_b, client, server.serial, journal=journal, progress=False)
    fresh = pull(client, server)
    plan_c = plan_sync(desired_from(fresh, prices={second: 2.0}), fresh)
    with pytest.raises(PlanError, match="another plan"):
        apply_plan(plan_c, client, server.serial, journal=journal, progress=False)
    with pytest.raises(PlanError, match="belongs to chatbot"):
        apply_plan(plan_a, client, "0" * 32, journal=journal, progress=False)
    assert writes(server) == {name: before.get(name, 0) for name in WRITES}


# --------------------------------------------------------------------------- kill and resume

_CHILD = """
import sys
from estatebot.api.client import Client
from estatebot.listings.sync.apply.phases import apply_plan
from estatebot.listings.sync.sync_plan import SyncPlan

plan_path, serial, journal, backup = sys.argv[1:5]
with Client(max_retries=0) as client:
    apply_plan(SyncPlan.load(plan_path), client, serial, journal=journal, backup=backup,
               concurrency=2, progress=False)
"""


def test_a_killed_apply_resumes_with_nothing_lost_or_doubled(tmp_path: Path) -> None:
    with running(seed=None) as server, client_for(server) as client:
        server.add_listings(server.serial, make_listings(60))
        remote = pull(client, server)
        keys = on_sale(remote, 40)
        desired = desired_from(remote, prices={k: 5000.0 + i for i, k in enumerate(keys)})
        plan = plan_sync(desired, remote)
        plan_path = plan.save(tmp_path / "plan.json")
        journal = tmp_path / "sync.journal"
        server.faults.latency_ms = 40
        server.faults.only = {"RealEstateUpdate"}
        env = {
            **os.environ,
            "ESTATEBOT_BASE_URL": server.base_url,
            "ESTATEBOT_API_KEY": server.api_key,
            "ESTATEBOT_SESSION_KEY": server.session_key,
        }
        args = [str(plan_path), server.serial, str(journal), str(tmp_path / "b.json")]
        child = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "python"), "-c", _CHILD, *args],
            env=env,
            cwd=tmp_path,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and child.poll() is None:
                if journal.exists() and journal.read_text().count('"event": "done"') >= 10:
                    break
                time.sleep(0.01)
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        # Let requests that were in flight when the child died reach the store.
        time.sleep(0.2)
        done_before = {e["op"] for e in journal_events(journal) if e["event"] == "done"}
        assert 10 <= len(done_before) < 40
        counted = server.request_counts["RealEstateUpdate"]
        server.faults.clear()

        report = apply_plan(
            SyncPlan.load(plan_path), client, server.serial, journal=journal, progress=False
        )

        assert report.ok
        frame = report.frame[report.frame["action"] == "update"]
        skipped = set(frame.loc[frame["outcome"] == "skipped (already done)", "key"])
        assert {f"update:{k}" for k in skipped} == done_before
        resent = frame[(frame["outcome"] == "done") & ~frame["message"].str.contains("found")]
        assert server.request_counts["RealEstateUpdate"] - counted == len(resent)
        events = journal_events(journal)
        done = Counter(e["op"] for e in events if e["event"] == "done")
        assert done == {f"update:{k}": 1 for k in keys}
        assert snapshot(pull(client, server)) == snapshot(desired)
