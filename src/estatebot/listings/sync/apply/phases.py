"""A plan → requests: exactly the plan, safely, resumably.

:func:`apply_plan` performs a plan's operations and nothing else, in phases it runs in this
order, each one function of its own module, handed the result of the one before:

1. **Pull** (:meth:`.stale_check.Remote.pulled`). The remote listings are pulled once, before
   any write, ``concurrency`` pages at a time, with the List records as the service sent them
   and the page each came from.
2. **Check** (:func:`.stale_check.check_against_pull`). With ``journal=``, every operation's
   start and outcome are appended to a JSON-lines file and synced to disk (:mod:`.journal`).
   Running the same plan again with the same journal skips what is done and retries what failed
   or was never confirmed; what the journal calls done is believed only where the service shows
   it (an effect that is missing is done again: "redone"). Every other update and delete target
   must still hash (:func:`~estatebot.listings.sync.values.hashing.listing_hash`) to the
   ``before_hash`` it was planned against, and no create's key may exist yet. Any mismatch
   raises :class:`~estatebot.errors.PlanError` naming the listings, and nothing is written
   (``force=True`` goes on anyway). An operation that was started but not confirmed counts as
   done when the service already shows its effect (the created key exists, the update's values
   are there, the deleted key is gone): nothing is done twice and nothing is lost.
3. **Guards** (:func:`.guards_again.check_guards_again`). The plan's guards are checked again
   on what is about to be sent: a plan file edited by hand cannot delete or re-identify more
   listings than the apply allows.
4. **Backup** (:func:`.backup.back_up_targets`). The current state of every listing the run
   will update or delete is written to a backup file before the first write: where asked, else
   next to the journal or in the current folder under a timestamped name.
5. **What to send** (:func:`.send_list.to_send`): the checked operations, less the deletes
   whose backup could not create their listing again; forced updates laid over the listing as
   it is now; the fields List never returns filled from the values last sent.
6. **Writes** (:func:`.sender.send_checked`). What the check found done is journaled; then
   creates, then updates (one request each, ``concurrency`` threads), then deletes
   (``delete_chunk`` keys per request); windows of them are re-checked on the service when the
   apply runs long (:mod:`.recheck`). A failing operation is reported and the rest go on.
7. **Report** (:func:`~estatebot.listings.sync.report.report_of_apply.report_of_apply`). One
   row per operation, in the plan's order, with the notes of the phases before.

The options are one :class:`~estatebot.listings.sync.apply.apply_options.ApplyOptions`.
:func:`~estatebot.listings.sync.apply.restore.restore` puts a backup back.
"""

from __future__ import annotations

import logging
import time
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from estatebot.listings.remote.sent_record import open_sent_values, service_address
from estatebot.listings.sync.apply.apply_options import ApplyOptions, resolve_options
from estatebot.listings.sync.apply.backup import back_up_targets
from estatebot.listings.sync.apply.guards_again import check_guards_again
from estatebot.listings.sync.apply.journal import Journal
from estatebot.listings.sync.apply.send_list import to_send
from estatebot.listings.sync.apply.send_tasks import plan_hash, tasks_from_plan
from estatebot.listings.sync.apply.sender import Target, send_checked
from estatebot.listings.sync.apply.stale_check import (
    SHOWN_STALE,
    Checked,
    Remote,
    check_against_pull,
)
from estatebot.listings.sync.report.report_of_apply import report_of_apply

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.sync.plan.artifact import PlanArtifact
    from estatebot.listings.sync.report.apply_report import ApplyReport, OpOutcome


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
        concurrency: Threads running the creates and updates, one request each, and fetching
            the pages of the pulls that check them (default 8).
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
    digest = plan_hash(tasks)
    service = service_address(client)
    path = chosen.journal_path
    book = None if path is None else Journal(
        path, fingerprint=plan.fingerprint, serial=serial, plan=digest, service=service
    )  # fmt: skip
    with ExitStack() as closing:
        if book is not None:
            closing.callback(book.close)
        earlier = book.records() if book is not None else {}
        sent = (
            open_sent_values(chosen.sent_values, service=service, serial=serial) if tasks else None
        )
        if sent is not None:
            closing.callback(sent.close)
        notes: list[str] = []
        # 1. The pull, before any write (none for an empty plan); the re-checks count from it.
        checked_at = time.monotonic()
        remote = (
            Remote.pulled(
                client, serial, concurrency=chosen.concurrency, sent_values=chosen.sent_values
            )
            if tasks
            else None
        )
        # 2. Every operation judged against it.
        checked = check_against_pull(tasks, remote, earlier) if remote is not None else Checked()
        if checked.redo:
            notes.append(
                f"{len(checked.redo)} operations the journal calls done are not to be seen on "
                "the service: checked and done again (outcome 'redone')"
            )
        if checked.stale_error is not None:
            if not chosen.force:
                raise checked.stale_error
            notes.append(
                f"force=True: applied although {len(checked.stale)} listings changed since the "
                "plan was made: " + ", ".join(t.key for t, _ in checked.stale[:SHOWN_STALE])
            )
        # 3. The plan's guards again, on what is about to be sent to the listings as they are.
        if remote is not None and checked.send:
            check_guards_again(checked, remote, chosen, getattr(plan, "confirmed", None))
        # 4. The before-image. Resuming: the file may hold the first run's images, kept.
        backup_path = None
        if remote is not None:
            backup_path = back_up_targets(
                remote.frame,
                remote.records,
                checked.backup_positions,
                asked=chosen.backup_path,
                beside=book.path.parent if book is not None else None,
                merge=bool(earlier),
                serial=serial,
            )
        if backup_path is not None:
            count = len(set(checked.backup_positions))
            logger.info("before-image of %d listings written to %s", count, backup_path)
            if chosen.backup is None:
                notes.append(f"before-image of {count} listings written to {backup_path}")
        # 5. and 6. What is sent, then the writes. The journal's records are judged afresh
        # for what it calls done and the service does not show.
        records = {op: r for op, r in earlier.items() if op not in checked.redo}
        settled: dict[str, OpOutcome] = {}
        send = to_send(checked, remote, serial, sent, settled, notes)
        runner = send_checked(
            Target(client, serial, chosen, book, records),
            checked,
            send,
            settled,
            total=len(tasks),
            listings=len(remote.frame) if remote is not None else 0,
            checked_at=checked_at,
            sent=sent,
            notes=notes,
        )
        # 7. The report.
        return report_of_apply(
            plan,
            [t.op for t in tasks],
            settled,
            runner.outcomes,
            redo=checked.redo,
            notes=notes,
            serial=serial,
            journal=book.path if book is not None else None,
            backup=backup_path,
        )
