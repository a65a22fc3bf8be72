"""The stale check: before anything is written, is each target still as it was planned?

Every update and delete target must still hash to the ``before_hash`` it was planned against,
and no create's key may exist yet. An operation that was started but never confirmed (read from
the journal) counts as done when the fresh pull already shows its effect.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from estatebot.api.models import LIST_RECORD_FIELDS
from estatebot.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.remote.normalize import normalize_records
from estatebot.listings.sync.apply.journal_records import OpRecord
from estatebot.listings.sync.apply.send_tasks import Task
from estatebot.listings.sync.values.compare import canonical_value, key_values
from estatebot.listings.sync.values.hashing import frame_hashes

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.remote.pull import PullResult


#: Listing fields that RealEstateList returns, so a pulled listing can show an update's effect.
#: (``AreaUnit`` and ``Location`` are write-only: List never returns them.)
ROUND_TRIP_FIELDS: tuple[str, ...] = tuple(
    c
    for c in schema.COLUMNS
    if c != "ID" and (c in LIST_RECORD_FIELDS or c.upper() in LIST_RECORD_FIELDS)
)
SHOWN_STALE = 20


# --------------------------------------------------------------------------- the remote state


class Remote:
    """The fresh pull: listings by key, their hashes, their values as dicts, and (when kept)
    the List records exactly as the service sent them."""

    def __init__(
        self, frame: pd.DataFrame, records: Sequence[dict[str, Any]] | None = None
    ) -> None:
        self.frame = frame.reset_index(drop=True)
        self.records = list(records) if records is not None else None
        self._hashes: dict[int, str] = {}
        self._index: dict[str, dict[str, list[int]]] = {}

    @classmethod
    def of(cls, pulled: PullResult) -> Remote:
        """The listings of a pull, with their List records as the service sent them."""
        return cls(pulled.frame, pulled.records)

    def hash_at(self, position: int) -> str:
        """:func:`~estatebot.listings.sync.values.hashing.listing_hash` of the listing at
        ``position``."""
        if position not in self._hashes:
            self.hash_rows([position])
        return self._hashes[position]

    def hash_rows(self, positions: Iterable[int]) -> None:
        """Hash the listings at ``positions`` in one go, ahead of :meth:`hash_at`.

        Only the listings a plan touches are hashed: a few thousand of a pull of 50,000.
        """
        wanted = sorted({position for position in positions if position not in self._hashes})
        if wanted:
            self._hashes.update(zip(wanted, frame_hashes(self.frame.take(wanted)), strict=True))

    def hash_found(self, tasks: Iterable[Task]) -> None:
        """Hash, in one go, the listing of each task found exactly once."""
        found = (self.positions(task.key_type, task.key) for task in tasks)
        self.hash_rows(positions[0] for positions in found if len(positions) == 1)

    def positions(self, key_type: str, key: str) -> list[int]:
        index = self._index.get(key_type)
        if index is None:
            index = {}
            column = schema.KEY_COLUMNS[key_type]
            for position, value in enumerate(key_values(self.frame[column])):
                if value is not None:
                    index.setdefault(value, []).append(position)
            self._index[key_type] = index
        return index.get(key.strip(), [])

    def row(self, position: int) -> dict[str, Any]:
        return {column: self.frame[column].iat[position] for column in schema.COLUMNS}

    def raw(self, position: int) -> dict[str, Any] | None:
        """The List record of the listing at ``position``, as sent (None when not kept)."""
        return self.records[position] if self.records is not None else None

    def id_at(self, position: int) -> int | None:
        value: Any = self.frame["ID"].iat[position]
        return None if value is pd.NA or value is None else int(value)


def shows_body(body: Mapping[str, Any] | None, row: Mapping[str, Any]) -> bool:
    """Whether a pulled listing holds the values of an update body (fields List returns)."""
    if body is None:
        return False
    return all(
        canonical_value(c, body.get(c)) == canonical_value(c, row.get(c)) for c in ROUND_TRIP_FIELDS
    )


def look_up_created(client: Client, serial: str, task: Task) -> tuple[int | None, bool] | None:
    """The listing an unanswered create may have made: its ID and whether it holds the body.

    None when the service has no listing under the create's key. Asked by MLS number (every
    create body has one), so one small page answers.
    """
    mls = (task.body or {}).get("MLSNumber")
    page = client.listings.list_page(serial, mls_number=str(mls), page_size=100)
    remote = Remote(normalize_records(page.records).frame)
    found = remote.positions(task.key_type, task.key)
    if not found:
        return None
    return remote.id_at(found[0]), shows_body(task.body, remote.row(found[0]))


def shows_done(task: Task, remote: Remote) -> bool:
    """Whether the service shows ``task``'s effect: the created key there, the update's values
    on its listing, the deleted key gone."""
    found = remote.positions(task.key_type, task.key)
    if task.action == "create":
        return bool(found)
    if task.action == "delete":
        return not found
    return len(found) == 1 and shows_body(task.body, remote.row(found[0]))


def _uncertain(record: OpRecord | None) -> bool:
    """An operation that may have reached the service without us hearing that it did."""
    return record is not None and record.maybe_applied


@dataclass
class Checked:
    """The stale check's verdict for the operations still to do."""

    send: list[Task] = field(default_factory=list)
    applied: list[tuple[Task, int | None]] = field(default_factory=list)  # found done remotely
    stale: list[tuple[Task, str]] = field(default_factory=list)
    backup_positions: list[int] = field(default_factory=list)


def check_targets(
    tasks: Iterable[Task], remote: Remote, records: Mapping[str, OpRecord]
) -> Checked:
    out = Checked()
    tasks = list(tasks)
    remote.hash_found(task for task in tasks if task.action != "create")
    for task in tasks:
        found = remote.positions(task.key_type, task.key)
        uncertain = _uncertain(records.get(task.op))
        if task.action == "create":
            if not found:
                out.send.append(task)
            elif uncertain:
                out.applied.append((task, remote.id_at(found[0])))
            else:
                out.stale.append((task, "already exists on the service"))
                out.send.append(task)  # only sent when forced
            continue
        if not found:
            if task.action == "delete" and uncertain:
                out.applied.append((task, task.id))
            else:
                out.stale.append((task, "no longer on the service"))
                out.send.append(task)  # only sent when forced
            continue
        if len(found) > 1:
            out.stale.append((task, f"now on the service {len(found)} times"))
            out.send.append(task)
            out.backup_positions.extend(found)
            continue
        position = found[0]
        if remote.hash_at(position) == task.before_hash:
            out.send.append(task)
            out.backup_positions.append(position)
        elif uncertain and task.action == "update" and shows_body(task.body, remote.row(position)):
            out.applied.append((task, remote.id_at(position)))
        else:
            out.stale.append((task, "changed since the plan was made"))
            out.send.append(task)
            out.backup_positions.append(position)
    return out


def stale_error(stale: Sequence[tuple[Task, str]]) -> PlanError:
    shown = [f"{task.action} {task.key} ({why})" for task, why in stale[:SHOWN_STALE]]
    more = f"; and {len(stale) - SHOWN_STALE} more" if len(stale) > SHOWN_STALE else ""
    first = stale[0][0]
    return PlanError(
        f"the plan is stale: {len(stale)} of its listings changed on the service since it was "
        f"made, nothing was written: {'; '.join(shown)}{more}. Make a new plan from a fresh "
        "pull, or pass force=True to apply it anyway",
        row=first.row,
        value=first.key,
    )
