"""What a file reader found besides the cells' values: :class:`Note`.

A note about the sheet (values under a blank header, a stray cell right of the header) is a
warning. A note about a data cell whose value cannot be known (an undecodable byte, a formula
with no saved value, a cell hidden by a merge, a formula error) is an error that rejects its row:
:func:`~estatebot.listings.sheet.read.read_sheet` reports it under the cell's header and field.
"""

from __future__ import annotations

from dataclasses import dataclass

from estatebot.listings.sheet.fields.cell_types import Severity


@dataclass(frozen=True)
class Note:
    """One finding: its message, the row (as numbered in the file) and the column it is about.

    ``position`` is the index of the cell's header in the table's headers, for a note about a
    data cell; ``column`` labels a column that has no header (``"column XFD"``).
    """

    message: str
    row: int | None = None
    column: str | None = None
    position: int | None = None
    value: str | None = None
    severity: Severity = "warning"
