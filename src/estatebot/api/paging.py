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
* A ``VirtualCount`` below 0 (-1 for "unknown") is read as missing.
* A server page size of its own (PageSize ignored, every page 7 rows, or 150) is learned from page
  1 like a cap: smaller or larger than asked, it is the size of every later page.
* A page that brings no listing not seen before (by ``ID``; a record without one counts as new)
  ends the walk, unless a later page fetched with it brings some (rows moving between pages while
  the walk runs). A server that answers a page past the end with its last page again, or ignores
  the page number, is thus stopped at the first repeat.
* Every walk is bounded. While a count is credible (no fewer than the listings received), at most
  ``2 * ceil(count / size) + concurrency + 4`` pages are fetched; with no count, or one the
  listings outnumbered, at most :data:`UNCOUNTED_PAGE_LIMIT`. A walk that would go further (a
  server inventing listings page after page) raises :class:`~estatebot.errors.PullError`.
* A service counting pages from 0 answers ``PageNumber=1`` with its second page. When a walk ends
  with fewer listings than the count (every page agreeing on it), :meth:`Pager.final_check` asks
  page 0 once: listings on it not seen before are the first page (they go first) and the
  shortfall is gone. A 1-based service answers page 0 with page 1 again, an empty page or a
  refusal, none of which changes anything. Page 0 is not asked when the count was met or absent.
  When page 0 held listings but some are still missing and the walk's size is not the size
  asked for, page 1 is asked once more at the walk's size (page 1 was first asked before the
  service's own size was known).
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

