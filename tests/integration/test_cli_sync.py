"""``estatebot sync``, ``cleanup`` and ``apply`` as a person or a scheduled job runs them: child
processes against the real emulator, with their exit codes, files and what reached the service."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shlex
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import estatebot as eb
from clirun import cli_env, command, run_cli
from estatebot.emulator import EmulatorServer, running
from estatebot.listings import write_frame
from factories import make_listings

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
WEEK2 = SAMPLES / "mls_export_week2.xlsx"
SYNC_WEEK2 = ("sync", str(WEEK2), "--default", "CurrencySymbol=$", "--delete-missing")
WRITES = ("RealEstateCreate", "RealEstateUpdate", "RealEstateDelete")


@pytest.fixture
def market() -> Iterator[EmulatorServer]:
    """The demo chatbot with the week-1 market: week 2 plans 8 creates, 21 updates, 4 deletes."""
    with running(seed="demo") as server:
        yield server


def writes(server: EmulatorServer) -> dict[str, int]:
    return {name: server.request_counts[name] for name in WRITES}


def pulled(server: EmulatorServer) -> eb.Client:
    return eb.Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    )


def replan(server: EmulatorServer) -> eb.SyncPlan:
    """The week-2 plan against the listings as they are now."""
    with pulled(server) as client:
        remote = eb.pull_listings(client, server.serial, progress=False)
    sheet = eb.read_sheet(WEEK2, defaults={"CurrencySymbol": "$"})
    return eb.plan_sync(sheet, remote, delete_missing=True)


def the_run() -> Path:
    (folder,) = Path("estatebot-runs").iterdir()
    return folder


def line_after(text: str, label: str) -> str:
    """The rest of the line that starts with ``label`` (a command the output gives)."""
    for line in text.splitlines():
        if label in line:
            return line.split(label, 1)[1].strip()
    raise AssertionError(f"no {label!r} in:\n{text}")


def run_printed(server: EmulatorServer, printed: str) -> tuple[int, str]:
    """Run a command the output printed (``estatebot ...``), as a person would paste it."""
    words = shlex.split(printed)
    assert words[0] == "estatebot", printed
    done = run_cli(server, *words[1:])
    return done.code, done.text


# --------------------------------------------------------------------------- sync


def test_sync_yes_does_the_whole_job_and_keeps_its_files(market: EmulatorServer) -> None:
    done = run_cli(market, *SYNC_WEEK2, "--yes", "--detailed-exitcode")
    assert done.code == 2, done.text  # changes made
    assert "Traceback" not in done.text
    assert "Plan: 8 create, 21 update, 4 delete" in done.out
    assert "Apply: 8 created, 21 updated, 4 deleted, 175 unchanged" in done.out
    assert writes(market) == {"RealEstateCreate": 8, "RealEstateUpdate": 21, "RealEstateDelete": 1}
    assert replan(market).is_empty

    run = the_run()
    for name in ("plan.json", "plan.xlsx", "journal.jsonl", "backup.json", "report.xlsx"):
        assert (run / name).stat().st_size > 0, name
    for name in ("journal.jsonl", "backup.json", "report.xlsx"):
        assert str(run / name) in done.out, name  # where each file went is printed
    assert json.loads((run / "run.json").read_text())["status"] == "finished"

    again = run_cli(market, *SYNC_WEEK2, "--yes", "--detailed-exitcode")
    assert again.code == 0, again.text  # in step: nothing to do
    assert "Nothing to apply: the listings are in step with the sheet." in again.out
    assert len(list(Path("estatebot-runs").iterdir())) == 1  # nothing to apply, no new run

    # The report says how to undo it; that command puts the updated and deleted listings back
    # (the deleted ones were never sent by estatebot: their unit is given, never guessed).
    undo = line_after(done.out, "undo:") + " --default 'AreaUnit=Square Feet'"
    code, text = run_printed(market, undo)
    assert code == 0, text
    assert "4 created, 21 updated" in text


def test_sync_without_a_terminal_or_yes_applies_nothing(market: EmulatorServer) -> None:
    done = run_cli(market, *SYNC_WEEK2)  # standard input is not a terminal: a scheduled job
    assert done.code == 5, done.text
    assert "Not applied: no terminal to ask on; pass --yes" in done.out
    assert sum(writes(market).values()) == 0
    run = the_run()
    assert json.loads((run / "run.json").read_text())["status"] == "declined"
    # The plan is kept, with the exact command that applies it as it is.
    code, text = run_printed(market, line_after(done.out, "to apply it as it is:"))
    assert code == 0, text
    assert "8 created, 21 updated, 4 deleted" in text
    assert replan(market).is_empty


def answer_on_a_terminal(server: EmulatorServer, answer: str) -> tuple[int, str]:
    """Run the week-2 sync with a terminal for its question (``--detailed-exitcode``: 2 for
    changes made), and type ``answer``: a line, or ``^C`` (Ctrl-C) or ``^D`` (end of input)."""
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        command(*SYNC_WEEK2, "--detail", "summary", "--detailed-exitcode"),
        # A child that hangs is made to show where (every thread's stack, on SIGABRT below).
        env={**cli_env(server), "PYTHONFAULTHANDLER": "1"},
        stdin=follower,
        stderr=follower,
        stdout=subprocess.PIPE,
        text=True,
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 120
    try:
        while b"Enter a value" not in seen:
            assert time.monotonic() < deadline, seen.decode(errors="replace")
            ready, _, _ = select.select([leader], [], [], 1)
            if ready:
                seen += os.read(leader, 4096)
        if answer == "^C":
            child.send_signal(signal.SIGINT)  # what Ctrl-C on the terminal sends
        elif answer == "^D":
            os.write(leader, b"\x04")  # the terminal's end of input, at the start of a line
        else:
            os.write(leader, answer.encode() + b"\n")
        try:
            out, _ = child.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGABRT)  # faulthandler writes the stacks to the terminal
            child.wait(timeout=30)
            while select.select([leader], [], [], 0.5)[0]:
                try:
                    seen += os.read(leader, 4096)
                except OSError:
                    break
            raise AssertionError(
                f"the child did not end after {answer!r}:\n{seen.decode(errors='replace')}"
            ) from None
        while select.select([leader], [], [], 0.2)[0]:
            try:
                seen += os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
    finally:
        os.close(leader)
        if child.poll() is None:
            child.kill()
    assert b"Apply this plan to chatbot" in seen
    assert b"Only 'yes' will be accepted" in seen
    return child.returncode, out


def test_on_a_terminal_only_yes_applies(market: EmulatorServer) -> None:
    code, out = answer_on_a_terminal(market, "y")  # not "yes": declined
    assert code == 5, out
    assert "Not applied." in out
    assert sum(writes(market).values()) == 0

    code, out = answer_on_a_terminal(market, "yes")
    assert code == 2, out
    assert "Apply: 8 created, 21 updated, 4 deleted" in out
    assert replan(market).is_empty


@pytest.mark.parametrize("keys", ["^C", "^D"])
def test_ctrl_c_or_end_of_input_at_the_question_exits_130(
    market: EmulatorServer, keys: str
) -> None:
    code, out = answer_on_a_terminal(market, keys)
    assert code == 130, out  # interrupted, as Ctrl-C anywhere else: not "declined" (5)
    assert "Interrupted at the question: not applied." in out
    assert "The plan is kept; to apply it as it is: estatebot apply" in out
    assert sum(writes(market).values()) == 0
    assert json.loads((the_run() / "run.json").read_text())["status"] == "declined"


def test_sync_exits_3_when_rows_are_invalid_or_held_back(market: EmulatorServer) -> None:
    done = run_cli(
        market, "sync", str(SAMPLES / "mls_export_pitfalls.xlsx"), "--default",
        "CurrencySymbol=$", "--yes", "--detailed-exitcode",
    )  # fmt: skip
    assert done.code == 3, done.text
    assert "Nothing to apply; the rows above are not synced." in done.out
    # Held back and invalid rows, each with its row, column and reason.
    assert "! BN2348456  row 37, ID 10035" in done.out
    assert 'PostalCode (ZIP) "2215": has fewer than 5 digits' in done.out
    assert "x row 39" in done.out
    assert "StandardStatus: is not a known status (value 'Backup Offer')" in done.out
    assert sum(writes(market).values()) == 0


def test_sync_exits_4_when_an_operation_fails(market: EmulatorServer, tmp_path: Path) -> None:
    with pulled(market) as client:
        frame = eb.pull_listings(client, market.serial, progress=False)
    target = str(frame.loc[3, "MLSNumber"])
    frame.loc[3, "Description"] = "Roomy. " * 500  # 3,500 characters
    frame.loc[4, "Description"] = "A new description."
    sheet = write_frame(frame, tmp_path / "listings.csv")
    market.max_body_bytes = 3_500  # the long one's update is refused with 413; not retried

    done = run_cli(market, "sync", str(sheet), "--default", "AreaUnit=Square Feet", "--yes")
    assert done.code == 4, done.text
    assert "Apply: 1 updated, 198 unchanged, 1 failed" in done.out
    assert f"failed update {target} [413]" in done.out
    assert "Traceback" not in done.text


def test_sync_cleanup_and_undo_keep_to_their_concurrency_in_their_pulls_too(
    tmp_path: Path,
) -> None:
    # 1,000 listings (10 pages), each List request held 30 ms: a pull at the library's default
    # would have 8 pages in flight, whatever --concurrency says.
    with running(seed=None) as server:
        server.add_listings(server.serial, make_listings(1000))
        with pulled(server) as client:
            frame = eb.pull_listings(client, server.serial, progress=False)
        frame.loc[5, "Description"] = "A new description."
        sheet = write_frame(frame, tmp_path / "listings.csv")
        server.faults.only = {"RealEstateList"}
        server.faults.latency_ms = 30
        commands = {
            "sync": ("sync", str(sheet), "--default", "AreaUnit=Square Feet",
                     "--blank-unknown-location", "--yes"),
            "cleanup": ("cleanup", "--min-days-on-market", "100000", "--yes"),
            "undo": ("undo", "--yes"),
        }  # fmt: skip
        peaks = {}
        for name, words in commands.items():
            server.emulator.reset_peak()
            done = run_cli(server, *words, "--concurrency", "3")
            assert done.code == 0, done.text
            peaks[name] = server.emulator.peak_in_flight
        assert peaks == {"sync": 3, "cleanup": 3, "undo": 3}
        listing = int(frame.loc[5, "ID"])
        undone = server.store.listing_data(server.serial, [listing])[listing]
        assert undone["Description"] != "A new description."


# --------------------------------------------------------------------------- interrupted


def start_sync(server: EmulatorServer, *more: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command(*SYNC_WEEK2, "--yes", "--concurrency", "1", *more),
        env=cli_env(server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def interrupt_after(child: subprocess.Popen[str], done_events: int) -> tuple[str, str]:
    """Send Ctrl-C (SIGINT) once the run's journal holds ``done_events``; its output."""
    deadline = time.monotonic() + 120
    while True:
        assert child.poll() is None, "the sync ended before it could be interrupted"
        assert time.monotonic() < deadline, "the journal never filled"
        journals = list(Path("estatebot-runs").glob("*/journal.jsonl"))
        if journals and journals[0].read_text().count('"event": "done"') >= done_events:
            break
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    return child.communicate(timeout=120)


