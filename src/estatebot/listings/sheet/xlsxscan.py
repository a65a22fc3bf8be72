"""What openpyxl's read-only mode does not tell about a worksheet: formula cells with no saved
value (it reads them as blank), merged ranges (it does not read them), and cells right of the
header (the reader bounds its rows to the header's width, so it never sees them).

A worksheet part is first searched as bytes, which costs a small part of reading it (regular
expressions run in C over the decompressed stream): only when it holds a formula, a merge, or a
cell beyond the header does :func:`scan` parse it as XML to find the cells, one row at a time.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import IO
from xml.etree import ElementTree

from openpyxl.utils.cell import column_index_from_string, coordinate_from_string

#: Most cells beyond the header named one by one; the rest are counted.
MAX_NAMED = 20

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_ROW, _CELL, _FORMULA, _VALUE = f"{_MAIN}row", f"{_MAIN}c", f"{_MAIN}f", f"{_MAIN}v"
_INLINE, _MERGE = f"{_MAIN}is", f"{_MAIN}mergeCell"
_CHUNK = 1 << 20
_OVERLAP = 256  # longer than any tag the patterns look for, so none is cut between chunks
_PREFIX = rb"<(?:[A-Za-z_][\w.-]*:)?"
_HAS_FORMULA = re.compile(_PREFIX + rb"f[\s/>]")
_HAS_MERGE = re.compile(_PREFIX + rb"mergeCell[\s/>]")
_COLUMN_REF = re.compile(rb'\sr="([A-Z]{1,3})[0-9]+"')
# A cell element without an r attribute: its column is only known by counting.
_UNREFERENCED = re.compile(_PREFIX + rb"c(?=[\s/>])(?![^>]*\sr=)")


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


def scan(archive: str, member: str, named: Collection[int], header_row: int) -> Findings:
    """Look at worksheet part ``member`` of the xlsx file ``archive`` below ``header_row``:
    formula cells of the ``named`` columns without a saved value, merged ranges, and values in
    the other columns."""
    wanted = frozenset(named)
    with zipfile.ZipFile(archive) as zipped:
        with zipped.open(member) as stream:
            needed = _worth_parsing(stream, wanted)
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
        if _UNREFERENCED.search(chunk):
            return True
        letters.update(_COLUMN_REF.findall(chunk))
    return any(column_index_from_string(c.decode()) not in named for c in letters)


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
