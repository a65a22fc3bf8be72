"""The everyday loop's guards in Python: a file that is no listings sheet, a status that is no
listing status, a journal written for another target, and the exit codes a command gives."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import estatebot as eb
from estatebot.api.models import ListingStatus
from estatebot.cli.codes import ExitCode, applied_code, plan_code
from estatebot.cli.flags.shared_options import ListingStatusName
from estatebot.errors import PlanError
from estatebot.listings.sync.apply.journal import Journal
from estatebot.listings.sync.report.apply_report import ApplyReport, OpOutcome, outcomes_frame
from estatebot.listings.sync.report.outcomes import DONE, FAILED, SKIPPED
from factories import complete_listing as listing
from factories import remote_frame, sheet_frame

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"


# --------------------------------------------------------------------------- not a listings sheet


def test_a_note_with_no_rows_is_no_listings_sheet(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n", encoding="utf-8")
    with pytest.raises(PlanError) as raised:
        eb.plan_sync(eb.read_sheet(notes, progress=False), remote_frame(listing(1)))
    assert str(raised.value) == (
        "notes.txt: no listing rows (the header row is all there is; its columns are hello)"
    )


def test_a_header_row_alone_is_no_listings_sheet_even_against_no_listings(tmp_path: Path) -> None:
    header = tmp_path / "header.csv"
    header.write_text("MLSNumber,City\n", encoding="utf-8")
    with pytest.raises(PlanError, match=r"^header\.csv: no listing rows .*MLSNumber, City\)$"):
        eb.plan_sync(eb.read_sheet(header, progress=False), remote_frame())


def test_chat_test_cases_are_no_listings_sheet() -> None:
    sheet = eb.read_sheet(SAMPLES / "chat_tests.xlsx", progress=False)
    assert len(sheet.frame) == 19  # the reader keeps the rows: only the plan can tell
    with pytest.raises(PlanError) as raised:
        eb.plan_sync(sheet, remote_frame(listing(1)))
    message = str(raised.value)
    assert message.startswith(
        "chat_tests.xlsx: no column maps to MLSNumber; its columns are name, conversation, "
        "question, expect_contains, "
    )
    assert message.endswith(
        "A listings sheet has one: map a header to MLSNumber (mapping=) or plan by another key"
    )
    with pytest.raises(PlanError, match=r"no column maps to ID \(the NewOaks key\)"):
        eb.plan_sync(sheet, remote_frame(listing(1)), key="NewOaks")


def test_a_plain_frame_is_checked_the_same_way() -> None:
    with pytest.raises(PlanError) as raised:
        eb.plan_sync(pd.DataFrame({"question": ["hi"], "answer": ["yes"]}), remote_frame())
    assert str(raised.value) == (
        "the sheet (a DataFrame): no column maps to MLSNumber; its columns are question, answer. "
        "A listings sheet has one: name a column MLSNumber or plan by another key"
    )
    with pytest.raises(PlanError, match=r"^the sheet \(a DataFrame\): no listing rows \(the frame"):
        eb.plan_sync(sheet_frame(), remote_frame(listing(1)))
    with pytest.raises(PlanError, match="no listing rows"):
        eb.plan_sync(sheet_frame(), remote_frame())  # nothing on either side: nothing to sync


def test_a_listings_sheet_still_plans() -> None:
    plan = eb.plan_sync(sheet_frame(listing(1), listing(2)), remote_frame(listing(1)))
    assert [op.key for op in plan.creates] == ["M2"]


# --------------------------------------------------------------------------- statuses


def test_plan_cleanup_reads_the_services_statuses_in_any_case() -> None:
    remote = remote_frame(listing(1, Status="Sold"), listing(2), listing(3, Status="PreOnMarket"))
    plan = eb.plan_cleanup(remote, status=("sold", " PREONMARKET "), max_delete_fraction=1.0)
    assert sorted(op.key for op in plan.deletes) == ["1", "3"]
    assert plan.options["status"] == ["Sold", "PreOnMarket"]


def test_plan_cleanup_refuses_a_status_that_is_no_listing_status() -> None:
    with pytest.raises(PlanError) as raised:
        eb.plan_cleanup(remote_frame(listing(1, Status="Sold")), status="Sould")
    assert str(raised.value) == (
        "status 'Sould' is not a listing status; the service's statuses are Active, "
        "PreOnMarket, Sold (any case)"
    )


def test_the_command_lines_statuses_are_the_services() -> None:
    assert [s.value for s in ListingStatusName] == [s.value for s in ListingStatus]


# --------------------------------------------------------------------------- journal


def test_a_journal_of_another_service_names_the_file_and_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "sync.journal"
    with Journal(path, fingerprint="f" * 64, serial="SN-1", service="http://127.0.0.1:1") as one:
        one.record("update:M1", "started")
    with pytest.raises(PlanError) as raised:
        Journal(path, fingerprint="f" * 64, serial="SN-1", service="http://127.0.0.1:2")
    message = str(raised.value)
    assert message.startswith(f"the journal {path} (written 20")
    assert "was written for the service at http://127.0.0.1:1, not http://127.0.0.1:2" in message
    assert "each run needs a journal of its own: pass a new journal= path" in message
    with pytest.raises(PlanError, match="belongs to chatbot SN-1, not SN-2: it cannot resume"):
        Journal(path, fingerprint="f" * 64, serial="SN-2", service="http://127.0.0.1:1")


# --------------------------------------------------------------------------- exit codes


def report_of(*outcomes: str) -> ApplyReport:
    made = [
        OpOutcome(action="update", key=f"M{n}", row=n, id=n, outcome=outcome)
        for n, outcome in enumerate(outcomes)
    ]
    return ApplyReport(outcomes_frame(made))


def test_success_is_0_and_the_detailed_codes_only_with_the_flag() -> None:
    changes = eb.plan_sync(sheet_frame(listing(1), listing(2)), remote_frame(listing(1)))
    in_step = eb.plan_sync(sheet_frame(listing(1)), remote_frame(listing(1)))
    invalid = eb.plan_sync(sheet_frame(listing(1), listing(3, Status="Gone")), remote_frame())
    assert invalid.invalid
    for plan in (changes, in_step, invalid):
        assert plan_code(plan) is ExitCode.OK
    assert plan_code(changes, detailed=True) is ExitCode.CHANGES
    assert plan_code(in_step, detailed=True) is ExitCode.OK
    assert plan_code(invalid, detailed=True) is ExitCode.ROWS_NOT_SYNCED

    assert applied_code(changes, report_of(DONE)) is ExitCode.OK
    assert applied_code(changes, report_of(DONE), detailed=True) is ExitCode.CHANGES
    # Everything done by an earlier run: this run changed nothing.
    assert applied_code(changes, report_of(SKIPPED), detailed=True) is ExitCode.OK
    assert applied_code(invalid, report_of(DONE), detailed=True) is ExitCode.ROWS_NOT_SYNCED
    for detailed in (False, True):
        assert applied_code(changes, report_of(DONE, FAILED), detailed=detailed) is (
            ExitCode.FAILED
        )
