"""A pull's progress bar ends full, with the real total ("2/2"), whether or not a count sized
the pull ahead: a filtered pull (city=..., sale_type=...) must not end as a stub "2/?"."""

from __future__ import annotations

import asyncio
import io
import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tqdm import tqdm as terminal_tqdm
from tqdm.notebook import tqdm as notebook_tqdm

import estatebot as eb
from estatebot._progress import settle_total
from estatebot.api.models import ListingPage
from estatebot.errors import PullWarning
from estatebot.listings.remote import pull


@pytest.fixture
def bars(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every bar a pull makes, as a notebook bar (the widget a person sees), kept to look at."""
    made: list[Any] = []

    def notebook_bar(total: int | None, desc: str, **options: Any) -> Any:
        bar = notebook_tqdm(total=total, desc=desc, unit=options.get("unit", "it"), disable=False)
        made.append(bar)
        return bar

    monkeypatch.setattr(pull, "progress_bar", notebook_bar)
    return made


def ended_full(bar: Any, pages: int) -> None:
    widget = bar.container.children[1]
    assert (bar.n, bar.total) == (pages, pages)
    assert (widget.value, widget.max) == (pages, pages)
    assert widget.layout.width is None  # not the 20-pixel block of an unknown total
    assert widget.bar_style == "success"
    assert f"{pages}/{pages}" in str(bar)


@pytest.fixture(scope="module")
def emulator() -> Iterator[Any]:
    with eb.emulator.running(seed="demo") as server:
        yield server


@pytest.mark.parametrize(
    "filters",
    [{}, {"city": "Austin"}, {"city": "Austin", "sale_type": "for_sale"}, {"mls_number": "X"}],
)
def test_a_pull_ends_with_its_real_total(
    emulator: Any, bars: list[Any], filters: dict[str, str]
) -> None:
    with eb.Client(
        base_url=emulator.base_url, api_key=emulator.api_key, session_key=emulator.session_key
    ) as client:
        frame = eb.pull_listings(client, emulator.serial, sent_values=False, **filters)
    (bar,) = bars
    assert bar.n >= 1
    ended_full(bar, bar.n)
    if filters.get("city"):
        assert len(frame) > 0
        assert set(frame["City"]) == {filters["city"]}


def test_an_async_filtered_pull_ends_with_its_real_total(emulator: Any, bars: list[Any]) -> None:
    async def pulled() -> Any:
        async with eb.AsyncClient(
            base_url=emulator.base_url, api_key=emulator.api_key, session_key=emulator.session_key
        ) as client:
            return await eb.apull_listings(
                client, emulator.serial, city="Austin", sale_type="for_sale", sent_values=False
            )

    frame = asyncio.run(pulled())
    (bar,) = bars
    ended_full(bar, bar.n)
    assert len(frame) > 0


# --------------------------------------------------------------------------- any service


@dataclass
class Listings:
    """An in-memory List service: ``total`` listings, a count as ``count`` says."""

    total: int
    count: str
    asked: list[int] = field(default_factory=list)

    def list_page(self, serial: str, *, page: int, page_size: int, **_: Any) -> ListingPage:
        self.asked.append(page)
        start = (page - 1) * page_size if page >= 1 else 0
        rows = [{"ID": i + 1} for i in range(start, min(start + page_size, self.total))]
        counts = {"exact": self.total, "missing": None, "rows": len(rows), "minus_one": -1}
        data: dict[str, Any] = {"List": rows}
        if counts[self.count] is not None:
            data["VirtualCount"] = counts[self.count]
        return ListingPage.model_validate(data)


@dataclass
class FakeClient:
    listings: Listings


@settings(max_examples=40, deadline=None)
@given(
    total=st.integers(0, 60),
    page_size=st.integers(1, 25),
    count=st.sampled_from(["exact", "missing", "rows", "minus_one"]),
)
def test_every_walk_ends_full_whatever_the_count_says(
    total: int, page_size: int, count: str
) -> None:
    made: list[Any] = []

    def recording(total: int | None, desc: str, **options: Any) -> Any:
        bar = terminal_tqdm(total=total, desc=desc, file=io.StringIO(), disable=False)
        made.append(bar)
        return bar

    service = Listings(total, count)
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        # A count of the rows alone is a shortfall, warned of elsewhere: not what is tested here.
        warnings.simplefilter("ignore", PullWarning)
        patch.setattr(pull, "progress_bar", recording)
        pull.pull_listings(FakeClient(service), "serial", page_size=page_size, sent_values=False)
    (bar,) = made
    assert bar.n == len(service.asked)  # one step per page asked
    assert bar.total == bar.n  # ends full: never "n/?", never short of what was done
    assert bar.n >= max(1, math.ceil(total / page_size))


def test_settle_total_keeps_a_total_the_work_fell_short_of() -> None:
    short = notebook_tqdm(total=20, disable=False)
    short.update(18)
    settle_total(short, 18)
    assert short.total == 20  # 18/20 says what is missing: not hidden as 18/18
    unknown = notebook_tqdm(total=None, disable=False)
    unknown.update(2)
    settle_total(unknown, 2)
    assert (unknown.total, unknown.container.children[1].max) == (2, 2)
    off = notebook_tqdm(total=None, disable=True)
    settle_total(off, 2)
    assert off.total is None
