"""What the XML of a workbook part holds, from one linear pass over its bytes before any reader
allocates a cell: for a worksheet, how many rows and cells it has, how far down and right its
cells reach, how much text they hold and which shared strings they repeat; for any part, whether
its XML is padded (far more bytes than tags, or far more tags than cells).

The pass is a lexer of XML, run over each chunk with numpy: every ``<`` starts markup (text and
attribute values cannot hold one), so the tags are found by position, named from the bytes after
their ``<``, and each attribute by its ``=``. It reads the worksheet as calamine does, and as an
XML parser does, as long as the XML is *plain*, the way every spreadsheet program writes it:

* attribute values in double quotes, no blank around ``=`` (checked for the attributes the
  readers use: ``r``, ``t`` and ``s``), and cell references that are letters then digits;
* no comment, CDATA section, DTD or processing instruction (``<!``, ``<?``) but the XML
  declaration, and UTF-8 text;
* the elements the readers use (``c``, ``row``, ``v``, ``is``) under the sheet's one prefix,
  and no attributes on ``v``.

Each rule is checked on every byte. A part that breaks one is not plain (:attr:`Shape.odd` says
how): the byte patterns of :mod:`.xml_scan` might then see other cells than a parser, so such a
sheet is left to the openpyxl reader, which parses it with an XML parser and keeps to the memory
budget as it reads (see :mod:`.xlsx_openpyxl`). What the pass finds is thus decided on the
structure of the XML, not on how its bytes are quoted: ``r='XFD5'``, ``r = "XFD5"``,
``r="&#88;FD5"`` or ``<x:c r="XFD5">`` all make the sheet not plain, and a plain sheet's
``r="xfd5"`` is column XFD as calamine reads it.
"""

from __future__ import annotations

import re
import zipfile
from array import array
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, Protocol
from xml.etree import ElementTree

import numpy as np

from estatebot.errors import SheetError
from estatebot.listings.sheet.readers.budget import size_text
from estatebot.listings.sheet.readers.xml_cells import (
    ERROR,
    FORMULA_TEXT,
    SHARED,
    CellFixes,
    CellKinds,
    ChunkCells,
)

#: Excel's last row and column: a reference beyond them is no cell of a worksheet.
MAX_ROW = 1_048_576
MAX_COLUMN = 16_384
#: XML up to this size is read as it is, whatever its shape.
PAD_FLOOR = 16 * 2**20
#: Beyond the floor, the most bytes per tag a part may average. A cell's text is at most
#: 32,767 characters (98 kB in UTF-8) and takes six tags inline: 16 kB per tag at the worst.
MAX_BYTES_PER_TAG = 32 * 1024
#: Beyond the floor, the most tags a worksheet may average per row or cell. Ordinary sheets
#: average four to six (formats, merges and links add a few).
MAX_TAGS_PER_CELL = 64
#: Columns a dense grid may hold beyond four times those holding a cell (see :func:`sparse`).
SPARE_COLUMNS = 64
#: From this column (EA) on, a sheet is checked for a stray value far right of the rest.
WIDE_COLUMN = 131

_CHUNK = 1 << 20
# The lexer takes a chunk a quarter of a megabyte at a time: its arrays stay in the cache.
_LEX_CHUNK = 1 << 18
# After a chunk: the "<" its text runs up to (the next chunk's first tag), and room for the
# windows read past a value at the chunk's end.
_PAD = b"<" * 24
_LT, _GT, _EQ, _QUOTE = 0x3C, 0x3E, 0x3D, 0x22
_BLANKS = (0x20, 0x09, 0x0A, 0x0D)
_SHEET_DATA = re.compile(rb"<([A-Za-z_][\w.-]*:)?sheetData[\s/>]")
_SST = re.compile(rb"<([A-Za-z_][\w.-]*:)?sst[\s/>]")
_ENCODING = re.compile(rb"""^(?:\xef\xbb\xbf)?<\?xml[^>]*?\sencoding\s*=\s*["']([^"']*)["']""")
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
_DTD = b"<!DOCTYPE"


