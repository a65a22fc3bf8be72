"""Page walks end against deployments that page their own way, over real HTTP on loopback.

The emulator answers a page past the end with an empty page and counts pages from 1. A small
relay in front of it (a standard-library HTTP server on port 0, forwarding to the emulator)
changes only that: ``repeat_last`` answers a page past the end with the last page again, and
``zero_based`` counts pages from 0 (``PageNumber=n`` is the emulator's page ``n + 1``). Every
driver (``pull_listings``, ``apull_listings``, ``iter_pages``, its async twin) and an apply's
stale-check pull must end, with each listing once.
"""

from __future__ import annotations

import json
import math
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Literal

import httpx
import pytest

from estatebot.api.client import AsyncClient, Client
from estatebot.emulator import EmulatorServer
from estatebot.errors import PullWarning
from estatebot.listings.remote.pull import apull_listings, pull_listings
from estatebot.listings.sync.apply.phases import apply_plan
from estatebot.listings.sync.sync_plan import plan_sync
from factories import make_listings

Paging = Literal["repeat_last", "zero_based"]
Driver = Literal["pull", "apull", "iter_pages", "aiter_pages"]
DRIVERS: tuple[Driver, ...] = ("pull", "apull", "iter_pages", "aiter_pages")

#: List requests after which the relay refuses every page: a walk that got this far is the
#: unbounded loop under test, and ends (failing its assertions) instead of running for ever.
RUNAWAY = 200
# Headers of one hop, not the request's: the relay's own client sets them.
_HOP = frozenset({"host", "content-length", "connection", "accept-encoding", "transfer-encoding"})


