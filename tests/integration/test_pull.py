"""pull_listings against the real emulator over loopback: every page, in order, typed."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

from estatebot.api.client import AsyncClient, Client
from estatebot.emulator import running
from estatebot.errors import PullError
from estatebot.listings import schema
from estatebot.listings.remote.bodies import to_update_bodies
from estatebot.listings.remote.pull import PullWarning, apull_listings, pull_listings
from factories import make_listings


def client_for(server: Any, **options: Any) -> Client:
    return Client(
        base_url=server.base_url,
        api_key=server.api_key,
        session_key=server.session_key,
        **options,
    )


@pytest.fixture
def server() -> Iterator[Any]:
    with running(seed=None) as emulator:
        yield emulator


@pytest.mark.parametrize("count", [0, 1, 20, 21, 100, 101, 2500])
def test_pull_gets_every_listing_once_in_order(server: Any, count: int) -> None:
    ids = server.add_listings(server.serial, make_listings(count))
    with client_for(server) as client:
        frame = pull_listings(client, server.serial, page_size=20, progress=False)
    assert list(frame["ID"]) == sorted(ids)
    assert list(frame["MLSNumber"]) == [f"T{i:06d}" for i in range(count)]
    assert list(frame.columns) == list(schema.COLUMNS)
    assert frame.dtypes.astype(str).to_dict() == {
        column: str(dtype) for column, dtype in schema.DTYPES.items()
    }


def test_pulled_values_are_typed_and_match_what_was_stored(server: Any) -> None:
    listings = make_listings(30)
    server.add_listings(server.serial, listings)
    with client_for(server) as client:
        frame = pull_listings(client, server.serial, progress=False)
    row = frame.iloc[0]
    first = listings[0]
    assert row["SaleType"] == first["SaleType"]
    assert row["Bedrooms"] == first["Bedrooms"]
    assert row["Images"] == first["Images"]
    assert row["ExtensionColumn"] == {"Pool": first["ExtensionColumn"][0]["value"]}
    assert row["Latitude"] == pytest.approx(first["Latitude"])
    rent = frame[frame["SaleType"] == "for_rent"].iloc[0]
    assert pd.notna(rent["RentPrice"])
    assert pd.isna(rent["SalePrice"])


def test_filters_reach_the_server(server: Any) -> None:
    server.add_listings(server.serial, make_listings(200))
    with client_for(server) as client:
        austin = pull_listings(client, server.serial, city="austin", progress=False)
        rentals = pull_listings(client, server.serial, sale_type="for_rent", progress=False)
        one = pull_listings(client, server.serial, mls_number="T000042", progress=False)
    assert len(austin) == 50
    assert set(austin["City"]) == {"Austin"}
    assert len(rentals) == 40
    assert set(rentals["SaleType"]) == {"for_rent"}
    assert list(one["MLSNumber"]) == ["T000042"]


def test_a_server_page_cap_below_the_requested_size() -> None:
    with running(seed=None, max_page_size=30) as server:
        server.add_listings(server.serial, make_listings(250))
        with client_for(server) as client:
            frame = pull_listings(client, server.serial, page_size=100, progress=False)
        assert frame["ID"].is_unique
        assert len(frame) == 250
        assert server.request_counts["RealEstateList"] == 9  # ceil(250 / 30)


def test_concurrency_fetches_pages_at_once(server: Any) -> None:
    server.add_listings(server.serial, make_listings(400))
    with client_for(server) as client:
        frame = pull_listings(client, server.serial, page_size=20, concurrency=8, progress=False)
    assert len(frame) == 400
    # 20 full pages, then one probe: a full last page could mean the count was too low.
    assert server.request_counts["RealEstateList"] == 21


def test_injected_failures_are_retried(server: Any) -> None:
    server.add_listings(server.serial, make_listings(300))
    server.faults.fail_rate = 0.3
    server.faults.only = {"RealEstateList"}
    with client_for(server, max_retries=8, backoff_base=0.01, backoff_max=0.05) as client:
        frame = pull_listings(client, server.serial, page_size=20, progress=False)
    assert len(frame) == 300
    assert server.request_counts["RealEstateList"] > 15


def test_a_page_that_keeps_failing_names_the_page(server: Any) -> None:
    server.add_listings(server.serial, make_listings(100))
    with client_for(server, max_retries=0) as client:
        first = client.listings.list_page(server.serial, page=1, page_size=20)
        assert len(first.records) == 20
        server.faults.fail_rate = 1.0
        server.faults.only = {"RealEstateList"}
        with pytest.raises(PullError) as caught:
            pull_listings(client, server.serial, page_size=20, progress=False)
    assert caught.value.page == 1
    assert "page 1" in str(caught.value)


def test_skip_keeps_what_arrived_and_records_the_missing_pages(server: Any) -> None:
    server.add_listings(server.serial, make_listings(200))
    server.faults.fail_rate = 0.5
    server.faults.only = {"RealEstateList"}
    with client_for(server, max_retries=0) as client:
        # Faults are random: every run must account for each listing, and some run must skip.
        failed_pages: list[int] = []
        for _ in range(50):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    frame = pull_listings(
                        client, server.serial, page_size=20, on_error="skip", progress=False
                    )
                except PullError as error:
                    failed_pages.append(error.page)
                    continue
            missing = frame.attrs["missing_pages"]
            unverified = frame.attrs["unverified_pages"]
            warned = any(issubclass(w.category, PullWarning) for w in caught)
            assert warned == bool(missing or unverified)
            assert set(missing) <= set(range(2, 11))  # the 10 pages the count announces
            assert len(frame) == 200 - 20 * len(missing)
            assert frame["ID"].is_unique
            if missing:
                break
        else:
            pytest.fail("no run skipped a page at a 50% failure rate")
    assert set(failed_pages) <= {1}  # only a lost page 1 stops a skipping pull


def test_ndjson_framing_does_not_touch_listings() -> None:
    with running(seed=None, framing="ndjson") as server:
        server.add_listings(server.serial, make_listings(45))
        with client_for(server) as client:
            frame = pull_listings(client, server.serial, page_size=20, progress=False)
        assert len(frame) == 45


async def test_async_pull_matches_the_sync_pull(server: Any) -> None:
    server.add_listings(server.serial, make_listings(130))
    with client_for(server) as client:
        expected = pull_listings(client, server.serial, page_size=20, progress=False)
    async with AsyncClient(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    ) as aclient:
        frame = await apull_listings(aclient, server.serial, page_size=20, progress=False)
    pd.testing.assert_frame_equal(frame, expected)


def test_round_trip_pull_push_pull_gives_an_equal_frame(server: Any) -> None:
    server.add_listings(server.serial, make_listings(60))
    with client_for(server) as client:
        before = pull_listings(client, server.serial, progress=False)
        # List never returns AreaUnit, so pushing pulled rows back must say which unit they use.
        bodies = to_update_bodies(
            before, serial=server.serial, key_type="MLSNumber", defaults={"AreaUnit": "Square Feet"}
        )
        for body in bodies:
            assert client.listings.update(body) == 1
        after = pull_listings(client, server.serial, progress=False)
    pd.testing.assert_frame_equal(after, before)


def test_progress_setting_does_not_change_the_result(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.add_listings(server.serial, make_listings(50))
    monkeypatch.setenv("ESTATEBOT_PROGRESS", "0")
    with client_for(server) as client:
        quiet = pull_listings(client, server.serial, page_size=20)
        shown = pull_listings(client, server.serial, page_size=20, progress=True)
    pd.testing.assert_frame_equal(quiet, shown)


class _CountingBar:
    """A progress bar that remembers each step it was moved by."""

    def __init__(self) -> None:
        self.total: int | None = None
        self.steps: list[int] = []

    def update(self, step: int) -> None:
        self.steps.append(step)

    def __enter__(self) -> _CountingBar:
        return self

    def __exit__(self, *_: object) -> None:
        return None


@pytest.fixture
def bars(monkeypatch: pytest.MonkeyPatch) -> list[_CountingBar]:
    """Every bar a pull makes in the test, in the order made."""
    import estatebot.listings.remote.pull as pulling

    made: list[_CountingBar] = []
    monkeypatch.setattr(
        pulling, "progress_bar", lambda *_, **__: made.append(_CountingBar()) or made[-1]
    )
    return made


def test_the_bar_moves_page_by_page(server: Any, bars: list[_CountingBar]) -> None:
    server.add_listings(server.serial, make_listings(95))
    with client_for(server) as client:
        frame = pull_listings(client, server.serial, page_size=10, concurrency=3)
    (bar,) = bars
    assert len(frame) == 95
    assert bar.total == 10  # known from page 1's count
    # Page 1, then each of the other nine pages on its own: never a batch in one jump.
    assert [step for step in bar.steps if step] == [1] * 10


async def test_the_async_bar_moves_page_by_page(server: Any, bars: list[_CountingBar]) -> None:
    server.add_listings(server.serial, make_listings(95))
    async with AsyncClient(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    ) as client:
        frame = await apull_listings(client, server.serial, page_size=10, concurrency=3)
    (bar,) = bars
    assert len(frame) == 95
    assert [step for step in bar.steps if step] == [1] * 10


def test_the_bar_counts_the_check_past_a_full_last_page(
    server: Any, bars: list[_CountingBar]
) -> None:
    server.add_listings(server.serial, make_listings(100))
    with client_for(server) as client:
        frame = pull_listings(client, server.serial, page_size=10, concurrency=3)
    (bar,) = bars
    assert len(frame) == 100
    # Ten pages counted, and page 11 fetched with them to check the count: 11 of 11, not 11 of 10.
    assert bar.total == 11
    assert sum(bar.steps) == 11
