"""Every ``read_sheet`` option has a flag on ``estatebot plan`` (and ``sync``): each one, run as
a child process against the emulator, changes the saved plan as its option does."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openpyxl import Workbook

import estatebot as eb
from clirun import Done, run_cli
from estatebot.emulator import EmulatorServer, running
from estatebot.listings import write_frame

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
#: The service never shows AreaUnit: an update needs it from the sheet or a default.
UNIT = ("--default", "AreaUnit=Square Feet")

Row = dict[str, str]


@pytest.fixture
def small() -> Iterator[EmulatorServer]:
    """The demo chatbot with its 16 small-seed listings (ATX1001, ATX1002, ...)."""
    with running(seed="small") as server:
        yield server


@pytest.fixture
def rows(small: EmulatorServer, tmp_path: Path) -> list[Row]:
    """The listings as pulled, one dict of cell texts per row (the file a pull writes)."""
    with eb.Client(
        base_url=small.base_url, api_key=small.api_key, session_key=small.session_key
    ) as client:
        frame = eb.pull_listings(client, small.serial, progress=False)
    path = write_frame(frame, tmp_path / "pulled.csv")
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def xlsx(path: Path, table: list[Row], *, before: list[list[str]] | None = None) -> Path:
    """``table`` written as a workbook with openpyxl; ``before`` is a sheet put first."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    if before is not None:
        sheet.title = "Notes"
        for line in before:
            sheet.append(line)
        sheet = book.create_sheet("Listings")
    header = list(table[0])
    sheet.append(header)
    for row in table:
        sheet.append([row.get(name, "") for name in header])
    book.save(path)
    return path


def row_of(table: list[Row], key: str) -> Row:
    return next(row for row in table if row["MLSNumber"] == key)


def plan(server: EmulatorServer, sheet: Path, *flags: str) -> tuple[Done, dict[str, Any]]:
    """``estatebot plan SHEET FLAGS --detailed-exitcode`` (2 changes, 3 rows not synced), and
    the plan it saved."""
    done = run_cli(server, "plan", str(sheet), "--out", "plan.json", "--detailed-exitcode", *flags)
    saved = json.loads(Path("plan.json").read_text("utf-8")) if done.code in (0, 2, 3) else {}
    Path("plan.json").unlink(missing_ok=True)
    return done, saved


def changes(saved: dict[str, Any]) -> dict[str, dict[str, list[Any]]]:
    """The saved plan's updates: key -> field -> [before, after]."""
    return {
        op["key"]: {field: [old, new] for field, old, new in op["changes"]}
        for op in saved["updates"]
    }


# --------------------------------------------------------------------------- mapping, sheet


@pytest.mark.parametrize("kind", ["csv", "json"])
def test_mapping_file_maps_a_header_to_a_field(
    small: EmulatorServer, rows: list[Row], tmp_path: Path, kind: str
) -> None:
    table = [{("Asking" if k == "SalePrice" else k): v for k, v in row.items()} for row in rows]
    row_of(table, "ATX1001")["Asking"] = "455000"
    sheet = xlsx(tmp_path / "renamed.xlsx", table)
    unmapped, saved = plan(small, sheet, *UNIT)
    assert unmapped.code == 2, unmapped.text
    assert "SalePrice" not in changes(saved)["ATX1001"]  # "Asking" is an extra column

    mapping = tmp_path / f"mapping.{kind}"
    if kind == "csv":
        mapping.write_text("header,field\nAsking,SalePrice\n", "utf-8")
    else:
        mapping.write_text(json.dumps({"Asking": "SalePrice"}), "utf-8")
    mapped, saved = plan(small, sheet, *UNIT, "--mapping", str(mapping))
    assert mapped.code == 2, mapped.text
    # The sheet's unit price is the listing's own: the computed one goes with the price change.
    assert changes(saved) == {
        "ATX1001": {"SalePrice": [450000.0, 455000.0], "UnitAreaPrice": [243.24, 245.95]}
    }
    assert re.search(r"SalePrice +\$450,000 -> \$455,000", mapped.out), mapped.out


