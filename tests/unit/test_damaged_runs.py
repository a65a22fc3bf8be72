"""A damaged run folder is named in one line, with the ways on, and never blocks unsaid.

An interrupted run whose ``plan.json`` is missing, cut short or nested
deep stopped every later ``sync`` with ``[Errno 2] No such file ...``, ``Unterminated string
starting at: line 35 column 5`` (no file named) or ``unexpected RecursionError (a bug)``. Each
damage of each file of a run folder (``plan.json``, ``run.json``, ``journal.jsonl``,
``backup.json``) now gives one line naming the file, ``--no-resume`` and removing the folder;
``--no-resume`` sets the run aside and the next run is not blocked again.

The command line runs in this process against an address where nothing listens: every check
here happens before the service is asked anything, and the sheet is no listings sheet, so a
run let past the checks stops at reading it, before the network.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from estatebot.cli.main import app
from estatebot.cli.run_health import check_journal
from estatebot.cli.runs import Run, damaged_unfinished, find_unfinished
from estatebot.errors import PlanError
from estatebot.listings.sync.apply.journal import Journal
from estatebot.listings.sync.apply.send_tasks import plan_hash, tasks_from_plan
from estatebot.listings.sync.plan.json_file import JsonFileError, check_depth, read_json_file
from estatebot.listings.sync.sync_plan import SyncPlan, plan_sync
from factories import complete_listing as listing
from factories import remote_frame, sheet_frame

SERVICE = "http://127.0.0.1:9"  # nothing listens: nothing here may reach the network
SERIAL = "3254a9d0424c4806b9ea3d0763ccf1bf"
ENV = {
    "ESTATEBOT_BASE_URL": SERVICE,
    "ESTATEBOT_API_KEY": "test-api-key",
    "ESTATEBOT_SESSION_KEY": "test-session-key",
    "ESTATEBOT_SERIAL": SERIAL,
    "ESTATEBOT_PROGRESS": "0",
    "NO_COLOR": "1",
    "COLUMNS": "400",
}
DEEP = "[" * 100_000 + "]" * 100_000


def a_plan() -> SyncPlan:
    """Two updates: a plan a run folder holds."""
    remote = remote_frame(listing(1), listing(2))
    sheet = sheet_frame(listing(1, Description="New roof."), listing(2, Description="New deck."))
    plan = plan_sync(sheet, remote)
    assert len(plan.updates) == 2
    return plan


@pytest.fixture
def sheet() -> Path:
    """A file that is no listings sheet: a run let past the checks stops reading it."""
    path = Path("notes.xlsx")
    path.write_bytes(b"not a workbook")
    return path


@pytest.fixture
def interrupted(sheet: Path) -> Run:
    """An interrupted sync of ``sheet`` on the service above: its plan, a journal with one
    operation done and a backup, as a killed run leaves them."""
    folder = Path("estatebot-runs") / "sync-20250602-120000"
    folder.mkdir(parents=True)
    run = Run(
        folder=folder, kind="sync", serial=SERIAL, service=SERVICE,
        sheet=str(sheet.resolve()), sheet_digest=None, status="applying",
        started="2025-06-02T12:00:00+00:00", fingerprint={},
    )  # fmt: skip
    plan = a_plan()
    plan.save(run.plan_path)
    with Journal(
        run.journal_path, fingerprint=plan.fingerprint, serial=SERIAL,
        plan=plan_hash(tasks_from_plan(plan)), service=SERVICE,
    ) as journal:  # fmt: skip
        first = plan.updates[0]
        journal.record(f"update:{first.key}", "started", attempts=1)
        journal.record(f"update:{first.key}", "done", code=200, attempts=1)
    run.backup_path.write_text(
        json.dumps({"format": "estatebot-backup", "version": 1, "listings": []}), "utf-8"
    )
    run.mark("applying")
    return run


def sync(sheet: Path, *more: str) -> Any:
    return CliRunner().invoke(app, ["sync", str(sheet), "--yes", *more], env=ENV)


def cut(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: len(text) // 2], encoding="utf-8")


def journal_line(path: Path, number: int, text: str) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = text
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def altered(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data["updates"][0]["body"]["Description"] = "Not what was planned."
    path.write_text(json.dumps(data), encoding="utf-8")


ANOTHER_PLANS_HEADER = json.dumps(
    {"journal": "estatebot-apply", "version": 1, "fingerprint": "0" * 64, "serial": SERIAL,
     "created": "x", "plan": None, "service": SERVICE}
)  # fmt: skip

#: Each damage: the file it is done to, what is done, and the problem the line names.
DAMAGES: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "plan missing": ("plan.json", Path.unlink, "(the file is missing)"),
    "plan cut short": ("plan.json", cut, "(not JSON (line "),
    "plan not JSON": ("plan.json", lambda p: p.write_text("garbage", "utf-8"), "(not JSON"),
    "plan nested deep": ("plan.json", lambda p: p.write_text(DEEP, "utf-8"), "nested more than"),
    "plan not text": ("plan.json", lambda p: p.write_bytes(b"\xff\xfe{"), "not UTF-8 text"),
    "plan altered": ("plan.json", altered, "the plan was changed since it was made"),
    "plan a list": ("plan.json", lambda p: p.write_text("[]", "utf-8"), "a JSON list"),
    "run cut short": ("run.json", cut, "(not JSON"),
    "run missing": ("run.json", Path.unlink, "(the file is missing)"),
    "run nested deep": ("run.json", lambda p: p.write_text(DEEP, "utf-8"), "nested more than"),
    "run of no run": ("run.json", lambda p: p.write_text('{"kind": 1}', "utf-8"), "'kind'"),
    "journal line": (
        "journal.jsonl",
        lambda p: journal_line(p, 2, "{not json"),
        "(line 2 is not JSON)",
    ),
    "journal line deep": (
        "journal.jsonl",
        lambda p: journal_line(p, 2, DEEP),
        "(line 2 nests arrays or objects",
    ),
    "journal header": (
        "journal.jsonl",
        lambda p: journal_line(p, 1, '{"op": "x"}'),
        "line 1 is not a journal",
    ),
    "journal of another plan": (
        "journal.jsonl",
        lambda p: journal_line(p, 1, ANOTHER_PLANS_HEADER),
        "it is the journal of another plan",
    ),
    "backup cut short": ("backup.json", cut, "(not JSON"),
    "backup nested deep": ("backup.json", lambda p: p.write_text(DEEP, "utf-8"), "nested more"),
    "backup of something else": (
        "backup.json",
        lambda p: p.write_text('{"format": "x"}', "utf-8"),
        "not an estatebot",
    ),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_run_folder_is_one_line_naming_the_file_and_the_ways_on(
    interrupted: Run, sheet: Path, damage: str
) -> None:
    name, harm, problem = DAMAGES[damage]
    harm(interrupted.folder / name)

    done = sync(sheet)
    assert done.exit_code == 1, done.output
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    (line,) = lines
    assert line.startswith(f"error: estatebot-runs/sync-20250602-120000/{name} is damaged ("), line
    assert problem in line
    assert "--no-resume plans afresh" in line
    assert "remove that folder" in line
    for bare in ("Errno", "RecursionError", "Traceback", "a bug"):
        assert bare not in line

    # --resume cannot resume it either.
    forced = sync(sheet, "--resume")
    assert forced.exit_code == 1
    assert f"{name} is damaged (" in forced.stderr

    # --no-resume sets it aside and plans afresh (here: reads the sheet, which holds no rows).
    fresh = sync(sheet, "--no-resume")
    assert "is damaged" not in fresh.stderr, fresh.stderr
    assert "set aside" in fresh.stdout or "abandoned" in fresh.stdout, fresh.stdout
    # The sheet's own error: the run went on past the check.
    assert "notes.xlsx cannot be read" in fresh.stderr

    # ... and the next run is not blocked by it again.
    again = sync(sheet)
    assert "is damaged" not in again.stderr, again.stderr
    assert "notes.xlsx cannot be read" in again.stderr


def test_removing_the_folder_is_the_other_way_on(interrupted: Run, sheet: Path) -> None:
    cut(interrupted.plan_path)
    assert "is damaged" in sync(sheet).stderr
    for path in sorted(interrupted.folder.iterdir(), reverse=True):
        path.unlink()
    interrupted.folder.rmdir()
    assert "is damaged" not in sync(sheet).stderr


def test_a_damaged_run_json_kept_beside_its_abandoned_record(interrupted: Run, sheet: Path) -> None:
    cut(interrupted.folder / "run.json")
    text = (interrupted.folder / "run.json").read_text(encoding="utf-8")
    sync(sheet, "--no-resume")
    assert (interrupted.folder / "run.json.damaged").read_text(encoding="utf-8") == text
    record = json.loads((interrupted.folder / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "abandoned"
    assert record["serial"] == ""  # bound to no chatbot: never resumed nor undone


def test_a_damaged_run_of_another_chatbot_or_that_sent_nothing_is_passed_over(
    interrupted: Run, sheet: Path
) -> None:
    root = Path("estatebot-runs")
    cut(interrupted.folder / "run.json")
    assert [d.folder for d in damaged_unfinished(root, "sync", serial=SERIAL, service=SERVICE)]
    assert damaged_unfinished(root, "sync", serial="0" * 32, service=SERVICE) == []
    assert damaged_unfinished(root, "sync", serial=SERIAL, service="http://other:1") == []
    assert damaged_unfinished(root, "cleanup", serial=SERIAL, service=SERVICE) == []
    interrupted.journal_path.unlink()  # it sent nothing: nothing in it to resume
    assert damaged_unfinished(root, "sync", serial=SERIAL, service=SERVICE) == []
    assert "is damaged" not in sync(sheet).stderr


def test_a_journal_cut_short_by_a_kill_is_no_damage(interrupted: Run) -> None:
    with interrupted.journal_path.open("a", encoding="utf-8") as handle:
        handle.write('{"op": "update:X", "event": "do')  # the kill came mid-write
    plan = SyncPlan.load(interrupted.plan_path)
    check_journal(interrupted.journal_path, "ways", plan=plan, serial=SERIAL)
    found = find_unfinished(
        Path("estatebot-runs"), "sync", serial=SERIAL, service=SERVICE,
        sheet=Path(interrupted.sheet or ""),
    )  # fmt: skip
    assert found is not None
    assert found.folder == interrupted.folder


def test_an_interrupted_run_of_another_command_is_refused_naming_the_flag(
    interrupted: Run, sheet: Path
) -> None:
    interrupted.fingerprint = {"--key": "URL"}
    interrupted.mark("applying")
    done = sync(sheet)
    assert done.exit_code == 1
    assert "--key was URL, now MLSNumber" in done.stderr
    assert "--resume finishes that run's plan" in done.stderr
    assert "--no-resume abandons it" in done.stderr
    assert json.loads((interrupted.folder / "run.json").read_text())["status"] == "applying"


def test_resume_and_no_resume_together_is_a_usage_error(sheet: Path) -> None:
    done = sync(sheet, "--resume", "--no-resume")
    assert done.exit_code == 64, done.output


def test_resume_with_nothing_to_resume_says_so(sheet: Path) -> None:
    done = sync(sheet, "--resume")
    assert done.exit_code == 1
    assert "nothing to resume: no sync of notes.xlsx is left interrupted" in done.stderr


# --------------------------------------------------------------------------- the plan reader


def test_the_plan_reader_refuses_deep_nesting_by_name_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text('{"format": ' + DEEP + "}", encoding="utf-8")
    with pytest.raises(JsonFileError, match="nested more than 64 levels deep") as caught:
        SyncPlan.load(path)
    assert caught.value.path == path
    assert str(path) in str(caught.value)
    with pytest.raises(JsonFileError, match="nested more than 3 levels deep"):
        read_json_file(path, limit=3)


def test_a_missing_or_truncated_plan_names_its_file(tmp_path: Path) -> None:
    with pytest.raises(JsonFileError, match=r"plan\.json is not a saved plan: the file is missing"):
        SyncPlan.load(tmp_path / "plan.json")
    path = a_plan().save(tmp_path / "plan.json")
    path.write_text(path.read_text(encoding="utf-8")[:500], encoding="utf-8")
    with pytest.raises(JsonFileError, match=r"plan\.json is not a saved plan: not JSON \(line \d+"):
        SyncPlan.load(path)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_cut_or_byte_changed_in_a_plan_is_a_plan_error_naming_the_file(
    tmp_path: Path, data: st.DataObject
) -> None:
    path = tmp_path / "plan.json"
    made = a_plan()
    raw = made.save(path).read_bytes()
    if data.draw(st.booleans(), label="cut"):
        damaged = raw[: data.draw(st.integers(0, len(raw) - 1), label="at")]
    else:
        at = data.draw(st.integers(0, len(raw) - 1), label="at")
        byte = data.draw(st.integers(0, 255), label="byte")
        damaged = raw[:at] + bytes([byte]) + raw[at + 1 :]
    path.write_bytes(damaged)
    try:
        loaded: SyncPlan | None = SyncPlan.load(path)
    except PlanError as error:
        loaded, message = None, str(error)
    if loaded is None:
        assert str(path) in message
    else:
        assert loaded == made  # a change JSON reads the same way (a space for a space)


def nesting(value: Any) -> int:
    """How deep arrays and objects nest in ``value``."""
    if isinstance(value, dict):
        return 1 + max((nesting(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((nesting(v) for v in value), default=0)
    return 0


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab,:'),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=30,
)


@given(value=JSON_VALUES, limit=st.integers(0, 8))
def test_the_depth_check_agrees_with_the_nesting_the_parser_would_recurse_into(
    value: Any, limit: int
) -> None:
    text = json.dumps(value)
    deeper = check_depth(text, limit)
    assert (deeper is not None) == (nesting(value) > limit)


def test_a_journal_line_nested_deep_is_a_plan_error_not_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with Journal(path, fingerprint="f", serial=SERIAL) as journal:
        journal.record("update:A", "started", attempts=1)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(DEEP + "\n" + '{"op": "update:A", "event": "done"}\n')
    with pytest.raises(PlanError, match=r"journal\.jsonl"):
        Journal(path, fingerprint="f", serial=SERIAL, lock_wait=0)


def test_the_plan_reader_runs_in_a_fresh_interpreter_with_a_low_recursion_limit(
    tmp_path: Path,
) -> None:
    """What the command line does on start: no RecursionError can reach a person."""
    path = tmp_path / "plan.json"
    path.write_text(DEEP, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable, "-c",
            "import sys\n"
            "from estatebot.listings.sync.sync_plan import SyncPlan\n"
            "sys.setrecursionlimit(60)  # far below the file's nesting: it is never recursed\n"
            "try:\n    SyncPlan.load(sys.argv[1])\n"
            "except Exception as e:\n    print(type(e).__name__, e)",
            str(path),
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("JsonFileError "), done.stdout
    assert "nested more than 64 levels deep" in done.stdout


# --------------------------------------------------------------------------- undo


def undo(*more: str) -> Any:
    return CliRunner().invoke(app, ["undo", *more, "--yes"], env=ENV)


def test_undo_of_a_run_whose_journal_is_damaged_names_the_file(interrupted: Run) -> None:
    journal_line(interrupted.journal_path, 2, DEEP)
    done = undo(str(interrupted.folder))
    assert done.exit_code == 1, done.output
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(
        "error: estatebot-runs/sync-20250602-120000/journal.jsonl is damaged (line 2 nests"
    ), line
    assert "cannot be undone from its folder" in line
    assert "RecursionError" not in line


def test_undo_of_the_latest_run_will_not_pass_over_a_damaged_later_one(interrupted: Run) -> None:
    later = Path("estatebot-runs") / "sync-20250603-090000"
    later.mkdir()
    (later / "journal.jsonl").write_bytes(interrupted.journal_path.read_bytes())
    (later / "run.json").write_text('{"kind": "sync", "ser', encoding="utf-8")  # cut short
    done = undo()
    assert done.exit_code == 1, done.output
    assert "sync-20250603-090000/run.json is damaged (not JSON" in done.stderr
    assert "name the run to undo (estatebot undo RUN), or remove that folder" in done.stderr
