"""A delimited text file (csv, tsv, txt) → its records, decoded and split without guessing.

Decoding: a byte-order mark says the encoding (UTF-8, UTF-16, UTF-32); otherwise the file is
read as UTF-8 unless ``encoding=`` names another. A byte that is not valid in the encoding is
kept apart (as a lone surrogate, Python's ``surrogateescape``) so the cell holding it can be
named, row and column, instead of the whole file being decoded again in a guessed encoding.
When such bytes outnumber the valid non-ASCII characters, the file is in another encoding as a
whole, and :class:`SheetError` says which option to pass.

Splitting: the delimiter is detected among ``,`` ``;`` tab and ``|`` from the first lines (a
European Excel writes ``;``), unless the file is a ``.tsv``. A cell over the csv module's field
limit (usually an unclosed quote swallowing the rest of the file) is a :class:`SheetError`.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from dataclasses import dataclass

from estatebot.errors import SheetError

#: The delimiters a sheet export uses; the first one wins when the sniffer cannot tell.
DELIMITERS = ",;\t|"
#: How much of the file the delimiter is detected from.
_SNIFF_CHARS = 64 * 1024
_SNIFF_LINES = 20

# Longest first: a UTF-32 little-endian mark starts with the UTF-16 one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
#: A byte the encoding could not decode, as ``surrogateescape`` keeps it.
_BAD_BYTE = re.compile("[\udc80-\udcff]")
_NON_ASCII = re.compile("[^\x00-\x7f\udc80-\udcff]")


@dataclass(frozen=True)
class Decoded:
    """A file's text; undecodable bytes, if any, are lone surrogates (see :func:`has_bad_bytes`)."""

    text: str
    encoding: str
    bad_bytes: int


def check_encoding(encoding: str) -> str:
    """The codec name of ``encoding``, or :class:`SheetError` when Python knows no such codec."""
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise SheetError(
            "encoding is not a text encoding Python knows (try 'utf-8', 'cp1252', 'latin-1' "
            "or 'utf-16')",
            value=encoding,
        ) from None


def decode(raw: bytes, name: str, encoding: str | None = None) -> Decoded:
    """The text of file ``name`` (``raw`` bytes): BOM first, then ``encoding``, then UTF-8."""
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            return _decode(raw, codec, name, guessed=False)
    if encoding is not None:
        return _decode(raw, check_encoding(encoding), name, guessed=False)
    if b"\x00" in raw[:4096]:
        raise SheetError(
            f"{name} holds NUL bytes: it looks like UTF-16 text without a byte-order mark (pass "
            "encoding='utf-16-le' or 'utf-16-be'), or it is not a text file at all"
        )
    return _decode(raw, "utf-8", name, guessed=True)


def _decode(raw: bytes, codec: str, name: str, *, guessed: bool) -> Decoded:
    try:
        text = raw.decode(codec, errors="surrogateescape")
    except UnicodeDecodeError as error:
        # Only multi-byte codecs (UTF-16, UTF-32) can fail here: their errors come in units.
        raise SheetError(
            f"{name} cannot be decoded as {codec} at byte {error.start}: save it again as "
            "CSV UTF-8, or pass the encoding it was saved in (encoding=...)"
        ) from None
    text = text.removeprefix("\ufeff")
    bad = len(_BAD_BYTE.findall(text))
    if bad and guessed and bad > len(_NON_ASCII.findall(text)):
        first = _BAD_BYTE.search(text)
        assert first is not None
        line = text.count("\n", 0, first.start()) + 1
        byte = ord(first.group()) - 0xDC00
        raise SheetError(
            f"{name} is not UTF-8 text (byte 0x{byte:02X} on line {line}, and {bad} such "
            "bytes in all): it was saved in another encoding. Pass encoding='cp1252' for a "
            "file from Excel on Windows (or the encoding it was saved in), or save it again "
            "as CSV UTF-8"
        )
    return Decoded(text, codec, bad)


def has_bad_bytes(cell: str) -> bool:
    """The cell holds a byte its encoding could not decode."""
    return _BAD_BYTE.search(cell) is not None


def shown(cell: str) -> str:
    """A cell with undecodable bytes, each written ``\\xNN`` (for an issue's value)."""
    return _BAD_BYTE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", cell)


def replaced(cell: str) -> str:
    """A cell with each undecodable byte made the replacement character (safe to store)."""
    return _BAD_BYTE.sub("\ufffd", cell)


def sniff_delimiter(text: str) -> str:
    """The delimiter of ``text`` among :data:`DELIMITERS`, from its first lines (``,`` if unsure).

    The sniffer's guess is kept only when it splits the first line into more fields than a
    comma does: a comma file whose first lines hold semicolons in text stays a comma file.
    """
    lines = text[:_SNIFF_CHARS].splitlines()[:_SNIFF_LINES]
    lines = [line for line in lines if line.strip()]
    if not lines:
        return ","
    sample = "\n".join(lines)
    try:
        guess = csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return ","
    if guess == "," or guess not in DELIMITERS:
        return ","
    first = lines[0]
    if _width(first, guess) > _width(first, ","):
        return guess
    return ","


def _width(line: str, delimiter: str) -> int:
    return len(next(csv.reader([line], delimiter=delimiter), []))


def records(text: str, delimiter: str, name: str) -> list[list[str]]:
    """The records of ``text``; a malformed file is a :class:`SheetError` naming its line."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    out: list[list[str]] = []
    ended = 0  # the line the last good record ended on
    try:
        for record in reader:
            out.append(record)
            ended = reader.line_num
    except csv.Error as error:
        if "field larger than field limit" in str(error):
            raise SheetError(
                f"{name}: a cell of the record starting on line {ended + 1} is longer than "
                f'{csv.field_size_limit():,} characters, most likely because a quote (") '
                "opens there and never closes: check that row's quotes, or export the file "
                "again"
            ) from None
        raise SheetError(
            f"{name} cannot be read as CSV at line {reader.line_num}: {error}"
        ) from None
    return out
