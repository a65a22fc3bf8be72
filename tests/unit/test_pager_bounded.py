"""Every page walk ends, within a bound: repeated pages, 0-based pages, odd counts and sizes.

The pure :class:`Pager` and :class:`PageWalk` run against an in-memory List service whose
paging quirks are switches: a page past the end empty, refused or the last page again; pages
counted from 0; a count exact, missing, low, high or -1; a page size of the server's own.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estatebot import errors
from estatebot.api.models import ListingPage
from estatebot.api.paging import UNCOUNTED_PAGE_LIMIT, NoSuchPage, Pager, PageResult, PageWalk

CountMode = Literal["exact", "missing", "low", "high", "minus_one"]
PastEnd = Literal["empty", "refuse", "repeat_last"]
ZeroAnswer = Literal["repeat", "empty", "refuse"]


def refused(status: int) -> NoSuchPage:
    cls = errors.error_class_for(status)
    error = cls("No more data", operation="RealEstateList", code=status, status_code=status)
    return NoSuchPage(error)


@dataclass
class Server:
    """A List service of the listings ``ids`` (0 to ``total`` - 1 unless changed), in order.

    ``cap`` limits the rows of a page; ``own_size`` ignores PageSize altogether. A 1-based
    server answers page 0 as ``page_zero`` says; ``before`` runs before each page is answered
    (to move rows mid-walk). ``asked`` records every page number requested.
    """

    total: int
    cap: int = 10**6
    own_size: int | None = None
    count: CountMode = "exact"
    past_end: PastEnd = "empty"
    zero_based: bool = False
    page_zero: ZeroAnswer = "repeat"
    before: Callable[[Server, int], None] | None = None
    asked: list[int] = field(default_factory=list)
    ids: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ids = self.ids or list(range(self.total))

    def __call__(self, number: int, size: int) -> PageResult:
        self.asked.append(number)
        if self.before is not None:
            self.before(self, number)
        rows = self.own_size or min(size, self.cap)
        index = number if self.zero_based else number - 1
        records = self.ids
        if index < 0:  # page 0 of a server counting from 1
            if self.page_zero == "refuse":
                return refused(400)
            index = 0
            records = self.ids if self.page_zero == "repeat" else []
        elif number > 1 and index * rows >= len(self.ids):
            if self.past_end == "refuse":
                return refused(404)
            if self.past_end == "repeat_last":
                index = max(0, math.ceil(len(self.ids) / rows) - 1)
        chosen = records[index * rows : (index + 1) * rows]
        return page(chosen, self.virtual_count())

    def virtual_count(self) -> int | None:
        n = len(self.ids)
        counts = {"exact": n, "missing": None, "low": n // 2, "high": n + 37, "minus_one": -1}
        return counts[self.count]


def page(ids: list[Any], count: int | None) -> ListingPage:
    data: dict[str, Any] = {"List": [{"ID": i} for i in ids]}
    if count is not None:
        data["VirtualCount"] = count
    return ListingPage.model_validate(data)


def pull(server: Server, page_size: int, concurrency: int = 4) -> Pager:
    """The loop of ``pull_listings``: batches of pages, then the final check."""
    pager = Pager(page_size=page_size, concurrency=concurrency)
    first = server(1, page_size)
    assert isinstance(first, ListingPage)
    batch = pager.start(first) or pager.final_check()
    while batch:
        results = [server(number, pager.size) for number in batch]
        batch = pager.advance(batch, results) or pager.final_check()
    return pager


def walk_through(server: Server, pages: PageWalk) -> list[Any]:
    """The loop of ``iter_pages``: every listing handed out, in the order handed out."""
    handed: list[Any] = []
    while (ask := pages.next_page()) is not None:
        taken = pages.take(server(*ask))
        if taken is not None:
            handed += [record["ID"] for record in taken.records]
    pages.finish()
    return handed


def walk(server: Server, page_size: int) -> list[Any]:
    """:func:`walk_through` a walk that asks page 0, its warnings (not tested here) ignored."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", errors.PullWarning)
        return walk_through(server, PageWalk(page_size, page_zero=True))


def drive(pager: Pager, serve: Callable[[int], ListingPage]) -> None:
    """Run ``pager`` against ``serve`` (a page by number) until it ends or raises."""
    batch = pager.start(serve(1))
    while batch:
        batch = pager.advance(batch, [serve(number) for number in batch])


