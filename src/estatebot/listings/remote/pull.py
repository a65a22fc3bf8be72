"""Every page of a chatbot's listings into one canonical DataFrame, fetched concurrently.

The paging decisions live in :class:`Pager`, which does no I/O; two small drivers run it, one with
a thread pool for :class:`~estatebot.api.client.Client` (so it works the same in a script and inside
Jupyter's running event loop) and one with asyncio for
:class:`~estatebot.api.client.AsyncClient`.

The paging rules are described in :mod:`estatebot.api.paging`; ``client.listings.iter_pages``
runs the same :class:`Pager` one page at a time. Both drivers end with the pager's
:meth:`~Pager.final_check` (page 0 of a service counting from 0), and every walk is bounded: a
service that never stops answering raises :class:`PullError` instead of pulling for ever.
"""

from __future__ import annotations

import asyncio
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from estatebot._progress import progress_bar, set_total, settle_total
from estatebot.api.client import AsyncClient, Client
from estatebot.api.models import ListingPage
from estatebot.api.paging import Pager, PageResult, refusal
from estatebot.errors import EstatebotError, PullError, PullWarning
from estatebot.listings.remote.normalize import normalize_records, unreadable_values
from estatebot.listings.remote.sent_record import (
    fill_known,
    mark_location_unknown,
    open_known,
    service_address,
)

OnError = Literal["raise", "skip"]


@dataclass(frozen=True, eq=False)
class PullResult:
    """What a pull brought back, for estatebot's own use (users get :func:`pull_listings`).

    ``frame`` is the canonical frame :func:`pull_listings` returns (with the same ``attrs``);
    ``records`` the List records exactly as the service sent them, row for row with the frame
    (a backup keeps them, so a value the frame cannot hold is never lost); ``missing_pages``
    the pages skipped with ``on_error="skip"``.
    """

    frame: pd.DataFrame
    records: tuple[dict[str, Any], ...]
    missing_pages: tuple[int, ...]
    #: The page each record came from, row for row with ``records``, a page being ``page_size``
    #: listings (empty, and 0, when the pull cannot tell: a service counting its pages from 0).
    #: An apply reads again only the pages that held the listings it is about to write.
    pages: tuple[int, ...] = ()
    page_size: int = 0


def _finish(pager: Pager, expand_extensions: bool, known: Known) -> PullResult:
    records = pager.records()
    normalized = normalize_records(records, expand_extensions=expand_extensions)
    frame = normalized.frame
    unreadable = unreadable_values(frame, normalized.problems)
    seen_before = frame["ID"].duplicated() & frame["ID"].notna()
    frame = frame.loc[~seen_before].reset_index(drop=True)
    # The values the service holds that the frame could not: an update must never erase them.
    frame.attrs["unreadable"] = unreadable
    known.fill(frame)
    # The records exactly as the service sent them, row for row with the frame.
    kept = tuple(r for r, again in zip(records, seen_before, strict=True) if not again)
    pages = _pages_of(pager)
    kept_pages = (
        tuple(n for n, again in zip(pages, seen_before, strict=True) if not again) if pages else ()
    )
    missing = tuple(sorted(pager.missing))
    frame.attrs["missing_pages"] = list(missing)
    frame.attrs["unverified_pages"] = sorted(pager.unverified)
    level = _caller_level()  # the warnings below name the line that asked for the pull
    shortfall = pager.shortfall(len(frame))
    if shortfall is not None:
        # A listing missing from the pull would be planned as new, or its absence as a delete:
        # plan_sync refuses both while this is set.
        counts = [pager.counts[n] for n in sorted(pager.counts) if pager.counts[n] is not None]
        frame.attrs["incomplete"] = {
            "reason": shortfall,
            "received": len(frame),
            "expected": counts[-1] if counts else None,
        }
        if not pager.missing:
            warnings.warn(
                f"the pull may be incomplete: {shortfall}; plans made from it create and "
                "delete nothing (pull again)",
                PullWarning,
                stacklevel=level,
            )
    if pager.unverified and not pager.missing:
        warnings.warn(
            f"the count said every listing arrived, but the check past it (page(s) "
            f"{sorted(pager.unverified)}) failed: more listings may exist",
            PullWarning,
            stacklevel=level,
        )
    if pager.missing:
        warnings.warn(
            f"{len(pager.missing)} page(s) could not be fetched and were skipped: "
            f"{sorted(pager.missing)}; the frame is incomplete",
            PullWarning,
            stacklevel=level,
        )
    return PullResult(
        frame=frame,
        records=kept,
        missing_pages=missing,
        pages=kept_pages,
        page_size=pager.size if kept_pages else 0,
    )


