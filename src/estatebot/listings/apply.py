"""SyncPlan → requests: exactly the plan, safely, resumably; and restore from a backup.

:func:`apply_plan` performs a plan's operations and nothing else:

1. **Stale check.** The remote listings are pulled once, before any write. Every update and
   delete target must still hash (:func:`~estatebot.listings.compare.listing_hash`) to the
   ``before_hash`` it was planned against, and no create's key may exist yet. Any mismatch
   raises :class:`~estatebot.api.errors.PlanError` naming the listings, and nothing is written
   (``force=True`` goes on anyway).
2. **Backup.** The current state of every listing the run will update or delete is written to a
   backup file (:mod:`.backup`) before the first write: where asked, else next to the journal or
   in the current folder under a timestamped name.
3. **Writes.** Creates, then updates (one request each, ``concurrency`` threads), then deletes
   (``delete_chunk`` keys per request). A failing operation is reported and the rest go on.
4. **Journal.** With ``journal=``, every operation's start and outcome are appended to a
   JSON-lines file and synced to disk (:mod:`.journal`). Running the same plan again with the same
   journal skips what is done and retries what failed or was never confirmed: an operation that
   was started but not confirmed counts as done when the service already shows its effect
   (the created key exists, the update's values are there, the deleted key is gone), so nothing
   is done twice and nothing is lost.

:func:`restore` puts a backup back: listings that exist (by MLSNumber, else Url) are updated to
the backed-up values, missing ones are created.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from estatebot._progress import progress_bar
from estatebot.api.errors import APIError, PlanError
from estatebot.api.models import LIST_RECORD_FIELDS, KeyType
from estatebot.listings import schema
from estatebot.listings.backup import (
    check_backup_path,
    default_backup_path,
    read_backup,
    write_backup,
)
from estatebot.listings.compare import canonical_value, clean_value, frame_hashes, key_values
from estatebot.listings.journal import Event, Journal, OpRecord, op_id
from estatebot.listings.pull import pull_listings
from estatebot.listings.report import (
    DONE,
    FAILED,
    SKIPPED,
    UNCHANGED,
    ApplyReport,
    OpOutcome,
    outcomes_frame,
)

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.plan import SyncPlan

__all__ = ["apply_plan", "restore"]

logger = logging.getLogger("estatebot.listings.apply")

#: Listing fields that RealEstateList returns, so a pulled listing can show an update's effect.
#: (``AreaUnit`` and ``Location`` are write-only: List never returns them.)
ROUND_TRIP_FIELDS: tuple[str, ...] = tuple(
    c
    for c in schema.COLUMNS
    if c != "ID" and (c in LIST_RECORD_FIELDS or c.upper() in LIST_RECORD_FIELDS)
)
#: What a restore sends for a required field the service never returns (see ROUND_TRIP_FIELDS).
RESTORE_DEFAULTS: dict[str, str] = {"AreaUnit": "Square Feet"}
_SHOWN_STALE = 20


# --------------------------------------------------------------------------- operations


@dataclass(frozen=True)
class _Task:
    """One operation to perform: what the plan says, in the form the runner needs."""

    action: str
    key: str
    key_type: str
    row: int | None
    id: int | None
    body: dict[str, Any] | None
    before_hash: str | None
    note: str = ""

    @property
    def op(self) -> str:
        return op_id(self.action, self.key)


def _tasks_from_plan(plan: SyncPlan) -> list[_Task]:
    tasks = [
        _Task(
            action=str(op.action),
            key=str(op.key),
            key_type=str(op.key_type),
            row=op.row,
            id=op.id,
            body=dict(op.body) if op.body is not None else None,
            before_hash=op.before_hash,
        )
        for op in plan.operations()
    ]
    seen: set[str] = set()
    for task in tasks:
        if task.action not in ("create", "update", "delete"):
            raise PlanError(f"unknown action {task.action!r} in the plan", value=task.key)
        if task.op in seen:
            raise PlanError(
                f"the plan has two {task.action} operations for {task.key_type} {task.key}",
                row=task.row,
                value=task.key,
            )
        seen.add(task.op)
    return tasks


def _plan_hash(tasks: Sequence[_Task]) -> str:
    """A hash of the plan's operations: tells apart two plans made from the same listings."""
    items = [[t.op, t.key_type, t.before_hash, t.body] for t in tasks]
    text = json.dumps(items, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- the remote state


class _Remote:
    """The fresh pull: listings by key, their hashes, and their values as dicts."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame.reset_index(drop=True)
        self._hashes: list[str] | None = None
        self._index: dict[str, dict[str, list[int]]] = {}

    @property
    def hashes(self) -> list[str]:
        if self._hashes is None:
            self._hashes = frame_hashes(self.frame) if len(self.frame) else []
        return self._hashes

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

    def id_at(self, position: int) -> int | None:
        value: Any = self.frame["ID"].iat[position]
        return None if value is pd.NA or value is None else int(value)


def _shows_body(body: Mapping[str, Any] | None, row: Mapping[str, Any]) -> bool:
    """Whether a pulled listing holds the values of an update body (fields List returns)."""
    if body is None:
        return False
    return all(
        canonical_value(c, body.get(c)) == canonical_value(c, row.get(c)) for c in ROUND_TRIP_FIELDS
    )


def _uncertain(record: OpRecord | None) -> bool:
    """An operation that may have reached the service without us hearing that it did."""
    if record is None:
        return False
    if record.unconfirmed:
        return True
    if record.last != "failed":
        return False
    # A rejection (4xx) is definite; a 5xx, a throttle or a transport error may hide a write.
    return record.code is None or record.code >= 500 or record.code in (408, 429)


@dataclass
class _Checked:
    """The stale check's verdict for the operations still to do."""

    send: list[_Task] = field(default_factory=list)
    applied: list[tuple[_Task, int | None]] = field(default_factory=list)  # found done remotely
    stale: list[tuple[_Task, str]] = field(default_factory=list)
    backup_positions: list[int] = field(default_factory=list)


def _check(tasks: Iterable[_Task], remote: _Remote, records: Mapping[str, OpRecord]) -> _Checked:
    out = _Checked()
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
        if remote.hashes[position] == task.before_hash:
            out.send.append(task)
            out.backup_positions.append(position)
        elif uncertain and task.action == "update" and _shows_body(task.body, remote.row(position)):
            out.applied.append((task, remote.id_at(position)))
        else:
            out.stale.append((task, "changed since the plan was made"))
            out.send.append(task)
            out.backup_positions.append(position)
    return out


def _stale_error(stale: Sequence[tuple[_Task, str]]) -> PlanError:
    shown = [f"{task.action} {task.key} ({why})" for task, why in stale[:_SHOWN_STALE]]
    more = f"; and {len(stale) - _SHOWN_STALE} more" if len(stale) > _SHOWN_STALE else ""
    first = stale[0][0]
    return PlanError(
        f"the plan is stale: {len(stale)} of its listings changed on the service since it was "
        f"made, nothing was written: {'; '.join(shown)}{more}. Make a new plan from a fresh "
        "pull, or pass force=True to apply it anyway",
        row=first.row,
        value=first.key,
    )


# --------------------------------------------------------------------------- running


class _Runner:
    """Sends tasks with bounded concurrency, journals them, and collects outcomes."""

    def __init__(
        self,
        client: Client,
        serial: str,
        *,
        concurrency: int,
        delete_chunk: int,
        journal: Journal | None,
        records: Mapping[str, OpRecord],
        tick: Callable[[int], object],
    ) -> None:
        self.client = client
        self.serial = serial
        self.concurrency = concurrency
        self.delete_chunk = delete_chunk
        self.journal = journal
        self.records = records
        self.tick = tick
        self.outcomes: dict[str, OpOutcome] = {}

    def _attempt_number(self, task: _Task) -> int:
        record = self.records.get(task.op)
        return (record.attempts if record is not None else 0) + 1

    def _started(self, tasks: Sequence[_Task], attempts: int) -> None:
        if self.journal is not None:
            self.journal.record_many([t.op for t in tasks], "started", attempts=attempts)

    def _finish(
        self,
        tasks: Sequence[_Task],
        outcome: str,
        *,
        code: int | None,
        message: str,
        attempts: int,
        elapsed_ms: float | None,
        id: int | None = None,
    ) -> list[OpOutcome]:
        if self.journal is not None:
            event: Event = "done" if outcome == DONE else "failed"
            self.journal.record_many(
                [t.op for t in tasks],
                event,
                code=code,
                message=message,
                attempts=attempts,
                elapsed_ms=elapsed_ms,
                id=id,
            )
        return [
            OpOutcome(
                action=t.action,
                key=t.key,
                row=t.row,
                id=id if id is not None else t.id,
                outcome=outcome,
                code=code,
                message=_join(t.note, message),
                attempts=attempts,
                elapsed_ms=elapsed_ms,
            )
            for t in tasks
        ]

    def _send_one(self, task: _Task) -> list[OpOutcome]:
        attempts = self._attempt_number(task)
        self._started([task], attempts)
        started = time.monotonic()
        body = {**(task.body or {}), "SerialNumber": self.serial}
        try:
            if task.action == "create":
                new_id = self.client.listings.create(body)
                elapsed = (time.monotonic() - started) * 1000
                return self._finish(
                    [task],
                    DONE,
                    code=200,
                    message="",
                    attempts=attempts,
                    elapsed_ms=elapsed,
                    id=new_id,
                )
            count = self.client.listings.update(body, key=task.key, key_type=task.key_type)
        except Exception as error:  # one failing listing never stops the others
            elapsed = (time.monotonic() - started) * 1000
            code, message = _describe(error)
            return self._finish(
                [task], FAILED, code=code, message=message, attempts=attempts, elapsed_ms=elapsed
            )
        elapsed = (time.monotonic() - started) * 1000
        if count == 0:
            message = f"no listing with {task.key_type} {task.key} on the service: nothing updated"
            return self._finish(
                [task], FAILED, code=200, message=message, attempts=attempts, elapsed_ms=elapsed
            )
        return self._finish(
            [task], DONE, code=200, message="", attempts=attempts, elapsed_ms=elapsed
        )

    def _send_deletes(self, chunk: Sequence[_Task]) -> list[OpOutcome]:
        attempts = max(self._attempt_number(t) for t in chunk)
        self._started(chunk, attempts)
        started = time.monotonic()
        try:
            count = self.client.listings.delete(
                self.serial, [t.key for t in chunk], key_type=chunk[0].key_type
            )
        except Exception as error:  # one failing request never stops the others
            elapsed = (time.monotonic() - started) * 1000
            code, message = _describe(error)
            return self._finish(
                chunk, FAILED, code=code, message=message, attempts=attempts, elapsed_ms=elapsed
            )
        elapsed = (time.monotonic() - started) * 1000
        message = ""
        if count < len(chunk):
            # The service ignores unknown keys, so it cannot say which ones were not there.
            message = (
                f"the service reported {count} of the {len(chunk)} listings of this request "
                "deleted (keys it does not know are ignored)"
            )
        return self._finish(
            chunk, DONE, code=200, message=message, attempts=attempts, elapsed_ms=elapsed
        )

    def run(self, tasks: Sequence[_Task]) -> None:
        """Creates, then updates, then deletes; each phase waits for the one before."""
        creates = [t for t in tasks if t.action == "create"]
        updates = [t for t in tasks if t.action == "update"]
        deletes = [t for t in tasks if t.action == "delete"]
        chunks = list(_delete_chunks(deletes, self.delete_chunk))
        with ThreadPoolExecutor(
            max_workers=self.concurrency, thread_name_prefix="estatebot-apply"
        ) as pool:
            try:
                for phase in (
                    [partial(self._send_one, t) for t in creates],
                    [partial(self._send_one, t) for t in updates],
                    [partial(self._send_deletes, chunk) for chunk in chunks],
                ):
                    self._run_phase(pool, phase)
            except BaseException:
                # Interrupted (Ctrl-C): send nothing more. Requests in flight finish; the
                # journal shows them as started, and a resumed run sorts them out.
                pool.shutdown(wait=False, cancel_futures=True)
                raise

    def _run_phase(
        self, pool: ThreadPoolExecutor, jobs: Sequence[Callable[[], list[OpOutcome]]]
    ) -> None:
        # Submit at most a few jobs ahead of the workers, so an interruption leaves little
        # queued and memory stays flat for large plans.
        pending: set[Future[list[OpOutcome]]] = set()
        queue = iter(jobs)
        limit = self.concurrency * 2
        while True:
            for job in queue:
                pending.add(pool.submit(job))
                if len(pending) >= limit:
                    break
            if not pending:
                return
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                results = future.result()
                for outcome in results:
                    self.outcomes[op_id(outcome.action, outcome.key or "")] = outcome
                self.tick(len(results))


def _delete_chunks(tasks: Sequence[_Task], size: int) -> Iterator[list[_Task]]:
    by_type: dict[str, list[_Task]] = {}
    for task in tasks:
        by_type.setdefault(task.key_type, []).append(task)
    for group in by_type.values():
        for start in range(0, len(group), size):
            yield group[start : start + size]


def _describe(error: Exception) -> tuple[int | None, str]:
    """The server's Code and Message of a failure, or our words for a transport error."""
    if isinstance(error, APIError):
        code = error.code if error.code is not None else error.status_code
        return code, error.message or str(error)
    return None, str(error) or type(error).__name__


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


# --------------------------------------------------------------------------- apply_plan


def _check_options(concurrency: int, delete_chunk: int) -> None:
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if delete_chunk < 1:
        raise ValueError(f"delete_chunk must be at least 1, got {delete_chunk}")


def _write_backup(
    remote: _Remote,
    positions: Sequence[int],
    path: Path,
    *,
    serial: str,
    merge: bool,
) -> Path:
    frame = remote.frame.iloc[sorted(set(positions))].reset_index(drop=True)
    if merge and path.exists():
        # Resuming: the earlier run's images are the true before-state of what it changed, so
        # they are kept and only listings missing from the file are added.
        earlier = read_backup(path)
        known = set(key_values(earlier["MLSNumber"])) | set(key_values(earlier["Url"]))
        known.discard(None)
        fresh = [
            i
            for i, (mls, url) in enumerate(
                zip(key_values(frame["MLSNumber"]), key_values(frame["Url"]), strict=True)
            )
            if not ({mls, url} - {None}) & known
        ]
        frame = pd.concat([earlier, frame.iloc[fresh]], ignore_index=True)
    return write_backup(frame, path, serial=serial)


def _take_backup(
    remote: _Remote,
    positions: Sequence[int],
    backup: Path | None,
    book: Journal | None,
    serial: str,
) -> Path:
    """Save the before-image; where asked, else a new file next to the journal or here."""
    target = backup or default_backup_path(book.path.parent if book is not None else None)
    # Resuming: the file may already hold the first run's images, which are kept.
    resumed = book is not None and bool(book.records())
    path = _write_backup(remote, positions, target, serial=serial, merge=resumed)
    logger.info("before-image of %d listings written to %s", len(set(positions)), path)
    return path


def apply_plan(
    plan: SyncPlan,
    client: Client,
    serial: str,
    *,
    concurrency: int = 8,
    journal: str | Path | None = None,
    backup: str | Path | None = None,
    progress: bool | None = None,
    force: bool = False,
    delete_chunk: int = 100,
) -> ApplyReport:
    """Perform exactly the plan's operations on the chatbot ``serial``; returns an ApplyReport.

    Before any write the remote listings are pulled once and the plan is checked against them:
    a listing to update or delete that changed (or vanished) since the plan was made, or a
    listing to create that now exists, raises :class:`PlanError` naming them (up to 20, and a
    count) and nothing is written, unless ``force=True``. Then the current state of every
    listing to update or delete is saved to ``backup`` (``.json`` or ``.xlsx``; when None, a
    timestamped ``.json`` next to the journal or in the current folder, named in the report).
    Creates, then updates, run on ``concurrency`` threads, one request each; deletes go
    ``delete_chunk`` keys per request. A failed operation is reported and the others go on.

    With ``journal`` (a file path), every operation is recorded as it starts and ends. Calling
    again with the same plan and journal skips what is done, retries what failed and settles
    what was left unconfirmed by a crash without doing anything twice. A journal written for
    another plan or chatbot raises :class:`PlanError`.
    """
    _check_options(concurrency, delete_chunk)
    backup_path = check_backup_path(backup) if backup is not None else None
    tasks = _tasks_from_plan(plan)
    journal_path = Path(journal) if journal is not None else None
    book = (
        Journal(journal_path, fingerprint=plan.fingerprint, serial=serial, plan=_plan_hash(tasks))
        if journal_path is not None
        else None
    )
    try:
        return _apply(
            plan,
            tasks,
            client,
            serial,
            book,
            backup=backup_path,
            progress=progress,
            force=force,
            concurrency=concurrency,
            delete_chunk=delete_chunk,
        )
    finally:
        if book is not None:
            book.close()


def _apply(
    plan: SyncPlan,
    tasks: Sequence[_Task],
    client: Client,
    serial: str,
    book: Journal | None,
    *,
    backup: Path | None,
    progress: bool | None,
    force: bool,
    concurrency: int,
    delete_chunk: int,
) -> ApplyReport:
    records = book.records() if book is not None else {}
    done = {t.op for t in tasks if (r := records.get(t.op)) is not None and r.done}
    todo = [t for t in tasks if t.op not in done]
    notes: list[str] = []
    outcomes: dict[str, OpOutcome] = {}
    for task in tasks:
        if task.op in done:
            record = records[task.op]
            outcomes[task.op] = OpOutcome(
                action=task.action,
                key=task.key,
                row=task.row,
                id=record.id if record.id is not None else task.id,
                outcome=SKIPPED,
                code=record.code,
                message=record.message,
                attempts=record.attempts or None,
            )

    backup_path: Path | None = None
    checked = _Checked()
    if todo:
        remote = _Remote(pull_listings(client, serial, progress=False))
        checked = _check(todo, remote, records)
        if checked.stale:
            if not force:
                raise _stale_error(checked.stale)
            notes.append(
                f"force=True: applied although {len(checked.stale)} listings changed since the "
                "plan was made: " + ", ".join(t.key for t, _ in checked.stale[:_SHOWN_STALE])
            )
        if checked.backup_positions:
            backup_path = _take_backup(remote, checked.backup_positions, backup, book, serial)
            if backup is None:
                count = len(set(checked.backup_positions))
                notes.append(f"before-image of {count} listings written to {backup_path}")
        for task, found_id in checked.applied:
            message = "found applied on the service after an interrupted run; not sent again"
            if book is not None:
                book.record(task.op, "done", code=None, message=message, id=found_id)
            outcomes[task.op] = OpOutcome(
                action=task.action,
                key=task.key,
                row=task.row,
                id=found_id if found_id is not None else task.id,
                outcome=DONE,
                message=message,
                attempts=(records[task.op].attempts or None) if task.op in records else None,
            )

    with progress_bar(len(tasks), "Applying plan", progress=progress, unit="op") as bar:
        bar.update(len(outcomes))
        runner = _Runner(
            client,
            serial,
            concurrency=concurrency,
            delete_chunk=delete_chunk,
            journal=book,
            records=records,
            tick=bar.update,
        )
        runner.run(checked.send)
    outcomes.update(runner.outcomes)

    rows = [outcomes[t.op] for t in tasks if t.op in outcomes]
    rows += [
        OpOutcome(action="none", key=ref.key, row=ref.row, id=ref.id, outcome=UNCHANGED)
        for ref in getattr(plan, "unchanged", [])
    ]
    report = ApplyReport(
        frame=outcomes_frame(rows),
        backup_path=backup_path,
        journal_path=book.path if book is not None else None,
        notes=notes,
    )
    logger.info("apply: %s", report.summary())
    return report


# --------------------------------------------------------------------------- restore


def _body_of(row: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """An Update/Create body (without SerialNumber) from a canonical row, and what was filled in."""
    body: dict[str, Any] = {}
    filled: list[str] = []
    for name in schema.COLUMNS:
        if name == "ID":
            continue
        value = clean_value(name, row.get(name))
        if name in schema.DICT_COLUMNS:
            value = [{"Key": k, "value": v} for k, v in value.items()] or None
        elif name in schema.LIST_COLUMNS:
            value = value or None
        if value is None and name in RESTORE_DEFAULTS:
            value = RESTORE_DEFAULTS[name]
            filled.append(f"{name} (not returned by the service) sent as {value!r}")
        if value is not None:
            body[name] = value
    return body, filled


def _restore_item(
    number: int, row: Mapping[str, Any], mls: str | None, url: str | None, remote: _Remote
) -> _Task | OpOutcome:
    """What restoring one backed-up listing takes: a create, an update, or nothing."""
    body, filled = _body_of(row)
    note = "; ".join(filled)
    for kind, key in ((KeyType.MLS_NUMBER.value, mls), (KeyType.URL.value, url)):
        found = remote.positions(kind, key) if key else []
        if not found or key is None:
            continue
        ident = remote.id_at(found[0])
        if _shows_body(body, remote.row(found[0])):
            message = "already holds the backed-up values"
            return OpOutcome("update", key, number, ident, UNCHANGED, message=message)
        update = {**body, "Key": key, "KeyType": kind}
        return _Task("update", key, kind, number, ident, update, None, note)
    if mls:
        return _Task("create", mls, KeyType.MLS_NUMBER.value, number, None, body, None, note)
    if url:
        return _Task("create", url, KeyType.URL.value, number, None, body, None, note)
    message = "the backed-up listing has neither an MLSNumber nor a Url"
    return OpOutcome("create", None, number, None, FAILED, message=message)


def restore(
    backup: str | Path,
    client: Client,
    serial: str,
    *,
    concurrency: int = 8,
    progress: bool | None = None,
) -> ApplyReport:
    """Put the listings of a backup (written by :func:`apply_plan`) back on the chatbot.

    The current listings are pulled; a backed-up listing that exists now (matched by MLSNumber,
    else Url) is updated to its backed-up values, one that does not is created. Listings that
    already hold those values are reported ``unchanged`` and not sent. Fields the service never
    returns (``AreaUnit``, ``Location``) cannot be in a backup: ``AreaUnit`` is sent as
    ``"Square Feet"`` and the row's message says so.
    """
    _check_options(concurrency, 1)
    frame = read_backup(backup).reset_index(drop=True)
    remote = _Remote(pull_listings(client, serial, progress=False))
    tasks: list[_Task] = []
    settled: list[OpOutcome] = []  # rows decided without a request
    seen: set[str] = set()
    mls_keys = key_values(frame["MLSNumber"])
    url_keys = key_values(frame["Url"])
    for position in range(len(frame)):
        row = {column: frame[column].iat[position] for column in schema.COLUMNS}
        item = _restore_item(position + 1, row, mls_keys[position], url_keys[position], remote)
        if isinstance(item, _Task) and item.key in seen:
            message = f"{item.key_type} {item.key} is in the backup more than once"
            item = OpOutcome(item.action, item.key, item.row, item.id, FAILED, message=message)
        if isinstance(item, _Task):
            seen.add(item.key)
            tasks.append(item)
        else:
            settled.append(item)
    with progress_bar(len(tasks), "Restoring listings", progress=progress, unit="op") as bar:
        runner = _Runner(
            client,
            serial,
            concurrency=concurrency,
            delete_chunk=1,
            journal=None,
            records={},
            tick=bar.update,
        )
        runner.run(tasks)
    rows = [*settled, *(runner.outcomes[t.op] for t in tasks)]
    rows.sort(key=lambda o: o.row or 0)
    return ApplyReport(frame=outcomes_frame(rows), title="Restore")
