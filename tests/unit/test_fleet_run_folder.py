"""A fleet run's folder and record, the executors a fleet runs on, and its views' safety."""

from __future__ import annotations

import concurrent.futures as cf
import json
import pickle
from pathlib import Path

import pytest

from estatebot.errors import ConfigurationError
from estatebot.fleet.executors import resolve
from estatebot.fleet.fleet_html import fleet_html
from estatebot.fleet.run_folder import FleetRun, FleetRunError, find_unfinished_fleet, latest_fleet


def _new(tmp_path: Path, kind: str = "sync", digest: str = "d1") -> FleetRun:
    return FleetRun.new(tmp_path / "runs", kind, tmp_path / "m.csv", digest)


def test_a_run_is_written_whole_and_read_back_as_it_was(tmp_path: Path) -> None:
    run = _new(tmp_path)
    folder = run.chatbot_folder(3, "abc")
    run.mark("applying")

    again = FleetRun.open(run.folder)

    assert folder == run.folder / "003-abc"
    assert folder.is_dir()
    assert again == run
    assert again.folder_of(3) == folder
    assert again.folder_of(4) is None
    assert not list(run.folder.glob(".fleet.json.*"))  # no temporary left beside it


def test_two_runs_started_in_one_second_get_folders_of_their_own(tmp_path: Path) -> None:
    first, second = _new(tmp_path), _new(tmp_path)
    assert first.folder != second.folder
    assert first.token != second.token


def test_only_an_applying_run_of_the_same_kind_and_manifest_is_unfinished(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    applied = _new(tmp_path)
    applied.mark("applied")
    other_manifest = _new(tmp_path, digest="d2")
    other_manifest.mark("applying")
    other_kind = _new(tmp_path, kind="cleanup")
    other_kind.mark("applying")
    assert find_unfinished_fleet(runs, "sync", "d1") is None

    left = _new(tmp_path)
    left.mark("applying")

    assert find_unfinished_fleet(runs, "sync", "d1") == left
    assert latest_fleet(runs, ("sync", "cleanup")) in (left, other_kind)


@pytest.mark.parametrize(
    "content", ["", "{", "[]", '{"kind": "sync"}', json.dumps({"kind": 1, "status": None})]
)
def test_a_damaged_record_is_named_never_guessed_at(tmp_path: Path, content: str) -> None:
    folder = tmp_path / "fleet-sync-x"
    folder.mkdir()
    (folder / "fleet.json").write_text(content, encoding="utf-8")
    with pytest.raises(FleetRunError, match=r"fleet\.json"):
        FleetRun.open(folder)
    assert find_unfinished_fleet(tmp_path, "sync", "d1") is None


def test_a_folder_that_is_no_fleet_run_says_so(tmp_path: Path) -> None:
    with pytest.raises(FleetRunError, match="is not a fleet run"):
        FleetRun.open(tmp_path)


def test_the_executor_is_told_apart_and_a_wrong_one_refused() -> None:
    own = resolve(None, workers=3)
    assert own.kind == "threads"
    assert own.owned
    own.close()
    with cf.ThreadPoolExecutor(2) as pool:
        assert resolve(pool).kind == "threads"
        assert not resolve(pool).owned
    with cf.ProcessPoolExecutor(1) as processes:
        workers = resolve(processes)
        assert workers.kind == "processes"
        assert workers.gate_for("http://x") is None
    with pytest.raises(ConfigurationError, match=r"concurrent\.futures\.Executor"):
        resolve(object())
    with pytest.raises(ConfigurationError, match="workers"):
        resolve(None, workers=0)


def test_one_service_gets_one_gate_that_no_process_can_copy() -> None:
    workers = resolve(None, max_in_flight=5)
    try:
        gate = workers.gate_for("http://a")
        assert workers.gate_for("http://a") is gate
        assert workers.gate_for("http://b") is not gate
        with pytest.raises(TypeError):
            pickle.dumps(gate)
    finally:
        workers.close()
    assert resolve(None, max_in_flight=0).gate_for("http://a") is None


def test_a_unit_error_is_raised_once_the_others_have_ended() -> None:
    workers = resolve(None, workers=2)
    ended: list[int] = []

    def work(n: int) -> int:
        if n == 1:
            raise RuntimeError("boom")
        return n

    with pytest.raises(RuntimeError, match="boom"):
        workers.map_unordered(work, [0, 1, 2, 3], done=ended.append)
    workers.close()
    assert sorted(ended) == [0, 2, 3]


def test_the_fleet_view_escapes_what_manifests_and_services_say() -> None:
    import pandas as pd

    table = pd.DataFrame(
        [{"chatbot": "<b>x</b>", "serial": "s", "update": 1, "error": "<script>1</script>"}]
    )
    page = fleet_html("t <i>", table, {"update": 1}, [("<b>x</b>", lambda: "<p>inner</p>")])
    assert "<script>" not in page
    assert "<b>x</b>" not in page
    assert "t <i>" not in page
    assert "&lt;script&gt;" in page
    assert page.count("<details id='eb-fleet-") == 1


def test_a_large_fleet_renders_only_the_details_a_person_can_open() -> None:
    import pandas as pd

    from estatebot.fleet.fleet_html import SHOWN_DETAILS

    made: list[int] = []

    def inner(place: int) -> str:
        made.append(place)
        return f"<p>plan {place}</p>"

    count = SHOWN_DETAILS + 10
    table = pd.DataFrame({"chatbot": [f"c{n}" for n in range(count)], "update": [1] * count})
    details = [(f"c{n}", lambda n=n: inner(n)) for n in range(count)]
    page = fleet_html("t", table, {"update": count}, details)

    assert made == list(range(SHOWN_DETAILS))
    assert page.count("<details id='eb-fleet-") == SHOWN_DETAILS
    assert page.count("href='#eb-fleet-") == SHOWN_DETAILS  # every link has its target
    assert f"The first {SHOWN_DETAILS} chatbots' details are shown" in page
