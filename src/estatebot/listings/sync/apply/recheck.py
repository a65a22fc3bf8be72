"""Edits made on the service while an apply runs: each window of writes re-checked before it is
sent, and an unanswered delete looked up before it is sent again.

The apply's stale check looks once, before the first write. A long apply gives others time to
edit a listing it is about to write, so once the check is older than ``recheck_after`` seconds
the runner asks :class:`Recheck` about each window of updates and deletes just before sending
it; :func:`recheck_targets` reads those listings as they are now (:class:`Looker`): the pages
that held them at the check, or each alone by MLS number, whichever has cost less so far, or a
whole pull.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from estatebot.api.models import KeyType
from estatebot.listings.sync.apply.send_tasks import Task
from estatebot.listings.sync.apply.stale_check import Remote
from estatebot.listings.sync.report.apply_report import CHANGED, NOT_SENT

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.sync.apply.apply_options import ApplyOptions

__all__ = [
    "Looker",
    "Recheck",
    "Whereabouts",
    "recheck_targets",
    "still_there",
    "window_recheck",
]


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


@dataclass(frozen=True)
class Whereabouts:
    """Where the apply's check found the listings it writes, for looking at them again.

    ``listings`` is about how many the chatbot has; ``pages`` holds, by operation, the page its
    listing was on at the check, a page being ``page_size`` listings (empty when the check's
    pull could not tell).
    """

    listings: int
    page_size: int = 0
    pages: Mapping[str, int] = field(default_factory=dict)


class Looker:
    """Reads the listings of some tasks as they are now, the cheapest way it has seen so far.

    Two ways can look at a few listings: reading again the pages that held them at the check
    (``where``), when those are fewer than the listings (an export edited in its own order puts
    a window's listings on a few pages); or asking for each listing alone by MLS number (one
    small page each). Fewer requests is not always cheaper: a page of 100 listings can cost a
    server as much as several small ones, or far less than their latency. So each way is timed
    when used, and once both have been, a window goes the way its requests are expected to take
    the least time. A listing not found on its page (moved, or gone) is looked up alone; when a
    key other than an MLS number is among those, or there are more of them than pages in a
    pull, the listings are pulled whole once. Every way runs ``concurrency`` requests at a time.
    """

    def __init__(
        self, client: Client, serial: str, *, concurrency: int, where: Whereabouts
    ) -> None:
        self.client = client
        self.serial = serial
        self.concurrency = concurrency
        self.where = where
        #: Seconds a request took, by way ("pages", "alone"), the last time a window went that
        #: way; a page's time includes looking up alone the listings it did not show, so a
        #: service whose pages do not keep their order soon goes the other way.
        self.seconds_per: dict[str, float] = {}

    def remotes(self, tasks: Sequence[Task]) -> list[Remote]:
        """The service's listings as they are now, one :class:`Remote` per task to look in."""
        where = self.where
        on_pages = [task for task in tasks if task.op in where.pages]
        pages = sorted({where.pages[task.op] for task in on_pages})
        started = time.monotonic()
        if where.page_size and pages and len(pages) < len(tasks) and self._pages_pay(pages, tasks):
            found = self._read_pages(pages)
            remotes = {
                task.op: found for task in on_pages if found.positions(task.key_type, task.key)
            }
            # Those the pages did not show (moved, or gone): the way counts what they cost too.
            remotes.update(self._each_or_whole([t for t in tasks if t.op not in remotes]))
            self.seconds_per["pages"] = (time.monotonic() - started) / len(pages)
        else:
            remotes = self._each_or_whole(tasks)
            if self._alone_possible(tasks):
                self.seconds_per["alone"] = (time.monotonic() - started) / len(tasks)
        return [remotes[task.op] for task in tasks]

    def _each_or_whole(self, tasks: Sequence[Task]) -> dict[str, Remote]:
        """``tasks``' listings each asked for alone, or pulled whole (see the class)."""
        if not tasks:
            return {}
        if self._alone_possible(tasks):
            looked = self._look_up(tasks)
        else:
            looked = Remote.pulled(self.client, self.serial, concurrency=self.concurrency)
        return dict.fromkeys((task.op for task in tasks), looked)

    def _alone_possible(self, tasks: Sequence[Task]) -> bool:
        pull_pages = self.where.listings // 100 + 1
        return len(tasks) <= pull_pages and all(
            t.key_type == KeyType.MLS_NUMBER.value for t in tasks
        )

    def _pages_pay(self, pages: Sequence[int], tasks: Sequence[Task]) -> bool:
        """Whether reading ``pages`` again should take less time than looking each task up
        alone (a way not timed yet is tried; with no way to look alone, pages it is)."""
        if not self._alone_possible(tasks):
            return True
        per_page, per_alone = self.seconds_per.get("pages"), self.seconds_per.get("alone")
        if per_page is None or per_alone is None:
            return per_page is None
        return len(pages) * per_page < len(tasks) * per_alone

    def _read_pages(self, pages: Sequence[int]) -> Remote:
        """The listings on ``pages`` as they are now, as one Remote."""
        size = self.where.page_size
        with ThreadPoolExecutor(
            max_workers=self.concurrency, thread_name_prefix="estatebot-look"
        ) as pool:
            answers = list(
                pool.map(
                    lambda n: self.client.listings.list_page(self.serial, page=n, page_size=size),
                    pages,
                )
            )
        return _one_remote(answer.records for answer in answers)

    def _look_up(self, tasks: Sequence[Task]) -> Remote:
        """The listings of ``tasks`` (all known by MLS number), each asked for alone."""
        with ThreadPoolExecutor(
            max_workers=self.concurrency, thread_name_prefix="estatebot-look"
        ) as pool:
            answers = list(
                pool.map(
                    lambda t: self.client.listings.list_page(
                        self.serial, mls_number=t.key, page_size=100
                    ),
                    tasks,
                )
            )
        return _one_remote(answer.records for answer in answers)


