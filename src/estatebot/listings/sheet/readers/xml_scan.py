"""What the cell readers do not tell about a worksheet: formula cells with no saved value (read
as blank), merged ranges (not read), formula errors (the compiled reader reads them as blank),
and cells right of the header (the readers are bounded to the header's width).

:func:`survey` is one pass over the worksheet's bytes for the compiled reader: it also finds
what that reader's values lose (the cells whose number is written as a decimal or in scientific
notation, which openpyxl reads as floats; the cells under a zero-padding number format).
:func:`needs_openpyxl` says when that reader must not read a sheet (see :mod:`.xml_shape`).

A worksheet part written plainly (see :mod:`.xml_shape`; the compiled reader reads no other) is
first searched as bytes, which costs a small part of reading it (regular expressions run in C
over the decompressed stream): only when it holds a formula, a merge, or a cell beyond the
header does :func:`scan` parse it as XML to find the cells, one row at a time. A part not
written plainly is always parsed.
"""

from __future__ import annotations

import re
import zipfile
from array import array
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import IO, Any
from xml.etree import ElementTree

import numpy as np
from openpyxl.utils.cell import column_index_from_string, coordinate_from_string

from estatebot.listings.sheet.readers.xml_shape import shape_of, sparse

#: Most cells beyond the header named one by one; the rest are counted.
MAX_NAMED = 20

IntArray = np.ndarray[Any, np.dtype[np.int64]]

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_ROW, _CELL, _FORMULA, _VALUE = f"{_MAIN}row", f"{_MAIN}c", f"{_MAIN}f", f"{_MAIN}v"
_INLINE, _MERGE = f"{_MAIN}is", f"{_MAIN}mergeCell"
# Small chunks: the survey runs while calamine holds its whole sheet, and needs no more.
_CHUNK = 1 << 16
_OVERLAP = 256  # longer than any tag the patterns look for, so none is cut between chunks
_PREFIX = rb"<(?:[A-Za-z_][\w.-]*:)?"
_HAS_FORMULA = re.compile(_PREFIX + rb"f[\s/>]")
_HAS_MERGE = re.compile(_PREFIX + rb"mergeCell[\s/>]")
_COLUMN_REF = re.compile(rb'\sr="([A-Za-z]{1,3})[0-9]+"')
# A cell element without an r attribute: its column is only known by counting.
_UNREFERENCED = re.compile(_PREFIX + rb"c(?=[\s/>])(?![^>]*\sr=)")
_HAS_ERROR = re.compile(_PREFIX + rb'c\s[^>]*\bt="e"')


@dataclass
class Findings:
    """What the scan found under the header: cells by 1-based (row, column), ranges as written.

    ``unsaved_formulas`` are in named columns; ``unnamed`` counts, by column, the values under
    a blank header (left of the last named column); ``beyond`` names the first
    :data:`MAX_NAMED` values right of the last named column, of ``beyond_count`` in all.
    """

    unsaved_formulas: list[tuple[int, int]] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    unnamed: dict[int, int] = field(default_factory=dict)
    beyond: list[tuple[int, int]] = field(default_factory=list)
    beyond_count: int = 0
    #: Formula errors (``#REF!``, ``#N/A``) in named columns, with their text.
    errors: list[tuple[int, int, str]] = field(default_factory=list)


def scan(
    archive: str, member: str, named: Collection[int], header_row: int, *, plain: bool = True
) -> Findings:
    """Look at worksheet part ``member`` of the xlsx file ``archive`` below ``header_row``:
    formula cells of the ``named`` columns without a saved value, merged ranges, and values in
    the other columns. A part not ``plain`` (see :mod:`.xml_shape`) is parsed at once."""
    wanted = frozenset(named)
    with zipfile.ZipFile(archive) as zipped:
        with zipped.open(member) as stream:
            needed = not plain or _worth_parsing(stream, wanted)
        if not needed:
            return Findings()
        with zipped.open(member) as stream:
            return _parse(stream, wanted, header_row)


def _chunks(stream: IO[bytes]) -> Iterator[bytes]:
    tail = b""
    while chunk := stream.read(_CHUNK):
        yield tail + chunk
        tail = chunk[-_OVERLAP:]


def _worth_parsing(stream: IO[bytes], named: frozenset[int]) -> bool:
    letters: set[bytes] = set()
    for chunk in _chunks(stream):
        if _HAS_FORMULA.search(chunk) or _HAS_MERGE.search(chunk):
            return True
        if _UNREFERENCED.search(chunk) or _HAS_ERROR.search(chunk):
            return True
        letters.update(_COLUMN_REF.findall(chunk))
    return any(column_index_from_string(c.decode().upper()) not in named for c in letters)