def test_a_mapping_file_that_cannot_be_read_names_the_flag_file_and_row(
    small: EmulatorServer, rows: list[Row], tmp_path: Path
) -> None:
    sheet = xlsx(tmp_path / "listings.xlsx", rows)
    mapping = tmp_path / "mapping.csv"
    mapping.write_text("Asking,SalePrice\nBeds,Bedrooms,extra\n", "utf-8")
    done, _ = plan(small, sheet, "--mapping", str(mapping))
    assert done.code == 1, done.text
    assert done.err.startswith(f"error: --mapping {mapping}, row 2: expected two cells")
    assert "Traceback" not in done.text

    mapping.write_text('{"Asking": ', "utf-8")
    mapping = mapping.rename(tmp_path / "mapping.json")
    done, _ = plan(small, sheet, "--mapping", str(mapping))
    assert done.code == 1, done.text
    assert f"--mapping {mapping}: not valid JSON (line 1" in done.err

    missing = run_cli(small, "plan", str(sheet), "--mapping", str(tmp_path / "nope.csv"))
    assert missing.code == 64, missing.text  # not there: a mistake of the command line
    assert "--mapping" in missing.err


def test_sheet_picks_the_worksheet_by_name_or_number(
    small: EmulatorServer, rows: list[Row], tmp_path: Path
) -> None:
    book = xlsx(tmp_path / "two.xlsx", rows, before=[["Exported by the MLS"]])
    first, _ = plan(small, book)
    # The first sheet holds no listings: the reader says so and reads the one that does.
    assert first.code == 0, first.text
    assert "the first worksheet has no MLSNumber column: read worksheet 2 instead" in first.out
    assert "16 unchanged" in first.out

    # That first sheet alone is no listings sheet: an error naming what it holds, never in step.
    notes = xlsx(tmp_path / "notes.xlsx", [{"Exported by the MLS": ""}])
    alone, _ = plan(small, notes)
    assert alone.code == 1, alone.text
    assert alone.err.startswith(
        "error: notes.xlsx: no listing rows (the header row is all there is; its columns are "
        "Exported by the MLS)"
    )

    for choice in ("Listings", "2"):
        done, saved = plan(small, book, "--sheet", choice)
        assert done.code == 0, done.text
        assert len(saved["unchanged"]) == 16

    done, _ = plan(small, book, "--sheet", "3")
    assert done.code == 1, done.text
    assert "two.xlsx has no worksheet named '3' and fewer than 3 worksheets" in done.err


# --------------------------------------------------------------------------- units, statuses


def test_lot_unit_lets_the_portal_export_be_planned(tmp_path: Path) -> None:
    portal = SAMPLES / "portal_export.csv"
    with running(seed="demo") as demo:
        refused = run_cli(demo, "plan", str(portal), "--default", "CurrencySymbol=$")
        assert refused.code == 1, refused.text
        assert "pass --lot-unit sqft, sqm or acres" in refused.err
        assert "lot_unit" not in refused.err

        done, saved = plan(
            demo, portal, "--lot-unit", "sqft", "--default", "CurrencySymbol=$",
            "--default", "ParkingSpots=0", "--default", "LotArea=0",
        )  # fmt: skip
        assert done.code in (2, 3), done.text
        assert saved["key_type"] == "MLSNumber"
        assert len(saved["unchanged"]) + len(saved["updates"]) >= 100

        bad = run_cli(demo, "plan", str(portal), "--lot-unit", "furlongs")
        assert bad.code == 64, bad.text
        assert "--lot-unit" in bad.err


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("Active", {"ExtensionColumn": [{}, {"StandardStatus": "Pending"}]}),
        ("Sold", {"Status": ["Active", "Sold"],
                  "ExtensionColumn": [{}, {"StandardStatus": "Pending"}]}),
    ],
)  # fmt: skip
def test_pending_status_says_what_a_pending_listing_becomes(
    small: EmulatorServer, rows: list[Row], tmp_path: Path, choice: str, expected: Any
) -> None:
    row_of(rows, "ATX1002")["Status"] = "Pending"
    sheet = xlsx(tmp_path / "pending.xlsx", rows)
    done, saved = plan(small, sheet, *UNIT, "--pending-status", choice)
    assert done.code == 2, done.text
    assert changes(saved) == {"ATX1002": expected}


