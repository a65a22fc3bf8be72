"""The stale check: before anything is written, is each target still as it was planned?

:func:`check_against_pull` judges every operation of a plan against the listings pulled just
before the first write, into one :class:`Checked` the later phases read. What the journal calls
done is believed where the pull shows it, and done again where it does not. Every other update
and delete target must still hash to the ``before_hash`` it was planned against, and no create's
key may exist yet. An operation that was started but never confirmed (read from the journal)
counts as done when the fresh pull already shows its effect.
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
from estatebot.listings.remote.pull import pull_result
from estatebot.listings.sync.apply.journal_records import OpRecord
from estatebot.listings.sync.apply.send_tasks import Task
from estatebot.listings.sync.values.compare import canonical_value, key_values
from estatebot.listings.sync.values.hashing import frame_hashes

if TYPE_CHECKING:
    from pathlib import Path

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
    the List records exactly as the service sent them and the page each came from."""

    def __init__(
        self,
        frame: pd.DataFrame,
        records: Sequence[dict[str, Any]] | None = None,
        *,
        pages: Sequence[int] = (),
        page_size: int = 0,
    ) -> None:
        self.frame = frame.reset_index(drop=True)
        self.records = list(records) if records is not None else None
        self.pages = tuple(pages) if len(pages) == len(self.frame) else ()
        self.page_size = page_size if self.pages else 0
        self._hashes: dict[int, str] = {}
        self._index: dict[str, dict[str, list[int]]] = {}

    @classmethod
    def of(cls, pulled: PullResult) -> Remote:
        """The listings of a pull, with their List records as the service sent them and the
        page each came from."""
        return cls(pulled.frame, pulled.records, pages=pulled.pages, page_size=pulled.page_size)

    @classmethod
    def pulled(
        cls,
        client: Client,
        serial: str,
        *,
        concurrency: int,
        sent_values: str | Path | bool | None = None,
    ) -> Remote:
        """The chatbot's listings pulled now, ``concurrency`` pages at a time (the apply's own
        limit, so its pulls ask no more of the service than its writes)."""
        return cls.of(
            pull_result(
                client, serial, concurrency=concurrency, progress=False, sent_values=sent_values
            )
        )

    @classmethod
    def read(cls, records: Iterable[dict[str, Any]]) -> Remote:
        """The listings of some List records (a few pages of them), read as a pull reads them."""
        return cls(normalize_records(list(records)).frame)

    def page_at(self, position: int) -> int | None:
        """The page the listing at ``position`` came from (None when the pull cannot tell)."""
        return self.pages[position] if self.pages else None

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
    remote = Remote.read(page.records)
    found = remote.positions(task.key_type, task.key)
    if not found:
        return None
    return remote.id_at(found[0]), shows_body(task.body, remote.row(found[0]))


def _shows_done(task: Task, found: Sequence[int], remote: Remote) -> bool:
    """Whether the service shows ``task``'s effect: the created key there, the update's values
    on its listing, the deleted key gone (``found``: where its key is in the pull)."""
    if task.action == "create":
        return bool(found)
    if task.action == "delete":
        return not found
    return len(found) == 1 and shows_body(task.body, remote.row(found[0]))


@dataclass
class Checked:
    """The plan's operations checked against the listings pulled before the first write.

    One result for every later phase: what to send, what an earlier run did, what is stale, and
    where each operation's listing is in the pull (``found``) with its hash (``hashes``), so
    the guards, the backup and the re-checks look nothing up again.
    """

    send: list[Task] = field(default_factory=list)
    #: Left unconfirmed by an interrupted run, and shown done by the service: with its ID.
    applied: list[tuple[Task, int | None]] = field(default_factory=list)
    stale: list[tuple[Task, str]] = field(default_factory=list)
    backup_positions: list[int] = field(default_factory=list)
    #: Journaled done by an earlier run and shown by the service: not sent again.
    skipped: list[tuple[Task, OpRecord]] = field(default_factory=list)
    #: Journaled done, but the service does not show it: checked and done again ("redone").
    redo: set[str] = field(default_factory=set)
    #: By operation: the positions of its listing in the pull.
    found: dict[str, list[int]] = field(default_factory=dict)
    #: By operation: the hash of its listing, where the pull holds it exactly once.
    hashes: dict[str, str] = field(default_factory=dict)
    #: By operation: the page its listing was on, where the pull holds it exactly once and
    #: can tell (pages of ``page_size`` listings): a re-check can read just those pages.
    pages: dict[str, int] = field(default_factory=dict)
    page_size: int = 0
    #: The refusal of a stale plan (None: nothing is stale).
    stale_error: PlanError | None = None


def check_against_pull(
    tasks: Sequence[Task], remote: Remote, records: Mapping[str, OpRecord]
) -> Checked:
    """Each operation of the plan judged against the pull, before anything is written.

    What the journal calls done is believed only where the service shows it; the rest must find
    its target as it was planned: an update or delete target still hashing to its
    ``before_hash``, no create's key yet there. An operation left unconfirmed by an interrupted
    run counts as done when the pull already shows its effect.
    """
    found = {task.op: remote.positions(task.key_type, task.key) for task in tasks}
    once = sorted(
        {
            where[0]
            for task in tasks
            if task.action != "create" and len(where := found[task.op]) == 1
        }
    )
    by_position = (
        dict(zip(once, frame_hashes(remote.frame.take(once)), strict=True)) if once else {}
    )
    out = Checked(
        found=found,
        hashes={
            op: by_position[where[0]]
            for op, where in found.items()
            if len(where) == 1 and where[0] in by_position
        },
        pages={
            op: page
            for op, where in found.items()
            if len(where) == 1 and (page := remote.page_at(where[0])) is not None
        },
        page_size=remote.page_size,
    )
    for task in tasks:
        record = records.get(task.op)
        if record is not None and record.done:
            if _shows_done(task, found[task.op], remote):
                out.skipped.append((task, record))
                continue
            out.redo.add(task.op)
            record = None  # judged afresh, as never sent: its record says nothing of this state
        _judge(task, found[task.op], out, remote, uncertain=_uncertain(record))
    if out.stale:
        out.stale_error = stale_error(out.stale)
    return out


def _judge(
    task: Task, found: Sequence[int], out: Checked, remote: Remote, *, uncertain: bool
) -> None:
    """Put ``task`` where the check finds it belongs: sent, found applied, or stale (sent only
    when forced); the listings it will change among those backed up."""
    if task.action == "create":
        if not found:
            out.send.append(task)
        elif uncertain:
            out.applied.append((task, remote.id_at(found[0])))
        else:
            out.stale.append((task, "already exists on the service"))
            out.send.append(task)  # only sent when forced
        return
    if not found:
        if task.action == "delete" and uncertain:
            out.applied.append((task, task.id))
        else:
            out.stale.append((task, "no longer on the service"))
            out.send.append(task)  # only sent when forced
        return
    if len(found) > 1:
        out.stale.append((task, f"now on the service {len(found)} times"))
        out.send.append(task)
        out.backup_positions.extend(found)
        return
    position = found[0]
    if out.hashes[task.op] == task.before_hash:
        out.send.append(task)
        out.backup_positions.append(position)
    elif uncertain and task.action == "update" and shows_body(task.body, remote.row(position)):
        out.applied.append((task, remote.id_at(position)))
    else:
        out.stale.append((task, "changed since the plan was made"))
        out.send.append(task)
        out.backup_positions.append(position)


def _uncertain(record: OpRecord | None) -> bool:
    """An operation that may have reached the service without us hearing that it did."""
    return record is not None and record.maybe_applied


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
