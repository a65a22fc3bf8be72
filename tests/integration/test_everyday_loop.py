"""The everyday loop over HTTP: pull, edit in a spreadsheet program, plan, apply.

One rule holds every test here: an Update body is the listing as the service holds it plus only
what the sheet states. A blank cell says nothing, ``#CLEAR`` clears, a field the pull could not
read is never erased, and areas without a unit column keep their meaning.

The service is the emulator with the 200-listing sample market (``seed="demo"``). Files are
pulled with ``estatebot pull`` or written by the same export writer, edited cell by cell with
openpyxl as a person edits them, and re-saved through LibreOffice headless where a spreadsheet
program is in the loop (those tests skip, saying why, without ``soffice``). Each test ends by
comparing what the service holds with what the edit intended, field by field, on every listing.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest

import estatebot as eb
from clirun import cli_env, command, run_cli
from estatebot.emulator import EmulatorServer
from estatebot.listings import write_frame
from listing_state import (
    frame_differences,
    is_blank,
    near,
    pull,
    same_value,
    service,
    stored,
    stored_differences,
    unit_price_of,
)
from spreadsheet_program import Format, needs_soffice, resave

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
PORTAL = SAMPLES / "portal_export.csv"
#: The unit of every listing of the sample market: the loop's ``--default AreaUnit=...``.
UNIT = {"AreaUnit": "Square Feet"}
#: Fields whose change lets the reader's computed unit price change with them.
PRICE_OR_AREA = frozenset({"SalePrice", "RentPrice", "BuildingArea"})
WRITES = ("RealEstateCreate", "RealEstateUpdate", "RealEstateDelete")

Edits = dict[tuple[str, str], Any]


@pytest.fixture
def market() -> Iterator[tuple[EmulatorServer, eb.Client]]:
    """The emulator with the 200-listing sample market, and a client of it."""
    with service("demo") as pair:
        yield pair


# --------------------------------------------------------------------------- helpers


def edit_cells(source: Path, target: Path, edits: Mapping[tuple[str, str], Any]) -> Path:
    """``source`` with each cell (MLS number, header) set to its value, saved as ``target``, as
    a person types into a sheet: None empties a cell, ``"#CLEAR"`` is typed as it is."""
    book = openpyxl.load_workbook(source)
    sheet = book.worksheets[0]
    header = [cell.value for cell in sheet[1]]
    columns = {name: n + 1 for n, name in enumerate(header)}
    key_column = columns["MLSNumber"]
    rows = {
        str(sheet.cell(r, key_column).value): r
        for r in range(2, sheet.max_row + 1)
        if sheet.cell(r, key_column).value is not None
    }
    for (key, field), value in edits.items():
        sheet.cell(rows[key], columns[field]).value = value
    book.save(target)
    return target


def pulled_file(client: eb.Client, server: EmulatorServer, path: Path) -> tuple[Path, pd.DataFrame]:
    """The listings pulled and written as the command line's ``pull --out`` writes them."""
    remote = pull(client, server)
    return write_frame(remote, path), remote


def cli_pull(server: EmulatorServer, path: Path) -> Path:
    """``estatebot pull --out PATH``, as a person runs it."""
    done = run_cli(server, "pull", "--out", str(path))
    assert done.code == 0, done.text
    return path


def changed_fields(op: Any) -> dict[str, Any]:
    """An update's changes as ``{field: change}``."""
    return {change.field: change for change in op.changes}


