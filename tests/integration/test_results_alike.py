"""Sheet, SyncPlan, ApplyReport and ChatTestResults behave alike.

Each has ``.frame`` and ``to_frame()`` (a DataFrame), ``summary()`` returning a
:class:`~estatebot._summary.Summary` (text with its figures), and ``to_excel(path)`` returning the
path it wrote, which openpyxl reads back. Made the real way: a sample export read, the emulator's
listings pulled over HTTP, a plan applied, chat cases run.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import load_workbook

import estatebot as eb
from estatebot._summary import Summary
from estatebot.emulator import EmulatorServer

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


def results_of_a_sync(server: EmulatorServer, tmp_path: Path) -> dict[str, Any]:
    client = eb.Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    )
    with client:
        sheet = eb.read_sheet(SAMPLE / "mls_export.xlsx", defaults={"CurrencySymbol": "$"})
        remote = eb.pull_listings(client, server.serial, progress=False)
        plan = eb.plan_sync(sheet, remote)
        report = plan.apply(
            client, server.serial, journal=tmp_path / "sync.journal", progress=False
        )
        cases = [{"name": "greets", "question": "Hello", "expect_contains": "hello"}]
        chat = eb.run_chat_tests(client, server.serial, cases, progress=False)
    return {"sheet": sheet, "plan": plan, "report": report, "chat": chat}


@pytest.fixture
def results(empty_emulator: EmulatorServer, tmp_path: Path) -> dict[str, Any]:
    return results_of_a_sync(empty_emulator, tmp_path)


def test_each_result_has_a_frame_under_both_spellings(results: dict[str, Any]) -> None:
    for name, result in results.items():
        frame = result.frame
        assert isinstance(frame, pd.DataFrame), name
        assert len(frame) > 0, name
        again = result.to_frame()
        assert isinstance(again, pd.DataFrame), name
        assert list(again.columns) == list(frame.columns), name
        assert len(again) == len(frame), name


def test_each_summary_is_the_same_kind_of_thing(results: dict[str, Any]) -> None:
    summaries = {name: result.summary() for name, result in results.items()}
    assert {type(s) for s in summaries.values()} == {Summary}
    for name, summary in summaries.items():
        assert isinstance(summary, str), name
        assert str(summary).strip(), name
        assert summary.counts, name
        for key, figure in summary.items():
            assert summary[key] == figure, (name, key)
            assert figure is None or isinstance(figure, int | float), (name, key)


def test_summaries_carry_the_figures_their_text_states(results: dict[str, Any]) -> None:
    sheet, plan, report, chat = (results[k] for k in ("sheet", "plan", "report", "chat"))
    assert sheet.summary()["valid"] == len(sheet.frame)
    assert f"{len(sheet.frame)} valid" in sheet.summary()
    assert plan.summary()["create"] == len(plan.creates) > 0
    assert plan.summary().startswith(f"{len(plan.creates)} create")
    assert report.summary()["created"] == len(plan.creates)
    assert report.summary() == f"{len(plan.creates)} created"
    assert chat.summary()["cases"] == 1
    assert chat.summary().startswith(f"{chat.summary()['passed']} of 1 cases passed")


def test_each_to_excel_returns_the_path_it_wrote(results: dict[str, Any], tmp_path: Path) -> None:
    for name, result in results.items():
        target = tmp_path / "out" / f"{name}.xlsx"
        written = result.to_excel(target)
        assert isinstance(written, Path), name
        assert written == target, name
        assert written.is_file(), name
        book = load_workbook(written, read_only=True)
        assert book.sheetnames, name
        book.close()


def test_a_sheet_written_to_excel_reads_back_as_the_same_listings(
    results: dict[str, Any], tmp_path: Path
) -> None:
    sheet = results["sheet"]
    written = sheet.to_excel(tmp_path / "sheet.xlsx")
    assert load_workbook(written, read_only=True).sheetnames == ["Listings", "Issues", "Mapping"]
    again = eb.read_sheet(
        pd.read_excel(written, sheet_name="Listings", dtype=object, engine="openpyxl")
    )
    assert again.errors.empty, again.summary()
    assert sorted(again.frame["MLSNumber"]) == sorted(sheet.frame["MLSNumber"])


def test_summary_reads_as_text_and_as_figures() -> None:
    summary = Summary("2 created, 1 failed", {"created": 2, "failed": 1})
    assert summary == "2 created, 1 failed"
    assert summary[0] == "2"
    assert summary[:9] == "2 created"
    assert summary["failed"] == 1
    assert dict(summary.items()) == {"created": 2, "failed": 1}
    with pytest.raises(KeyError):
        summary["deleted"]
    with pytest.raises(TypeError):
        summary.counts["created"] = 5  # type: ignore[index]
    copied = pickle.loads(pickle.dumps(summary))
    assert copied == summary
    assert copied.counts == summary.counts