@dataclass
class Shape:
    """What one worksheet part holds (see the module's docstring).

    ``size`` bytes and ``markup`` tags in all; ``rows`` row and ``cells`` cell elements;
    ``max_row`` and ``max_column`` the farthest cell (1-based), ``columns`` the distinct columns
    holding a cell; ``text`` characters of inline and formula text at most; ``shared_refs``
    cells repeating shared strings, ``shared_text`` characters in all, the longest
    ``longest_shared``. ``odd`` says why the part is not plain ("" when it is), ``beyond`` names
    a cell reference past the sheet's last row or column. ``top_row`` is the first row holding
    a value, ``top_kinds`` and ``kinds`` the kinds of value (bits of :mod:`.xml_cells`) of each
    column in that row and below it, for the cells whose reference was read. ``detailed`` says
    the part holds formulas, merged ranges or formula errors (:func:`.xml_scan.parse_findings`
    finds them). ``numbers`` and ``styled`` are the cells to fix (:mod:`.xml_cells`), when
    asked for.
    """

    size: int = 0
    markup: int = 0
    rows: int = 0
    cells: int = 0
    max_row: int = 0
    max_column: int = 0
    columns: set[int] = field(default_factory=set)
    text: int = 0
    shared_refs: int = 0
    shared_text: int = 0
    longest_shared: int = 0
    unreferenced: bool = False
    rich_inline: bool = False
    odd: str = ""
    beyond: str = ""
    top_row: int = 0
    top_kinds: dict[int, int] = field(default_factory=dict)
    kinds: dict[int, int] = field(default_factory=dict)
    detailed: bool = False
    numbers: dict[tuple[int, int], bytes] = field(default_factory=dict)
    styled: tuple[array[int], array[int], array[int]] = field(
        default_factory=lambda: (array("q"), array("q"), array("q"))
    )

    @property
    def plain(self) -> bool:
        """Whether the part is written plainly, so that byte patterns read it as a parser does."""
        return not self.odd


def sparse(shape: Shape) -> bool:
    """Whether the sheet's widest column lies far beyond the columns holding cells: a dense
    grid of it would be mostly empty (one stray value in column XFD)."""
    if shape.max_column < WIDE_COLUMN:
        return False
    return shape.max_column > 4 * len(shape.columns) + SPARE_COLUMNS


# --------------------------------------------------------------------------- streaming


def padded(where: str, why: str) -> SheetError:
    """The error for XML padded far beyond what it holds: slow to read for nothing."""
    return SheetError(
        f"{where} is padded: {why}. No spreadsheet program writes that, and reading it would "
        "take minutes, so it is not read: open the file in Excel (or LibreOffice) and save it "
        "again, or export the sheet again"
    )


class Readable(Protocol):
    """What :func:`tag_chunks` reads from: a binary stream, or :func:`read_ahead`'s reader."""

    def read(self, size: int, /) -> bytes:
        """The next ``size`` bytes at most (b"" at the end)."""
        ...


def tag_chunks(stream: Readable, where: str, *, count: bool = True) -> Iterator[bytes]:
    """The stream in chunks that end just before a ``<``, so that no tag and no text is cut.

    Refuses padded XML as it goes (:func:`padded`): more than :data:`MAX_BYTES_PER_TAG` bytes a
    tag on average once past :data:`PAD_FLOOR` (unless ``count`` is false: the caller counts
    the tags itself, see :func:`check_density`), or a stretch of that size without a tag. The
    cost is linear: each piece read is searched once.
    """
    pending: list[bytes] = []
    pending_size = size = markup = 0
    while piece := stream.read(_CHUNK):
        if count:
            size += len(piece)
            markup += piece.count(b"<")
            check_density(size, markup, where)
        cut = piece.rfind(b"<")
        if cut <= 0:
            # No tag begins past the piece's first byte: nothing to cut it at.
            pending.append(piece)
            pending_size += len(piece)
            if pending_size > PAD_FLOOR:
                raise padded(where, f"a stretch of {size_text(pending_size)} holds no tag")
            continue
        pending.append(piece[:cut])
        yield b"".join(pending)
        pending, pending_size = [piece[cut:]], len(piece) - cut
    if pending_size:
        yield b"".join(pending)


