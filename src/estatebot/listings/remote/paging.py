"""The paging decisions of a listing pull, apart from any I/O.

Paging rules (the addendum's decisions, and the variants the client must survive):

* Page 1 is fetched first. Its ``VirtualCount`` (the total matching) says how many pages remain;
  those are fetched together, at most ``concurrency`` at a time.
* A server that caps the page size returns fewer rows than asked while ``VirtualCount`` says more
  remain: the cap becomes the page size for every later page (page numbers count in that size).
* ``VirtualCount`` may be missing or wrong, so the pull only ends on a short or empty page: when
  the count says the last page is full, the page after it is fetched together with the expected
  ones (no extra round trip), and, when the count was missing or too small, waves of
  ``concurrency`` pages follow until a short one arrives.
* Pages are reassembled in page order, and a listing seen twice (rows moving between pages while
  the pull runs) is kept once, at its first position.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from estatebot.api.models import ListingPage


@dataclass
class Pager:
    """Which pages to fetch next, given the pages seen so far. Pure: no I/O.

    ``None`` in a batch of results stands for a page that failed and was skipped: ``missing``
    lists those within the count (or all, when there is no count), ``unverified`` the probes
    past the count that failed, so the end of the listings could not be confirmed.
    """

    page_size: int
    concurrency: int
    size: int = 0
    expected_pages: int | None = None
    pages: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    missing: list[int] = field(default_factory=list)
    unverified: list[int] = field(default_factory=list)
    #: Each answered page's ``VirtualCount`` (None where the service gave none), by page.
    counts: dict[int, int | None] = field(default_factory=dict)

    def start(self, first: ListingPage) -> list[int]:
        """Take page 1 and return the first batch of further pages (empty when done)."""
        rows = len(first.records)
        self.pages[1] = first.records
        self.counts[1] = first.virtual_count
        total = first.virtual_count
        if rows == 0:
            return []
        capped = rows < self.page_size and (total is None or total > rows)
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

    def advance(self, batch: Sequence[int], results: Sequence[ListingPage | None]) -> list[int]:
        """Take a batch's results (in the batch's order) and return the next batch."""
        for number, page in zip(batch, results, strict=True):
            if page is None:
                # Past a known count a page should be empty: losing it loses no listing that
                # the count knows of, but the end could not be confirmed.
                beyond_count = self.expected_pages is not None and number > self.expected_pages
                (self.unverified if beyond_count else self.missing).append(number)
                continue
            self.pages[number] = page.records
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

    def _probe(self, *, after: int, trusted: bool) -> list[int]:
        # Right after a count that looked correct one page suffices; otherwise fetch in waves.
        width = 1 if trusted else self.concurrency
        return list(range(after + 1, after + 1 + width))

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
