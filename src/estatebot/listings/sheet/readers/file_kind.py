"""Which reader a file needs, told from its bytes as well as its name (an old Excel 97-2003
``.xls`` workbook and an OpenDocument ``.ods`` sheet are known by their bytes, whatever their
name says), and a clear :class:`SheetError` for a file no reader can take: an empty file, a
truncated or damaged workbook.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path
from typing import Literal
from xml.etree.ElementTree import ParseError

from openpyxl.utils.exceptions import InvalidFileException

from estatebot.errors import SheetError
from estatebot.listings.sheet.readers.calamine import CALAMINE_ERRORS

Kind = Literal["xlsx", "xls", "ods", "text", "parquet"]

#: Suffixes read as delimited text whatever their bytes hold.
TEXT_SUFFIXES = (".csv", ".tsv", ".txt")
#: The first bytes of an OLE2 compound file: Excel 97-2003 .xls (and .doc, .msg ...).
_OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ODS_MIMETYPE = b"application/vnd.oasis.opendocument.spreadsheet"
_SAVE_AGAIN = "open it in Excel (or LibreOffice) and save it as .xlsx or CSV UTF-8"

#: What openpyxl and the zip and XML layers under it raise for a file that is not a sound
#: workbook (a missing part is a KeyError; a bad number in a cell, a ValueError).
WORKBOOK_ERRORS: tuple[type[BaseException], ...] = (
    zipfile.BadZipFile,
    zlib.error,
    ParseError,
    InvalidFileException,
    KeyError,
    ValueError,
    TypeError,
    EOFError,
    OSError,
    *CALAMINE_ERRORS,
)


def kind_of(path: Path) -> Kind:
    """The reader ``path`` needs; :class:`SheetError` when none can read it."""
    if not path.exists():
        raise SheetError(f"no such file: {path}")
    if path.is_dir():
        raise SheetError(f"{path} is a folder, not a spreadsheet file")
    if path.stat().st_size == 0:
        raise SheetError(f"{path.name} is empty (0 bytes): export the sheet again")
    suffix = path.suffix.lower()
    with path.open("rb") as handle:
        head = handle.read(len(_OLE2))
    if head == _OLE2:
        return "xls"
    if suffix == ".parquet":
        return "parquet"
    is_zip = head.startswith(b"PK") and zipfile.is_zipfile(path)
    if suffix in TEXT_SUFFIXES and not is_zip:
        return "text"
    if is_zip and _is_ods(path):
        return "ods"
    if suffix == ".xls" and not is_zip:
        # Many MLS systems save an HTML or text table under the .xls name.
        raise broken(path, "its bytes are not an Excel 97-2003 workbook's", kind="xls")
    if suffix == ".ods" and not is_zip:
        raise broken(path, "its bytes are not a zip archive, as an ods file's are", kind="ods")
    if suffix in (".xlsx", ".xlsm") and not is_zip:
        raise broken(path, "its bytes are not a zip archive, as an xlsx file's are")
    # A zip is read as a workbook even under a text name (an xlsx saved as "export.csv").
    return "xlsx" if is_zip else "text"


def _is_ods(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            if "mimetype" not in archive.namelist():
                return False
            return archive.read("mimetype").strip() == _ODS_MIMETYPE
    except (zipfile.BadZipFile, zlib.error, OSError):
        return False


def broken(path: Path, why: str, *, kind: str = "xlsx") -> SheetError:
    """The error for a workbook that cannot be read: what went wrong and what to do."""
    return SheetError(
        f"{path.name} cannot be read as an {kind} workbook ({why}): the file may be truncated "
        f"or damaged, or another kind of file renamed .{kind}; {_SAVE_AGAIN}, or export it "
        "again"
    )


def failure(path: Path, error: BaseException, *, kind: str = "xlsx") -> SheetError:
    """:func:`broken` for an exception raised while reading the workbook."""
    text = str(error).strip()
    detail = type(error).__name__ + (f": {text[:160]}" if text else "")
    return broken(path, detail, kind=kind)
