"""What an apply does about what it cannot see: fields List never returns, edits made mid-apply.

Over HTTP against the emulator (16 small-seed listings). The emulator's store shows what the
service holds, including the fields List never returns (``AreaUnit``, ``Location``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import estatebot as eb
from estatebot.emulator import EmulatorServer
from estatebot.errors import APIConnectionError
from estatebot.listings.sync.report.apply_report import CHANGED, NOT_SENT

CHANGED_ROWS = 3
#: The pulled listings have no AreaUnit (List never returns it): a sheet made of them needs one.
SQUARE_FEET = {"AreaUnit": "Square Feet"}


@pytest.fixture
def client(emulator: EmulatorServer) -> Iterator[eb.Client]:
    with eb.Client(
        base_url=emulator.base_url,
        api_key=emulator.api_key,
        session_key=emulator.session_key,
        max_retries=0,
    ) as made:
        yield made


def pull(client: eb.Client, emulator: EmulatorServer) -> pd.DataFrame:
    return eb.pull_listings(client, emulator.serial, progress=False)


def repriced(remote: pd.DataFrame, step: float, **columns: Any) -> pd.DataFrame:
    """The pulled listings as a sheet, the first rows' descriptions saying a new price."""
    sheet = remote.copy()
    first = sheet.index[:CHANGED_ROWS]
    sheet.loc[first, "Description"] = f"Now {step:.0f} off the asking price."
    for name, value in columns.items():
        sheet[name] = value
    return sheet


def stored(emulator: EmulatorServer, ids: list[int]) -> dict[int, dict[str, Any]]:
    return emulator.store.listing_data(emulator.serial, ids)


def first_ids(remote: pd.DataFrame) -> list[int]:
    return [int(i) for i in remote["ID"].iloc[:CHANGED_ROWS]]


def place_riverside(client: eb.Client, emulator: EmulatorServer) -> list[int]:
    """Apply a sheet giving Location and AreaUnit to the first listings; their IDs."""
    remote = pull(client, emulator)
    sheet = eb.read_sheet(repriced(remote, 1000, Location="Riverside", AreaUnit="Square Meters"))
    plan = eb.plan_sync(sheet, remote)
    assert len(plan.updates) == CHANGED_ROWS
    assert eb.apply_plan(plan, client, emulator.serial, progress=False).ok
    ids = first_ids(remote)
    for data in stored(emulator, ids).values():
        assert (data["Location"], data["AreaUnit"]) == ("Riverside", "Square Meters")
    return ids


# --------------------------------------------------------------------------- unseen fields


def test_an_update_whose_sheet_leaves_out_unseen_fields_resends_the_last_sent(
    client: eb.Client, emulator: EmulatorServer
) -> None:
    ids = place_riverside(client, emulator)
    # List never returns them; the pull carries the values last sent (the record of values sent).
    listed = eb.pull_listings(client, emulator.serial, progress=False, sent_values=False)
    assert listed["Location"].isna().all()
    remote = pull(client, emulator)
    placed = remote.set_index("ID").loc[ids]
    assert (placed["Location"] == "Riverside").all()
    assert (placed["AreaUnit"] == "Square Meters").all()
    sheet = eb.read_sheet(repriced(remote, 500), defaults=SQUARE_FEET)
    plan = eb.plan_sync(sheet, remote)
    assert [op.unknown for op in plan.updates] == [()] * CHANGED_ROWS
    report = eb.apply_plan(plan, client, emulator.serial, progress=False)
    assert report.ok
    for data in stored(emulator, ids).values():
        assert (data["Location"], data["AreaUnit"]) == ("Riverside", "Square Meters")


def test_without_a_record_the_unseen_fields_follow_the_sheet(
    client: eb.Client, emulator: EmulatorServer
) -> None:
    # The control: what the record prevents (Update replaces the whole listing).
    ids = place_riverside(client, emulator)
    remote = eb.pull_listings(client, emulator.serial, progress=False, sent_values=False)
    sheet = eb.read_sheet(repriced(remote, 500), defaults=SQUARE_FEET)
    plan = eb.plan_sync(sheet, remote)
    assert any("remote value unknown" in note for note in plan.notes)
    eb.apply_plan(plan, client, emulator.serial, progress=False, sent_values=False)
    for data in stored(emulator, ids).values():
        assert data.get("Location") in (None, "")
        assert data["AreaUnit"] == "Square Feet"


@pytest.mark.parametrize(
    ("location", "stored_location"), [("Old Town", "Old Town"), ("#CLEAR", "")]
)
def test_a_sheet_that_gives_or_clears_the_field_wins_over_the_record(
    client: eb.Client, emulator: EmulatorServer, location: str, stored_location: str
) -> None:
    ids = place_riverside(client, emulator)
    remote = pull(client, emulator)
    sheet = eb.read_sheet(repriced(remote, 500, Location=location, AreaUnit="Square Feet"))
    plan = eb.plan_sync(sheet, remote)
    assert [op.unknown for op in plan.updates] == [()] * CHANGED_ROWS
    eb.apply_plan(plan, client, emulator.serial, progress=False)
    for data in stored(emulator, ids).values():
        assert (data.get("Location") or "", data["AreaUnit"]) == (stored_location, "Square Feet")


