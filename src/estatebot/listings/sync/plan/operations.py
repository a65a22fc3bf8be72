"""The items of a sync plan: one operation, one field change, a listing left alone, a row
that cannot be synced.

Frozen and JSON-safe: a plan is an artifact that is saved, read back and applied elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from estatebot.api.models import ListingInput, ListingUpdate
from estatebot.listings.sync.values.tidy import NONE

if TYPE_CHECKING:
    pass


Action = Literal["create", "update", "delete", "skipped_create"]


# --------------------------------------------------------------------------- plan items


@dataclass(frozen=True)
class Change:
    """One field of an update: its remote value and the value the update sends (JSON-safe)."""

    field: str
    before: Any
    after: Any


@dataclass(frozen=True)
class PlannedOp:
    """One operation the apply step will perform, with everything it needs.

    ``body`` is the complete request body in wire form, without ``SerialNumber`` (added at
    apply time by :meth:`request`); None for deletes. ``before`` is the remote listing's clean
    values (JSON-safe) and ``before_hash`` its
    :func:`~estatebot.listings.sync.values.hashing.listing_hash`, for updates and deletes.
    """

    action: Action
    key: str
    key_type: str
    row: int | None
    id: int | None
    body: dict[str, Any] | None
    before: dict[str, Any] | None
    before_hash: str | None
    changes: tuple[Change, ...] = ()
    reason: str = ""
    #: An update's fields the service never shows (``AreaUnit``, ``Location``) that the sheet
    #: does not give: their value on the service is unknown, so apply sends the value last sent
    #: (see :mod:`~estatebot.listings.remote.sent_record`) where one is recorded, else the
    #: body's.
    unknown: tuple[str, ...] = ()

    def request(self, serial: str) -> ListingInput | ListingUpdate:
        """The validated request model of a create or update, for the chatbot ``serial``."""
        if self.body is None:
            raise ValueError(f"a {self.action} has no request body")
        data = {**self.body, "SerialNumber": serial}
        if self.action == "update":
            return ListingUpdate.model_validate(data)
        return ListingInput.model_validate(data)


class ListingRef(NamedTuple):
    """A listing the plan leaves alone (unchanged or kept): its key, sheet row and ID.

    A named tuple: a plan of 100,000 listings holds that many of them, made at C speed.
    """

    key: str | None
    row: int | None
    id: int | None


@dataclass(frozen=True)
class InvalidRow:
    """A sheet row that cannot be synced, with every reason."""

    row: int | None
    key: str | None
    id: int | None
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class HeldBack:
    """Something the plan does not write, and why.

    Mostly a sheet value the reader warned about: the listing keeps its own value for ``field``
    (a new listing is created without it), and ``message`` says what the reader found in cell
    ``column`` of ``row``; ``accept_flagged=True`` plans such values like any other. With
    ``whole``, the listing's whole update is held back: it could not be sent without guessing or
    erasing the listing's ``field`` (``value`` is what the service holds, when known; see
    :mod:`~estatebot.listings.sync.plan.update_base`).
    """

    row: int | None
    key: str | None
    id: int | None
    field: str
    column: str | None
    value: str | None
    message: str
    whole: bool = False


_OP_FIELDS: tuple[str, ...] = tuple(PlannedOp.__dataclass_fields__)


def planned_ops(rows: Iterable[tuple[Any, ...]]) -> list[PlannedOp]:
    """PlannedOps from tuples of their fields in order (``action`` to ``unknown``).

    The same objects ``PlannedOp(*row)`` makes, made at C speed: a frozen dataclass's own
    ``__init__`` sets each field through ``object.__setattr__``, which a plan of tens of
    thousands of updates pays field by field.
    """
    new = object.__new__
    out: list[PlannedOp] = []
    for values in rows:
        op = new(PlannedOp)
        op.__dict__.update(zip(_OP_FIELDS, values, strict=True))
        out.append(op)
    return out


def change(name: str, before: Any, after: Any) -> Change:
    """``Change(name, before, after)``, made the way :func:`planned_ops` makes operations."""
    made = object.__new__(Change)
    made.__dict__.update(field=name, before=before, after=after)
    return made


@dataclass(frozen=True)
class RefColumns:
    """Listings left alone, held as columns and made into :class:`ListingRef`\\ s on first read.

    A plan of 100,000 listings leaves most of them unchanged; they are kept as the planner's
    columns (the sheet's keys in Arrow, its row numbers, the listings' IDs, and the positions
    of these listings in each) until someone reads them (see ``PlanArtifact.unchanged``).
    """

    keys: Any  # an Arrow array of the keys as written
    key_at: np.ndarray[Any, np.dtype[np.intp]]
    rows: Sequence[int | None]
    row_at: np.ndarray[Any, np.dtype[np.intp]]
    ids: pd.Series[Any]  # the listings' ID column
    id_at: np.ndarray[Any, np.dtype[np.intp]]

    def __len__(self) -> int:
        return len(self.key_at)

    def refs(self) -> list[ListingRef]:
        """The listings as :class:`ListingRef`\\ s, in order."""
        if not len(self.key_at):
            return []
        keys = self.keys.take(self.key_at).to_numpy(zero_copy_only=False).tolist()
        ids = self.ids.take(self.id_at).to_numpy(dtype=object, na_value=NONE).tolist()
        rows = _picked(self.rows, self.row_at)
        triples = zip(keys, rows, ids, strict=True)
        return list(map(tuple.__new__, repeat(ListingRef), triples))


def _picked(values: Sequence[Any], at: np.ndarray[Any, np.dtype[np.intp]]) -> list[Any]:
    if len(at) == 1:
        return [values[int(at[0])]]
    return list(itemgetter(*at.tolist())(values))
