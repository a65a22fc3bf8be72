"""The apply journal: writing, reading back, torn lines, and refusing another plan's journal."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from estatebot.errors import PlanError
from estatebot.listings.sync.apply.journal import Journal
from estatebot.listings.sync.apply.journal_records import op_id, read_journal

FP = "f" * 64
SERIAL = "3254a9d0424c4806b9ea3d0763ccf1bf"


def lines_of(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_events_are_written_one_json_line_each_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "sync.journal"
    with Journal(path, fingerprint=FP, serial=SERIAL, plan="p1") as journal:
        journal.record("update:A", "started", attempts=1)
        journal.record("update:A", "done", code=200, attempts=1, elapsed_ms=12.345)
        journal.record("create:B", "started", attempts=1)
        journal.record("create:B", "failed", code=500, message="Internal server error", attempts=1)
        journal.record_many(["delete:C", "delete:D"], "started", attempts=1)

    header, *events = lines_of(path)
    assert header["journal"] == "estatebot-apply"
    assert (header["fingerprint"], header["serial"], header["plan"]) == (FP, SERIAL, "p1")
    assert "created" in header
    assert [(e["op"], e["event"]) for e in events] == [
        ("update:A", "started"),
        ("update:A", "done"),
        ("create:B", "started"),
        ("create:B", "failed"),
        ("delete:C", "started"),
        ("delete:D", "started"),
    ]
    assert events[1]["elapsed_ms"] == 12.3
    assert all("time" in e for e in events)

    records = read_journal(path).records()
    assert records["update:A"].done
    assert records["create:B"].last == "failed"
    assert (records["create:B"].code, records["create:B"].message) == (500, "Internal server error")
    assert records["delete:C"].unconfirmed
    assert records["delete:D"].attempts == 1


def test_reopening_the_same_plan_appends_and_keeps_the_state(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with Journal(path, fingerprint=FP, serial=SERIAL) as journal:
        journal.record("update:A", "started", attempts=1)
        journal.record("update:A", "failed", code=500, attempts=1)
    with Journal(path, fingerprint=FP, serial=SERIAL) as journal:
        assert journal.records()["update:A"].last == "failed"
        journal.record("update:A", "started", attempts=2)
        journal.record("update:A", "done", code=200, attempts=2, id=7)
    record = read_journal(path).records()["update:A"]
    assert record.done
    assert (record.attempts, record.id) == (2, 7)
    assert record.events == ["started", "failed", "started", "done"]
    assert sum(1 for line in lines_of(path) if "journal" in line) == 1


def test_nothing_is_written_until_the_first_event(tmp_path: Path) -> None:
    path = tmp_path / "never.jsonl"
    Journal(path, fingerprint=FP, serial=SERIAL).close()
    assert not path.exists()


def test_a_torn_last_line_is_ignored_and_cut_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with Journal(path, fingerprint=FP, serial=SERIAL) as journal:
        journal.record("update:A", "started", attempts=1)
        journal.record("update:A", "done", code=200, attempts=1)
        journal.record("update:B", "started", attempts=1)
    with path.open("ab") as handle:  # a kill in the middle of writing B's outcome
        handle.write(b'{"op": "update:B", "event": "do')

    contents = read_journal(path)
    assert contents.torn
    records = contents.records()
    assert records["update:A"].done
    assert records["update:B"].unconfirmed

    with Journal(path, fingerprint=FP, serial=SERIAL) as journal:
        journal.record("update:B", "done", code=200, attempts=2)
    events = lines_of(path)[1:]  # every line parses again
    assert [(e["op"], e["event"]) for e in events][-1] == ("update:B", "done")
    assert not read_journal(path).torn


def test_a_complete_last_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with Journal(path, fingerprint=FP, serial=SERIAL) as journal:
        journal.record("update:A", "started", attempts=1)
    text = path.read_text(encoding="utf-8")
    path.write_text(text + '{"op": "update:A", "event": "done", "code": 200}', encoding="utf-8")
    assert read_journal(path).records()["update:A"].done
    with Journal(path, fingerprint=FP, serial=SERIAL) as journal:
        journal.record("update:B", "started", attempts=1)
    assert [e["op"] for e in lines_of(path)[1:]] == ["update:A", "update:A", "update:B"]


def test_a_journal_of_another_plan_or_chatbot_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with Journal(path, fingerprint=FP, serial=SERIAL, plan="p1") as journal:
        journal.record("update:A", "started", attempts=1)
    with pytest.raises(PlanError, match="another plan"):
        Journal(path, fingerprint="0" * 64, serial=SERIAL, plan="p1")
    with pytest.raises(PlanError, match="another plan made from the same listings"):
        Journal(path, fingerprint=FP, serial=SERIAL, plan="p2")
    with pytest.raises(PlanError, match="belongs to chatbot"):
        Journal(path, fingerprint=FP, serial="0" * 32, plan="p1")


def test_an_empty_file_is_a_new_journal(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text("", encoding="utf-8")
    with Journal(path, fingerprint=FP, serial=SERIAL) as journal:
        assert journal.records() == {}
        journal.record("delete:A", "started", attempts=1)
    assert lines_of(path)[0]["fingerprint"] == FP


def test_a_file_that_is_not_a_journal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("MLSNumber,Price\nA,1\n", encoding="utf-8")
    with pytest.raises(PlanError, match="not a readable apply journal"):
        read_journal(path)
    other = tmp_path / "other.json"
    other.write_text('{"hello": 1}\n', encoding="utf-8")
    with pytest.raises(PlanError, match="not an apply journal"):
        Journal(other, fingerprint=FP, serial=SERIAL)


def test_a_damaged_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with Journal(path, fingerprint=FP, serial=SERIAL) as journal:
        journal.record("update:A", "started", attempts=1)
        journal.record("update:A", "done", code=200, attempts=1)
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1][:10]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(PlanError, match="line 2"):
        read_journal(path)


def test_done_is_final(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    with Journal(path, fingerprint=FP, serial=SERIAL) as journal:
        journal.record("create:A", "started", attempts=1)
        journal.record("create:A", "done", code=200, attempts=1, id=5)
        journal.record("create:A", "started", attempts=2)  # a stray event after the fact
    record = read_journal(path).records()["create:A"]
    assert record.done
    assert record.id == 5


def test_threads_writing_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    journal = Journal(path, fingerprint=FP, serial=SERIAL)

    def work(worker: int) -> None:
        for i in range(100):
            name = op_id("update", f"K{worker}-{i}")
            journal.record(name, "started", attempts=1)
            journal.record(name, "done", code=200, attempts=1)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    journal.close()
    records = read_journal(path).records()
    assert len(records) == 800
    assert all(record.done for record in records.values())


def test_op_ids_are_action_and_key() -> None:
    assert op_id("update", "MLS1") == "update:MLS1"
    assert op_id("delete", "https://a/b:c") == "delete:https://a/b:c"


def test_the_journal_names_the_service_without_its_user_information(tmp_path: Path) -> None:
    from estatebot.listings.remote.sent_record import service_address

    class Addressed:
        base_url = "https://user:secret@api.example:8443/v1"

    address = service_address(Addressed())
    assert address == "https://api.example:8443/v1"
    journal = Journal(tmp_path / "j", fingerprint="f", serial="s", plan="p", service=address)
    journal.record("create:K1", "started", attempts=1)
    journal.close()
    assert "secret" not in (tmp_path / "j").read_text(encoding="utf-8")
    with pytest.raises(PlanError, match=r"written for the service at https://api\.example:8443/v1"):
        Journal(tmp_path / "j", fingerprint="f", serial="s", plan="p", service="http://other")
