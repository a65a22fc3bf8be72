"""The sync plan: classification, comparison rules, merge, guards, views and persistence."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from estatebot.api.models import ListingUpdate
from estatebot.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.sync.plan.operations import PlannedOp
from estatebot.listings.sync.sync_plan import SyncPlan, plan_cleanup, plan_sync
from estatebot.listings.sync.values.hashing import frame_fingerprint, frame_hashes, listing_hash
from factories import complete_listing as listing
from factories import remote_frame, sheet_frame

# --------------------------------------------------------------------------- builders


def as_sheet(remote: pd.DataFrame) -> pd.DataFrame:
    """The sheet a user would export from ``remote``: the same listings without IDs."""
    frame = remote.copy()
    frame["ID"] = pd.array([pd.NA] * len(frame), dtype="Int64")
    frame.index = pd.RangeIndex(2, len(frame) + 2, name="row")
    return frame


@dataclass
class FakeSheet:
    """A stand-in for the reader's Sheet."""

    frame: pd.DataFrame
    issues: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(
            columns=["row", "column", "value", "message", "severity"]
        )
    )
    cleared: pd.DataFrame = field(default_factory=pd.DataFrame)
    unpublished: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=["row", "key", "status"])
    )
    invalid_rows: list[int] = field(default_factory=list)


def cleared(frame: pd.DataFrame, **fields: list[bool]) -> pd.DataFrame:
    return pd.DataFrame(fields, index=frame.index)


# --------------------------------------------------------------------------- classification


def test_every_classification() -> None:
    remote = remote_frame(listing(1), listing(2), listing(3))
    sheet = sheet_frame(
        listing(1),  # unchanged
        listing(2, SalePrice=460000.0),  # update
        listing(4),  # create
        listing(5, Status="Pending"),  # invalid: not a listing status
        listing(6, MLSNumber="  "),  # invalid: empty key
    )
    plan = plan_sync(sheet, remote, delete_missing=True, max_delete_fraction=0.5)
    assert [op.key for op in plan.creates] == ["M4"]
    assert [op.key for op in plan.updates] == ["M2"]
    assert [op.key for op in plan.deletes] == ["M3"]
    assert [ref.key for ref in plan.unchanged] == ["M1"]
    assert [(r.row, r.key) for r in plan.invalid] == [(5, "M5"), (6, None)]
    assert "Status" in plan.invalid[0].reasons[0]
    assert "empty" in plan.invalid[1].reasons[0]
    assert plan.summary() == "1 create, 1 update, 1 delete, 1 unchanged, 2 invalid"
    assert str(plan).startswith("SyncPlan by MLSNumber: 1 create")
    assert (
        repr(plan) == "<SyncPlan MLSNumber: 1 create, 1 update, 1 delete, 1 unchanged, 2 invalid>"
    )
    assert not plan.is_empty


def test_remote_only_listings_are_kept_without_delete_missing() -> None:
    plan = plan_sync(sheet_frame(listing(1)), remote_frame(listing(1), listing(2)))
    assert plan.deletes == []
    assert [(r.key, r.id) for r in plan.kept] == [("M2", 2)]
    assert plan.summary().endswith("0 invalid, 1 kept")


def test_update_carries_changes_body_and_hash() -> None:
    remote = remote_frame(listing(1))
    plan = plan_sync(sheet_frame(listing(1, SalePrice=460000.0, City="Round Rock")), remote)
    (op,) = plan.updates
    assert op.row == 2
    assert op.id == 1
    assert op.key_type == "MLSNumber"
    assert [(c.field, c.before, c.after) for c in op.changes] == [
        ("City", "Austin", "Round Rock"),
        ("SalePrice", 450000.0, 460000.0),
    ]
    assert op.body is not None
    assert op.body["Key"] == "M1"
    assert op.body["KeyType"] == "MLSNumber"
    assert op.body["SalePrice"] == 460000.0
    assert op.body["ExtensionColumn"] == [{"Key": "Pool", "value": "Yes"}]
    assert "SerialNumber" not in op.body
    assert op.before is not None
    assert op.before["ID"] == 1
    assert op.before_hash == listing_hash(op.before)
    assert op.before_hash == listing_hash(remote.iloc[0].to_dict())
    request = op.request("3254a9d0424c4806b9ea3d0763ccf1bf")
    assert isinstance(request, ListingUpdate)
    assert request.SerialNumber == "3254a9d0424c4806b9ea3d0763ccf1bf"
    assert plan.fingerprint == frame_fingerprint(remote)


def test_body_differs_from_remote_only_in_the_planned_changes() -> None:
    # 100.004 vs 100.001 compare equal: the body keeps the remote's value for such fields.
    remote = remote_frame(listing(1, HOAMonth=100.001))
    plan = plan_sync(sheet_frame(listing(1, HOAMonth=100.004, Bedrooms=4)), remote)
    (op,) = plan.updates
    assert [c.field for c in op.changes] == ["Bedrooms"]
    assert op.body is not None
    assert op.body["HOAMonth"] == 100.001