#: The most pages a walk fetches when no credible count bounds it. A chatbot's listings are a
#: catalogue of homes, thousands at most: 10,000 pages hold a million of them at the default
#: size of 100, and 10,000 even at a server cap of one row per page, so no real catalogue comes
#: near; a server that never stops answering is still stopped, after minutes instead of never.
UNCOUNTED_PAGE_LIMIT = 10_000
# Pages past twice the count's pages, beside one wave of probes: room for rows moving mid-walk.
_SPARE_PAGES = 4


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

    The batches :meth:`start` and :meth:`advance` return stay within :meth:`page_limit`; a walk
    that needs a page past it raises :class:`~estatebot.errors.PullError`. When they return no
    page, :meth:`final_check` may still name page 0 (a service counting pages from 0): its result
    goes to :meth:`advance` like any batch's. A driver runs
    ``batch = pager.advance(batch, results) or pager.final_check()``.
    """

    page_size: int
    concurrency: int
    strict: bool = True
    #: False for a driver that hands pages out as they come: then :meth:`records` stays empty.
    keep_records: bool = True
    size: int = 0
    expected_pages: int | None = None
    #: The records of each page not seen on an earlier one, by page (kept with ``keep_records``).
    pages: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    missing: list[int] = field(default_factory=list)
    unverified: list[int] = field(default_factory=list)
    #: Each answered page's ``VirtualCount`` (None where the service gave none), by page.
    counts: dict[int, int | None] = field(default_factory=dict)
    #: How many listings not seen on an earlier page each answered page brought, by page.
    fresh: dict[int, int] = field(default_factory=dict)
    #: The highest page number handed out to fetch so far.
    asked: int = 0
    #: The pages :meth:`final_check` asked, in order: page 0, then perhaps page 1 again.
    final: list[int] = field(default_factory=list)
    _ids: set[Hashable] = field(default_factory=set, repr=False)
    _final_taken: int = field(default=0, repr=False)  # how many of their answers were taken

    @property
    def received(self) -> int:
        """The listings not seen before, over every page taken so far."""
        return sum(self.fresh.values())

    def start(self, first: ListingPage) -> list[int]:
        """Take page 1 and return the first batch of further pages (empty when done)."""
        rows = len(first.records)
        self.size = self.page_size  # until page 1 shows a size of the server's own
        self.asked = 1
        self.note(1, first)
        total = self.counts[1]
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
            return self._bounded(list(range(2, self.expected_pages + 1 + past)))
        if rows < self.page_size and not capped:
            return []
        # Page 1 was full and the count is missing, or says nothing remains: probe, the count may
        # be wrong. A possible cap with no count probes one page at the capped size.
        return self._probe(after=1, trusted=total is not None or capped)

    def note(self, number: int, page: ListingPage) -> list[dict[str, Any]]:
        """Take the page ``number`` that arrived; return its listings not seen on earlier pages.

        :meth:`start` and :meth:`advance` take their pages themselves. A driver that hands pages
        out as they come calls this first, for the listings to hand out; the pager's own later
        call for the same page then changes nothing.
        """
        if self.final:
            return self._note_final(page)
        if number in self.fresh:
            return []
        fresh = self.unseen(page.records)
        self.fresh[number] = len(fresh)
        self.counts[number] = _count(page)
        if self.keep_records and fresh:
            self.pages[number] = fresh
        return fresh

    def _note_final(self, page: ListingPage) -> list[dict[str, Any]]:
        # An answer to final_check, taken once. Its new listings are the start of the listings
        # (page 0 of a service counting from 0, then page 1 at the walk's size), so they are
        # kept as page 0; a page of nothing new (a service counting from 1) changes nothing.
        if self._final_taken == len(self.final):
            return []
        self._final_taken = len(self.final)
        fresh = self.unseen(page.records)
        if fresh:
            self.fresh[0] = self.fresh.get(0, 0) + len(fresh)
            self.counts[0] = _count(page)
            if self.keep_records:
                self.pages.setdefault(0, []).extend(fresh)
        return fresh

    def advance(self, batch: Sequence[int], results: Sequence[PageResult]) -> list[int]:
        """Take a batch's results (in the batch's order) and return the next batch.

        A driver fetching one page at a time may hand over the start of the batch only, up to
        the first short page: the pages after it would not be looked at.
        """
        if self.final:
            # The answer to final_check: listings on it not seen before are the first ones, and
            # any failure leaves the walk as it ended.
            if isinstance(results[0], ListingPage):
                self.note(batch[0], results[0])
            return []
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
            self.note(number, page)
            if len(page.records) < self.size:
                return []
            later = zip(batch[position + 1 :], results[position + 1 :], strict=True)
            if not self.fresh[number] and not any(self._brings_news(*pair) for pair in later):
                # A full page of listings already seen, and none new after it: the service
                # repeats a page past the end (or ignores the page number). Asking on would
                # only bring the same page again.
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
        return self._bounded(list(range(after + 1, after + 1 + width)))

    def _brings_news(self, number: int, page: PageResult) -> bool:
        # Whether a page of the batch has a listing not seen before: counted if already taken
        # (a one-at-a-time driver notes pages as they come), else looked for without taking it.
        if number in self.fresh:
            return self.fresh[number] > 0
        if not isinstance(page, ListingPage):
            return False
        return any(key is None or key not in self._ids for key in map(_key, page.records))

    def page_limit(self) -> int:
        """The most pages this walk may fetch, from what the service said so far.

        Twice the pages the largest count needs, plus a wave of probes and a few more, while the
        count is credible (the listings received do not outnumber it); else
        :data:`UNCOUNTED_PAGE_LIMIT`. A count proved low bounds nothing, as a count missing.
        """
        count = self._credible_count()
        if count is None:
            return UNCOUNTED_PAGE_LIMIT
        return 2 * math.ceil(count / self.size) + self.concurrency + _SPARE_PAGES

    def _credible_count(self) -> int | None:
        counts = [count for count in self.counts.values() if count is not None]
        if not counts or max(counts) < self.received:
            return None
        return max(counts)

    def _bounded(self, batch: list[int]) -> list[int]:
        # The batch up to the limit; nothing left of it means the service will not stop.
        limit = self.page_limit()
        within = [number for number in batch if number <= limit]
        if batch and not within:
            raise PullError(batch[0], EstatebotError(self._runaway()))
        if within:
            self.asked = max(self.asked, within[-1])
        return within

    def _runaway(self) -> str:
        count = self._credible_count()
        if count is not None:
            last = math.ceil(count / self.size)
            said = f"pages past {last} (page size {self.size}, count {count})"
        else:
            counts = [count for count in self.counts.values() if count is not None]
            given = f"count {max(counts)}, fewer than the listings" if counts else "no count"
            said = f"pages of listings not seen before (page size {self.size}, {given})"
        return f"the service kept answering {said}: stopped after {self.asked} pages"

    def final_check(self) -> list[int]:
        """The page to ask once the walk has ended (``[0]``, then perhaps ``[1]``), or ``[]``.

        Page 0 is asked once, when fewer listings arrived than every page's count agreed on: a
        service counting pages from 0 holds its first page there. When it did, and listings are
        still missing, page 1 is asked once more at the walk's size: it was asked first at the
        size asked for, before the service's own size was known, so the listings of page 1 at
        the walk's size (between page 0 and page 2) were never asked for. A count met, missing
        or changing (rows moving) asks nothing.
        """
        counts = {count for count in self.counts.values() if count is not None}
        if len(counts) != 1 or self.received >= min(counts):
            return []
        if not self.final:
            self.final.append(0)
            return [0]
        if self.final == [0] and self.fresh.get(0) and self.size != self.page_size:
            self.final.append(1)
            return [1]
        return []

    def unseen(self, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records whose ``ID`` no earlier call returned (records without one all pass).

        For a driver that hands pages out as they come and cannot deduplicate at the end.
        """
        fresh = []
        for record in records:
            key = _key(record)
            if key is None:
                fresh.append(record)
            elif key not in self._ids:
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
        """Every record not seen on an earlier page, in page order (the final check's first)."""
        return [record for number in sorted(self.pages) for record in self.pages[number]]


