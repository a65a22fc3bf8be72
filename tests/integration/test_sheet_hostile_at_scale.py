"""Hostile xlsx files at the size they were found, read by ``read_sheet`` in a
process of its own, whose peak resident memory is measured (calamine's memory is not Python's:
tracemalloc would not see it).

Each read is refused before a reader allocates, quickly and in little memory: 60,000 cells
repeating one 30,000-character shared string (a 2.6 MB file that took 3.7 GB), a sheet of
1,048,576 sparse rows (4.7 GB), 1.5 GB of blanks (minutes of parsing). A stray value in column
XFD written in single quotes, 3,000 rows of it (2 GB in calamine), is read by openpyxl in a few
megabytes. And the budget's estimate is an upper bound of what a read really takes.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from estatebot.listings.sheet.readers.budget import Budget
from estatebot.listings.sheet.readers.xlsx_guard import prepare

try:
    import fixtures_sheets as fx
    import hostile_workbooks as hw
    import spreadsheet_program as office
except ImportError:  # tests/ is on sys.path only when pytest is configured with pythonpath
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import fixtures_sheets as fx
    import hostile_workbooks as hw
    import spreadsheet_program as office

ENGINES = ("calamine", "openpyxl")
MB = 10**6

_CHILD = """
import json, resource, sys, time
from estatebot.errors import SheetError
from estatebot.listings.sheet.read import read_sheet

path, small, engine, budget = sys.argv[1:5]
read_sheet(small, engine=engine, progress=False)  # the modules a read imports, loaded first
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
started = time.perf_counter()
try:
    sheet = read_sheet(path, engine=engine, progress=False, max_memory=budget)
    out = {"rows": len(sheet.frame), "messages": sheet.issues["message"].tolist()[:40]}
except SheetError as error:
    out = {"error": str(error)}
