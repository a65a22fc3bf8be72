"""The fleet sample: one MLS export for a fleet of chatbots, a sheet per chatbot, and manifests.

:func:`write_fleet_sample` writes, for the emulator's fleet (``running(chatbots=N,
listings_per_chatbot=M, fleet_seed=SEED)``, see :mod:`estatebot.emulator.fleet_seed`):

* ``mls_export.xlsx``: one RESO-style export (the headers of ``sample_data/mls_export.xlsx``)
  holding every chatbot's listings, with a ``ListAgentMlsId`` column naming each row's agent
  (``A001`` for fleet chatbot 1, ...). A share ``changed`` of each agent's rows has a new price;
  every other row is exactly what the emulator holds, so planning an agent's rows against a
  fresh emulator finds one update per changed row and nothing else;
* ``sheets/<agent>.xlsx``: the same rows, one workbook per agent;
* ``manifest.csv``: one row per chatbot (``serial,name,sheet,where,key,delete_missing``) with
  the shared export filtered by ``ListAgentMlsId = A001``, and ``manifest_own_sheets.csv``, the
  same with each chatbot's own sheet and no filter. Paths are relative to the manifests' folder;
* ``chat_tests.csv``: chat test cases every chatbot of the fleet passes (its greeting, and a
  question its listings answer), for ``estatebot fleet test-chat``.

The rows carry what a RESO export says (``ListPrice``, ``BathroomsFull``, ``AssociationFee``
and its frequency, ...) worked back from the listings the emulator stores: the reader reads them
to those listings again. 100 chatbots of 2,000 listings (twice 200,000 rows) take seconds: the
rows are streamed into the worksheet XML of a workbook openpyxl lays out.

``python -m estatebot.sample.fleet_sample FOLDER --chatbots N --listings-per-chatbot M``
writes it from the command line. It needs the emulator's extra (``estatebot[emulator]``), whose
fleet it describes. The fleet's listings hold no Location: plan with
``blank_unknown_location=True`` (or ``ESTATEBOT_BLANK_UNKNOWN_LOCATION=1``), or the changed rows
are held back rather than updated.
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from openpyxl import Workbook
from openpyxl.utils import get_column_letter

from estatebot.emulator.fleet_seed import (
    AGENT_COLUMN,
    agent_id,
    check_fleet_size,
    fleet_chatbot_settings,
    fleet_listings,
    fleet_serials,
)

from .styles import RESO_HEADERS

__all__ = [
    "FLEET_HEADERS",
    "MANIFEST_COLUMNS",
    "FleetSample",
    "fleet_rows",
    "main",
    "write_fleet_sample",
]

#: The shared export's headers: the RESO export's, then the agent's MLS ID.
FLEET_HEADERS: tuple[str, ...] = (*RESO_HEADERS, AGENT_COLUMN)
#: The columns of both manifests.
MANIFEST_COLUMNS: tuple[str, ...] = ("serial", "name", "sheet", "where", "key", "delete_missing")

EXPORT = "mls_export.xlsx"
SHEETS = "sheets"
MANIFEST = "manifest.csv"
CHAT_TESTS = "chat_tests.csv"
MANIFEST_OWN_SHEETS = "manifest_own_sheets.csv"

# The RESO status of a stored Status (a Pending or Under Contract listing keeps its own in
# ExtensionColumn, as the reader stores it).
_STANDARD_STATUS = {"Active": "Active", "PreOnMarket": "Coming Soon", "Sold": "Closed"}
# Any start will do: the reader takes a filled open-house column as a tour, whatever its time.
_OPEN_HOUSE = "2025-06-07T11:00:00"
_SHEET_XML = "xl/worksheets/sheet1.xml"


@dataclass(frozen=True)
class FleetSample:
    """What :func:`write_fleet_sample` wrote, and which rows it changed.

    Attributes:
        folder: the folder holding everything.
        export: the shared MLS export.
        sheets: each agent's own sheet, by agent ID.
        manifest: the manifest filtering the shared export by agent.
        manifest_own_sheets: the manifest giving each chatbot its own sheet.
        serials: the fleet's serials, in the order of the agents.
        agents: the agent IDs, ``A001`` first.
        changed: the MLS numbers whose price differs from the emulator's, by serial.
        rows: the rows of the shared export (not counting its header).
        chat_tests: chat test cases every chatbot of the fleet passes.
    """

    folder: Path
    export: Path
    sheets: dict[str, Path]
    manifest: Path
    manifest_own_sheets: Path
    serials: list[str]
    agents: list[str]
    changed: dict[str, list[str]]
    rows: int
    chat_tests: Path | None = None


# --------------------------------------------------------------------------- rows


def _number(value: float | int | None) -> int | float | None:
    """A number as a spreadsheet holds it: whole values as int."""
    if value is None:
        return None
    return int(value) if float(value).is_integer() else float(value)


def _reso_row(listing: Mapping[str, Any], agent: str) -> list[Any]:
    """The export row the reader reads to ``listing`` (a stored listing of the fleet)."""
    extensions = {item["Key"]: item["value"] for item in listing.get("ExtensionColumn", [])}
    status = extensions.get("StandardStatus") or _STANDARD_STATUS[listing["Status"]]
    rent = listing["SaleType"] == "for_rent"
    price = _number(listing["RentPrice" if rent else "SalePrice"])
    baths = float(listing["Bathrooms"])
    hoa = listing.get("HOAMonth")
    tours = listing.get("Tours")
    mls = str(listing["MLSNumber"])
    return [
        extensions.get("ListingKey"),
        mls,
        status,
        "Residential Lease" if rent else "Residential",
        listing["PropertyType"],
        price,
        price if status == "Closed" else None,
        listing["Bedrooms"],
        int(baths),
        1 if baths % 1 else 0,
        _number(listing["BuildingArea"]),
        "Square Feet",
        _number(listing["LotArea"]),
        None,
        listing["YearBuilt"],
        listing["DaysOnMarket"],
        listing["ParkingSpots"],
        _number(hoa),
        "Monthly" if hoa is not None else None,
        listing["Address"],
        listing["City"],
        listing["State"],
        listing["ZIP"],
        listing["Latitude"],
        listing["Longitude"],
        listing["Description"],
        listing["Url"],
        ",".join(listing["Images"]),
        f"https://tours.example.com/{mls.lower()}" if tours == "3D" else None,
        _OPEN_HOUSE if tours == "OpenHouse" else None,
        extensions.get("Pool"),
        extensions.get("View"),
        agent,
    ]


def _repriced(listing: Mapping[str, Any]) -> dict[str, Any]:
    """``listing`` with a price cut: 3% off, rounded as asking prices are (never the same)."""
    field = "RentPrice" if listing["SaleType"] == "for_rent" else "SalePrice"
    old = float(listing[field])
    step = 25 if field == "RentPrice" else 1000
    new = max(step, round(old * 0.97 / step) * step)
    return {**listing, field: float(new if new != old else old - step)}


def fleet_rows(
    number: int, listings_per_chatbot: int, changed: float = 0.05, seed: int = 0
) -> tuple[list[list[Any]], list[str]]:
    """Fleet chatbot ``number``'s export rows (:data:`FLEET_HEADERS`), and the MLS numbers of
    the rows whose price was changed (``round(changed * listings_per_chatbot)`` of them, drawn
    from ``seed`` and ``number``)."""
    listings = fleet_listings(number, listings_per_chatbot, seed)
    rng = random.Random(f"estatebot-fleet-changes:{seed}:{number}")
    picked = set(rng.sample(range(len(listings)), round(changed * len(listings))))
    agent = agent_id(number)
    rows = []
    for position, listing in enumerate(listings):
        rows.append(_reso_row(_repriced(listing) if position in picked else listing, agent))
    return rows, [str(listings[i]["MLSNumber"]) for i in sorted(picked)]


# --------------------------------------------------------------------------- workbooks


def _cell(reference: str, value: Any) -> str:
    if isinstance(value, bool):
        return f'<c r="{reference}" t="b"><v>{int(value)}</v></c>'
    if isinstance(value, int | float):
        return f'<c r="{reference}" t="n"><v>{value!r}</v></c>'
    text = escape(str(value))
    space = ' xml:space="preserve"' if text != text.strip() else ""
    return f'<c r="{reference}" t="inlineStr"><is><t{space}>{text}</t></is></c>'


def _rows_xml(rows: Iterable[Sequence[Any]], letters: Sequence[str], first: int) -> Iterable[str]:
    for r, row in enumerate(rows, start=first):
        cells = "".join(
            _cell(f"{letter}{r}", value)
            for letter, value in zip(letters, row, strict=True)
            if value is not None
        )
        yield f'<row r="{r}">{cells}</row>'


def write_rows_xlsx(
    path: str | PathLike[str], headers: Sequence[str], rows: Iterable[Sequence[Any]]
) -> Path:
    """Write one worksheet, ``Property``: the headers, then the rows (text and numbers).

    openpyxl lays out the workbook (its parts, styles and the header row); the rows are
    streamed into the worksheet's XML as openpyxl's write-only mode writes them, about ten
    times as fast, so 200,000 rows take seconds and little memory.
    """
    workbook = Workbook(write_only=True)
    sheet = workbook.create_sheet("Property")
    sheet.append(list(headers))
    laid_out = io.BytesIO()
    workbook.save(laid_out)
    letters = [get_column_letter(c) for c in range(1, len(headers) + 1)]
    target = Path(path)
    with (
        zipfile.ZipFile(laid_out) as source,
        zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as out,
    ):
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename != _SHEET_XML:
                out.writestr(info, data)
                continue
            head, tail = data.decode("utf-8").split("</sheetData>")
            with out.open(_SHEET_XML, "w") as stream:
                stream.write(head.encode("utf-8"))
                batch: list[str] = []
                for line in _rows_xml(rows, letters, 2):
                    batch.append(line)
                    if len(batch) == 1000:
                        stream.write("".join(batch).encode("utf-8"))
                        batch.clear()
                stream.write("".join(batch).encode("utf-8"))
                stream.write(f"</sheetData>{tail}".encode())
    return target


# --------------------------------------------------------------------------- the sample


def _write_manifest(path: Path, rows: Iterable[Sequence[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(MANIFEST_COLUMNS)
        writer.writerows(rows)
    return path


def write_fleet_sample(
    folder: str | PathLike[str],
    chatbots: int = 20,
    listings_per_chatbot: int = 20,
    changed: float = 0.05,
    seed: int = 0,
) -> FleetSample:
    """Write the fleet sample (see the module) into ``folder``, created if needed.

    Args:
        folder: where to write it.
        chatbots: how many fleet chatbots (as ``running(chatbots=...)``).
        listings_per_chatbot: the listings of each (as ``running(listings_per_chatbot=...)``).
        changed: the share of each chatbot's rows given a new price (0 to 1).
        seed: the fleet seed (as ``running(fleet_seed=...)``).

    Returns:
        Where everything is, the serials and agents, and the rows changed.

    Raises:
        ValueError: ``chatbots`` or ``listings_per_chatbot`` is out of range, or ``changed`` is
            not a number from 0 to 1; nothing is written then.
    """
    check_fleet_size(chatbots, listings_per_chatbot)
    share = isinstance(changed, int | float) and not isinstance(changed, bool)
    if not (share and 0.0 <= changed <= 1.0):
        raise ValueError(f"changed must be a share from 0 to 1, not {changed!r}")
    root = Path(folder)
    (root / SHEETS).mkdir(parents=True, exist_ok=True)
    serials = fleet_serials(chatbots)
    agents = [agent_id(number) for number in range(1, chatbots + 1)]
    every_row: list[list[Any]] = []
    sheets: dict[str, Path] = {}
    changes: dict[str, list[str]] = {}
    for number, (serial, agent) in enumerate(zip(serials, agents, strict=True), start=1):
        rows, repriced = fleet_rows(number, listings_per_chatbot, changed, seed)
        sheets[agent] = write_rows_xlsx(root / SHEETS / f"{agent}.xlsx", FLEET_HEADERS, rows)
        changes[serial] = repriced
        every_row.extend(rows)
    export = write_rows_xlsx(root / EXPORT, FLEET_HEADERS, every_row)
    names = [str(fleet_chatbot_settings(number)["Name"]) for number in range(1, chatbots + 1)]
    shared = [
        (serial, name, EXPORT, f"{AGENT_COLUMN} = {agent}", "MLSNumber", "true")
        for serial, name, agent in zip(serials, names, agents, strict=True)
    ]
    own = [
        (serial, name, f"{SHEETS}/{agent}.xlsx", "", "MLSNumber", "true")
        for serial, name, agent in zip(serials, names, agents, strict=True)
    ]
    return FleetSample(
        folder=root,
        export=export,
        sheets=sheets,
        manifest=_write_manifest(root / MANIFEST, shared),
        manifest_own_sheets=_write_manifest(root / MANIFEST_OWN_SHEETS, own),
        serials=serials,
        agents=agents,
        changed=changes,
        rows=len(every_row),
        chat_tests=_write_chat_tests(root / CHAT_TESTS),
    )


def _write_chat_tests(path: Path) -> Path:
    """Cases every fleet chatbot passes: each greets by its name, and answers from listings."""
    import csv

    cases = [
        ("name", "question", "expect_contains", "expect_no_answer"),
        ("greeting", "Hi there!", "welcome to Agent", "false"),
        ("homes-for-sale", "Any homes for sale?", "", "false"),
    ]
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(cases)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m estatebot.sample.fleet_sample``: write the fleet sample and say where."""
    parser = argparse.ArgumentParser(
        prog="python -m estatebot.sample.fleet_sample",
        description="Write a shared MLS export, a sheet per chatbot and manifests for the "
        "emulator's fleet (estatebot serve --chatbots N --listings-per-chatbot M).",
    )
    parser.add_argument("folder", type=Path, help="output folder")
    parser.add_argument("--chatbots", type=int, default=20, help="fleet chatbots (default 20)")
    parser.add_argument(
        "--listings-per-chatbot", type=int, default=20, help="listings each (default 20)"
    )
    parser.add_argument(
        "--changed", type=float, default=0.05, help="share of rows with a new price (0.05)"
    )
    parser.add_argument("--seed", type=int, default=0, help="fleet seed (default 0)")
    args = parser.parse_args(argv)
    try:
        sample = write_fleet_sample(
            args.folder, args.chatbots, args.listings_per_chatbot, args.changed, args.seed
        )
    except ValueError as error:
        parser.error(str(error))
    changed = sum(len(mls) for mls in sample.changed.values())
    print(f"{sample.export}  ({sample.rows} rows, {changed} with a new price)")
    print(f"{sample.folder / SHEETS}/  ({len(sample.sheets)} sheets, one per chatbot)")
    print(sample.manifest)
    print(sample.manifest_own_sheets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