class Relay(ThreadingHTTPServer):
    """The emulator behind a deployment that pages differently; ``pages`` lists every
    ``PageNumber`` asked of List, in the order asked."""

    daemon_threads = True

    def __init__(self, upstream: str, paging: Paging) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.paging = paging
        self.upstream = httpx.Client(base_url=upstream, timeout=10)
        self.pages: list[int] = []
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def answer(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> httpx.Response:
        if not path.endswith("/RealEstateList"):
            return self.upstream.request(method, path, headers=headers, content=body)
        fields = json.loads(body)
        number = fields.get("PageNumber", 1)
        with self._lock:
            self.pages.append(number)
            runaway = len(self.pages) > RUNAWAY
        if runaway:
            refused = {"Data": None, "Success": False, "Code": 400, "Message": "Too many pages"}
            return httpx.Response(400, json=refused)
        if self.paging == "zero_based":
            return self._list(headers, {**fields, "PageNumber": number + 1})
        reply = self._list(headers, fields)
        data = reply.json().get("Data") or {}
        if number > 1 and reply.is_success and not data.get("List"):
            last = max(1, math.ceil(data["VirtualCount"] / fields["PageSize"]))
            reply = self._list(headers, {**fields, "PageNumber": last})
        return reply

    def _list(self, headers: dict[str, str], fields: dict[str, object]) -> httpx.Response:
        return self.upstream.post("/chat/Chatbot/RealEstateList", headers=headers, json=fields)


class _Handler(BaseHTTPRequestHandler):
    server: Relay

    def do_GET(self) -> None:
        self._relay()

    def do_POST(self) -> None:
        self._relay()

    def _relay(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
        reply = self.server.answer(self.command, self.path, headers, body)
        self.send_response(reply.status_code)
        self.send_header("Content-Type", reply.headers.get("Content-Type", "application/json"))
        self.send_header("Content-Length", str(len(reply.content)))
        self.end_headers()
        self.wfile.write(reply.content)

    def log_message(self, format: str, *args: object) -> None:
        pass  # the test output is no place for an access log


@contextmanager
def relay(emulator: EmulatorServer, paging: Paging) -> Iterator[Relay]:
    running = Relay(emulator.base_url, paging)
    thread = threading.Thread(
        target=running.serve_forever,
        kwargs={"poll_interval": 0.05},
        name="paging-relay",
        daemon=True,
    )
    thread.start()
    try:
        yield running
    finally:
        running.shutdown()
        running.server_close()
        running.upstream.close()
        thread.join(timeout=5)


def client_via(emulator: EmulatorServer, via: Relay) -> Client:
    """A client of the emulator's demo workspace that reaches it through ``via``."""
    return Client(base_url=via.base_url, api_key=emulator.api_key, session_key=emulator.session_key)


def aclient_via(emulator: EmulatorServer, via: Relay) -> AsyncClient:
    """:func:`client_via`, async."""
    return AsyncClient(
        base_url=via.base_url, api_key=emulator.api_key, session_key=emulator.session_key
    )


async def mls_numbers(emulator: EmulatorServer, via: Relay, driver: Driver) -> list[str]:
    """Every MLS number ``driver`` reads through the relay, in the order read."""
    serial = emulator.serial
    if driver in ("pull", "iter_pages"):
        with client_via(emulator, via) as client:
            if driver == "pull":
                return list(pull_listings(client, serial, progress=False)["MLSNumber"])
            pages = client.listings.iter_pages(serial)
            return [r["MLSNumber"] for page in pages for r in page.records]
    async with aclient_via(emulator, via) as aclient:
        if driver == "apull":
            return list((await apull_listings(aclient, serial, progress=False))["MLSNumber"])
        apages = aclient.listings.iter_pages(serial)
        return [r["MLSNumber"] async for page in apages for r in page.records]


def expected(count: int) -> list[str]:
    return [listing["MLSNumber"] for listing in make_listings(count)]


@pytest.mark.parametrize("driver", DRIVERS)
async def test_37_listings_behind_a_server_repeating_its_last_page(
    empty_emulator: EmulatorServer, driver: Driver
) -> None:
    # Page 1 holds all 37 of the 100 asked (so 37 may be a cap): page 2 at size 37 is page 1
    # again, and that ends the walk. Unbounded before: waves of probes, each page 1 again.
    empty_emulator.add_listings(empty_emulator.serial, make_listings(37))
    with relay(empty_emulator, "repeat_last") as via, warnings.catch_warnings():
        warnings.simplefilter("error", PullWarning)
        assert await mls_numbers(empty_emulator, via, driver) == expected(37)
    assert via.pages == [1, 2]


@pytest.mark.parametrize("driver", DRIVERS)
async def test_a_full_last_page_repeated_ends_the_walk(
    empty_emulator: EmulatorServer, driver: Driver
) -> None:
    # 200 listings in pages of 100: the check past the full last page answers page 2 again.
    empty_emulator.add_listings(empty_emulator.serial, make_listings(200))
    with relay(empty_emulator, "repeat_last") as via:
        assert await mls_numbers(empty_emulator, via, driver) == expected(200)
    assert sorted(via.pages) == [1, 2, 3]  # pages 2 and 3 may go together


def test_a_sync_behind_a_server_repeating_its_last_page_ends(
    empty_emulator: EmulatorServer, tmp_path: Path
) -> None:
    # The apply pulls again before writing (its stale check): that pull must end too.
    serial = empty_emulator.serial
    empty_emulator.add_listings(serial, make_listings(37))
    with relay(empty_emulator, "repeat_last") as via, client_via(empty_emulator, via) as client:
        remote = pull_listings(client, serial, progress=False)
        sheet = remote.drop(columns=["ID"])
        on_sale = sheet.index[sheet["SaleType"] == "for_sale"][:1]
        sheet.loc[on_sale, "SalePrice"] = 654_321.0
        sheet.loc[on_sale, "AreaUnit"] = "Square Feet"
        plan = plan_sync(sheet, remote)
        assert plan.counts()["update"] == 1
        before = len(via.pages)
        report = apply_plan(plan, client, serial, backup=tmp_path / "b.json", progress=False)
        during = via.pages[before:]
        after = pull_listings(client, serial, progress=False)
    assert report.ok
    assert float(after.loc[on_sale[0], "SalePrice"]) == 654_321.0
    # Each pull of the apply, its stale check's among them, asked page 1 then page 2: no more.
    assert during
    assert during == [1, 2] * (len(during) // 2)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("count", [37, 250])
async def test_a_server_counting_pages_from_zero_gives_its_first_page(
    empty_emulator: EmulatorServer, driver: Driver, count: int
) -> None:
    # PageNumber=1 is the second page: the walk ends 100 listings (all 37) short of the count
    # and asks page 0 once, whose listings are the first page. A pull puts them first; pages
    # handed out one at a time cannot be taken back, so iter_pages hands them out last.
    empty_emulator.add_listings(empty_emulator.serial, make_listings(count))
    with relay(empty_emulator, "zero_based") as via, warnings.catch_warnings():
        warnings.simplefilter("error", PullWarning)
        got = await mls_numbers(empty_emulator, via, driver)
    first = min(count, 100)
    every = expected(count)
    assert got == (every if "pull" in driver else every[first:] + every[:first])
    assert via.pages.count(0) == 1
    assert via.pages[-1] == 0
