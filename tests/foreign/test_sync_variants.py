"""The sync workflow end to end against each deployment variant of this round: paging (the last
page repeated past the end, pages from 0, a page size of the server's own, ``VirtualCount`` -1,
IIS's 404 page past the end), transport (gzip, deflate, HTTP/1.0 bodies ended by the
connection, kept-alive connections closed every few replies), ABP's ``result`` envelope, and
refusals (429 with each hint, 503 ``Retry-After: 0``, an HTML 403 on the first write).

An export is written as a real xlsx, read with ``read_sheet``, planned with ``plan_sync``
against ``pull_listings`` and applied with a journal and a backup in the test's folder.
Afterwards the server holds exactly the sheet's listings, and each write the plan asked for was
carried out exactly once: none lost, none sent twice, nothing else written.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import estatebot as eb
from foreign.data import edited_export, write_xlsx
from foreign.helpers import carried_out, differences
from foreign.server import ForeignServer
from foreign.variant import LIST, WRITES, HtmlPage, Throttle, Variant


@dataclass(frozen=True)
class Case:
    """A variant, how many listings the server starts with, and whether one more run with the
    same journal may finish what a refusal (not retried by design) left undone."""

    variant: Variant
    listings: int = 20
    rerun: bool = False


_THROTTLED = WRITES | {LIST}
CASES: dict[str, Case] = {
    "repeat-last": Case(Variant(past_end="repeat_last")),
    "repeat-last-cap-10": Case(Variant(past_end="repeat_last", page_cap=10)),
    "zero-based": Case(Variant(zero_based=True)),
    "zero-based-cap-10": Case(Variant(zero_based=True, page_cap=10)),
    "own-page-size-7": Case(Variant(own_page_size=7)),
    "own-page-size-150": Case(Variant(own_page_size=150), listings=170),
    "count-minus-one-cap-10": Case(Variant(virtual_count="minus_one", page_cap=10)),
    "html-404-past-end": Case(Variant(past_end="html404", page_cap=10)),
    "data-under-result": Case(Variant(abp_envelope=True)),
    "gzip": Case(Variant(gzip=True)),
    "deflate-zlib": Case(Variant(deflate="zlib")),
    "deflate-raw": Case(Variant(deflate="raw")),
    "http10-close-delimited": Case(Variant(close_delimited=True)),
    "keep-alive-closed-every-3": Case(Variant(close_every=3)),
    "429-ratelimit-reset": Case(
        Variant(throttle=Throttle(_THROTTLED, "1", 2, hint="ratelimit_reset", hold=True))
    ),
    "429-x-ratelimit-reset": Case(
        Variant(throttle=Throttle(_THROTTLED, "1", 2, hint="x_ratelimit_reset", hold=True))
    ),
    "429-retry-after-date": Case(Variant(throttle=Throttle(_THROTTLED, "date+1", 2, hold=True))),
    "503-retry-after-0": Case(Variant(throttle=Throttle(WRITES, "0", 3, status=503))),
    "html-403-first-write": Case(Variant(html_page=HtmlPage(WRITES, 403, count=1)), rerun=True),
}


def _counts(plan: eb.SyncPlan) -> dict[str, Any]:
    counts = plan.summary().counts
    return {name: counts[name] for name in ("create", "update", "delete", "invalid", "held_back")}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_sync_makes_the_server_equal_to_the_sheet(
    server: ForeignServer, client: eb.Client, tmp_path: Path, case: Case
) -> None:
    """Seed, export with a day's edits, read, plan 4 creates, 6 updates, 3 deletes, apply:
    the server then equals the sheet, each planned write was carried out once, and a new plan
    from a new pull is empty."""
    server.variant = case.variant
    server.budget = 1000  # a client paging for ever fails here instead of hanging
    seeded = server.seed(case.listings)
    stored = server.listings()
    desired = edited_export(seeded)
    sheet = eb.read_sheet(
        write_xlsx(tmp_path / "export.xlsx", desired), defaults={"CurrencySymbol": "$"}
    )

    remote = eb.pull_listings(client, server.serial, progress=False)
    assert sorted(remote["MLSNumber"]) == sorted(item["MLSNumber"] for item in stored)
    plan = eb.plan_sync(sheet, remote, key="MLSNumber", delete_missing=True)
    assert _counts(plan) == {"create": 4, "update": 6, "delete": 3, "invalid": 0, "held_back": 0}

    journal = tmp_path / "sync.journal"
    report = plan.apply(client, server.serial, journal=journal, backup=tmp_path / "backup.json")
    if case.rerun:
        # The refusal is reported, not retried (a 403 is no passing state); the same journal
        # finishes the rest.
        assert not report.ok
        report = plan.apply(client, server.serial, journal=journal, backup=tmp_path / "b2.json")
    assert report.ok, report.failures.to_dict("records")
    assert (tmp_path / "backup.json").exists()
    assert journal.exists()

    assert differences(server, desired) == []
    asked = Counter(f"{op.action} {op.key}" for op in plan.operations())
    assert carried_out(server, stored) == asked

    again = eb.plan_sync(
        sheet, eb.pull_listings(client, server.serial, progress=False), delete_missing=True
    )
    assert _counts(again) == {"create": 0, "update": 0, "delete": 0, "invalid": 0, "held_back": 0}