def _parse(stream: IO[bytes], named: frozenset[int], header_row: int) -> Findings:
    found = Findings()
    width = max(named)
    row_number = 0
    for _, element in ElementTree.iterparse(stream, events=("end",)):
        if element.tag == _MERGE:
            ref = element.get("ref")
            if ref:
                found.merged.append(ref)
            continue
        if element.tag != _ROW:
            continue
        given = element.get("r")
        row_number = int(given) if given else row_number + 1
        if row_number > header_row:
            _cells(element, row_number, named, width, found)
        element.clear()  # keeps memory flat: a row is forgotten once scanned
    return found


def _cells(
    row: ElementTree.Element, number: int, named: frozenset[int], width: int, found: Findings
) -> None:
    column = 0
    for cell in row.iter(_CELL):
        ref = cell.get("r")
        if ref:
            letters, _ = coordinate_from_string(ref)
            column = column_index_from_string(letters)
        else:
            column += 1
        value = cell.find(_VALUE)
        # An empty saved text result (t="str") is a value; an empty number is none.
        saved = value is not None and (bool(value.text) or cell.get("t") == "str")
        formula = cell.find(_FORMULA) is not None
        if column in named:
            if cell.get("t") == "e" and value is not None and value.text:
                found.errors.append((number, column, value.text))
            if formula and not saved:
                found.unsaved_formulas.append((number, column))
            continue
        if not (saved or formula or _inline_text(cell)):
            continue  # a formatted empty cell
        if column < width:
            found.unnamed[column] = found.unnamed.get(column, 0) + 1
            continue
        found.beyond_count += 1
        if len(found.beyond) < MAX_NAMED:
            found.beyond.append((number, column))


def _inline_text(cell: ElementTree.Element) -> bool:
    inline = cell.find(_INLINE)
    return inline is not None and any(t.strip() for t in inline.itertext())


# ------------------------------------------------------------------- the fast reader's survey
#
# The survey runs over every byte of the sheet, so it looks for literal text first (bytes.find
# and count run at memory speed) and runs a pattern only where one is found. Tags are matched
# with the namespace prefix the sheet uses (``<c`` or ``<x:c``), read once from its start.

_SHEET_DATA = re.compile(rb"<([A-Za-z_][\w.-]*:)?sheetData[\s/>]")
_REF = re.compile(rb'\sr="([A-Za-z]{1,3})([0-9]+)"')
_TYPE = re.compile(rb'\st="([a-zA-Z]+)"')
_STYLE_OF = re.compile(rb'\ss="([0-9]+)"')


@dataclass
class Survey:
    """What one pass over a worksheet's bytes found (cells by 1-based (row, column)).

    ``detailed`` says the sheet holds formulas, merges or errors, for :func:`parse_findings`.
    ``numbers`` holds the text of the numbers openpyxl reads other than as calamine does;
    :meth:`styles` the style of each cell under one of the ``styles`` asked about, kept as
    arrays of machine integers: a sheet may have a padded ZIP in every row, and the survey
    runs while calamine holds its whole sheet.
    """

    detailed: bool = False
    numbers: dict[tuple[int, int], bytes] = field(default_factory=dict)
    styled: tuple[array[int], array[int], array[int]] = field(
        default_factory=lambda: (array("q"), array("q"), array("q"))
    )

    def add_style(self, row: int, column: int, style: int) -> None:
        """Note that cell (``row``, ``column``) has the style ``style``."""
        rows, columns, styles = self.styled
        rows.append(row)
        columns.append(column)
        styles.append(style)

    def styles(self) -> tuple[IntArray, IntArray, IntArray]:
        """The rows, columns and styles of the styled cells, as arrays (a cell styled twice
        keeps its last style)."""
        rows, columns, styles = (np.array(a, np.int64) for a in self.styled)
        if len(rows) < 2:
            return rows, columns, styles
        # The last of each cell's entries: the first of each in reversed order.
        key = (rows << 16 | columns)[::-1]
        _, first = np.unique(key, return_index=True)
        kept = np.sort(len(rows) - 1 - first)
        return rows[kept], columns[kept], styles[kept]


class _Tags:
    """The literal tags of one sheet, with its namespace prefix."""

    def __init__(self, prefix: bytes) -> None:
        self.details = (
            b"<" + prefix + b"f>",
            b"<" + prefix + b"f ",
            b"<" + prefix + b"f/>",
            b"<" + prefix + b"mergeCell",
            b't="e"',
        )
        self.start = b"<" + prefix + b"c "
        self.notation = re.compile(
            b"<" + prefix + rb"v>([-+]?\d+\.0*|[-+]?\d{16,}|[^<]*[eE][^<]*)</" + prefix + b"v>"
        )