def test_operations_are_ordered_creates_updates_deletes() -> None:
    remote = remote_frame(listing(1), listing(2))
    sheet = sheet_frame(listing(1, Bedrooms=5), listing(9))
    plan = plan_sync(sheet, remote, delete_missing=True, max_delete_fraction=0.5)
    ops = plan.operations()
    assert [op.action for op in ops] == ["create", "update", "delete"]
    assert all(isinstance(op, PlannedOp) for op in ops)
    assert ops[0].body is not None
    assert ops[0].before is None
    assert ops[0].id is None
    assert ops[2].body is None
    assert ops[2].before_hash is not None
    assert ops[2].id == 2


def test_resync_without_edits_plans_nothing() -> None:
    remote = remote_frame(
        listing(1), listing(2, SaleType="for_rent", SalePrice=None, RentPrice=2100.0)
    )
    plan = plan_sync(as_sheet(remote), remote, delete_missing=True)
    assert plan.is_empty
    assert len(plan.unchanged) == 2
    assert plan.invalid == []
    assert plan.kept == []


def test_inputs_are_not_changed() -> None:
    remote = remote_frame(listing(1, City=" Austin "))
    sheet = sheet_frame(listing(1, City="Dallas", Images=[" https://i/x.jpg "]))
    remote_copy, sheet_copy = remote.copy(deep=True), sheet.copy(deep=True)
    plan_sync(sheet, remote)
    pd.testing.assert_frame_equal(remote, remote_copy)
    pd.testing.assert_frame_equal(sheet, sheet_copy)


# --------------------------------------------------------------------------- comparison rules


@pytest.mark.parametrize(
    ("column", "remote_value", "sheet_value", "changed"),
    [
        ("SalePrice", 100.001, 100.004, False),
        ("SalePrice", 100.01, 100.02, True),
        ("Latitude", 30.1234561, 30.1234564, False),
        ("Latitude", 30.123456, 30.123457, True),
        ("BuildingArea", 1850.001, 1850.004, False),
        ("Description", "Home", "  Home\u00a0", False),
        ("Description", "Home", "home", True),
        ("ZIP", None, "", False),
        ("ZIP", "02108", "2108", True),
        ("Images", ["a", "b"], ["a", "b"], False),
        ("Images", ["a", "b"], ["b", "a"], True),
        ("ExtensionColumn", {"A": "1", "B": "2"}, {"B": "2", "A": "1"}, False),
        ("ExtensionColumn", {"A": "1"}, {"A": "2"}, True),
        ("Status", "Active", "Sold", True),
        ("SaleType", "for_sale", " for_sale ", False),
    ],
)
def test_comparison_rules(column: str, remote_value: Any, sheet_value: Any, changed: bool) -> None:
    remote = remote_frame(listing(1, **{column: remote_value}))
    plan = plan_sync(sheet_frame(listing(1, **{column: sheet_value})), remote)
    assert (len(plan.updates) == 1) is changed
    assert (len(plan.unchanged) == 1) is not changed


def test_tolerances_override_the_precision() -> None:
    remote = remote_frame(listing(1, SalePrice=450000.0))
    sheet = sheet_frame(listing(1, SalePrice=450400.0))
    assert plan_sync(sheet, remote, tolerances={"SalePrice": 500}).is_empty
    assert not plan_sync(sheet, remote).is_empty
    with pytest.raises(PlanError, match="numeric"):
        plan_sync(sheet, remote, tolerances={"City": 1})


def test_days_on_market_alone_is_ignored_unless_asked() -> None:
    remote = remote_frame(listing(1, DaysOnMarket=10))
    sheet = sheet_frame(listing(1, DaysOnMarket=11))
    assert plan_sync(sheet, remote).is_empty
    honoured = plan_sync(sheet, remote, compare_days_on_market=True)
    assert [c.field for c in honoured.updates[0].changes] == ["DaysOnMarket"]


def test_days_on_market_rides_along_with_other_changes() -> None:
    remote = remote_frame(listing(1, DaysOnMarket=10))
    plan = plan_sync(sheet_frame(listing(1, DaysOnMarket=11, Bedrooms=4)), remote)
    (op,) = plan.updates
    assert [c.field for c in op.changes] == ["Bedrooms", "DaysOnMarket"]
    assert op.body is not None
    assert op.body["DaysOnMarket"] == 11


def test_fields_the_list_never_returns_do_not_make_updates() -> None:
    # A pulled listing has no AreaUnit or Location: List does not return them.
    remote = remote_frame(listing(1, AreaUnit=None), listing(2, AreaUnit=None))
    sheet = sheet_frame(listing(1, Location="Downtown"), listing(2, Bedrooms=4))
    plan = plan_sync(sheet, remote)
    assert [ref.key for ref in plan.unchanged] == ["M1"]
    (op,) = plan.updates
    assert [c.field for c in op.changes] == ["Bedrooms"]
    assert op.body is not None
    assert op.body["AreaUnit"] == "Square Feet"  # the sheet's value, needed by Update


# --------------------------------------------------------------------------- merge semantics