def _one_remote(pages: Iterable[Sequence[dict[str, Any]]]) -> Remote:
    """The records of several answers read as one frame, each listing once (by ID).

    Reading costs mostly per call, not per record: a window's few hundred one-listing pages
    read one by one cost seconds of the interpreter.
    """
    records, seen = [], set()
    for page in pages:
        for record in page:
            ident = record.get("ID")
            if ident is None or ident not in seen:
                seen.add(ident)
                records.append(record)
    return Remote.read(records)


def recheck_targets(
    looker: Looker, tasks: Sequence[Task], expected: Mapping[str, str]
) -> dict[str, str]:
    """The tasks whose listing changed since the apply's check, with why (op → reason).

    ``expected`` holds, by operation, the hash its listing had at the check; the listings are
    read as ``looker`` reads them.
    """
    targets = [t for t in tasks if t.op in expected]
    if not targets:
        return {}
    remotes = looker.remotes(targets)
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


def still_there(looker: Looker, tasks: Sequence[Task]) -> set[str]:
    """The operations (deletes) whose listing the service still holds."""
    remotes = looker.remotes(tasks)
    return {
        task.op
        for task, remote in zip(tasks, remotes, strict=True)
        if remote.positions(task.key_type, task.key)
    }


def window_recheck(
    looker: Looker,
    hashes: Mapping[str, str],
    send: Sequence[Task],
    options: ApplyOptions,
    checked_at: float,
) -> Recheck | None:
    """The re-check of each window of writes, or None when there is nothing to re-check.

    ``hashes`` holds, by operation, the hash its listing had at the apply's check (where it was
    found once); ``looker`` reads them again. Of ``options`` it reads ``recheck_after`` (None:
    never re-check) and the window.
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
    check = partial(recheck_targets, looker, expected=expected)
    return Recheck(check, after=options.recheck_after, window=options.window, checked_at=checked_at)
