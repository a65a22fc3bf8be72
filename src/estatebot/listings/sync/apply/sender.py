"""Sends a plan's operations: bounded concurrency, journaled, one outcome per operation.

Creates and updates go one request each on ``concurrency`` threads; deletes go
``delete_chunk`` keys a request. A failing operation is reported and the rest go on.
:func:`send_checked` is the apply's writing phase: what the stale check settled without
sending is journaled, the rest sent under a progress bar, and what the service accepted is
remembered in the record of values sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from estatebot._progress import finish_bar, progress_bar
from estatebot.errors import (
    APIConnectionError,
    APIError,
    ConflictError,
    ServerError,
)
from estatebot.listings.sync.apply.journal import Journal
from estatebot.listings.sync.apply.journal_records import Event, OpRecord, op_id
from estatebot.listings.sync.apply.recheck import (
    Looker,
    Recheck,
    Whereabouts,
    still_there,
    window_recheck,
)
from estatebot.listings.sync.apply.send_tasks import Task
from estatebot.listings.sync.apply.stale_check import look_up_created
from estatebot.listings.sync.report.apply_report import (
    DONE,
    FAILED,
    NOT_DONE,
    NOT_SENT,
    REDONE,
    SKIPPED,
    OpOutcome,
)

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.remote.sent_record import SentValues
    from estatebot.listings.sync.apply.apply_options import ApplyOptions
    from estatebot.listings.sync.apply.stale_check import Checked


# --------------------------------------------------------------------------- the writing phase


@dataclass(frozen=True)
class Target:
    """Where an apply writes: the client, the chatbot, the options, and the journal with its
    records of earlier runs (less the operations done again)."""

    client: Client
    serial: str
    options: ApplyOptions
    journal: Journal | None
    records: Mapping[str, OpRecord]


def send_checked(
    target: Target,
    checked: Checked,
    send: Sequence[Task],
    outcomes: dict[str, OpOutcome],
    *,
    total: int,
    listings: int,
    checked_at: float,
    sent: SentValues | None,
    notes: list[str],
) -> Runner:
    """The writes: the operations the check settled without sending journaled and given their
    outcome in ``outcomes``, then ``send`` sent under a progress bar of the plan's ``total``
    operations; returns the runner, which holds the outcomes of what it sent.

    ``listings`` is about how many listings the chatbot has (the re-checks choose how to look
    with it); the re-checks count from ``checked_at``, and how many windows they held back
    goes to ``notes``.
    """
    outcomes.update(_settled_without_sending(checked, target.journal, target.records))
    client, serial, options = target.client, target.serial, target.options
    where = Whereabouts(listings, page_size=checked.page_size, pages=checked.pages)
    looker = Looker(client, serial, concurrency=options.concurrency, where=where)
    guards = Guards(
        look_up=partial(look_up_created, client, serial),
        still_there=partial(still_there, looker),
        recheck=window_recheck(looker, checked.hashes, send, options, checked_at),
    )
    with progress_bar(total, "Applying plan", progress=options.progress, unit="op") as bar:
        bar.update(len(outcomes))
        runner = Runner(
            client,
            serial,
            options,
            journal=target.journal,
            records=target.records,
            tick=bar.update,
            guards=guards,
        )
        try:
            runner.run(send)
        finally:
            if sent is not None:  # also when interrupted: what was accepted is recorded
                remember_done(sent, send, runner.outcomes)
        settled = [*outcomes.values(), *runner.outcomes.values()]
        finish_bar(bar, failed=sum(1 for o in settled if o.outcome in NOT_DONE), total=total)
    recheck = guards.recheck
    if recheck is not None and recheck.windows:
        failures = recheck.failures
        notes.append(
            f"{recheck.windows} windows of writes re-checked on the service just before they "
            "were sent"
            + (f"; {len(failures)} re-checks failed and held their window back" if failures else "")
        )
    return runner


def _settled_without_sending(
    checked: Checked, journal: Journal | None, records: Mapping[str, OpRecord]
) -> dict[str, OpOutcome]:
    """The outcomes of what is not sent because it is done: what the journal calls done and the
    service shows (skipped), and what an interrupted run left unconfirmed that the service
    shows done (journaled done now, never sent again)."""
    out: dict[str, OpOutcome] = {}
    for task, record in checked.skipped:
        out[task.op] = outcome_of(
            task,
            SKIPPED,
            id=record.id,
            code=record.code,
            message=record.message,
            attempts=record.attempts or None,
        )
    message = "found applied on the service after an interrupted run; not sent again"
    for task, found_id in checked.applied:
        if journal is not None:
            journal.record(task.op, "done", code=None, message=message, id=found_id)
        earlier = records.get(task.op)
        out[task.op] = outcome_of(
            task,
            DONE,
            id=found_id,
            message=message,
            attempts=(earlier.attempts or None) if earlier is not None else None,
        )
    return out


def remember_done(
    record: SentValues, tasks: Iterable[Task], outcomes: Mapping[str, OpOutcome]
) -> None:
    """Remember the bodies of the creates and updates that the service accepted."""
    for task in tasks:
        outcome = outcomes.get(task.op)
        if task.body is None or outcome is None or outcome.outcome not in (DONE, REDONE):
            continue
        record.remember(task.body, listing_id=outcome.id)
    record.flush()


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Guards:
    """What the runner asks the service before it sends again or writes late (each optional).

    ``look_up`` finds the listing an unanswered create may have made, ``still_there`` the
    listings an unanswered delete left, and ``recheck`` the targets of a window of writes
    changed since the apply's check.
    """

    look_up: LookUp | None = None
    still_there: StillThere | None = None
    recheck: Recheck | None = None


class Runner:
    """Sends tasks with bounded concurrency, journals them, and collects outcomes.

    Of ``options`` it reads ``concurrency`` (threads) and ``delete_chunk`` (keys per delete
    request); ``records`` are the journal's records of earlier runs, ``tick`` moves the
    progress bar by the operations settled.
    """

    def __init__(
        self,
        client: Client,
        serial: str,
        options: ApplyOptions,
        *,
        journal: Journal | None,
        records: Mapping[str, OpRecord],
        tick: Callable[[int], object],
        guards: Guards = Guards(),
    ) -> None:
        self.client = client
        self.serial = serial
        self.options = options
        self.journal = journal
        self.records = records
        self.tick = tick
        self.guards = guards
        self.outcomes: dict[str, OpOutcome] = {}

    def _attempt_number(self, task: Task) -> int:
        record = self.records.get(task.op)
        return (record.attempts if record is not None else 0) + 1

    def _started(self, tasks: Sequence[Task], attempts: int) -> None:
        if self.journal is not None:
            self.journal.record_many([t.op for t in tasks], "started", attempts=attempts)

    def _finish(
        self,
        tasks: Sequence[Task],
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
            outcome_of(
                t,
                outcome,
                id=id,
                code=code,
                message=_join(t.note, message),
                attempts=attempts,
                elapsed_ms=elapsed_ms,
            )
            for t in tasks
        ]

    def _send_one(self, task: Task) -> list[OpOutcome]:
        attempts = self._attempt_number(task)
        self._started([task], attempts)
        started = time.monotonic()
        body = {**(task.body or {}), "SerialNumber": self.serial}
        if task.action == "create":
            return self._create(task, body, attempts, started)
        try:
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

    def _create(
        self, task: Task, body: dict[str, Any], attempts: int, started: float
    ) -> list[OpOutcome]:
        """Send a create; after an unanswered attempt, look the key up before sending again.

        A create is never sent twice blind: when a request may have gone out unanswered (a
        dropped connection, a timeout, a 5xx), the service is asked for the key, and the create
        is sent again only when the listing is absent. A 409 right after such an attempt, with
        the service holding our listing, is our own create: done.
        """
        record = self.records.get(task.op)
        uncertain = record is not None and record.maybe_applied
        resent = False

        def finish(
            outcome: str, code: int | None, message: str, id: int | None = None
        ) -> list[OpOutcome]:
            elapsed = (time.monotonic() - started) * 1000
            return self._finish(
                [task], outcome, code=code, message=message, attempts=attempts,
                elapsed_ms=elapsed, id=id,
            )  # fmt: skip

        while True:
            try:
                new_id = self.client.listings.create(body)
            except Exception as error:  # one failing listing never stops the others
                code, message = _describe(error)
                ambiguous = _unanswered(error)
                if not (ambiguous or (uncertain and isinstance(error, ConflictError))):
                    return finish(FAILED, code, message)
                if self.guards.look_up is None:
                    return finish(FAILED, code, message)
                try:
                    found = self.guards.look_up(task)
                except Exception as lookup_error:
                    _, why = _describe(lookup_error)
                    return finish(
                        FAILED, code, f"{message}; unanswered, and the look-up failed: {why}"
                    )
                if found is not None:
                    found_id, matches = found
                    if matches or ambiguous:
                        note = "created: the service holds it after an unanswered attempt"
                        return finish(DONE, code, note, found_id)
                    return finish(FAILED, code, message)
                if not ambiguous or resent:
                    return finish(FAILED, code, message)
                uncertain, resent = True, True  # absent: the attempt never landed; once more
                continue
            return finish(DONE, 200, "", new_id)

    def _send_deletes(self, chunk: Sequence[Task]) -> list[OpOutcome]:
        """Send a delete request; after an unanswered one, look the keys up before sending again.

        Like a create, a delete is never sent twice blind: the listings the service no longer
        holds were deleted by the unanswered request (done), and only those still there are
        sent once more.
        """
        attempts = max(self._attempt_number(t) for t in chunk)
        self._started(chunk, attempts)
        started = time.monotonic()

        def finish(
            tasks: Sequence[Task], outcome: str, code: int | None, message: str
        ) -> list[OpOutcome]:
            elapsed = (time.monotonic() - started) * 1000
            return self._finish(
                tasks, outcome, code=code, message=message, attempts=attempts, elapsed_ms=elapsed
            )

        try:
            count = self._delete(chunk)
        except Exception as error:  # one failing request never stops the others
            code, message = _describe(error)
            if not _unanswered(error) or self.guards.still_there is None:
                return finish(chunk, FAILED, code, message)
            try:
                there = self.guards.still_there(chunk)
            except Exception as lookup_error:
                _, why = _describe(lookup_error)
                return finish(
                    chunk, FAILED, code, f"{message}; unanswered, and the look-up failed: {why}"
                )
            gone = [t for t in chunk if t.op not in there]
            left = [t for t in chunk if t.op in there]
            note = "deleted: gone from the service after an unanswered attempt"
            out = finish(gone, DONE, code, note) if gone else []
            if not left:
                return out
            try:
                count = self._delete(left)
            except Exception as again:
                code, message = _describe(again)
                return [*out, *finish(left, FAILED, code, message)]
            return [*out, *finish(left, DONE, 200, _delete_message(count, len(left)))]
        return finish(chunk, DONE, 200, _delete_message(count, len(chunk)))

    def _delete(self, chunk: Sequence[Task]) -> int:
        return self.client.listings.delete(
            self.serial, [t.key for t in chunk], key_type=chunk[0].key_type
        )

    def run(self, tasks: Sequence[Task]) -> None:
        """Creates, then updates, then deletes; each phase waits for the one before."""
        creates = [t for t in tasks if t.action == "create"]
        updates = [t for t in tasks if t.action == "update"]
        deletes = [t for t in tasks if t.action == "delete"]
        with ThreadPoolExecutor(
            max_workers=self.options.concurrency, thread_name_prefix="estatebot-apply"
        ) as pool:
            try:
                self._run_phase(pool, [[t] for t in creates], self._send_first, checked=True)
                self._run_phase(pool, [[t] for t in updates], self._send_first)
                deletes = self._hold_replaced(creates, deletes)
                chunks = list(_delete_chunks(deletes, self.options.delete_request))
                self._run_phase(pool, chunks, self._send_deletes)
            except BaseException:
                # Interrupted (Ctrl-C): send nothing more. Requests in flight finish; the
                # journal shows them as started, and a resumed run sorts them out.
                pool.shutdown(wait=False, cancel_futures=True)
                raise

    def _hold_replaced(self, creates: Sequence[Task], deletes: Sequence[Task]) -> list[Task]:
        """The deletes to send: never one of a listing a failed create was meant to replace.

        A create and a delete that share an identity (MLSNumber or Url) are one listing moving;
        when the create failed, the delete would lose it. Such a delete is not sent (and not
        journaled: a later run decides it afresh).
        """
        failed: set[tuple[str, str]] = set()
        for task in creates:
            outcome = self.outcomes.get(task.op)
            if outcome is not None and outcome.outcome == FAILED:
                failed |= task.identity
        if not failed:
            return list(deletes)
        send: list[Task] = []
        for task in deletes:
            shared = task.identity & failed
            if not shared:
                send.append(task)
                continue
            name, _ = sorted(shared)[0]
            self.outcomes[task.op] = not_sent(
                task,
                f"not sent: the create of the listing with this {name} failed, and the delete "
                "would lose it",
            )
            self.tick(1)
        return send

    def _send_first(self, unit: Sequence[Task]) -> list[OpOutcome]:
        return self._send_one(unit[0])

    def _run_phase(
        self,
        pool: ThreadPoolExecutor,
        units: Sequence[list[Task]],
        send: Callable[[Sequence[Task]], list[OpOutcome]],
        *,
        checked: bool = False,
    ) -> None:
        # Submit at most a few jobs ahead of the workers, so an interruption leaves little
        # queued and memory stays flat for large plans.
        pending: set[Future[list[OpOutcome]]] = set()
        queue = self._rechecked(units) if not checked else iter(units)
        limit = self.options.concurrency * 2
        while True:
            for unit in queue:
                pending.add(pool.submit(send, unit))
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

    def _rechecked(self, units: Sequence[list[Task]]) -> Iterator[list[Task]]:
        """The units to send, each window of them re-checked just before it is sent (when
        due): a target changed on the service since the apply's check is not sent."""
        recheck = self.guards.recheck
        position = 0
        while position < len(units):
            if recheck is None or not recheck.due():
                yield units[position]
                position += 1
                continue
            window: list[list[Task]] = []
            count = 0
            while position < len(units) and count < recheck.window:
                window.append(units[position])
                count += len(units[position])
                position += 1
            changed = recheck([task for unit in window for task in unit])
            for unit in window:
                kept = [task for task in unit if task.op not in changed]
                for task in unit:
                    if task.op in changed:
                        outcome, message = changed[task.op]
                        self.outcomes[task.op] = OpOutcome(
                            task.action, task.key, task.row, task.id, outcome, message=message
                        )
                if len(kept) < len(unit):
                    self.tick(len(unit) - len(kept))
                if kept:
                    yield kept