def test_blank_cell_keeps_the_remote_value() -> None:
    remote = remote_frame(listing(1, Description="Lovely", HOAMonth=120.0))
    sheet = sheet_frame(listing(1, Description=None, HOAMonth=None, Images=[], Bedrooms=4))
    (op,) = plan_sync(sheet, remote).updates
    assert [c.field for c in op.changes] == ["Bedrooms"]
    assert op.body is not None
    assert op.body["Description"] == "Lovely"
    assert op.body["HOAMonth"] == 120.0
    assert op.body["Images"] == listing(1)["Images"]


def test_clear_token_empties_a_field() -> None:
    remote = remote_frame(listing(1, Description="Lovely", Images=["https://i/1.jpg"]))
    sheet_rows = sheet_frame(listing(1, Description=None, Images=[]))
    sheet = FakeSheet(sheet_rows, cleared=cleared(sheet_rows, Description=[True], Images=[True]))
    (op,) = plan_sync(sheet, remote).updates
    assert [(c.field, c.after) for c in op.changes] == [("Images", []), ("Description", None)]
    assert op.body is not None
    assert "Description" not in op.body
    assert op.body["Images"] == []


def test_cleared_required_field_is_invalid() -> None:
    remote = remote_frame(listing(1))
    rows = sheet_frame(listing(1, YearBuilt=None))
    plan = plan_sync(FakeSheet(rows, cleared=cleared(rows, YearBuilt=[True])), remote)
    assert plan.updates == []
    assert plan.unchanged == []
    (bad,) = plan.invalid
    assert bad.key == "M1"
    assert bad.id == 1
    assert bad.reasons == ("YearBuilt: cleared, but the field is required",)


def test_create_needs_every_required_field() -> None:
    plan = plan_sync(sheet_frame(listing(1, Bedrooms=None, Bathrooms=-1.0)), remote_frame())
    (bad,) = plan.invalid
    (reason,) = bad.reasons
    assert reason.startswith("Bedrooms: required, but empty (a new listing needs it")
    plan = plan_sync(sheet_frame(listing(1, Bathrooms=-1.0)), remote_frame())
    assert "Bathrooms" in plan.invalid[0].reasons[0]


# --------------------------------------------------------------------------- keys


def test_duplicate_remote_keys_are_an_error() -> None:
    remote = remote_frame(listing(1), listing(1), listing(2))
    with pytest.raises(PlanError, match=r"'M1' \(ID 1, ID 2\)") as caught:
        plan_sync(sheet_frame(listing(1)), remote)
    assert caught.value.column == "MLSNumber"


def test_duplicate_sheet_keys_are_all_invalid() -> None:
    plan = plan_sync(sheet_frame(listing(1), listing(1, Bedrooms=5)), remote_frame(listing(1)))
    assert [r.row for r in plan.invalid] == [2, 3]
    assert "rows 2, 3" in plan.invalid[0].reasons[0]
    assert plan.updates == []
    assert plan.unchanged == []
    assert plan.kept == []


def test_keys_by_url() -> None:
    remote = remote_frame(listing(1, MLSNumber="X"), listing(2))
    sheet = sheet_frame(listing(1, MLSNumber="Y", Url=" https://homes.example/1 "), listing(3))
    plan = plan_sync(sheet, remote, key="URL")
    assert plan.key_type == "URL"
    (op,) = plan.updates
    assert op.key == "https://homes.example/1"
    assert op.body is not None
    assert op.body["KeyType"] == "URL"
    assert op.body["MLSNumber"] == "Y"
    assert [op.key for op in plan.creates] == ["https://homes.example/3"]


def test_keys_by_new_oaks_id() -> None:
    remote = remote_frame(listing(1), listing(2))
    sheet = as_sheet(remote)
    sheet["ID"] = pd.array([1, 7], dtype="Int64")
    sheet.loc[2, "Bedrooms"] = 6
    plan = plan_sync(sheet, remote, key="NewOaks")
    (op,) = plan.updates
    assert op.key == "1"
    assert op.body is not None
    assert op.body["KeyType"] == "NewOaks"
    assert plan.creates == []
    assert "no listing 7" in plan.invalid[0].reasons[0]
    with pytest.raises(PlanError, match="key must be"):
        plan_sync(sheet, remote, key="Zillow")


def test_remote_listings_without_a_key_are_left_alone() -> None:
    remote = remote_frame(listing(1), listing(2, MLSNumber=None))
    plan = plan_sync(sheet_frame(listing(1)), remote, delete_missing=True, max_delete_fraction=1)
    assert plan.deletes == []
    assert [r.id for r in plan.kept] == [2]
    assert any("no MLSNumber" in note for note in plan.notes)


# --------------------------------------------------------------------------- sheets


def test_reader_rejections_are_invalid_with_their_messages() -> None:
    issues = pd.DataFrame(
        {
            "row": [5, 5, 2, None],
            "column": ["ZIP", "Bedrooms", "City", None],
            "value": ["ABC", "x", "austin", None],
            "message": ["not a ZIP code", "not a number", "lower case", "unmapped header Foo"],
            "severity": ["error", "error", "warning", "error"],
        }
    )
    sheet = FakeSheet(sheet_frame(listing(1)), issues=issues, invalid_rows=[5])
    plan = plan_sync(sheet, remote_frame(listing(1)))
    (bad,) = plan.invalid
    assert bad.row == 5
    assert bad.reasons == (
        "ZIP: not a ZIP code (value 'ABC')",
        "Bedrooms: not a number (value 'x')",
    )
    assert any("unmapped header Foo" in note for note in plan.notes)
    assert any("1 warnings" in note for note in plan.notes)


