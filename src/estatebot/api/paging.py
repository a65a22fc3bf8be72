"""The paging of a listing pull, apart from any I/O: one logic for every way of reading pages.

:meth:`Listings.iter_pages <estatebot.api.listings.Listings.iter_pages>` (one page at a time),
its async twin and ``pull_listings``/``apull_listings`` (many at a time) all run :class:`Pager`:
they fetch the pages it names and hand it what came back, and it decides what to fetch next and
when the listings have ended.

Paging rules (the addendum's decisions, and the variants the client must survive):

* Page 1 is fetched first. Its ``VirtualCount`` (the total matching) says how many pages remain;
  those are fetched together, at most ``concurrency`` at a time.
* A server that caps the page size returns fewer rows than asked while ``VirtualCount`` says more
  remain (or says nothing): the cap becomes the page size for every later page (page numbers
  count in that size).
* ``VirtualCount`` may be missing or wrong, so the pull only ends on a short or empty page: when
  the count says the last page is full, the page after it is fetched together with the expected
  ones (no extra round trip), and, when the count was missing or too small, waves of
  ``concurrency`` pages follow until a short one arrives.
* A page past the end may be refused instead of empty (Code 404 "No more data", or 400, 410, 416,
  422 for a page number out of range). Such a reply ends the pull like an empty page, unless a
  later page fetched with it holds listings (then it is a failure: a page lost). A count still
  unmet at that end is a shortfall, reported as for an empty page.
* A count below the rows of page 1 (0 beside 50 listings) is plainly wrong and read as missing.
* Pages are reassembled in page order, and a listing seen twice (rows moving between pages while
  the pull runs) is kept once, at its first position.
* The count changing between pages (a listing added or removed mid-pull), or fewer listings
  arriving than counted, is reported by :meth:`Pager.shortfall`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from estatebot.api.models import ListingPage
from estatebot.errors import APIError, EstatebotError, PullError, PullWarning

# Codes a service plausibly answers a page number past the last with.
_NO_SUCH_PAGE = frozenset({400, 404, 410, 416, 422})


def says_no_such_page(error: EstatebotError) -> bool:
    """Whether an error is a refusal of the page number (not of the credential or the server)."""
    if isinstance(error, PullError):
        error = error.cause
    if not isinstance(error, APIError):
        return False
    status = error.status_code or 0
    kind = status if status >= 400 else error.code
    return kind in _NO_SUCH_PAGE


@dataclass(frozen=True)
class NoSuchPage:
    """A page the service refused as past the end; :class:`Pager` decides whether it is."""

    error: EstatebotError


#: What a driver hands back for one page: the page, None for a failure skipped
#: (``on_error="skip"``), or the refusal of a page number.
PageResult = ListingPage | NoSuchPage | None


@dataclass
class Pager:
    """Which pages to fetch next, given the pages seen so far. Pure: no I/O.

    ``None`` in a batch of results stands for a page that failed and was skipped: ``missing``
    lists those within the count (or all, when there is no count), ``unverified`` the probes
    past the count that failed, so the end of the listings could not be confirmed. A
    :class:`NoSuchPage` ends the listings when the count is satisfied; otherwise it is a failure,
    raised when ``strict`` (``on_error="raise"``), else skipped like ``None``.
    """

    page_size: int
    concurrency: int
    strict: bool = True
    #: False for a driver that hands pages out as they come: then :meth:`records` stays empty.
    keep_records: bool = True
    size: int = 0
    expected_pages: int | None = None
    pages: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    missing: list[int] = field(default_factory=list)
    unverified: list[int] = field(default_factory=list)
    #: Each answered page's ``VirtualCount`` (None where the service gave none), by page.
    counts: dict[int, int | None] = field(default_factory=dict)
    _ids: set[Hashable] = field(default_factory=set, repr=False)

    def start(self, first: ListingPage) -> list[int]:
        """Take page 1 and return the first batch of further pages (empty when done)."""
        rows = len(first.records)
        self.pages[1] = first.records if self.keep_records else []
        self.counts[1] = first.virtual_count
        total = first.virtual_count
        if rows == 0:
            return []
        if total is not None and total < rows:
            total = None  # fewer than the page holds (0, say): the count is plainly wrong
        # A count equal to the rows may be the length of the page (a common slip), not the total:
        # a short page 1 is then checked with one more page at its size.
        capped = rows < self.page_size and (total is None or total >= rows)
        # A server that caps the size, or ignores it and sends more, sets the size of every page.
        self.size = rows if capped or rows > self.page_size else self.page_size
        if total is not None and total > rows:
            self.expected_pages = math.ceil(total / self.size)
            # A full last page may not be the last: the count can be low. Check in the same go.
            past = 1 if total % self.size == 0 else 0
            return list(range(2, self.expected_pages + 1 + past))
        if rows < self.page_size and not capped:
            return []
        # Page 1 was full and the count is missing, or says nothing remains: probe, the count may
        # be wrong. A possible cap with no count probes one page at the capped size.
        return self._probe(after=1, trusted=total is not None or capped)

    def advance(self, batch: Sequence[int], results: Sequence[PageResult]) -> list[int]:
        """Take a batch's results (in the batch's order) and return the next batch.

        A driver fetching one page at a time may hand over the start of the batch only, up to
        the first short page: the pages after it would not be looked at.
        """
        for position, (number, page) in enumerate(zip(batch, results, strict=True)):
            if isinstance(page, NoSuchPage):
                if self._count_satisfied(number) or not _later_listings(results[position + 1 :]):
                    # The service says there is no more, and no later page says otherwise: the
                    # end, as an empty page would be (a count still unmet is a shortfall).
                    return []
                if self.strict:
                    raise page.error
                page = None
            if page is None:
                # Past a known count a page should be empty: losing it loses no listing that
                # the count knows of, but the end could not be confirmed.
                beyond_count = self.expected_pages is not None and number > self.expected_pages
                (self.unverified if beyond_count else self.missing).append(number)
                continue
            self.pages[number] = page.records if self.keep_records else []
            self.counts[number] = page.virtual_count
            if len(page.records) < self.size:
                return []
        expected = self.expected_pages
        if expected is not None and batch[-1] <= expected:
            if results[-1] is None:
                return []
            return self._probe(after=batch[-1], trusted=True)
        past = [
            page
            for number, page in zip(batch, results, strict=True)
            if expected is None or number > expected
        ]
        if all(page is None for page in past):
            # Probing past the count and nothing arrives: stop rather than probe for ever.
            return []
        return self._probe(after=batch[-1], trusted=False)

    def _count_satisfied(self, number: int) -> bool:
        # Every listing the smallest count given so far knows of is on the pages before this one
        # (a count that went down mid-pull is the newer one); with no count at all, a refusal
        # after page 1 is the only end the service gives.
        counts = [count for count in self.counts.values() if count is not None]
        return not counts or (number - 1) * self.size >= min(counts)

    def _probe(self, *, after: int, trusted: bool) -> list[int]:
        # Right after a count that looked correct one page suffices; otherwise fetch in waves.
        width = 1 if trusted else self.concurrency
        return list(range(after + 1, after + 1 + width))

    def unseen(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records whose ``ID`` no earlier call returned (records without one all pass).

        For a driver that hands pages out as they come and cannot deduplicate at the end.
        """
        fresh = []
        for record in records:
            key = record.get("ID")
            if key is None or key == "":
                fresh.append(record)
                continue
            key = str(key).strip()
            if key not in self._ids:
                self._ids.add(key)
                fresh.append(record)
        return fresh

    def shortfall(self, received: int) -> str | None:
        """Why the listings that arrived may not be all of them, or None when they are.

        The count changing between pages means listings moved while they were pulled, and with
        offset paging one can slip past unseen; fewer listings than the last count says means
        some never arrived. Without any count nothing can be told.
        """
        counts = [self.counts[n] for n in sorted(self.counts) if self.counts[n] is not None]
        if self.missing:
            return f"page(s) {sorted(self.missing)} could not be fetched"
        if not counts:
            return None
        first, last = counts[0], counts[-1]
        if first != last:
            return (
                f"the listings changed while they were pulled (the count went from {first} to "
                f"{last}): one may have slipped between pages"
            )
        if last is not None and received < last:
            return f"{received} of {last} listings arrived"
        return None

    def records(self) -> list[dict[str, Any]]:
        """Every record, in page order."""
        return [record for number in sorted(self.pages) for record in self.pages[number]]


