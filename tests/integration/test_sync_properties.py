"""Properties of the sync over generated sheets, each example against a fresh emulator over HTTP.

* Idempotence: apply a plan, plan again from the same sheet: nothing to do.
* The merge law: a field the sheet leaves out (no column) or blank never changes on the service.
* A kill at any operation, then a resume with the journal, leaves the service as an
  uninterrupted run does.

The sheets are the emulator's 16 small-seed listings, edited as Hypothesis draws: prices and
bedrooms changed, cells blanked, columns dropped, rows left out, new listings added.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import estatebot as eb
from estatebot.emulator import EmulatorServer, running

SETTINGS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
#: Optional fields a sheet may leave out or blank (the merge law's subjects).
OPTIONAL = ["HOAMonth", "Description", "City", "ZIP", "Latitude", "DepositFee"]
#: Required fields a sheet may leave out as a column (the listings keep theirs).
DROPPABLE = ["YearBuilt", "DaysOnMarket", "LotArea"]
WRITES = ("RealEstateCreate", "RealEstateUpdate", "RealEstateDelete")


@contextmanager
def service() -> Iterator[tuple[EmulatorServer, eb.Client]]:
    # A record of values sent of its own: examples run in one test, and a later emulator may be
    # given an earlier one's port, which the record would take for the same service.
    with (
        own_state_dir(),
        running(seed="small") as server,
        eb.Client(
            base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
        ) as client,
    ):
        yield server, client


@contextmanager
def own_state_dir() -> Iterator[None]:
    before = os.environ.get("ESTATEBOT_STATE_DIR")
    with tempfile.TemporaryDirectory(prefix="estatebot-state-") as folder:
        os.environ["ESTATEBOT_STATE_DIR"] = folder
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("ESTATEBOT_STATE_DIR", None)
            else:
                os.environ["ESTATEBOT_STATE_DIR"] = before


def pull(client: eb.Client, server: EmulatorServer) -> pd.DataFrame:
    return eb.pull_listings(client, server.serial, progress=False)


@st.composite
def edits(draw: st.DrawFn) -> dict[str, Any]:
    """How to turn the 16 listings into a sheet."""
    rows = st.integers(min_value=0, max_value=15)
    return {
        "reprice": draw(st.sets(rows, max_size=5)),
        "bedrooms": draw(st.sets(rows, max_size=3)),
        "blank": draw(st.lists(st.tuples(rows, st.sampled_from(OPTIONAL)), max_size=6)),
        "drop": draw(st.sets(st.sampled_from(OPTIONAL + DROPPABLE), max_size=3)),
        "leave_out": draw(st.sets(rows, max_size=3)),
        "new": draw(st.integers(min_value=0, max_value=2)),
    }


def sheet_of(remote: pd.DataFrame, edit: dict[str, Any]) -> pd.DataFrame:
    frame = remote.copy()
    for i in edit["reprice"]:
        column = "SalePrice" if pd.notna(frame.loc[i, "SalePrice"]) else "RentPrice"
        frame.loc[i, column] = float(frame.loc[i, column]) + 1000 * (i + 1)
    for i in edit["bedrooms"]:
        frame.loc[i, "Bedrooms"] = int(frame.loc[i, "Bedrooms"]) + 1
    for i, column in edit["blank"]:
        frame.loc[i, column] = pd.NA
    new = frame.iloc[: edit["new"]].assign(
        MLSNumber=[f"NEW-{n}" for n in range(edit["new"])],
        Url=[f"https://homes.example/new-{n}" for n in range(edit["new"])],
        ID=pd.NA,
    )
    frame = frame.drop(index=sorted(edit["leave_out"]))
    frame = pd.concat([frame, new], ignore_index=True)
    return frame.drop(columns=sorted(edit["drop"]))


def read(frame: pd.DataFrame) -> eb.Sheet:
    return eb.read_sheet(frame, defaults={"AreaUnit": "Square Feet"})


def state(client: eb.Client, server: EmulatorServer) -> pd.DataFrame:
    """The service's listings, comparable across two emulators (IDs left out)."""
    frame = pull(client, server).drop(columns=["ID"])
    return frame.sort_values("MLSNumber").reset_index(drop=True)


@SETTINGS
@given(edit=edits())
def test_applying_a_plan_then_planning_again_plans_nothing(edit: dict[str, Any]) -> None:
    with service() as (server, client):
        sheet = read(sheet_of(pull(client, server), edit))
        plan = eb.plan_sync(sheet, pull(client, server))
        report = eb.apply_plan(plan, client, server.serial, progress=False)
        assert report.ok, report
        again = eb.plan_sync(sheet, pull(client, server))
        assert again.is_empty, (again.summary(), [op.changes for op in again.updates])


@SETTINGS
@given(edit=edits())
def test_a_field_the_sheet_leaves_out_or_blank_never_changes(edit: dict[str, Any]) -> None:
    with service() as (server, client):
        before = pull(client, server)
        frame = sheet_of(before, edit)
        plan = eb.plan_sync(read(frame), before)
        eb.apply_plan(plan, client, server.serial, progress=False)
        after = pull(client, server).set_index("MLSNumber")
        old = before.set_index("MLSNumber")
        unsaid = [(key, column) for column in edit["drop"] for key in old.index]
        for i, column in edit["blank"]:
            if i not in edit["leave_out"] and column not in edit["drop"]:
                unsaid.append((str(before.loc[i, "MLSNumber"]), column))
        for key, column in unsaid:
            was, now = old.loc[key, column], after.loc[key, column]
            assert (pd.isna(was) and pd.isna(now)) or was == now, (key, column, was, now)


@SETTINGS
@given(edit=edits(), kill_at=st.integers(min_value=1, max_value=8))
def test_a_kill_at_any_operation_then_a_resume_ends_as_an_uninterrupted_run(
    edit: dict[str, Any], kill_at: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    journal = tmp_path_factory.mktemp("kill") / "sync.journal"
    with service() as (server, client):
        sheet = read(sheet_of(pull(client, server), edit))
        plan = eb.plan_sync(sheet, pull(client, server))
        eb.apply_plan(plan, client, server.serial, progress=False)
        expected = state(client, server)

    with service() as (server, client):
        plan = eb.plan_sync(sheet, pull(client, server))
        writes = {"count": 0}

        def die_after_the_write(response: httpx.Response) -> None:
            # The service carried the request out; the process dies before hearing it.
            if response.request.url.path.rsplit("/", 1)[-1] in WRITES:
                writes["count"] += 1
                if writes["count"] == kill_at:
                    raise KeyboardInterrupt

        hooked = httpx.Client(event_hooks={"response": [die_after_the_write]})
        doomed = eb.Client(
            base_url=server.base_url, api_key=server.api_key, session_key=server.session_key,
            http_client=hooked, max_retries=0,
        )  # fmt: skip
        try:
            eb.apply_plan(
                plan, doomed, server.serial, journal=journal, concurrency=1, progress=False
            )
        except KeyboardInterrupt:
            pass
        finally:
            hooked.close()
        resumed = eb.apply_plan(plan, client, server.serial, journal=journal, progress=False)
        assert resumed.ok, resumed
        assert state(client, server).equals(expected)