def _pages_of(pager: Pager) -> list[int]:
    """The page of each record :meth:`Pager.records` returns, in its order; empty when the
    walk took listings from the final check (page 0 of a service counting from 0, perhaps
    page 1 again at another size), whose pages a later request could not name alike."""
    if 0 in pager.pages:
        return []
    return [number for number in sorted(pager.pages) for _ in pager.pages[number]]


@dataclass(frozen=True)
class Known:
    """Where a pull finds the values List never returns: the record of values last sent."""

    sent_values: str | Path | bool | None
    service: str | None
    serial: str

    @classmethod
    def of(cls, client: object, serial: str, sent_values: str | Path | bool | None) -> Known:
        return cls(sent_values, service_address(client), serial)

    def fill(self, frame: pd.DataFrame) -> None:
        record = open_known(self.sent_values, service=self.service, serial=self.serial)
        if record is None:
            mark_location_unknown(frame)
            return
        try:
            fill_known(frame, record)
        finally:
            record.close()


def _caller_level() -> int:
    """The ``stacklevel`` that makes a warning of :func:`_finish` name the first line outside
    this module: the caller's own call, whether it called :func:`pull_listings` (which wraps
    :func:`pull_result`), :func:`pull_result` or :func:`apull_listings`."""
    frame = sys._getframe(1)  # the caller, _finish: level 1
    level = 1
    while frame.f_back is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
        level += 1
    return level


def _check_options(page_size: int, concurrency: int, on_error: str) -> None:
    if page_size < 1:
        raise ValueError(f"page_size must be at least 1, got {page_size}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")


def pull_listings(
    client: Client,
    serial: str,
    *,
    city: str | None = None,
    sale_type: str | None = None,
    mls_number: str | None = None,
    page_size: int = 100,
    concurrency: int = 8,
    progress: bool | None = None,
    on_error: OnError = "raise",
    expand_extensions: bool = False,
    sent_values: str | Path | bool | None = None,
) -> pd.DataFrame:
    """All listings of a chatbot as a canonical frame (see `estatebot.listings.schema`).

    Pages after the first are fetched by up to `concurrency` threads. A page that still fails
    after the client's retries raises `PullError` naming the page; with `on_error="skip"` the
    pull goes on, the frame holds what arrived, its `attrs["missing_pages"]` lists the pages
    that did not, and a `PullWarning` says so. Values that cannot be parsed become NA and are
    reported by a `NormalizeWarning`; the service still holds them, so `attrs["unreadable"]`
    keeps their text by listing ID and field (a plan never erases them).

    `AreaUnit` and `Location`, which List never returns, are filled with the values last sent
    to each listing by an apply (the record `sent_values` names: None its default place, a
    path, or False for none; see `estatebot.listings.remote.sent_record`), else `AreaUnit`
    with the unit List's `Area` text shows (`120 m²`), else left empty.

    Args:
        client: The `Client` to pull with.
        serial: The chatbot's serial number.
        city: Only the listings of this city (None: every city).
        sale_type: Only the listings of this sale type, such as `"for_sale"` (None: both).
        mls_number: Only the listing with this MLS number (None: every listing).
        page_size: Listings asked for per page (at least 1; default 100).
        concurrency: Threads fetching the pages after the first (at least 1; default 8).
        progress: Show a progress bar of the pages (None: as `ESTATEBOT_PROGRESS` says,
            else on outside CI).
        on_error: `"raise"` (default) raises when a page fails; `"skip"` goes on without it
            and lists it in the frame's `attrs["missing_pages"]`.
        expand_extensions: Also give each extension key a `string` column `ext.<Key>`.
        sent_values: The record of the values last sent: None its default place, a path, or
            False for none.

    Returns:
        The canonical listing frame, one row per listing (one seen on two pages is kept
            once). Its `attrs` name the pages skipped (`missing_pages`) and those past the
            count that could not be checked (`unverified_pages`), the values that could not
            be read (`unreadable`) and, when listings may be missing, why (`incomplete`).

    Raises:
        PullError: When page 1 fails, when a later page still fails after the client's
            retries with `on_error="raise"`, or when the service never stops answering
            pages; it names the page.
        PlanError: When the record of values sent exists but cannot be opened.
        ValueError: When `page_size` or `concurrency` is below 1, or `on_error` is neither
            `"raise"` nor `"skip"`.

    Warns:
        PullWarning: When pages were skipped, or the listings read may not be all of them.
        NormalizeWarning: When some values could not be read (they are NA).
    """
    return pull_result(
        client, serial, city=city, sale_type=sale_type, mls_number=mls_number,
        page_size=page_size, concurrency=concurrency, progress=progress, on_error=on_error,
        expand_extensions=expand_extensions, sent_values=sent_values,
    ).frame  # fmt: skip


