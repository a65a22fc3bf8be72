"""A plan → requests: exactly the plan, safely, resumably.

:func:`apply_plan` performs a plan's operations and nothing else:

1. **Stale check** (:mod:`.stale`). The remote listings are pulled once, before any write. Every
   update and delete target must still hash
   (:func:`~estatebot.listings.sync.values.hashing.listing_hash`)
   to the ``before_hash`` it was planned against, and no create's key may exist yet. Any mismatch
   raises :class:`~estatebot.errors.PlanError` naming the listings, and nothing is written
   (``force=True`` goes on anyway).
2. **Backup.** The current state of every listing the run will update or delete is written to a
   backup file (:mod:`.backup`) before the first write: where asked, else next to the journal or
   in the current folder under a timestamped name.
3. **Writes** (:mod:`.runner`). Creates, then updates (one request each, ``concurrency``
   threads), then deletes (``delete_chunk`` keys per request). A failing operation is reported
   and the rest go on.
4. **Journal.** With ``journal=``, every operation's start and outcome are appended to a
   JSON-lines file and synced to disk (:mod:`.journal`). Running the same plan again with the same
   journal skips what is done and retries what failed or was never confirmed: an operation that
   was started but not confirmed counts as done when the service already shows its effect
   (the created key exists, the update's values are there, the deleted key is gone), so nothing
   is done twice and nothing is lost.

:func:`~estatebot.listings.sync.apply.restore.restore` puts a backup back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from estatebot._progress import finish_bar, progress_bar
from estatebot.listings import schema
from estatebot.listings.remote.pull import pull_listings
from estatebot.listings.sync.apply.backup import (
    check_backup_path,
    default_backup_path,
    read_backup,
    read_backup_raw,
    write_backup,
)
from estatebot.listings.sync.apply.journal import Journal
from estatebot.listings.sync.apply.recheck import still_there, window_recheck
from estatebot.listings.sync.apply.restore import body_of, rebuild_problems
from estatebot.listings.sync.apply.send_tasks import Task, check_options, plan_hash, tasks_from_plan
from estatebot.listings.sync.apply.sender import Runner, not_sent
from estatebot.listings.sync.apply.sent_values import (
    SentValues,
    open_sent_values,
    remember_done,
    service_address,
    with_sent_values,
)
from estatebot.listings.sync.apply.stale_check import (
    SHOWN_STALE,
    Checked,
    Remote,
    check_targets,
    look_up_created,
    shows_done,
    stale_error,
)
from estatebot.listings.sync.report.apply_report import (
    DONE,
    NOT_DONE,
    REDONE,
    SKIPPED,
    ApplyReport,
    OpOutcome,
    outcomes_frame,
)
from estatebot.listings.sync.values.compare import key_values

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.sync.plan.artifact import PlanArtifact


__all__ = ["apply_plan"]


logger = logging.getLogger("estatebot.listings.sync.apply.phases")


# --------------------------------------------------------------------------- apply_plan


def _write_backup(
    remote: Remote,
    positions: Sequence[int],
    path: Path,
    *,
    serial: str,
    merge: bool,
) -> Path:
    chosen = sorted(set(positions))
    frame = remote.frame.iloc[chosen].reset_index(drop=True)
    raws = [remote.raw(p) for p in chosen]
    if merge and path.exists():
        # Resuming: the earlier run's images are the true before-state of what it changed, so
        # they are kept and only listings missing from the file are added.
        earlier = read_backup(path)
        earlier_raws = read_backup_raw(path)
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
        raws = [*earlier_raws, *(raws[i] for i in fresh)]
    return write_backup(frame, path, serial=serial, raw=raws)


def _take_backup(
    remote: Remote,
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


def _rebased(task: Task, remote: Remote) -> Task:
    """An update of a listing changed since the plan (sent only when forced): the plan's own
    changes laid over the listing as it is now, so nobody else's edit is undone."""
    found = remote.positions(task.key_type, task.key)
    if len(found) != 1 or task.body is None:
        return task
    position = found[0]
    current, _ = body_of(remote.row(position), remote.raw(position))
    body = {**current, "Key": task.body["Key"], "KeyType": task.body["KeyType"]}
    for name in schema.UNLISTED_COLUMNS:  # the service never shows them: as planned
        body.pop(name, None)
        if task.body.get(name) is not None:
            body[name] = task.body[name]
    for change in task.changes:
        if change.field == "ExtensionColumn":
            now = {item["Key"]: item["value"] for item in body.get("ExtensionColumn") or []}
            for key in change.before:
                now.pop(key, None)
            now.update(change.after)
            merged = [{"Key": k, "value": v} for k, v in now.items()]
            body["ExtensionColumn"] = merged or None
        elif task.body.get(change.field) is None:
            body.pop(change.field, None)  # cleared by the plan
        else:
            body[change.field] = task.body[change.field]
    body = {name: value for name, value in body.items() if value is not None}
    return replace(task, body=body, note="changed since the plan: its changes sent over it")