def test_unpublished_listings_become_deletes() -> None:
    remote = remote_frame(listing(1), listing(2), listing(3), listing(4), listing(5))
    unpublished = pd.DataFrame({"row": [9], "key": [" M2 "], "status": ["Withdrawn"]})
    sheet = FakeSheet(sheet_frame(listing(1)), unpublished=unpublished)
    plan = plan_sync(sheet, remote)
    (op,) = plan.deletes
    assert (op.key, op.id, op.row) == ("M2", 2, 9)
    assert op.reason == "unpublished in the sheet (Withdrawn)"
    assert len(plan.kept) == 3


def test_create_missing_false_skips_creates() -> None:
    plan = plan_sync(
        sheet_frame(listing(1), listing(2)), remote_frame(listing(1)), create_missing=False
    )
    assert plan.creates == []
    assert [op.key for op in plan.skipped_create] == ["M2"]
    assert plan.is_empty
    assert plan.summary().endswith("1 skipped create")


# --------------------------------------------------------------------------- guards


def test_an_empty_sheet_is_an_error_and_deletes_nothing() -> None:
    # No listing rows is not "in step" and never "delete everything": it is refused, named.
    with pytest.raises(PlanError, match="no listing rows"):
        plan_sync(sheet_frame(), remote_frame(listing(1)), delete_missing=True)


def test_all_invalid_sheet_refuses_delete_missing() -> None:
    sheet = sheet_frame(listing(7, MLSNumber=""), listing(8, Status="Gone"))
    plan = plan_sync(sheet, remote_frame(listing(1)), delete_missing=True)
    assert plan.deletes == []
    assert plan.refusals == ["delete_missing ignored: the sheet has no valid rows"]


def test_rejected_rows_refuse_delete_missing() -> None:
    sheet = FakeSheet(sheet_frame(listing(1)), invalid_rows=[3])
    plan = plan_sync(sheet, remote_frame(listing(1), listing(2)), delete_missing=True)
    assert plan.deletes == []
    assert "rejected 1 sheet rows (rows 3)" in plan.refusals[0]
    assert "delete_missing ignored" in str(plan)


def test_known_keys_of_invalid_rows_are_not_deleted() -> None:
    remote = remote_frame(*(listing(n) for n in range(1, 11)))
    sheet = sheet_frame(*(listing(n) for n in range(1, 10)), listing(10, Status="Bad"))
    plan = plan_sync(sheet, remote, delete_missing=True)
    assert plan.deletes == []
    assert plan.invalid[0].key == "M10"


def test_too_many_deletes_raise() -> None:
    remote = remote_frame(*(listing(n) for n in range(1, 11)))
    sheet = sheet_frame(*(listing(n) for n in range(1, 8)))
    with pytest.raises(PlanError) as caught:
        plan_sync(sheet, remote, delete_missing=True)
    message = str(caught.value)
    assert "delete 3 of 10" in message
    assert "max_delete_fraction=0.2" in message
    assert "force_delete_count=3" in message
    forced = plan_sync(sheet, remote, delete_missing=True, force_delete_count=3)
    assert [op.key for op in forced.deletes] == ["M8", "M9", "M10"]
    assert forced.options["force_delete_count"] == 3
    with pytest.raises(PlanError, match="exactly 3 listings"):
        plan_sync(sheet, remote, delete_missing=True, force_delete_count=4)


def test_deletes_within_the_fraction_pass_and_a_wrong_force_is_refused() -> None:
    remote = remote_frame(*(listing(n) for n in range(1, 11)))
    sheet = sheet_frame(*(listing(n) for n in range(1, 9)))
    assert len(plan_sync(sheet, remote, delete_missing=True).deletes) == 2
    with pytest.raises(PlanError, match="force_delete_count=2 to confirm"):
        plan_sync(sheet, remote, delete_missing=True, force_delete_count=5)
    with pytest.raises(PlanError, match="between 0 and 1"):
        plan_sync(sheet, remote, max_delete_fraction=2)


# --------------------------------------------------------------------------- cleanup


def cleanup_remote() -> pd.DataFrame:
    return remote_frame(
        listing(1, Status="Sold", DaysOnMarket=5, City="Austin"),
        listing(2, Status="Active", DaysOnMarket=200, City="Dallas"),
        listing(3, Status="Active", DaysOnMarket=3, City="Austin"),
        listing(4, Status="Sold", DaysOnMarket=400, City="Dallas"),
        *(listing(n, DaysOnMarket=1) for n in range(5, 21)),
    )


def test_cleanup_by_status() -> None:
    plan = plan_cleanup(cleanup_remote())
    assert [(op.key, op.key_type) for op in plan.deletes] == [("1", "NewOaks"), ("4", "NewOaks")]
    assert plan.deletes[0].reason.startswith("cleanup: Status Sold")
    assert len(plan.kept) == 18
    assert plan.summary() == "0 create, 0 update, 2 delete, 0 unchanged, 0 invalid, 18 kept"


