"""The guards that keep a wrong plan from losing listings, when it is made and when it is applied.

Over HTTP against the emulator (16 small-seed listings). A mis-mapped column that rewrites every
listing's MLSNumber is refused like a mass delete; a plan file edited by hand and sealed again is
checked again at apply time against the service as it is; an edit made on the service while an
apply with the default settings runs survives.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import estatebot as eb
from clirun import run_cli
from estatebot.emulator import EmulatorServer
from estatebot.errors import PlanError
from estatebot.listings.sync.apply.apply_options import ApplyOptions
from estatebot.listings.sync.report.apply_report import CHANGED
from factories import make_listings

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


def _mls(emulator: EmulatorServer) -> set[str]:
    with eb.Client(
        base_url=emulator.base_url, api_key=emulator.api_key, session_key=emulator.session_key
    ) as reader:
        return set(eb.pull_listings(reader, emulator.serial, progress=False)["MLSNumber"])


def mis_mapped_sheet(remote: pd.DataFrame) -> pd.DataFrame:
    """The listings as an export whose own record key (``ListingKey``, 32 hex digits) sits where
    the MLS number should be, and is mapped to MLSNumber by mistake."""
    sheet = remote.drop(columns=["MLSNumber"]).copy()
    sheet["ListingKey"] = [uuid.uuid4().hex for _ in range(len(sheet))]
    return sheet


# --------------------------------------------------------------------------- identities


def test_a_mapping_that_rewrites_every_identity_is_refused_naming_the_mapping(
    client: eb.Client, emulator: EmulatorServer
) -> None:
    remote = pull(client, emulator)
    sheet = eb.read_sheet(
        mis_mapped_sheet(remote), mapping={"ListingKey": "MLSNumber"}, defaults=SQUARE_FEET
    )
    with pytest.raises(PlanError) as refused:
        eb.plan_sync(sheet, remote, key="NewOaks")
    message = str(refused.value)
    assert f"MLSNumber or Url of {len(remote)} of {len(remote)}" in message
    assert "ListingKey → MLSNumber" in message
    assert f"force_identity_count={len(remote)}" in message
    assert remote["MLSNumber"].iloc[0] in message  # a listing named, before and after


def test_a_few_changed_identities_pass_and_a_confirmed_count_passes_many(
    client: eb.Client, emulator: EmulatorServer
) -> None:
    remote = pull(client, emulator)
    few = remote.copy()
    few.loc[few.index[:2], "MLSNumber"] = ["RENUMBERED-1", "RENUMBERED-2"]
    plan = eb.plan_sync(eb.read_sheet(few, defaults=SQUARE_FEET), remote, key="NewOaks")
    assert len(plan.updates) == 2
    many = eb.read_sheet(
        mis_mapped_sheet(remote), mapping={"ListingKey": "MLSNumber"}, defaults=SQUARE_FEET
    )
    with pytest.raises(PlanError, match="does not match the plan"):
        eb.plan_sync(many, remote, key="NewOaks", force_identity_count=3)
    confirmed = eb.plan_sync(many, remote, key="NewOaks", force_identity_count=len(remote))
    assert len(confirmed.updates) == len(remote)


def test_the_same_key_written_otherwise_is_no_new_identity(
    client: eb.Client, emulator: EmulatorServer
) -> None:
    remote = pull(client, emulator)
    sheet = remote.copy()
    sheet["MLSNumber"] = [f"  {value.lower()} " for value in sheet["MLSNumber"]]
    eb.plan_sync(eb.read_sheet(sheet, defaults=SQUARE_FEET), remote, key="NewOaks")


# --------------------------------------------------------------------------- at apply time


def deleting_plan(client: eb.Client, emulator: EmulatorServer, count: int) -> eb.SyncPlan:
    remote = pull(client, emulator)
    sheet = eb.read_sheet(remote.iloc[count:], defaults=SQUARE_FEET)
    return eb.plan_sync(sheet, remote, delete_missing=True, force_delete_count=count)


def test_a_plan_read_from_a_file_is_guarded_by_the_apply_not_by_the_file(
    client: eb.Client, emulator: EmulatorServer, tmp_path: Path
) -> None:
    plan = deleting_plan(client, emulator, 12)  # 75%, confirmed when planned
    assert plan.options["force_delete_count"] == 12
    path = plan.save(tmp_path / "plan.json")
    read_back = eb.SyncPlan.load(path)  # what a hand could have written and sealed again
    before = _mls(emulator)
    with pytest.raises(PlanError) as refused:
        read_back.apply(client, emulator.serial, progress=False)
    message = str(refused.value)
    assert "delete 12 of the 16 listings on the service now" in message
    assert "force_delete_count=12" in message
    assert "MLSNumber" in message  # the listings named, not only counted
    assert _mls(emulator) == before  # nothing written
    report = read_back.apply(client, emulator.serial, progress=False, force_delete_count=12)
    assert report.ok
    assert len(_mls(emulator)) == 4


def test_a_plan_made_here_applies_as_its_planner_confirmed(
    client: eb.Client, emulator: EmulatorServer
) -> None:
    plan = deleting_plan(client, emulator, 12)
    assert plan.apply(client, emulator.serial, progress=False).ok
    assert len(_mls(emulator)) == 4


def test_deletes_added_to_a_plan_by_hand_are_refused_at_apply(
    client: eb.Client, emulator: EmulatorServer, tmp_path: Path
) -> None:
    small = deleting_plan(client, emulator, 2)  # within the 20% guard
    large = deleting_plan(client, emulator, 12)
    small.deletes = large.deletes  # the file edited by hand, then sealed again by save()
    path = small.save(tmp_path / "edited.json")
    before = _mls(emulator)
    with pytest.raises(PlanError, match="delete 12 of the 16"):
        eb.SyncPlan.load(path).apply(
            client, emulator.serial, options=ApplyOptions(progress=False, force_delete_count=2)
        )
    assert _mls(emulator) == before


def test_identity_changes_read_from_a_file_need_the_apply_s_confirmation(
    client: eb.Client, emulator: EmulatorServer, tmp_path: Path
) -> None:
    remote = pull(client, emulator)
    sheet = eb.read_sheet(
        mis_mapped_sheet(remote), mapping={"ListingKey": "MLSNumber"}, defaults=SQUARE_FEET
    )
    plan = eb.plan_sync(sheet, remote, key="NewOaks", force_identity_count=len(remote))
    read_back = eb.SyncPlan.load(plan.save(tmp_path / "plan.json"))
    before = _mls(emulator)
    with pytest.raises(PlanError, match="change the MLSNumber or Url of 16 of the 16"):
        read_back.apply(client, emulator.serial, progress=False)
    assert _mls(emulator) == before


# --------------------------------------------------------------------------- edits mid-apply


def test_with_the_default_settings_an_edit_made_during_the_apply_survives(
    client: eb.Client, emulator: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator.add_listings(emulator.serial, make_listings(104))  # 120 listings in all
    remote = pull(client, emulator)
    sheet = remote.copy()
    sheet["Description"] = "Repainted throughout."
    plan = eb.plan_sync(eb.read_sheet(sheet, defaults=SQUARE_FEET), remote)
    assert len(plan.updates) == len(remote)
    last = plan.updates[-1]
    assert last.id is not None
    # Every update takes 300 ms: at the default 8 threads a window of 64 updates takes 2.4 s,
    # so the second window is sent past the default re-check delay (2 s).
    emulator.faults.latency_ms = 300
    emulator.faults.only = {"RealEstateUpdate"}
    started = time.monotonic()
    edited: list[float] = []
    update = client.listings.update

    def editing_once(body: Any, **options: Any) -> int:
        if not edited and time.monotonic() - started > 0.5:  # an edit half a second in
            data = emulator.store.listing_data(emulator.serial, [last.id])[last.id]
            data["Description"] = "Edited on the service while the apply ran"
            emulator.store.replace_listing(emulator.serial, last.id, data)
            edited.append(time.monotonic() - started)
        return update(body, **options)

    monkeypatch.setattr(client.listings, "update", editing_once)
    report = eb.apply_plan(plan, client, emulator.serial, progress=False)  # the defaults
    assert edited, "the edit was made while the apply ran"
    outcome = report.frame.set_index("key").loc[last.key]
    assert outcome["outcome"] == CHANGED
    data = emulator.store.listing_data(emulator.serial, [last.id])[last.id]
    assert data["Description"] == "Edited on the service while the apply ran"
    assert report.summary().counts["updated"] == len(remote) - 1


def test_the_re_check_window_is_eight_writes_a_thread() -> None:
    assert ApplyOptions().window == 64
    assert ApplyOptions(concurrency=2).window == 16
    assert ApplyOptions(concurrency=2, delete_chunk=100).delete_request == 16
    assert ApplyOptions(recheck_window=5).delete_request == 5


def test_the_command_line_checks_a_saved_plan_s_deletes_again_at_apply(
    client: eb.Client, emulator: EmulatorServer
) -> None:
    remote = pull(client, emulator)
    remote.iloc[12:][["MLSNumber"]].to_csv("sheet.csv", index=False)  # the four to keep
    planned = run_cli(
        emulator, "plan", "sheet.csv", "--delete-missing", "--force-delete-count", "12",
        "--out", "plan.json",
    )  # fmt: skip
    assert planned.code == 0, planned.text
    before = _mls(emulator)
    refused = run_cli(emulator, "apply", "plan.json")
    assert refused.code == 1, refused.text
    assert "delete 12 of the 16 listings on the service now" in refused.err
    assert "--force-delete-count 12" in refused.err
    assert "force_delete_count" not in refused.err
    assert _mls(emulator) == before
    applied = run_cli(emulator, "apply", "plan.json", "--force-delete-count", "12")
    assert applied.code == 0, applied.text
    assert len(_mls(emulator)) == 4