def check_density(size: int, markup: int, where: str) -> None:
    """Refuse XML of ``size`` bytes holding ``markup`` tags when it is padded: more than
    :data:`MAX_BYTES_PER_TAG` bytes a tag on average, past :data:`PAD_FLOOR`."""
    if size > PAD_FLOOR and size > MAX_BYTES_PER_TAG * markup:
        raise padded(where, f"{size_text(size)} of XML hold only {markup:,} tags")


def check_part(zipped: zipfile.ZipFile, member: str, where: str) -> None:
    """Read XML part ``member`` through, refusing it when padded (see :func:`tag_chunks`) or
    when it holds a DTD."""
    with zipped.open(member) as stream:
        for chunk in tag_chunks(stream, where):
            _refuse_dtd(chunk, where)


def _refuse_dtd(chunk: bytes, where: str) -> None:
    # A DTD can define entities that expand a few bytes into gigabytes; no workbook has one.
    if _DTD in chunk:
        raise SheetError(
            f"{where} holds a DTD (<!DOCTYPE ...>), which no spreadsheet program writes: it "
            "is not read; open the file in Excel (or LibreOffice) and save it again"
        )


# A zip member is read one chunk ahead, on another thread: zlib inflates with the interpreter
# lock released, so the next chunk of a worksheet is inflated on the other core while the lexer
# works on this one.


class _Ahead:
    """A stream's ``read(size)``, each answered by the read made while the one before was used."""

    def __init__(self, stream: IO[bytes], size: int, pool: ThreadPoolExecutor) -> None:
        self._stream = stream
        self._size = size
        self._pool = pool
        self._pending: Future[bytes] | None = pool.submit(stream.read, size)

    def read(self, size: int) -> bytes:
        """The next ``size`` bytes (the size given at the start: the chunks are all alike)."""
        if size != self._size:
            raise ValueError(f"read ahead gives chunks of {self._size} bytes, not {size}")
        if self._pending is None:
            return b""
        data = self._pending.result()
        self._pending = self._pool.submit(self._stream.read, size) if data else None
        return data


