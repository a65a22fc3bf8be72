"""The fast workbook reader: python-calamine (a compiled reader) for the cell values of an xlsx,
xls or ods worksheet, and, for an xlsx, one pass over the worksheet's bytes for what its values
lose, so that the cells are the ones the openpyxl reader (:mod:`.xlsx`) gives:

* a number written ``3.0`` or ``1.5E+3`` stays a float and one written with more digits than a
  float keeps stays the exact int (every other whole number is an int, as openpyxl reads it);
* a cell under a zero-padding number format (``00000``) reads as the padded text;
* a formula error reads as its text (``#REF!``) with an error note (calamine reads it as blank);
* formulas without a saved value, merged ranges and values beside the named columns are noted
  by :mod:`.xlsxscan`, only when the bytes hold any.

Some xlsx sheets are left to openpyxl (:mod:`.xlsx_guard` decides, before calamine starts):
XML that is not written plainly (the byte patterns might not see what a parser sees), cells
without coordinates (their place is known only by counting), rich-text inline strings, and a
stray value far right of the data (calamine holds a dense grid, and one value in column XFD would
make it rows × 16,384 cells). calamine's grid is checked against the memory budget again, from
its own size, before its values become Python lists. An ``.xls`` or ``.ods`` file is read by
calamine alone: there, number formats, formula errors and merged ranges are not seen.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace
from datetime import date, datetime, time
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np
import python_calamine
from openpyxl.utils.cell import get_column_letter

from estatebot.listings.sheet.readers.budget import Budget, Cost
from estatebot.listings.sheet.readers.grid import (
    CellGrid,
    ZeroPad,
    error_note,
    hidden_note,
    scan_notes,
    sheet_position,
    value_text_of,
)
from estatebot.listings.sheet.readers.notes import Note
from estatebot.listings.sheet.readers.xlsx_parts import zero_pad_styles
from estatebot.listings.sheet.readers.xml_scan import (
    MAX_NAMED,
    Findings,
    Survey,
    parse_findings,
    survey,
)

if TYPE_CHECKING:
    from estatebot.listings.sheet.readers.xlsx_guard import Prepared

T = TypeVar("T")

#: The kinds of workbook calamine reads.
BookKind = Literal["xlsx", "xls", "ods"]
#: What calamine raises for a file it cannot read.
CALAMINE_ERRORS: tuple[type[BaseException], ...] = (python_calamine.CalamineError,)
_EMPTY = CellGrid(np.empty(0, np.int64), np.empty((0, 0), object))


def sheets_of(path: str | PathLike[str], kind: Literal["xls", "ods"]) -> list[tuple[str, bool]]:
    """The sheets of an ``.xls`` or ``.ods`` workbook, each with whether it is hidden."""
    book = _open(path, kind)
    try:
        return sheets_of_book(book)
    finally:
        book.close()


def sheets_of_book(book: python_calamine.CalamineWorkbook) -> list[tuple[str, bool]]:
    """:func:`sheets_of` an open workbook."""
    return [
        (sheet.name, sheet.visible != python_calamine.SheetVisibleEnum.Visible)
        for sheet in book.sheets_metadata
    ]


def read_cells(
    path: str | PathLike[str],
    sheet_name: str | int | None = None,
    kind: Literal["xls", "ods"] = "xls",
    *,
    budget: Budget | None = None,
) -> CellGrid:
    """The header row and the cells under it of one worksheet of an ``.xls`` or ``.ods``
    workbook (the first one not hidden by default; a hidden one named is read with a warning).

    calamine's grid of the sheet is checked against ``budget`` before its values become Python
    lists. An xlsx worksheet is read by :func:`read_xlsx`, once :mod:`.xlsx_guard` has looked
    at it.
    """
    budget = budget or Budget()
    book = _open(path, kind)
    try:
        names = book.sheet_names
        hidden = {name for name, is_hidden in sheets_of_book(book) if is_hidden}
        position = sheet_position(names, sheet_name, hidden)
        sheet = book.get_sheet_by_index(position)
        _check_grid(sheet, budget, f"{Path(path).name}, worksheet {names[position]!r}")
        values = sheet.to_python(skip_empty_area=False)
    finally:
        book.close()
    grid = _grid(values, Survey(), {}, str(path), "")
    if names[position] in hidden:
        grid = replace(grid, notes=[hidden_note(names[position]), *grid.notes])
    return grid


def read_xlsx(path: str | PathLike[str], prepared: Prepared, budget: Budget) -> CellGrid:
    """The cells of the xlsx worksheet ``prepared`` (see :mod:`.xlsx_guard`), as the module's
    docstring describes."""
    # The package's own parts first: a zip that is no workbook fails here, saying which part
    # is missing (a KeyError), as the openpyxl reader does.
    with zipfile.ZipFile(path) as zipped:
        pads = zero_pad_styles(zipped)
    book = _open(path, "xlsx")
    try:

        def values() -> list[list[Any]]:
            sheet = book.get_sheet_by_index(prepared.position)
            _check_grid(sheet, budget, prepared.where)
            rows: list[list[Any]] = sheet.to_python(skip_empty_area=False)
            return rows

        values_read, found = _values_beside_survey(
            values, str(path), prepared.member, pads, prepared.shape.detailed, _known(prepared)
        )
    finally:
        book.close()
    return _grid(values_read, found, pads, str(path), prepared.member)


def _known(prepared: Prepared) -> Survey | None:
    """What the survey would find, when the pass over the sheet's structure found it (see
    :mod:`.xml_cells`): then the sheet's bytes are not read a second time."""
    shape = prepared.shape
    if prepared.pads is None:
        return None
    return Survey(detailed=shape.detailed, numbers=shape.numbers, styled=shape.styled)