def slow_writes(server: EmulatorServer) -> None:
    """Each write takes 100 ms, so an apply of 33 operations one at a time is caught midway."""
    server.faults.latency_ms = 100
    server.faults.only = set(WRITES)


def test_ctrl_c_stops_cleanly_and_the_printed_command_resumes(market: EmulatorServer) -> None:
    slow_writes(market)
    child = start_sync(market)
    out, err = interrupt_after(child, 5)
    assert child.returncode == 130, out + err
    assert "Traceback" not in out + err
    assert "Interrupted: " in err
    assert "nothing more was sent" in err
    before = writes(market)
    total_sent = sum(before.values())
    assert 5 <= total_sent < 26, before  # stopped in the creates or updates

    journal = the_run() / "journal.jsonl"
    events = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    started = {e["op"] for e in events if e["event"] == "started"}
    finished = {e["op"] for e in events if e["event"] in ("done", "failed")}
    assert started == finished  # the requests in flight were let finish, and recorded

    market.faults.clear()
    code, text = run_printed(market, line_after(err, "To resume:"))
    assert code == 0, text
    assert f"{total_sent} skipped (already done)" in text
    # Nothing was done twice: each create and update went out once, the deletes in one request.
    assert writes(market) == {"RealEstateCreate": 8, "RealEstateUpdate": 21, "RealEstateDelete": 1}
    assert replan(market).is_empty
    assert json.loads((the_run() / "run.json").read_text())["status"] == "finished"