def loop_edits(remote: pd.DataFrame) -> tuple[Edits, dict[str, set[str]], set[str]]:
    """The edits of the loop's main test, chosen from the pulled listings.

    One BuildingArea to 9999; the price of every third listing (sale prices +4 %, rents +75);
    six cells of required fields blanked on listings nothing else touches; one HOAMonth cleared
    with ``#CLEAR``. Returns the cells to set, the fields each listing should change, and the
    listings whose blanked cells must change nothing.
    """
    edits: Edits = {}
    intended: dict[str, set[str]] = {}
    keys = remote["MLSNumber"].astype(str).tolist()
    area_key = keys[0]
    assert float(remote.loc[0, "BuildingArea"]) != 9999
    edits[(area_key, "BuildingArea")] = 9999
    intended[area_key] = {"BuildingArea"}
    for i in range(1, len(remote), 3):
        row = remote.iloc[i]
        if pd.notna(row["SalePrice"]):
            edits[(keys[i], "SalePrice")] = round(float(row["SalePrice"]) * 1.04, -2)
            intended[keys[i]] = {"SalePrice"}
        elif pd.notna(row["RentPrice"]):
            edits[(keys[i], "RentPrice")] = float(row["RentPrice"]) + 75
            intended[keys[i]] = {"RentPrice"}
    required = ["Bedrooms", "YearBuilt", "PropertyType", "LotArea", "Bathrooms", "Status"]
    blanked = set()
    for field, i in zip(required, range(2, len(remote), 3), strict=False):
        assert pd.notna(remote.iloc[i][field])
        edits[(keys[i], field)] = None
        blanked.add(keys[i])
    cleared = next(
        i for i in range(3, len(remote), 3) if pd.notna(remote.iloc[i]["HOAMonth"])
    )  # rows 3, 6, 9, ... are touched by nothing else
    edits[(keys[cleared], "HOAMonth")] = "#CLEAR"
    intended[keys[cleared]] = {"HOAMonth"}
    return edits, intended, blanked


def intended_frame(remote: pd.DataFrame, edits: Edits) -> pd.DataFrame:
    """The pulled listings as the edits mean them: a blank cell keeps the value, ``#CLEAR``
    empties the field, any other value replaces it."""
    out = remote.copy().set_index("MLSNumber", drop=False)
    for (key, field), value in edits.items():
        if value is None:
            continue
        out.at[key, field] = pd.NA if value == "#CLEAR" else value
    return out.reset_index(drop=True)


def intended_store(before: dict[str, dict[str, Any]], edits: Edits) -> dict[str, dict[str, Any]]:
    """The stored records as the edits mean them (see :func:`intended_frame`)."""
    out = {key: dict(record) for key, record in before.items()}
    for (key, field), value in edits.items():
        if value is None:
            continue
        out[key][field] = None if value == "#CLEAR" else value
    return out


def derived_allowance(edits: Edits, expected: dict[str, dict[str, Any]]) -> tuple[set[str], Any]:
    """The listings whose price or area an edit changed, and an ``allow`` for the comparisons:
    their UnitAreaPrice may be the value computed from the new price and area."""
    moved = {key for (key, field), v in edits.items() if field in PRICE_OR_AREA and v is not None}

    def allow(key: str, field: str, got: Any) -> bool:
        return field == "UnitAreaPrice" and key in moved and near(got, unit_price_of(expected[key]))

    return moved, allow


def check_plan_has_exactly(
    plan: eb.SyncPlan,
    edits: Edits,
    intended: dict[str, set[str]],
    expected: dict[str, dict[str, Any]],
) -> None:
    """The plan updates exactly the intended listings, each changing exactly its edited
    fields (its unit price may follow a price or area edit, to the computed value)."""
    assert not plan.creates, [op.key for op in plan.creates]
    assert not plan.deletes, [op.key for op in plan.deletes]
    assert not plan.invalid, plan.invalid[:5]
    assert not plan.held_back, plan.held_back[:5]
    updates = {op.key: op for op in plan.updates}
    assert set(updates) == set(intended), (
        sorted(set(updates) - set(intended))[:10],
        sorted(set(intended) - set(updates))[:10],
    )
    moved, _ = derived_allowance(edits, expected)
    for key, op in updates.items():
        changes = changed_fields(op)
        extra = set(changes) - intended[key]
        if key in moved:
            extra.discard("UnitAreaPrice")
            if "UnitAreaPrice" in changes:
                assert near(changes["UnitAreaPrice"].after, unit_price_of(expected[key])), op
        assert set(changes) >= intended[key], (key, sorted(changes))
        assert not extra, (key, sorted(extra), "changed although the sheet did not say so")
        for field in intended[key]:
            want = expected[key][field]
            got = changes[field].after
            assert (is_blank(want) and is_blank(got)) or got == want, (key, field, got, want)