def _values_beside_survey(
    parse: Callable[[], T],
    path: str,
    member: str,
    pads: dict[int, ZeroPad],
    detailed: bool | None = None,
    known: Survey | None = None,
) -> tuple[T, Survey]:
    """What ``parse`` gives (calamine's read of a worksheet) and the survey of the worksheet's
    bytes, the two read at the same time (or ``known``, the survey's findings when the pass
    over the sheet's structure has made them: then only the parse runs).

    calamine parses the sheet in compiled code with the interpreter lock released, so the
    survey (Python over the same bytes, about as long) runs beside it on another core. The
    parse runs on the calling thread: the memory it frees when done is then the memory the
    typing of the cells reuses.
    """
    if known is not None:
        return parse(), known
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="estatebot-survey") as pool:
        surveyed = pool.submit(survey, path, member, pads, detailed)
        try:
            parsed = parse()
        except BaseException:
            surveyed.cancel()
            wait([surveyed])  # the parse's error is the one to report
            raise
        found = surveyed.result()
    return parsed, found


def _check_grid(sheet: python_calamine.CalamineSheet, budget: Budget, where: str) -> None:
    """Check calamine's grid of ``sheet`` against ``budget`` before it becomes Python lists,
    which hold every cell from A1 to the last one, empty or not."""
    end = sheet.end
    if end is not None:
        budget.check(Cost(grid_rows=end[0] + 1, grid_columns=end[1] + 1), where)


def _open(path: str | PathLike[str], kind: BookKind) -> python_calamine.CalamineWorkbook:
    # calamine picks its reader by the file's suffix; a workbook under another name (an ods
    # saved as "export.xlsx") is handed over as bytes, which it tells by their content.
    if str(path).lower().endswith(f".{kind}"):
        return python_calamine.CalamineWorkbook.from_path(str(path))
    with open(path, "rb") as handle:
        return python_calamine.CalamineWorkbook.from_filelike(handle)


def _grid(
    values: list[list[Any]], found: Survey, pads: dict[int, ZeroPad], path: str, member: str
) -> CellGrid:
    header_at = _header_index(values)
    if header_at is None:
        return _EMPTY
    header_row = header_at + 1
    header = {c: v for c, v in enumerate(values[header_at], start=1) if v is not None and v != ""}
    named = sorted(c for c, v in header.items() if value_text_of(v).strip())
    if not named:
        return CellGrid(np.array([header_row], np.int64), np.empty((1, 0), object))
    body = values[header_at + 1 :]
    del values
    data = _named_columns(body, named)
    _fix_values(data, found, pads, header_row, named)
    if member and found.detailed:
        findings = parse_findings(path, member, named, header_row)
    else:
        findings = _other_columns(body, named, header_row)
    del body
    notes = _put_errors(data, findings, header_row, named)
    present = (data != None).any(axis=1)  # noqa: E711 (elementwise, not identity)
    rows = np.flatnonzero(present).astype(np.int64) + header_row + 1
    grid = np.empty((len(rows) + 1, len(named)), dtype=object)
    grid[0, :] = [header[c] for c in named]
    grid[1:, :] = data[present]
    all_rows = np.concatenate([np.array([header_row], np.int64), rows])
    notes += scan_notes(findings, header_row, header, named, all_rows)
    return CellGrid(all_rows, grid, named, notes)