@contextmanager
def read_ahead(stream: IO[bytes], size: int) -> Iterator[_Ahead]:
    """``stream`` read ``size`` bytes at a time, one read ahead; the read under way is waited
    for on leaving (the stream may then be closed)."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="estatebot-inflate") as pool:
        yield _Ahead(stream, size, pool)


# --------------------------------------------------------------------------- the lexer


IntArray = np.ndarray[Any, np.dtype[np.int64]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]


def _table(*members: int, ranges: tuple[tuple[int, int], ...] = ()) -> np.ndarray[Any, Any]:
    """A lookup table over bytes: ``table[byte]`` is True for ``members`` and ``ranges``."""
    table = np.zeros(256, dtype=bool)
    table[list(members)] = True
    for low, high in ranges:
        table[low : high + 1] = True
    return table


_IS_BLANK = _table(*_BLANKS)
_ENDS_NAME = _table(*_BLANKS, _GT, 0x2F)
_IS_NAME = _table(0x2D, 0x2E, 0x5F, ranges=((0x30, 0x3A), (0x41, 0x5A), (0x61, 0x7A), (0x80, 0xFF)))
_IS_RTS = _table(0x72, 0x74, 0x73)
_IS_QUOTE = _table(_QUOTE, 0x27)
_IS_LETTER = _table(ranges=((0x41, 0x5A), (0x61, 0x7A)))
_IS_DIGIT = _table(ranges=((0x30, 0x39),))


class _Chunk:
    """One chunk as numbers: its bytes, and the positions of its tags."""

    def __init__(self, chunk: bytes, prefix: bytes) -> None:
        self.text = chunk
        self.length = len(chunk)
        self.a = a = np.frombuffer(chunk + _PAD, np.uint8)
        self.lt: IntArray = np.flatnonzero(a[: self.length] == _LT)
        self.prefix = prefix
        self.marks = a[self.lt + 1]
        eq = np.flatnonzero(a[: self.length] == _EQ)
        self.eq: IntArray = eq[eq >= 2]
        self._following: IntArray | None = None
        self._ends_one: BoolArray | None = None

    def named(self, local: bytes) -> BoolArray:
        """Which tags are start tags ``<local`` under the sheet's prefix."""
        name = self.prefix + local
        if len(name) == 1:
            # A one-letter name (c, v, f, t, r): its first byte, and a name ending after it
            # (looked up once for every tag).
            if self._ends_one is None:
                self._ends_one = _ENDS_NAME[self.a[self.lt + 2]]
            one: BoolArray = (self.marks == name[0]) & self._ends_one
            return one
        first: BoolArray = np.asarray(self.marks == name[0], dtype=bool)
        at = self.lt[first] + 1
        match = np.ones(len(at), dtype=bool)
        for i, byte in enumerate(name[1:], start=1):
            match &= self.a[at + i] == byte
        match &= _ENDS_NAME[self.a[at + len(name)]]
        first[first] = match
        return first

    def next_tag(self, index: IntArray) -> IntArray:
        """The position of the tag after each tag of ``index`` (the chunk's end for the last)."""
        if self._following is None:
            self._following = np.append(self.lt, self.length)
        return self._following[index + 1]

    def odd_markup(self, first: bool, where: str) -> str:
        """Why the chunk is not plain XML, as far as markup goes ("" when it is)."""
        if (self.marks == 0x21).any():
            _refuse_dtd(self.text, where)
            return "it holds a comment or a CDATA section"
        questions = np.flatnonzero(self.marks == 0x3F)
        allowed = 1 if first and len(questions) and self.lt[questions[0]] in (0, 3) else 0
        if len(questions) > allowed:
            return "it holds a processing instruction"
        return ""


def _numbers(a: np.ndarray[Any, Any], at: IntArray, letters: bool) -> tuple[IntArray, ...]:
    """Read at each position of ``at`` letters (when ``letters``, up to five) then digits (up
    to twelve): how many of each, their values (a column number, a number), and the byte after
    the digits (-1 when the digits run on)."""
    count = len(at)
    n_letters = np.zeros(count, np.int64)
    column = np.zeros(count, np.int64)
    going = np.ones(count, dtype=bool)
    for j in range(5 if letters else 0):
        byte = a[at + j]
        going &= _IS_LETTER[byte]
        if not going.any():
            break
        column = np.where(going, column * 26 + (byte | 0x20) - 0x60, column)
        n_letters += going
    start = at + n_letters
    n_digits = np.zeros(count, np.int64)
    number = np.zeros(count, np.int64)
    going = np.ones(count, dtype=bool)
    for _ in range(12):
        byte = a[start + n_digits]
        going &= _IS_DIGIT[byte]
        if not going.any():
            break
        number = np.where(going, number * 10 + byte - 0x30, number)
        n_digits += going
    after = np.where(going, -1, a[start + n_digits].astype(np.int64))
    return n_letters, column, n_digits, number, after


def _odd_attribute(a: np.ndarray[Any, Any], length: int, eq: IntArray) -> bool:
    """Whether an ``r``, ``t`` or ``s`` attribute is written with blanks around its ``=`` or in
    single quotes. Each ``=`` not written ``name="`` is looked at: the byte before it and its
    blanks, and the byte after them (text such as ``x = y`` may count too: it only makes the
    part not plain)."""
    if not len(eq):
        return False
    odd = eq[(a[eq + 1] != _QUOTE) | _IS_BLANK[a[eq - 1]]]
    if not len(odd):
        return False
    solid = np.flatnonzero(~_IS_BLANK[a[:length]])
    before = np.searchsorted(solid, odd) - 1
    after = np.searchsorted(solid, odd + 1)
    known = (before >= 0) & (after < len(solid))
    before, after = before[known], after[known]
    if not len(before):
        return False
    name = solid[before]
    named = _IS_RTS[a[name]] & ~_IS_NAME[a[np.maximum(name - 1, 0)]]
    return bool((named & _IS_QUOTE[a[solid[after]]]).any())