def test_running_the_same_sync_again_resumes_the_interrupted_run(
    market: EmulatorServer,
) -> None:
    slow_writes(market)
    child = start_sync(market)
    out, err = interrupt_after(child, 3)
    assert child.returncode == 130, out + err
    assert "or run the same `estatebot sync` again: it resumes" in err
    sent = sum(writes(market).values())

    market.faults.clear()
    again = run_cli(market, *SYNC_WEEK2, "--yes", "--detailed-exitcode")
    assert again.code == 2, again.text
    assert "Resuming the sync interrupted in estatebot-runs/" in again.out
    assert f"{sent} skipped (already done)" in again.out
    assert len(list(Path("estatebot-runs").iterdir())) == 1  # the same run, no new plan
    assert writes(market) == {"RealEstateCreate": 8, "RealEstateUpdate": 21, "RealEstateDelete": 1}
    assert replan(market).is_empty

    # Finished: the next run plans the sheet afresh, and finds it in step.
    last = run_cli(market, *SYNC_WEEK2, "--yes")
    assert last.code == 0, last.text
    assert "Resuming" not in last.out


# --------------------------------------------------------------------------- cleanup


def test_cleanup_deletes_the_stale_listings_and_backs_them_up(market: EmulatorServer) -> None:
    nothing = run_cli(market, "cleanup", "--min-days-on-market", "100000", "--yes")
    assert nothing.code == 0, nothing.text
    assert "Nothing to apply: no listing matches." in nothing.out

    asked = run_cli(market, "cleanup", "--status", "Sold")
    assert asked.code == 5, asked.text  # no terminal and no --yes: nothing deleted
    assert "- " in asked.out
    assert "cleanup: Status Sold" in asked.out
    assert sum(writes(market).values()) == 0

    done = run_cli(
        market, "cleanup", "--status", "Sold", "--min-days-on-market", "120", "--yes",
        "--detailed-exitcode",
    )  # fmt: skip
    assert done.code == 2, done.text
    assert "Apply: 23 deleted" in done.out
    with pulled(market) as client:
        left = eb.pull_listings(client, market.serial, progress=False)
    assert len(left) == 177
    assert not (left["Status"] == "Sold").any()
    assert (left["DaysOnMarket"] < 120).all()

    code, text = run_printed(
        market, line_after(done.out, "undo:") + " --default 'AreaUnit=Square Feet'"
    )
    assert code == 0, text
    assert "23 created" in text


