"""The retry the apply report shows is a call that works: run as written, it finishes the job.

Against the real emulator over loopback, with updates made to fail by the emulator's faults.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import estatebot as eb
from estatebot.emulator import EmulatorServer, running
from factories import make_listings


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    with running(seed=None) as emulator:
        emulator.add_listings(emulator.serial, make_listings(8))
        yield emulator


@pytest.fixture
def client(server: EmulatorServer) -> Iterator[eb.Client]:
    with eb.Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    ) as c:
        yield c


def repriced(remote: pd.DataFrame) -> pd.DataFrame:
    """The listings for sale as a sheet, each 1,000 dearer (so each is one update)."""
    sheet = remote.drop(columns=["ID"]).reset_index(drop=True)
    sale = sheet["SaleType"] == "for_sale"
    sheet.loc[sale, "SalePrice"] = sheet.loc[sale, "SalePrice"] + 1000
    sheet["AreaUnit"] = "Square Feet"
    return sheet


def test_the_reported_retry_call_finishes_a_failed_apply(
    server: EmulatorServer, client: eb.Client, tmp_path: Path
) -> None:
    remote = eb.pull_listings(client, server.serial, progress=False)
    plan = eb.plan_sync(repriced(remote), remote)
    updates = len(plan.updates)
    assert updates >= 2
    server.faults.only = {"RealEstateUpdate"}
    server.faults.fail_rate = 1.0
    try:
        report = plan.apply(
            client,
            server.serial,
            journal=tmp_path / "sync.journal",
            backup=tmp_path / "backup.json",
            progress=False,
        )
    finally:
        server.faults.clear()
    assert len(report.failures) == updates
    call = report.retry_call
    assert call is not None
    assert str(tmp_path / "sync.journal") in call
    page = report._repr_html_()
    assert "eb-retry-call" in page
    assert page.index("Failed") < page.index("To retry")

    # The call, exactly as the report shows it, with the names it uses.
    again = eval(call, {"plan": plan, "client": client})
    assert again.ok
    assert again.counts()["updated"] == updates
    after = eb.pull_listings(client, server.serial, progress=False)
    assert eb.plan_sync(repriced(remote), after).is_empty
    assert server.api_key not in page


def test_without_a_journal_the_report_says_to_plan_again(
    server: EmulatorServer, client: eb.Client, tmp_path: Path
) -> None:
    remote = eb.pull_listings(client, server.serial, progress=False)
    plan = eb.plan_sync(repriced(remote), remote)
    server.faults.only = {"RealEstateUpdate"}
    server.faults.fail_rate = 1.0
    try:
        report = plan.apply(client, server.serial, backup=tmp_path / "backup.json", progress=False)
    finally:
        server.faults.clear()
    assert report.retry_call is None
    assert "kept no journal" in report._repr_html_()
