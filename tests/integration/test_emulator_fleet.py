"""The emulator hosting a fleet, over real HTTP: its chatbots and listings, the fleet sample
planned against it, faults on one chatbot only, the requests in flight, and the banner."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pandas as pd
import pytest

import estatebot as eb
from clirun import run_cli, serving
from estatebot.api.client import Client
from estatebot.emulator import DEMO_SERIAL, EmulatorServer, fleet_serials, running
from estatebot.emulator.fleet_seed import AGENT_COLUMN
from estatebot.sample import READ_OPTIONS
from estatebot.sample.fleet_sample import FleetSample, write_fleet_sample

CHATBOTS, LISTINGS = 5, 30
LIST_PATH = "/chat/Chatbot/RealEstateList"


@pytest.fixture(scope="module")
def fleet() -> Iterator[EmulatorServer]:
    with running(seed="small", chatbots=CHATBOTS, listings_per_chatbot=LISTINGS) as server:
        yield server


@pytest.fixture
def fleet_client(fleet: EmulatorServer) -> Iterator[Client]:
    with Client(
        base_url=fleet.base_url, api_key=fleet.api_key, session_key=fleet.session_key
    ) as made:
        yield made


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> FleetSample:
    folder = tmp_path_factory.mktemp("fleet")
    return write_fleet_sample(folder, CHATBOTS, LISTINGS, changed=0.1)


def page(server: EmulatorServer, serial: str) -> httpx.Response:
    """One RealEstateList page of a chatbot, sent raw (no retries), with the demo session key."""
    body = {"SerialNumber": serial, "PageIndex": 1, "PageSize": 5}
    return httpx.post(
        server.base_url + LIST_PATH,
        json=body,
        headers={"chatrobot-sessionkey": server.session_key},
        timeout=10,
    )


# --------------------------------------------------------------------------- chatbots, listings


def test_the_fleet_is_in_the_demo_workspace_besides_the_demo_chatbot(
    fleet: EmulatorServer, fleet_client: Client
) -> None:
    assert fleet.serials == fleet_serials(CHATBOTS)
    assert fleet.serial == DEMO_SERIAL not in fleet.serials
    # The demo chatbot stays as the seed made it.
    assert len(eb.pull_listings(fleet_client, DEMO_SERIAL, progress=False)) == 16
    mls: set[str] = set()
    for number, serial in enumerate(fleet.serials, start=1):
        chatbot = fleet.store.chatbot(serial)
        assert chatbot is not None
        assert chatbot.settings["Name"] == f"Agent {number:03d} Homes"
        listings = eb.pull_listings(fleet_client, serial, progress=False)
        assert len(listings) == LISTINGS
        mls |= set(listings["MLSNumber"])
    assert len(mls) == CHATBOTS * LISTINGS  # no two chatbots share an MLS number


def test_the_default_emulator_has_no_fleet() -> None:
    with running(seed=None) as server:
        assert server.serials == []
        assert server.store.chatbot(fleet_serials(1)[0]) is None


def test_a_fleet_size_out_of_range_is_refused_before_anything_starts(tmp_path: Path) -> None:
    database = tmp_path / "fleet.db"
    with (
        pytest.raises(ValueError, match=r"^listings_per_chatbot must be .*not -1$"),
        running(db=database, chatbots=2, listings_per_chatbot=-1),
    ):
        pass
    assert not database.exists()


def test_restarting_on_a_database_file_keeps_the_fleet_as_it_was(tmp_path: Path) -> None:
    database = tmp_path / "fleet.db"
    with running(db=database, seed=None, chatbots=2, listings_per_chatbot=7) as server:
        first = [server.store.count_listings(serial) for serial in server.serials]
    with running(db=database, seed=None, chatbots=3, listings_per_chatbot=7) as server:
        again = [server.store.count_listings(serial) for serial in server.serials]
    assert first == [7, 7]
    assert again == [7, 7, 7]


# --------------------------------------------------------------------------- the fleet sample


def _agent_rows(sample: FleetSample, agent: str) -> eb.Sheet:
    """The shared export's rows of one agent, as a manifest's filter gives them."""
    shared = pd.read_excel(sample.export, dtype=object, engine="calamine")
    rows = shared[shared[AGENT_COLUMN] == agent].reset_index(drop=True)
    return eb.read_sheet(rows, progress=False, **READ_OPTIONS["reso"])


@pytest.mark.parametrize("number", [1, 3, CHATBOTS])
def test_each_agents_rows_plan_only_the_changed_prices(
    fleet: EmulatorServer, fleet_client: Client, sample: FleetSample, number: int
) -> None:
    serial, agent = sample.serials[number - 1], sample.agents[number - 1]
    assert serial == fleet.serials[number - 1]
    remote = eb.pull_listings(fleet_client, serial, progress=False)
    changed = set(sample.changed[serial])
    assert len(changed) == round(0.1 * LISTINGS)
    for sheet in (
        _agent_rows(sample, agent),
        eb.read_sheet(sample.sheets[agent], progress=False, **READ_OPTIONS["reso"]),
    ):
        assert sheet.errors.empty, sheet.summary()
        plan = eb.plan_sync(sheet, remote)
        assert (len(plan.creates), len(plan.deletes), len(plan.invalid)) == (0, 0, 0)
        assert not plan.held_back
        assert {op.key for op in plan.updates} == changed
        for op in plan.updates:
            assert {change.field for change in op.changes} <= {
                "SalePrice",
                "RentPrice",
                "UnitAreaPrice",
            }


def test_the_unchanged_rows_plan_nothing_to_do(
    fleet: EmulatorServer, fleet_client: Client, sample: FleetSample
) -> None:
    serial, agent = sample.serials[1], sample.agents[1]
    sheet = _agent_rows(sample, agent)
    unchanged = sheet.frame[~sheet.frame["MLSNumber"].isin(sample.changed[serial])]
    remote = eb.pull_listings(fleet_client, serial, progress=False)
    plan = eb.plan_sync(eb.read_sheet(unchanged, progress=False), remote, delete_missing=False)
    assert plan.is_empty


# --------------------------------------------------------------------------- faults, in flight


def test_a_429_storm_on_one_chatbot_leaves_the_others_alone(fleet: EmulatorServer) -> None:
    stormed, calm = fleet.serials[0], fleet.serials[1]
    fleet.faults.only_chatbots = {stormed}
    fleet.faults.throttle_burst = 4
    try:
        assert page(fleet, calm).status_code == 200
        assert [page(fleet, stormed).status_code for _ in range(4)] == [429] * 4
        assert page(fleet, calm).status_code == 200
        assert page(fleet, stormed).status_code == 200  # the storm is over
        fleet.faults.rate_limit = (2, 60)
        codes = {serial: [page(fleet, serial).status_code for _ in range(3)] for serial in
                 (stormed, calm)}  # fmt: skip
        assert codes == {stormed: [200, 200, 429], calm: [200, 200, 200]}
    finally:
        fleet.faults.clear()


def test_in_flight_counts_the_requests_handled_at_once(fleet: EmulatorServer) -> None:
    fleet.faults.latency_ms = 300
    fleet.emulator.reset_peak()
    seen: list[int] = []
    try:
        threads = [
            threading.Thread(target=page, args=(fleet, serial)) for serial in fleet.serials[:4]
        ]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 5
        while fleet.emulator.in_flight < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        seen.append(fleet.emulator.in_flight)
        for thread in threads:
            thread.join()
    finally:
        fleet.faults.clear()
    assert seen == [4]  # all four were waiting out their latency together
    assert fleet.emulator.peak_in_flight == 4
    assert fleet.emulator.in_flight == 0
    fleet.emulator.reset_peak()
    assert page(fleet, fleet.serials[0]).status_code == 200
    assert fleet.emulator.peak_in_flight == 1


# --------------------------------------------------------------------------- the command line


def test_serve_with_chatbots_shows_the_fleet_and_serves_it(tmp_path: Path) -> None:
    folder = tmp_path / "fleet"
    args = ("--port", "0", "--seed", "none", "--chatbots", "4", "--listings-per-chatbot", "6")
    with serving(*args, "--write-fleet", str(folder)) as seen:
        serials = fleet_serials(4)
        assert "Fleet: 4 chatbots with 6 listings each" in seen
        assert f"serials {', '.join(serials[:3])}, ... (1 more)" in seen
        assert "fleet_serials(4)" in seen
        found = re.search(r"ESTATEBOT_BASE_URL=(\S+)", seen)
        assert found is not None, seen
        with eb.Client(
            base_url=found.group(1), api_key="demo-api-key", session_key="demo-session-key"
        ) as client:
            counts = [len(eb.pull_listings(client, s, progress=False)) for s in serials]
        assert counts == [6, 6, 6, 6]
    manifest = pd.read_csv(folder / "manifest.csv")
    assert manifest["serial"].tolist() == serials


@pytest.mark.parametrize(
    "args",
    [
        ("--chatbots", "-1"),
        ("--chatbots", "10000"),
        ("--chatbots", "2", "--listings-per-chatbot", "-3"),
        ("--write-fleet", "FOLDER"),  # no fleet to write without --chatbots
    ],
)
def test_serve_refuses_a_fleet_it_cannot_make(tmp_path: Path, args: tuple[str, ...]) -> None:
    folder = tmp_path / "fleet"
    done = run_cli(
        None, "serve", "--port", "0", *(str(folder) if a == "FOLDER" else a for a in args)
    )
    assert done.code == 64, done.text
    flag = "--write-fleet" if "--write-fleet" in args else args[-2]
    assert flag in done.err
    assert not folder.exists()


def test_a_fleet_seed_hosts_the_fleet_chatbots_would() -> None:
    from estatebot.emulator import FleetSeed, fleet_serials

    with running(seed=FleetSeed(3, listings_per_chatbot=5, demo=None)) as server:
        assert server.serials == fleet_serials(3)
        for serial in server.serials:
            assert server.store.count_listings(serial) == 5
        assert server.store.count_listings(server.serial) == 0  # demo=None: no demo listings
    with pytest.raises(ValueError, match="disagree"), running(seed=FleetSeed(3), chatbots=4):
        pass
    with pytest.raises(ValueError, match="chatbots"):
        FleetSeed(-1)