def test_pending_status_off_market_deletes_the_listing(
    small: EmulatorServer, rows: list[Row], tmp_path: Path
) -> None:
    row_of(rows, "ATX1002")["Status"] = "Pending"
    done, saved = plan(
        small, xlsx(tmp_path / "p.xlsx", rows), *UNIT, "--pending-status", "off-market"
    )
    assert done.code == 2, done.text
    assert [op["key"] for op in saved["deletes"]] == ["ATX1002"]
    assert "- ATX1002  row 3, ID 10002: unpublished in the sheet (Pending)" in done.out


def test_statuses_file_reads_the_mls_codes(
    small: EmulatorServer, rows: list[Row], tmp_path: Path
) -> None:
    row_of(rows, "ATX1001")["Status"] = "ZZ"
    sheet = xlsx(tmp_path / "codes.xlsx", rows)
    unknown, _ = plan(small, sheet, *UNIT)
    assert unknown.code == 3, unknown.text
    assert "Status: is not a known status (value 'ZZ')" in unknown.out

    statuses = tmp_path / "statuses.csv"
    statuses.write_text("code,status\nZZ,Closed\n", "utf-8")
    done, saved = plan(small, sheet, *UNIT, "--statuses", str(statuses))
    assert done.code == 2, done.text
    assert changes(saved) == {"ATX1001": {"Status": ["Active", "Sold"]}}


# --------------------------------------------------------------------------- cells


def test_clear_token_names_the_text_that_empties_a_field(
    small: EmulatorServer, rows: list[Row], tmp_path: Path
) -> None:
    row_of(rows, "ATX1003")["Description"] = "#EMPTY"
    sheet = xlsx(tmp_path / "clear.xlsx", rows)
    _, saved = plan(small, sheet, *UNIT)
    assert changes(saved)["ATX1003"]["Description"][1] == "#EMPTY"
    done, saved = plan(small, sheet, *UNIT, "--clear-token", "#EMPTY")
    assert done.code == 2, done.text
    assert changes(saved) == {"ATX1003": {"Description": ["2-bedroom condo in Austin.", None]}}
    assert 'Description  "2-bedroom condo in Austin." -> (none)' in done.out


def test_no_extensions_leaves_unknown_headers_out(
    small: EmulatorServer, rows: list[Row], tmp_path: Path
) -> None:
    for row in rows:
        row["Fireplace"] = "Yes" if row["MLSNumber"] == "ATX1001" else ""
    sheet = xlsx(tmp_path / "extra.xlsx", rows)
    kept, saved = plan(small, sheet, *UNIT)
    assert changes(saved) == {"ATX1001": {"ExtensionColumn": [{}, {"Fireplace": "Yes"}]}}
    assert 'ExtensionColumn.Fireplace  (none) -> "Yes"' in kept.out
    done, saved = plan(small, sheet, *UNIT, "--no-extensions")
    assert done.code == 0, done.text
    assert saved["updates"] == []


def test_decimal_baths_reads_2_1_as_two_full_and_one_half(
    small: EmulatorServer, rows: list[Row], tmp_path: Path
) -> None:
    row_of(rows, "ATX1001")["Bathrooms"] = "2.1"
    sheet = xlsx(tmp_path / "baths.xlsx", rows)
    _, saved = plan(small, sheet, *UNIT)
    assert changes(saved)["ATX1001"] == {"Bathrooms": [2.0, 2.1]}
    done, saved = plan(small, sheet, *UNIT, "--decimal-baths")
    assert done.code == 2, done.text
    assert changes(saved)["ATX1001"] == {"Bathrooms": [2.0, 2.5]}


