"""Hostile listing text through the files the command line writes, against the real emulator.

Listings on the emulator carry descriptions a spreadsheet would run as formulas (``=SUM(A1)``,
``-5% off``, ``@SUM(A1)``), characters an xlsx cell cannot hold (``\\x0b``, ``\\x1b``,
``\\x00``), and text longer than a cell holds. ``estatebot pull --out`` and
``estatebot apply --backup`` write them; the files are read back with openpyxl, ``csv`` and our
own readers (``read_sheet``, ``read_backup``, ``restore``).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

import estatebot as eb
from estatebot._safe_cells import CellWarning, csv_text
from estatebot.cli import app
from estatebot.emulator import EmulatorServer, running
from estatebot.listings.sync.apply.backup import read_backup
from factories import make_listings

FORMULAS = [
    "=SUM(A1)",
    '=HYPERLINK("http://evil.example","click")',
    "+1+2",
    "-5% off",
    "@SUM(A1)",
    "'quoted",
    "''quoted twice",
    "NA",
    "None",
]
CONTROLS = ["a\x0bb", "\x1b[31mred\x1b[0m", "nul\x00x", "lit _x000B_ here", "one\r\ntwo"]
LONG = "Sunny. " * 5_999 + "Sunny!!"  # 42,000 characters: more than an xlsx cell holds
WRITES = ("RealEstateCreate", "RealEstateUpdate", "RealEstateDelete")


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with running(seed=None) as emulator:
        yield emulator


@pytest.fixture
def client(server: EmulatorServer) -> Iterator[eb.Client]:
    with eb.Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    ) as made:
        yield made


def add(server: EmulatorServer, descriptions: Sequence[str]) -> None:
    """Listings on the emulator, the n-th with the n-th description."""
    bodies = make_listings(len(descriptions), prefix="H")
    for body, text in zip(bodies, descriptions, strict=True):
        body["Description"] = text
    server.add_listings(server.serial, bodies)


def pull(client: eb.Client, server: EmulatorServer) -> pd.DataFrame:
    return eb.pull_listings(client, server.serial, progress=False)


def cli(server: EmulatorServer, *args: str) -> Any:
    env = {
        "ESTATEBOT_BASE_URL": server.base_url,
        "ESTATEBOT_API_KEY": server.api_key,
        "ESTATEBOT_SESSION_KEY": server.session_key,
        "ESTATEBOT_PROGRESS": "0",
    }
    return CliRunner().invoke(app, [*args, "--serial", server.serial], env=env)


def descriptions(frame: pd.DataFrame) -> dict[str, str]:
    return dict(zip(frame["MLSNumber"], frame["Description"], strict=True))


def column_of(path: Path, name: str) -> list[Any]:
    """The cells of column ``name`` below the header of the first sheet."""
    sheet = load_workbook(path).worksheets[0]
    header = [cell.value for cell in sheet[1]]
    return [row[header.index(name)] for row in sheet.iter_rows(min_row=2)]


def writes(server: EmulatorServer) -> int:
    return sum(server.request_counts[name] for name in WRITES)


# --------------------------------------------------------------------------- pull --out


def test_pull_to_xlsx_writes_formula_text_as_text_and_reads_back_unchanged(
    server: EmulatorServer, client: eb.Client, tmp_path: Path
) -> None:
    add(server, FORMULAS)
    target = tmp_path / "pulled.xlsx"
    done = cli(server, "pull", "--out", str(target))
    assert done.exit_code == 0, done.output

    remote = pull(client, server)
    cells = column_of(target, "Description")
    assert [c.value for c in cells] == remote["Description"].tolist()
    for cell in cells:
        assert cell.data_type == "s", cell.value  # a string cell, never a formula
        assert cell.quotePrefix is (cell.value[0] in "=+-@"), cell.value
    longitudes = column_of(target, "Longitude")
    assert all(c.data_type == "n" and c.value < 0 for c in longitudes)  # numbers stay numbers

    sheet = eb.read_sheet(target)
    assert descriptions(sheet.frame) == descriptions(remote)
    plan = eb.plan_sync(sheet, remote)
    assert plan.is_empty, plan.summary()
    assert len(plan.unchanged) == len(FORMULAS)


def test_pull_to_csv_quotes_formula_text_and_reads_back_exactly(
    server: EmulatorServer, client: eb.Client, tmp_path: Path
) -> None:
    add(server, FORMULAS)
    target = tmp_path / "pulled.csv"
    done = cli(server, "pull", "--out", str(target))
    assert done.exit_code == 0, done.output

    remote = pull(client, server)
    with target.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    written = [row["Description"] for row in rows]
    assert written == [csv_text(text) for text in remote["Description"]]
    assert all(text[0] not in "=+-@" for text in written)  # no cell starts a formula
    assert [row["Longitude"][0] for row in rows] == ["-"] * len(rows)  # numbers as numbers

    sheet = eb.read_sheet(target)
    assert descriptions(sheet.frame) == descriptions(remote)
    plan = eb.plan_sync(sheet, remote)
    assert plan.is_empty, plan.summary()
    assert len(plan.unchanged) == len(FORMULAS)


def test_pull_to_xlsx_removes_control_characters_and_names_the_cells(
    server: EmulatorServer, client: eb.Client, tmp_path: Path
) -> None:
    add(server, [*CONTROLS, "fine"])
    remote = pull(client, server)
    target = tmp_path / "pulled.xlsx"
    with pytest.warns(CellWarning) as caught:
        done = cli(server, "pull", "--out", str(target))
    assert done.exit_code == 0, done.output

    written = {c.value for c in column_of(target, "Description")}
    assert written == {"ab", "[31mred[0m", "nulx", "lit _x000B_ here", "one\ntwo", "fine"}
    (message,) = [str(w.message) for w in caught]
    assert "pulled.xlsx: 3 cells changed to fit a spreadsheet" in message
    rows = {text: n for n, text in enumerate(remote["Description"], start=2)}
    for text, code in (("a\x0bb", "U+000B"), ("nul\x00x", "U+0000"), (CONTROLS[1], "U+001B")):
        assert f"row {rows[text]}, Description: removed " in message
        assert f"a cell cannot hold ({code})" in message

    # csv holds every character: it keeps them, exactly.
    done = cli(server, "pull", "--out", str(tmp_path / "pulled.csv"))
    assert done.exit_code == 0, done.output
    with (tmp_path / "pulled.csv").open(encoding="utf-8", newline="") as handle:
        kept = {row["Description"] for row in csv.DictReader(handle)}
    assert kept == set(remote["Description"])


def test_pull_to_xlsx_refuses_text_longer_than_a_cell_naming_it(
    server: EmulatorServer, client: eb.Client, tmp_path: Path
) -> None:
    add(server, ["short", LONG])
    remote = pull(client, server)
    row = remote["Description"].tolist().index(LONG) + 2
    target = tmp_path / "pulled.xlsx"
    done = cli(server, "pull", "--out", str(target))
    assert done.exit_code == 1
    assert "a text of 42,000 characters is longer than an xlsx cell holds (32,767)" in done.output
    assert f"row {row}, column 'Description'" in done.output
    assert ".csv or .parquet" in done.output
    assert "Traceback" not in done.output
    assert not target.exists()

    done = cli(server, "pull", "--out", str(tmp_path / "pulled.csv"))
    assert done.exit_code == 0, done.output
    with (tmp_path / "pulled.csv").open(encoding="utf-8", newline="") as handle:
        assert LONG in {row["Description"] for row in csv.DictReader(handle)}  # kept whole


# --------------------------------------------------------------------------- apply --backup


def more_bedrooms(remote: pd.DataFrame) -> pd.DataFrame:
    """The pulled listings as a sheet with one more bedroom each (every listing updated)."""
    sheet = remote.drop(columns=["ID"]).reset_index(drop=True)
    sheet["Bedrooms"] = sheet["Bedrooms"] + 1
    sheet["AreaUnit"] = "Square Feet"  # never returned by the service; an update sends it
    return sheet


def test_xlsx_backup_gives_back_every_hostile_text_exactly(
    server: EmulatorServer, client: eb.Client, tmp_path: Path
) -> None:
    add(server, [*FORMULAS, *CONTROLS])
    remote = pull(client, server)
    plan = eb.plan_sync(more_bedrooms(remote), remote)
    assert len(plan.updates) == len(FORMULAS) + len(CONTROLS)
    plan.save(tmp_path / "plan.json")
    backup = tmp_path / "backup.xlsx"

    done = cli(server, "apply", str(tmp_path / "plan.json"), "--backup", str(backup))
    assert done.exit_code == 0, done.output
    assert descriptions(read_backup(backup)) == descriptions(remote)
    for cell in column_of(backup, "Description"):
        assert cell.data_type == "s", cell.value  # no formula in the backup either
    # Escaped as the format does, which Excel shows as the character itself.
    assert "a_x000B_b" in {c.value for c in column_of(backup, "Description")}

    done = cli(server, "restore", str(backup))
    assert done.exit_code == 0, done.output
    after = pull(client, server)
    assert descriptions(after) == descriptions(remote)
    assert after["Bedrooms"].tolist() == remote["Bedrooms"].tolist()


def test_xlsx_backup_refuses_text_longer_than_a_cell_and_nothing_changes(
    server: EmulatorServer, client: eb.Client, tmp_path: Path
) -> None:
    add(server, ["short", LONG])
    remote = pull(client, server)
    plan = eb.plan_sync(more_bedrooms(remote), remote)
    before = writes(server)

    with pytest.raises(eb.PlanError) as raised:
        plan.apply(client, server.serial, backup=tmp_path / "backup.xlsx", progress=False)
    error = raised.value
    assert error.column == "Description"
    assert error.row == remote["Description"].tolist().index(LONG) + 2
    assert "42,000 characters, longer than an xlsx cell holds (32,767)" in str(error)
    assert "use a .json backup" in str(error)
    assert writes(server) == before  # refused before the first change
    assert pull(client, server)["Bedrooms"].tolist() == remote["Bedrooms"].tolist()
    assert list(tmp_path.iterdir()) == []  # no backup, no partial file

    # A .json backup keeps the text whole, and restore puts it back.
    report = plan.apply(client, server.serial, backup=tmp_path / "backup.json", progress=False)
    assert report.ok, str(report)
    assert LONG in set(read_backup(tmp_path / "backup.json")["Description"])
    assert eb.restore(tmp_path / "backup.json", client, server.serial, progress=False).ok
    after = pull(client, server)
    assert descriptions(after) == descriptions(remote)
    assert after["Bedrooms"].tolist() == remote["Bedrooms"].tolist()
