"""The apply journal: an append-only JSON-lines record of what an apply run did, for resuming.

The first line is a header naming the plan it belongs to::

    {"journal": "estatebot-apply", "version": 1, "fingerprint": "...", "serial": "...",
     "plan": "...", "service": "https://usapi.hottask.com", "created": "2024-05-01T12:00:00+00:00"}

The header binds the journal to one target: the service's address, the chatbot and the plan.
Another target is refused, so an old journal never speaks for a new service.

Every later line is one event of one operation::

    {"op": "update:MLS123", "event": "started", "attempts": 1, "time": "..."}
    {"op": "update:MLS123", "event": "done", "code": 200, "message": "", "attempts": 1,
     "elapsed_ms": 41.2, "id": 17, "time": "..."}

``event`` is ``"started"`` (written, and synced to disk, before the request is sent),
``"done"`` (the service confirmed it) or ``"failed"`` (the service or the transport said no).
``code`` and ``message`` are the service's ``Code`` and ``Message`` (None and our words for a
transport error); ``attempts`` counts the runs that sent the operation (the client's own retries
inside one send are not counted); ``id`` is a created listing's new ID.
Each line is flushed and fsynced before the call that wrote it returns, so a killed process
never loses work the service confirmed; threads that write at the same moment share one fsync.
A kill in the middle of a write leaves a torn last line: it is ignored when reading (the event
it described was never confirmed to anyone) and cut off before the file is appended to again.

One journal has one writer at a time. Opening it takes an OS lock on a hidden file beside it
(``.journal.jsonl.lock``, with a note of who holds it, :mod:`.held_lock`) before its contents
are read, and :meth:`Journal.close` lets go. A second apply with the same journal, from this
process or another, waits ``lock_wait`` seconds and then raises
:class:`~.held_lock.LockHeldError` naming the first (its command, PID, start): two applies
reading the same "not done yet" would both send every operation. A process killed while it
holds the journal lets go with its death; the next apply takes the lock over.

This module writes a journal (:class:`Journal`); what one holds, and reading it back, is in
:mod:`~estatebot.listings.sync.apply.journal_records`.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TextIO

from estatebot.errors import PlanError
from estatebot.listings.sync.apply.held_lock import DEFAULT_WAIT, HeldLock
from estatebot.listings.sync.apply.journal_records import (
    MAGIC,
    VERSION,
    Event,
    JournalContents,
    JournalHeader,
    OpRecord,
    now_iso,
    read_journal,
)

_log = logging.getLogger(__name__)


class Journal:
    """An open journal for one plan on one chatbot; append events with :meth:`record`.

    Opening an existing journal checks that it belongs to the same chatbot (``serial``) and plan:
    the plan's ``fingerprint`` (the remote listings it was made from) and, when given, ``plan``
    (a hash of its operations, which tells apart two plans made from the same listings). A
    journal that is missing or empty is started afresh. Safe to use from several threads.

    The journal is locked from opening to :meth:`close` (use it as a context manager): another
    ``Journal`` of the same file waits up to ``lock_wait`` seconds, then raises
    :class:`~.held_lock.LockHeldError` naming the holder.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        fingerprint: str,
        serial: str,
        plan: str | None = None,
        service: str | None = None,
        lock_wait: float = DEFAULT_WAIT,
    ) -> None:
        self.path = Path(path)
        self._lock = HeldLock(lock_path(self.path), what=f"the journal {self.path}", wait=lock_wait)
        # Taken before the journal is read: what it says is done must not change under us.
        left = self._lock.acquire()
        if left is not None:
            _log.info("the journal %s: lock taken over from %s, no longer running", path, left)
        try:
            contents = _read(self.path)
            if contents.header is not None:
                _check_header(
                    self.path,
                    contents.header,
                    fingerprint=fingerprint,
                    serial=serial,
                    plan=plan,
                    service=service,
                )
        except BaseException:
            self._lock.release()
            raise
        if contents.header is not None:
            self.header = contents.header
        else:
            self.header = JournalHeader(
                fingerprint=fingerprint,
                serial=serial,
                created=now_iso(),
                plan=plan,
                service=service,
            )
        self.contents = contents
        self._write_lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._written = 0
        self._synced = 0
        # The file is opened (and a new journal's header written) with the first event, so a
        # run that stops before doing anything leaves no journal behind.
        self._file: TextIO | None = None

    def _open(self) -> TextIO:
        contents = self.contents
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if contents.torn:
            _cut_torn_tail(self.path)
        handle = self.path.open("a", encoding="utf-8")
        prefix = ""
        if contents.header is None:
            # A missing or empty file (an existing blank one is emptied first, so the header is
            # really the first line).
            handle.truncate(0)
            header = {
                "journal": MAGIC,
                "version": VERSION,
                "fingerprint": self.header.fingerprint,
                "serial": self.header.serial,
                "created": self.header.created,
                "plan": self.header.plan,
                "service": self.header.service,
            }
            prefix = json.dumps(header, ensure_ascii=False) + "\n"
        elif contents.unterminated:
            prefix = "\n"
        if prefix:
            handle.write(prefix)
        return handle

    def records(self) -> dict[str, OpRecord]:
        """The state of each operation as the journal stood when it was opened."""
        return self.contents.records()

    def record(
        self,
        op: str,
        event: Event,
        *,
        code: int | None = None,
        message: str = "",
        attempts: int | None = None,
        elapsed_ms: float | None = None,
        id: int | None = None,
    ) -> None:
        """Append one event and wait until it is on disk."""
        self.record_many(
            [op],
            event,
            code=code,
            message=message,
            attempts=attempts,
            elapsed_ms=elapsed_ms,
            id=id,
        )

    def record_many(
        self,
        ops: Iterable[str],
        event: Event,
        *,
        code: int | None = None,
        message: str = "",
        attempts: int | None = None,
        elapsed_ms: float | None = None,
        id: int | None = None,
    ) -> None:
        """Append the same event for several operations (one line each) with a single fsync."""
        stamp = now_iso()
        lines: list[dict[str, Any]] = []
        for name in ops:
            line: dict[str, Any] = {"op": name, "event": event}
            if event != "started":
                line["code"] = code
                line["message"] = message
            if attempts is not None:
                line["attempts"] = attempts
            if elapsed_ms is not None:
                line["elapsed_ms"] = round(elapsed_ms, 1)
            if id is not None:
                line["id"] = id
            line["time"] = stamp
            lines.append(line)
        if lines:
            self._append(lines)

    def _append(self, lines: Sequence[Mapping[str, Any]]) -> None:
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        with self._write_lock:
            if self._file is None:
                self._file = self._open()
            handle = self._file
            handle.write(text)
            handle.flush()
            self._written += 1
            mine = self._written
        # Group commit: whoever holds the sync lock fsyncs everything written so far, so
        # threads that wrote meanwhile find their lines already on disk and return at once.
        with self._sync_lock:
            if self._synced >= mine:
                return
            with self._write_lock:
                target = self._written
            os.fsync(handle.fileno())
            self._synced = target

    def close(self) -> None:
        """Close the file (every recorded event is already on disk) and let go of its lock."""
        with self._write_lock:
            try:
                if self._file is not None and not self._file.closed:
                    self._file.close()
            finally:
                self._lock.release()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def lock_path(journal: Path) -> Path:
    """The lock file of ``journal``: hidden beside it (``run/.journal.jsonl.lock``)."""
    return journal.with_name(f".{journal.name}.lock")


