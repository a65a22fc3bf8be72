"""Paging as other deployments do it: a page past the end that repeats the last page, pages
counted from 0, a page size of the server's own, ``VirtualCount`` -1, IIS's HTML 404 past the end.

Every way of reading the listings (``pull_listings``, ``apull_listings``, ``iter_pages`` sync and
async) must return every listing exactly once, and end after a few List requests: a server that
answers every page number with rows must not be asked for ever (each server here answers at most
a budget of requests, then refuses with 418, so a client that keeps asking fails instead of
hanging).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foreign.helpers import HOWS, How, fetch_mls
from foreign.server import ForeignServer
from foreign.variant import LIST, Variant

#: pull_listings' default: how many pages it may probe at once past an unknown end.
CONCURRENCY = 8


@dataclass(frozen=True)
class Case:
    """A paging variant, how many listings it holds, and the most List requests a sane reading
    of them takes."""

    variant: Variant
    listings: int
    most_requests: int


def _pages(listings: int, size: int) -> int:
    return max(math.ceil(listings / size), 1)


CASES: dict[str, Case] = {
    # 37 listings and PageSize 100: page 1 is all of them; page 2 (at any size) is page 1 again.
    "repeat-last-37": Case(Variant(past_end="repeat_last"), 37, 3),
    # 40 listings in pages of 10: the last page is full, so the page after it is asked too,
    # and it is page 4 again.
    "repeat-last-cap-10-40": Case(
        Variant(past_end="repeat_last", page_cap=10), 40, _pages(40, 10) + 2
    ),
    # Page numbers from 0: the client's page 1 is the second page (empty for 37 listings).
    "zero-based-37": Case(Variant(zero_based=True), 37, 4),
    "zero-based-250": Case(Variant(zero_based=True), 250, _pages(250, 100) + 3 + CONCURRENCY),
    # PageSize ignored: 7 rows (fewer than asked) or 150 (more than asked, past the cap).
    "own-size-7": Case(Variant(own_page_size=7), 37, _pages(37, 7) + 2),
    "own-size-150": Case(Variant(own_page_size=150), 320, _pages(320, 150) + 2),
    # VirtualCount -1 ("not counted"): the end is the first short page.
    "count-minus-one-37": Case(Variant(virtual_count="minus_one"), 37, 3),
    "count-minus-one-200": Case(
        Variant(virtual_count="minus_one"), 200, _pages(200, 100) + 1 + CONCURRENCY
    ),
    # A page past the end answered by IIS's HTML 404 page (the last real page full).
    "html-404-past-end": Case(Variant(past_end="html404", page_cap=10), 40, _pages(40, 10) + 2),
    "html-404-past-end-count-minus-one": Case(
        Variant(past_end="html404", page_cap=10, virtual_count="minus_one"),
        40,
        _pages(40, 10) + 1 + CONCURRENCY,
    ),
}


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_every_listing_exactly_once_in_few_requests(
    server: ForeignServer, case: Case, how: How
) -> None:
    """Each reader returns each listing once, and stops after a bounded number of List
    requests."""
    server.variant = case.variant
    server.budget = 200
    seeded = [body["MLSNumber"] for body in server.seed(case.listings)]

    got = fetch_mls(server, how)

    twice = sorted(mls for mls, n in Counter(got).items() if n > 1)
    assert twice == [], f"returned more than once: {twice[:10]}"
    assert sorted(got) == sorted(seeded), (
        f"{len(got)} of {len(seeded)} listings; missing {sorted(set(seeded) - set(got))[:10]}"
    )
    asked = len(server.requests(LIST))
    assert asked <= case.most_requests, f"{asked} List requests (at most {case.most_requests})"


@pytest.mark.parametrize("how", HOWS)
def test_repeat_last_with_a_filter_and_a_small_page(server: ForeignServer, how: How) -> None:
    """A filter (Boston) and PageSize 5 against ``repeat_last``: the Boston listings once each,
    and the pull ends right after the last page that held new ones."""
    server.variant = Variant(past_end="repeat_last")
    server.budget = 200
    server.seed(37)
    boston = sorted(item["MLSNumber"] for item in server.listings() if item["City"] == "Boston")

    got = fetch_mls(server, how, city="Boston", page_size=5)

    assert sorted(got) == boston
    assert len(got) == len(boston)
    most = _pages(len(boston), 5) + 2 + (CONCURRENCY if how in ("pull", "apull") else 0)
    assert len(server.requests(LIST)) <= most


# --------------------------------------------------------------------------- the general rule

_PAST_ENDS = ("empty", "http404", "envelope404", "html404", "repeat_last")
_COUNTS = ("exact", "missing", "null", "low", "high", "page", "zero", "minus_one")


@st.composite
def _deployments(draw: st.DrawFn) -> tuple[Variant, int, int]:
    """A paging deployment, a number of listings and the page size a client asks for.

    Pages counted from 0 come with an exact count and an empty page past the end (or the last
    page again): with no count, or a refusal of page 1, nothing tells a client that listings
    sit on page 0.
    """
    zero_based = draw(st.booleans())
    past_ends = ("empty", "repeat_last") if zero_based else _PAST_ENDS
    variant = Variant(
        past_end=draw(st.sampled_from(past_ends)),
        zero_based=zero_based,
        page_cap=draw(st.sampled_from((5, 9, 100))),
        own_page_size=draw(st.sampled_from((0, 0, 3, 7, 150))),
        virtual_count="exact" if zero_based else draw(st.sampled_from(_COUNTS)),
    )
    listings = draw(st.integers(min_value=1 if zero_based else 0, max_value=130))
    return variant, listings, draw(st.sampled_from((7, 10, 25, 100)))


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(deployment=_deployments())
def test_any_paging_gives_every_listing_once(
    server: ForeignServer, deployment: tuple[Variant, int, int]
) -> None:
    """Whatever the deployment's paging (past the end, first page number, own or capped page
    size, count), ``pull_listings`` returns every listing once, in a bounded number of List
    requests."""
    variant, listings, page_size = deployment
    with server.store.lock:
        server.chatbot.listings.clear()
    server.variant = variant  # restarts the budget too
    server.budget = 400
    seeded = [body["MLSNumber"] for body in server.seed(listings)]
    before = len(server.requests(LIST))

    got = fetch_mls(server, "pull", page_size=page_size)

    assert sorted(got) == sorted(seeded)
    size = variant.own_page_size or min(page_size, variant.page_cap)
    if variant.zero_based and not variant.own_page_size:
        # Page 1 of a server counting from 0 is its second page: short of the size asked while
        # the count says more, it cannot be told from a cap without asking, and the pull goes
        # on in its size (the pager's bound is in that size) until page 0 settles it.
        second = min(size, max(0, listings - size))
        size = second if 0 < second < size else size
    most = _pages(listings + 40, size) + 2 + 2 * CONCURRENCY
    assert len(server.requests(LIST)) - before <= most
