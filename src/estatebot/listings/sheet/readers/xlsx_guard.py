"""Before an xlsx worksheet is read: which worksheet (the first one not hidden, unless
``sheet_name`` names one), which reader may read it, and whether the read fits the memory
budget, all decided on the structure of the file's XML before any reader allocates a cell.

In order: every XML part of the package is checked for padding and DTDs (:mod:`.xml_shape`),
the workbook's sheet list gives the worksheet, the shared strings are measured, and one pass
over the worksheet gives its :class:`~.xml_shape.Shape`. From that, the read's cost
(:class:`~.budget.Cost`): the rows and columns, the text of the cells, the shared strings they
repeat (each cell gets its own copy), and calamine's dense grid from A1 to the last cell. A read
over budget stops here with a :class:`SheetError` naming the cause.

calamine reads the sheet only when its XML is plain (see :mod:`.xml_shape`), every cell has its
reference, no inline string is rich text, and no stray value lies far right of the rest; any
other sheet is read by openpyxl, which checks the budget as it reads each row.
"""

from __future__ import annotations

import posixpath
import zipfile
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path

import numpy as np

from estatebot.errors import SheetError
from estatebot.listings.sheet.readers.budget import Budget, Cost
from estatebot.listings.sheet.readers.file_kind import WORKBOOK_ERRORS
from estatebot.listings.sheet.readers.grid import ZeroPad, hidden_note, sheet_position
from estatebot.listings.sheet.readers.notes import Note
from estatebot.listings.sheet.readers.xlsx_parts import (
    SheetEntry,
    package_parts,
    shared_strings_part,
    workbook_sheets,
    zero_pad_styles,
)
from estatebot.listings.sheet.readers.xml_shape import (
    MAX_COLUMN,
    MAX_ROW,
    Shape,
    check_part,
    shape_of,
    shared_string_sizes,
    sparse,
    tag_chunks,
)

_XML_SUFFIXES = (".xml", ".rels", ".vml")


@dataclass(frozen=True)
class Prepared:
    """A worksheet ready to be read: its ``name``, its ``position`` among the workbook's
    sheets, the zip ``member`` holding it, ``where`` to name it in messages, its ``shape``, the
    workbook's shared strings (``strings`` of ``strings_text`` characters at most), whether
    ``calamine`` may read it, ``notes`` for the read (a hidden sheet read because named), and
    the workbook's zero-padding styles (``pads``)."""

    name: str
    position: int
    member: str
    where: str
    shape: Shape
    strings: int = 0
    strings_text: int = 0
    calamine: bool = True
    notes: list[Note] = field(default_factory=list)
    #: The zero-padding styles, when calamine may read the sheet and the styles could be read
    #: (the shape then holds the cells to fix: see :mod:`.xml_cells`).
    pads: dict[int, ZeroPad] | None = None

    def cost(self, *, grid: bool) -> Cost:
        """What reading the sheet would hold (``grid``: calamine's dense grid counted)."""
        return shape_cost(self.shape, self.strings, self.strings_text, grid=grid)

    def strings_cost(self) -> Cost:
        """The part of the cost known before a parser reads the cells: the shared strings."""
        return Cost(strings=self.strings, strings_text=self.strings_text)


def shape_cost(shape: Shape, strings: int, strings_text: int, *, grid: bool) -> Cost:
    """What reading a sheet of ``shape`` would hold, with a workbook of ``strings`` shared
    strings of ``strings_text`` characters (``grid``: calamine's dense grid counted)."""
    return Cost(
        rows=shape.rows,
        columns=len(shape.columns),
        cells=shape.cells,
        text=shape.text,
        shared_refs=shape.shared_refs,
        shared_text=shape.shared_text,
        longest_shared=shape.longest_shared,
        strings=strings,
        strings_text=strings_text,
        grid_rows=shape.max_row if grid else 0,
        grid_columns=shape.max_column if grid else 0,
    )