def _plain_attributes(a: np.ndarray[Any, Any], eq: IntArray) -> dict[bytes, IntArray]:
    """The positions of the ``=`` of each plain ``r="``, ``t="`` and ``s="`` attribute."""
    eq = eq[(a[eq + 1] == _QUOTE) & _IS_BLANK[a[eq - 2]]]
    name = a[eq - 1]
    return {b"r": eq[name == 0x72], b"t": eq[name == 0x74], b"s": eq[name == 0x73]}


def _foreign_pattern(prefix: bytes, local: bytes) -> re.Pattern[bytes]:
    """Elements named ``local`` (a pattern) under another prefix than ``prefix``."""
    name = rb"(?:" + local + rb")[\s/>]"
    if not prefix:
        return re.compile(rb":" + name)
    return re.compile(rb"<(?!" + re.escape(prefix) + rb")(?:[A-Za-z_][\w.-]*:)?" + name)


def _odd_encoding(head: bytes) -> str:
    if head.startswith(_WIDE_BOMS) or b"\x00" in head[:4]:
        return "it is not UTF-8 text"
    declared = _ENCODING.match(head)
    if declared is not None and declared.group(1).lower() not in (b"utf-8", b"utf8"):
        return f"it declares the encoding {declared.group(1).decode('ascii', 'replace')}"
    return ""