def survey(
    archive: str,
    member: str,
    styles: Collection[int] = (),
    detailed: bool | None = None,
) -> Survey:
    """Look through worksheet part ``member`` of ``archive`` once, in whole-row chunks.

    ``styles`` are the style indexes whose cells are wanted (the zero-padding ones).
    ``detailed``, when the pass over the sheet's structure has told it (:mod:`.xml_shape`),
    saves looking for formulas, merged ranges and errors again.
    """
    found = Survey(detailed=bool(detailed))
    styled = re.compile(rb' s="(?:' + b"|".join(str(s).encode() for s in styles) + rb')"')
    look = detailed is None
    for tags, chunk in _cell_chunks(archive, member):
        if look and not found.detailed and any(tag in chunk for tag in tags.details):
            found.detailed = True
        for match in tags.notation.finditer(chunk):
            cell = _cell_at(chunk, match.start(), tags.start)
            if cell is not None and cell[1] in (None, b"n"):
                found.numbers[cell[0]] = match.group(1)
        if styles:
            for match in styled.finditer(chunk):
                cell = _cell_at(chunk, match.start(), tags.start)
                style = _STYLE_OF.search(match.group(0))
                if cell is not None and style is not None:
                    found.add_style(*cell[0], int(style.group(1)))
    return found


def needs_openpyxl(archive: str, member: str) -> bool:
    """Whether worksheet part ``member`` of ``archive`` is one calamine must not read: XML not
    written plainly, a cell without an ``r`` attribute (its place is only known by counting), a
    rich-text inline string (calamine drops the spaces between its runs), or a stray value far
    right (calamine's dense grid of it would be rows × 16,384 cells): see :mod:`.xml_shape`.
    """
    with zipfile.ZipFile(archive) as zipped:
        shape = shape_of(zipped, member, f"{archive} ({member})")
    return not shape.plain or shape.unreferenced or shape.rich_inline or sparse(shape)


def _cell_chunks(archive: str, member: str) -> Iterator[tuple[_Tags, bytes]]:
    """Worksheet part ``member`` of ``archive`` in whole-row chunks from the one where its cells
    begin, each with the tags of the part's namespace prefix (found at ``sheetData``)."""
    tags: _Tags | None = None
    with zipfile.ZipFile(archive) as zipped, zipped.open(member) as stream:
        for chunk in _whole_rows(stream):
            if tags is None:
                start = _SHEET_DATA.search(chunk)
                if start is None:
                    continue  # still before the cells
                tags = _Tags(start.group(1) or b"")
            yield tags, chunk


def _cell_at(
    chunk: bytes, at: int, start_tag: bytes
) -> tuple[tuple[int, int], bytes | None] | None:
    """The place and type of the cell whose XML holds position ``at`` of ``chunk``."""
    begin = chunk.rfind(start_tag, 0, at + 1)
    if begin < 0:
        return None
    end = chunk.find(b">", begin)
    attributes = chunk[begin + len(start_tag) - 1 : end]
    ref = _REF.search(attributes)
    if ref is None:
        return None
    kind = _TYPE.search(attributes)
    place = int(ref.group(2)), column_index_from_string(ref.group(1).decode().upper())
    return place, kind.group(1) if kind else None


def _whole_rows(stream: IO[bytes]) -> Iterator[bytes]:
    """The stream in chunks that end after a row's tag, so no cell is cut between two.

    Each piece read is searched once (with the three bytes before it, for a tag cut between two
    pieces) and a chunk's pieces are joined once: linear in the part's size however far apart
    its rows are (:mod:`.xml_shape` has refused padded XML before).
    """
    pieces: list[bytes] = []
    carry = b""  # the last bytes waiting, where a "row>" cut between two pieces begins
    while chunk := stream.read(_CHUNK):
        window = carry + chunk
        cut = window.rfind(b"row>")
        if cut < 0:
            pieces.append(chunk)
            carry = window[-3:]
            continue
        # "row>" is longer than the carry, so it ends inside this piece.
        end = cut + len(b"row>") - len(carry)
        pieces.append(chunk[:end])
        yield b"".join(pieces)
        rest = chunk[end:]
        pieces, carry = [rest], rest[-3:]
    if any(pieces):
        yield b"".join(pieces)


def parse_findings(archive: str, member: str, named: Collection[int], header_row: int) -> Findings:
    """:func:`scan`'s parse of the worksheet, without its first look at the bytes."""
    with zipfile.ZipFile(archive) as zipped, zipped.open(member) as stream:
        return _parse(stream, frozenset(named), header_row)