def pull_result(
    client: Client,
    serial: str,
    *,
    city: str | None = None,
    sale_type: str | None = None,
    mls_number: str | None = None,
    page_size: int = 100,
    concurrency: int = 8,
    progress: bool | None = None,
    on_error: OnError = "raise",
    expand_extensions: bool = False,
    sent_values: str | Path | bool | None = None,
) -> PullResult:
    """:func:`pull_listings`, with the List records as the service sent them beside the frame.

    For estatebot's own use: an apply keeps the records in its backup, so a value the frame
    cannot hold is never lost.
    """
    _check_options(page_size, concurrency, on_error)

    def get(number: int, size: int) -> ListingPage:
        try:
            return client.listings.list_page(
                serial,
                city=city,
                sale_type=sale_type,
                mls_number=mls_number,
                page=number,
                page_size=size,
            )
        except EstatebotError as error:
            raise PullError(number, error) from error

    def fetch(number: int, size: int) -> PageResult:
        try:
            return get(number, size)
        except PullError as failure:
            return _settle(number, failure, on_error)

    pager = Pager(page_size=page_size, concurrency=concurrency, strict=on_error == "raise")
    first = get(1, page_size)  # without page 1 there is nothing to go on: always raise
    with (
        progress_bar(None, "Pulling listings", progress=progress, unit="page") as bar,
        ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="estatebot-pull") as pool,
    ):
        batch = pager.start(first) or pager.final_check()
        _track(bar, pager, 1)
        pages = 1
        while batch:
            # The bar moves page by page, not once per batch (a batch may be every page).
            results: list[PageResult] = []
            for result in pool.map(lambda number: fetch(number, pager.size), batch):
                results.append(result)
                _track(bar, pager, 1)
            pages += len(results)
            batch = pager.advance(batch, results) or pager.final_check()
            _track(bar, pager, 0)
        settle_total(bar, pages)  # a pull no count sized (filters, say) ends 2/2, not 2/?
    return _finish(pager, expand_extensions, Known.of(client, serial, sent_values))


