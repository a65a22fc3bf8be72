"""A fleet of chatbots on the emulator: planned, applied, killed mid-run, resumed, undone.

Every test runs the real emulator hosting a fleet (``running(chatbots=N)``), the sample writer's
shared MLS export and manifests, and the real fleet code: in this process (threads), through the
command line (a child process, killed with SIGKILL mid-run), and on a local Dask cluster of
worker processes with one worker killed during the apply.
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import estatebot as eb
from clirun import cli_env, run_cli, start_cli
from estatebot.emulator import EmulatorServer, running
from estatebot.fleet.run_folder import FleetRun
from estatebot.sample.fleet_sample import FleetSample, write_fleet_sample

CHATBOTS = 20
LISTINGS = 20
CHANGED = 0.1


@pytest.fixture
def fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[EmulatorServer, FleetSample]]:
    """A fresh emulator hosting the fleet, the sample's sheets and manifests, and the
    workspace's address and keys in this process's environment (the manifest names them)."""
    monkeypatch.chdir(tmp_path)
    with running(chatbots=CHATBOTS, listings_per_chatbot=LISTINGS, seed=None) as server:
        for name, value in (
            ("ESTATEBOT_BASE_URL", server.base_url),
            ("ESTATEBOT_API_KEY", server.api_key),
            ("ESTATEBOT_SESSION_KEY", server.session_key),
        ):
            monkeypatch.setenv(name, value)
        sample = write_fleet_sample(
            tmp_path / "sample", chatbots=CHATBOTS, listings_per_chatbot=LISTINGS, changed=CHANGED
        )
        yield server, sample


def _changed_total(sample: FleetSample) -> int:
    return sum(len(keys) for keys in sample.changed.values())


def _journal_done(folder: Path) -> Counter[str]:
    """How often each operation of every chatbot's journal in a fleet run was recorded done."""
    done: Counter[str] = Counter()
    for journal in folder.glob("*/journal.jsonl"):
        for line in journal.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            event = json.loads(line)
            if event.get("event") == "done":
                done[f"{journal.parent.name}/{event['op']}"] += 1
    return done