def test_cleanup_status_or_days() -> None:
    plan = plan_cleanup(cleanup_remote(), min_days_on_market=180)
    assert [op.id for op in plan.deletes] == [1, 2, 4]
    only_days = plan_cleanup(cleanup_remote(), status=(), min_days_on_market=180)
    assert [op.id for op in only_days.deletes] == [2, 4]


def test_cleanup_where_narrows() -> None:
    plan = plan_cleanup(
        cleanup_remote(), min_days_on_market=180, where=lambda f: f["City"] == "Dallas"
    )
    assert [op.id for op in plan.deletes] == [2, 4]
    words = "Sold, or on the market 180 days or more, and chosen by the where= filter"
    assert plan.notes[0] == f"cleanup selects: {words}"
    alone = plan_cleanup(
        cleanup_remote(), status=None, where=lambda f: f["ID"] == 3, where_label="in Dallas"
    )
    assert [op.id for op in alone.deletes] == [3]
    assert alone.notes[0] == "cleanup selects: In Dallas"


def test_cleanup_guards() -> None:
    with pytest.raises(PlanError, match="needs a status"):
        plan_cleanup(cleanup_remote(), status=())
    with pytest.raises(PlanError, match="delete 18 of 20"):
        plan_cleanup(cleanup_remote(), status="Active")
    assert len(plan_cleanup(cleanup_remote(), status="Active", force_delete_count=18).deletes) == 18
    by_mls = plan_cleanup(cleanup_remote(), key="MLSNumber")
    assert [op.key for op in by_mls.deletes] == ["M1", "M4"]


# --------------------------------------------------------------------------- views


def sample_plan() -> SyncPlan:
    evil = "<script>alert('x')</script>"
    remote = remote_frame(listing(1), listing(2), listing(3), listing(4), listing(5))
    sheet = sheet_frame(
        listing(1, Description=evil, SalePrice=460000.0),
        listing(2),
        listing(3),
        listing(4),
        listing(6, City='=HYPERLINK("http://evil")'),
        listing(7, Status="Gone"),
    )
    return plan_sync(sheet, remote, delete_missing=True)


def test_html_view_highlights_and_escapes() -> None:
    page = sample_plan()._repr_html_()
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert "class='eb-after" in page
    assert "#fff3b0" not in page  # no fixed light fill: the theme's colours
    counts = {"create": 1, "update": 1, "delete": 1, "unchanged": 3, "invalid": 1}
    for name, count in counts.items():
        assert f"eb-chip eb-{name}' data-count='{count}'" in page
    assert "Invalid" in page
    assert "Status" in page


def test_html_view_shows_notes_and_refusals_whole() -> None:
    plan = sample_plan()
    note = "remote value unknown: " + "the service never shows these fields; " * 8 + "end <b>."
    plan.notes.append(note)
    plan.refusals.append("refused: " + "a long reason, " * 20 + "the last words")
    page = plan._repr_html_()
    assert html.escape(note) in page
    assert "the last words" in page


def test_html_view_is_bounded() -> None:
    remote = remote_frame(*(listing(n) for n in range(1, 61)))
    sheet = as_sheet(remote)
    sheet["Bedrooms"] = pd.array([4] * 60, dtype="Int64")
    page = plan_sync(sheet, remote)._repr_html_()
    assert "… and 10 more" in page
    assert page.count("class='eb-after") == 50


def test_to_frame_long_and_wide() -> None:
    plan = sample_plan()
    long = plan.to_frame()
    assert list(long.columns) == [
        "action",
        "key",
        "row",
        "ID",
        "field",
        "before",
        "after",
        "reason",
    ]
    assert long["action"].tolist() == ["create", "update", "update", "delete", "invalid"]
    update = long[long["action"] == "update"].set_index("field")
    assert update.loc["SalePrice", "before"] == 450000.0
    assert update.loc["SalePrice", "after"] == 460000.0
    assert long["row"].dtype == "Int64"
    wide = plan.to_frame(wide=True)
    assert wide["action"].tolist() == ["create", "update", "delete", "invalid"]
    assert wide.loc[1, "changed"] == "Description, SalePrice"
    assert wide.loc[1, "SalePrice"] == 460000.0
    every = plan.to_frame(include_unchanged=True)
    assert (every["action"] == "unchanged").sum() == 3


def test_to_excel(tmp_path: Path) -> None:
    path = sample_plan().to_excel(tmp_path / "plan.xlsx")
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["Summary", "Create", "Update", "Delete", "Invalid", "Unchanged"]
    update = book["Update"]
    header = [cell.value for cell in update[1]]
    assert update.freeze_panes == "A2"
    assert update["A1"].font.bold
    price = update.cell(row=2, column=header.index("SalePrice") + 1)
    assert price.value == 460000.0
    assert price.fill.fgColor.rgb.endswith("FFF3B0")
    assert price.comment is not None
    assert "450000" in price.comment.text
    city = update.cell(row=2, column=header.index("City") + 1)
    assert city.fill.fill_type is None
    create = book["Create"]
    create_header = [cell.value for cell in create[1]]
    formula = create.cell(row=2, column=create_header.index("City") + 1)
    assert formula.data_type == "s"
    assert isinstance(formula.value, str)
    assert formula.value.startswith("=HYPERLINK")
    summary = {row[0].value: row[1].value for row in book["Summary"].iter_rows(min_row=2)}
    assert summary["update"] == 1
    assert summary["unchanged"] == 3