async def apull_listings(
    client: AsyncClient,
    serial: str,
    *,
    city: str | None = None,
    sale_type: str | None = None,
    mls_number: str | None = None,
    page_size: int = 100,
    concurrency: int = 8,
    progress: bool | None = None,
    on_error: OnError = "raise",
    expand_extensions: bool = False,
    sent_values: str | Path | bool | None = None,
) -> pd.DataFrame:
    """The awaitable twin of `pull_listings`, for an `AsyncClient`.

    It pages, skips, fills and warns exactly as `pull_listings` does.

    Args:
        client: The `AsyncClient` to pull with.
        serial: The chatbot's serial number.
        city: Only the listings of this city (None: every city).
        sale_type: Only the listings of this sale type, such as `"for_sale"` (None: both).
        mls_number: Only the listing with this MLS number (None: every listing).
        page_size: Listings asked for per page (at least 1; default 100).
        concurrency: Pages fetched at once after the first (at least 1; default 8).
        progress: Show a progress bar of the pages (None: as `ESTATEBOT_PROGRESS` says,
            else on outside CI).
        on_error: `"raise"` (default) raises when a page fails; `"skip"` goes on without it
            and lists it in the frame's `attrs["missing_pages"]`.
        expand_extensions: Also give each extension key a `string` column `ext.<Key>`.
        sent_values: The record of the values last sent: None its default place, a path, or
            False for none.

    Returns:
        The canonical listing frame, one row per listing (one seen on two pages is kept
            once). Its `attrs` name the pages skipped (`missing_pages`) and those past the
            count that could not be checked (`unverified_pages`), the values that could not
            be read (`unreadable`) and, when listings may be missing, why (`incomplete`).

    Raises:
        PullError: When page 1 fails, when a later page still fails after the client's
            retries with `on_error="raise"`, or when the service never stops answering
            pages; it names the page.
        PlanError: When the record of values sent exists but cannot be opened.
        ValueError: When `page_size` or `concurrency` is below 1, or `on_error` is neither
            `"raise"` nor `"skip"`.

    Warns:
        PullWarning: When pages were skipped, or the listings read may not be all of them.
        NormalizeWarning: When some values could not be read (they are NA).
    """
    _check_options(page_size, concurrency, on_error)
    gate = asyncio.Semaphore(concurrency)

    async def get(number: int, size: int) -> ListingPage:
        async with gate:
            try:
                return await client.listings.list_page(
                    serial,
                    city=city,
                    sale_type=sale_type,
                    mls_number=mls_number,
                    page=number,
                    page_size=size,
                )
            except EstatebotError as error:
                raise PullError(number, error) from error

    async def fetch(number: int, size: int) -> PageResult:
        try:
            result: PageResult = await get(number, size)
        except PullError as failure:
            result = _settle(number, failure, on_error)
        _track(bar, pager, 1)  # page by page, not once per batch
        return result

    pager = Pager(page_size=page_size, concurrency=concurrency, strict=on_error == "raise")
    first = await get(1, page_size)  # without page 1 there is nothing to go on: always raise
    with progress_bar(None, "Pulling listings", progress=progress, unit="page") as bar:
        batch = pager.start(first) or pager.final_check()
        _track(bar, pager, 1)
        pages = 1
        while batch:
            results = await asyncio.gather(*(fetch(number, pager.size) for number in batch))
            pages += len(results)
            batch = pager.advance(batch, results) or pager.final_check()
            _track(bar, pager, 0)
        settle_total(bar, pages)
    return _finish(pager, expand_extensions, Known.of(client, serial, sent_values)).frame


def _settle(number: int, failure: PullError, on_error: OnError) -> PageResult:
    # A refused page number may be the end of the listings, which the pager decides; any other
    # failure is raised, or skipped as None.
    try:
        return refusal(number, failure)
    except PullError:
        if on_error == "raise":
            raise
        return None


def _track(bar: Any, pager: Pager, done: int) -> None:
    # The total is every page handed out to fetch: those the count names, the check past the
    # last one that travels with them (else the bar would end at 21 of 20), and the final
    # check's pages. Without a count the total stays unknown.
    if pager.expected_pages is not None:
        pages = max(pager.expected_pages, pager.asked) + len(pager.final)
        if bar.total is None or bar.total < pages:
            set_total(bar, pages)
    bar.update(done)
