"""The committed sample files: they read cleanly, agree with each other and with the demo
emulator, their chat tests pass, and regenerating them gives the same contents."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest

pytest.importorskip("zipcodes")

from estatebot.api.client import Client
from estatebot.chat.harness.running import run_chat_tests
from estatebot.emulator import EmulatorServer, running
from estatebot.emulator.seed import DEMO_LISTINGS_FILE, demo_listings
from estatebot.listings.remote.pull import pull_listings
from estatebot.listings.sheet.read import Sheet, read_sheet
from estatebot.listings.sync.sync_plan import plan_sync
from estatebot.sample import FILES, READ_OPTIONS, Generated, generate
from estatebot.sample.styles import Style

SAMPLE_DATA = Path(__file__).resolve().parents[2] / "sample_data"
SEED = 42

#: Fields every style gives, compared between the three reads of the week-1 market.
SHARED = (
    "MLSNumber", "Url", "SaleType", "Status", "CurrencySymbol", "Bedrooms", "Bathrooms",
    "YearBuilt", "DaysOnMarket", "LotArea", "BuildingArea", "AreaUnit", "Address", "City",
    "State", "ZIP", "Latitude", "Longitude", "SalePrice", "RentPrice", "UnitAreaPrice",
    "HOAMonth",
)  # fmt: skip
#: ...and the ones the MLS-system export has too (the portal has no parking, photos, remarks).
SHARED_WITH_MLS_SYSTEM = (*SHARED, "PropertyType", "ParkingSpots", "Description", "Images")


def read(name: str, style: Style = "reso") -> Sheet:
    return read_sheet(SAMPLE_DATA / name, **READ_OPTIONS[style])


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Generated:
    out = tmp_path_factory.mktemp("sample_data")
    return generate(out, SEED, pitfalls=True, demo_seed=out / "demo_listings.json")


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[EmulatorServer, Client]]:
    with (
        running(seed="demo") as server,
        Client(
            base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
        ) as client,
    ):
        yield server, client


# --------------------------------------------------------------------------- reading


@pytest.mark.parametrize(
    ("name", "style", "rows"),
    [
        (FILES["reso"], "reso", 200),
        (FILES["reso_week2"], "reso", 208),
        (FILES["portal"], "portal", None),
        (FILES["mls_system"], "mls_system", 200),
    ],
)
def test_clean_files_read_without_errors(name: str, style: Style, rows: int | None) -> None:
    sheet = read(name, style)
    assert sheet.errors.empty, sheet.summary()
    if style == "portal":
        # The disclaimer line is skipped with a note; nothing else is said.
        assert sheet.warnings["row"].tolist() == [2]
        assert sheet.warnings["message"].str.contains("disclaimer").all()
    else:
        assert sheet.warnings.empty, sheet.summary()
        assert sheet.rows_read == rows
    unpublished = 4 if name == FILES["reso_week2"] else 0
    assert len(sheet.unpublished) == unpublished
    assert len(sheet.frame) == sheet.rows_read - unpublished


def test_the_reso_export_reads_back_the_market(regenerated: Generated) -> None:
    frame = read(FILES["reso"]).frame.set_index("MLSNumber")
    for record in regenerated.week1:
        row = frame.loc[record["MLSNumber"]]
        for name, want in record.items():
            if name in ("MLSNumber", "ExtensionColumn") or name not in frame.columns:
                continue
            got = row[name]
            if want is None:
                assert got is pd.NA or got == [], (record["MLSNumber"], name, got)
            elif isinstance(want, float):
                assert got == pytest.approx(want, abs=0.006), (record["MLSNumber"], name)
            else:
                assert got == want, (record["MLSNumber"], name)
        extensions = row["ExtensionColumn"]
        assert extensions["ListingKey"] == record["ListingKey"]
        for item in record["ExtensionColumn"]:
            assert extensions[item["Key"]] == item["value"]


def test_the_three_styles_read_to_the_same_listings() -> None:
    reso = read(FILES["reso"]).frame.set_index("MLSNumber", drop=False)
    system = read(FILES["mls_system"], "mls_system").frame.set_index("MLSNumber", drop=False)
    portal = read(FILES["portal"], "portal").frame.set_index("MLSNumber", drop=False)
    assert set(system.index) == set(reso.index)
    # The portal download has the homes for sale only.
    assert set(portal.index) == set(reso.index[reso["SaleType"] == "for_sale"])
    for other, fields in ((system, SHARED_WITH_MLS_SYSTEM), (portal, SHARED)):
        left = reso.loc[other.index, list(fields)]
        pd.testing.assert_frame_equal(left, other[list(fields)], check_exact=False, atol=0.006)
    assert (portal["ParkingSpots"] == 0).all()  # from the reading defaults
    assert (portal["ExtensionColumn"].map(lambda e: e["SALE TYPE"]) != "").all()


def test_the_pitfall_file_reports_every_pitfall_at_its_row(regenerated: Generated) -> None:
    sheet = read(FILES["pitfalls"])
    issues = sheet.issues
    assert regenerated.pitfalls
    for pitfall in regenerated.pitfalls:
        here = issues[(issues["row"] == pitfall.row) & (issues["column"] == pitfall.column)]
        if pitfall.severity is None:
            # Harmless: read through silently, to the clean value.
            assert issues[issues["row"] == pitfall.row].empty, pitfall
            got = sheet.frame.loc[pitfall.row, pitfall.field]
            if pitfall.expected is None:
                assert got is pd.NA, pitfall
            else:
                assert got == pitfall.expected, pitfall
        else:
            assert (here["severity"] == pitfall.severity).any(), (pitfall, here)
    spoiled = {p.row for p in regenerated.pitfalls if p.severity is not None}
    assert set(issues["row"].dropna().astype(int)) == spoiled
    rejected = {p.row for p in regenerated.pitfalls if p.severity == "error"}
    assert set(sheet.invalid_rows) == rejected


# --------------------------------------------------------------------------- the demo emulator


def test_the_demo_seed_is_the_week1_export_as_read() -> None:
    listings = demo_listings()
    frame = read(FILES["reso"]).frame
    assert [item["MLSNumber"] for item in listings] == frame["MLSNumber"].tolist()
    assert len(listings) == 200


def _real_changes(plan: Any) -> dict[str, set[str]]:
    return {op.key: {change.field for change in op.changes} for op in plan.updates}


def test_planning_week1_against_the_demo_emulator_finds_nothing_to_do(
    demo: tuple[EmulatorServer, Client],
) -> None:
    server, client = demo
    remote = pull_listings(client, server.serial, progress=False)
    plan = plan_sync(read(FILES["reso"]), remote)
    assert (len(plan.creates), len(plan.updates), len(plan.deletes)) == (0, 0, 0)
    assert not plan.invalid


def test_planning_week2_finds_the_changes_of_the_week(
    demo: tuple[EmulatorServer, Client], regenerated: Generated
) -> None:
    server, client = demo
    remote = pull_listings(client, server.serial, progress=False)
    plan = plan_sync(read(FILES["reso_week2"]), remote)
    by_kind: dict[str, set[str]] = {}
    for change in regenerated.changes:
        by_kind.setdefault(change.kind, set()).add(change.mls)
    assert {op.key for op in plan.creates} == by_kind["new"]
    assert {op.key for op in plan.deletes} == by_kind["unpublished"]
    # Days on market alone is no reason to update, and AreaUnit, which List never returns, is
    # never a change: every planned update is one of the week's real changes.
    changed = _real_changes(plan)
    assert set(changed) == by_kind["price"] | by_kind["field"] | by_kind["sold"]
    assert not any("AreaUnit" in fields for fields in changed.values())
    for change in regenerated.changes:
        if change.kind == "sold":
            assert {"Status", "SalePrice"} <= changed[change.mls]
        elif change.kind == "price":
            assert changed[change.mls] & {"SalePrice", "RentPrice"}
    assert not plan.invalid


def test_the_chat_tests_pass_against_the_demo_chatbot() -> None:
    with (
        running() as server,
        Client(
            base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
        ) as client,
    ):
        results = run_chat_tests(
            client, server.serial, SAMPLE_DATA / FILES["chat_tests"], progress=False
        )
    frame = results.frame
    assert len(frame) >= 18
    failed = frame[~frame["passed"].fillna(False).astype(bool)]
    assert failed.empty, failed[["case", "question", "answer", "why", "error"]].to_string()
    assert frame["conversation"].notna().sum() == 3
    for column in (
        "expect_no_answer",
        "max_latency_ms",
        "max_tokens",
        "expect_regex",
        "expect_grounded",
    ):
        assert frame[f"{column}_pass"].notna().any()


# --------------------------------------------------------------------------- regenerating


def _cells(path: Path) -> list[list[tuple[Any, str]]]:
    workbook = openpyxl.load_workbook(path)
    sheet = workbook.worksheets[0]
    return [[(cell.value, cell.number_format) for cell in row] for row in sheet.iter_rows()]


def test_regenerating_gives_the_committed_files(regenerated: Generated) -> None:
    out = regenerated.files["reso"].parent
    for name in (FILES["portal"], FILES["readme"]):
        assert (out / name).read_bytes() == (SAMPLE_DATA / name).read_bytes(), name
    for role in ("reso", "reso_week2", "mls_system", "pitfalls", "chat_tests"):
        name = FILES[role]
        assert _cells(out / name) == _cells(SAMPLE_DATA / name), name
        assert (SAMPLE_DATA / name).stat().st_size < 100_000
    committed = json.loads(DEMO_LISTINGS_FILE.read_text(encoding="utf-8"))
    assert json.loads((out / "demo_listings.json").read_text(encoding="utf-8")) == committed