def test_save_and_load(tmp_path: Path) -> None:
    plan = sample_plan()
    path = plan.save(tmp_path / "plan.json")
    loaded = SyncPlan.load(path)
    assert loaded == plan
    assert loaded.operations() == plan.operations()
    data = json.loads(path.read_text())
    assert data["format"] == "estatebot-sync-plan"
    assert data["version"] == 4  # version 4: sealed; the hash scheme of HASH_VERSION 3
    assert data["fingerprint"] == plan.fingerprint
    for version in (1, 3, 99):  # plans of another hash scheme cannot be applied safely
        data["version"] = version
        with pytest.raises(PlanError, match="unsupported"):
            SyncPlan.from_json(data)


# --------------------------------------------------------------------------- properties

cities = st.one_of(st.none(), st.sampled_from(["Austin", " Austin", "Dallas", ""]))
prices = st.one_of(st.none(), st.sampled_from([100.001, 100.004, 100.01, 250000.0]))
images = st.lists(
    st.sampled_from(["https://i/1.jpg", "https://i/2.jpg", " https://i/3.jpg"]), max_size=3
)
extras = st.dictionaries(
    st.sampled_from(["Pool", "View"]), st.sampled_from(["Yes", "No"]), max_size=2
)
listings = st.fixed_dictionaries(
    {
        "Bedrooms": st.integers(0, 6),
        "DaysOnMarket": st.integers(0, 3),
        "Status": st.sampled_from(["Active", "Sold", "PreOnMarket"]),
        "City": cities,
        "HOAMonth": prices,
        "Latitude": st.one_of(st.none(), st.sampled_from([30.1234561, 30.1234564, 31.0])),
        "Images": images,
        "ExtensionColumn": extras,
        "Description": st.one_of(st.none(), st.sampled_from(["Nice", " Nice ", "Big"])),
    }
)
# A sheet edit per listing: keep, replace some fields, blank a field, clear a field, drop it.
edits = st.one_of(
    st.just(("keep", None)),
    st.tuples(st.just("replace"), listings),
    st.tuples(st.just("blank"), st.sampled_from(["City", "HOAMonth", "Images", "Description"])),
    st.tuples(
        st.just("clear"), st.sampled_from(["City", "HOAMonth", "ExtensionColumn", "Bedrooms"])
    ),
    st.just(("drop", None)),
)


def apply_plan(remote: pd.DataFrame, plan: SyncPlan) -> pd.DataFrame:
    """What the service would hold after the plan: bodies replace listings whole."""
    records: dict[int, dict[str, Any]] = {
        int(r["ID"]): {str(k): v for k, v in r.items()} for r in remote.to_dict("records")
    }
    key_column = schema.KEY_COLUMNS[plan.key_type]

    def from_body(body: dict[str, Any]) -> dict[str, Any]:
        values = {name: body.get(name) for name in schema.COLUMNS if name != "ID"}
        values["ExtensionColumn"] = {i["Key"]: i["value"] for i in body.get("ExtensionColumn", [])}
        values["Images"] = body.get("Images", [])
        return values

    for op in plan.updates:
        (ident,) = [i for i, r in records.items() if str(r[key_column]).strip() == op.key]
        assert op.body is not None
        records[ident] = {"ID": ident, **from_body(op.body)}
    for op in plan.creates:
        assert op.body is not None
        ident = max(records, default=0) + 1
        records[ident] = {"ID": ident, **from_body(op.body)}
    for op in plan.deletes:
        assert op.id is not None
        del records[op.id]
    return schema.conform(
        pd.DataFrame.from_records(list(records.values()), columns=list(schema.COLUMNS))
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(listings, max_size=5), st.data())
def test_apply_then_replan_is_empty(rows: list[dict[str, Any]], data: st.DataObject) -> None:
    remote = remote_frame(*(listing(n, **row) for n, row in enumerate(rows)))
    if not rows:  # an empty sheet is no listings sheet: refused, never "in step"
        with pytest.raises(PlanError, match="no listing rows"):
            plan_sync(as_sheet(remote), remote, delete_missing=True)
        return
    assert plan_sync(as_sheet(remote), remote, delete_missing=True).is_empty

    sheet_rows: list[dict[str, Any]] = []
    clears: list[dict[str, bool]] = []
    for n, row in enumerate(rows):
        kind: str
        arg: Any
        kind, arg = data.draw(edits)
        values = listing(n, **row)
        clear: dict[str, bool] = {}
        if kind == "drop":
            continue
        if kind == "replace":
            values = listing(n, **arg)
        elif kind == "blank":
            values[arg] = [] if arg == "Images" else None
        elif kind == "clear":
            values[arg] = {} if arg == "ExtensionColumn" else None
            clear[arg] = True
        sheet_rows.append(values)
        clears.append(clear)
    extra = data.draw(st.lists(listings, max_size=2))
    for n, row in enumerate(extra, start=100):
        sheet_rows.append(listing(n, **row))
        clears.append({})
    frame = sheet_frame(*sheet_rows)
    cleared_frame = pd.DataFrame.from_records(clears, index=frame.index).fillna(False)
    sheet = FakeSheet(frame, cleared=cleared_frame.astype(bool))

    plan = plan_sync(sheet, remote, delete_missing=True, max_delete_fraction=1.0)
    after = apply_plan(remote, plan)
    again = plan_sync(sheet, after, delete_missing=True, max_delete_fraction=1.0)
    assert again.is_empty, again.to_frame()
    assert len(again.invalid) == len(plan.invalid)


