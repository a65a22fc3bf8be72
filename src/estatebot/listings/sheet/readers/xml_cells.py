"""What the lexer of :mod:`.xml_shape` notes of the cells holding a value, as it passes over
them: the kinds of value each column holds (:class:`CellKinds`), and the cells whose value
calamine reads other than openpyxl (:class:`CellFixes`).

**Kinds.** Numbers, text, booleans, formula errors or anything else, in the first row holding a
value (the header, as a rule) and in the rows below it. The columnar reader
(:mod:`.calamine_columns`) reads a column into one typed array only when the column below its
header holds one kind of value; a column mixing numbers and text is read cell by cell
(:mod:`.calamine`). Knowing that before any reader starts means no sheet is parsed twice for it.
A cell's kind is its ``t`` attribute: none or ``n`` a number (or a date, by its style), ``s``,
``str`` and ``inlineStr`` text, ``b`` a boolean, ``e`` a formula error; ``d`` (an ISO date) and
anything else is :data:`OTHER`. Only cells holding a value element (``<v>`` or ``<is>``) count:
a styled empty cell holds nothing. An empty value element counts as a value of its kind, which
can only make a column look mixed (read cell by cell), never the reverse.

**Fixes.** Numbers written with a point or an exponent (``3.0``, ``1.5E+3``) or with more digits
than a float keeps (their text, by cell), and cells under one of the zero-padding styles asked
about (their style, by cell): what the cell-by-cell read finds with a second pass over the bytes
(:func:`.xml_scan.survey`). Only number cells (no ``t`` attribute, or ``t="n"``) have their
value's text looked at, and only a cell's own ``s`` attribute gives its style.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Collection
from typing import Any, NamedTuple

import numpy as np

IntArray = np.ndarray[Any, np.dtype[np.int64]]
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]

#: The kinds of value, as bits of a column's mask.
NUMBER, TEXT, BOOL, ERROR, OTHER = 1, 2, 4, 8, 16
#: Beside a text cell's kind, for the lexer's own use: a shared string (``t="s"``) or the text
#: a formula gave (``t="str"``). Never in a column's mask.
SHARED, FORMULA_TEXT = 32, 64
_KIND_BITS = 31
_MAX_COLUMN = 16_384
_QUOTE = 0x22


def _follows(a: np.ndarray[Any, Any], at: IntArray, text: bytes) -> BoolArray:
    """Whether ``text`` is written at each position of ``at``: the bytes there are taken at
    once, through a window over ``a``, and compared eight at a time."""
    if not len(at):
        return np.zeros(0, dtype=bool)
    width = -(-len(text) // 8) * 8
    window = np.lib.stride_tricks.sliding_window_view(a, width)
    taken = np.ascontiguousarray(window[at])
    pattern = np.frombuffer(text.ljust(width, b"\0"), np.uint8)
    mask = np.frombuffer(b"\xff" * len(text) + b"\0" * (width - len(text)), np.uint8)
    words = (taken & mask).view(np.uint64).reshape(len(at), -1)
    found: BoolArray = (words == pattern.view(np.uint64)).all(axis=1)
    return found


class ChunkCells(NamedTuple):
    """A chunk's cells (their tags' indexes, rows and columns: 0 when the reference was not
    read) and its value elements' (rows, columns and kinds, with :data:`SHARED` and
    :data:`FORMULA_TEXT`), as :class:`CellKinds` found them."""

    cells: IntArray
    cell_rows: IntArray
    cell_columns: IntArray
    rows: IntArray
    columns: IntArray
    kinds: IntArray


class CellKinds:
    """The kinds of value of each column, gathered chunk by chunk (see the module's docstring).

    ``top_row`` is the first row (by number, whatever the order the rows are written in)
    holding a value, 0 while none is seen; ``top`` and ``below`` map a 1-based column to the
    bits of the kinds it holds in that row and in the rows after it.
    """

    def __init__(self) -> None:
        self.top_row = 0
        self._top = np.zeros(_MAX_COLUMN + 1, np.uint8)
        self._below = np.zeros(_MAX_COLUMN + 1, np.uint8)
        # The row, column and kind of the chunk's last cell, for a value of it in the next one.
        self._carried: tuple[int, int, int] | None = None
        self._pending: tuple[int, int, int] | None = None

    @property
    def top(self) -> dict[int, int]:
        """The kinds in the top row, by column."""
        return _as_dict(self._top)

    @property
    def below(self) -> dict[int, int]:
        """The kinds in the rows below the top row, by column."""
        return _as_dict(self._below)

    def feed(
        self,
        a: np.ndarray[Any, Any],
        tags: IntArray,
        is_cell: BoolArray,
        places: tuple[IntArray, IntArray, IntArray],
        types: IntArray,
        is_value: BoolArray,
    ) -> ChunkCells:
        """Take one chunk: its bytes ``a`` and the positions of its ``tags``, which of them are
        cells and which value elements (``is_cell``, ``is_value``), each cell's reference as
        ``places`` (the index of the cell's tag, its row and its column, for the references
        read), and the positions of the ``=`` of the plain ``t`` attributes (``types``).
        Returns the places and kinds found, for :mod:`.xml_cells`."""
        cells = np.flatnonzero(is_cell)
        cell_rows, cell_columns, cell_kinds = self._cell_kinds(a, tags, cells, places, types)
        # Each value's cell: the last cell tag before it (-1: one of the chunk before).
        owner = np.searchsorted(cells, np.flatnonzero(is_value)) - 1
        before = owner < 0
        if len(cells):
            safe = np.maximum(owner, 0)
            rows, columns, kinds = cell_rows[safe], cell_columns[safe], cell_kinds[safe]
        else:
            rows = columns = kinds = np.zeros(len(owner), np.int64)
        if before.any():
            # Values of the cell the chunk before ended in (its tag was there).
            carried = self._carried or (0, 0, 0)
            rows = np.where(before, carried[0], rows)
            columns = np.where(before, carried[1], columns)
            kinds = np.where(before, carried[2], kinds)
        if len(cells):
            self._carried = self._pending
        known = rows > 0
        self._add(rows[known], columns[known], kinds[known])
        return ChunkCells(cells, cell_rows, cell_columns, rows, columns, kinds)

    def _cell_kinds(
        self,
        a: np.ndarray[Any, Any],
        tags: IntArray,
        cells: IntArray,
        places: tuple[IntArray, IntArray, IntArray],
        types: IntArray,
    ) -> tuple[IntArray, IntArray, IntArray]:
        """Each cell's row and column (0 when its reference is not read) and kind."""
        owner, row, column = places
        if len(owner) == len(cells) and np.array_equal(owner, cells):
            rows, columns = row, column  # every cell's reference read: the usual case
        else:
            rows = np.zeros(len(cells), np.int64)
            columns = np.zeros(len(cells), np.int64)
            at = np.searchsorted(cells, owner)
            rows[at], columns[at] = row, column
        kinds = np.full(len(cells), NUMBER, np.int64)
        if len(types) and len(cells):
            starts = tags[cells]
            cell = np.searchsorted(starts, types) - 1
            # The attribute lies in the cell's tag: before the tag that follows it (a formula's
            # t="shared" is its own).
            following = cells + 1
            ends = np.where(
                following < len(tags), tags[np.minimum(following, len(tags) - 1)], len(a)
            )
            own = cell >= 0
            own[own] &= types[own] < ends[cell[own]]
            kinds[cell[own]] = _kinds_written(a, types[own])
        self._pending = (int(rows[-1]), int(columns[-1]), int(kinds[-1])) if len(cells) else None
        return rows, columns, kinds

    def _add(self, rows: IntArray, columns: IntArray, kinds: IntArray) -> None:
        if not len(rows):
            return
        low = int(rows.min())
        if not self.top_row or low < self.top_row:
            # A row numbered before the top one (rows written out of order): the old top row
            # is one of the rows below.
            self._below |= self._top
            self._top[:] = 0
            self.top_row = low
        at_top = rows == self.top_row
        bits = (kinds & _KIND_BITS).astype(np.uint8)
        np.bitwise_or.at(self._top, columns[at_top], bits[at_top])
        np.bitwise_or.at(self._below, columns[~at_top], bits[~at_top])


def _kinds_written(a: np.ndarray[Any, Any], types: IntArray) -> IntArray:
    """The kind each ``t`` attribute (the position of its ``=``) gives its cell."""
    first, second = a[types + 2], a[types + 3]
    kinds = np.full(len(types), OTHER, np.int64)
    closed = second == _QUOTE
    for letter, meaning in (
        (b"s", TEXT | SHARED),
        (b"n", NUMBER),
        (b"b", BOOL),
        (b"e", ERROR),
    ):
        kinds[closed & (first == letter[0])] = meaning
    for spelling, meaning in ((b'str"', TEXT | FORMULA_TEXT), (b'inlineStr"', TEXT)):
        maybe = np.flatnonzero(~closed & (first == spelling[0]))
        if len(maybe):
            kinds[maybe[_follows(a, types[maybe] + 2, spelling)]] = meaning
    return kinds


def _as_dict(mask: np.ndarray[Any, Any]) -> dict[int, int]:
    columns = np.flatnonzero(mask)
    return dict(zip(columns.tolist(), mask[columns].tolist(), strict=True))


# --------------------------------------------------------------------------- fixes

# A number's text that openpyxl reads other than calamine does (see .xml_scan's survey).
_NOTATION = re.compile(rb"[-+]?\d+\.0*|[-+]?\d{16,}|[^<]*[eE][^<]*")
_LONG = 16
_DOT, _ZERO, _LETTER = ord("."), ord("0"), ord("A")
_DIGITS = 10  # no style index has more digits


class CellFixes:
    """What the lexer finds of the cells to fix, chunk by chunk: ``numbers`` maps a cell
    (1-based row and column) to its number's text, ``styled`` holds the rows, columns and
    styles of the cells under one of ``styles``."""

    def __init__(self, styles: Collection[int] = ()) -> None:
        self.styles = np.array(sorted(styles), dtype=np.int64)
        self.numbers: dict[tuple[int, int], bytes] = {}
        self.styled: tuple[array[int], array[int], array[int]] = (
            array("q"),
            array("q"),
            array("q"),
        )

    def feed_numbers(
        self,
        a: np.ndarray[Any, Any],
        length: int,
        spans: tuple[IntArray, IntArray],
        cells: tuple[IntArray, IntArray, IntArray],
    ) -> None:
        """Note the numbers written in a notation to fix: ``spans`` are the start and end of the
        text of each value element (``<v>``) of the chunk ``a`` (``length`` bytes), ``cells``
        their cells' rows, columns and kinds (as :class:`ChunkCells` has them)."""
        rows, columns, kinds = cells
        starts, ends = spans
        number = (kinds == NUMBER) & (rows > 0) & (ends > starts)
        if not number.any():
            return
        starts, ends = starts[number], ends[number]
        # A number's text is digits, maybe a sign, a point, an exponent. Its greatest byte says
        # whether it holds a letter (an exponent); the least after its first whether it holds
        # a point (or a sign in an exponent). Each is one pass over the texts, by reduceat.
        edges = np.empty(2 * len(starts), np.int64)
        edges[0::2], edges[1::2] = starts, ends
        greatest = np.maximum.reduceat(a, edges)[0::2]
        edges[0::2] = starts + 1  # an empty range reads the "<" after it: no point
        least = np.minimum.reduceat(a, edges)[0::2]
        last = a[ends - 1]
        # Only a text ending in a zero or a point can be a whole number written with a point;
        # a letter or a long text is looked at whatever it ends in.
        whole = (least < _ZERO) & ((last == _ZERO) | (last == _DOT))
        candidates = np.flatnonzero(whole | (greatest >= _LETTER) | (ends - starts >= _LONG))
        for row, column, start, end in zip(
            rows[number][candidates].tolist(),
            columns[number][candidates].tolist(),
            starts[candidates].tolist(),
            ends[candidates].tolist(),
            strict=True,
        ):
            text = a[start:end].tobytes()
            if _NOTATION.fullmatch(text):
                self.numbers[(row, column)] = text

    def feed_styles(
        self, a: np.ndarray[Any, Any], tags: IntArray, styles_at: IntArray, found: ChunkCells
    ) -> None:
        """Note the cells under a style asked about: ``styles_at`` are the positions of the ``=``
        of the plain ``s`` attributes of chunk ``a``, whose ``tags`` begin where given."""
        if not len(self.styles) or not len(styles_at) or not len(found.cells):
            return
        starts = tags[found.cells]
        cell = np.searchsorted(starts, styles_at) - 1
        following = found.cells + 1
        ends = np.where(following < len(tags), tags[np.minimum(following, len(tags) - 1)], len(a))
        own = cell >= 0
        own[own] &= styles_at[own] < ends[cell[own]]
        cell, at = cell[own], styles_at[own] + 2
        style = np.zeros(len(at), np.int64)
        count = np.zeros(len(at), np.int64)
        going = np.ones(len(at), dtype=bool)
        for i in range(_DIGITS):
            digit = a[at + i].astype(np.int64) - _ZERO
            going &= (digit >= 0) & (digit <= 9)
            if not going.any():
                break
            style = np.where(going, style * 10 + digit, style)
            count += going
        # A style written as digits then the closing quote, and one asked about.
        closed = (count > 0) & (a[at + count] == _QUOTE)
        wanted = closed & np.isin(style, self.styles)
        rows, columns = found.cell_rows[cell[wanted]], found.cell_columns[cell[wanted]]
        known = rows > 0
        self.styled[0].extend(rows[known].tolist())
        self.styled[1].extend(columns[known].tolist())
        self.styled[2].extend(style[wanted][known].tolist())