def ids(pager: Pager) -> list[Any]:
    return [record["ID"] for record in pager.records()]


# --------------------------------------------------------------------------- repeated pages


@pytest.mark.parametrize("count", ["exact", "missing", "minus_one"])
def test_37_listings_on_a_server_repeating_its_last_page_take_two_requests(
    count: CountMode,
) -> None:
    # Page 1 holds all 37 (< 100 asked, so maybe a cap): page 2 at 37 is page 1 again, the end.
    server = Server(37, count=count, past_end="repeat_last")
    pager = pull(server, page_size=100, concurrency=8)
    assert ids(pager) == list(range(37))
    assert server.asked == [1, 2]
    assert pager.shortfall(37) is None
    again = Server(37, count=count, past_end="repeat_last")
    assert walk(again, page_size=100) == list(range(37))
    assert again.asked == [1, 2]


@pytest.mark.parametrize("total", [40, 200, 203])
@pytest.mark.parametrize("count", ["exact", "missing", "low", "high"])
def test_a_repeated_last_page_ends_every_walk(total: int, count: CountMode) -> None:
    server = Server(total, count=count, past_end="repeat_last")
    pager = pull(server, page_size=20, concurrency=3)
    assert ids(pager) == list(range(total))
    # Without a count the walk goes in waves of 3; at most one wave past the last page.
    assert len(server.asked) <= math.ceil(total / 20) + 1 + 3 + (count == "high")
    assert walk(Server(total, count=count, past_end="repeat_last"), page_size=20) == list(
        range(total)
    )


def test_a_server_ignoring_the_page_number_is_read_once() -> None:
    # Every page number answers page 1 (full): page 2 brings nothing new, the end.
    asked: list[int] = []

    def same(number: int) -> ListingPage:
        asked.append(number)
        return page(list(range(50)), None)

    pager = Pager(page_size=50, concurrency=4)
    drive(pager, same)
    assert ids(pager) == list(range(50))
    assert asked == [1, 2, 3, 4, 5]  # page 1, then one wave of probes, all repeats


# --------------------------------------------------------------------------- rows moving


def insert_front_before(number: int) -> Callable[[Server, int], None]:
    """A listing added at the front just before page ``number``: later pages shift by one."""

    def hook(server: Server, asked: int) -> None:
        if asked == number:
            server.ids.insert(0, 1000 + number)

    return hook


def test_a_page_repeating_some_listings_but_adding_others_goes_on() -> None:
    # After page 1 a listing arrives at the front: page 2 starts with page 1's last listing.
    server = Server(45, count="exact", before=insert_front_before(2))
    pager = pull(server, page_size=10)
    assert ids(pager) == list(range(45))
    assert "the count went from 45 to 46" in str(pager.shortfall(45))


@pytest.mark.parametrize("driver", ["pull", "walk"])
def test_a_page_of_only_repeats_mid_batch_is_passed_when_later_pages_bring_new_ones(
    driver: str,
) -> None:
    # Pages of one row: a listing added before page 3 makes page 3 repeat page 2 entirely, but
    # pages 4 and on, fetched with it, still bring new listings.
    server = Server(10, count="exact", before=insert_front_before(3))
    seen = ids(pull(server, page_size=1)) if driver == "pull" else walk(server, page_size=1)
    assert seen == list(range(10))
    assert server.asked.count(3) == 1


# --------------------------------------------------------------------------- bounds


def test_a_server_inventing_listings_forever_is_stopped_at_the_fixed_bound() -> None:
    made = iter(range(10**9))
    asked: list[int] = []

    def endless(number: int) -> ListingPage:
        asked.append(number)
        return page([next(made) for _ in range(3)], None)

    pager = Pager(page_size=3, concurrency=8)
    with pytest.raises(errors.PullError) as caught:
        drive(pager, endless)
    assert len(asked) == max(asked) == UNCOUNTED_PAGE_LIMIT
    assert caught.value.page == UNCOUNTED_PAGE_LIMIT + 1
    assert "(page size 3, no count): stopped after 10000 pages" in str(caught.value)


def test_a_count_proved_low_bounds_nothing_more_than_a_missing_one() -> None:
    # 40 listings counted, yet listings keep coming: the count is no guide, the fixed bound is.
    made = iter(range(10**9))
    pager = Pager(page_size=5, concurrency=2)
    with pytest.raises(errors.PullError, match="count 40, fewer than the listings"):
        drive(pager, lambda number: page([next(made) for _ in range(5)], 40))
    assert pager.asked == UNCOUNTED_PAGE_LIMIT


