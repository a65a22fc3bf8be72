"""Pitfall injection: a RESO-names export with the problems real exports have, and their list.

:func:`write_pitfalls` writes the first listings of a market as a RESO xlsx (see
:mod:`.styles`) and spoils some cells the way spreadsheets and export tools do: a disclaimer
line, MLS numbers that became numbers (scientific notation, too many digits), a ZIP that lost
its leading zero, stray spaces, numbers written as text, ``#N/A`` and blank cells, a duplicated
key and a status nobody maps. It returns one :class:`Pitfall` per spoiled cell, with the row and
column where a reader should report it (or, for the harmless ones, the value the reader should
read anyway), so a test can check the reader against every one.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from typing import Any, Literal

from .styles import Formatted, Row, reso_table, write_xlsx

__all__ = ["DISCLAIMER", "Pitfall", "inject_pitfalls", "write_pitfalls"]

#: The disclaimer line put in the first data row.
DISCLAIMER = "Information deemed reliable but not guaranteed. Listing data as of June 2, 2025."

#: The first row of listings (row 1 is the header, row 2 the disclaimer).
FIRST_LISTING_ROW = 3


@dataclass(frozen=True)
class Pitfall:
    """One spoiled cell: where (sheet row as a user sees it, header), what, and the outcome.

    ``severity`` is what the reader must report at that row and column ("error" rejects the
    row, "warning" keeps it), or None when the reader must read through the problem silently;
    then ``field`` and ``expected`` give the listing field and the value it must hold.
    """

    row: int
    column: str
    kind: str
    value: Any
    severity: Literal["error", "warning"] | None
    field: str | None = None
    expected: Any = None


def inject_pitfalls(
    headers: Sequence[str],
    rows: Sequence[Row],
    records: Sequence[Mapping[str, Any]],
    rng: random.Random,
) -> tuple[list[Row], list[Pitfall]]:
    """Spoil cells of a RESO table (rows aligned with ``records``); returns the new rows, the
    disclaimer first, and the pitfalls."""
    out = [list(row) for row in rows]
    col = {header: i for i, header in enumerate(headers)}
    found: list[Pitfall] = []
    free = list(range(len(out)))

    def take(condition: Any = None) -> int:
        pool = [i for i in free if condition is None or condition(records[i])]
        if not pool:
            raise ValueError("the market is too small for every pitfall")
        position = rng.choice(pool)
        free.remove(position)
        return position

    def spoil(
        position: int,
        header: str,
        value: Any,
        kind: str,
        severity: Literal["error", "warning"] | None,
        field: str | None = None,
        expected: Any = None,
    ) -> None:
        out[position][col[header]] = value
        row = FIRST_LISTING_ROW + position
        found.append(Pitfall(row, header, kind, value, severity, field, expected))

    # Excel shows a long numeric ID in scientific notation; saved as text it stays that way.
    spoil(take(), "ListingId", "1.23457E+11", "mls_scientific", "error")
    # An 18-digit ID kept as a number: Excel keeps 15 significant digits, the rest is lost.
    spoil(take(), "ListingId", 1.2345678901234568e17, "mls_long_number", "error")
    boston = take(lambda r: str(r["ZIP"]).startswith("0"))
    spoil(boston, "PostalCode", int(records[boston]["ZIP"]), "zip_lost_zero", "warning")
    position = take()
    mls = records[position]["MLSNumber"]
    spoil(position, "ListingId", f"{mls} ", "trailing_space", None, "MLSNumber", mls)
    position = take()
    city = records[position]["City"]
    spoil(position, "City", f"{city}\u00a0", "non_breaking_space", None, "City", city)
    position = take(lambda r: r["Bedrooms"] > 0)
    beds = records[position]["Bedrooms"]
    spoil(position, "BedroomsTotal", str(beds), "number_as_text", None, "Bedrooms", beds)
    position = take(lambda r: r["BathroomsHalf"] == 0)
    full = records[position]["BathroomsFull"]
    spoil(position, "BathroomsFull", f"{full}.0", "decimal_as_text", None, "Bathrooms",
          float(full))  # fmt: skip
    position = take(lambda r: r["AssociationFee"] is None)
    spoil(position, "AssociationFee", "#N/A", "na_optional", None, "HOAMonth", None)
    # A blank required cell says nothing: the listing keeps its own value (only a create needs
    # the field, and a plan says so), so the reader reads it through as empty.
    spoil(take(), "YearBuilt", "#N/A", "na_required", None, "YearBuilt", None)
    spoil(take(), "DaysOnMarket", None, "blank_required", None, "DaysOnMarket", None)
    first, second = take(), take()
    key = records[first]["MLSNumber"]
    spoil(first, "ListingId", key, "duplicate_key", "error")
    spoil(second, "ListingId", key, "duplicate_key", "error")
    spoil(take(), "StandardStatus", "Backup Offer", "unknown_status", "error")

    disclaimer: Row = [DISCLAIMER] + [None] * (len(headers) - 1)
    found.append(Pitfall(2, headers[0], "disclaimer", DISCLAIMER, "warning"))
    found.sort(key=lambda p: p.row)
    return [disclaimer, *out], found


def write_pitfalls(
    records: Sequence[Mapping[str, Any]],
    path: str | PathLike[str],
    *,
    seed: int = 42,
    n: int = 40,
) -> list[Pitfall]:
    """Write the first ``n`` published records as a RESO xlsx with pitfalls injected; returns
    the pitfalls, by row. One record has a ZIP with a leading zero (the last is swapped for one
    if need be), so that zero can be lost."""
    chosen = [r for r in records if r["Status"] is not None][:n]
    if not any(str(r["ZIP"]).startswith("0") for r in chosen):
        chosen[-1] = next(r for r in records if str(r["ZIP"]).startswith("0"))
    headers, rows = reso_table(chosen)
    # Every ZIP is text here, so the one that lost its zero is the only number in the column.
    zip_col = headers.index("PostalCode")
    for row in rows:
        if isinstance(row[zip_col], Formatted):
            row[zip_col] = str(row[zip_col].value).zfill(5)
    spoiled, found = inject_pitfalls(headers, rows, chosen, random.Random(f"pitfalls:{seed}"))
    write_xlsx(path, headers, spoiled, title="Property")
    return found