def _header_index(values: list[list[Any]]) -> int | None:
    """The first row holding something visible (a row of spaces only is not a header)."""
    for index, row in enumerate(values):
        if any(value_text_of(v).strip() for v in row if v is not None and v != ""):
            return index
    return None


def _named_columns(body: list[list[Any]], named: list[int]) -> np.ndarray[Any, Any]:
    """The body's cells in the named columns, empty text as None."""
    data = np.empty((len(body), len(named)), dtype=object)
    if not body:
        return data
    width = len(body[0])
    for k, column in enumerate(named):
        if column <= width:
            # A list per column, assigned into the object array: numpy keeps each cell as is.
            data[:, k] = [row[column - 1] for row in body]
    data[data == ""] = None
    return data


def _other_columns(body: list[list[Any]], named: list[int], header_row: int) -> Findings:
    """The values in columns without a header: counted under a blank header, named (the first
    few) right of the last header, as :mod:`.xlsxscan` reports them."""
    found = Findings()
    width = len(body[0]) if body else 0
    wanted = set(named)
    for column in range(1, width + 1):
        if column in wanted:
            continue
        filled = [i for i, row in enumerate(body) if _shows(row[column - 1])]
        if not filled:
            continue
        if column < named[-1]:
            found.unnamed[column] = len(filled)
            continue
        found.beyond_count += len(filled)
        found.beyond.extend((header_row + 1 + i, column) for i in filled)
    found.beyond.sort()
    del found.beyond[MAX_NAMED:]
    return found


def _shows(value: Any) -> bool:
    return value is not None and value != "" and not (isinstance(value, str) and not value.strip())


def _fix_values(
    data: np.ndarray[Any, Any],
    found: Survey,
    pads: dict[int, ZeroPad],
    header_row: int,
    named: list[int],
) -> None:
    """Make the values the ones openpyxl reads (see the module's docstring), in place."""
    flat = data.reshape(-1)
    kinds = np.fromiter(map(type, flat), dtype=object, count=len(flat))
    floats = np.flatnonzero(kinds == float)  # noqa: E721 (elementwise over types)
    if len(floats):
        numbers = flat[floats].astype(float)
        if np.isnan(numbers).any():
            at = int(floats[np.isnan(numbers)][0])
            raise ValueError(f"{_cell(at, named, header_row)}: NaN is not a number")
        whole = np.isfinite(numbers) & (numbers == np.floor(numbers))
        flat[floats[whole]] = [int(v) for v in numbers[whole].tolist()]
    dates = np.flatnonzero(kinds == date)
    if len(dates):
        flat[dates] = [datetime.combine(d, time()) for d in flat[dates]]
    position = {c: k for k, c in enumerate(named)}
    for (row, column), text in found.numbers.items():
        k = position.get(column)
        i = row - header_row - 1
        if k is None or not 0 <= i < len(data) or type(data[i, k]) not in (int, float):
            continue
        is_float = any(mark in text for mark in (b".", b"e", b"E"))
        data[i, k] = float(text) if is_float else int(text)
    styled = found.styles()
    for row, column, style in zip(*(a.tolist() for a in styled), strict=True):
        k = position.get(column)
        i = row - header_row - 1
        if k is None or not 0 <= i < len(data):
            continue
        value = data[i, k]
        if type(value) in (int, float):
            data[i, k] = pads[style].apply(value)


def _put_errors(
    data: np.ndarray[Any, Any], findings: Findings, header_row: int, named: list[int]
) -> list[Note]:
    """Formula errors as their text in the grid (as openpyxl reads them), each but ``#N/A``
    (a blank token) with an error note."""
    position = {c: k for k, c in enumerate(named)}
    notes = []
    for row, column, text in sorted(findings.errors):
        i, k = row - header_row - 1, position[column]
        if not 0 <= i < len(data):
            continue
        data[i, k] = text
        if text != "#N/A":
            notes.append(error_note(f"{get_column_letter(column)}{row}", text, row, k))
    return notes


def _cell(flat_index: int, named: list[int], header_row: int) -> str:
    i, k = divmod(flat_index, len(named))
    return f"{get_column_letter(named[k])}{header_row + 1 + i}"