def prepare(
    path: str | PathLike[str],
    sheet_name: str | int | None,
    budget: Budget,
    *,
    calamine: bool = True,
) -> Prepared:
    """Choose the worksheet, check the file's XML, and check the read against ``budget``
    (``calamine``: the calamine engine was asked for).

    Raises :class:`SheetError` for a padded part, a DTD, a cell beyond the sheet's last row or
    column, or a read over budget; :class:`~estatebot.errors.SheetNotFoundError` for a sheet
    the workbook does not have.
    """
    path = Path(path)
    with zipfile.ZipFile(path) as zipped:
        checked = set(package_parts(zipped))
        for member in sorted(checked):
            check_part(zipped, member, _part(path, member))
        sheets = workbook_sheets(zipped)
        # By default the first sheet shown that holds cells: hidden and chart sheets are
        # read only when named (a chart sheet then says it is no worksheet).
        skipped = {s.name for s in sheets if s.hidden or s.member is None}
        position = sheet_position([s.name for s in sheets], sheet_name, skipped)
        entry = sheets[position]
        if entry.member is None:
            raise SheetError(f"{entry.name!r} is not a worksheet")
        strings_member = shared_strings_part(zipped)
        _check_other_parts(zipped, path, sheets, {*checked, entry.member, strings_member})
        where = f"{path.name}, worksheet {entry.name!r}"
        sizes = np.empty(0, np.int64)
        if strings_member is not None:
            sizes = shared_string_sizes(zipped, strings_member, _part(path, strings_member))
        strings, strings_text = len(sizes), int(sizes.sum())

        def within_budget(so_far: Shape) -> None:
            # What any reader needs only grows as the sheet is read: past the budget, the
            # rest need not be read to refuse it.
            cost = shape_cost(so_far, strings, strings_text, grid=False)
            budget.check(replace(cost, partial=True), where)

        pads = _pads(zipped) if calamine else None
        fixes = None if pads is None else set(pads)
        shape = shape_of(zipped, entry.member, where, sizes, within_budget, fixes)
    if shape.beyond:
        raise SheetError(
            f"{where}: cell {shape.beyond} lies beyond the last row ({MAX_ROW:,}) or column "
            f"(XFD, the {MAX_COLUMN:,}th) a worksheet has: the file is damaged or was not "
            "written by a spreadsheet program; open it in Excel (or LibreOffice) and save it "
            "again"
        )
    fast = (
        calamine and shape.plain and not (shape.unreferenced or shape.rich_inline or sparse(shape))
    )
    prepared = Prepared(
        entry.name,
        position,
        entry.member,
        where,
        shape,
        strings,
        strings_text,
        fast,
        [hidden_note(entry.name)] if entry.hidden else [],
        pads,
    )
    if not shape.plain:
        # The shape of XML that is not plain may differ from what a parser reads: openpyxl
        # checks the cost row by row instead (see :mod:`.xlsx_openpyxl`).
        budget.check(prepared.strings_cost(), where)
        return prepared
    if fast and prepared.cost(grid=True).total() > budget.limit:
        # calamine's grid holds every cell from A1 to the farthest one: when that alone
        # breaks the budget (a lone value far down), openpyxl reads only the cells there are.
        prepared = replace(prepared, calamine=False)
    budget.check(prepared.cost(grid=prepared.calamine), where)
    return prepared


def _pads(zipped: zipfile.ZipFile) -> dict[int, ZeroPad] | None:
    """The workbook's zero-padding styles; None when its styles cannot be read (the reader that
    reads them says why)."""
    try:
        return zero_pad_styles(zipped)
    except WORKBOOK_ERRORS:
        return None


def _check_other_parts(
    zipped: zipfile.ZipFile, path: Path, sheets: list[SheetEntry], done: set[str | None]
) -> None:
    """Check every XML part not yet checked: another worksheet only up to its cells (openpyxl
    reads each one's head for its size), any other part through."""
    heads = {s.member for s in sheets if s.member is not None} - done
    for info in zipped.infolist():
        member = info.filename
        if member in done or not member.lower().endswith(_XML_SUFFIXES):
            continue
        if member in heads:
            _check_head(zipped, member, _part(path, member))
        else:
            check_part(zipped, member, _part(path, member))


def _check_head(zipped: zipfile.ZipFile, member: str, where: str) -> None:
    with zipped.open(member) as stream:
        for chunk in tag_chunks(stream, where):
            if b"sheetData" in chunk:
                return


def _part(path: Path, member: str) -> str:
    return f"{path.name} (its part {posixpath.normpath(member)})"