class _SheetLexer:
    """Builds a worksheet's :class:`Shape`, chunk by chunk."""

    def __init__(self, where: str, sizes: IntArray | None, fixes: CellFixes | None = None) -> None:
        self.where = where
        self.sizes = sizes
        self.fixes = fixes
        self.shape = Shape()
        self.prefix: bytes | None = None
        self.foreign: re.Pattern[bytes] | None = None
        self.first = True
        self.open_inline = False  # the chunk before ended with an <is> tag
        self.kinds = CellKinds()

    def feed(self, chunk: bytes) -> None:
        shape = self.shape
        shape.size += len(chunk)
        if self.prefix is None:
            found = _SHEET_DATA.search(chunk)
            if found is not None:
                self.prefix = found.group(1) or b""
                self.foreign = _foreign_pattern(self.prefix, rb"c|row|v|is")
        lexed = _Chunk(chunk, self.prefix or b"")
        shape.markup += len(lexed.lt)
        check_density(shape.size, shape.markup, self.where)
        self._odd(_odd_encoding(chunk) if self.first else "")
        self._odd(lexed.odd_markup(self.first, self.where))
        if self.foreign is not None and self.foreign.search(chunk) is not None:
            self._odd("it names cells under another namespace prefix")
        if _odd_attribute(lexed.a, lexed.length, lexed.eq):
            self._odd("an attribute r, t or s is written in single quotes or with blanks")
        if self.prefix is not None:
            self._cells(lexed)
        if shape.size > PAD_FLOOR and shape.markup > MAX_TAGS_PER_CELL * (
            shape.cells + shape.rows + 1
        ):
            raise padded(
                self.where,
                f"{size_text(shape.size)} of XML hold {shape.markup:,} tags for "
                f"{shape.cells:,} cells (elements that hold no value)",
            )
        self.first = False

    def _odd(self, why: str) -> None:
        if why and not self.shape.odd:
            self.shape.odd = why

    def _cells(self, lexed: _Chunk) -> None:
        shape = self.shape
        if not len(lexed.lt):
            return  # text after the last tag: no cell there
        is_c, is_v = lexed.named(b"c"), lexed.named(b"v")
        shape.cells += int(is_c.sum())
        shape.rows += int(lexed.named(b"row").sum())
        is_f = lexed.named(b"f")
        if not shape.detailed and (is_f.any() or lexed.named(b"mergeCell").any()):
            shape.detailed = True
        for local, tags in ((b"c", is_c), (b"f", is_f)):
            # The survey finds these tags by their literal start ("<c ", "<f "): a tab or a
            # line break after the name is legal XML, and makes the sheet not plain.
            after = lexed.a[lexed.lt[tags] + 1 + len(lexed.prefix) + len(local)]
            if (_IS_BLANK[after] & (after != 0x20)).any():
                self._odd("a tab or line break follows a cell's or a formula's tag name")
        v_at = lexed.lt[is_v] + 2 + len(lexed.prefix)
        if _IS_BLANK[lexed.a[v_at]].any():
            self._odd("a value element has attributes")
        is_is = self._inline(lexed)
        equals = _plain_attributes(lexed.a, lexed.eq)
        places = self._references(lexed, is_c, equals[b"r"])
        is_value = is_v | is_is
        found = self.kinds.feed(lexed.a, lexed.lt, is_c, places, equals[b"t"], is_value)
        self._values(lexed, is_v, found.kinds[is_v[is_value]])
        if self.fixes is not None:
            self._fixes(lexed, is_v[is_value], np.flatnonzero(is_value), found, equals[b"s"])

    def _fixes(
        self,
        lexed: _Chunk,
        is_v: BoolArray,
        values: IntArray,
        found: ChunkCells,
        styles_at: IntArray,
    ) -> None:
        """Hand the chunk's number values and styled cells to :attr:`fixes`; ``is_v`` says
        which of the ``values`` (tag indexes) are ``<v>`` elements."""
        assert self.fixes is not None
        v_index = values[is_v]
        starts = lexed.lt[v_index] + 3 + len(lexed.prefix)
        cells = (found.rows[is_v], found.columns[is_v], found.kinds[is_v])
        self.fixes.feed_numbers(lexed.a, lexed.length, (starts, lexed.next_tag(v_index)), cells)
        self.fixes.feed_styles(lexed.a, lexed.lt, styles_at, found)

    def _inline(self, lexed: _Chunk) -> BoolArray:
        # An inline string's text: each <t> up to the next tag (its own tag counted too, an
        # upper bound). A rich one (<is><r>) is left to openpyxl: calamine loses its spaces.
        is_t = lexed.named(b"t")
        if is_t.any():
            index = np.flatnonzero(is_t)
            self.shape.text += int((lexed.next_tag(index) - lexed.lt[index]).sum())
        is_is = lexed.named(b"is")
        is_r = lexed.named(b"r")
        if len(is_r) and self.open_inline and is_r[0]:
            self.shape.rich_inline = True
        after = np.flatnonzero(is_is) + 1
        if is_r[after[after < len(is_r)]].any():
            self.shape.rich_inline = True
        self.open_inline = bool(len(is_is) and is_is[-1])
        return is_is

    def _references(
        self, lexed: _Chunk, is_c: BoolArray, at: IntArray
    ) -> tuple[IntArray, IntArray, IntArray]:
        """Check the cells' references; returns the tag index, row and column of each one read
        (malformed references and those beyond the sheet are left out)."""
        shape, a = self.shape, lexed.a
        owner = np.searchsorted(lexed.lt, at) - 1
        in_cell = (owner >= 0) & is_c[np.maximum(owner, 0)]
        at, owner = at[in_cell], owner[in_cell]
        referenced = np.zeros(len(is_c), dtype=bool)
        referenced[owner] = True
        if (is_c & ~referenced).any():
            shape.unreferenced = True  # a cell without r: its place is known by counting
        if not len(at):
            return owner, owner, owner
        n_letters, column, n_digits, row, after = _numbers(a, at + 2, letters=True)
        malformed = (n_letters == 0) | (n_digits == 0) | (after != _QUOTE)
        if malformed.any():
            self._odd("a cell reference is not letters then digits")
        far = ~malformed & (
            (n_letters > 3) | (column > MAX_COLUMN) | (n_digits > 7) | (row > MAX_ROW)
        )
        if far.any() and not shape.beyond:
            i = int(np.flatnonzero(far)[0])
            end = at[i] + 2 + n_letters[i] + n_digits[i]
            shape.beyond = bytes(a[at[i] + 2 : end]).decode("ascii")
        near = ~malformed & ~far
        if near.any():
            shape.max_row = max(shape.max_row, int(row[near].max()))
            shape.max_column = max(shape.max_column, int(column[near].max()))
            seen = np.zeros(MAX_COLUMN + 1, dtype=bool)
            seen[column[near]] = True
            shape.columns.update(np.flatnonzero(seen).tolist())
        return owner[near], row[near], column[near]

    def _values(self, lexed: _Chunk, is_v: BoolArray, kinds: IntArray) -> None:
        """Count the text of the formulas' texts and of the shared strings the values (``<v>``
        elements, of cells of ``kinds``: :mod:`.xml_cells` has carried a cell's type over to a
        value in the chunk after its tag) repeat."""
        shape, a = self.shape, lexed.a
        formula_text, shared = (kinds & FORMULA_TEXT) > 0, (kinds & SHARED) > 0
        v_index = np.flatnonzero(is_v)
        v_at = lexed.lt[v_index]
        text_at = v_at + 3 + len(self.prefix or b"")
        lengths = lexed.next_tag(v_index) - text_at
        shape.text += int(np.maximum(lengths[formula_text], 0).sum())
        if self.sizes is None or not shared.any():
            return
        _, _, n_digits, number, after = _numbers(a, text_at[shared], letters=False)
        # calamine reads an index that is no number as 0, and fails on one past the table
        # without naming the cell: openpyxl's reader names it (see :mod:`.openpyxl_rows`).
        whole = (n_digits > 0) & (n_digits < 10) & (after == _LT)
        if not whole.all() or (number >= len(self.sizes)).any():
            self._odd("a shared-string index is no number of the workbook's strings")
        index = np.where(whole, number, 0)
        used = self.sizes[index[index < len(self.sizes)]]
        shape.shared_refs += len(used)
        shape.shared_text += int(used.sum())
        shape.text += int(used.sum())
        if len(used):
            shape.longest_shared = max(shape.longest_shared, int(used.max()))