def apply_and_compare(
    plan: eb.SyncPlan,
    server: EmulatorServer,
    client: eb.Client,
    remote: pd.DataFrame,
    before: dict[str, dict[str, Any]],
    edits: Edits,
) -> None:
    """Apply ``plan``; then the service holds the intended listings field by field, and no
    field the edits did not touch changed on any listing (the unlisted ones included)."""
    report = eb.apply_plan(plan, client, server.serial, progress=False)
    assert report.ok, report.failures.to_dict("records")
    expected = intended_store(before, edits)
    _, allow = derived_allowance(edits, expected)
    after = pull(client, server)
    assert frame_differences(intended_frame(remote, edits), after, allow=allow) == []
    assert stored_differences(expected, stored(server, remote["ID"]), allow=allow) == []


# --------------------------------------------------------------------------- LibreOffice


@needs_soffice
@pytest.mark.parametrize("kind", ["xlsx", "csv"])
def test_a_pulled_file_resaved_by_a_spreadsheet_program_plans_nothing(
    market: tuple[EmulatorServer, eb.Client], tmp_path: Path, kind: Format
) -> None:
    """A pulled file opened and saved again in LibreOffice, unedited, is in step: no create,
    update or delete, nothing invalid or held back, and the reader finds no problem."""
    server, client = market
    path, remote = pulled_file(client, server, tmp_path / "listings.xlsx")
    saved = resave(path, kind, tmp_path / "saved")
    sheet = eb.read_sheet(saved, progress=False)
    assert sheet.errors.empty, sheet.summary()
    plan = eb.plan_sync(sheet, remote)
    assert plan.is_empty, (plan.summary(), [(op.key, op.changes) for op in plan.updates[:5]])
    assert not plan.invalid, plan.invalid[:5]
    assert not plan.held_back, plan.held_back[:5]
    assert len(plan.unchanged) == len(remote)


@needs_soffice
@pytest.mark.parametrize("kind", ["xlsx", "csv"])
def test_edits_resaved_by_a_spreadsheet_program_plan_and_apply_exactly_those_edits(
    market: tuple[EmulatorServer, eb.Client], tmp_path: Path, kind: Format
) -> None:
    """A pulled file edited (an area, many prices, blanked required cells, a ``#CLEAR``) and
    re-saved in LibreOffice plans an update per edited listing with exactly the edited fields;
    blank cells change nothing; after the apply the service holds the intended listings."""
    server, client = market
    path, remote = pulled_file(client, server, tmp_path / "listings.xlsx")
    edits, intended, blanked = loop_edits(remote)
    assert len(intended) > 60
    edited = edit_cells(path, tmp_path / "edited.xlsx", edits)
    saved = resave(edited, kind, tmp_path / "saved")
    before = stored(server, remote["ID"])
    expected = intended_store(before, edits)

    sheet = eb.read_sheet(saved, defaults=UNIT, progress=False)
    plan = eb.plan_sync(sheet, remote)
    check_plan_has_exactly(plan, edits, intended, expected)
    assert blanked <= {ref.key for ref in plan.unchanged}
    apply_and_compare(plan, server, client, remote, before, edits)


# --------------------------------------------------------------------------- the bullets


def record_units_by_a_sync(
    client: eb.Client, server: EmulatorServer, keys: list[str], tmp_path: Path
) -> None:
    """A sync made earlier with ``--default AreaUnit=Square Feet`` that changed the Description
    of the listings ``keys``: the record of values last sent then knows their unit."""
    remote = pull(client, server)
    frame = remote.copy()
    at = frame["MLSNumber"].isin(keys)
    frame.loc[at, "Description"] = frame.loc[at, "Description"] + " Newly listed."
    sheet = eb.read_sheet(write_frame(frame, tmp_path / "earlier.xlsx"), defaults=UNIT)
    plan = eb.plan_sync(sheet, remote)
    assert {op.key for op in plan.updates} == set(keys)
    assert eb.apply_plan(plan, client, server.serial, progress=False).ok


