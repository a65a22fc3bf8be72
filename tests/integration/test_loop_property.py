"""A property of the everyday loop: whatever a person edits in a pulled file, the service ends
holding exactly what the edit means.

From the 16 listings of the small seed, pulled, Hypothesis draws a user edit: editable cells
changed to other valid values, a cell blanked, a row added, a row deleted, the columns reordered.
The edited frame is written to xlsx (the integration variant re-saves it through LibreOffice as
xlsx or csv), read, planned and applied against a fresh emulator. Afterwards the service holds
the intended listings field by field: a changed cell its new value, a blanked cell the old value,
an added row a new listing, a deleted row still there unless the plan deletes missing rows; and
no field the edit did not touch changed on any listing, the fields List never returns included.
"""

from __future__ import annotations

import string
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import estatebot as eb
from estatebot.listings import schema, write_frame
from listing_state import (
    frame_differences,
    is_blank,
    near,
    pull,
    service,
    stored,
    stored_differences,
    unit_price_of,
)
from spreadsheet_program import Format, needs_soffice, resave

#: The unit of every listing of the seed: the loop's ``--default AreaUnit=...``.
UNIT = {"AreaUnit": "Square Feet"}
ROWS = 16  # the small seed's listings

_WORDS = st.text(alphabet=string.ascii_letters + "  ", min_size=1, max_size=40).map(
    lambda text: " ".join(text.split())
)
#: Valid values of each editable field ("Price" is the listing's SalePrice or RentPrice).
#: DaysOnMarket drifts daily and alone plans no update, so it is not edited here.
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "Status": st.sampled_from(["Active", "PreOnMarket", "Sold"]),
    "PropertyType": st.sampled_from(["Condo", "Townhouse", "Single Family", "Loft"]),
    "Bedrooms": st.integers(0, 9),
    "Bathrooms": st.sampled_from([1.0, 1.5, 2.0, 2.5, 3.0, 4.0]),
    "YearBuilt": st.integers(1900, 2024),
    "LotArea": st.integers(0, 40_000).map(float),
    "BuildingArea": st.integers(300, 9_999).map(float),
    "ParkingSpots": st.integers(0, 6),
    "Description": _WORDS.filter(bool).map(lambda text: f"Home {text}."),
    "Address": _WORDS.filter(bool).map(lambda text: f"12 {text} St"),
    "City": st.sampled_from(["Austin", "Denver", "Boise", "Tulsa"]),
    "ZIP": st.from_regex(r"\d{5}", fullmatch=True),
    "Latitude": st.integers(-60_00000, 60_00000).map(lambda n: n / 100000),
    "Longitude": st.integers(-150_00000, 150_00000).map(lambda n: n / 100000),
    "HOAMonth": st.integers(0, 2_000).map(float),
    "Tours": st.sampled_from(["OpenHouse", "3D"]),
    "Price": st.integers(5, 5_000).map(lambda n: n * 100.0),
}
#: Fields a blank cell may hit (required ones among them: a blank says nothing either way).
BLANKABLE = [name for name in VALUES if name != "Price"] + ["SalePrice", "RentPrice"]
#: Fields whose change lets the reader's computed unit price change with them.
PRICE_OR_AREA = frozenset({"SalePrice", "RentPrice", "BuildingArea"})

SETTINGS = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
#: LibreOffice takes about a second per file: few examples, and no shrinking (a failing edit is
#: shown as drawn; the xlsx variant shrinks the same kind of edit).
SLOW_SETTINGS = settings(
    SETTINGS, max_examples=5, phases=[Phase.explicit, Phase.reuse, Phase.generate]
)


@dataclass
class Edit:
    """What a person did to the pulled file."""

    changes: dict[tuple[int, str], Any] = field(default_factory=dict)
    blank: tuple[int, str] | None = None
    add_copy_of: int | None = None
    delete: int | None = None
    delete_missing: bool = False
    order: list[str] = field(default_factory=list)