def shape_of(
    zipped: zipfile.ZipFile,
    member: str,
    where: str,
    sizes: IntArray | None = None,
    check: Callable[[Shape], None] | None = None,
    fixes: Collection[int] | None = None,
) -> Shape:
    """The :class:`Shape` of worksheet part ``member`` (``sizes``: the lengths of the shared
    strings, for the text the cells repeat). Raises :class:`SheetError` for padded XML or a
    DTD. ``check`` sees the shape so far after each chunk while the part is plain and more than
    a chunk of it is left (its counts only grow): it may stop a read already over budget
    without reading the rest. With ``fixes`` (the zero-padding styles, maybe none), the shape
    also holds the cells calamine reads other than openpyxl (:mod:`.xml_cells`)."""
    lexer = _SheetLexer(where, sizes, None if fixes is None else CellFixes(fixes))
    # The size the zip's directory gives: zipfile reads no more than that (a part longer than
    # it says fails its checksum), so what is left to read is known as the pass goes.
    size = zipped.getinfo(member).file_size
    with zipped.open(member) as stream, read_ahead(stream, _CHUNK) as ahead:
        for chunk in tag_chunks(ahead, where, count=False):
            for piece in _pieces(chunk):
                lexer.feed(piece)
            if check is not None and lexer.shape.plain and size - lexer.shape.size > _CHUNK:
                check(lexer.shape)
    kinds = lexer.kinds
    shape = lexer.shape
    shape.top_row, shape.top_kinds, shape.kinds = kinds.top_row, kinds.top, kinds.below
    if lexer.fixes is not None:
        shape.numbers, shape.styled = lexer.fixes.numbers, lexer.fixes.styled
    if any(k & ERROR for k in (*shape.top_kinds.values(), *shape.kinds.values())):
        shape.detailed = True
    return shape


