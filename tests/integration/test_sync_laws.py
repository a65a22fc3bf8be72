"""The laws of the sync, each held over HTTP against the emulator (see the README's Guarantees).

The emulator serves the 200-listing sample market of ``sample_data/`` (``seed="demo"``); sheets
are the sample exports, or the pulled listings written to a file and read back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import estatebot as eb
from estatebot.emulator import EmulatorServer, running
from estatebot.listings import write_frame
from estatebot.sample import READ_OPTIONS

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data"


@pytest.fixture
def market() -> Iterator[EmulatorServer]:
    """The emulator holding the sample market (200 listings)."""
    with running() as server:
        yield server


@pytest.fixture
def client(market: EmulatorServer) -> Iterator[eb.Client]:
    with eb.Client(
        base_url=market.base_url, api_key=market.api_key, session_key=market.session_key
    ) as made:
        yield made


def pull(client: eb.Client, market: EmulatorServer) -> pd.DataFrame:
    return eb.pull_listings(client, market.serial, progress=False)


def cli_env(market: EmulatorServer) -> dict[str, str]:
    """The environment the command line reads its service from."""
    return {
        "ESTATEBOT_BASE_URL": market.base_url,
        "ESTATEBOT_API_KEY": market.api_key,
        "ESTATEBOT_SESSION_KEY": market.session_key,
        "ESTATEBOT_PROGRESS": "0",
    }


def changed_fields(plan: eb.SyncPlan) -> Counter[str]:
    return Counter(change.field for op in plan.updates for change in op.changes)


# --------------------------------------------------------------------------- law 1


def test_defaults_never_overwrite_a_listings_own_value(
    client: eb.Client, market: EmulatorServer
) -> None:
    # The portal export has no parking column: the recipe's ParkingSpots=0 and LotArea=0 fill
    # only listings without a value, and every sample listing has both.
    remote = pull(client, market)
    assert remote["ParkingSpots"].notna().all()
    assert (remote["ParkingSpots"] > 0).sum() > 100
    sheet = eb.read_sheet(SAMPLE / "portal_export.csv", **READ_OPTIONS["portal"])
    assert sheet.defaulted["ParkingSpots"].all()
    plan = eb.plan_sync(sheet, remote)
    assert plan.updates
    assert changed_fields(plan)["ParkingSpots"] == 0
    assert changed_fields(plan)["LotArea"] == 0
    eb.apply_plan(plan, client, market.serial, progress=False)
    after = pull(client, market).set_index("MLSNumber")
    before = remote.set_index("MLSNumber")
    assert after["ParkingSpots"].equals(before["ParkingSpots"])


def test_defaults_fill_empty_fields_and_new_listings(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    remote = pull(client, market)
    empty = remote["HOAMonth"].isna()
    assert 0 < empty.sum() < len(remote)
    sheet_frame = remote.drop(columns=["HOAMonth"])
    new = sheet_frame.iloc[[0]].assign(
        MLSNumber="NEW-1", Url="https://homes.example/new-1", ID=pd.NA
    )
    path = write_frame(pd.concat([sheet_frame, new], ignore_index=True), tmp_path / "sheet.xlsx")
    sheet = eb.read_sheet(path, defaults={"HOAMonth": 0, "AreaUnit": "Square Feet"})
    plan = eb.plan_sync(sheet, remote)
    assert {op.key for op in plan.updates} == set(remote.loc[empty, "MLSNumber"])
    assert changed_fields(plan) == Counter({"HOAMonth": int(empty.sum())})
    assert [op.key for op in plan.creates] == ["NEW-1"]
    assert plan.creates[0].body is not None
    assert plan.creates[0].body["HOAMonth"] == 0
    report = eb.apply_plan(plan, client, market.serial, progress=False)
    assert report.ok, report
    after = pull(client, market).set_index("MLSNumber")
    kept = remote.loc[~empty].set_index("MLSNumber")["HOAMonth"]
    assert after.loc[kept.index, "HOAMonth"].equals(kept)
    assert (after.loc[remote.loc[empty, "MLSNumber"], "HOAMonth"] == 0).all()
    assert after.loc["NEW-1", "HOAMonth"] == 0


def test_overrides_write_every_listing_and_the_plan_says_so(
    client: eb.Client, market: EmulatorServer
) -> None:
    remote = pull(client, market)
    sheet = eb.read_sheet(
        SAMPLE / "mls_export.xlsx",
        defaults={"CurrencySymbol": "$"},
        overrides={"ParkingSpots": 0},
    )
    plan = eb.plan_sync(sheet, remote)
    having = int((remote["ParkingSpots"] != 0).sum())
    assert changed_fields(plan) == Counter({"ParkingSpots": having})
    assert any("overrides: ParkingSpots=0" in note for note in plan.notes)
    assert plan.options["overrides"] == {"ParkingSpots": "0"}
    eb.apply_plan(plan, client, market.serial, progress=False)
    assert (pull(client, market)["ParkingSpots"] == 0).all()


# --------------------------------------------------------------------------- law 4


def with_short_zip(remote: pd.DataFrame, path: Path) -> tuple[Path, str, str]:
    """The pulled listings written back with one ZIP as a number (``02116`` → ``2116``)."""
    frame = remote.astype({"ZIP": object})
    at = remote.index[remote["ZIP"].str.startswith("0").fillna(False)][0]
    frame.loc[at, "ZIP"] = int(remote.loc[at, "ZIP"])
    return write_frame(frame, path), str(remote.loc[at, "MLSNumber"]), str(remote.loc[at, "ZIP"])


def test_a_value_the_reader_warns_about_is_held_back(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    remote = pull(client, market)
    path, key, zip_code = with_short_zip(remote, tmp_path / "sheet.xlsx")
    sheet = eb.read_sheet(path, defaults={"AreaUnit": "Square Feet"})
    (warning,) = sheet.warnings.itertuples()
    plan = eb.plan_sync(sheet, remote)
    assert plan.is_empty
    (held,) = plan.held_back
    assert (held.key, held.field, held.value, held.row) == (key, "ZIP", zip_code[1:], warning.row)
    assert "leading zero" in held.message
    assert "1 held back" in plan.summary()
    assert plan.summary()["held_back"] == 1
    assert "Held back" in plan._repr_html_()
    assert (plan.to_frame()["action"] == "held back").sum() == 1
    again = eb.SyncPlan.load(plan.save(tmp_path / "plan.json"))
    assert again.held_back == plan.held_back
    eb.apply_plan(plan, client, market.serial, progress=False)
    assert pull(client, market).set_index("MLSNumber").loc[key, "ZIP"] == zip_code


def test_accept_flagged_plans_the_warned_value(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    remote = pull(client, market)
    path, key, zip_code = with_short_zip(remote, tmp_path / "sheet.xlsx")
    sheet = eb.read_sheet(path, defaults={"AreaUnit": "Square Feet"})
    plan = eb.plan_sync(sheet, remote, accept_flagged=True)
    assert not plan.held_back
    (update,) = plan.updates
    assert update.key == key
    assert [(c.field, c.before, c.after) for c in update.changes] == [
        ("ZIP", zip_code, zip_code[1:])
    ]


def test_a_new_listing_is_created_without_the_warned_value(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    remote = pull(client, market)
    at = remote.index[remote["ZIP"].str.startswith("0").fillna(False)][0]
    new = (
        remote.loc[[at]]
        .astype({"ZIP": object})
        .assign(MLSNumber="NEW-Z", Url="https://homes.example/new-z", ID=pd.NA)
    )
    new["ZIP"] = int(remote.loc[at, "ZIP"])
    path = write_frame(pd.concat([remote.astype({"ZIP": object}), new]), tmp_path / "s.xlsx")
    plan = eb.plan_sync(eb.read_sheet(path, defaults={"AreaUnit": "Square Feet"}), remote)
    (create,) = plan.creates
    assert create.body is not None
    assert create.body.get("ZIP") in (None, "")
    assert [(h.key, h.field) for h in plan.held_back] == [("NEW-Z", "ZIP")]


# --------------------------------------------------------------------------- law 3


def test_two_export_styles_of_one_market_plan_nothing_after_the_first_sync(
    client: eb.Client, market: EmulatorServer
) -> None:
    styles = [
        SAMPLE / "mls_system_export.xlsx",
        SAMPLE / "mls_export.xlsx",
        SAMPLE / "mls_system_export.xlsx",
        SAMPLE / "mls_export.xlsx",
    ]
    for turn, path in enumerate(styles):
        sheet = eb.read_sheet(path, defaults={"CurrencySymbol": "$"})
        plan = eb.plan_sync(sheet, pull(client, market))
        if turn:
            assert plan.is_empty, (path.name, plan.summary(), changed_fields(plan))
        eb.apply_plan(plan, client, market.serial, progress=False)


def test_extension_keys_merge_by_key_and_a_cleared_cell_removes_its_key(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    remote = pull(client, market)
    pools = remote["ExtensionColumn"].map(lambda ext: "Pool" in ext and len(ext) > 1)
    target = str(remote.loc[pools, "MLSNumber"].iloc[0])
    own = dict(remote.loc[pools, "ExtensionColumn"].iloc[0])
    frame = remote.drop(columns=["ExtensionColumn"]).assign(Waterfront=None, Pool=None)
    at = frame.index[frame["MLSNumber"] == target][0]
    frame.loc[at, "Waterfront"] = "Yes"
    frame.loc[at, "Pool"] = "#CLEAR"
    sheet = eb.read_sheet(
        write_frame(frame, tmp_path / "s.xlsx"), defaults={"AreaUnit": "Square Feet"}
    )
    plan = eb.plan_sync(sheet, remote)
    (update,) = plan.updates
    assert update.key == target
    (change,) = update.changes
    assert change.field == "ExtensionColumn"
    assert change.before == {"Pool": own["Pool"]}
    assert change.after == {"Waterfront": "Yes"}
    eb.apply_plan(plan, client, market.serial, progress=False)
    after = pull(client, market).set_index("MLSNumber").loc[target, "ExtensionColumn"]
    expected = {k: v for k, v in own.items() if k != "Pool"} | {"Waterfront": "Yes"}
    assert after == expected


# --------------------------------------------------------------------------- law 2


def test_a_missing_required_column_keeps_the_remote_value(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    remote = pull(client, market)
    remote = remote[remote["SalePrice"].notna()].reset_index(drop=True)
    frame = remote.drop(columns=["YearBuilt"]).copy()
    target = str(frame.loc[0, "MLSNumber"])
    frame.loc[0, "SalePrice"] = float(remote.loc[0, "SalePrice"]) + 1000
    new = frame.iloc[[1]].assign(MLSNumber="NEW-Y", Url="https://homes.example/new-y", ID=pd.NA)
    path = write_frame(pd.concat([frame, new], ignore_index=True), tmp_path / "s.xlsx")
    sheet = eb.read_sheet(path, defaults={"AreaUnit": "Square Feet"})
    assert sheet.errors.empty
    plan = eb.plan_sync(sheet, remote)  # the rentals are not in the sheet: kept
    (update,) = plan.updates
    assert update.key == target
    assert "SalePrice" in [c.field for c in update.changes]
    assert "YearBuilt" not in [c.field for c in update.changes]
    assert update.body is not None
    assert update.body["YearBuilt"] == remote.loc[0, "YearBuilt"]
    (invalid,) = plan.invalid
    assert invalid.key == "NEW-Y"
    assert any(reason.startswith("YearBuilt: required") for reason in invalid.reasons)
    eb.apply_plan(plan, client, market.serial, progress=False)
    after = pull(client, market).set_index("MLSNumber")
    assert after.loc[target, "YearBuilt"] == remote.loc[0, "YearBuilt"]
    assert after.loc[target, "SalePrice"] == remote.loc[0, "SalePrice"] + 1000
    assert "NEW-Y" not in after.index

    with_default = eb.read_sheet(path, defaults={"AreaUnit": "Square Feet", "YearBuilt": 1990})
    again = eb.plan_sync(with_default, pull(client, market))
    assert [op.key for op in again.creates] == ["NEW-Y"]
    assert not again.updates


# --------------------------------------------------------------------------- law 5


@pytest.mark.parametrize("suffix", [".xlsx", ".csv", ".parquet"])
def test_pull_save_read_plan_is_a_no_op(
    market: EmulatorServer, client: eb.Client, tmp_path: Path, suffix: str
) -> None:
    from typer.testing import CliRunner

    from estatebot.cli import app

    target = tmp_path / f"pulled{suffix}"
    env = cli_env(market)
    done = CliRunner().invoke(
        app, ["pull", "--serial", market.serial, "--out", str(target)], env=env
    )
    assert done.exit_code == 0, done.output
    sheet = eb.read_sheet(target)
    assert sheet.issues.empty, sheet.summary()
    plan = eb.plan_sync(sheet, pull(client, market))
    assert plan.is_empty, plan.summary()
    assert not plan.invalid
    assert len(plan.unchanged) == 200


# --------------------------------------------------------------------------- law 6


def test_a_plan_edited_by_hand_is_refused_naming_the_operation(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    import json

    from typer.testing import CliRunner

    from estatebot.cli import app

    remote = pull(client, market)
    sheet = eb.read_sheet(SAMPLE / "mls_export_week2.xlsx", defaults={"CurrencySymbol": "$"})
    plan = eb.plan_sync(sheet, remote)
    path = plan.save(tmp_path / "plan.json")
    assert eb.SyncPlan.load(path) == plan  # untouched, it loads as made

    data = json.loads(path.read_text(encoding="utf-8"))
    priced = next(op for op in data["updates"] if op["body"].get("SalePrice"))
    priced["body"]["SalePrice"] = 1.0
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(eb.PlanError, match=f"update of MLSNumber {priced['key']}"):
        eb.SyncPlan.load(edited)

    env = cli_env(market)
    applied = CliRunner().invoke(app, ["apply", str(edited), "--serial", market.serial], env=env)
    assert applied.exit_code == 1
    assert priced["key"] in applied.output
    assert pull(client, market).set_index("MLSNumber").equals(remote.set_index("MLSNumber"))

    data = json.loads(path.read_text(encoding="utf-8"))
    data["options"]["delete_missing"] = True
    edited.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(eb.PlanError, match="options"):
        eb.SyncPlan.load(edited)


# --------------------------------------------------------------------------- law 7


def week2_plan(client: eb.Client, market: EmulatorServer) -> eb.SyncPlan:
    sheet = eb.read_sheet(SAMPLE / "mls_export_week2.xlsx", defaults={"CurrencySymbol": "$"})
    return eb.plan_sync(sheet, pull(client, market))


def test_a_journal_speaks_for_one_service_only(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    plan = week2_plan(client, market)
    journal = tmp_path / "sync.journal"
    report = eb.apply_plan(plan, client, market.serial, journal=journal, progress=False)
    assert report.ok
    with (
        running() as fresh,
        eb.Client(
            base_url=fresh.base_url, api_key=fresh.api_key, session_key=fresh.session_key
        ) as other,
    ):
        before = pull(other, fresh)
        with pytest.raises(eb.PlanError, match="written for the service at"):
            eb.apply_plan(plan, other, fresh.serial, journal=journal, progress=False)
        assert pull(other, fresh).equals(before)


def edited_plan(client: eb.Client, market: EmulatorServer, path: Path) -> eb.SyncPlan:
    """A plan of 3 price changes and 2 new listings, from the pulled listings edited."""
    remote = pull(client, market)
    frame = remote[remote["SalePrice"].notna()].reset_index(drop=True)
    frame.loc[:2, "SalePrice"] = frame.loc[:2, "SalePrice"] + 5000
    new = frame.iloc[[3, 4]].assign(
        MLSNumber=["NEW-A", "NEW-B"],
        Url=["https://homes.example/new-a", "https://homes.example/new-b"],
        ID=pd.NA,
    )
    sheet = eb.read_sheet(
        write_frame(pd.concat([frame, new], ignore_index=True), path),
        defaults={"AreaUnit": "Square Feet"},
    )
    return eb.plan_sync(sheet, remote)


def test_resuming_redoes_what_the_service_does_not_show(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    plan = edited_plan(client, market, tmp_path / "sheet.xlsx")
    assert (len(plan.creates), len(plan.updates), len(plan.deletes)) == (2, 3, 0)
    journal, backup = tmp_path / "sync.journal", tmp_path / "backup.xlsx"
    first = eb.apply_plan(
        plan, client, market.serial, journal=journal, backup=backup, progress=False
    )
    assert first.ok
    # The service loses the run's effects: updates put back, creates removed.
    eb.restore(backup, client, market.serial, progress=False)
    created = [op.key for op in plan.creates]
    client.listings.delete(market.serial, keys=created, key_type="MLSNumber")
    again = eb.apply_plan(plan, client, market.serial, journal=journal, progress=False)
    outcomes = again.frame.set_index("key")["outcome"]
    assert set(outcomes[[op.key for op in plan.operations()]]) == {"redone"}
    assert again.summary()["redone"] == 5
    after = pull(client, market).set_index("MLSNumber")
    assert set(created) <= set(after.index)
    for op in plan.updates:
        assert op.body is not None
        assert after.loc[op.key, "SalePrice"] == op.body["SalePrice"]
    third = eb.apply_plan(plan, client, market.serial, journal=journal, progress=False)
    assert set(third.frame["outcome"]) <= {"skipped (already done)", "unchanged"}


# --------------------------------------------------------------------------- law 8


def test_a_create_whose_reply_was_lost_is_not_sent_again(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    # A deployment that accepts duplicates, and cuts every create's reply after committing it.
    market.store.allow_duplicate_keys()
    plan = edited_plan(client, market, tmp_path / "sheet.xlsx")
    created = [op.key for op in plan.creates]
    market.faults.only = {"RealEstateCreate"}
    market.faults.drop_rate = 1.0
    before = market.request_counts["RealEstateCreate"]
    report = eb.apply_plan(plan, client, market.serial, progress=False)
    market.faults.clear()
    assert market.request_counts["RealEstateCreate"] - before == len(created)
    outcomes = report.frame.set_index("key")
    assert set(outcomes.loc[created, "outcome"]) == {"done"}
    assert all("unanswered" in message for message in outcomes.loc[created, "message"])
    after = pull(client, market)
    assert after["MLSNumber"].value_counts()[created].tolist() == [1, 1]


def test_an_unanswered_create_that_never_landed_is_sent_once_more(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    plan = edited_plan(client, market, tmp_path / "sheet.xlsx")
    market.faults.only = {"RealEstateCreate"}
    market.faults.fail_rate = 1.0  # a 500 before anything is written
    before = market.request_counts["RealEstateCreate"]
    report = eb.apply_plan(plan, client, market.serial, progress=False)
    market.faults.clear()
    # Each create: sent, looked up (absent), sent once more, failed: never more than twice.
    assert market.request_counts["RealEstateCreate"] - before == 2 * len(plan.creates)
    assert report.summary()["failed"] == len(plan.creates)
    assert not set(pull(client, market)["MLSNumber"]) & {op.key for op in plan.creates}


def test_the_client_never_retries_a_create_once_sent(
    market: EmulatorServer, client: eb.Client, tmp_path: Path
) -> None:
    body = edited_plan(client, market, tmp_path / "sheet.xlsx").creates[0].body
    assert body is not None
    retrying = eb.Client(
        base_url=market.base_url, api_key=market.api_key, session_key=market.session_key,
        max_retries=3,
    )  # fmt: skip
    market.faults.only = {"RealEstateCreate"}
    market.faults.fail_rate = 1.0
    before = market.request_counts["RealEstateCreate"]
    with pytest.raises(eb.ServerError):
        retrying.listings.create({**body, "SerialNumber": market.serial})
    assert market.request_counts["RealEstateCreate"] - before == 1
    market.faults.clear()
    market.faults.only = {"RealEstateCreate"}
    market.faults.throttle_burst = 1  # a 429 did nothing: waited out and sent again
    market.faults.retry_after_s = 0
    new_id = retrying.listings.create({**body, "SerialNumber": market.serial})
    assert isinstance(new_id, int)
    assert market.request_counts["RealEstateCreate"] - before == 3
    retrying.close()


def test_forced_creates_over_existing_keys_are_reported_from_the_service(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    plan = edited_plan(client, market, tmp_path / "sheet.xlsx")
    new = plan.creates[0]
    assert new.body is not None
    client.listings.create({**new.body, "SerialNumber": market.serial})  # someone was faster
    report = eb.apply_plan(plan, client, market.serial, force=True, progress=False)
    row = report.frame.set_index("key").loc[new.key]
    assert row["outcome"] == "failed"
    assert row["code"] == 409
    assert report.summary()["created"] == len(plan.creates) - 1


# --------------------------------------------------------------------------- law 9


def test_a_pull_that_lost_a_listing_between_pages_drives_no_creates_or_deletes(
    market: EmulatorServer,
) -> None:
    import httpx

    first_key = {"done": False}

    def delete_one_after_page_1(response: httpx.Response) -> None:
        # A listing of page 1 vanishes while the later pages are still to come: every later
        # page shifts by one, and one listing slips past unseen.
        if response.request.url.path.endswith("RealEstateList") and not first_key["done"]:
            first_key["done"] = True
            market.store.delete_listings(market.serial, "MLSNumber", [keys[0]])

    with eb.Client(
        base_url=market.base_url, api_key=market.api_key, session_key=market.session_key
    ) as plain:
        keys = pull(plain, market)["MLSNumber"].tolist()
    hooked = httpx.Client(
        base_url=market.base_url, event_hooks={"response": [delete_one_after_page_1]}
    )
    client = eb.Client(
        base_url=market.base_url, api_key=market.api_key, session_key=market.session_key,
        http_client=hooked,
    )  # fmt: skip
    with pytest.warns(eb.PullWarning, match="incomplete"):
        remote = eb.pull_listings(
            client, market.serial, page_size=20, concurrency=1, progress=False
        )
    hooked.close()
    incomplete = remote.attrs["incomplete"]
    assert incomplete["expected"] == 199
    assert "changed while they were pulled" in incomplete["reason"]
    assert len(remote) < 200

    sheet = eb.read_sheet(SAMPLE / "mls_export.xlsx", defaults={"CurrencySymbol": "$"})
    plan = eb.plan_sync(sheet, remote, delete_missing=True, max_delete_fraction=1.0)
    assert not plan.creates
    assert not plan.deletes
    assert plan.skipped_create
    assert any("incomplete" in text for text in plan.refusals)
    forced = eb.plan_sync(sheet, remote, allow_incomplete=True)
    assert forced.creates


# --------------------------------------------------------------------------- law 10


def test_keys_match_without_case_or_stray_spaces(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    remote = pull(client, market)
    frame = remote.copy()
    frame.loc[:14, "MLSNumber"] = frame.loc[:14, "MLSNumber"].str.lower()
    frame.loc[15:19, "MLSNumber"] = " " + frame.loc[15:19, "MLSNumber"] + "  "
    sheet = eb.read_sheet(
        write_frame(frame, tmp_path / "s.xlsx"), defaults={"AreaUnit": "Square Feet"}
    )
    plan = eb.plan_sync(sheet, remote, delete_missing=True, max_delete_fraction=1.0)
    assert plan.is_empty, plan.summary()
    assert len(plan.unchanged) == 200


def test_listings_moved_to_new_urls_are_updated_not_created_and_deleted(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    remote = pull(client, market)
    frame = remote.copy()
    moved = frame.index[:15]
    frame.loc[moved, "Url"] = frame.loc[moved, "Url"] + "?moved=1"
    sheet = eb.read_sheet(
        write_frame(frame, tmp_path / "s.xlsx"), defaults={"AreaUnit": "Square Feet"}
    )
    plan = eb.plan_sync(sheet, remote, key="URL", delete_missing=True)
    assert not plan.creates
    assert not plan.deletes
    assert len(plan.updates) == 15
    assert {c.field for op in plan.updates for c in op.changes} == {"Url"}
    assert {op.key for op in plan.updates} == set(remote.loc[moved, "Url"])  # the old URLs
    report = eb.apply_plan(plan, client, market.serial, progress=False)
    assert report.ok, report
    after = pull(client, market).set_index("ID")
    assert len(after) == 200
    assert after.loc[remote.loc[moved, "ID"], "Url"].tolist() == frame.loc[moved, "Url"].tolist()


def test_a_delete_is_not_sent_when_the_create_replacing_its_listing_failed(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    remote = pull(client, market)
    victim = remote.iloc[5]
    frame = remote.copy()
    new = frame.iloc[[6]].assign(MLSNumber="NEW-V", Url=victim["Url"], ID=pd.NA)  # its URL
    sheet = eb.read_sheet(
        write_frame(pd.concat([frame, new], ignore_index=True), tmp_path / "s.xlsx"),
        defaults={"AreaUnit": "Square Feet"},
    )
    plan = eb.plan_sync(sheet, remote)
    assert [op.key for op in plan.creates] == ["NEW-V"]
    # The same listing's delete, as a plan made elsewhere would carry it.
    cleanup = eb.plan_cleanup(
        remote, status=None, where=lambda f: f["ID"] == victim["ID"], force_delete_count=1
    )
    plan.deletes = list(cleanup.deletes)
    plan.key_type = cleanup.key_type
    report = eb.apply_plan(plan, client, market.serial, force=True, progress=False)
    rows = report.frame.set_index("action")
    assert rows.loc["create", "outcome"] == "failed"
    assert rows.loc["delete", "outcome"] == "not sent"
    assert "Url" in rows.loc["delete", "message"]
    assert victim["ID"] in set(pull(client, market)["ID"])
    assert not report.ok


# --------------------------------------------------------------------------- law 11


@pytest.mark.parametrize("suffix", [".json", ".xlsx"])
def test_a_value_the_frame_cannot_hold_survives_delete_and_restore(
    client: eb.Client, market: EmulatorServer, tmp_path: Path, suffix: str
) -> None:
    body = edited_plan(client, market, tmp_path / "sheet.xlsx").creates[0].body
    assert body is not None
    odd = {**body, "MLSNumber": "FRAC-1", "Url": "https://homes.example/frac-1"}
    new_id = client.listings.create({**odd, "ParkingSpots": 1.5, "SerialNumber": market.serial})
    remember_sent(client, market, odd, new_id)  # as an apply that created it would have
    with pytest.warns(eb.NormalizeWarning):
        remote = pull(client, market)
    assert pd.isna(remote.set_index("MLSNumber").loc["FRAC-1", "ParkingSpots"])
    cleanup = eb.plan_cleanup(
        remote, status=None, where=lambda f: f["MLSNumber"] == "FRAC-1", force_delete_count=1
    )
    backup = tmp_path / f"backup{suffix}"
    with pytest.warns(eb.NormalizeWarning):  # the apply's own pull reads it the same way
        report = eb.apply_plan(cleanup, client, market.serial, backup=backup, progress=False)
    assert report.summary()["deleted"] == 1
    restored = eb.restore(backup, client, market.serial, progress=False)
    assert restored.summary()["created"] == 1, restored
    (record,) = client.listings.list_page(market.serial, mls_number="FRAC-1").records
    assert record["ParkingSpots"] == "1.5"


def remember_sent(
    client: eb.Client, market: EmulatorServer, body: dict[str, Any], listing_id: int
) -> None:
    """Record ``body`` as sent to the listing, as an apply that sent it records it."""
    from estatebot.listings.remote.sent_record import open_sent_values, service_address

    record = open_sent_values(None, service=service_address(client), serial=market.serial)
    assert record is not None
    record.remember(body, listing_id=listing_id)
    record.close()


def test_a_restore_never_guesses_a_unit(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    # Created by another tool: List never shows its unit, and no value was ever sent to it.
    body = edited_plan(client, market, tmp_path / "sheet.xlsx").creates[0].body
    assert body is not None
    odd = {**body, "MLSNumber": "SQM-1", "Url": "https://homes.example/sqm-1"}
    client.listings.create({**odd, "AreaUnit": "Square Meters", "SerialNumber": market.serial})
    remote = pull(client, market)
    cleanup = eb.plan_cleanup(
        remote, status=None, where=lambda f: f["MLSNumber"] == "SQM-1", force_delete_count=1
    )
    backup = tmp_path / "backup.json"
    report = eb.apply_plan(cleanup, client, market.serial, backup=backup, progress=False)
    assert report.summary()["deleted"] == 1
    restored = eb.restore(backup, client, market.serial, progress=False)
    assert not restored.ok
    (row,) = restored.failures.to_dict("records")
    assert row["outcome"] == "failed"
    assert "AreaUnit is unknown" in row["message"]
    assert "never guesses" in row["message"]
    assert not client.listings.list_page(market.serial, mls_number="SQM-1").records


def test_a_listing_its_backup_cannot_rebuild_is_not_deleted(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    body = edited_plan(client, market, tmp_path / "sheet.xlsx").creates[0].body
    assert body is not None
    # Stored as an older deployment may hold it: without Bedrooms, which a body requires.
    odd = {k: v for k, v in body.items() if k != "Bedrooms"}
    market.store.add_listings(
        market.serial, [{**odd, "MLSNumber": "ODD-1", "Url": "https://homes.example/odd-1"}]
    )
    remote = pull(client, market)
    cleanup = eb.plan_cleanup(
        remote,
        status=None,
        where=lambda f: f["MLSNumber"].isin(["ODD-1", str(remote.loc[0, "MLSNumber"])]),
        force_delete_count=2,
    )
    report = eb.apply_plan(
        cleanup, client, market.serial, backup=tmp_path / "b.json", progress=False
    )
    rows = report.frame.set_index("key")
    odd_id = str(remote.set_index("MLSNumber").loc["ODD-1", "ID"])
    assert rows.loc[odd_id, "outcome"] == "not sent"
    assert "Bedrooms" in rows.loc[odd_id, "message"]
    assert report.summary()["deleted"] == 1
    assert "ODD-1" in set(pull(client, market)["MLSNumber"])


def test_a_forced_update_lays_only_its_changes_over_the_listing_as_it_is_now(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    plan = edited_plan(client, market, tmp_path / "sheet.xlsx")
    update = plan.updates[0]
    assert update.id is not None
    assert update.body is not None
    # Someone edits the listing on the service after the plan was made.
    data = dict(market.store.listing_data(market.serial, [update.id])[update.id])
    data["City"] = "Elsewhere"
    market.store.replace_listing(market.serial, update.id, data)
    with pytest.raises(eb.PlanError, match="stale"):
        eb.apply_plan(plan, client, market.serial, progress=False)
    report = eb.apply_plan(plan, client, market.serial, force=True, progress=False)
    assert report.ok, report
    after = pull(client, market).set_index("ID").loc[update.id]
    assert after["City"] == "Elsewhere"  # their edit stays
    assert after["SalePrice"] == update.body["SalePrice"]  # our change lands


def test_a_listing_held_without_the_key_is_named_by_its_other_identity_and_given_the_key(
    client: eb.Client, market: EmulatorServer, tmp_path: Path
) -> None:
    remote = pull(client, market)
    target = remote[remote["SalePrice"].notna()].iloc[0]
    ident = int(target["ID"])
    mls, url = str(target["MLSNumber"]), str(target["Url"])
    # The service holds one listing without an MLS number (written by another tool).
    data = dict(market.store.listing_data(market.serial, [ident])[ident])
    data["MLSNumber"] = None
    market.store.replace_listing(market.serial, ident, data)
    # The sheet is the pull as it was: that listing with its MLS number and a new price.
    frame = remote.copy()
    frame.loc[frame["ID"] == ident, "SalePrice"] = target["SalePrice"] + 1000
    sheet = eb.read_sheet(
        write_frame(frame, tmp_path / "sheet.xlsx"), defaults={"AreaUnit": "Square Feet"}
    )
    plan = eb.plan_sync(sheet, pull(client, market))
    assert plan.summary() == "0 create, 1 update, 0 delete, 199 unchanged, 0 invalid"
    (update,) = plan.updates
    # Named as the service holds it: by its Url, the identity it has.
    assert (update.key_type, update.key) == ("URL", url)
    # The price, the unit price the reader derives from it, and the MLS number it lacked.
    assert {c.field for c in update.changes} - {"UnitAreaPrice"} == {"MLSNumber", "SalePrice"}
    report = eb.apply_plan(plan, client, market.serial, progress=False)
    assert report.ok, report
    after = pull(client, market).set_index("ID").loc[ident]
    assert after["MLSNumber"] == mls
    assert after["SalePrice"] == target["SalePrice"] + 1000
    assert eb.plan_sync(sheet, pull(client, market)).is_empty