def _later_listings(results: Sequence[PageResult]) -> bool:
    return any(isinstance(page, ListingPage) and page.records for page in results)


def _key(record: dict[str, Any]) -> str | None:
    # A listing's identity across pages; a record without an ID cannot be told apart: None.
    key = record.get("ID")
    if key is None or key == "":
        return None
    return str(key).strip()


def _count(page: ListingPage) -> int | None:
    # A count below 0 (-1 for "unknown") is no count.
    count = page.virtual_count
    return None if count is None or count < 0 else count


def refusal(number: int, error: EstatebotError) -> NoSuchPage:
    """The error of page ``number`` as a possible end of the listings, or raised again.

    Page 1 is never past the end: its refusal (an unknown chatbot) is always an error. Page 0,
    asked only by :meth:`Pager.final_check` in case the service counts pages from 0, ends the walk
    as it stood whatever its error: a service counting from 1 may refuse it in any way.
    """
    if number == 0 or (number > 1 and says_no_such_page(error)):
        return NoSuchPage(error)
    raise error


def is_last(page: PageResult, size: int) -> bool:
    """Whether a page ends a one-at-a-time batch (short, empty or refused).

    A full page of listings already seen does not: a later page of the batch may bring new ones
    (rows moving), which :meth:`Pager.advance` looks at.
    """
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

    With ``page_zero`` the walk ends with the :meth:`Pager.final_check` of page 0 where it
    applies, for a driver that can send ``PageNumber=0``. Pages handed out cannot be taken back,
    so the listings page 0 brings (the first page of a service counting from 0) come out last.
    """

    def __init__(self, page_size: int, *, page_zero: bool = False) -> None:
        self.page_size = page_size
        self.page_zero = page_zero
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
            if not self._batch and self.page_zero:
                self._batch = self.pager.final_check()
            self._results, self._stopped = [], False
            if not self._batch:
                return None
        return self._batch[len(self._results)], self.pager.size

    def take(self, result: PageResult) -> ListingPage | None:
        """Record what the page asked for brought; the page to hand out, if any."""
        if self._batch is None:
            if not isinstance(result, ListingPage):
                raise TypeError("page 1 must be a page: its failures are raised")
            fresh = self.pager.note(1, result)
            self._batch = self.pager.start(result)
        else:
            number = self._batch[len(self._results)]
            self._results.append(result)
            self._stopped = is_last(result, self.pager.size)
            if not isinstance(result, ListingPage):
                return None
            fresh = self.pager.note(number, result)
        if not fresh:
            return None
        self.received += len(fresh)
        if len(fresh) == len(result.records):
            return result
        return result.model_copy(update={"records": fresh})

    def finish(self) -> None:
        """Warn when the pages handed out may not hold every listing."""
        warn_shortfall(self.pager, self.received, stacklevel=4)