@st.composite
def edits(draw: st.DrawFn, remote: pd.DataFrame) -> Edit:
    """A random edit of ``remote`` (the pulled frame): changes, a blank, an added and a deleted
    row, a column order."""
    edit = Edit()
    cells = draw(
        st.lists(
            st.tuples(st.integers(0, ROWS - 1), st.sampled_from(sorted(VALUES))),
            max_size=5,
            unique=True,
        )
    )
    for row, name in cells:
        column = name
        if name == "Price":
            column = "SalePrice" if pd.notna(remote.loc[row, "SalePrice"]) else "RentPrice"
        old = remote.loc[row, column]
        value = draw(VALUES[name].filter(lambda v, old=old: is_blank(old) or v != old))
        edit.changes[(row, column)] = value
    touched = {row for row, _ in edit.changes}
    blank = draw(st.none() | st.tuples(st.integers(0, ROWS - 1), st.sampled_from(BLANKABLE)))
    if blank is not None and blank not in edit.changes and pd.notna(remote.loc[blank]):
        edit.blank = blank
        touched.add(blank[0])
    edit.add_copy_of = draw(st.none() | st.integers(0, ROWS - 1))
    untouched = [row for row in range(ROWS) if row not in touched]
    edit.delete = draw(st.none() | st.sampled_from(untouched))
    edit.delete_missing = draw(st.booleans())
    edit.order = draw(st.permutations(list(remote.columns)))
    return edit


NEW_KEY = "NEW-LOOP-1"


def sheet_of(remote: pd.DataFrame, edit: Edit) -> pd.DataFrame:
    """The pulled frame as the person left it."""
    frame = remote.copy()
    for (row, column), value in edit.changes.items():
        frame.loc[row, column] = value
    if edit.add_copy_of is not None:  # a row copied (as edited) and given its own keys
        new = frame.iloc[[edit.add_copy_of]].assign(
            MLSNumber=NEW_KEY, Url="https://homes.example/new-loop-1", ID=pd.NA
        )
        frame = pd.concat([frame, new], ignore_index=True)
    if edit.blank is not None:
        frame.loc[edit.blank] = pd.NA
    if edit.delete is not None:
        frame = frame.drop(index=edit.delete)
    return frame[edit.order]


def intended(
    remote: pd.DataFrame, before: dict[str, dict[str, Any]], edit: Edit
) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """What the service should hold afterwards, as a pulled frame and as stored records."""
    frame = remote.copy()
    records = {key: dict(record) for key, record in before.items()}
    for (row, column), value in edit.changes.items():
        frame.loc[row, column] = value
        records[str(remote.loc[row, "MLSNumber"])][column] = value
    if edit.add_copy_of is not None:
        source = str(remote.loc[edit.add_copy_of, "MLSNumber"])
        new = frame.iloc[[edit.add_copy_of]].assign(
            MLSNumber=NEW_KEY, Url="https://homes.example/new-loop-1", ID=pd.NA
        )
        frame = pd.concat([frame, new], ignore_index=True)
        records[NEW_KEY] = {
            **records[source],
            "MLSNumber": NEW_KEY,
            "Url": "https://homes.example/new-loop-1",
            "AreaUnit": "Square Feet",
        }
    if edit.delete is not None and edit.delete_missing:
        key = str(remote.loc[edit.delete, "MLSNumber"])
        frame = frame[frame["MLSNumber"] != key]
        del records[key]
    return frame, records


