"""How an apply looks at its listings again (law 14), over HTTP against the emulator.

A window of writes is re-checked either by reading again the pages that held its listings at the
stale check, or by asking for each listing alone by MLS number; the pull records each listing's
page so the first way can be taken. Whichever way a window goes, an edit made since the check is
seen, a listing that moved to another page is still found, and one that is gone is told apart.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from estatebot.api.client import Client
from estatebot.emulator import EmulatorServer, running
from estatebot.listings.remote.pull import pull_result
from estatebot.listings.sync.apply.phases import apply_plan
from estatebot.listings.sync.apply.recheck import Looker, Whereabouts, recheck_targets
from estatebot.listings.sync.apply.send_tasks import Task, tasks_from_plan
from estatebot.listings.sync.apply.stale_check import Checked, Remote, check_against_pull
from estatebot.listings.sync.sync_plan import SyncPlan, plan_sync
from factories import make_listings

#: Enough listings that looking 20 of them up alone costs fewer requests than a whole pull.
LISTINGS = 2500
PAGE = 100
#: The listings a plan updates: the 20 first of page 2.
ON_PAGE_2 = range(PAGE, PAGE + 20)


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with running(seed=None) as emulator:
        emulator.add_listings(emulator.serial, make_listings(LISTINGS))
        yield emulator


@pytest.fixture
def client(server: EmulatorServer) -> Iterator[Client]:
    with Client(
        base_url=server.base_url,
        api_key=server.api_key,
        session_key=server.session_key,
        max_retries=0,
    ) as made:
        yield made


def repaint_plan(
    client: Client, server: EmulatorServer, positions: Sequence[int] = ON_PAGE_2
) -> SyncPlan:
    """A plan updating the listings at ``positions`` of a pull: a new description each."""
    remote = pull_result(client, server.serial, progress=False).frame
    sheet = remote.drop(columns=["ID"]).copy()
    sheet["AreaUnit"] = "Square Feet"
    for position in positions:
        sheet.loc[position, "Description"] = f"Repainted, listing {position}."
    return plan_sync(sheet, remote, blank_unknown_location=True)


def checked_updates(client: Client, server: EmulatorServer) -> tuple[list[Task], Checked]:
    """The operations of :func:`repaint_plan` and their stale check against a pull, as an apply
    makes it."""
    tasks = tasks_from_plan(repaint_plan(client, server))
    assert len(tasks) == len(ON_PAGE_2)
    checked = check_against_pull(tasks, Remote.of(pull_result(client, server.serial)), {})
    return tasks, checked


def looker_for(client: Client, server: EmulatorServer, checked: Checked) -> Looker:
    where = Whereabouts(LISTINGS, page_size=checked.page_size, pages=checked.pages)
    return Looker(client, server.serial, concurrency=4, where=where)


def lists(server: EmulatorServer) -> int:
    return server.request_counts.get("RealEstateList", 0)


def expected(tasks: Sequence[Task], checked: Checked) -> dict[str, str]:
    return {task.op: checked.hashes[task.op] for task in tasks}


def requests_of_one_window(
    server: EmulatorServer, looker: Looker, tasks: Sequence[Task], checked: Checked
) -> int:
    """Re-check ``tasks`` (none changed) and count the List requests it took."""
    before = lists(server)
    assert recheck_targets(looker, tasks, expected(tasks, checked)) == {}
    return lists(server) - before


# --------------------------------------------------------------------------- pages seen


def test_a_pull_names_the_page_each_listing_came_from(
    client: Client, server: EmulatorServer
) -> None:
    pulled = pull_result(client, server.serial, page_size=40, progress=False)
    assert pulled.page_size == 40
    assert len(pulled.pages) == len(pulled.records) == LISTINGS
    for number in sorted(set(pulled.pages)):
        page = client.listings.list_page(server.serial, page=number, page_size=40)
        on_it = [r["ID"] for r, n in zip(pulled.records, pulled.pages, strict=True) if n == number]
        assert on_it == [r["ID"] for r in page.records]


def test_the_check_keeps_the_page_of_each_listing_it_found_once(
    client: Client, server: EmulatorServer
) -> None:
    tasks, checked = checked_updates(client, server)
    assert checked.page_size == PAGE
    assert {checked.pages[task.op] for task in tasks} == {2}


# --------------------------------------------------------------------------- by pages


def test_a_window_on_one_page_is_read_with_one_request(
    client: Client, server: EmulatorServer
) -> None:
    tasks, checked = checked_updates(client, server)
    looker = looker_for(client, server, checked)
    before = lists(server)
    assert recheck_targets(looker, tasks, expected(tasks, checked)) == {}
    assert lists(server) - before == 1  # page 2, not one request per listing
    assert set(looker.seconds_per) == {"pages"}


def test_an_edit_seen_on_the_page_is_reported(client: Client, server: EmulatorServer) -> None:
    tasks, checked = checked_updates(client, server)
    edited = tasks[7]
    assert edited.id is not None
    data = server.store.listing_data(server.serial, [edited.id])[edited.id]
    server.store.replace_listing(server.serial, edited.id, {**data, "Bedrooms": 9})
    changed = recheck_targets(looker_for(client, server, checked), tasks, expected(tasks, checked))
    assert changed == {edited.op: "edited on the service"}


def test_a_listing_moved_off_its_page_is_looked_up_and_a_gone_one_told_apart(
    client: Client, server: EmulatorServer
) -> None:
    tasks, checked = checked_updates(client, server)
    # Five listings of page 1 go: page 2 now starts five listings later, and the first five
    # targets are on page 1. One target goes too.
    pulled = pull_result(client, server.serial, progress=False).frame
    first_page = [str(m) for m in pulled["MLSNumber"].iloc[:5]]
    gone = tasks[12]
    client.listings.delete(server.serial, [*first_page, gone.key], key_type="MLSNumber")
    looker = looker_for(client, server, checked)
    before = lists(server)
    changed = recheck_targets(looker, tasks, expected(tasks, checked))
    assert changed == {gone.op: "no longer on the service"}
    # Page 2 once, then each listing it did not show alone: the five moved and the one gone.
    assert lists(server) - before == 1 + 5 + 1


# --------------------------------------------------------------------------- which way


def test_each_way_is_tried_then_the_cheaper_one_taken(
    client: Client, server: EmulatorServer
) -> None:
    tasks, checked = checked_updates(client, server)
    looker = looker_for(client, server, checked)
    assert requests_of_one_window(server, looker, tasks, checked) == 1  # pages first
    # Then each alone, to time it too.
    assert requests_of_one_window(server, looker, tasks, checked) == len(tasks)
    assert set(looker.seconds_per) == {"pages", "alone"}
    # Then the way whose requests should take the least time for the window: a page is cheaper
    # unless it costs more than the 20 small requests it replaces.
    looker.seconds_per = {"pages": 0.030, "alone": 0.001}
    assert requests_of_one_window(server, looker, tasks, checked) == len(tasks)
    looker.seconds_per = {"pages": 0.015, "alone": 0.001}
    assert requests_of_one_window(server, looker, tasks, checked) == 1


def test_without_pages_each_listing_is_asked_for_alone(
    client: Client, server: EmulatorServer
) -> None:
    tasks, checked = checked_updates(client, server)
    where = Whereabouts(LISTINGS)  # a pull that could not tell the pages
    looker = Looker(client, server.serial, concurrency=4, where=where)
    before = lists(server)
    assert recheck_targets(looker, tasks, expected(tasks, checked)) == {}
    assert lists(server) - before == len(tasks)


def test_an_apply_whose_windows_go_by_pages_keeps_an_edit_made_midway(
    client: Client, server: EmulatorServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = repaint_plan(client, server)
    last = plan.updates[-1]
    assert last.id is not None
    update = client.listings.update
    sent: list[str] = []

    def interfering(body: dict[str, object], **options: object) -> int:
        if not sent:  # while the first window is written, someone edits the last listing
            data = server.store.listing_data(server.serial, [last.id])[last.id]
            server.store.replace_listing(server.serial, last.id, {**data, "Bedrooms": 9})
        sent.append(str(body.get("MLSNumber")))
        return update(body, **options)

    monkeypatch.setattr(client.listings, "update", interfering)
    report = apply_plan(
        plan, client, server.serial, progress=False, concurrency=2, recheck_after=0,
        recheck_window=10, sent_values=False,
    )  # fmt: skip
    outcomes = report.frame.set_index("key")["outcome"]
    assert outcomes[last.key] == "changed during apply"
    assert last.key not in sent
    assert (outcomes == "done").sum() == len(ON_PAGE_2) - 1
    stored = server.store.listing_data(server.serial, [last.id])[last.id]
    assert stored["Bedrooms"] == 9


def test_a_page_s_time_counts_the_look_ups_of_the_listings_it_no_longer_held(
    client: Client, server: EmulatorServer
) -> None:
    tasks, checked = checked_updates(client, server)
    # All of page 1 goes: every target moves to page 1, so page 2 shows none of them.
    pulled = pull_result(client, server.serial, progress=False).frame
    client.listings.delete(
        server.serial, [str(m) for m in pulled["MLSNumber"].iloc[:PAGE]], key_type="MLSNumber"
    )
    server.faults.only = {"RealEstateList"}
    server.faults.latency_ms = 20
    looker = looker_for(client, server, checked)
    # The page, then each listing it did not show: the page's time counts them all, at least
    # the latency of the page and of 20 look-ups 4 at a time (a page alone takes one), so a
    # service whose pages move soon goes the other way.
    assert requests_of_one_window(server, looker, tasks, checked) == 1 + len(tasks)
    assert looker.seconds_per["pages"] >= (1 + len(tasks) // 4) * 0.020


# --------------------------------------------------------------------------- the general rule

#: What may happen on the service between the check and a window's re-check.
EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["edit target", "delete target", "delete others", "edit other", "add"]),
        st.integers(0, 10_000),
    ),
    max_size=8,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    start=st.integers(0, 560),
    gap=st.integers(1, 12),
    count=st.integers(2, 24),
    events=EVENTS,
)
def test_by_pages_or_alone_a_re_check_finds_what_happened(
    start: int, gap: int, count: int, events: list[tuple[str, int]]
) -> None:
    """Whatever happened on the service since the check (targets edited or deleted, other
    listings deleted so that pages shift, listings added), reading a window's pages again finds
    exactly what the service shows: the same verdict as a whole pull, and the one the events
    call for."""
    listings = 600
    with (
        running(seed=None) as server,
        Client(
            base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
        ) as client,
    ):
        server.add_listings(server.serial, make_listings(listings))
        positions = sorted({min(start + k * gap, listings - 1) for k in range(count)})
        tasks = tasks_from_plan(repaint_plan(client, server, positions))
        assert len(tasks) == len(positions)
        checked = check_against_pull(tasks, Remote.of(pull_result(client, server.serial)), {})
        frame = pull_result(client, server.serial).frame
        targeted = {task.key for task in tasks}
        others = [
            (int(i), str(m))
            for i, m in zip(frame["ID"], frame["MLSNumber"], strict=True)
            if str(m) not in targeted
        ]
        called: dict[str, str] = {}
        for number, (event, pick) in enumerate(events):
            target, (other, _) = tasks[pick % len(tasks)], others[pick % len(others)]
            if event == "edit target" and target.op not in called:
                _edit(server, target.id, number)
                called[target.op] = "edited on the service"
            elif event == "delete target":
                client.listings.delete(server.serial, [target.key], key_type="MLSNumber")
                called[target.op] = "no longer on the service"
            elif event == "edit other":
                _edit(server, other, number)
            elif event == "delete others":  # a run of them: the pages after it shift
                run = others[pick % len(others) :][: 1 + pick % 40]
                client.listings.delete(server.serial, [m for _, m in run], key_type="MLSNumber")
            elif event == "add":
                server.add_listings(server.serial, make_listings(3, prefix=f"A{number}", seed=pick))
        hashes = expected(tasks, checked)
        where = Whereabouts(listings, page_size=checked.page_size, pages=checked.pages)
        by_pages = Looker(client, server.serial, concurrency=4, where=where)
        by_pages.seconds_per = {"pages": 0.0, "alone": 1.0}  # pages whenever they are fewer
        whole_or_alone = Looker(client, server.serial, concurrency=4, where=Whereabouts(listings))
        seen = recheck_targets(by_pages, tasks, hashes)
        assert seen == recheck_targets(whole_or_alone, tasks, hashes)
        assert seen == called
        # The pages were read whenever they were fewer than the listings.
        fewer = len({checked.pages[task.op] for task in tasks}) < len(tasks)
        assert (by_pages.seconds_per["pages"] > 0) == fewer  # timed afresh when read


def _edit(server: EmulatorServer, listing: Any, number: int) -> None:
    """Give the listing (when still there) a number of bedrooms no listing has."""
    found = server.store.listing_data(server.serial, [int(listing)])
    if found:
        data = found[int(listing)]
        server.store.replace_listing(server.serial, int(listing), {**data, "Bedrooms": 20 + number})