def test_a_restore_sends_the_unseen_fields_last_sent(
    client: eb.Client, emulator: EmulatorServer, tmp_path: Path
) -> None:
    ids = place_riverside(client, emulator)
    remote = pull(client, emulator)
    keep = remote.iloc[CHANGED_ROWS:]
    plan = eb.plan_sync(eb.read_sheet(keep), remote, delete_missing=True)
    assert len(plan.deletes) == CHANGED_ROWS
    backup = tmp_path / "before.json"
    assert eb.apply_plan(plan, client, emulator.serial, progress=False, backup=backup).ok
    assert stored(emulator, ids) == {}
    report = eb.listings.restore(backup, client, emulator.serial, progress=False)
    assert report.ok
    again = pull(client, emulator)
    new_ids = [int(i) for i in again.loc[again["MLSNumber"].isin(remote["MLSNumber"][:3]), "ID"]]
    restored = stored(emulator, new_ids)
    assert len(restored) == CHANGED_ROWS
    for data in restored.values():
        assert (data["Location"], data["AreaUnit"]) == ("Riverside", "Square Meters")
    assert not report.frame["message"].str.contains("Square Feet").any()


# --------------------------------------------------------------------------- edits mid-apply


def edit_midway(
    client: eb.Client, emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch, listing: int
) -> list[str]:
    """Make the first update sent also edit ``listing`` on the service, by hand as it were."""
    sent: list[str] = []
    update = client.listings.update

    def interfering(body: Any, **options: Any) -> int:
        if not sent:
            data = stored(emulator, [listing])[listing]
            data["Description"] = "Edited on the service while the apply ran"
            emulator.store.replace_listing(emulator.serial, listing, data)
        sent.append(str(options.get("key")))
        return update(body, **options)

    monkeypatch.setattr(client.listings, "update", interfering)
    return sent


def test_a_listing_edited_during_the_apply_is_not_overwritten(
    client: eb.Client, emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = pull(client, emulator)
    plan = eb.plan_sync(eb.read_sheet(repriced(remote, 1000), defaults=SQUARE_FEET), remote)
    last = plan.updates[-1]
    assert last.id is not None
    sent = edit_midway(client, emulator, monkeypatch, last.id)
    report = eb.apply_plan(
        plan,
        client,
        emulator.serial,
        progress=False,
        concurrency=1,
        recheck_after=0,
        recheck_window=1,
    )
    outcome = report.frame.set_index("key").loc[last.key]
    assert outcome["outcome"] == CHANGED
    assert "edited on the service" in outcome["message"]
    assert last.key not in sent
    data = stored(emulator, [last.id])[last.id]
    assert data["Description"] == "Edited on the service while the apply ran"
    assert report.summary().counts == {"updated": CHANGED_ROWS - 1, CHANGED: 1, "unchanged": 13}
    assert any("re-checked" in note for note in report.notes)


def test_a_quick_apply_is_not_re_checked(client: eb.Client, emulator: EmulatorServer) -> None:
    remote = pull(client, emulator)
    plan = eb.plan_sync(eb.read_sheet(repriced(remote, 1000), defaults=SQUARE_FEET), remote)
    lists = emulator.request_counts.get("RealEstateList", 0)
    pull(client, emulator)
    one_pull = emulator.request_counts["RealEstateList"] - lists
    lists = emulator.request_counts["RealEstateList"]
    report = eb.apply_plan(plan, client, emulator.serial, progress=False, recheck_after=600)
    assert report.ok
    # One pull for the stale check, and nothing more.
    assert emulator.request_counts["RealEstateList"] - lists == one_pull


def test_a_window_that_cannot_be_re_checked_is_held_back(
    client: eb.Client, emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = pull(client, emulator)
    plan = eb.plan_sync(eb.read_sheet(repriced(remote, 1000), defaults=SQUARE_FEET), remote)
    update = client.listings.update

    def failing_lists(body: Any, **options: Any) -> int:
        emulator.faults.only = {"RealEstateList"}
        emulator.faults.fail_rate = 1.0
        return update(body, **options)

    monkeypatch.setattr(client.listings, "update", failing_lists)
    report = eb.apply_plan(
        plan,
        client,
        emulator.serial,
        progress=False,
        concurrency=1,
        recheck_after=0,
        recheck_window=1,
    )
    frame = report.frame[report.frame["action"] == "update"]
    # The first window was checked before the fault; each later one is held back.
    assert frame["outcome"].tolist() == ["done", NOT_SENT, NOT_SENT]
    assert frame["message"].iloc[1].startswith("not sent: its listing could not be re-checked")
    assert any("re-checks failed" in note for note in report.notes)


# --------------------------------------------------------------------------- unanswered deletes


@pytest.mark.parametrize("carried_out", [True, False])
def test_an_unanswered_delete_is_looked_up_never_sent_twice_blind(
    client: eb.Client,
    emulator: EmulatorServer,
    monkeypatch: pytest.MonkeyPatch,
    carried_out: bool,
) -> None:
    remote = pull(client, emulator)
    keep = remote.iloc[CHANGED_ROWS:]
    plan = eb.plan_sync(eb.read_sheet(keep, defaults=SQUARE_FEET), remote, delete_missing=True)
    assert len(plan.deletes) == CHANGED_ROWS
    delete = client.listings.delete
    calls: list[list[str]] = []

    def lost_reply(serial: str, keys: Any, **options: Any) -> int:
        calls.append(list(keys))
        if len(calls) == 1:
            if carried_out:
                delete(serial, keys, **options)
            raise APIConnectionError("the connection dropped", operation="RealEstateDelete")
        return delete(serial, keys, **options)

    monkeypatch.setattr(client.listings, "delete", lost_reply)
    report = eb.apply_plan(plan, client, emulator.serial, progress=False)
    assert report.ok
    assert report.summary().counts["deleted"] == CHANGED_ROWS
    assert stored(emulator, first_ids(remote)) == {}
    messages = report.frame.loc[report.frame["action"] == "delete", "message"].tolist()
    if carried_out:
        assert len(calls) == 1  # gone after the lost reply: not sent again
        assert all("gone from the service after an unanswered attempt" in m for m in messages)
    else:
        assert len(calls) == 2  # still there: sent once more
        assert sorted(calls[1]) == sorted(calls[0])
