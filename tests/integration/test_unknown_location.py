"""A Location nobody here knows is never blanked without being told: the default holds back.

List never returns Location and Update replaces a whole listing, so an update of a listing that
another tool gave a Location would blank it. Over HTTP against the emulator (16 small-seed
listings), with ``ESTATEBOT_BLANK_UNKNOWN_LOCATION`` unset: such updates are held back, each
named in the plan; ``blank_unknown_location=True`` (``--blank-unknown-location``) sends it
empty; a Location sent from here, or given by the sheet, is known and goes with the update.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

import estatebot as eb
from clirun import cli_env, run_cli
from estatebot.emulator import EmulatorServer

SQUARE_FEET = {"AreaUnit": "Square Feet"}
UNIT = ("--default", "AreaUnit=Square Feet")
EDITED = 3


@pytest.fixture(autouse=True)
def _location_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ESTATEBOT_BLANK_UNKNOWN_LOCATION", raising=False)


@pytest.fixture
def client(emulator: EmulatorServer) -> Iterator[eb.Client]:
    with eb.Client(
        base_url=emulator.base_url, api_key=emulator.api_key, session_key=emulator.session_key
    ) as made:
        yield made


def set_by_another_tool(emulator: EmulatorServer, ids: list[int]) -> None:
    for listing in ids:
        data = emulator.store.listing_data(emulator.serial, [listing])[listing]
        data["Location"] = "Riverside, by the old mill"
        emulator.store.replace_listing(emulator.serial, listing, data)


def stored(emulator: EmulatorServer, ids: list[int]) -> dict[int, dict[str, Any]]:
    return emulator.store.listing_data(emulator.serial, ids)


def edited(remote: pd.DataFrame, **columns: Any) -> pd.DataFrame:
    sheet = remote.copy()
    sheet.loc[sheet.index[:EDITED], "Description"] = "Repainted throughout."
    for name, value in columns.items():
        sheet[name] = value
    return sheet


def test_an_update_that_would_blank_an_unknown_location_is_held_back_by_name(
    client: eb.Client, emulator: EmulatorServer
) -> None:
    remote = eb.pull_listings(client, emulator.serial, progress=False)
    ids = [int(i) for i in remote["ID"].iloc[:EDITED]]
    set_by_another_tool(emulator, ids)
    plan = eb.plan_sync(eb.read_sheet(edited(remote), defaults=SQUARE_FEET), remote)
    assert plan.updates == []
    held = {h.id: h for h in plan.held_back}
    assert set(held) == set(ids)
    for item in held.values():
        assert item.field == "Location"
        assert item.whole
        assert "blank_unknown_location=True" in item.message
    shown = plan.to_frame()
    assert shown["key"].isin(remote["MLSNumber"].iloc[:EDITED]).sum() >= EDITED
    assert "Location" in plan._repr_html_()
    report = plan.apply(client, emulator.serial, progress=False)
    assert report.summary().counts.get("updated", 0) == 0
    for data in stored(emulator, ids).values():
        assert data["Location"] == "Riverside, by the old mill"  # nothing blanked


def test_told_to_blank_it_the_update_sends_it_empty(
    client: eb.Client, emulator: EmulatorServer
) -> None:
    remote = eb.pull_listings(client, emulator.serial, progress=False)
    ids = [int(i) for i in remote["ID"].iloc[:EDITED]]
    set_by_another_tool(emulator, ids)
    sheet = eb.read_sheet(edited(remote), defaults=SQUARE_FEET)
    plan = eb.plan_sync(sheet, remote, blank_unknown_location=True)
    assert len(plan.updates) == EDITED
    assert plan.held_back == []
    assert plan.apply(client, emulator.serial, progress=False).ok
    for data in stored(emulator, ids).values():
        assert data.get("Location") in (None, "")


def test_a_location_sent_from_here_or_given_by_the_sheet_goes_with_the_update(
    client: eb.Client, emulator: EmulatorServer
) -> None:
    remote = eb.pull_listings(client, emulator.serial, progress=False)
    ids = [int(i) for i in remote["ID"].iloc[:EDITED]]
    given = eb.read_sheet(edited(remote, Location="Old Town"), defaults=SQUARE_FEET)
    first = eb.plan_sync(given, remote)
    assert [h.field for h in first.held_back] == []  # the sheet states it
    assert first.apply(client, emulator.serial, progress=False).ok
    # Now the record knows what was sent: a sheet without the column keeps it.
    again = eb.pull_listings(client, emulator.serial, progress=False)
    later = edited(again).drop(columns=["Location"])
    later.loc[later.index[:EDITED], "Description"] = "Sold furnished."
    plan = eb.plan_sync(eb.read_sheet(later, defaults=SQUARE_FEET), again)
    assert plan.held_back == []
    assert len(plan.updates) == EDITED
    assert plan.apply(client, emulator.serial, progress=False).ok
    for data in stored(emulator, ids).values():
        assert data["Location"] == "Old Town"


def test_the_command_line_holds_back_and_names_the_flag(
    client: eb.Client, emulator: EmulatorServer
) -> None:
    remote = eb.pull_listings(client, emulator.serial, progress=False)
    ids = [int(i) for i in remote["ID"].iloc[:EDITED]]
    set_by_another_tool(emulator, ids)
    # Only what the analyst states: the key and the new descriptions (blank cells say nothing).
    sheet = edited(remote)[["MLSNumber", "Description"]]
    sheet.to_csv("sheet.csv", index=False)
    env = cli_env(emulator)
    env.pop("ESTATEBOT_BLANK_UNKNOWN_LOCATION", None)
    held = run_cli(emulator, "sync", "sheet.csv", "--yes", *UNIT, env=env)
    assert held.code == 0, held.text
    assert f"Held back ({EDITED})" in held.text
    assert "--blank-unknown-location" in held.text
    assert "blank_unknown_location=True" not in held.text
    for data in stored(emulator, ids).values():
        assert data["Location"] == "Riverside, by the old mill"
    blanked = run_cli(
        emulator, "sync", "sheet.csv", "--yes", *UNIT, "--blank-unknown-location", env=env
    )
    assert blanked.code == 0, blanked.text
    for data in stored(emulator, ids).values():
        assert data.get("Location") in (None, "")