out["seconds"] = time.perf_counter() - started
out["grown"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
print(json.dumps(out))
"""


def read_apart(path: Path, engine: str, budget: str = "2 GiB") -> dict[str, Any]:
    """``read_sheet`` of ``path`` in a process of its own: what it read or the error, how long
    it took, and how much its peak resident memory grew."""
    small = hw.write_book(path.parent / "small.xlsx", [hw.SheetXml("Export", _listings(2))])
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), str(small), engine, budget],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _listings(*numbers: int) -> str:
    return hw.header_row() + "".join(hw.listing_row(n) for n in numbers)


def _repeats(path: Path, count: int, length: int) -> Path:
    def rows() -> Iterator[bytes]:
        yield hw.DECLARATION + f'<worksheet xmlns="{hw.MAIN}"><sheetData>'.encode()
        yield hw.header_row(("MLSNumber", "Description")).encode()
        for r in range(2, count + 2):
            yield (
                f'<row r="{r}">{hw.text_cell(f"A{r}", f"M{r}")}<c r="B{r}" t="s"><v>0</v></c></row>'
            ).encode()
        yield b"</sheetData></worksheet>"

    return hw.write_book(path, [hw.SheetXml("Export", part=rows())], ["x" * length])


def _sparse(path: Path, count: int, width: int) -> Path:
    headers = [*hw.HEADERS, *(f"Extra{j}" for j in range(width - len(hw.HEADERS)))]

    def rows() -> Iterator[bytes]:
        yield hw.DECLARATION + f'<worksheet xmlns="{hw.MAIN}"><sheetData>'.encode()
        yield hw.header_row(headers).encode()
        for start in range(2, count + 1, 10_000):
            yield "".join(
                f'<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>'
                for r in range(start, min(start + 10_000, count + 1))
            ).encode()
        yield b"</sheetData></worksheet>"

    return hw.write_book(path, [hw.SheetXml("Export", part=rows())])


@pytest.mark.parametrize("engine", ENGINES)
def test_sixty_thousand_cells_repeating_a_long_shared_string_are_refused_at_once(
    tmp_path: Path, engine: str
) -> None:
    path = _repeats(tmp_path / "repeats.xlsx", 60_000, 30_000)
    assert path.stat().st_size < 3 * MB  # the file is small; what it says to build is not
    result = read_apart(path, engine)
    # Refused as soon as the cells read so far pass the budget: the rest is never read.
    assert re.match(
        r"repeats\.xlsx, worksheet 'Export': at least [0-9,]+ cells repeat shared strings "
        r"holding [0-9.]+ [MG]B of text in all \(the longest string is 30,000 characters\), and "
        r"every cell gets its own copy: reading it would take more than [0-9.]+ GB, over the "
        r"memory budget of 2 GiB",
        result["error"],
    ), result
    assert result["grown"] < 200 * MB, result
    assert result["seconds"] < 30, result


@pytest.mark.parametrize("engine", ENGINES)
def test_a_million_sparse_rows_are_refused_at_once(tmp_path: Path, engine: str) -> None:
    path = _sparse(tmp_path / "sparse.xlsx", 1_048_576, 20)
    result = read_apart(path, engine)
    assert re.match(
        r"sparse\.xlsx, worksheet 'Export': it holds at least [0-9,]+ rows of 20 columns: "
        r"reading it would take more than [0-9.]+ GB, over the memory budget of 2 GiB",
        result["error"],
    ), result
    assert result["grown"] < 200 * MB, result


def test_one_and_a_half_gigabytes_of_blanks_are_refused_at_once(tmp_path: Path) -> None:
    def padded() -> Iterator[bytes]:
        yield hw.DECLARATION + f'<worksheet xmlns="{hw.MAIN}"><sheetData>'.encode()
        yield _listings(2).encode()
        yield b'<row r="3"'
        for _ in range(1_500):
            yield b" " * 2**20
        yield b'><c r="A3"><v>1</v></c></row></sheetData></worksheet>'

    path = hw.write_book(
        tmp_path / "padded.xlsx", [hw.SheetXml("Export", part=padded())], compresslevel=1
    )
    for engine in ENGINES:
        result = read_apart(path, engine)
        assert result["error"].startswith("padded.xlsx, worksheet 'Export' is padded: "), result
        assert result["seconds"] < 30, result
        assert result["grown"] < 200 * MB, result


def test_three_thousand_stray_values_in_single_quotes_are_read_in_little_memory(
    tmp_path: Path,
) -> None:
    rows = hw.header_row() + "".join(
        hw.listing_row(n).replace("</row>", f"<c r='XFD{n}'><v>1</v></c></row>")
        for n in range(2, 3_002)
    )
    path = hw.write_book(tmp_path / "stray.xlsx", [hw.SheetXml("Export", rows)])
    result = read_apart(path, "calamine")
    assert result["rows"] == 3_000, result
    assert any(m.startswith("XFD2: a value right of the last header") for m in result["messages"])
    assert result["grown"] < 300 * MB, result


@pytest.mark.parametrize("kind", ["shared strings repeated", "sparse rows", "an openpyxl export"])
def test_the_budgets_estimate_bounds_what_a_read_takes(tmp_path: Path, kind: str) -> None:
    if kind == "shared strings repeated":
        path = _repeats(tmp_path / "book.xlsx", 3_000, 30_000)
    elif kind == "sparse rows":
        path = _sparse(tmp_path / "book.xlsx", 60_000, 30)
    else:
        path = fx.write_big_xlsx(tmp_path / "book.xlsx", 20_000)  # a RESO export, 25 columns
    prepared = prepare(path, None, Budget())
    estimate = prepared.cost(grid=prepared.calamine).total()
    result = read_apart(path, "calamine")
    assert "error" not in result, result
    assert result["grown"] <= estimate, (result, estimate)


@office.needs_soffice
def test_an_export_saved_by_a_spreadsheet_program_is_plain_and_read_alike(tmp_path: Path) -> None:
    """LibreOffice writes text as shared strings (openpyxl writes it inline): its xlsx is plain
    XML, calamine reads it, every shared string is counted, and the engines agree."""
    original = fx.write_big_xlsx(tmp_path / "export.xlsx", 3_000)
    saved = office.resave(original, "xlsx", tmp_path / "saved")
    prepared = prepare(saved, None, Budget())
    assert prepared.shape.plain, prepared.shape.odd
    assert prepared.calamine
    assert prepared.strings > 0
    assert prepared.shape.shared_refs >= 3_000 * 5  # five text columns at least
    fast = read_apart(saved, "calamine")
    slow = read_apart(saved, "openpyxl")
    assert fast["rows"] == slow["rows"] > 0, (fast, slow)
    assert fast["messages"] == slow["messages"]
