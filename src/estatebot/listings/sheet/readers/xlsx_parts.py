"""The small parts of an xlsx file the readers need besides the cells: the worksheets (their
names, whether each is hidden, and which zip member holds each), the shared-strings part, and
which cell styles pad whole numbers with zeros (a ZIP stored as the number 2108 under the format
``00000``).

All come from short XML parts (the workbook, its relationships, the styles), read once.
"""

from __future__ import annotations

import posixpath
import zipfile
from dataclasses import dataclass
from xml.etree import ElementTree

from estatebot.listings.sheet.readers.grid import ZeroPad, zero_pad_of

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_DOC_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_PACKAGE_RELS = "_rels/.rels"
_WORKSHEET = "/worksheet"
_SHARED_STRINGS = "/sharedStrings"
#: The states of a sheet the user does not see (``veryHidden`` only macros can undo).
HIDDEN_STATES = ("hidden", "veryHidden")


@dataclass(frozen=True)
class SheetEntry:
    """A sheet of the workbook, in the workbook's order: its name, whether it is hidden, and
    the zip member holding its XML (None for a chart sheet, which holds no cells)."""

    name: str
    hidden: bool
    member: str | None


def package_parts(zipped: zipfile.ZipFile) -> tuple[str, str, str]:
    """The package's relationships, its workbook part and the workbook's relationships."""
    workbook_part = _office_document(zipped)
    folder = posixpath.dirname(workbook_part)
    rels_part = posixpath.join(folder, "_rels", posixpath.basename(workbook_part) + ".rels")
    return _PACKAGE_RELS, workbook_part, rels_part


def workbook_sheets(zipped: zipfile.ZipFile) -> list[SheetEntry]:
    """Every sheet of the workbook (worksheets and chart sheets), from its ``<sheets>`` list."""
    _, workbook_part, rels_part = package_parts(zipped)
    targets = _targets(zipped, workbook_part, rels_part, _WORKSHEET)
    return [
        SheetEntry(
            sheet.get("name", ""),
            sheet.get("state", "visible") in HIDDEN_STATES,
            targets.get(sheet.get(_DOC_REL, "")),
        )
        for sheet in ElementTree.fromstring(zipped.read(workbook_part)).iter(f"{_MAIN}sheet")
    ]


def worksheet_parts(zipped: zipfile.ZipFile) -> dict[str, str]:
    """Worksheet name → the zip member holding its XML (chart sheets are left out)."""
    return {s.name: s.member for s in workbook_sheets(zipped) if s.member is not None}


def shared_strings_part(zipped: zipfile.ZipFile) -> str | None:
    """The zip member holding the shared strings, if the workbook has one."""
    _, workbook_part, rels_part = package_parts(zipped)
    targets = _targets(zipped, workbook_part, rels_part, _SHARED_STRINGS)
    for member in targets.values():
        try:
            zipped.getinfo(member)
        except KeyError:
            continue
        return member
    return None


def _targets(
    zipped: zipfile.ZipFile, workbook_part: str, rels_part: str, kind: str
) -> dict[str, str]:
    """Relationship id → zip member, for the workbook's relationships of type ``kind``."""
    folder = posixpath.dirname(workbook_part)
    targets: dict[str, str] = {}
    for rel in ElementTree.fromstring(zipped.read(rels_part)).iter(f"{_PKG_REL}Relationship"):
        if rel.get("Type", "").endswith(kind):
            targets[rel.get("Id", "")] = _member(folder, rel.get("Target", ""))
    return targets


def _office_document(zipped: zipfile.ZipFile) -> str:
    root = ElementTree.fromstring(zipped.read(_PACKAGE_RELS))
    for rel in root.iter(f"{_PKG_REL}Relationship"):
        if rel.get("Type", "").endswith("/officeDocument"):
            return _member("", rel.get("Target", ""))
    raise KeyError("the package names no workbook part")


def _member(folder: str, target: str) -> str:
    # Targets are relative to the workbook's folder, or absolute from the package root.
    if target.startswith("/"):
        return target.lstrip("/")
    return posixpath.normpath(posixpath.join(folder, target))


def zero_pad_styles(zipped: zipfile.ZipFile) -> dict[int, ZeroPad]:
    """Cell style index → the zero padding of its number format, for the styles that pad.

    Only custom formats can pad (the built-in ones are ``0``, ``0.00``, dates…), so a workbook
    without them needs no look at its cells' styles at all.
    """
    names = set(zipped.namelist())
    part = next((p for p in ("xl/styles.xml", "styles.xml") if p in names), None)
    if part is None:
        return {}
    root = ElementTree.fromstring(zipped.read(part))
    codes = {
        int(fmt.get("numFmtId", "-1")): fmt.get("formatCode", "")
        for fmt in root.iter(f"{_MAIN}numFmt")
    }
    pads = {number: zero_pad_of(code) for number, code in codes.items()}
    pads = {number: pad for number, pad in pads.items() if pad.head}
    if not pads:
        return {}
    styles: dict[int, ZeroPad] = {}
    cell_xfs = root.find(f"{_MAIN}cellXfs")
    for index, xf in enumerate(cell_xfs.iter(f"{_MAIN}xf") if cell_xfs is not None else ()):
        pad = pads.get(int(xf.get("numFmtId", "0")))
        if pad is not None:
            styles[index] = pad
    return styles