def test_encoding_reads_a_csv_saved_by_excel_on_windows(
    small: EmulatorServer, rows: list[Row], tmp_path: Path
) -> None:
    row_of(rows, "ATX1001")["Description"] = "Café near the park."
    path = tmp_path / "windows.csv"
    with path.open("w", encoding="cp1252", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    refused, _ = plan(small, path, *UNIT)
    assert refused.code == 1, refused.text
    assert "Pass --encoding cp1252 for a file from Excel on Windows" in refused.err
    assert "encoding=" not in refused.err

    done, saved = plan(small, path, *UNIT, "--encoding", "cp1252")
    assert done.code == 2, done.text
    assert changes(saved)["ATX1001"]["Description"][1] == "Café near the park."

    bad = run_cli(small, "plan", str(path), "--encoding", "klingon")
    assert bad.code == 64, bad.text
    assert "--encoding" in bad.err
    assert "'klingon' is not a text encoding" in bad.err


def test_engine_openpyxl_plans_the_same_as_the_fast_reader(
    small: EmulatorServer, rows: list[Row], tmp_path: Path
) -> None:
    row_of(rows, "ATX1001")["Bedrooms"] = "5"
    sheet = xlsx(tmp_path / "engine.xlsx", rows)
    fast, fast_saved = plan(small, sheet, *UNIT)
    slow, slow_saved = plan(small, sheet, *UNIT, "--engine", "openpyxl")
    assert fast.code == slow.code == 2, slow.text
    assert changes(slow_saved) == changes(fast_saved) == {"ATX1001": {"Bedrooms": [3, 5]}}
    bad = run_cli(small, "plan", str(sheet), "--engine", "xlrd")
    assert bad.code == 64, bad.text
    assert "--engine" in bad.err


# --------------------------------------------------------------------------- planning


def test_accept_flagged_plans_what_the_reader_held_back(tmp_path: Path) -> None:
    pitfalls = SAMPLES / "mls_export_pitfalls.xlsx"
    with running(seed="demo") as demo:
        held, saved = plan(demo, pitfalls, "--default", "CurrencySymbol=$")
        assert held.code == 3, held.text
        assert [h[1] for h in saved["held_back"]] == ["BN2348456"]
        assert "(--accept-flagged writes it)" in held.out

        done, saved = plan(demo, pitfalls, "--default", "CurrencySymbol=$", "--accept-flagged")
        assert done.code == 3, done.text  # the invalid rows are still there
        assert saved["held_back"] == []
        assert changes(saved)["BN2348456"]["ZIP"] == ["02215", "2215"]


def test_key_url_matches_by_url(small: EmulatorServer, rows: list[Row], tmp_path: Path) -> None:
    done, saved = plan(small, xlsx(tmp_path / "l.xlsx", rows), "--key", "url")
    assert done.code == 0, done.text
    assert saved["key_type"] == "URL"
    assert "Nothing to change: the listings are in step with the sheet." in done.out


def test_detail_and_max_rows_bound_what_is_shown(tmp_path: Path) -> None:
    week2 = str(SAMPLES / "mls_export_week2.xlsx")
    with running(seed="demo") as demo:
        capped = run_cli(
            demo, "plan", week2, "--default", "CurrencySymbol=$", "--max-rows", "2",
            "--detailed-exitcode",
        )  # fmt: skip
        assert capped.code == 2, capped.text
        assert len(re.findall(r"^  ~ [A-Z]{2}\d", capped.out, re.MULTILINE)) == 2
        assert "... and 19 more (--max-rows 0 shows all; every row is in plan.xlsx)" in capped.out

        summary = run_cli(
            demo, "plan", week2, "--default", "CurrencySymbol=$", "--detail", "summary",
            "--detailed-exitcode",
        )  # fmt: skip
        assert summary.code == 2, summary.text
        assert not re.search(r"^  [~+-] ", summary.out, re.MULTILINE)
        assert "Plan: 8 create, 21 update, 4 delete" in summary.out

        full = run_cli(
            demo, "plan", week2, "--default", "CurrencySymbol=$", "--detail", "full",
            "--detailed-exitcode",
        )  # fmt: skip
        assert full.code == 2, full.text
        # Every field of a created listing, and the fields whose value on the service is unknown.
        assert re.search(r"^      YearBuilt +1984$", full.out, re.MULTILINE)
        assert re.search(
            r"^      ExtensionColumn +ListingKey=[0-9a-f]{32}$", full.out, re.MULTILINE
        )
        assert re.search(
            r"^      Location +unknown on the service: the value last sent$", full.out, re.MULTILINE
        )
