"""The memory a read may take (``read_sheet(max_memory=...)``), what a read costs, and the
:class:`SheetError` that stops a read over its budget before the memory is taken.

A read's memory is estimated from what the file's structure says before a reader allocates
(:mod:`.xlsx_guard` gathers it): the rows and the columns of the grid, the text the cells hold,
the shared strings they repeat, and the dense grid calamine builds from A1 to the last cell. The
costs per unit below were measured on whole reads (``read_sheet``, peak resident memory over
the resident memory before the read), with a margin of a fifth or more:

* about 1.3 kB per data row, whatever its width: the listing fields derived per row;
* about 21 bytes per cell of a column that has a header, and up to 130 more for a cell that
  holds a value (typed, checked, assembled);
* 5.5 to 6.6 bytes per character of text: the reader's copy, the grid's, the typed column's
  and Arrow's (a shared string is one string in the file, but each cell using it gets its own
  copy, and calamine makes one more);
* 44 bytes per cell of calamine's dense grid, empty cells included (32 in the compiled reader,
  8 for the Python list slot, the rest for the lists themselves);
* each shared string held once by the reader (openpyxl keeps a Python string and an index).

The estimate is an upper bound: what the structure cannot tell exactly (how far right the cells
reach, how much of the XML is text) is counted at its largest.

Memory freed during a read goes back to the system (:func:`give_back`): calamine's parse of a
sheet is freed into the C library's heap, which neither Python's objects (their own arenas) nor
Arrow (its own pool) draw from, so the process would keep it while the cells are typed. On the
GNU C library ``malloc_trim`` hands it back; elsewhere only Arrow's pool does (the read is the
same, its peak higher).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import pyarrow as pa

from estatebot.errors import SheetError

#: The budget of a read unless ``max_memory`` says otherwise.
DEFAULT_MAX_MEMORY = 2 * 2**30

#: Bytes per data row, per cell of a named column, per cell holding a value, per character of
#: text (see the module's docstring).
ROW_COST = 2_000
EMPTY_CELL_COST = 32
CELL_COST = 160
TEXT_COST = 8
#: Bytes per cell of calamine's dense grid (A1 to the last cell).
GRID_CELL_COST = 48
#: Bytes per shared string held by the reader, besides its text.
STRING_COST = 120

_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kKmMgGtT]?)(i?)[bB]?\s*$")
_UNITS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}


@dataclass(frozen=True)
class Budget:
    """The most memory a read may take, in bytes."""

    limit: int = DEFAULT_MAX_MEMORY

    def check(self, cost: Cost, where: str) -> None:
        """:class:`SheetError` when ``cost`` is over the budget, naming ``where`` (the file and
        worksheet), the largest part of the cost in plain words, and the budget."""
        total = cost.total()
        if total <= self.limit:
            return
        about = "more than" if cost.partial else "about"
        raise SheetError(
            f"{where}: {cost.cause()}: reading it would take {about} {size_text(total)}, over "
            f"the memory budget of {size_text(self.limit)} (pass max_memory= to allow more, "
            "e.g. max_memory='8 GiB', or split the sheet into smaller files)"
        )


def budget_of(max_memory: int | str) -> Budget:
    """The budget ``max_memory`` asks for: a number of bytes, or a size such as ``"4 GiB"``
    or ``"500 MB"``; :class:`SheetError` for anything else."""
    if isinstance(max_memory, bool):
        raise _bad_size(max_memory)
    if isinstance(max_memory, int):
        if max_memory <= 0:
            raise _bad_size(max_memory)
        return Budget(max_memory)
    if isinstance(max_memory, str):
        match = _SIZE.match(max_memory)
        if match is not None:
            number, unit, binary = match.groups()
            base = 1024 if binary or not unit else 1000
            size = int(float(number) * base ** _UNITS[unit.lower()])
            if size > 0:
                return Budget(size)
    raise _bad_size(max_memory)


def _bad_size(value: object) -> SheetError:
    return SheetError(
        "max_memory must be a number of bytes above 0 (8 * 2**30) or a size such as '8 GiB' "
        "or '500 MB'",
        value=value,
    )


def size_text(size: float) -> str:
    """``size`` bytes for a person: ``"1.8 GB"``, ``"2 GiB"`` for an exact power of two."""
    for power, unit in ((3, "GiB"), (2, "MiB")):
        if size >= 2 ** (10 * power) and size % 2 ** (10 * power) == 0:
            return f"{size / 2 ** (10 * power):g} {unit}"
    for power, unit in ((4, "TB"), (3, "GB"), (2, "MB"), (1, "kB")):
        if size >= 1000**power:
            return f"{size / 1000**power:.1f} {unit}"
    return f"{int(size)} bytes"


@dataclass
class Cost:
    """What a read would hold, part by part (see the module's docstring for the costs).

    ``rows`` data rows of ``columns`` named columns, ``cells`` of them holding a value (at
    most); ``text`` characters of text in the cells,
    of which ``shared_text`` come from ``shared_refs`` cells repeating shared strings (the
    longest ``longest_shared`` characters long); ``strings`` shared strings of
    ``strings_text`` characters held by the reader; calamine's dense grid of ``grid_rows`` ×
    ``grid_columns`` cells. A ``partial`` cost counts only the part of the sheet read so far
    (the rest was not read: the part already passed the budget).
    """

    rows: int = 0
    columns: int = 0
    cells: int = 0
    text: int = 0
    shared_refs: int = 0
    shared_text: int = 0
    longest_shared: int = 0
    strings: int = 0
    strings_text: int = 0
    grid_rows: int = 0
    grid_columns: int = 0
    partial: bool = False

    def parts(self) -> dict[str, int]:
        """The estimate, part by part, in bytes."""
        return {
            "rows": self.rows * (ROW_COST + self.columns * EMPTY_CELL_COST)
            + min(self.cells, self.rows * self.columns) * CELL_COST,
            "text": (self.text - self.shared_text) * TEXT_COST,
            "shared": self.shared_text * TEXT_COST,
            "strings": self.strings * STRING_COST + self.strings_text * 2,
            "grid": self.grid_rows * self.grid_columns * GRID_CELL_COST,
        }

    def total(self) -> int:
        """The estimate of the whole read, in bytes."""
        return sum(self.parts().values())

    def cause(self) -> str:
        """The largest part of the estimate, in plain words."""
        parts = self.parts()
        largest = max(parts, key=lambda name: parts[name])
        least = "at least " if self.partial else ""
        if largest == "shared":
            return (
                f"{least}{self.shared_refs:,} cells repeat shared strings holding "
                f"{size_text(self.shared_text)} of text in all (the longest string is "
                f"{self.longest_shared:,} characters), and every cell gets its own copy"
            )
        if largest == "text":
            return f"its cells hold {least}{size_text(self.text)} of text"
        if largest == "strings":
            return (
                f"its shared-strings part holds {self.strings:,} strings, "
                f"{size_text(self.strings_text)} of text"
            )
        if largest == "grid":
            return (
                f"its cells reach row {self.grid_rows:,} and column {self.grid_columns:,}, "
                f"and the reader holds every cell from A1 to there: "
                f"{self.grid_rows * self.grid_columns:,} cells, most of them empty"
            )
        return f"it holds {least}{self.rows:,} rows of {self.columns:,} columns"


# --------------------------------------------------------------------------- giving back


def give_back() -> None:
    """Return the free memory of Arrow's pool, and of the C heap where the C library can, to
    the system (see the module's docstring)."""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim  # glibc only: musl has none
    except (OSError, AttributeError):
        return None
    return trim
