"""The everyday loop against deployments whose List sends values the pull cannot read.

One deployment writes ``UnitAreaPrice`` with a decimal comma (``"1001,6"``), another sends
``Images`` as JSON objects (``[{"Url": ..., "Order": 1}]``) instead of URL texts. The pull rightly
leaves such a value empty, with a warning. The loop then pulls the listings to a file, changes
only the Description of that listing, plans and applies: the update must not erase the value the
pull could not read. Either the raw value passes through (when an Update accepts it as it is) or
the update is held back naming the field and the raw value; either way the service's value is
unchanged afterwards, and the plan or the report says why.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import estatebot as eb
from clirun import run_cli
from estatebot.listings import write_frame
from foreign.helpers import client_for
from foreign.server import ForeignServer
from foreign.variant import Variant

#: The unit the seeded listings are stored in (the foreign List's Area shows none).
UNIT = {"AreaUnit": "Square Feet"}
NEW_TEXT = "Completely renovated in 2024."
#: A unit price that the listing's own price and area give (500,800 / 500), so the reader has
#: no quarrel with it: only its text on the wire is unreadable.
PRICED = {"SalePrice": 500_800, "BuildingArea": 500, "UnitAreaPrice": 1001.6}

#: Each deployment, and the fields its List sends unreadably for the target: field -> a part of
#: the raw text it sends.
CASES: dict[str, tuple[Variant, dict[str, str]]] = {
    "decimal-comma": (
        Variant(decimal_comma=frozenset({"UnitAreaPrice"})),
        {"UnitAreaPrice": "1001,6"},
    ),
    "images-as-objects": (Variant(images_text="objects"), {"Images": '"Url":'}),
    "both-camel-case": (
        Variant(decimal_comma=frozenset({"UnitAreaPrice"}), images_text="objects", camel_case=True),
        {"UnitAreaPrice": "1001,6", "Images": '"Url":'},
    ),
}


def seed_target(server: ForeignServer) -> tuple[str, int]:
    """Six listings; the second (a sale with two images) priced so its unit price is 1001.6.
    Returns its MLS number and ID."""
    server.seed(6)
    with server.store.lock:
        target_id = sorted(server.chatbot.listings)[1]
        listing = server.chatbot.listings[target_id]
        assert listing["SaleType"] == "for_sale"
        assert len(listing["Images"]) == 2
        listing.update(PRICED)
    return str(listing["MLSNumber"]), target_id


@contextmanager
def quiet_pulls() -> Iterator[None]:
    """The apply's own pulls warn about the unreadable value again; that is not under test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", eb.NormalizeWarning)
        yield


def pulled_and_edited(client: eb.Client, server: ForeignServer, target: str, path: Path) -> Any:
    """Pull (which warns about the unreadable value), write the file, change the target's
    Description only; returns the pulled frame."""
    with pytest.warns(eb.NormalizeWarning):
        remote = eb.pull_listings(client, server.serial, progress=False)
    frame = remote.copy()
    frame.loc[frame["MLSNumber"] == target, "Description"] = NEW_TEXT
    write_frame(frame, path)
    return remote


@pytest.mark.parametrize(
    ("server", "unreadable"),
    [(variant, fields) for variant, fields in CASES.values()],
    ids=list(CASES),
    indirect=["server"],
)
def test_a_description_edit_never_erases_a_value_the_pull_could_not_read(
    server: ForeignServer, client: eb.Client, tmp_path: Path, unreadable: dict[str, str]
) -> None:
    """A pulled file with only the Description of that listing changed: after plan and apply
    the service still holds each value the pull could not read, every other listing is as it
    was, and the plan says why (held back: naming the field and the raw value)."""
    target, target_id = seed_target(server)
    before = {item["ID"]: dict(item) for item in server.listings()}
    path = tmp_path / "listings.xlsx"
    remote = pulled_and_edited(client, server, target, path)
    for field in unreadable:
        unread = remote.set_index("MLSNumber").loc[target, field]
        assert unread is pd.NA or unread == [] or pd.isna(unread), (field, unread)

    sheet = eb.read_sheet(path, defaults=UNIT, progress=False)
    plan = eb.plan_sync(sheet, remote)
    assert not plan.invalid, plan.invalid
    assert not plan.creates
    assert not plan.deletes
    assert {op.key for op in plan.updates} <= {target}, plan.summary()
    with quiet_pulls():
        report = plan.apply(
            client, server.serial, journal=tmp_path / "sync.journal", backup=tmp_path / "b.json"
        )
    assert report.ok, report.failures.to_dict("records")

    after = {item["ID"]: dict(item) for item in server.listings()}
    for field in unreadable:
        assert after[target_id].get(field) == before[target_id][field], field  # not erased
    for listing_id, listing in before.items():
        if listing_id != target_id:
            assert after[listing_id] == listing, listing_id
    frame = report.frame
    outcomes = frame.set_index("key")["outcome"] if len(frame) else pd.Series(dtype=object)
    if plan.updates:  # the raw values passed through, and the plan says so
        (update,) = plan.updates
        assert after[target_id]["Description"] == NEW_TEXT
        told = " ".join([*plan.notes, update.reason])
        for field in unreadable:
            assert field in told, (field, plan.notes, update.reason)
    else:  # held back, naming each field and its raw value; the listing is left as it was
        held = {h.field: h for h in plan.held_back if h.key == target}
        for field, raw in unreadable.items():
            assert field in held, (field, plan.held_back)
            assert raw in (held[field].value or ""), held[field]
            assert field in held[field].message, held[field].message
        assert after[target_id] == before[target_id]
        assert outcomes.get(target) not in ("updated", "done"), frame


@pytest.mark.parametrize("server", [CASES["decimal-comma"][0]], indirect=True)
def test_sync_on_the_command_line_names_the_value_it_will_not_erase(
    server: ForeignServer, tmp_path: Path
) -> None:
    """``estatebot sync --yes`` of that file: the output names the field and its raw value
    ``1001,6``, does not call the listing updated, and the service keeps 1001.6; with
    ``--detailed-exitcode`` the exit says a row was held back (3)."""
    target, target_id = seed_target(server)
    with client_for(server) as client:
        pulled_and_edited(client, server, target, tmp_path / "listings.xlsx")
    done = run_cli(
        server, "sync", str(tmp_path / "listings.xlsx"), "--default", "AreaUnit=Square Feet",
        "--yes", "--detailed-exitcode",
    )  # fmt: skip
    assert "Traceback" not in done.text, done.text
    assert "UnitAreaPrice" in done.text, done.text
    assert "1001,6" in done.text, done.text
    assert "1 updated" not in done.text, done.text
    assert done.code == 3, done.text
    stored = {item["ID"]: item for item in server.listings()}
    assert stored[target_id]["UnitAreaPrice"] == 1001.6
