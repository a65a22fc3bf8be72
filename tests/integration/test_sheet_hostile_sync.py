"""Hostile sheets synced to the emulator over HTTP: the rows the reader rejects are not written,
and nothing misread reaches the service (no re-decoded text, no infinite number, no blank
standing in for a value the file hides).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest

import estatebot as eb
from estatebot.emulator import EmulatorServer
from fixtures_sheets import SHEET_ROW

#: A complete listing by API field names (every field a create needs).
BASE: dict[str, Any] = {
    **SHEET_ROW,
    "City": "Austin",
    "SalePrice": 450000,
    "Description": "Café near the park",
}
HEADERS = list(BASE)


def listing(i: int, **values: Any) -> dict[str, Any]:
    return {**BASE, "MLSNumber": f"M{i}", "Url": f"https://example.com/{i}", **values}


@pytest.fixture
def client(empty_emulator: EmulatorServer) -> Iterator[eb.Client]:
    with eb.Client(
        base_url=empty_emulator.base_url,
        api_key=empty_emulator.api_key,
        session_key=empty_emulator.session_key,
    ) as made:
        yield made


def sync(sheet: eb.Sheet, client: eb.Client, serial: str, tmp_path: Path) -> pd.DataFrame:
    """Plan against the service, save the plan, apply it, and pull what the service holds."""
    remote = eb.pull_listings(client, serial, progress=False)
    plan = eb.plan_sync(sheet, remote)
    plan.save(tmp_path / "plan.json")  # an infinite number in a body would fail here
    plan.apply(client, serial, journal=tmp_path / "sync.journal", progress=False)
    return eb.pull_listings(client, serial, progress=False)


def test_a_csv_with_a_stray_byte_and_bad_numbers_writes_only_its_sound_rows(
    tmp_path: Path, empty_emulator: EmulatorServer, client: eb.Client
) -> None:
    lines = [",".join(HEADERS)]
    rows = [listing(i) for i in range(1, 21)]
    rows += [
        listing(21, Description="Caf\udce9 with a Latin-1 byte"),
        listing(22, SalePrice="inf"),
        listing(23, SalePrice="1e400"),
        listing(24, BuildingArea="$1,2,3"),
    ]
    for row in rows:
        lines.append(",".join(str(row[h]) for h in HEADERS))
    path = tmp_path / "export.csv"
    path.write_bytes("\r\n".join(lines).encode("utf-8", "surrogateescape"))

    sheet = eb.read_sheet(path)
    assert sheet.invalid_rows == [22, 23, 24, 25]

    listings = sync(sheet, client, empty_emulator.serial, tmp_path)
    assert sorted(listings["MLSNumber"]) == sorted(f"M{i}" for i in range(1, 21))
    assert set(listings["Description"]) == {"Café near the park"}
    prices = listings["SalePrice"].to_numpy(dtype=float)
    assert all(math.isfinite(p) for p in prices)


def test_an_xlsx_with_formulas_merges_and_a_stray_cell_writes_only_its_sound_rows(
    tmp_path: Path, empty_emulator: EmulatorServer, client: eb.Client
) -> None:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(HEADERS)
    for i in range(1, 11):
        sheet.append([listing(i)[h] for h in HEADERS])
    price = openpyxl.utils.get_column_letter(HEADERS.index("SalePrice") + 1)
    city = openpyxl.utils.get_column_letter(HEADERS.index("City") + 1)
    sheet[f"{price}3"] = "=400000+50000"  # row 3 (M2): a formula with no saved value
    for r in (7, 8):
        sheet[f"{city}{r}"] = None
    sheet.merge_cells(f"{city}6:{city}8")  # rows 7-8 (M6, M7) show Austin, hold nothing
    sheet["XFD4"] = "stray"
    path = tmp_path / "export.xlsx"
    workbook.save(path)

    read = eb.read_sheet(path, defaults={"City": "Elsewhere"})
    assert read.invalid_rows == [3, 7, 8]
    assert read.warnings["message"].str.startswith("XFD4: a value right of the last header").any()

    listings = sync(read, client, empty_emulator.serial, tmp_path)
    expected = {f"M{i}" for i in range(1, 11)} - {"M2", "M6", "M7"}
    assert set(listings["MLSNumber"]) == expected
    assert set(listings["City"]) == {"Austin"}  # the default never stood in for a merged cell