# --------------------------------------------------------------------------- layout and speed paths


def test_each_public_name_has_one_home() -> None:
    # One import path per name: the planner exports plan_sync alone, and the public names of the
    # sync are the very objects of their home modules.
    from estatebot.listings import sync
    from estatebot.listings.sync import sync_plan
    from estatebot.listings.sync.plan import operations, sync_planner

    assert sync_planner.__all__ == ["plan_sync"]
    assert not hasattr(sync_planner, "SyncPlan")
    assert sync.PlannedOp is operations.PlannedOp
    assert sync.SyncPlan is sync_plan.SyncPlan
    assert sync.plan_sync is sync_plan.plan_sync
    assert sync_plan.plan_sync.__wrapped__ is sync_planner.plan_sync  # type: ignore[attr-defined]


def test_apply_delegates_to_apply_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    from estatebot.listings.sync.apply import phases as apply

    calls: list[tuple[Any, ...]] = []

    def fake_apply_plan(plan: SyncPlan, client: Any, serial: str, **options: Any) -> str:
        calls.append((plan, client, serial, options))
        return "report"

    monkeypatch.setattr(apply, "apply_plan", fake_apply_plan)
    plan = sample_plan()
    client = object()
    assert plan.apply(client, "s1", journal="j", force=True) == "report"
    assert calls == [(plan, client, "s1", {"journal": "j", "force": True})]


def test_the_garbage_collector_is_restored() -> None:
    import gc

    remote = remote_frame(listing(1), listing(1))
    assert gc.isenabled()
    plan_sync(sheet_frame(listing(2)), remote_frame(listing(1)))
    assert gc.isenabled()
    with pytest.raises(PlanError):
        plan_sync(sheet_frame(listing(1)), remote)
    assert gc.isenabled()
    gc.disable()
    try:
        plan_cleanup(remote_frame(listing(1, Status="Sold")), force_delete_count=1)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_before_hash_matches_the_listing_pulled_again() -> None:
    # What apply's staleness check computes on a fresh pull: the same listing, written a
    # little differently, must hash as planned; a changed one must not.
    remote = remote_frame(listing(1, City="Austin", HOAMonth=100.0), listing(2))
    sheet = sheet_frame(listing(1, Bedrooms=5))
    plan = plan_sync(sheet, remote, delete_missing=True, max_delete_fraction=1)
    (update,), (delete,) = plan.updates, plan.deletes
    again = remote_frame(listing(1, City=" Austin ", HOAMonth=100.001), listing(2))
    assert frame_hashes(again) == [update.before_hash, delete.before_hash]
    moved = remote_frame(listing(1, City="Dallas"), listing(2))
    assert frame_hashes(moved)[0] != update.before_hash


def test_text_cells_are_trimmed_before_they_are_compared() -> None:
    remote = remote_frame(listing(1), listing(2), listing(3), listing(4))
    sheet = sheet_frame(
        listing(1, City=" Austin\u00a0"),  # the same once trimmed
        listing(2, City="   "),  # blank once trimmed: keeps the remote value
        listing(3, City=" Dallas "),  # a change, sent trimmed
        listing(4, Description="\tHome 4\n"),
    )
    plan = plan_sync(sheet, remote)
    assert [ref.key for ref in plan.unchanged] == ["M1", "M2", "M4"]
    (op,) = plan.updates
    assert [(c.field, c.before, c.after) for c in op.changes] == [("City", "Austin", "Dallas")]
    assert op.body is not None
    assert op.body["City"] == "Dallas"


def test_structured_cells_are_cleaned_before_they_are_compared() -> None:
    remote = remote_frame(listing(1), listing(2), listing(3))
    sheet = sheet_frame(
        listing(1, Images=(" https://img.example/1/1.jpg", "https://img.example/1/2.jpg")),
        listing(2, ExtensionColumn=[{"Key": "Pool", "value": " Yes"}]),  # the wire form
        listing(3, ExtensionColumn={"Pool": "No"}, Images="https://img.example/3/9.jpg"),
    )
    plan = plan_sync(sheet, remote)
    assert [ref.key for ref in plan.unchanged] == ["M1", "M2"]
    (op,) = plan.updates
    assert [(c.field, c.after) for c in op.changes] == [
        ("Images", ["https://img.example/3/9.jpg"]),
        ("ExtensionColumn", {"Pool": "No"}),
    ]
    assert op.body is not None
    assert op.body["ExtensionColumn"] == [{"Key": "Pool", "value": "No"}]


