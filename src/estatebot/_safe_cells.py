"""Values into spreadsheet cells safely: text stays text, and every cell holds what it says.

Every workbook and csv estatebot writes carries text from outside (listing descriptions from an
MLS export or the service, the service's messages, a chatbot's answers), so each writer puts its
cells through the rules here:

* **No formulas** (OWASP, "CSV Injection"). Text starting with ``=``, ``+``, ``-``, ``@``, a tab
  or a carriage return is what a spreadsheet reads as a formula. In xlsx such text is written as
  a string cell with the quote-prefix flag (what Excel records when one types ``'=...``): the
  text is kept exactly, shown as text, and stays text when the cell is edited. A csv cell has no
  type, so there a single quote is put in front (OWASP's advice); text that already starts with
  a quote gets one too, so :func:`from_csv_text` takes exactly one off and reads our text back
  exactly. Numbers are numbers: ``-5`` is written as the number it is.
* **Characters a cell cannot hold.** XML, and so xlsx, has no place for control characters other
  than tab, line feed and carriage return, for lone surrogates, or for U+FFFE and U+FFFF
  (openpyxl raises ``IllegalCharacterError``). Backups escape them the way the xlsx format itself
  does (``_x000B_``; a carriage return, which XML reads back as a line feed, as ``_x000D_``; a
  literal ``_x0041_`` as ``_x005F_x0041_``), which Excel shows as the character and
  :func:`unescape_xlsx_text` reverses exactly. Other workbooks remove them, and say which cells
  they changed (:class:`CellChange`, :class:`CellWarning`).
* **Length.** An xlsx cell holds at most 32,767 characters (counted as Excel counts them, in
  UTF-16 units). Where the file must hold the value whole (a backup, an export read back as a
  sheet) longer text is an error naming the row, the column and the length
  (:class:`CellTooLong`); in reports meant for reading it is cut, marked as cut, and reported.
* **Non-finite numbers.** A workbook has no infinite number (openpyxl writes an empty cell), so
  ``inf`` is written as the text ``inf`` / ``-inf``, as pandas does; NaN is an empty cell.

:class:`SheetWriter` writes a table a row at a time to a write-only workbook, so a sheet of any
size costs time in proportion to its cells; :func:`write_tables` writes a workbook of
:class:`Table` s with it, in one pass.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from os import PathLike
from typing import Any, Final, Literal

import numpy as np
import pandas as pd
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import Cell
from openpyxl.comments import Comment
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter

__all__ = [
    "CSV_QUOTED",
    "FORMULA_STARTS",
    "XLSX_MAX_CHARS",
    "CellChange",
    "CellTooLong",
    "CellWarning",
    "SheetWriter",
    "Table",
    "csv_text",
    "cut_text",
    "escape_xlsx_text",
    "excel_length",
    "frame_rows",
    "from_csv_text",
    "plain_value",
    "starts_formula",
    "unescape_xlsx_text",
    "unwritable",
    "warn_changes",
    "without_unwritable",
    "write_tables",
]

#: The most characters (UTF-16 units, as Excel counts) an xlsx cell holds.
XLSX_MAX_CHARS: Final = 32_767
#: First characters that make a spreadsheet read a cell as a formula (OWASP's list).
FORMULA_STARTS: Final = frozenset("=+-@\t\r")
_QUOTE: Final = "'"
#: First characters csv_text puts a quote before: a formula's, and the quote itself.
CSV_QUOTED: Final = frozenset(FORMULA_STARTS | {_QUOTE})

# What XML 1.0 cannot carry: the C0 controls but tab, LF and CR, lone surrogates, U+FFFE/FFFF.
# (openpyxl's own ILLEGAL_CHARACTERS_RE misses the last two, which XML forbids as well.)
_UNWRITABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# The xlsx escape, and text that merely looks like one (escaped too, so unescaping is exact).
_ESCAPED = re.compile("_x([0-9A-Fa-f]{4})_")
# A carriage return is escaped too: XML reads it back as a line feed (Excel writes _x000D_).
_TO_ESCAPE = re.compile("[\x00-\x08\x0b-\x1f\ud800-\udfff\ufffe\uffff]|_x[0-9A-Fa-f]{4}_")
# Cells listed by name in one warning; the rest are counted.
_NAMED_CHANGES = 10

Characters = Literal["escape", "remove"]
TooLong = Literal["error", "cut"]


class CellWarning(UserWarning):
    """A writer changed cells to fit a spreadsheet (characters removed, long text cut)."""


class CellTooLong(ValueError):
    """A text is longer than an xlsx cell holds; names the row, the column and the length."""

    def __init__(self, row: int, column: str, length: int) -> None:
        self.row = row
        self.column = column
        self.length = length
        super().__init__(
            f"row {row}, column {column!r}: a text of {length:,} characters is longer than an "
            f"xlsx cell holds ({XLSX_MAX_CHARS:,})"
        )


@dataclass(frozen=True)
class CellChange:
    """A cell a writer changed to fit: its spreadsheet row (1 is the header), column and what."""

    row: int
    column: str
    message: str

    def __str__(self) -> str:
        return f"row {self.row}, {self.column}: {self.message}"


# --------------------------------------------------------------------------- text rules


def starts_formula(text: str) -> bool:
    """True when a spreadsheet would read ``text`` as a formula."""
    return bool(text) and text[0] in FORMULA_STARTS


def csv_text(text: str) -> str:
    """``text`` for a csv cell: a quote in front when it would read as a formula, or when it
    starts with a quote already (so :func:`from_csv_text` is its exact inverse)."""
    if text[:1] in CSV_QUOTED:
        return _QUOTE + text
    return text


def from_csv_text(text: str) -> str:
    """The text :func:`csv_text` was given: one leading quote taken off where it put one.

    A quote followed by anything else is the cell's own text and stays.
    """
    if text[:1] == _QUOTE and text[1:2] in CSV_QUOTED:
        return text[1:]
    return text


def _escape_one(match: re.Match[str]) -> str:
    found = match.group(0)
    if len(found) == 1:
        return f"_x{ord(found):04X}_"
    return "_x005F_" + found[1:]  # a literal "_x0041_": its underscore escaped


def escape_xlsx_text(text: str) -> str:
    """``text`` with what a cell cannot hold escaped as xlsx does (``\\x0b`` → ``_x000B_``), a
    carriage return too (XML would read it back as a line feed), and literal escapes guarded
    (``_x0041_`` → ``_x005F_x0041_``); :func:`unescape_xlsx_text` reverses it exactly, and Excel
    shows the original text."""
    return _TO_ESCAPE.sub(_escape_one, text)


def unescape_xlsx_text(text: str) -> str:
    """The text :func:`escape_xlsx_text` was given (every ``_xHHHH_`` read as its character)."""
    if "_x" not in text:
        return text
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


def unwritable(text: str) -> list[str]:
    """The characters of ``text`` an xlsx cell cannot hold, in order (empty: none)."""
    return _UNWRITABLE.findall(text)


def without_unwritable(text: str) -> str:
    """``text`` without the characters an xlsx cell cannot hold."""
    return _UNWRITABLE.sub("", text)


def excel_length(text: str) -> int:
    """The length of ``text`` as Excel counts it: UTF-16 units (an emoji counts two)."""
    if len(text) * 2 <= XLSX_MAX_CHARS:  # cannot be over the limit: skip the encoding
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def cut_text(text: str, limit: int = XLSX_MAX_CHARS) -> str:
    """``text`` cut to at most ``limit`` UTF-16 units, ending with a mark that says so."""
    mark = f"… [cut: {excel_length(text):,} characters in all]"
    budget = limit - len(mark)
    head = text.encode("utf-16-le", "surrogatepass")[: budget * 2]
    # A surrogate pair split at the end is dropped whole rather than left half.
    return head.decode("utf-16-le", "ignore") + mark


def _names(characters: Sequence[str]) -> str:
    seen = list(dict.fromkeys(characters))
    return ", ".join(f"U+{ord(c):04X}" for c in seen)


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def plain_value(value: Any) -> Any:
    """A cell's value as a plain Python scalar: numpy scalars unwrapped, NaN as None, lists and
    mappings as JSON text, anything else not a number, date or text as its text."""
    if _missing(value):
        return None
    if isinstance(value, np.datetime64 | np.timedelta64):
        value = pd.Timestamp(value) if isinstance(value, np.datetime64) else pd.Timedelta(value)
    elif isinstance(value, np.generic):
        value = value.item()  # numpy numbers and booleans as Python's
    if _missing(value):
        return None
    if isinstance(value, bool | int | float | Decimal | str | datetime | date | time | timedelta):
        return value
    if isinstance(value, list | tuple | Mapping):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


# --------------------------------------------------------------------------- writing xlsx

# Typed as Any so it passes where pandas' stubs expect a scalar: None is what is meant.
_NONE: Any = None


def frame_rows(frame: pd.DataFrame) -> list[list[Any]]:
    """The rows of ``frame`` as lists of Python values, every missing value (NA, NaN) None."""
    rows: list[list[Any]] = frame.to_numpy(dtype=object, na_value=_NONE).tolist()
    return rows


class SheetWriter:
    """One table written to a new sheet of a write-only workbook, a row at a time.

    The header goes in row 1 (bold, frozen) and each :meth:`append` adds the next row, every value
    by the rules of this module. ``characters`` says what becomes of characters a cell cannot hold
    (``"escape"`` them reversibly, or ``"remove"`` them); ``too_long`` whether longer text than a
    cell holds raises :class:`CellTooLong` (``"error"``) or is ``"cut"``. Changes made are listed
    in :attr:`changes`. ``widths`` maps header names to column widths.
    """

    def __init__(
        self,
        book: Workbook,
        title: str,
        header: Sequence[str],
        *,
        characters: Characters = "remove",
        too_long: TooLong = "cut",
        widths: Mapping[str, float] | None = None,
    ) -> None:
        self.sheet = book.create_sheet(title)
        self.header = [str(name) for name in header]
        self.characters = characters
        self.too_long = too_long
        self.changes: list[CellChange] = []
        self.row = 1
        # A write-only sheet writes its layout with the first row: set it before.
        self.sheet.freeze_panes = "A2"
        for index, name in enumerate(self.header, start=1):
            if widths and name in widths:
                self.sheet.column_dimensions[get_column_letter(index)].width = widths[name]
        bold = Font(bold=True)
        cells = [self.cell(name, index) for index, name in enumerate(self.header)]
        for cell in cells:
            cell.font = bold
        self.sheet.append(cells)

    def _column(self, index: int) -> str:
        return self.header[index] if index < len(self.header) else get_column_letter(index + 1)

    def text(self, text: str, index: int) -> str:
        """``text`` as it can be written in column ``index`` of the current row."""
        if self.characters == "remove":
            bad = unwritable(text)
            if bad:
                text = without_unwritable(text)
                noun = "character" if len(bad) == 1 else "characters"
                message = f"removed {len(bad)} {noun} a cell cannot hold ({_names(bad)})"
                self.changes.append(CellChange(self.row, self._column(index), message))
        # The limit is on the text a cell shows, so escapes (one character each) are not counted.
        length = excel_length(text)
        if length > XLSX_MAX_CHARS:
            if self.too_long == "error":
                raise CellTooLong(self.row, self._column(index), length)
            text = cut_text(text)
            message = f"cut to {XLSX_MAX_CHARS:,} of its {length:,} characters"
            self.changes.append(CellChange(self.row, self._column(index), message))
        return escape_xlsx_text(text) if self.characters == "escape" else text

    def value(self, value: Any, index: int) -> Any:
        """What goes in column ``index`` (from 0) of the current row: a plain value openpyxl
        writes as it is, or a cell marked as text where openpyxl would write a formula."""
        value = plain_value(value)
        if isinstance(value, float) and math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if not isinstance(value, str):
            return value
        text = self.text(value, index)
        if not starts_formula(text):
            return text
        cell = WriteOnlyCell(self.sheet, text)  # openpyxl makes "=..." a formula here:
        cell.data_type = "s"  # it is text,
        cell.quotePrefix = True  # with Excel's own mark of text typed after a quote
        return cell

    def cell(self, value: Any, index: int) -> Cell:
        """A cell of the current row holding ``value`` (column ``index`` from 0), to style."""
        written = self.value(value, index)
        return written if isinstance(written, Cell) else WriteOnlyCell(self.sheet, written)

    def append(
        self,
        values: Sequence[Any],
        *,
        fill: PatternFill | None = None,
        comments: Mapping[int, str] | None = None,
        comment_fill: PatternFill | None = None,
    ) -> None:
        """Write the next row: ``fill`` colours every cell of it; ``comments`` (by column
        index) attach a note to cells, which ``comment_fill`` colours."""
        self.row += 1
        try:
            # Plain values where no style is wanted: openpyxl writes them through one reused
            # cell, much faster than a cell object each.
            make = self.value if fill is None else self.cell
            row: list[Any] = [make(value, index) for index, value in enumerate(values)]
        except CellTooLong:
            # Nothing more goes in; an open write-only sheet would complain when collected.
            self.sheet.close()
            raise
        if fill is not None:
            for cell in row:
                cell.fill = fill
        for index, note in (comments or {}).items():
            if not isinstance(row[index], Cell):
                row[index] = WriteOnlyCell(self.sheet, row[index])
            text = without_unwritable(note)
            if excel_length(text) > XLSX_MAX_CHARS:
                text = cut_text(text)
            row[index].comment = Comment(text, "estatebot")
            if comment_fill is not None:
                row[index].fill = comment_fill
        self.sheet.append(row)


@dataclass(frozen=True)
class Table:
    """One sheet of a workbook to write: its title, header and rows, as :func:`write_tables`
    takes them.

    ``comments`` go with ``rows``, one mapping per row (column index to note; a row without
    notes may be left out at the end), and ``comment_fill`` colours the cells they annotate;
    ``widths`` maps header names to column widths.
    """

    title: str
    header: Sequence[str]
    rows: Iterable[Sequence[Any]] = ()
    widths: Mapping[str, float] | None = None
    comments: Iterable[Mapping[int, str]] = ()
    comment_fill: PatternFill | None = None


def write_tables(path: str | PathLike[str], tables: Iterable[Table]) -> list[CellChange]:
    """Write ``tables`` as the sheets of one workbook at ``path``, in one pass, every cell by the
    rules of this module (characters a cell cannot hold removed, longer text cut); returns the
    cells changed to fit, for :func:`warn_changes`."""
    book = Workbook(write_only=True)
    changes: list[CellChange] = []
    for table in tables:
        writer = SheetWriter(book, table.title, table.header, widths=table.widths)
        notes = iter(table.comments)
        for values in table.rows:
            writer.append(values, comments=next(notes, None), comment_fill=table.comment_fill)
        changes += writer.changes
    book.save(path)
    return changes


def warn_changes(changes: Sequence[CellChange], where: str, *, stacklevel: int = 3) -> None:
    """Emit one :class:`CellWarning` naming the cells changed in ``where`` (nothing if none)."""
    if not changes:
        return
    named = "; ".join(str(change) for change in changes[:_NAMED_CHANGES])
    more = len(changes) - _NAMED_CHANGES
    tail = f"; and {more} more" if more > 0 else ""
    count = "1 cell" if len(changes) == 1 else f"{len(changes)} cells"
    message = f"{where}: {count} changed to fit a spreadsheet: {named}{tail}"
    warnings.warn(message, CellWarning, stacklevel=stacklevel)