def _pieces(chunk: bytes) -> Iterator[bytes]:
    """``chunk`` in pieces of about :data:`_LEX_CHUNK` bytes, each cut just before a ``<``
    (the chunk begins with one, or is the text before the first tag)."""
    start = 0
    while len(chunk) - start > _LEX_CHUNK:
        cut = chunk.rfind(b"<", start + 1, start + _LEX_CHUNK)
        if cut < 0:
            cut = chunk.find(b"<", start + _LEX_CHUNK)
            if cut < 0:
                break
        yield chunk[start:cut]
        start = cut
    yield chunk[start:]


# --------------------------------------------------------------------------- shared strings


def shared_string_sizes(zipped: zipfile.ZipFile, member: str, where: str) -> IntArray:
    """The length of each shared string of part ``member``, in order: the bytes of its text
    (an upper bound of its characters) when the part is plain, its characters as an XML parser
    reads them when it is not. Raises :class:`SheetError` for padded XML or a DTD."""
    sizes: list[IntArray] = []
    prefix: bytes | None = None
    foreign: re.Pattern[bytes] | None = None
    odd = ""
    first = True
    current = -1  # the string the chunk before ended in
    with zipped.open(member) as stream:
        for chunk in tag_chunks(stream, where):
            if prefix is None:
                found = _SST.search(chunk)
                if found is not None:
                    prefix = found.group(1) or b""
                    foreign = _foreign_pattern(prefix, rb"si")
            lexed = _Chunk(chunk, prefix or b"")
            odd = odd or (_odd_encoding(chunk) if first else "")
            odd = odd or lexed.odd_markup(first, where)
            if foreign is not None and foreign.search(chunk) is not None:
                odd = odd or "it names strings under another namespace prefix"
            first = False
            if not odd:
                counted, current = _string_text(lexed, current)
                sizes.append(counted)
    if odd:
        return _parsed_sizes(zipped, member)
    return _join_sizes(sizes)


def _string_text(lexed: _Chunk, current: int) -> tuple[IntArray, int]:
    """The text bytes of each string begun in this chunk (the first entry: of string
    ``current``, begun before), and the string the chunk ends in.

    Text runs from the end of a tag (its first ``>``: an upper bound when an attribute value
    holds one) to the next ``<``.
    """
    a, lt = lexed.a, lexed.lt
    starts = np.flatnonzero(lexed.named(b"si"))
    gt = np.flatnonzero(a[: lexed.length] == _GT)
    tag_end = gt[np.minimum(np.searchsorted(gt, lt), len(gt) - 1)] if len(gt) else lt
    following = np.append(lt[1:], lexed.length)
    runs = np.maximum(following - tag_end - 1, 0)
    # The string each run belongs to: the last one begun at or before its tag (0: the one
    # carried over from the chunk before).
    owner = np.searchsorted(starts, np.arange(len(lt)), side="right")
    counted = np.bincount(owner, weights=runs, minlength=len(starts) + 1).astype(np.int64)
    return counted, current + len(starts)


def _join_sizes(parts: list[IntArray]) -> IntArray:
    """Each chunk's sizes (its first entry belongs to the string begun before it) as one list."""
    sizes: list[int] = []
    for part in parts:
        if sizes:
            sizes[-1] += int(part[0])
        sizes.extend(part[1:].tolist())
    return np.array(sizes, dtype=np.int64)


def _parsed_sizes(zipped: zipfile.ZipFile, member: str) -> IntArray:
    """:func:`shared_string_sizes` by an XML parser (the part holds no DTD: it was refused)."""
    main = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
    sizes: list[int] = []
    with zipped.open(member) as stream:
        for _, element in ElementTree.iterparse(stream, events=("end",)):
            if element.tag == f"{main}si":
                sizes.append(sum(len(t.text or "") for t in element.iter(f"{main}t")))
                element.clear()
    return np.array(sizes, dtype=np.int64)