def test_invalid_remote_values_make_the_update_invalid_with_the_model_reasons() -> None:
    # Blank sheet cells keep the remote values, which the request model rejects.
    remote = remote_frame(listing(1, Bathrooms=-1.0, Latitude=95.0), listing(2))
    sheet = sheet_frame(
        listing(1, Bedrooms=4, Bathrooms=None, Latitude=None), listing(2, Bedrooms=4)
    )
    plan = plan_sync(sheet, remote)
    assert [op.key for op in plan.updates] == ["M2"]
    (bad,) = plan.invalid
    assert (bad.row, bad.key, bad.id) == (2, "M1", 1)
    request = {
        **listing(1, Bedrooms=4, Bathrooms=-1.0, Latitude=95.0),
        "ExtensionColumn": [{"Key": "Pool", "value": "Yes"}],
        "Key": "M1",
        "KeyType": "MLSNumber",
    }
    assert list(bad.reasons) == _model_reasons(request)
    assert any(reason.startswith("Bathrooms:") for reason in bad.reasons)
    assert any(reason.startswith("Latitude:") for reason in bad.reasons)


def _model_reasons(body: dict[str, Any]) -> list[str]:
    from pydantic import ValidationError

    from estatebot.api.models import field_problems

    try:
        ListingUpdate.model_validate({**body, "SerialNumber": "serial"})
    except ValidationError as error:
        return [f"{f}: {m} (got {v!r})" for f, m, v in field_problems(error)]
    raise AssertionError("the body is valid")


bodies_listings = st.fixed_dictionaries(
    {
        "Bedrooms": st.one_of(st.integers(-1, 6), st.sampled_from([2.0, 2.5, None])),
        "Bathrooms": st.sampled_from([1, 1.5, 2.0, -0.5, None]),
        "SaleType": st.sampled_from(["for_sale", "for_rent", "auction"]),
        "Latitude": st.sampled_from([30.1, -91.0, None, 30]),
        "SalePrice": st.sampled_from([None, 0, 450000.0, -1.0]),
        "ExtensionColumn": extras,
        "Images": images,
        "SpaceType": st.sampled_from([None, "Room", "Entire place"]),
    }
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(bodies_listings, min_size=1, max_size=6), st.booleans())
def test_bodies_are_what_the_model_validates(rows: list[dict[str, Any]], update: bool) -> None:
    from estatebot.api.models import ListingInput, to_wire
    from estatebot.listings.sync.values.payloads import FIELDS, RequestBodies, build_bodies

    values = [listing(n, **row) for n, row in enumerate(rows)]
    data = {name: [v.get(name) for v in values] for name in FIELDS}
    data["Images"] = [[u.strip() for u in v] for v in data["Images"]]
    if update:
        data["Key"] = [v["MLSNumber"] for v in values]
        data["KeyType"] = ["MLSNumber"] * len(values)
    model = ListingUpdate if update else ListingInput
    outcomes = build_bodies(data, {}, len(values), update=update)
    whole = RequestBodies(model)
    whole._prepare()
    whole._adapters = None  # validate body by body, with the model
    assert whole.build(data, {}, len(values)) == outcomes
    for n, (body, reasons) in enumerate(outcomes):
        request: dict[str, Any] = {"SerialNumber": "serial"}
        for name, column in data.items():
            value = column[n]
            if name == "ExtensionColumn":
                value = [{"Key": k, "value": v} for k, v in value.items()]
            if value is not None:
                request[name] = value
        if body is None:
            if any(data[name][n] is None for name in schema.REQUIRED_COLUMNS):
                assert all("required, but empty" in reason for reason in reasons)
            else:
                assert reasons == _model_reasons_of(model, request)
            continue
        wire = to_wire(model.model_validate(request))
        wire.pop("SerialNumber")
        assert body == wire
        assert list(body) == list(wire)


def _model_reasons_of(model: Any, request: dict[str, Any]) -> list[str]:
    from pydantic import ValidationError

    from estatebot.api.models import field_problems

    try:
        model.model_validate(request)
    except ValidationError as error:
        return [f"{f}: {m} (got {v!r})" for f, m, v in field_problems(error)]
    raise AssertionError("the body is valid")


@pytest.mark.parametrize(("key", "other"), [("MLSNumber", "Url"), ("Url", "MLSNumber")])
def test_a_listing_held_without_the_plans_key_is_named_by_its_other_identity(
    key: str, other: str
) -> None:
    held = listing(1, **{key: None})
    remote = remote_frame(held, listing(2))
    plan = plan_sync(sheet_frame(listing(1, Bedrooms=4), listing(2)), remote, key=key)
    (update,) = plan.updates
    assert update.key == held[other]
    assert update.body is not None
    assert (update.body["Key"], update.body["KeyType"]) == (update.key, update.key_type)
    assert update.key_type == ("URL" if other == "Url" else "MLSNumber")
    assert {c.field for c in update.changes} == {"Bedrooms", key}