def test_a_pulled_file_carries_the_area_unit_last_sent(
    market: tuple[EmulatorServer, eb.Client], tmp_path: Path
) -> None:
    """A listing whose unit the record of values last sent knows is pulled with it, so the
    file round-trips whole; a listing never sent has no unit to show (nothing is guessed)."""
    server, client = market
    remote = pull(client, server)
    known, unknown = str(remote.loc[0, "MLSNumber"]), str(remote.loc[1, "MLSNumber"])
    record_units_by_a_sync(client, server, [known], tmp_path)
    path = cli_pull(server, tmp_path / "listings.xlsx")
    cells = pd.read_excel(path, dtype=str, engine="openpyxl").set_index("MLSNumber")
    assert cells.loc[known, "AreaUnit"] == "Square Feet"
    assert pd.isna(cells.loc[unknown, "AreaUnit"])


def test_a_building_area_edit_in_a_pulled_file_plans_an_update(
    market: tuple[EmulatorServer, eb.Client], tmp_path: Path
) -> None:
    """Issue bullet 1: ``pull --out``, BuildingArea 460 -> 9999, ``plan``: an update of that
    area (not "Nothing to change"), its unit the one last sent to the listing."""
    server, client = market
    remote = pull(client, server)
    target = str(remote.loc[0, "MLSNumber"])
    old_area = float(remote.loc[0, "BuildingArea"])
    record_units_by_a_sync(client, server, [target], tmp_path)
    path = cli_pull(server, tmp_path / "listings.xlsx")
    edit_cells(path, path, {(target, "BuildingArea"): 9999})

    done = run_cli(
        server, "plan", str(path), "--out", str(tmp_path / "plan.json"), "--detailed-exitcode"
    )
    assert "Nothing to change" not in done.text, done.text
    assert done.code == 2, done.text  # changes planned
    plan = eb.SyncPlan.load(tmp_path / "plan.json")
    assert [op.key for op in plan.updates] == [target], plan.summary()
    (update,) = plan.updates
    changes = changed_fields(update)
    assert set(changes) <= {"BuildingArea", "UnitAreaPrice"}, sorted(changes)
    assert (changes["BuildingArea"].before, changes["BuildingArea"].after) == (old_area, 9999)
    assert update.body is not None
    assert update.body["AreaUnit"] == "Square Feet"
    assert not plan.invalid
    assert not plan.held_back


def test_a_building_area_edit_with_no_known_unit_is_held_back_naming_the_default(
    market: tuple[EmulatorServer, eb.Client], tmp_path: Path
) -> None:
    """With no unit sent before, none in List's Area text and no default, the area edit is
    held back naming ``--default AreaUnit=...`` (never dropped in silence, never guessed);
    with that default it is planned."""
    server, client = market
    remote = pull(client, server)
    target = str(remote.loc[0, "MLSNumber"])
    path = cli_pull(server, tmp_path / "listings.xlsx")
    edit_cells(path, path, {(target, "BuildingArea"): 9999})

    plain = run_cli(
        server, "plan", str(path), "--out", str(tmp_path / "plan.json"), "--detailed-exitcode"
    )
    assert "Nothing to change" not in plain.text, plain.text
    assert plain.code == 3, plain.text  # held back
    assert re.search(r"""--default ["']?AreaUnit=""", plain.text), plain.text
    plan = eb.SyncPlan.load(tmp_path / "plan.json")
    assert not plan.updates, plan.summary()
    assert [h.key for h in plan.held_back] == [target], plan.held_back
    assert "AreaUnit" in plan.held_back[0].message

    given = run_cli(
        server, "plan", str(path), "--default", "AreaUnit=Square Feet",
        "--out", str(tmp_path / "given.json"), "--detailed-exitcode",
    )  # fmt: skip
    assert given.code == 2, given.text
    again = eb.SyncPlan.load(tmp_path / "given.json")
    assert [op.key for op in again.updates] == [target]
    assert changed_fields(again.updates[0])["BuildingArea"].after == 9999


