"""Edits made on the service while an apply runs: each window of writes re-checked before it is
sent, and an unanswered delete looked up before it is sent again.

The apply's stale check looks once, before the first write. A long apply gives others time to
edit a listing it is about to write, so once the check is older than ``recheck_after`` seconds
the runner asks :class:`Recheck` about each window of updates and deletes just before sending
it; :func:`recheck_targets` reads those listings as they are now (:func:`current_remotes`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING

from estatebot.api.models import KeyType
from estatebot.listings.remote.normalize import normalize_records
from estatebot.listings.remote.pull import pull_result
from estatebot.listings.sync.apply.send_tasks import Task
from estatebot.listings.sync.apply.stale_check import Remote
from estatebot.listings.sync.report.apply_report import CHANGED, NOT_SENT

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.sync.apply.apply_options import ApplyOptions

__all__ = ["Recheck", "current_remotes", "recheck_targets", "still_there", "window_recheck"]


class Recheck:
    """When and how a window of writes is re-checked against the service before it is sent.

    Due once ``after`` seconds have passed since the apply's check (``after=0``: every window);
    a window is ``window`` operations. Calling it re-checks the tasks and returns, by
    operation, why each changed one did. A re-check that fails holds its window back (every
    task "could not be re-checked", not sent: a later run decides them afresh) rather than
    write blind; the failures are kept in ``failures``.
    """

    def __init__(
        self,
        check: Callable[[Sequence[Task]], dict[str, str]],
        *,
        after: float,
        window: int,
        checked_at: float,
    ) -> None:
        self.check = check
        self.after = after
        self.window = max(1, window)
        self.checked_at = checked_at
        self.windows = 0
        self.failures: list[str] = []

    def due(self) -> bool:
        return time.monotonic() - self.checked_at >= self.after

    def __call__(self, tasks: Sequence[Task]) -> dict[str, tuple[str, str]]:
        """By operation, the outcome and message of each task not to send."""
        self.windows += 1
        try:
            changed = self.check(tasks)
        except Exception as error:  # a guard that cannot look lets nothing through
            why = str(error) or type(error).__name__
            self.failures.append(why)
            message = f"not sent: its listing could not be re-checked before writing ({why})"
            return {task.op: (NOT_SENT, message) for task in tasks}
        return {
            op: (CHANGED, f"not sent: {why} since the apply's check; make a new plan to take "
                 "the change into account")
            for op, why in changed.items()
        }  # fmt: skip


def current_remotes(
    client: Client, serial: str, tasks: Sequence[Task], *, concurrency: int, listings: int
) -> list[Remote]:
    """The service's listings as they are now, one :class:`Remote` per task to look in.

    A listing known by MLS number is asked for alone (one small page each, ``concurrency`` at
    a time); when any other key is among them, or there are more of them than pages in a pull
    (``listings`` is about how many the chatbot has), the listings are pulled whole once.
    """
    pull_pages = listings // 100 + 1
    by_mls = len(tasks) <= pull_pages and all(t.key_type == KeyType.MLS_NUMBER.value for t in tasks)
    if not by_mls:
        whole = Remote.of(pull_result(client, serial, progress=False))
        return [whole] * len(tasks)
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="estatebot-look") as pool:
        pages = list(
            pool.map(
                lambda t: client.listings.list_page(serial, mls_number=t.key, page_size=100),
                tasks,
            )
        )
    # The pages' records read as one frame: reading costs mostly per call, not per record, and a
    # window's few hundred one-listing pages read one by one cost seconds of the interpreter.
    records, seen = [], set()
    for page in pages:
        for record in page.records:
            ident = record.get("ID")
            if ident is None or ident not in seen:
                seen.add(ident)
                records.append(record)
    found = Remote(normalize_records(records).frame)
    return [found] * len(tasks)


def recheck_targets(
    client: Client,
    serial: str,
    tasks: Sequence[Task],
    expected: Mapping[str, str],
    *,
    concurrency: int,
    listings: int,
) -> dict[str, str]:
    """The tasks whose listing changed since the apply's check, with why (op → reason).

    ``expected`` holds, by operation, the hash its listing had at the check; the listings are
    read as :func:`current_remotes` reads them.
    """
    targets = [t for t in tasks if t.op in expected]
    if not targets:
        return {}
    remotes = current_remotes(client, serial, targets, concurrency=concurrency, listings=listings)
    for remote in {id(remote): remote for remote in remotes}.values():
        remote.hash_found(task for task, its in zip(targets, remotes, strict=True) if its is remote)
    changed: dict[str, str] = {}
    for task, remote in zip(targets, remotes, strict=True):
        found = remote.positions(task.key_type, task.key)
        if not found:
            changed[task.op] = "no longer on the service"
        elif len(found) > 1:
            changed[task.op] = f"now on the service {len(found)} times"
        elif remote.hash_at(found[0]) != expected[task.op]:
            changed[task.op] = "edited on the service"
    return changed


def still_there(
    client: Client, serial: str, tasks: Sequence[Task], *, concurrency: int, listings: int
) -> set[str]:
    """The operations (deletes) whose listing the service still holds."""
    remotes = current_remotes(client, serial, tasks, concurrency=concurrency, listings=listings)
    return {
        task.op
        for task, remote in zip(tasks, remotes, strict=True)
        if remote.positions(task.key_type, task.key)
    }


def window_recheck(
    client: Client,
    serial: str,
    hashes: Mapping[str, str],
    send: Sequence[Task],
    options: ApplyOptions,
    checked_at: float,
    listings: int,
) -> Recheck | None:
    """The re-check of each window of writes, or None when there is nothing to re-check.

    ``hashes`` holds, by operation, the hash its listing had at the apply's check (where it was
    found once); ``listings`` is about how many the chatbot has. Of ``options`` it reads
    ``recheck_after`` (None: never re-check), the window and ``concurrency``.
    """
    if options.recheck_after is None:
        return None
    expected = {
        task.op: hashes[task.op]
        for task in send
        if task.action in ("update", "delete") and task.op in hashes
    }
    if not expected:
        return None
    check = partial(
        recheck_targets,
        client,
        serial,
        expected=expected,
        concurrency=options.concurrency,
        listings=listings,
    )
    return Recheck(check, after=options.recheck_after, window=options.window, checked_at=checked_at)
