"""The one rule of every Update: the listing as the service holds it, plus what the sheet states.

Update replaces a whole listing, so its body must carry every field. The **base** is the listing
as the service holds it:

* the pulled value, typed;
* where the pull could not read a value (``"1001,6"`` for a number, an image given as a JSON
  object), the raw List text when the Update takes it as it is; else the update is **held back**,
  naming the field and the raw value, and never sent with the value blank;
* for the fields List never returns (``AreaUnit``, ``Location``): the value last sent (which the
  pull fills in from the record of values sent), else the unit List's ``Area`` text shows (also
  filled in by the pull), else the sheet's default; an ``AreaUnit`` still unknown holds the update
  back, naming the default that gives it. A ``Location`` nobody here knows (no value was ever
  sent to the listing from here, so another tool may have set one) holds it back too, unless
  the plan is told to blank it (``blank_unknown_location``).

The **overlay** is exactly what the sheet states: non-blank, unflagged, mapped cells, and the clear
token; a blank cell says nothing. Planning lays the overlay (see
:mod:`~estatebot.listings.sync.plan.classify`); this module completes the base of the bodies it
built and says which updates cannot be sent. Restore and undo build their bodies on the same base.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from estatebot.listings.sync.values.payloads import Columns, update_accepts

__all__ = ["AREA_UNIT_HINT", "LOCATION_MESSAGE", "Withheld", "complete_bases"]

#: Why an update of a listing whose Location nobody knows is held back, and what to do.
LOCATION_MESSAGE = (
    "the service never shows Location and no value was sent to this listing from here: an "
    "update would blank a Location another tool set; give a Location column, or pass "
    "blank_unknown_location=True to send it empty"
)

#: What to do about a listing whose AreaUnit nobody knows.
AREA_UNIT_HINT = "give it: defaults={'AreaUnit': 'Square Feet'} (or 'Square Meters'), or a column"


@dataclass(frozen=True)
class Withheld:
    """An update that cannot be sent without guessing or erasing a value of ``field``."""

    field: str
    value: str | None
    message: str


def complete_bases(
    data: Columns,
    ids: Sequence[int | None],
    stated: Mapping[str, Sequence[bool] | np.ndarray[Any, np.dtype[np.bool_]]],
    unreadable: Mapping[int, Mapping[str, str]],
    *,
    location_unknown: frozenset[int] | None = None,
    blank_location: bool = False,
) -> dict[int, list[Withheld]]:
    """Complete the bases of ``len(ids)`` update bodies in ``data`` (columns, changed in place).

    ``stated[field][i]`` is True where the sheet states (or clears) ``field`` of update ``i``;
    ``unreadable`` holds, by listing ID, the raw text of each value the pull could not read.
    ``location_unknown`` names the listings whose Location nobody here knows (None: not said):
    an update of one whose sheet row does not give a Location is held back, unless
    ``blank_location`` says to send it empty.
    Returns the updates to hold back, by position, with each field that holds them and why.
    """
    withheld: dict[int, list[Withheld]] = {}
    for i, ident in enumerate(ids):
        raw_values = unreadable.get(ident, {}) if ident is not None else {}
        held: list[Withheld] = []
        for name, raw in raw_values.items():
            if name not in data or _states(stated, name, i):
                continue  # the sheet's value replaces the one the pull could not read
            if update_accepts(name, raw):
                data[name][i] = raw
            else:
                held.append(
                    Withheld(
                        name,
                        raw,
                        f"the service holds {name} {raw!r}, which the pull could not read; an "
                        "update would erase it (give the value in the sheet, or correct it on "
                        "the service)",
                    )
                )
        if data["AreaUnit"][i] in (None, "") and not _states(stated, "AreaUnit", i):
            held.append(
                Withheld(
                    "AreaUnit",
                    None,
                    "the service never shows AreaUnit, no value was sent to this listing before "
                    f"and its Area shows no unit: an update would reset it; {AREA_UNIT_HINT}",
                )
            )
        if (
            not blank_location
            and location_unknown is not None
            and ident in location_unknown
            and data["Location"][i] in (None, "")
            and not _states(stated, "Location", i)
        ):
            held.append(Withheld("Location", None, LOCATION_MESSAGE))
        if held:
            withheld[i] = held
    return withheld


def _states(
    stated: Mapping[str, Sequence[bool] | np.ndarray[Any, np.dtype[np.bool_]]], name: str, i: int
) -> bool:
    mask = stated.get(name)
    return bool(mask[i]) if mask is not None else False