def test_prices_changed_on_many_rows_of_a_pulled_file_are_all_planned_and_applied(
    market: tuple[EmulatorServer, eb.Client], tmp_path: Path
) -> None:
    """Issue bullet 2: with the unit of every listing recorded by an earlier sync, a pulled
    file with the sale price changed on every sale listing plans an update of each (none
    rejected for AreaUnit), and the apply changes those prices and nothing else."""
    server, client = market
    remote = pull(client, server)
    record_units_by_a_sync(client, server, remote["MLSNumber"].tolist(), tmp_path)
    now = pull(client, server)
    before = stored(server, now["ID"])
    path = cli_pull(server, tmp_path / "listings.xlsx")
    sales = now[now["SalePrice"].notna()]
    edits: Edits = {
        (str(row.MLSNumber), "SalePrice"): float(row.SalePrice) + 2500 for row in sales.itertuples()
    }
    assert len(edits) > 100
    edit_cells(path, path, edits)

    done = run_cli(
        server, "plan", str(path), "--out", str(tmp_path / "plan.json"), "--detailed-exitcode"
    )
    assert done.code == 2, done.text
    plan = eb.SyncPlan.load(tmp_path / "plan.json")
    intended = {key: {"SalePrice"} for key, _ in edits}
    check_plan_has_exactly(plan, edits, intended, intended_store(before, edits))

    applied = run_cli(server, "apply", str(tmp_path / "plan.json"))
    assert applied.code == 0, applied.text
    expected = intended_store(before, edits)
    _, allow = derived_allowance(edits, expected)
    assert stored_differences(expected, stored(server, now["ID"]), allow=allow) == []


def blank_lot_rows(remote: pd.DataFrame) -> dict[int, str]:
    """The rows of the portal export (as the reader numbers them) with a blank LOT SIZE whose
    listing exists on the service, and their MLS numbers."""
    raw = pd.read_csv(PORTAL, dtype=str, keep_default_na=False)
    existing = set(remote["MLSNumber"].astype(str))
    blank = raw[(raw["LOT SIZE"].str.strip() == "") & raw["MLS#"].isin(existing)]
    return {int(i) + 2: str(mls) for i, mls in blank["MLS#"].items()}  # row 1 is the header


def test_a_blank_lot_size_rejects_no_row_of_a_listing_that_exists(
    market: tuple[EmulatorServer, eb.Client],
) -> None:
    """Issue bullet 4: ``portal_export.csv --lot-unit sqft --default CurrencySymbol=$``: a
    blank LOT SIZE says nothing, so no row of an existing listing is rejected for it, its lot
    area is not planned, and after the apply every such listing keeps its lot area."""
    server, client = market
    remote = pull(client, server)
    rows = blank_lot_rows(remote)
    assert len(rows) >= 10, rows
    sheet = eb.read_sheet(PORTAL, lot_unit="sqft", defaults={"CurrencySymbol": "$"}, progress=False)
    errors = sheet.errors
    at_blank = errors[errors["row"].isin(list(rows))]
    assert at_blank.empty, at_blank.to_string()
    plan = eb.plan_sync(sheet, remote)
    assert not [bad for bad in plan.invalid if bad.row in rows], plan.invalid[:5]
    seen = {op.key for op in plan.updates} | {ref.key for ref in plan.unchanged}
    assert set(rows.values()) <= seen
    for op in plan.updates:
        if op.key in rows.values():
            assert "LotArea" not in changed_fields(op), (op.key, op.changes)
    before = stored(server, remote["ID"])
    assert eb.apply_plan(plan, client, server.serial, progress=False).ok
    after = stored(server, remote["ID"])
    for key in rows.values():
        assert same_value(after[key].get("LotArea"), before[key].get("LotArea")), key

    done = run_cli(
        server, "plan", str(PORTAL), "--lot-unit", "sqft", "--default", "CurrencySymbol=$",
        "--out", "portal.json",
    )  # fmt: skip
    assert "LOT SIZE: is required but empty" not in done.text, done.text


