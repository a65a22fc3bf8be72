"""The fleet's serials, listings and sample files, the per-chatbot faults and the in-flight
counter, without a server."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estatebot.emulator import Faults, agent_id, fleet_listings, fleet_serials
from estatebot.emulator.app import InFlight
from estatebot.emulator.fleet_seed import AGENT_COLUMN, check_fleet_size
from estatebot.emulator.seed import validated_listings
from estatebot.sample.fleet_sample import (
    FLEET_HEADERS,
    MANIFEST_COLUMNS,
    main,
    write_fleet_sample,
)

# --------------------------------------------------------------------------- serials


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 400), more=st.integers(0, 60))
def test_fleet_serials_are_distinct_stable_and_grow_by_appending(n: int, more: int) -> None:
    serials = fleet_serials(n)
    assert len(serials) == n == len(set(serials))
    assert all(re.fullmatch(r"[0-9a-f]{32}", serial) for serial in serials)
    assert fleet_serials(n) == serials
    assert fleet_serials(n + more)[:n] == serials


@pytest.mark.parametrize(
    ("chatbots", "listings", "named"),
    [(-1, 20, "chatbots"), (10_000, 20, "chatbots"), (True, 20, "chatbots"),
     (3, -5, "listings_per_chatbot"), (3, 100_000, "listings_per_chatbot"),
     (3, 2.5, "listings_per_chatbot")],
)  # fmt: skip
def test_a_fleet_size_out_of_range_names_the_parameter_and_value(
    chatbots: int, listings: int, named: str
) -> None:
    given_value = chatbots if named == "chatbots" else listings
    with pytest.raises(ValueError, match=rf"^{named} must be ") as raised:
        check_fleet_size(chatbots, listings)
    assert str(raised.value).endswith(f"not {given_value!r}")


# --------------------------------------------------------------------------- listings


@settings(max_examples=15, deadline=None)
@given(number=st.integers(1, 9999), count=st.integers(0, 40), seed=st.integers(0, 2**32))
def test_fleet_listings_are_stored_exactly_as_validation_would_store_them(
    number: int, count: int, seed: int
) -> None:
    listings = fleet_listings(number, count, seed)
    assert len(listings) == count
    # The fast path skips validation: it must build what validation gives back.
    assert validated_listings(listings) == listings
    assert fleet_listings(number, count, seed) == listings
    for listing in listings:
        extensions = {item["Key"]: item["value"] for item in listing["ExtensionColumn"]}
        assert extensions[AGENT_COLUMN] == agent_id(number)
        assert re.fullmatch(r"[0-9a-f]{32}", extensions["ListingKey"])


def test_no_two_fleet_listings_share_an_mls_number_or_url() -> None:
    mls: list[str] = []
    urls: list[str] = []
    for number in (1, 2, 10, 100, 101, 9999):
        for listing in fleet_listings(number, 120):
            mls.append(listing["MLSNumber"])
            urls.append(listing["Url"])
    assert len(set(mls)) == len(mls)
    assert len(set(urls)) == len(urls)


def test_a_chatbots_listings_do_not_depend_on_the_others_but_on_the_seed() -> None:
    assert fleet_listings(3, 10) == fleet_listings(3, 10, seed=0)
    assert fleet_listings(3, 10, seed=1) != fleet_listings(3, 10, seed=0)
    # A longer list starts with the shorter one: each listing is drawn in turn.
    assert fleet_listings(3, 25)[:10] == fleet_listings(3, 10)


# --------------------------------------------------------------------------- faults


def test_only_chatbots_limits_every_fault_to_the_chatbots_named() -> None:
    faults = Faults(throttle_burst=3, latency_ms=40)
    faults.only_chatbots = ["aaa"]
    assert faults.only_chatbots == frozenset({"aaa"})
    assert not faults.decide("RealEstateList", "bbb").any
    assert not faults.decide("ModelList", None).any
    assert faults.throttle_burst == 3  # the others used no slot
    decision = faults.decide("RealEstateList", "aaa")
    assert decision.throttle
    assert decision.latency_ms == 40
    assert faults.throttle_burst == 2
    assert any("only chatbots aaa" in line for line in faults.in_effect())
    faults.clear()
    assert faults.only_chatbots is None


@pytest.mark.parametrize("value", ["abc", b"abc", 5, ["ok", ""], ["ok", 3]])
def test_only_chatbots_refuses_what_is_not_a_collection_of_serials(value: object) -> None:
    faults = Faults()
    with pytest.raises(ValueError, match="only_chatbots"):
        faults.only_chatbots = value  # type: ignore[assignment]
    assert faults.only_chatbots is None  # unchanged


# --------------------------------------------------------------------------- in flight


def test_in_flight_counts_now_and_the_peak_until_reset() -> None:
    counter = InFlight()
    for _ in range(3):
        counter.enter()
    counter.leave()
    assert (counter.now, counter.peak) == (2, 3)
    counter.reset_peak()
    assert counter.peak == 2
    counter.leave()
    counter.leave()
    assert (counter.now, counter.peak) == (0, 2)


# --------------------------------------------------------------------------- the sample files


def test_the_fleet_sample_holds_every_chatbot_once_shared_and_on_its_own(tmp_path: Path) -> None:
    sample = write_fleet_sample(tmp_path, chatbots=4, listings_per_chatbot=25, changed=0.2)
    assert sample.serials == fleet_serials(4)
    assert sample.agents == ["A001", "A002", "A003", "A004"]
    shared = pd.read_excel(sample.export, dtype=object, engine="calamine")
    assert tuple(shared.columns) == FLEET_HEADERS
    assert len(shared) == sample.rows == 100
    assert shared["ListingId"].is_unique
    for number, (serial, agent) in enumerate(zip(sample.serials, sample.agents, strict=True), 1):
        own = pd.read_excel(sample.sheets[agent], dtype=object, engine="calamine")
        rows = shared[shared[AGENT_COLUMN] == agent].reset_index(drop=True)
        pd.testing.assert_frame_equal(own, rows)
        # round(0.2 * 25) rows have a new price; every other row names a listing as seeded.
        assert len(sample.changed[serial]) == 5
        seeded = {item["MLSNumber"]: item for item in fleet_listings(number, 25)}
        assert set(rows["ListingId"]) == set(seeded)
        for row in rows.itertuples():
            price = seeded[row.ListingId].get("SalePrice") or seeded[row.ListingId]["RentPrice"]
            assert (row.ListPrice != price) == (row.ListingId in sample.changed[serial])


def test_the_manifests_name_every_serial_with_its_sheet(tmp_path: Path) -> None:
    sample = write_fleet_sample(tmp_path / "fleet", chatbots=3, listings_per_chatbot=4)
    with sample.manifest.open(encoding="utf-8") as file:
        shared = list(csv.DictReader(file))
    with sample.manifest_own_sheets.open(encoding="utf-8") as file:
        own = list(csv.DictReader(file))
    assert [tuple(row) for row in (shared[0], own[0])] == [MANIFEST_COLUMNS] * 2
    assert [row["serial"] for row in shared] == [row["serial"] for row in own] == sample.serials
    assert [row["where"] for row in shared] == [f"{AGENT_COLUMN} = A00{i}" for i in (1, 2, 3)]
    assert {row["sheet"] for row in shared} == {"mls_export.xlsx"}
    assert [row["sheet"] for row in own] == [f"sheets/A00{i}.xlsx" for i in (1, 2, 3)]
    assert all((sample.folder / row["sheet"]).is_file() for row in own)
    assert [row["name"] for row in own] == ["Agent 001 Homes", "Agent 002 Homes", "Agent 003 Homes"]


@pytest.mark.parametrize("changed", [-0.1, 1.5, float("nan"), True])
def test_a_bad_share_of_changes_writes_nothing(tmp_path: Path, changed: float) -> None:
    with pytest.raises(ValueError, match=r"^changed must be a share from 0 to 1, not"):
        write_fleet_sample(tmp_path / "fleet", chatbots=2, listings_per_chatbot=3, changed=changed)
    assert not (tmp_path / "fleet").exists()


def test_the_command_line_writes_the_sample_and_refuses_a_bad_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "fleet"
    args = [str(folder), "--chatbots", "2", "--listings-per-chatbot", "10", "--changed", "0.3"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "20 rows, 6 with a new price" in out
    assert sorted(p.name for p in (folder / "sheets").iterdir()) == ["A001.xlsx", "A002.xlsx"]
    with pytest.raises(SystemExit) as stopped:
        main([str(tmp_path / "other"), "--changed", "2"])
    assert stopped.value.code == 2
    assert "changed must be a share from 0 to 1, not 2.0" in capsys.readouterr().err
    assert not (tmp_path / "other").exists()