def _read(path: Path) -> JournalContents:
    """:func:`read_journal`, with a line nested too deep for the parser named as damage."""
    try:
        return read_journal(path)
    except RecursionError:
        raise PlanError(
            f"{path.name} is not a readable apply journal: a line nests arrays or objects "
            "deeper than any journal event",
            value=str(path),
        ) from None


def _check_header(
    path: Path,
    header: JournalHeader,
    *,
    fingerprint: str,
    serial: str,
    plan: str | None,
    service: str | None,
) -> None:
    # A journal speaks for one run: its record of what is done says nothing of another target,
    # and trusting it would skip work that was never done. Each message names the file, when it
    # was written and for what, and how to give this run a journal of its own.
    mismatch = _mismatch(header, fingerprint=fingerprint, serial=serial, plan=plan, service=service)
    if mismatch is not None:
        column, value, why = mismatch
        raise PlanError(
            f"the journal {path} (written {header.created}) {why}; each run needs a journal of "
            "its own: pass a new journal= path (one folder per run keeps a run's journal and "
            "backup together)",
            column=column,
            value=value,
        )


def _mismatch(
    header: JournalHeader, *, fingerprint: str, serial: str, plan: str | None, service: str | None
) -> tuple[str, str | None, str] | None:
    """What of ``header`` names another target than this apply's: (field, its value, why)."""
    if service is not None and header.service is not None and header.service != service:
        why = f"was written for the service at {header.service}, not {service}"
        return "service", header.service, f"{why}: it cannot resume this apply"
    if header.serial != serial:
        why = f"belongs to chatbot {header.serial}, not {serial}"
        return "serial", header.serial, f"{why}: it cannot resume this apply"
    resume = "resume with the plan it was written for"
    if header.fingerprint != fingerprint:
        why = f"belongs to another plan (fingerprint {header.fingerprint[:12]}…, this plan "
        return "fingerprint", header.fingerprint, f"{why}{fingerprint[:12]}…): {resume}"
    if plan is not None and header.plan is not None and header.plan != plan:
        why = f"belongs to another plan made from the same listings (plan {header.plan[:12]}…, "
        return "plan", header.plan, f"{why}this plan {plan[:12]}…): {resume}"
    return None


def _cut_torn_tail(path: Path) -> None:
    # Drop the incomplete last line so the next event starts on a line of its own.
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    with path.open("r+b") as handle:
        handle.truncate(end)
        handle.flush()
        os.fsync(handle.fileno())
