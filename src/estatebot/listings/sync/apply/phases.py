"""A plan → requests: exactly the plan, safely, resumably.

:func:`apply_plan` performs a plan's operations and nothing else, in phases that ``_apply`` runs
in this order, one function each:

1. **Pull** (``_pull_remote``). The remote listings are pulled once, before any write, with the
   List records as the service sent them.
2. **Journal** (``_settle_journaled``). With ``journal=``, every operation's start and outcome
   are appended to a JSON-lines file and synced to disk (:mod:`.journal`). Running the same plan
   again with the same journal skips what is done and retries what failed or was never
   confirmed. What the journal calls done is believed only where the service shows it; an effect
   that is missing is checked and done again ("redone").
3. **Stale check** (``_check_stale``, :mod:`.stale_check`). Every update and delete target
   must still hash (:func:`~estatebot.listings.sync.values.hashing.listing_hash`) to the
   ``before_hash`` it was planned against, and no create's key may exist yet. Any mismatch
   raises :class:`~estatebot.errors.PlanError` naming the listings, and nothing is written
   (``force=True`` goes on anyway). Then the plan's guards are checked again on what is about
   to be sent (``_check_guards``, :mod:`.guards_again`): a plan file edited by hand cannot
   delete or re-identify more listings than the apply allows.
4. **Backup** (``_back_up``). The current state of every listing the run will update or delete
   is written to a backup file (:mod:`.backup`) before the first write: where asked, else next
   to the journal or in the current folder under a timestamped name. An operation that was
   started but not confirmed counts as done when the service already shows its effect (the
   created key exists, the update's values are there, the deleted key is gone), and is journaled
   so (``_record_found_applied``): nothing is done twice and nothing is lost.
5. **Writes** (``_to_send``, ``_send``, :mod:`.sender`). Creates, then updates (one request
   each, ``concurrency`` threads), then deletes (``delete_chunk`` keys per request); windows of
   them are re-checked on the service when the apply runs long (:mod:`.recheck`). A failing
   operation is reported and the rest go on.
6. **Report** (``_report``). One row per operation, in the plan's order, with the notes of the
   phases before.

The options are one :class:`~estatebot.listings.sync.apply.apply_options.ApplyOptions`.
:func:`~estatebot.listings.sync.apply.restore.restore` puts a backup back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from estatebot._progress import finish_bar, progress_bar
from estatebot.listings import schema
from estatebot.listings.remote.pull import pull_result
from estatebot.listings.remote.sent_record import SentValues, open_sent_values, service_address
from estatebot.listings.sync.apply.apply_options import ApplyOptions, resolve_options
from estatebot.listings.sync.apply.backup import (
    default_backup_path,
    read_backup,
    read_backup_raw,
    write_backup,
)
from estatebot.listings.sync.apply.guards_again import check_guards_again
from estatebot.listings.sync.apply.journal import Journal
from estatebot.listings.sync.apply.journal_records import OpRecord
from estatebot.listings.sync.apply.recheck import Recheck, still_there, window_recheck
from estatebot.listings.sync.apply.restore import body_of, rebuild_problems
from estatebot.listings.sync.apply.send_tasks import Task, plan_hash, tasks_from_plan
from estatebot.listings.sync.apply.sender import Guards, Runner, not_sent
from estatebot.listings.sync.apply.sent_values import remember_done, with_sent_values
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
from estatebot.listings.sync.report.report_html import listing_names
from estatebot.listings.sync.values.compare import key_values

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.sync.plan.artifact import PlanArtifact


__all__ = ["apply_plan"]


logger = logging.getLogger("estatebot.listings.sync.apply.phases")


# --------------------------------------------------------------------------- apply_plan


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
    recheck_after: float | None = 2.0,
    recheck_window: int | None = None,
    max_delete_fraction: float = 0.2,
    force_delete_count: int | None = None,
    force_identity_count: int | None = None,
    options: ApplyOptions | None = None,
) -> ApplyReport:
    """Perform exactly the plan's operations on the chatbot `serial`; returns an ApplyReport.

    Before any write the remote listings are pulled once and the plan is checked against them:
    a listing to update or delete that changed (or vanished) since the plan was made, or a
    listing to create that now exists, raises `PlanError` naming them (up to 20, and a count)
    and nothing is written, unless `force=True`. Then the current state of every listing to
    update or delete is saved to `backup`. Creates, then updates, run on `concurrency`
    threads, one request each; deletes go `delete_chunk` keys per request. A failed operation
    is reported and the others go on.

    With `journal` (a file path), every operation is recorded as it starts and ends. Calling
    again with the same plan and journal skips what is done, retries what failed and settles
    what was left unconfirmed by a crash without doing anything twice. A journal written for
    another plan or chatbot raises `PlanError`.

    The values sent for the fields List never returns (`AreaUnit`, `Location`) are recorded
    per listing in `sent_values`, and an update whose sheet does not give them sends the
    values last sent instead of wiping them.

    Edits made on the service while the apply runs are not overwritten: once `recheck_after`
    seconds have passed since the check, the targets of each window of `recheck_window`
    updates or deletes are checked again just before they are written, and a listing changed
    since is not sent and reported `changed during apply`.

    The plan's guards are checked again just before the first write, against the listings as
    they are then, whatever a plan file says: more deletes, or more changes of MLSNumber or
    Url, than `max_delete_fraction` of them raise `PlanError` naming the listings, unless
    `force_delete_count` / `force_identity_count` (or, for a plan made in this process, the
    planner's) confirm that many.

    Args:
        plan: The plan to perform, as `plan_sync`, `plan_cleanup` or `plan_undo` made it
            (or as read back from a file).
        client: The `Client` that pulls the listings and sends the writes.
        serial: The chatbot's serial number.
        concurrency: Threads running the creates and updates, one request each (default 8).
        journal: A file path where every operation is recorded as it starts and ends, which
            makes the apply resumable (None: no journal).
        backup: Where the before-image goes, `.json` or `.xlsx` (None: a timestamped `.json`
            next to the journal or in the current folder, named in the report).
        progress: Show a progress bar (None: as `ESTATEBOT_PROGRESS` says, else on outside
            CI).
        force: Apply even when listings changed since the plan was made (noted in the
            report); an update is then laid over the listing as it is now.
        delete_chunk: Keys per delete request (default 100; never more than a window).
        sent_values: The record of the values sent for the fields List never returns: a
            SQLite file, None for the default place of `estatebot.listings.remote.sent_record`,
            False for no record.
        recheck_after: Seconds after the check from which each window is re-checked (default
            2); 0 re-checks every window, None never.
        recheck_window: Updates or deletes re-checked together (None: `8 × concurrency`; a
            delete request holds at most a window).
        max_delete_fraction: The share of the listings on the service that deletes, or
            changes of MLSNumber or Url, may reach unconfirmed (default 0.2).
        force_delete_count: Confirms exactly that many deletes past the fraction.
        force_identity_count: Confirms exactly that many changes of MLSNumber or Url past the
            fraction.
        options: All of the options above as one `ApplyOptions`, instead of keywords.

    Returns:
        An `ApplyReport`: one row per operation, in the plan's order, with where the backup
            and the journal were written and the call that sends again what failed.

    Raises:
        PlanError: When the plan is stale (a listing to update or delete changed or vanished
            since, a listing to create exists) and `force` is false; when the guards refuse
            the deletes or identity changes; when the journal was written for another plan,
            chatbot or service, or cannot be read; when the plan holds an unknown action or
            two operations on one listing; when `backup` is neither `.json` nor `.xlsx`, or an
            `.xlsx` backup cannot hold a listing's text; when the record of values sent
            cannot be opened.
        LockHeldError: When another apply holds the journal for longer than this one waits.
        PullError: When the pull before the first write fails.
        TypeError: When the options come both as `options=` and as keywords changed from
            their defaults.
        ValueError: When `concurrency`, `delete_chunk` or `recheck_window` is below 1,
            `recheck_after` or a force count is negative, or `max_delete_fraction` is not
            between 0 and 1.
    """
    chosen = resolve_options(
        options, concurrency=concurrency, journal=journal, backup=backup, progress=progress,
        force=force, delete_chunk=delete_chunk, sent_values=sent_values,
        recheck_after=recheck_after, recheck_window=recheck_window,
        max_delete_fraction=max_delete_fraction, force_delete_count=force_delete_count,
        force_identity_count=force_identity_count,
    )  # fmt: skip
    tasks = tasks_from_plan(plan)
    book = _open_journal(chosen, plan, tasks, client, serial)
    record: SentValues | None = None
    try:
        if tasks:
            service = service_address(client)
            record = open_sent_values(chosen.sent_values, service=service, serial=serial)
        records = book.records() if book is not None else {}
        return _apply(_Run(plan, tasks, client, serial, chosen, book, record, records))
    finally:
        if book is not None:
            book.close()
        if record is not None:
            record.close()


def _open_journal(
    options: ApplyOptions, plan: PlanArtifact, tasks: Sequence[Task], client: Client, serial: str
) -> Journal | None:
    """The journal asked for, bound to this plan, chatbot and service (None: none asked)."""
    path = options.journal_path
    if path is None:
        return None
    return Journal(
        path,
        fingerprint=plan.fingerprint,
        serial=serial,
        plan=plan_hash(tasks),
        service=service_address(client),
    )


@dataclass
class _Run:
    """One apply as it goes: what it was given, and what its phases found out on the way."""

    plan: PlanArtifact
    tasks: list[Task]
    client: Client
    serial: str
    options: ApplyOptions
    book: Journal | None
    sent: SentValues | None
    #: The journal's record of each operation of earlier runs (less those redone).
    records: dict[str, OpRecord]
    #: The listings as pulled before the first write (None: the plan has nothing to do).
    remote: Remote | None = None
    #: When that pull began: the re-checks of :mod:`.recheck` count from it.
    checked_at: float = 0.0
    #: The operations the journal calls done that the service does not show: done again.
    redo: set[str] = field(default_factory=set)
    #: The outcome of each operation settled so far, by operation.
    outcomes: dict[str, OpOutcome] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    backup_path: Path | None = None


def _apply(run: _Run) -> ApplyReport:
    """The phases of an apply, in order (see the module's documentation)."""
    _pull_remote(run)
    todo = _settle_journaled(run)
    checked = _check_stale(run, todo)
    _check_guards(run, checked)
    _back_up(run, checked)
    _record_found_applied(run, checked)
    runner = _send(run, _to_send(run, checked))
    return _report(run, runner)


# --------------------------------------------------------------------------- the phases


def _pull_remote(run: _Run) -> None:
    """1. The listings as they are now, pulled once before any write (not for an empty plan)."""
    run.checked_at = time.monotonic()
    if run.tasks:
        run.remote = Remote.of(
            pull_result(run.client, run.serial, progress=False, sent_values=run.options.sent_values)
        )


def _settle_journaled(run: _Run) -> list[Task]:
    """2. The operations still to do: all but those the journal calls done and the service shows.

    What the journal calls done is believed only where the service shows it: an effect that is
    missing (another service, a listing put back) is checked and done again, as "redone".
    """
    records = run.records
    journaled = {t.op for t in run.tasks if (r := records.get(t.op)) is not None and r.done}
    remote = run.remote
    run.redo = {
        t.op
        for t in run.tasks
        if t.op in journaled and remote is not None and not shows_done(t, remote)
    }
    done = journaled - run.redo
    for task in run.tasks:
        if task.op in done:
            run.outcomes[task.op] = _skipped(task, records[task.op])
            _remember_shown(run, task, records[task.op].id)
    if run.redo:
        run.notes.append(
            f"{len(run.redo)} operations the journal calls done are not to be seen on the "
            "service: checked and done again (outcome 'redone')"
        )
        # Judged afresh, as never sent: their journal record says nothing of this state.
        run.records = {op: record for op, record in records.items() if op not in run.redo}
    return [t for t in run.tasks if t.op not in done]


def _check_stale(run: _Run, todo: Sequence[Task]) -> Checked:
    """3. The targets of ``todo`` checked against the pull: a stale plan raises, unless forced."""
    if not todo or run.remote is None:
        return Checked()
    checked = check_targets(todo, run.remote, run.records)
    if checked.stale:
        if not run.options.force:
            raise stale_error(checked.stale)
        run.notes.append(
            f"force=True: applied although {len(checked.stale)} listings changed since the "
            "plan was made: " + ", ".join(t.key for t, _ in checked.stale[:SHOWN_STALE])
        )
    return checked


def _check_guards(run: _Run, checked: Checked) -> None:
    """3. The plan's guards again, on what is about to be sent to the listings as they are now:
    whatever the plan file says, past the fraction nothing is written unconfirmed."""
    if run.remote is not None and checked.send:
        check_guards_again(
            checked.send, run.remote, run.options, getattr(run.plan, "confirmed", None)
        )


def _back_up(run: _Run, checked: Checked) -> None:
    """4. The before-image of every listing to update or delete, saved before the first write:
    where asked, else a new file next to the journal or here."""
    positions = checked.backup_positions
    if not positions or run.remote is None:
        return
    book = run.book
    target = run.options.backup_path or default_backup_path(
        book.path.parent if book is not None else None
    )
    # Resuming: the file may already hold the first run's images, which are kept.
    resumed = book is not None and bool(book.records())
    path = _write_backup(run.remote, positions, target, serial=run.serial, merge=resumed)
    count = len(set(positions))
    logger.info("before-image of %d listings written to %s", count, path)
    if run.options.backup is None:
        run.notes.append(f"before-image of {count} listings written to {path}")
    run.backup_path = path


def _record_found_applied(run: _Run, checked: Checked) -> None:
    """4. The operations an interrupted run left unconfirmed that the service shows done:
    journaled done and reported so, never sent again."""
    message = "found applied on the service after an interrupted run; not sent again"
    for task, found_id in checked.applied:
        if run.book is not None:
            run.book.record(task.op, "done", code=None, message=message, id=found_id)
        earlier = run.records.get(task.op)
        run.outcomes[task.op] = OpOutcome(
            action=task.action,
            key=task.key,
            row=task.row,
            id=found_id if found_id is not None else task.id,
            outcome=DONE,
            message=message,
            attempts=(earlier.attempts or None) if earlier is not None else None,
        )
        _remember_shown(run, task, found_id)


def _remember_shown(run: _Run, task: Task, listing_id: int | None) -> None:
    """Record the body of an operation the service shows done, though this run did not send it:
    an interrupted run may have died before recording what the service accepted."""
    if run.sent is not None and task.body is not None:
        run.sent.remember(task.body, listing_id=listing_id)


def _to_send(run: _Run, checked: Checked) -> list[Task]:
    """5. What is sent: the checked operations, less the deletes their backup could not undo;
    a forced update laid over its listing as it is now; the fields List never returns filled
    from the values last sent."""
    send = checked.send
    if run.remote is not None:
        send = _keep_restorable(send, run.remote, run.serial, run.outcomes)
        changed = {t.op for t, _ in checked.stale if t.action == "update"}
        send = [_rebased(t, run.remote) if t.op in changed else t for t in send]
    if run.sent is not None:
        send = with_sent_values(send, run.sent, run.notes)
    return send


def _send(run: _Run, send: Sequence[Task]) -> Runner:
    """5. The writes, under a progress bar of every operation of the plan; returns the runner,
    which holds their outcomes."""
    total = len(run.tasks)
    with progress_bar(total, "Applying plan", progress=run.options.progress, unit="op") as bar:
        bar.update(len(run.outcomes))
        runner = _runner(run, send, bar.update)
        try:
            runner.run(send)
        finally:
            if run.sent is not None:  # also when interrupted: what was accepted is recorded
                remember_done(run.sent, send, runner.outcomes)
        settled = [*run.outcomes.values(), *runner.outcomes.values()]
        finish_bar(bar, failed=sum(1 for o in settled if o.outcome in NOT_DONE), total=total)
    return runner


def _report(run: _Run, runner: Runner) -> ApplyReport:
    """6. The report: one row per operation, in the plan's order, and the phases' notes."""
    recheck = runner.guards.recheck
    if recheck is not None and recheck.windows:
        run.notes.append(_recheck_note(recheck))
    for op, outcome in runner.outcomes.items():
        redone = op in run.redo and outcome.outcome == DONE
        run.outcomes[op] = replace(outcome, outcome=REDONE) if redone else outcome
    rows = [run.outcomes[t.op] for t in run.tasks if t.op in run.outcomes]
    report = ApplyReport(
        frame=outcomes_frame(rows, unchanged=getattr(run.plan, "unchanged", [])),
        backup_path=run.backup_path,
        journal_path=run.book.path if run.book is not None else None,
        notes=run.notes,
        retry_call=_retry_call(run.serial, run.book, run.backup_path),
        names=listing_names(run.plan.operations()),
    )
    logger.info("apply: %s", report.summary())
    return report


# --------------------------------------------------------------------------- their parts


def _skipped(task: Task, record: OpRecord) -> OpOutcome:
    """The outcome of an operation an earlier run did, as its journal record tells it."""
    return OpOutcome(
        action=task.action,
        key=task.key,
        row=task.row,
        id=record.id if record.id is not None else task.id,
        outcome=SKIPPED,
        code=record.code,
        message=record.message,
        attempts=record.attempts or None,
    )


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


def _runner(run: _Run, send: Sequence[Task], tick: Callable[[int], object]) -> Runner:
    """The runner of ``send``, with the look-ups that keep an unanswered request from being
    sent twice blind and the re-check of each window of writes."""
    client, serial, options = run.client, run.serial, run.options
    listings = len(run.remote.frame) if run.remote is not None else 0
    guards = Guards(
        look_up=partial(look_up_created, client, serial),
        still_there=partial(
            still_there, client, serial, concurrency=options.concurrency, listings=listings
        ),
        recheck=window_recheck(client, serial, run.remote, send, options, run.checked_at),
    )
    return Runner(
        client, serial, options, journal=run.book, records=run.records, tick=tick, guards=guards
    )


def _recheck_note(recheck: Recheck) -> str:
    failures = recheck.failures
    return (
        f"{recheck.windows} windows of writes re-checked on the service just before they were "
        "sent"
        + (f"; {len(failures)} re-checks failed and held their window back" if failures else "")
    )


def _retry_call(serial: str, book: Journal | None, backup: Path | None) -> str | None:
    """The call that sends again what failed: the same plan with the same journal (and backup,
    so the first run's before-images are kept). None without a journal: a plan applied in part
    is stale for the listings it changed, and only a new plan goes on from there."""
    if book is None:
        return None
    extra = f", backup={str(backup)!r}" if backup is not None else ""
    return f"plan.apply(client, {serial!r}, journal={str(book.path)!r}{extra})"