def _later_listings(results: Sequence[PageResult]) -> bool:
    return any(isinstance(page, ListingPage) and page.records for page in results)


def refusal(number: int, error: EstatebotError) -> NoSuchPage:
    """The error of page ``number`` as a possible end of the listings, or raised again.

    Page 1 is never past the end: its refusal (an unknown chatbot) is always an error.
    """
    if number > 1 and says_no_such_page(error):
        return NoSuchPage(error)
    raise error


def is_last(page: PageResult, size: int) -> bool:
    """Whether a page ends a one-at-a-time walk (short, empty or refused)."""
    return isinstance(page, NoSuchPage) or page is None or len(page.records) < size


def warn_shortfall(pager: Pager, received: int, *, stacklevel: int = 3) -> None:
    """Warn (:class:`PullWarning`) when the pages read may not hold every listing."""
    reason = pager.shortfall(received)
    if reason is not None:
        warnings.warn(f"the listings read may be incomplete: {reason}", PullWarning, stacklevel)


class PageWalk:
    """:class:`Pager` one page at a time, for a driver that hands pages out as they come.

    Ask :meth:`next_page` what to fetch, hand :meth:`take` what came (or :func:`refusal` of an
    error), and call :meth:`finish` at the end. A listing seen on an earlier page is left out of
    later ones; a page left with none is not handed out. No I/O.
    """

    def __init__(self, page_size: int) -> None:
        self.page_size = page_size
        self.pager = Pager(page_size, concurrency=1, keep_records=False)
        self.received = 0
        self._batch: list[int] | None = None  # None until page 1 is taken
        self._results: list[PageResult] = []
        self._stopped = False

    def next_page(self) -> tuple[int, int] | None:
        """``(page number, page size)`` to fetch next, or None when the listings have ended."""
        if self._batch is None:
            return 1, self.page_size
        if self._stopped or len(self._results) == len(self._batch):
            if self._batch:
                self._batch = self.pager.advance(self._batch[: len(self._results)], self._results)
            self._results, self._stopped = [], False
            if not self._batch:
                return None
        return self._batch[len(self._results)], self.pager.size

    def take(self, result: PageResult) -> ListingPage | None:
        """Record what the page asked for brought; the page to hand out, if any."""
        if self._batch is None:
            if not isinstance(result, ListingPage):
                raise TypeError("page 1 must be a page: its failures are raised")
            self._batch = self.pager.start(result)
        else:
            self._results.append(result)
            self._stopped = is_last(result, self.pager.size)
        if not isinstance(result, ListingPage):
            return None
        fresh = self.pager.unseen(result.records)
        if not fresh:
            return None
        self.received += len(fresh)
        if len(fresh) == len(result.records):
            return result
        return result.model_copy(update={"records": fresh})

    def finish(self) -> None:
        """Warn when the pages handed out may not hold every listing."""
        warn_shortfall(self.pager, self.received, stacklevel=4)