def test_a_credible_count_bounds_a_walk_that_crawls_on() -> None:
    # 1000 counted, pages of 10: each page brings one new listing among repeats, for ever.
    # The count stays credible, so twice its 100 pages (plus a wave and 4) is the limit.
    news = iter(range(10**6, 10**9))
    asked: list[int] = []

    def crawl(number: int) -> ListingPage:
        asked.append(number)
        return page([*range(9), next(news)], 1000)

    pager = Pager(page_size=10, concurrency=4)
    with pytest.raises(errors.PullError) as caught:
        drive(pager, crawl)
    limit = 2 * 100 + 4 + 4
    assert len(asked) == pager.asked == limit
    message = str(caught.value)
    assert f"pages past 100 (page size 10, count 1000): stopped after {limit} pages" in message


@pytest.mark.parametrize(("count", "limit"), [(None, UNCOUNTED_PAGE_LIMIT), (-1, 10_000)])
def test_no_count_and_a_negative_count_give_the_fixed_bound(count: int | None, limit: int) -> None:
    pager = Pager(page_size=10, concurrency=4)
    pager.start(page(list(range(10)), count))
    assert pager.page_limit() == limit
    assert pager.counts[1] is None


def test_a_credible_count_gives_twice_its_pages_and_spare_ones() -> None:
    pager = Pager(page_size=10, concurrency=4)
    pager.start(page(list(range(10)), 95))
    assert pager.page_limit() == 2 * 10 + 4 + 4


# --------------------------------------------------------------------------- 0-based pages


@pytest.mark.parametrize("total", [20, 100, 250, 300])
@pytest.mark.parametrize("cap", [100, 30])
def test_a_zero_based_server_gives_its_first_page_on_page_zero(total: int, cap: int) -> None:
    server = Server(total, cap=cap, zero_based=True)
    pager = pull(server, page_size=100)
    assert ids(pager) == list(range(total))
    assert server.asked[-1] == 0
    assert server.asked.count(0) == 1
    assert pager.shortfall(total) is None
    handed = walk(Server(total, cap=cap, zero_based=True), page_size=100)
    first = min(total, cap)
    assert handed == list(range(first, total)) + list(range(first))  # page 0 comes out last


@pytest.mark.parametrize("driver", ["pull", "walk"])
def test_page_one_is_asked_again_at_the_size_a_short_page_one_showed(driver: str) -> None:
    # 45 listings from 0 in pages of 30 at most: page 1 holds the 15 after the first 30, so the
    # walk's size is 15. Page 0 at 15 brings listings 0-14; page 1 again at 15 brings 15-29.
    server = Server(45, cap=30, zero_based=True)
    if driver == "pull":
        pager = pull(server, page_size=100)
        assert ids(pager) == list(range(45))
        assert pager.final == [0, 1]
        assert pager.shortfall(45) is None
    else:
        assert walk(server, page_size=100) == list(range(30, 45)) + list(range(30))
    assert server.asked[-2:] == [0, 1]
    assert server.asked.count(0) == 1


def test_page_one_is_not_asked_again_when_page_zero_brought_nothing() -> None:
    # A 1-based server under a count too high, its own page size 7: page 0 repeats page 1.
    server = Server(50, own_size=7, count="high")
    pager = pull(server, page_size=100)
    assert pager.final == [0]
    assert server.asked.count(1) == 1


@pytest.mark.parametrize("answer", ["repeat", "empty", "refuse"])
def test_page_zero_of_a_one_based_server_changes_nothing(answer: ZeroAnswer) -> None:
    # A count too high leaves a shortfall: page 0 is asked, and whatever a 1-based server
    # answers, the listings and the shortfall stay as they were.
    server = Server(50, count="high", page_zero=answer)
    pager = pull(server, page_size=20)
    assert server.asked.count(0) == 1
    assert ids(pager) == list(range(50))
    assert pager.shortfall(50) == "50 of 87 listings arrived"
    assert 0 not in pager.counts


@pytest.mark.parametrize("count", ["exact", "low", "missing", "minus_one"])
def test_page_zero_is_not_asked_when_the_count_is_met_or_absent(count: CountMode) -> None:
    server = Server(50, count=count, page_zero="repeat")
    pager = pull(server, page_size=20)
    assert 0 not in server.asked
    assert ids(pager) == list(range(50))