def test_cleanup_needs_a_criterion(market: EmulatorServer) -> None:
    done = run_cli(market, "cleanup", "--yes")
    assert done.code == 64, done.text
    assert "--status" in done.err
    assert "--min-days-on-market" in done.err


def test_cleanup_past_the_delete_guard_names_the_flag(market: EmulatorServer) -> None:
    done = run_cli(market, "cleanup", "--min-days-on-market", "0", "--yes")
    assert done.code == 1, done.text
    assert "--force-delete-count 200" in done.err
    assert "force_delete_count" not in done.err
    assert sum(writes(market).values()) == 0


# --------------------------------------------------------------------------- apply


def test_apply_keeps_a_journal_by_default_so_a_second_run_does_nothing_twice(
    market: EmulatorServer,
) -> None:
    planned = run_cli(
        market, "plan", str(WEEK2), "--default", "CurrencySymbol=$", "--detailed-exitcode"
    )
    assert planned.code == 2, planned.text
    code, text = run_printed(market, line_after(planned.out, "To apply it:"))
    assert code == 0, text
    run = the_run()  # the journal and the backup belong to the run, in a folder of its own
    assert run.name.startswith("apply-")
    assert f"journal: {run}/journal.jsonl" in text
    assert f"backup:  {run}/backup.json" in text
    assert (run / "plan.json").read_bytes() == Path("plan.json").read_bytes()
    first = writes(market)

    again = run_cli(market, "apply", "plan.json", "--detailed-exitcode")
    assert again.code == 0, again.text  # nothing changed by this run: all was done
    assert f"Going on with the journal {run}/journal.jsonl: 33 of 33" in again.out
    assert "33 skipped (already done)" in again.out
    assert writes(market) == first
    assert the_run() == run


def test_apply_of_a_file_that_is_no_plan_names_it(market: EmulatorServer) -> None:
    Path("broken.json").write_text('{"format": "estatebot-sync-plan", "version": 3', "utf-8")
    done = run_cli(market, "apply", "broken.json")
    assert done.code == 1, done.text
    assert done.err.startswith("error: broken.json is not a saved plan: not JSON")
    assert "Traceback" not in done.text


# --------------------------------------------------------------------------- exit codes