def check_loop(edit: Edit, resave_as: Format | None) -> None:
    """Pull, edit, write (and re-save), read, plan, apply; then compare field by field."""
    with service("small") as (server, client), tempfile.TemporaryDirectory() as folder:
        remote = pull(client, server)
        assert len(remote) == ROWS
        before = stored(server, remote["ID"])
        path = write_frame(sheet_of(remote, edit), Path(folder) / "listings.xlsx")
        if resave_as is not None:
            path = resave(path, resave_as, Path(folder) / "saved")
        sheet = eb.read_sheet(path, defaults=UNIT, progress=False)
        plan = eb.plan_sync(sheet, remote, delete_missing=edit.delete_missing)
        assert not plan.invalid, plan.invalid
        # A copy of a row whose price or area was edited carries the old unit price: the reader
        # flags it, and a flagged cell is held back (law 4). Nothing else is.
        stale_copy = edit.add_copy_of is not None and any(
            r == edit.add_copy_of and column in PRICE_OR_AREA for (r, column) in edit.changes
        )
        held = [(h.key, h.field) for h in plan.held_back]
        assert held in ([], [(NEW_KEY, "UnitAreaPrice")]) if stale_copy else not held, held

        changed_rows = {row for row, _ in edit.changes}
        keys = remote["MLSNumber"].astype(str)
        assert {op.key for op in plan.updates} == {keys[row] for row in changed_rows}
        for op in plan.updates:
            fields = {c.field for c in op.changes} - {"UnitAreaPrice"}
            row = int(keys[keys == op.key].index[0])
            assert fields == {col for (r, col) in edit.changes if r == row}, op.changes
        assert [op.key for op in plan.creates] == (
            [NEW_KEY] if edit.add_copy_of is not None else []
        )
        deleting = edit.delete is not None and edit.delete_missing
        assert [op.key for op in plan.deletes] == ([keys[edit.delete]] if deleting else [])

        report = eb.apply_plan(plan, client, server.serial, progress=False)
        assert report.ok, report.failures.to_dict("records")
        want_frame, want_records = intended(remote, before, edit)
        moved = {str(keys[row]) for (row, column) in edit.changes if column in PRICE_OR_AREA}
        moved.add(NEW_KEY)  # a new listing's blank unit price may be computed by the reader

        def allow(key: str, name: str, got: Any) -> bool:
            # A unit price may follow its edited price or area, to the value they give; a cell
            # held back is not sent (a new listing leaves it empty).
            return (
                name == "UnitAreaPrice"
                and key in moved
                and near(got, unit_price_of(want_records[key]))
            ) or ((key, name) in held and is_blank(got))

        after = pull(client, server)
        assert frame_differences(want_frame, after, skip=("ID",), allow=allow) == []
        kept = after[after["MLSNumber"].isin(keys)].set_index("MLSNumber")["ID"]
        assert (kept == remote.set_index("MLSNumber").loc[kept.index, "ID"]).all()
        assert stored_differences(want_records, stored(server, after["ID"]), allow=allow) == []


@st.composite
def pulled_edits(draw: st.DrawFn) -> Edit:
    """An edit of the small seed's pulled listings (pulled once, to draw from)."""
    return draw(edits(_seed_frame()))


_SEED: list[pd.DataFrame] = []


def _seed_frame() -> pd.DataFrame:
    """The small seed's listings as a pull returns them (every example starts from these)."""
    if not _SEED:
        with service("small") as (server, client):
            _SEED.append(pull(client, server))
    return _SEED[0]


@SETTINGS
@given(edit=pulled_edits())
# Met once: a row's area edited and the row copied as a new listing, with its old unit price.
@example(
    edit=Edit(
        changes={(0, "Address"): "12 A St", (0, "BuildingArea"): 300.0},
        add_copy_of=0,
        order=list(schema.COLUMNS),
    )
)
def test_a_random_edit_written_to_xlsx_lands_field_by_field(edit: Edit) -> None:
    """Any edit of a pulled file, written to xlsx, read, planned and applied: the service holds
    the intended listings field by field and nothing the edit did not touch changed."""
    check_loop(edit, None)


@needs_soffice
@SLOW_SETTINGS
@given(edit=pulled_edits(), kind=st.sampled_from(["xlsx", "csv"]))
def test_a_random_edit_resaved_by_libreoffice_lands_field_by_field(
    edit: Edit, kind: Format
) -> None:
    """The same, with the edited file re-saved through LibreOffice as xlsx or csv first."""
    check_loop(edit, kind)