def _keep_restorable(
    send: Sequence[Task], remote: Remote, serial: str, outcomes: dict[str, OpOutcome]
) -> list[Task]:
    """The tasks to send, less the deletes whose listing its backup could not create again.

    Checked before the first delete: what a backup holds, a restore must be able to put back.
    A listing it could not is not deleted, and its row says why, field by field.
    """
    kept: list[Task] = []
    for task in send:
        found = remote.positions(task.key_type, task.key) if task.action == "delete" else []
        if len(found) == 1:
            position = found[0]
            problems = rebuild_problems(remote.row(position), remote.raw(position), serial)
            if problems:
                why = "; ".join(problems)
                outcomes[task.op] = not_sent(
                    task, f"not deleted: its backup could not create it again ({why})"
                )
                continue
        kept.append(task)
    return kept


def apply_plan(
    plan: PlanArtifact,
    client: Client,
    serial: str,
    *,
    concurrency: int = 8,
    journal: str | Path | None = None,
    backup: str | Path | None = None,
    progress: bool | None = None,
    force: bool = False,
    delete_chunk: int = 100,
    sent_values: str | Path | bool | None = None,
    recheck_after: float | None = 10.0,
    recheck_window: int | None = None,
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

    The values sent for the fields List never returns (``AreaUnit``, ``Location``) are recorded
    per listing in ``sent_values`` (a SQLite file; None: the default place of
    :mod:`~estatebot.listings.sync.apply.sent_values`; False: no record), and an update whose sheet
    does not give them sends the values last sent instead of wiping them.

    Edits made on the service while the apply runs are not overwritten: once ``recheck_after``
    seconds have passed since the check, the targets of each window of ``recheck_window``
    updates or deletes (default: ``8 × concurrency``, at least one delete request) are checked
    again just before they are written, and a listing changed since is not sent and reported
    ``changed during apply``. ``recheck_after=0`` re-checks every window; None never.
    """
    check_options(concurrency, delete_chunk)
    if recheck_after is not None and recheck_after < 0:
        raise ValueError(f"recheck_after must be 0 or more seconds, got {recheck_after}")
    if recheck_window is not None and recheck_window < 1:
        raise ValueError(f"recheck_window must be at least 1, got {recheck_window}")
    backup_path = check_backup_path(backup) if backup is not None else None
    tasks = tasks_from_plan(plan)
    journal_path = Path(journal) if journal is not None else None
    book = (
        Journal(
            journal_path,
            fingerprint=plan.fingerprint,
            serial=serial,
            plan=plan_hash(tasks),
            service=service_address(client),
        )
        if journal_path is not None
        else None
    )
    record: SentValues | None = None
    try:
        if tasks:
            record = open_sent_values(sent_values, service=service_address(client), serial=serial)
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
            sent=record,
            recheck_after=recheck_after,
            recheck_window=recheck_window or max(8 * concurrency, delete_chunk),
        )
    finally:
        if book is not None:
            book.close()
        if record is not None:
            record.close()


def _retry_call(serial: str, book: Journal | None, backup: Path | None) -> str | None:
    """The call that sends again what failed: the same plan with the same journal (and backup,
    so the first run's before-images are kept). None without a journal: a plan applied in part
    is stale for the listings it changed, and only a new plan goes on from there."""
    if book is None:
        return None
    extra = f", backup={str(backup)!r}" if backup is not None else ""
    return f"plan.apply(client, {serial!r}, journal={str(book.path)!r}{extra})"


def _apply(
    plan: PlanArtifact,
    tasks: Sequence[Task],
    client: Client,
    serial: str,
    book: Journal | None,
    *,
    backup: Path | None,
    progress: bool | None,
    force: bool,
    concurrency: int,
    delete_chunk: int,
    sent: SentValues | None = None,
    recheck_after: float | None = None,
    recheck_window: int = 64,
) -> ApplyReport:
    records = book.records() if book is not None else {}
    journaled = {t.op for t in tasks if (r := records.get(t.op)) is not None and r.done}
    notes: list[str] = []
    outcomes: dict[str, OpOutcome] = {}
    remote = None
    checked_at = time.monotonic()
    if tasks:
        raws: list[dict[str, Any]] = []
        remote = Remote(pull_listings(client, serial, progress=False, records_out=raws), raws)
    # What the journal calls done is believed only where the service shows it: an effect that
    # is missing (another service, a listing put back) is checked and done again, as "redone".
    redo = {
        t.op
        for t in tasks
        if t.op in journaled and remote is not None and not shows_done(t, remote)
    }
    done = journaled - redo
    todo = [t for t in tasks if t.op not in done]
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
    if redo:
        notes.append(
            f"{len(redo)} operations the journal calls done are not to be seen on the service: "
            "checked and done again (outcome 'redone')"
        )
        # Judged afresh, as never sent: their journal record says nothing of this state.
        records = {op: record for op, record in records.items() if op not in redo}

    backup_path: Path | None = None
    checked = Checked()
    if todo and remote is not None:
        checked = check_targets(todo, remote, records)
        if checked.stale:
            if not force:
                raise stale_error(checked.stale)
            notes.append(
                f"force=True: applied although {len(checked.stale)} listings changed since the "
                "plan was made: " + ", ".join(t.key for t, _ in checked.stale[:SHOWN_STALE])
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

    if remote is not None:
        checked.send = _keep_restorable(checked.send, remote, serial, outcomes)
        changed = {t.op for t, why in checked.stale if t.action == "update"}
        checked.send = [_rebased(t, remote) if t.op in changed else t for t in checked.send]
    if sent is not None:
        checked.send = with_sent_values(checked.send, sent, notes)

    with progress_bar(len(tasks), "Applying plan", progress=progress, unit="op") as bar:
        bar.update(len(outcomes))
        runner = Runner(
            client,
            serial,
            concurrency=concurrency,
            delete_chunk=delete_chunk,
            journal=book,
            records=records,
            tick=bar.update,
            look_up=partial(look_up_created, client, serial),
            still_there=partial(
                still_there,
                client,
                serial,
                concurrency=concurrency,
                listings=len(remote.frame) if remote is not None else 0,
            ),
            recheck=window_recheck(
                client, serial, remote, checked.send, recheck_after, recheck_window, checked_at,
                concurrency,
            ),
        )  # fmt: skip
        try:
            runner.run(checked.send)
        finally:
            if sent is not None:  # also when interrupted: what was accepted is recorded
                remember_done(sent, checked.send, runner.outcomes)
        not_done = sum(1 for o in outcomes.values() if o.outcome in NOT_DONE)
        not_done += sum(1 for o in runner.outcomes.values() if o.outcome in NOT_DONE)
        finish_bar(bar, failed=not_done, total=len(tasks))
    if runner.recheck is not None and runner.recheck.windows:
        failures = runner.recheck.failures
        notes.append(
            f"{runner.recheck.windows} windows of writes re-checked on the service just before "
            "they were sent"
            + (f"; {len(failures)} re-checks failed and held their window back" if failures else "")
        )
    for op, outcome in runner.outcomes.items():
        outcomes[op] = (
            replace(outcome, outcome=REDONE) if op in redo and outcome.outcome == DONE else outcome
        )

    rows = [outcomes[t.op] for t in tasks if t.op in outcomes]
    report = ApplyReport(
        frame=outcomes_frame(rows, unchanged=getattr(plan, "unchanged", [])),
        backup_path=backup_path,
        journal_path=book.path if book is not None else None,
        notes=notes,
        retry_call=_retry_call(serial, book, backup_path),
    )
    logger.info("apply: %s", report.summary())
    return report