def test_page_zero_is_not_asked_when_the_count_changed() -> None:
    server = Server(45, count="exact", before=insert_front_before(2))
    pull(server, page_size=10)
    assert 0 not in server.asked


def test_page_zero_is_asked_once_however_it_answers() -> None:
    server = Server(30, count="high", zero_based=True)
    pager = pull(server, page_size=10)
    assert server.asked.count(0) == 1
    assert pager.final_check() == []


def test_a_walk_without_page_zero_never_asks_it() -> None:
    # A driver that cannot send PageNumber=0 leaves PageWalk's page_zero off.
    server = Server(30, count="exact", zero_based=True)
    with pytest.warns(errors.PullWarning, match="0 of 30 listings arrived"):
        assert walk_through(server, PageWalk(100)) == []
    assert server.asked == [1]


# --------------------------------------------------------------------------- page sizes


@pytest.mark.parametrize("own", [7, 150])
@pytest.mark.parametrize("count", ["exact", "missing", "high"])
def test_a_page_size_of_the_servers_own_is_followed(own: int, count: CountMode) -> None:
    server = Server(400, own_size=own, count=count)
    pager = pull(server, page_size=100)
    assert pager.size == own
    assert ids(pager) == list(range(400))
    assert len(server.asked) <= math.ceil((400 + 37) / own) + 1 + 4
    assert walk(Server(400, own_size=own, count=count), page_size=100) == list(range(400))


# --------------------------------------------------------------------------- any server


@settings(max_examples=300, deadline=None)
@given(
    total=st.integers(0, 250),
    page_size=st.integers(1, 60),
    rows=st.integers(1, 80),
    own=st.booleans(),
    count=st.sampled_from(["exact", "missing", "low", "high", "minus_one"]),
    past_end=st.sampled_from(["empty", "refuse", "repeat_last"]),
    zero_based=st.booleans(),
    page_zero=st.sampled_from(["repeat", "empty", "refuse"]),
    concurrency=st.integers(1, 9),
)
def test_any_server_ends_within_the_bound_with_every_listing_once(
    total: int,
    page_size: int,
    rows: int,
    own: bool,
    count: CountMode,
    past_end: PastEnd,
    zero_based: bool,
    page_zero: ZeroAnswer,
    concurrency: int,
) -> None:
    def server() -> Server:
        return Server(
            total,
            cap=rows,
            own_size=rows if own else None,  # rows whatever is asked, not at most
            count=count,
            past_end=past_end,
            zero_based=zero_based,
            page_zero=page_zero,
        )

    serving = server()
    pager = pull(serving, page_size, concurrency)
    got = ids(pager)
    counted = {"exact": total, "high": total + 37}.get(count, 0)
    # The pages a walk needs, the one that shows the end, and one wave of probes past it.
    needed = math.ceil(max(total, counted) / pager.size) + 1 + concurrency
    asked = [number for number in serving.asked if number != 0]
    assert len(asked) <= needed
    assert len(asked) <= pager.page_limit()
    assert serving.asked.count(0) <= 1
    assert len(got) == len(set(got))
    assert set(got) <= set(range(total))
    if not zero_based:
        assert got == list(range(total))
    elif count in ("exact", "high"):
        # Pages from 0 under a count: page 0 (and page 1 at the walk's size) complete them.
        assert sorted(got) == list(range(total))
    # One page at a time, the same listings; the final check's come out last.
    handed = walk(server(), page_size)
    first = pager.fresh.get(0, 0)
    assert handed == got[first:] + got[:first]


@settings(max_examples=150, deadline=None)
@given(
    total=st.integers(1, 120),
    server_rows=st.integers(1, 50),
    page_size=st.integers(1, 50),
    count=st.sampled_from(["exact", "high"]),
)
def test_a_zero_based_server_with_a_count_gives_every_listing(
    total: int, server_rows: int, page_size: int, count: CountMode
) -> None:
    server = Server(total, cap=server_rows, count=count, zero_based=True)
    pager = pull(server, page_size)
    assert sorted(ids(pager)) == list(range(total))
    assert (pager.shortfall(total) is None) is (count == "exact")
    # Page 1 (the second page) shows the server's size when it is full, or is empty when all
    # fit on page 0: then the listings come in order too.
    rows = min(server_rows, page_size)
    if total <= rows or total >= 2 * rows:
        assert ids(pager) == list(range(total))