def test_success_is_0_without_the_detailed_exitcode_flag(market: EmulatorServer) -> None:
    # The same runs that exit 2 or 3 with --detailed-exitcode: a scheduler reads them as done.
    pitfalls = (str(SAMPLES / "mls_export_pitfalls.xlsx"), "--default", "CurrencySymbol=$")
    invalid = run_cli(market, "sync", *pitfalls, "--yes")
    assert invalid.code == 0, invalid.text
    assert "Nothing to apply; the rows above are not synced." in invalid.out

    done = run_cli(market, *SYNC_WEEK2, "--yes")
    assert done.code == 0, done.text
    assert "Apply: 8 created, 21 updated, 4 deleted" in done.out

    cleaned = run_cli(market, "cleanup", "--status", "sold", "--yes")  # any case
    assert cleaned.code == 0, cleaned.text
    assert "cleanup: Status Sold" in cleaned.out
    assert re.search(r"Apply: \d+ deleted", cleaned.out), cleaned.out

    planned = run_cli(market, "plan", str(WEEK2), "--default", "CurrencySymbol=$")
    assert planned.code == 0, planned.text
    applied = run_cli(market, "apply", "plan.json")
    assert applied.code == 0, applied.text


def test_cleanup_status_takes_only_the_services_statuses(market: EmulatorServer) -> None:
    typo = run_cli(market, "cleanup", "--status", "Sould", "--yes")
    assert typo.code == 64, typo.text  # a usage error, not "no listing matches" (0)
    allowed = "the service's statuses are Active, PreOnMarket, Sold (any case)"
    assert f"'Sould' is not a listing status; {allowed}" in typo.err
    assert sum(writes(market).values()) == 0
    assert not Path("estatebot-runs").exists()  # nothing was planned

    asked = run_cli(market, "cleanup", "--status", "PREONMARKET")
    assert asked.code == 5, asked.text  # read as PreOnMarket; no terminal: nothing applied
    assert "cleanup selects: PreOnMarket" in asked.out


# --------------------------------------------------------------------------- not a listings sheet


def test_a_file_that_is_no_listings_sheet_is_an_error_naming_what_it_holds(
    market: EmulatorServer,
) -> None:
    Path("notes.txt").write_text("hello\n", encoding="utf-8")
    Path("header.csv").write_text("MLSNumber,City,SalePrice\n", encoding="utf-8")
    expected = {
        "notes.txt": "error: notes.txt: no listing rows (the header row is all there is; its "
        "columns are hello)",
        "header.csv": "error: header.csv: no listing rows (the header row is all there is; its "
        "columns are MLSNumber, City, SalePrice)",
        str(SAMPLES / "chat_tests.xlsx"): "error: chat_tests.xlsx: no column maps to MLSNumber; "
        "its columns are name, conversation, question, expect_contains, ",
    }
    for sheet, message in expected.items():
        for args in (("plan", sheet), ("sync", sheet, "--yes")):
            done = run_cli(market, *args)
            assert done.code == 1, done.text
            assert done.err.startswith(message), done.err
            assert "Nothing to change" not in done.out
            assert "Traceback" not in done.text
    chat = run_cli(market, "plan", str(SAMPLES / "chat_tests.xlsx"))
    assert "map a header to MLSNumber (--mapping FILE) or plan by another key (--key)" in chat.err
    assert sum(writes(market).values()) == 0
    assert not Path("estatebot-runs").exists()


# --------------------------------------------------------------------------- two services


def test_plan_apply_and_sync_run_again_in_one_folder_against_another_service() -> None:
    # Two emulators one after the other (two ports, as two runs of `estatebot serve --port 0`):
    # the second apply must not take up the journal the first one wrote for the other service.
    for attempt in (1, 2):
        with running(seed="demo") as server:
            planned = run_cli(server, "plan", str(WEEK2), "--default", "CurrencySymbol=$")
            assert planned.code == 0, planned.text
            applied = run_cli(server, "apply", "plan.json")
            assert applied.code == 0, f"attempt {attempt}: {applied.text}"
            assert "Apply: 8 created, 21 updated" in applied.out
        with running(seed="demo") as server:
            synced = run_cli(server, *SYNC_WEEK2, "--yes")
            assert synced.code == 0, f"attempt {attempt}: {synced.text}"
            assert "Resuming" not in synced.out
            assert "Apply: 8 created, 21 updated, 4 deleted" in synced.out
    runs = sorted(folder.name.split("-")[0] for folder in Path("estatebot-runs").iterdir())
    assert runs == ["apply", "apply", "sync", "sync"]
