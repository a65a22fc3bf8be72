"""The ``estatebot`` command against the real emulator: outputs, files and exit codes.

Each command runs as a child process, as a person or a scheduled job runs it (see
:mod:`clirun`)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

from clirun import cli_env, run_cli, serving
from estatebot.emulator import running

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"


@pytest.fixture
def demo() -> Iterator[Any]:
    with running(seed="demo") as server:
        yield server


@dataclass(frozen=True)
class Result:
    """What a command did: its exit code, and everything it printed."""

    exit_code: int
    output: str


def invoke(server: Any, *args: str, env: dict[str, str] | None = None) -> Result:
    done = run_cli(server, *args, env=env)
    return Result(done.code, done.text)


def test_plan_exits_0_without_changes_and_2_with_changes(demo: Any, tmp_path: Path) -> None:
    same = invoke(
        demo, "plan", str(SAMPLES / "mls_export.xlsx"), "--default", "CurrencySymbol=$",
        "--out", str(tmp_path / "same.json"), "--detailed-exitcode",
    )  # fmt: skip
    assert same.exit_code == 0, same.output
    assert "0 create, 0 update, 0 delete, 200 unchanged" in same.output

    week2 = invoke(
        demo, "plan", str(SAMPLES / "mls_export_week2.xlsx"), "--default", "CurrencySymbol=$",
        "--delete-missing", "--out", str(tmp_path / "plan.json"), "--detailed-exitcode",
    )  # fmt: skip
    assert week2.exit_code == 2, week2.output
    assert "8 create, 21 update, 4 delete" in week2.output
    assert json.loads((tmp_path / "plan.json").read_text())["fingerprint"]
    assert (tmp_path / "plan.xlsx").stat().st_size > 0


def test_plan_apply_then_restore(demo: Any, tmp_path: Path) -> None:
    planned = invoke(
        demo, "plan", str(SAMPLES / "mls_export_week2.xlsx"), "--default", "CurrencySymbol=$",
        "--delete-missing", "--out", str(tmp_path / "plan.json"), "--detailed-exitcode",
    )  # fmt: skip
    assert planned.exit_code == 2
    applied = invoke(
        demo, "apply", str(tmp_path / "plan.json"), "--journal", str(tmp_path / "sync.journal"),
        "--backup", str(tmp_path / "backup.json"), "--report", str(tmp_path / "report.xlsx"),
    )  # fmt: skip
    assert applied.exit_code == 0, applied.output
    assert "8 created, 21 updated, 4 deleted" in applied.output
    assert (tmp_path / "report.xlsx").exists()

    # The applied plan's listings now match: planning the same sheet again finds nothing.
    again = invoke(
        demo, "plan", str(SAMPLES / "mls_export_week2.xlsx"), "--default", "CurrencySymbol=$",
        "--delete-missing", "--out", str(tmp_path / "again.json"),
    )  # fmt: skip
    assert again.exit_code == 0, again.output

    # The four deleted listings were never sent by estatebot: List never shows their unit, and
    # a restore never guesses one.
    unknown = invoke(demo, "restore", str(tmp_path / "backup.json"))
    assert unknown.exit_code == 4, unknown.output
    assert "AreaUnit is unknown" in unknown.output
    restored = invoke(
        demo, "restore", str(tmp_path / "backup.json"), "--default", "AreaUnit=Square Feet"
    )
    assert restored.exit_code == 0, restored.output
    assert "4 created" in restored.output  # the four deleted listings are back


def test_a_stale_plan_is_refused_with_exit_1(demo: Any, tmp_path: Path) -> None:
    planned = invoke(
        demo, "plan", str(SAMPLES / "mls_export_week2.xlsx"), "--default", "CurrencySymbol=$",
        "--out", str(tmp_path / "plan.json"), "--detailed-exitcode",
    )  # fmt: skip
    assert planned.exit_code == 2
    pulled = invoke(demo, "pull", "--out", str(tmp_path / "now.csv"))
    assert pulled.exit_code == 0, pulled.output
    plan = json.loads((tmp_path / "plan.json").read_text())
    key = next(op["key"] for op in plan["updates"])
    demo.store.delete_listings(demo.serial, "MLSNumber", [key])  # changed behind the plan's back
    applied = invoke(demo, "apply", str(tmp_path / "plan.json"))
    assert applied.exit_code == 1
    assert key in applied.output
    assert "Traceback" not in applied.output


def test_errors_exit_1_with_a_message_and_no_traceback(demo: Any, tmp_path: Path) -> None:
    missing = invoke(demo, "plan", str(tmp_path / "nope.xlsx"))
    assert missing.exit_code == 64  # a path that is not there is a mistake of the command line
    assert "'SHEET': file" in missing.output
    assert "does not exist" in missing.output
    assert "Traceback" not in missing.output
    # Law 2: no currency column is no error: the listings keep theirs, and the reader says so.
    no_currency = invoke(demo, "plan", str(SAMPLES / "mls_export.xlsx"))
    assert no_currency.exit_code == 0, no_currency.output
    assert "CurrencySymbol: has no column" in no_currency.output
    bad_default = invoke(demo, "plan", str(SAMPLES / "mls_export.xlsx"), "--default", "oops")
    assert bad_default.exit_code == 64  # a usage error: never read as "changes" (2)
    assert "FIELD=VALUE" in bad_default.output


def test_pull_writes_every_listing(demo: Any, tmp_path: Path) -> None:
    result = invoke(demo, "pull", "--out", str(tmp_path / "listings.xlsx"))
    assert result.exit_code == 0, result.output
    assert "200 listings written" in result.output
    frame = pd.read_excel(tmp_path / "listings.xlsx", dtype=str, engine="openpyxl")
    assert len(frame) == 200
    assert frame["MLSNumber"].is_unique


def test_test_chat_gates_on_failures(demo: Any, tmp_path: Path) -> None:
    passing = invoke(
        demo, "test-chat", str(SAMPLES / "chat_tests.xlsx"), "--out", str(tmp_path / "r.xlsx")
    )
    assert passing.exit_code == 0, passing.output
    assert "19 of 19 cases passed" in passing.output
    assert (tmp_path / "r.xlsx").exists()

    cases = tmp_path / "failing.csv"
    cases.write_text("name,question,expect_contains\nimpossible,Hello,zebra crossing\n")
    failing = invoke(demo, "test-chat", str(cases))
    assert failing.exit_code == 4  # the cases ran and one failed: not an error (1)
    assert "FAIL impossible" in failing.output


def test_ask_streams_a_grounded_answer(demo: Any) -> None:
    result = invoke(demo, "ask", "Any rentals in Phoenix?")
    assert result.exit_code == 0, result.output
    assert "Phoenix" in result.output


def test_missing_credentials_name_the_variable() -> None:
    env = {"ESTATEBOT_BASE_URL": "http://127.0.0.1:9", "ESTATEBOT_PROGRESS": "0"}
    result = invoke(None, "ask", "hi", "--serial", "x", env=cli_env(None, **env))
    assert result.exit_code == 1
    assert "ESTATEBOT_API_KEY" in result.output


def test_serve_prints_its_address_and_answers() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with serving("--port", str(port), "--seed", "small") as seen:
        # The address, then the emulator's own demo credentials (printed on purpose).
        assert f"127.0.0.1:{port}" in seen
        assert "demo-api-key" in seen
        reply = httpx.get(
            f"http://127.0.0.1:{port}/chat/Chatbot/ModelList",
            headers={"Authorization": "demo-api-key"},
            timeout=10,
        )
        assert reply.json()["Success"] is True


def test_plan_exits_3_when_rows_are_invalid_or_held_back(demo: Any, tmp_path: Path) -> None:
    # Invalid is not in sync: rows the reader rejects give their own code, with or without
    # changes beside them.
    pitfalls = invoke(
        demo, "plan", str(SAMPLES / "mls_export_pitfalls.xlsx"), "--default", "CurrencySymbol=$",
        "--out", str(tmp_path / "pitfalls.json"), "--detailed-exitcode",
    )  # fmt: skip
    assert pitfalls.exit_code == 3, pitfalls.output
    saved = json.loads((tmp_path / "pitfalls.json").read_text())
    assert saved["invalid"] or saved["held_back"]


def test_without_the_flag_a_plan_with_changes_or_invalid_rows_exits_0(
    demo: Any, tmp_path: Path
) -> None:
    # Success is 0 for every command: only --detailed-exitcode tells changes (2) and rows not
    # synced (3) apart, so a scheduler never reads a plan made as a failure.
    for name in ("mls_export_week2.xlsx", "mls_export_pitfalls.xlsx"):
        done = invoke(
            demo, "plan", str(SAMPLES / name), "--default", "CurrencySymbol=$",
            "--out", str(tmp_path / "plan.json"),
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        assert "Nothing to change" not in done.output
    saved = json.loads((tmp_path / "plan.json").read_text())
    assert saved["invalid"] or saved["held_back"]


def test_plan_set_overrides_every_listing(demo: Any, tmp_path: Path) -> None:
    done = invoke(
        demo, "plan", str(SAMPLES / "mls_export.xlsx"), "--default", "CurrencySymbol=$",
        "--set", "ParkingSpots=0", "--out", str(tmp_path / "plan.json"), "--detailed-exitcode",
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    assert "overrides: ParkingSpots=0" in done.output
    bad = invoke(demo, "plan", str(SAMPLES / "mls_export.xlsx"), "--set", "ParkingSpots")
    assert bad.exit_code == 64
    assert "--set" in bad.output


def test_demo_runs_the_main_job_end_to_end(tmp_path: Path) -> None:
    done = invoke(None, "demo", "--out", str(tmp_path / "demo"), "--sheet",
                  str(SAMPLES / "mls_export_week2.xlsx"))  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "8 created, 21 updated, 4 deleted" in done.output
    assert (tmp_path / "demo" / "plan.json").exists()