def _wait_for_done(child: Any, count: int) -> None:
    """Until the fleet run in ``runs/`` has journaled ``count`` operations done, or the
    command ``child`` has ended (at most a minute)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and child.poll() is None:
        runs = list(Path("runs").glob("fleet-sync-*"))
        if runs and sum(_journal_done(runs[0]).values()) >= count:
            return
        time.sleep(0.01)


def _in_step(sample: FleetSample) -> bool:
    return eb.plan_fleet(sample.manifest, progress=False).is_empty


def test_a_fleet_is_planned_as_one_table_applied_as_one_run_and_left_in_step(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    _server, sample = fleet
    plan = eb.plan_fleet(sample.manifest, progress=False)

    frame = plan.to_frame()
    assert len(frame) == CHATBOTS
    assert list(frame["serial"]) == sample.serials
    assert plan.counts()["update"] == _changed_total(sample) > 0
    assert (frame["error"] == "").all()
    assert plan.plan_of(sample.serials[3]).counts()["update"] == len(
        sample.changed[sample.serials[3]]
    )

    report = plan.apply(runs_dir="runs", progress=False)

    assert report.ok, report.to_frame()
    assert report.counts()["updated"] == _changed_total(sample)
    run = FleetRun.open(report.folder)
    assert run.status == "applied"
    for name in run.chatbots.values():
        folder = report.folder / name
        for file in ("plan.json", "journal.jsonl", "backup.json", "report.xlsx", "applied.json"):
            assert (folder / file).is_file(), folder / file
    assert (report.folder / "fleet.xlsx").is_file()
    assert (report.folder / "plan.xlsx").is_file()
    assert set(_journal_done(report.folder).values()) == {1}
    assert _in_step(sample)
    html = report._repr_html_()
    assert html.count("<details id='eb-fleet-") == CHATBOTS
    assert html.count("href='#eb-fleet-") == CHATBOTS


def test_the_rows_of_a_shared_sheet_and_a_sheet_each_plan_alike(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    _, sample = fleet
    shared = eb.plan_fleet(sample.manifest, progress=False)
    own = eb.plan_fleet(sample.manifest_own_sheets, progress=False)

    columns = ["serial", "create", "update", "delete", "unchanged", "invalid", "held back"]
    assert shared.to_frame()[columns].equals(own.to_frame()[columns])
    for serial in sample.serials[:3]:
        a, b = shared.plan_of(serial), own.plan_of(serial)
        assert [op.body for op in a.updates] == [op.body for op in b.updates]


def test_an_undo_of_a_fleet_run_puts_every_chatbot_back(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    server, sample = fleet
    before = {serial: _prices(server, serial) for serial in sample.serials}
    report = eb.plan_fleet(sample.manifest, progress=False).apply(runs_dir="runs", progress=False)
    assert report.ok
    assert not _in_step_with(server, before, sample)

    undo = eb.plan_fleet_undo(report.folder, progress=False)
    assert undo.counts()["update"] == _changed_total(sample)
    undone = undo.apply(runs_dir="runs", progress=False)

    assert undone.ok
    assert _in_step_with(server, before, sample)
    assert eb.plan_fleet_undo(report.folder, progress=False).is_empty  # twice does nothing


def _prices(server: EmulatorServer, serial: str) -> dict[str, Any]:
    with eb.Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    ) as client:
        frame = eb.pull_listings(client, serial, progress=False)
    return dict(zip(frame["MLSNumber"], frame["SalePrice"].astype("object"), strict=True))


def _in_step_with(
    server: EmulatorServer, before: dict[str, dict[str, Any]], sample: FleetSample
) -> bool:
    return all(_prices(server, serial) == before[serial] for serial in sample.serials)


def test_a_chatbot_that_cannot_be_planned_is_a_row_and_the_others_go_on(
    fleet: tuple[EmulatorServer, FleetSample], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, sample = fleet
    manifest = Path(sample.manifest)
    lines = manifest.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    lines[0] += ",api_key_env"
    lines[1:] = [
        line + ("," if n != 2 else ",OFFICE_7_API_KEY") for n, line in enumerate(lines[1:], 1)
    ]
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.delenv("OFFICE_7_API_KEY", raising=False)
    assert "serial" in header

    plan = eb.plan_fleet(manifest, progress=False)

    errors = plan.to_frame().set_index("serial")["error"]
    assert "OFFICE_7_API_KEY" in errors[sample.serials[1]]
    assert (errors.drop(sample.serials[1]) == "").all()
    done = run_cli(None, "fleet", "plan", str(manifest), env=cli_env(None, **_keys_env()))
    assert done.code == 4, done.text
    assert "OFFICE_7_API_KEY" in done.out


def _keys_env() -> dict[str, str]:
    return {
        name: os.environ[name]
        for name in ("ESTATEBOT_BASE_URL", "ESTATEBOT_API_KEY", "ESTATEBOT_SESSION_KEY")
    }


def test_the_command_line_shows_one_table_and_exits_by_the_fleet(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    _, sample = fleet
    env = cli_env(None, **_keys_env())
    planned = run_cli(None, "fleet", "plan", str(sample.manifest), "--detailed-exitcode", env=env)
    assert planned.code == 2, planned.text
    assert planned.out.count("Agent 0") >= CHATBOTS
    assert f"{_changed_total(sample)} update" in planned.out

    not_asked = run_cli(None, "fleet", "sync", str(sample.manifest), "--runs-dir", "runs", env=env)
    assert not_asked.code == 5, not_asked.text
    assert "pass --yes" in not_asked.out

    synced = run_cli(
        None, "fleet", "sync", str(sample.manifest), "--yes", "--runs-dir", "runs",
        "--detailed-exitcode", env=env,
    )  # fmt: skip
    assert synced.code == 2, synced.text
    assert f"{_changed_total(sample)} updated" in synced.out
    assert "estatebot fleet undo" in synced.out

    again = run_cli(None, "fleet", "sync", str(sample.manifest), "--yes", "--runs-dir", "runs",
                    "--detailed-exitcode", env=env)  # fmt: skip
    assert again.code == 0, again.text
    assert "every chatbot is in step" in again.out

    undone = run_cli(None, "fleet", "undo", "--yes", "--runs-dir", "runs", env=env)
    assert undone.code == 0, undone.text
    assert f"{_changed_total(sample)} updated" in undone.out


def test_a_bad_manifest_row_is_named_and_left_out(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    _, sample = fleet
    manifest = Path(sample.manifest)
    lines = manifest.read_text(encoding="utf-8").splitlines()
    lines.append(lines[1].replace("A001", "A999").replace(sample.serials[0], "not a serial"))
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")

    done = run_cli(None, "fleet", "plan", str(manifest), env=cli_env(None, **_keys_env()))

    assert done.code == 0, done.text
    assert f"row {len(lines)}" in done.out
    assert "serial" in done.out
    assert f"{CHATBOTS} chatbots" in done.out


def test_a_killed_fleet_sync_resumes_with_nothing_sent_twice(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    server, sample = fleet
    server.faults.latency_ms = 60
    server.faults.only = {"RealEstateUpdate"}
    args = ("fleet", "sync", str(sample.manifest), "--yes", "--runs-dir", "runs", "--workers", "3")
    child = start_cli(server, *args)
    try:
        _wait_for_done(child, 8)
        assert child.poll() is None, child.communicate()
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    time.sleep(0.2)  # requests in flight when it died reach the store
    (folder,) = Path("runs").glob("fleet-sync-*")
    assert FleetRun.open(folder).status == "applying"
    done_before = sum(_journal_done(folder).values())
    assert 8 <= done_before < _changed_total(sample)
    sent_before = server.request_counts["RealEstateUpdate"]
    server.faults.clear()

    resumed = run_cli(server, *args)

    assert resumed.code == 0, resumed.text
    assert "Resuming the fleet sync" in resumed.out
    assert FleetRun.open(folder).status == "applied"
    done = _journal_done(folder)
    assert sum(done.values()) == _changed_total(sample)
    assert set(done.values()) == {1}
    # Only what was not done is sent again (a request cut by the kill may be settled by a read).
    assert (
        server.request_counts["RealEstateUpdate"] - sent_before
        <= _changed_total(sample) - done_before + 3
    )
    assert _in_step(sample)


def test_a_429_storm_on_one_chatbot_holds_off_the_whole_fleet(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    server, sample = fleet
    stormy = sample.serials[0]
    server.faults.rate_limit = (2, 1.0)
    server.faults.only_chatbots = frozenset({stormy})
    plan = eb.plan_fleet(sample.manifest, progress=False, max_in_flight=0)

    report = plan.apply(runs_dir="runs", progress=False, max_in_flight=8)

    assert report.ok, report.to_frame()
    assert any("asked the fleet to slow down" in note for note in report.notes), report.notes
    assert _in_step(sample)


def test_a_fleet_on_a_dask_cluster_survives_a_killed_worker(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    distributed = pytest.importorskip("distributed")
    server, sample = fleet
    server.faults.latency_ms = 60
    server.faults.only = {"RealEstateUpdate"}
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=2,
            silence_logs=50, dashboard_address=":0",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):  # fmt: skip
        plan = eb.plan_fleet(sample.manifest, executor=client, progress=False)
        assert plan.counts()["update"] == _changed_total(sample)
        if sys.version_info < (3, 12):  # the profiler that can deadlock a worker is stopped

            def profiler_running(dask_worker: Any) -> bool:  # sent by value: a local function
                callback = dask_worker.periodic_callbacks.get("profile")
                return bool(callback is not None and callback.is_running())

            running = client.run(profiler_running)
            assert running
            assert not any(running.values()), running
        pids = client.run(os.getpid)
        outcome: dict[str, Any] = {}

        def apply() -> None:
            try:
                outcome["report"] = plan.apply(
                    runs_dir="runs", executor=client, progress=False, max_in_flight=4
                )
            except BaseException as error:
                outcome["error"] = error

        worker = threading.Thread(target=apply)
        worker.start()
        victim, cut = _worker_mid_apply(set(pids.values()))
        os.kill(victim, signal.SIGKILL)
        worker.join(timeout=120)

    assert not worker.is_alive()
    assert "error" not in outcome, outcome.get("error")
    report = outcome["report"]
    (folder,) = Path("runs").glob("fleet-sync-*")
    # The chatbot cut mid-apply was finished by another worker from its journal.
    finished = json.loads((cut / "applied.json").read_text(encoding="utf-8"))
    victim_address = next(address for address, pid in pids.items() if pid == victim)
    assert finished["ok"]
    assert finished["worker"] not in ("", victim_address)
    done = _journal_done(folder)
    assert sum(done.values()) == _changed_total(sample)
    assert set(done.values()) == {1}
    # Sent again at most what was in flight on the killed worker (2 chatbots x 4 threads).
    assert server.request_counts["RealEstateUpdate"] <= _changed_total(sample) + 8
    assert _in_step(sample)
    assert report.counts()["chatbots"] == CHATBOTS


def _worker_mid_apply(worker_pids: set[int]) -> tuple[int, Path]:
    """A Dask worker's process holding a chatbot's journal with some of its operations done
    and others not (its lock's holder note names the process), and that chatbot's folder."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for note in Path("runs").glob("fleet-sync-*/*/.journal.jsonl.holder.json"):
            try:
                pid = int(json.loads(note.read_text(encoding="utf-8"))["pid"])
            except (OSError, ValueError, KeyError):
                continue  # being written
            folder = note.parent
            if pid in worker_pids and sum(_journal_done(folder.parent).values()) >= 1:
                done_here = [k for k in _journal_done(folder.parent) if k.startswith(folder.name)]
                if done_here and not (folder / "applied.json").exists():
                    return pid, folder
        time.sleep(0.005)
    raise AssertionError("no worker was seen mid-apply")


def test_a_worker_that_cannot_reach_the_run_folder_stops_the_run_before_any_write(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    from estatebot.fleet.fleet_plan import run_fleet

    server, sample = fleet
    plan = eb.plan_fleet(sample.manifest, progress=False)
    run = FleetRun.new("runs", "sync", plan.manifest.path, plan.manifest.digest)
    plan.seal(run)
    # Another run's record where this one's should be: what a worker on another machine, whose
    # same path is another folder, would read.
    record = json.loads(run.record_path.read_text(encoding="utf-8"))
    run.record_path.write_text(json.dumps({**record, "token": "another"}), encoding="utf-8")
    writes = server.request_counts["RealEstateUpdate"]

    with cf.ProcessPoolExecutor(2) as processes, pytest.raises(Exception, match="run folder"):
        run_fleet(run, plan.manifest, executor=processes, progress=False)

    assert server.request_counts["RealEstateUpdate"] == writes
    assert not list(run.folder.glob("*/journal.jsonl"))


def test_a_spreadsheet_manifest_and_a_toml_one_plan_as_the_csv_does(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    import openpyxl

    _, sample = fleet
    rows = [line.split(",") for line in sample.manifest.read_text(encoding="utf-8").splitlines()]
    book = openpyxl.Workbook()
    for row in rows:
        book.active.append(row)
    book.save(sample.folder / "manifest.xlsx")
    toml = ['[defaults]\nsheet = "mls_export.xlsx"\ndelete_missing = true\n']
    for serial, name, _, where, *_ in rows[1:]:
        toml.append(f'[[chatbot]]\nserial = "{serial}"\nname = "{name}"\nwhere = "{where}"\n')
    (sample.folder / "manifest.toml").write_text("\n".join(toml), encoding="utf-8")

    frames = [
        eb.plan_fleet(sample.folder / name, progress=False).to_frame().drop(columns=["row"])
        for name in ("manifest.csv", "manifest.xlsx", "manifest.toml")
    ]

    assert frames[0].equals(frames[1])
    assert frames[0].equals(frames[2])


def test_a_fleet_cleanup_deletes_by_one_rule_and_tests_every_chatbot(
    fleet: tuple[EmulatorServer, FleetSample], tmp_path: Path
) -> None:
    _server, sample = fleet
    env = cli_env(None, **_keys_env())
    with eb.Client() as client:  # the service the environment names
        long_listed = sum(
            int((eb.pull_listings(client, serial, progress=False)["DaysOnMarket"] >= 90).sum())
            for serial in sample.serials
        )
    assert long_listed > 0

    planned = run_cli(
        None, "fleet", "cleanup", str(sample.manifest), "--min-days-on-market", "90",
        "--runs-dir", "runs", env=env,
    )  # fmt: skip
    assert planned.code == 5, planned.text  # asked, with no terminal: nothing applied
    done = run_cli(
        None, "fleet", "cleanup", str(sample.manifest), "--min-days-on-market", "90",
        "--runs-dir", "runs", "--yes", "--max-delete-fraction", "1", env=env,
    )  # fmt: skip
    assert done.code == 0, done.text
    assert f"{long_listed} deleted" in done.out

    tested = run_cli(
        None, "fleet", "test-chat", str(sample.manifest), str(sample.chat_tests), "--out-dir",
        str(tmp_path / "chat"), env=env,
    )  # fmt: skip
    assert tested.code == 0, tested.text
    assert f"{2 * CHATBOTS} of {2 * CHATBOTS} cases passed" in tested.out
    assert len(list((tmp_path / "chat").glob("*.xlsx"))) == CHATBOTS + 1


def test_the_command_line_plans_on_a_dask_scheduler_named_by_address(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    distributed = pytest.importorskip("distributed")
    _, sample = fleet
    with distributed.LocalCluster(
        n_workers=1, processes=True, threads_per_worker=2, dashboard_address=":0",
        silence_logs=50,
    ) as cluster:  # fmt: skip
        done = run_cli(
            None, "fleet", "plan", str(sample.manifest), "--dask", cluster.scheduler_address,
            env=cli_env(None, **_keys_env()),
        )  # fmt: skip
    assert done.code == 0, done.text
    assert f"{_changed_total(sample)} update" in done.out
    refused = run_cli(
        None, "fleet", "plan", str(sample.manifest), "--dask", "tcp://127.0.0.1:9",
        env=cli_env(None, **_keys_env()),
    )  # fmt: skip
    assert refused.code == 1, refused.text
    assert "no Dask scheduler answers" in refused.err


def test_resume_fleet_finishes_what_an_interrupted_run_left(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    from estatebot.fleet.chatbot_work import ApplyJob, apply_chatbot

    _, sample = fleet
    plan = eb.plan_fleet(sample.manifest, progress=False)
    run = FleetRun.new("runs", "sync", plan.manifest.path, plan.manifest.digest)
    plan.seal(run)
    run.mark("applying")
    # Three chatbots applied before the interruption; the others not begun.
    for key in sorted(run.chatbots, key=int)[:3]:
        entry = plan.manifest.entries[int(key)]
        assert apply_chatbot(ApplyJob(entry, run.folder / run.chatbots[key])).ok

    report = eb.resume_fleet(run.folder, progress=False)

    assert report.ok
    assert FleetRun.open(run.folder).status == "applied"
    assert report.counts()["updated"] == _changed_total(sample)
    assert sum(1 for result in report.chatbots if result.recorded_counts is not None) == 3
    assert set(_journal_done(run.folder).values()) == {1}
    assert _in_step(sample)
    # A changed manifest cannot be matched to the run's folders: refused, nothing sent.
    sample.manifest.write_text(sample.manifest.read_text() + "\n", encoding="utf-8")
    with pytest.raises(eb.EstatebotError, match="changed since"):
        eb.resume_fleet(run.folder, progress=False)


def test_the_whole_fleet_keeps_under_its_cap_of_requests_in_flight(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    server, sample = fleet
    server.faults.latency_ms = 20  # long enough for requests to overlap
    server.emulator.reset_peak()

    plan = eb.plan_fleet(sample.manifest, progress=False, workers=8, max_in_flight=3)
    report = plan.apply(runs_dir="runs", progress=False, workers=8, max_in_flight=3)

    assert report.ok
    assert 2 <= server.emulator.peak_in_flight <= 3


def test_a_fleet_runs_on_any_executor_of_processes(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    _, sample = fleet
    with cf.ProcessPoolExecutor(2) as processes:
        plan = eb.plan_fleet(sample.manifest, executor=processes, progress=False)
        report = plan.apply(runs_dir="runs", executor=processes, progress=False)

    assert plan.counts()["update"] == _changed_total(sample)
    assert report.ok
    assert report.counts()["updated"] == _changed_total(sample)
    assert not any("slow down" in note for note in report.notes)  # no gate across processes
    assert _in_step(sample)


def test_ctrl_c_during_a_fleet_sync_exits_130_and_the_same_command_resumes(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    server, sample = fleet
    server.faults.latency_ms = 60
    server.faults.only = {"RealEstateUpdate"}
    args = ("fleet", "sync", str(sample.manifest), "--yes", "--runs-dir", "runs", "--workers", "2")
    child = start_cli(server, *args)
    try:
        _wait_for_done(child, 4)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, out
    assert "Interrupted: the fleet run" in out
    (folder,) = Path("runs").glob("fleet-sync-*")
    assert FleetRun.open(folder).status == "applying"
    server.faults.clear()

    resumed = run_cli(server, *args)

    assert resumed.code == 0, resumed.text
    assert "Resuming the fleet sync" in resumed.out
    assert set(_journal_done(folder).values()) == {1}
    assert _in_step(sample)


def test_a_filter_naming_no_column_of_the_shared_sheet_is_that_chatbots_error(
    fleet: tuple[EmulatorServer, FleetSample],
) -> None:
    _, sample = fleet
    manifest = Path(sample.manifest)
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(text.replace("ListAgentMlsId = A002", "ListAgentId = A002"), "utf-8")

    plan = eb.plan_fleet(manifest, progress=False)

    errors = plan.to_frame().set_index("serial")["error"]
    assert "ListAgentId" in errors[sample.serials[1]]
    assert "ListAgentMlsId" in errors[sample.serials[1]]  # the closest header is suggested
    assert (errors.drop(sample.serials[1]) == "").all()
    left_out = len(sample.changed[sample.serials[1]])
    assert plan.counts()["update"] == _changed_total(sample) - left_out
