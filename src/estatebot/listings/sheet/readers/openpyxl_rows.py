"""The rows of a worksheet as openpyxl's parser reads them, in the order the file writes them.

openpyxl's read-only rows (``iter_rows``) count rows from 1 and drop a row written after a
higher one (``<row r="3">`` then ``<row r="1">``): the file's rows would be lost. Its parser
(``WorkSheetParser``, the one ``iter_rows`` runs) gives every row with its number, whatever the
order, so the readers use it directly and place each row by its number.

A cell naming a shared string the workbook does not have is a :class:`SheetError` naming the
cell, where openpyxl would raise a bare ``IndexError``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from openpyxl.utils.cell import get_column_letter
from openpyxl.worksheet._reader import WorkSheetParser

from estatebot.errors import SheetError

#: One cell as the parser gives it: row, column, value, data_type, style_id.
RawCell = dict[str, Any]


class _MissingString(Exception):
    def __init__(self, index: int, count: int) -> None:
        super().__init__(index, count)
        self.index = index
        self.count = count


class _SharedStrings:
    """The workbook's shared strings, refusing an index they do not have (a negative one too:
    a list would count it from the end)."""

    def __init__(self, strings: Sequence[Any]) -> None:
        self.strings = strings

    def __getitem__(self, index: int) -> Any:
        if not 0 <= index < len(self.strings):
            raise _MissingString(index, len(self.strings))
        return self.strings[index]


def sheet_rows(sheet: Any, where: str) -> Iterator[tuple[int, list[RawCell]]]:
    """Every row of read-only worksheet ``sheet`` in the file's order: its number and cells
    (cells are grouped by the row their reference names).

    ``where`` names the sheet in the :class:`SheetError` for a cell whose shared string is
    missing. The parser is openpyxl's own (its private module: a version without it fails the
    tests, not a user's read).
    """
    book = sheet.parent
    with sheet._get_source() as source:
        parser = WorkSheetParser(
            source,
            _SharedStrings(sheet._shared_strings),
            data_only=True,
            epoch=book.epoch,
            date_formats=book._date_formats,
            timedelta_formats=book._timedelta_formats,
        )
        try:
            for number, cells in parser.parse():
                if all(cell["row"] == number for cell in cells):
                    yield number, cells
                    continue
                # A cell whose reference names another row than its row element's: it
                # belongs to the row it names, as calamine places it.
                by_row: dict[int, list[RawCell]] = {}
                for cell in cells:
                    by_row.setdefault(cell["row"], []).append(cell)
                yield from by_row.items()
        except _MissingString as missing:
            cell = f"{get_column_letter(max(parser.col_counter, 1))}{parser.row_counter}"
            raise SheetError(
                f"{where}: cell {cell} names shared string number {missing.index}, but the "
                f"workbook holds {missing.count:,} shared strings: the file is damaged; open "
                "it in Excel (or LibreOffice) and save it again",
                value=cell,
            ) from None
