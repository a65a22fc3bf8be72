"""Hand-built xlsx files for the hostile-input tests of the sheet readers.

:func:`write_book` writes a workbook part by part with :mod:`zipfile`: each worksheet's XML as
given (``<row>`` elements, or the whole part as bytes, or a stream of byte pieces for parts too
big to hold), its state (hidden, veryHidden), and the shared strings. :func:`shuffle_rows`
rewrites a real workbook (written by openpyxl) with its rows in another order.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006"
_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml"

#: The columns of :func:`listing_row`.
HEADERS = ("MLSNumber", "Status", "City", "SalePrice")
#: The XML declaration every part starts with.
DECLARATION = b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'


@dataclass(frozen=True)
class SheetXml:
    """One worksheet: its name, its ``<sheetData>`` content (or the whole part in ``part``:
    bytes, or byte pieces written one after another), and its state ("hidden", ...)."""

    name: str
    rows: str = ""
    state: str | None = None
    part: bytes | Iterable[bytes] | None = None


def text_cell(ref: str, text: str, quote: str = '"') -> str:
    """An inline-string cell."""
    return f"<c r={quote}{ref}{quote} t={quote}inlineStr{quote}><is><t>{text}</t></is></c>"


def header_row(headers: Sequence[str] = HEADERS, row: int = 1) -> str:
    """A header row of inline strings from column A."""
    cells = "".join(text_cell(f"{_letter(j)}{row}", h) for j, h in enumerate(headers))
    return f'<row r="{row}">{cells}</row>'


def listing_row(n: int, quote: str = '"') -> str:
    """Row ``n`` of a listing under :data:`HEADERS`: M{n}, Active, Austin, 100000 + n."""
    q = quote
    return (
        f"<row r={q}{n}{q}>{text_cell(f'A{n}', f'M{n}', q)}{text_cell(f'B{n}', 'Active', q)}"
        f"{text_cell(f'C{n}', 'Austin', q)}<c r={q}D{n}{q}><v>{100_000 + n}</v></c></row>"
    )


def sheet_part(rows: str, *, head: str = "") -> bytes:
    """A worksheet part holding ``rows`` (``head``: elements before the cells)."""
    return (
        DECLARATION
        + (f'<worksheet xmlns="{MAIN}">{head}<sheetData>{rows}</sheetData></worksheet>').encode()
    )


def write_book(
    path: Path,
    sheets: Sequence[SheetXml],
    shared_strings: Sequence[str] = (),
    *,
    parts: Mapping[str, bytes | Iterable[bytes]] | None = None,
    compresslevel: int = 6,
) -> Path:
    """Write a workbook of ``sheets`` (in order) and ``shared_strings`` (their text, escaped by
    the caller); ``parts`` replaces or adds parts by name (``xl/styles.xml``)."""
    overrides = "".join(
        f'<Override PartName="/xl/worksheets/sheet{i}.xml" ContentType="{_TYPE}.worksheet+xml"/>'
        for i in range(1, len(sheets) + 1)
    )
    listed = "".join(
        f'<sheet name="{s.name}" sheetId="{i}" r:id="rId{i}"'
        + (f' state="{s.state}"' if s.state else "")
        + "/>"
        for i, s in enumerate(sheets, start=1)
    )
    targets = "".join(
        f'<Relationship Id="rId{i}" Type="{_REL}/worksheet" Target="worksheets/sheet{i}.xml"/>'
        for i in range(1, len(sheets) + 1)
    )
    strings = "".join(f"<si><t>{s}</t></si>" for s in shared_strings)
    written: dict[str, bytes | Iterable[bytes]] = {
        "[Content_Types].xml": _xml(
            f'<Types xmlns="{_PKG}/content-types"><Default Extension="rels" ContentType='
            f'"application/vnd.openxmlformats-package.relationships+xml"/><Default Extension='
            f'"xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
            f'ContentType="{_TYPE}.sheet.main+xml"/>{overrides}<Override PartName='
            f'"/xl/sharedStrings.xml" ContentType="{_TYPE}.sharedStrings+xml"/><Override '
            f'PartName="/xl/styles.xml" ContentType="{_TYPE}.styles+xml"/></Types>'
        ),
        "_rels/.rels": _xml(
            f'<Relationships xmlns="{_PKG}/relationships"><Relationship Id="rId1" '
            f'Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ),
        "xl/workbook.xml": _xml(
            f'<workbook xmlns="{MAIN}" xmlns:r="{_REL}"><sheets>{listed}</sheets></workbook>'
        ),
        "xl/_rels/workbook.xml.rels": _xml(
            f'<Relationships xmlns="{_PKG}/relationships">{targets}<Relationship Id="rId900" '
            f'Type="{_REL}/sharedStrings" Target="sharedStrings.xml"/><Relationship '
            f'Id="rId901" Type="{_REL}/styles" Target="styles.xml"/></Relationships>'
        ),
        "xl/sharedStrings.xml": _xml(
            f'<sst xmlns="{MAIN}" count="{len(shared_strings)}" '
            f'uniqueCount="{len(shared_strings)}">{strings}</sst>'
        ),
        "xl/styles.xml": _xml(
            f'<styleSheet xmlns="{MAIN}"><fonts count="1"><font/></fonts><fills count="1">'
            '<fill><patternFill patternType="none"/></fill></fills><borders count="1"><border/>'
            '</borders><cellStyleXfs count="1"><xf numFmtId="0"/></cellStyleXfs><cellXfs '
            'count="1"><xf numFmtId="0"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" '
            'xfId="0" builtinId="0"/></cellStyles></styleSheet>'
        ),
    }
    for i, sheet in enumerate(sheets, start=1):
        written[f"xl/worksheets/sheet{i}.xml"] = (
            sheet.part if sheet.part is not None else sheet_part(sheet.rows)
        )
    written.update(parts or {})
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=compresslevel) as book:
        for name, content in written.items():
            if isinstance(content, bytes):
                book.writestr(name, content)
                continue
            with book.open(name, "w", force_zip64=True) as stream:
                for piece in content:
                    stream.write(piece)
    return path


def _xml(text: str) -> bytes:
    return DECLARATION + text.encode()


def _letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


_ROW = re.compile(rb"<row[\s>].*?</row>|<row[^>]*/>", re.DOTALL)


def shuffle_rows(source: Path, target: Path, order: Sequence[int]) -> Path:
    """Copy workbook ``source`` to ``target`` with the ``<row>`` elements of its first
    worksheet written in ``order`` (positions among them), each keeping its number."""
    shutil.copyfile(source, target)
    member = "xl/worksheets/sheet1.xml"
    with zipfile.ZipFile(source) as book:
        names = book.namelist()
        contents = {name: book.read(name) for name in names}
    part = contents[member]
    rows = _ROW.findall(part)
    assert sorted(order) == list(range(len(rows))), (order, len(rows))
    start = part.index(rows[0])
    end = part.index(rows[-1]) + len(rows[-1])
    contents[member] = part[:start] + b"".join(rows[i] for i in order) + part[end:]
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as book:
        for name in names:
            book.writestr(name, contents[name])
    return target