def test_a_sheet_without_a_price_column_plans_its_new_rows_as_invalid(
    market: tuple[EmulatorServer, eb.Client], tmp_path: Path
) -> None:
    """Issue bullet 8: a sheet with no price column creates nothing: its new rows are invalid,
    each with a reason about the price; the listings that exist keep theirs (nothing said)."""
    server, client = market
    remote = pull(client, server)
    new = remote.iloc[[0, 1, 2]].assign(
        MLSNumber=["NEW-P1", "NEW-P2", "NEW-P3"],
        Url=[f"https://homes.example/new-p{n}" for n in (1, 2, 3)],
        ID=pd.NA,
    )
    frame = pd.concat([remote, new], ignore_index=True).drop(
        columns=["SalePrice", "RentPrice", "UnitAreaPrice", "ZestimatePrice"]
    )
    sheet = eb.read_sheet(write_frame(frame, tmp_path / "no-price.xlsx"), defaults=UNIT)
    plan = eb.plan_sync(sheet, remote)
    assert not plan.creates, [op.key for op in plan.creates]
    assert not plan.updates, [(op.key, op.changes) for op in plan.updates[:5]]
    invalid = {bad.key: bad.reasons for bad in plan.invalid}
    assert set(invalid) == {"NEW-P1", "NEW-P2", "NEW-P3"}, plan.invalid
    for key, reasons in invalid.items():
        assert any("price" in reason.lower() for reason in reasons), (key, reasons)


# --------------------------------------------------------------------------- a resumed sync


def interrupt_after(child: subprocess.Popen[str], done_events: int) -> tuple[str, str]:
    """Ctrl-C (SIGINT) once the run's journal holds ``done_events`` finished writes."""
    deadline = time.monotonic() + 120
    while True:
        assert child.poll() is None, "the sync ended before it could be interrupted"
        assert time.monotonic() < deadline, "the journal never filled"
        journals = [p for p in Path().rglob("journal*") if p.is_file()]
        if journals and journals[0].read_text().count('"event": "done"') >= done_events:
            break
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    return child.communicate(timeout=120)


def test_a_resumed_complete_sync_does_not_report_computed_unit_prices_as_held_back(
    market: tuple[EmulatorServer, eb.Client], tmp_path: Path
) -> None:
    """Issue bullet 6: a sync of a pulled file with 20 prices changed, interrupted, then run
    again: the resume completes the run and reports changes made (``--detailed-exitcode``: 2),
    with no unit price the reader computed reported as held back; the prices landed."""
    server, client = market
    remote = pull(client, server)
    sales = remote[remote["SalePrice"].notna()].head(20)
    edits: Edits = {
        (str(row.MLSNumber), "SalePrice"): float(row.SalePrice) + 10_000
        for row in sales.itertuples()
    }
    path = edit_cells(
        write_frame(remote, tmp_path / "listings.xlsx"), tmp_path / "listings.xlsx", edits
    )
    args = ("sync", str(path), "--default", "AreaUnit=Square Feet", "--yes")
    server.faults.latency_ms = 100  # each write takes 100 ms: the run is caught midway
    server.faults.only = set(WRITES)
    child = subprocess.Popen(
        command(*args, "--concurrency", "1"),
        env=cli_env(server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = interrupt_after(child, 5)
    assert child.returncode == 130, out + err
    server.faults.clear()

    resumed = run_cli(server, *args, "--detailed-exitcode")
    assert "Resuming" in resumed.out, resumed.text
    assert "held back" not in resumed.text, resumed.text
    assert resumed.code == 2, resumed.text  # changes made, nothing invalid or held back
    after = pull(client, server).set_index("MLSNumber")
    for (key, _), price in edits.items():
        assert after.loc[key, "SalePrice"] == price, key
    runs = [json.loads(p.read_text()) for p in Path().rglob("run.json")]
    assert runs, "the sync kept no run folder"
    assert all(run.get("status") == "finished" for run in runs), runs
