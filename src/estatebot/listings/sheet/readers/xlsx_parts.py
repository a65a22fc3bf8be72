"""The small parts of an xlsx file the fast reader needs besides the cells: which zip member
holds each worksheet, and which cell styles pad whole numbers with zeros (a ZIP stored as the
number 2108 under the format ``00000``).

Both come from short XML parts (the workbook, its relationships, the styles), read once.
"""

from __future__ import annotations

import posixpath
import zipfile
from xml.etree import ElementTree

from estatebot.listings.sheet.readers.grid import ZeroPad, zero_pad_of

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_DOC_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_WORKSHEET = "/worksheet"


def worksheet_parts(zipped: zipfile.ZipFile) -> dict[str, str]:
    """Worksheet name → the zip member holding its XML (chart sheets are left out)."""
    workbook_part = _office_document(zipped)
    folder = posixpath.dirname(workbook_part)
    rels_part = posixpath.join(folder, "_rels", posixpath.basename(workbook_part) + ".rels")
    targets: dict[str, str] = {}
    for rel in ElementTree.fromstring(zipped.read(rels_part)).iter(f"{_PKG_REL}Relationship"):
        if rel.get("Type", "").endswith(_WORKSHEET):
            targets[rel.get("Id", "")] = _member(folder, rel.get("Target", ""))
    parts: dict[str, str] = {}
    for sheet in ElementTree.fromstring(zipped.read(workbook_part)).iter(f"{_MAIN}sheet"):
        target = targets.get(sheet.get(_DOC_REL, ""))
        if target is not None:
            parts[sheet.get("name", "")] = target
    return parts


def _office_document(zipped: zipfile.ZipFile) -> str:
    root = ElementTree.fromstring(zipped.read("_rels/.rels"))
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