def _delete_message(count: int, sent: int) -> str:
    if count >= sent:
        return ""
    # The service ignores unknown keys, so it cannot say which ones were not there.
    return (
        f"the service reported {count} of the {sent} listings of this request deleted (keys it "
        "does not know are ignored)"
    )


def _delete_chunks(tasks: Sequence[Task], size: int) -> Iterator[list[Task]]:
    by_type: dict[str, list[Task]] = {}
    for task in tasks:
        by_type.setdefault(task.key_type, []).append(task)
    for group in by_type.values():
        for start in range(0, len(group), size):
            yield group[start : start + size]


def outcome_of(task: Task, outcome: str, *, id: int | None = None, **details: Any) -> OpOutcome:
    """The outcome of ``task``: its action, key and row, the ID the service gave (``id``, else the
    plan's), and the ``details`` of :class:`OpOutcome` (code, message, attempts, ...)."""
    return OpOutcome(
        action=task.action,
        key=task.key,
        row=task.row,
        id=id if id is not None else task.id,
        outcome=outcome,
        **details,
    )


def not_sent(task: Task, message: str) -> OpOutcome:
    """The outcome of an operation held back before sending (not journaled: a later run
    decides it afresh)."""
    return OpOutcome(task.action, task.key, task.row, task.id, NOT_SENT, message=message)


#: The operations among these (deletes) whose listing the service still holds.
StillThere = Callable[[Sequence["Task"]], "set[str]"]

#: Looks an unanswered create up: (ID, whether it holds the body), or None when it is absent.
LookUp = Callable[["Task"], "tuple[int | None, bool] | None"]


def _unanswered(error: Exception) -> bool:
    """Whether a failed request may still have been carried out by the service."""
    if isinstance(error, APIConnectionError):  # dropped, reset, timed out after sending
        return error.sent
    if isinstance(error, ServerError):
        return True
    return isinstance(error, APIError) and error.status_code == 408


def _describe(error: Exception) -> tuple[int | None, str]:
    """The server's Code and Message of a failure, or our words for a transport error."""
    if isinstance(error, APIError):
        code = error.code if error.code is not None else error.status_code
        return code, error.message or str(error)
    return None, str(error) or type(error).__name__


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)
