"""The columnar plan agrees with row-by-row references: keys and pairing, joined structured
columns, hashes and fingerprints, comparisons, validated bodies, unchanged listings."""

from __future__ import annotations

import hashlib
import json
import math
import pickle
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from estatebot.api.models import KeyType, ListingInput, ListingUpdate
from estatebot.listings import schema
from estatebot.listings.sync.plan.desired import sheet_parts
from estatebot.listings.sync.plan.differences import _text_differs
from estatebot.listings.sync.plan.operations import ListingRef, RefColumns
from estatebot.listings.sync.plan.pairing import Pairing
from estatebot.listings.sync.plan.remote_side import clean_remote
from estatebot.listings.sync.sync_plan import SyncPlan, plan_sync
from estatebot.listings.sync.values.compare import (
    PRECISION,
    equal_floats,
    equal_mask,
    key_values,
    match_keys,
)
from estatebot.listings.sync.values.hashing import HASH_VERSION, frame_fingerprint, frame_hashes
from estatebot.listings.sync.values.joined import join_clean_images, join_clean_mappings
from estatebot.listings.sync.values.key_arrays import (
    KeyColumn,
    all_distinct,
    key_array,
    match_array,
    positions_in,
)
from estatebot.listings.sync.values.payloads import RequestBodies, _validate_column
from estatebot.listings.sync.values.tidy import (
    clean_extension_list,
    clean_frame,
    clean_images_list,
    clean_value,
)
from factories import complete_listing

# Text with the whitespace str.strip removes (ASCII, no-break and ideographic spaces, a file
# separator), upper case, a letter that folds to two (ß), the hash's separators and an accent.
piece = st.text(alphabet="aB ß\t\u00a0\u3000\x1c\x01\x03é-", max_size=5)
maybe_text = st.one_of(st.none(), piece)


def text_series(values: list[Any], name: str) -> pd.Series:
    return pd.Series(values, dtype="string", name=name)


# --------------------------------------------------------------------------- keys


@settings(max_examples=150, deadline=None)
@given(st.lists(maybe_text, max_size=12), st.lists(maybe_text, max_size=12))
def test_keys_match_as_one_by_one(sheet: list[Any], remote: list[Any]) -> None:
    sheet_keys = text_series(sheet, "MLSNumber")
    remote_keys = text_series(remote, "MLSNumber")
    assert key_array(sheet_keys).to_pylist() == key_values(sheet_keys)
    matched = match_array(key_array(sheet_keys))
    assert matched.to_pylist() == match_keys(key_values(sheet_keys))
    # Each key's first position among the remote keys, by a dictionary.
    table = match_keys(key_values(remote_keys))
    first: dict[str, int] = {}
    for position, k in enumerate(table):
        if k is not None:
            first.setdefault(k, position)
    expected = [first.get(k, -1) if k is not None else -1 for k in matched.to_pylist()]
    found = positions_in(matched, match_array(key_array(remote_keys)))
    assert found.tolist() == expected


@settings(max_examples=150, deadline=None)
@given(st.lists(maybe_text, max_size=10), st.booleans())
def test_distinct_keys_are_told_as_by_a_set(written: list[Any], ordered: bool) -> None:
    keys = match_array(key_array(text_series(written, "MLSNumber")))
    if ordered:  # the path for keys in increasing order
        keys = keys.take(pc.sort_indices(keys))
    present = [k for k in keys.to_pylist() if k is not None]
    assert all_distinct(keys) == (len(set(present)) == len(present))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-5, 10**12)), max_size=8))
def test_integer_keys_are_their_digits(ids: list[int | None]) -> None:
    series = pd.Series(ids, dtype="Int64", name="ID")
    assert key_array(series, is_clean=True).to_pylist() == key_values(series, is_clean=True)


def reference_pairing(
    sheet_keys: list[str | None],
    remote_keys: list[str | None],
    sheet_other: list[str | None],
    remote_other: list[str | None],
    rows: list[int],
) -> tuple[list[int], dict[int, list[str]], list[bool]]:
    """Pairing as it was done one row at a time: a dictionary of remote keys, the empty and
    repeated sheet keys set aside, then the other identity for the rows left unmatched."""
    keys, remote = match_keys(sheet_keys), match_keys(remote_keys)
    at = {k: p for p, k in enumerate(remote) if k is not None}
    problems: dict[int, list[str]] = {}
    for position, k in enumerate(keys):
        if k is None:
            problems[position] = ["MLSNumber: empty, so the listing cannot be matched"]
    groups: dict[str, list[int]] = {}
    for position, k in enumerate(keys):
        if k is not None:
            groups.setdefault(k, []).append(position)
    for found in groups.values():
        if len(found) > 1:
            shown = ", ".join(str(rows[p]) for p in found)
            reason = (
                f"MLSNumber: {sheet_keys[found[0]]!r} is on rows {shown}; every row of a "
                "duplicated key is rejected"
            )
            for p in found:
                problems[p] = [reason]
    remote_of = [at.get(k, -1) if k is not None else -1 for k in keys]
    by_identity = [False] * len(keys)
    taken = {p for p in remote_of if p >= 0}
    other = match_keys(remote_other)
    owners: dict[str, int] = {}
    for position, value in enumerate(other):
        if position not in taken and value is not None:
            owners[value] = -1 if value in owners else position
    for position, value in enumerate(match_keys(sheet_other)):
        if position in problems or remote_of[position] >= 0 or value is None:
            continue
        if owners.get(value, -1) >= 0:
            remote_of[position], by_identity[position] = owners[value], True
            owners[value] = -1
    return remote_of, problems, by_identity


few_keys = st.one_of(st.none(), st.sampled_from(["M1", "m1", " M2", "M3", "m 4", "M\t4", ""]))
few_urls = st.one_of(st.none(), st.sampled_from(["u1", "U1", "u2", "u3 ", "u4"]))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(few_keys, few_urls), max_size=8),
    st.lists(st.tuples(few_keys, few_urls), max_size=8, unique_by=lambda t: (t[0] or "").lower()),
)
def test_pairing_agrees_with_a_row_by_row_reference(
    sheet_rows: list[tuple[Any, Any]], remote_rows: list[tuple[Any, Any]]
) -> None:
    remote_rows = [r for r in remote_rows if r[0] is None or r[0].strip()]
    remote_match = match_keys(key_values(text_series([r[0] for r in remote_rows], "MLSNumber")))
    present = [k for k in remote_match if k is not None]
    if len(set(present)) != len(present):
        return  # remote keys must be unique: a plan refuses them otherwise
    sheet = pd.DataFrame(
        {
            "MLSNumber": text_series([r[0] for r in sheet_rows], "MLSNumber"),
            "Url": text_series([r[1] for r in sheet_rows], "Url"),
        }
    )
    sheet.index = pd.RangeIndex(2, len(sheet) + 2)
    remote = clean_frame(
        pd.DataFrame(
            {
                "MLSNumber": text_series([r[0] for r in remote_rows], "MLSNumber"),
                "Url": text_series([r[1] for r in remote_rows], "Url"),
            }
        )
    ).reset_index(drop=True)
    parts = sheet_parts(sheet, "MLSNumber")
    remote_key = KeyColumn(key_array(remote["MLSNumber"], is_clean=True))
    ctx = Pairing(
        KeyType.MLS_NUMBER, "MLSNumber", parts, KeyColumn(key_array(parts.frame["MLSNumber"])),
        remote, remote_key,
    )  # fmt: skip
    ctx.match()
    expected = reference_pairing(
        key_values(sheet["MLSNumber"]),
        key_values(remote["MLSNumber"], is_clean=True),
        key_values(sheet["Url"]),
        key_values(remote["Url"], is_clean=True),
        parts.rows,
    )
    assert (ctx.remote_of.tolist(), ctx.problems, ctx.by_identity.tolist()) == expected
    assert list(ctx.problems) == list(expected[1])  # in the same order


# --------------------------------------------------------------------------- joined columns

item = st.one_of(piece, st.integers(0, 3))
image_rows = st.lists(
    st.one_of(st.lists(piece, max_size=3), st.lists(item, max_size=2), st.none(), piece),
    max_size=6,
)


@settings(max_examples=200, deadline=None)
@given(image_rows)
def test_images_are_joined_exactly_when_clean_item_by_item(values: list[Any]) -> None:
    joined = join_clean_images(values)
    clean_as_is = clean_images_list(values) is None
    assert (joined is not None) == clean_as_is
    if joined is not None:
        assert joined.counts.tolist() == [len(v) for v in values]
        assert joined.text == "\x01".join(chain.from_iterable(values))


mapping = st.dictionaries(piece, st.one_of(piece, st.integers(0, 2)), max_size=3)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(mapping, st.none()), max_size=6), st.booleans())
def test_mappings_are_joined_exactly_when_clean_and_alike(values: list[Any], same: bool) -> None:
    if same and values and isinstance(values[0], dict):
        # Most exports: every row with the first row's keys, in its order.
        values = [dict.fromkeys(values[0], f"v{n}") for n in range(len(values))]
    joined = join_clean_mappings(values)
    alike = bool(values) and all(
        type(v) is dict and list(v) == list(values[0]) for v in values
    )  # fmt: skip
    keys = list(values[0]) if alike else []
    expected = alike and clean_extension_list(values) is None and not any("\x01" in k for k in keys)
    assert (joined is not None) == expected
    if joined is not None:
        assert list(joined.keys) == keys
        in_order = [[m[k] for k in sorted(m)] for m in values]
        assert joined.values == "\x01".join(chain.from_iterable(in_order))


# --------------------------------------------------------------------------- hashes

number = st.one_of(
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e6, max_value=1e6),
    st.sampled_from([0.0, -0.0, 1.005, 2.675, 0.1 + 0.2, math.nan]),
)
listing_rows = st.fixed_dictionaries(
    {
        "ID": st.one_of(st.none(), st.integers(1, 10**6)),
        "MLSNumber": maybe_text,
        "Description": maybe_text,
        "Location": maybe_text,  # never shown by List: never hashed
        "Bedrooms": st.one_of(st.none(), st.integers(0, 9)),
        "SalePrice": number,
        "Latitude": number,
        "Images": st.lists(piece, max_size=3),
        "ExtensionColumn": st.dictionaries(piece, piece, max_size=3),
    }
)


def reference_hash(row: dict[str, Any]) -> str:
    """A listing's hash (scheme 3) made from its canonical values alone, field by field."""
    numbers = b""
    texts: list[str] = []

    def escape(text: str) -> str:
        out = text.replace("\x03", "\x03\x03").replace("\x00", "\x030")
        return out.replace("\x01", "\x031").replace("\x02", "\x032")

    for column in schema.COLUMNS:
        value = None if column in schema.UNLISTED_COLUMNS else clean_value(column, row.get(column))
        if column in schema.INT_COLUMNS or column in schema.FLOAT_COLUMNS:
            number = math.nan if value is None else float(value)
            if column in schema.FLOAT_COLUMNS and not math.isnan(number):
                number = float(np.round(number, PRECISION[column])) + 0.0
            numbers += np.array([number + 0.0], dtype="<f8").tobytes()
        elif column in schema.LIST_COLUMNS:
            texts.append("\x01".join(escape(v) for v in (value or [])))
        elif column in schema.DICT_COLUMNS:
            names = sorted(value or {})
            keys = "\x01".join(escape(k) for k in names)
            texts.append(keys + "\x02" + "\x01".join(escape(value[k]) for k in names))
        else:
            texts.append(escape(value or ""))
    prefix = f"estatebot listing v{HASH_VERSION}\n".encode()
    return hashlib.sha256(prefix + numbers + "\x00".join(texts).encode()).hexdigest()


def frame_of(records: list[dict[str, Any]]) -> pd.DataFrame:
    return schema.conform(pd.DataFrame.from_records(records, columns=list(schema.COLUMNS)))


@settings(max_examples=80, deadline=None)
@given(st.lists(listing_rows, max_size=6))
def test_row_hashes_match_a_field_by_field_encoding(records: list[dict[str, Any]]) -> None:
    frame = frame_of(records)
    expected = [reference_hash(r) for r in records]
    assert frame_hashes(frame) == expected
    assert frame_hashes(clean_frame(frame), is_clean=True) == expected
    backwards = list(range(len(records)))[::-1]
    assert frame_hashes(frame, positions=backwards) == expected[::-1]


@settings(max_examples=80, deadline=None)
@given(st.lists(listing_rows, max_size=6), st.booleans())
def test_remote_side_cleans_and_fingerprints_as_item_by_item(
    records: list[dict[str, Any]], uniform: bool
) -> None:
    if uniform:  # one set of extension fields, as most exports have
        for n, record in enumerate(records):
            record["ExtensionColumn"] = {"Pool": f"v{n}", "Gym": "yes"}
    frame = frame_of(records)
    side = clean_remote(frame)
    expected = clean_frame(frame).reset_index(drop=True)
    pd.testing.assert_frame_equal(side.clean, expected)  # dtypes, index and names
    assert side.clean.equals(expected)  # and values exactly
    assert frame_fingerprint(side.clean, is_clean=True, joined=side.joined) == (
        frame_fingerprint(frame)
    )


# --------------------------------------------------------------------------- comparisons


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(number, number), max_size=8), st.sampled_from([None, 0.0, 0.01, 5.0]))
def test_float_equality_agrees_with_the_series_rule(
    pairs: list[tuple[Any, Any]], tolerance: float | None
) -> None:
    for name in ("SalePrice", "Latitude", "Bedrooms"):
        left = pd.Series([a for a, _ in pairs], dtype="Float64", name=name)
        right = pd.Series([b for _, b in pairs], dtype="Float64", name=name)
        a = left.to_numpy(dtype="float64", na_value=np.nan)
        b = right.to_numpy(dtype="float64", na_value=np.nan)
        found = equal_floats(name, a, b, tolerance=tolerance)
        assert found.tolist() == equal_mask(left, right, tolerance=tolerance).tolist()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(maybe_text, maybe_text, st.booleans()), max_size=8))
def test_text_differences_agree_cell_by_cell(cells: list[tuple[Any, Any, bool]]) -> None:
    sheet = text_series([c[0] for c in cells], "City")
    remote = clean_frame(pd.DataFrame({"City": text_series([c[1] for c in cells], "City")}))
    clear = np.array([c[2] for c in cells], dtype=bool)
    to_arrow = pa.array
    found = _text_differs(
        to_arrow(sheet.array).cast(pa.large_string()),
        to_arrow(remote["City"].array).cast(pa.large_string()),
        clear,
    )
    expected = []
    for (written, _, cleared), before in zip(cells, remote["City"].tolist(), strict=True):
        remote_value = None if before is pd.NA else before
        value = clean_value("City", written)
        if cleared:
            expected.append(remote_value is not None)
        else:
            expected.append(value is not None and value != remote_value)
    assert found.tolist() == expected


# --------------------------------------------------------------------------- bodies

field_value = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 5),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 95.0, -91.0, 2.5]),
    st.sampled_from(["for_sale", "Active", "Square Feet", "3D", "Entire place", "MLSNumber"]),
    piece,
    st.lists(piece, max_size=2),
    st.lists(st.fixed_dictionaries({"Key": piece, "value": piece}), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(st.booleans(), st.data())
def test_columns_taken_as_they_are_validate_as_pydantic_does(update: bool, data: Any) -> None:
    bodies = RequestBodies(ListingUpdate if update else ListingInput)
    bodies._prepare()
    assert bodies._adapters is not None
    for name in bodies.names:
        # Usually a column of one kind, sometimes a mix.
        kind = data.draw(field_value)
        values = data.draw(
            st.lists(st.one_of(st.just(kind), st.none(), field_value), max_size=5), label=name
        )
        fast = bodies._column(name, values)
        slow = _validate_column(bodies._adapters[name], values)
        assert json.dumps(fast[0], default=repr) == json.dumps(slow[0], default=repr), name
        assert fast[1] == slow[1], name


# --------------------------------------------------------------------------- unchanged listings


def test_unchanged_listings_are_made_only_when_read() -> None:
    remote = frame_of([{**complete_listing(n), "ID": n} for n in range(1, 6)])
    sheet = remote.drop(columns=["ID"])
    sheet.index = pd.RangeIndex(2, 7)
    plan = plan_sync(sheet, remote)
    held = plan.__dict__["_unchanged"]
    assert isinstance(held, RefColumns)  # handed out as a SyncPlan, still held as columns
    assert plan.counts()["unchanged"] == 5
    copy = pickle.loads(pickle.dumps(plan))
    expected = [ListingRef(f"M{n}", n + 1, n) for n in range(1, 6)]
    assert plan.unchanged == expected
    assert plan.unchanged is plan.unchanged  # made once
    assert copy.unchanged == expected
    assert copy == plan
    assert SyncPlan.of(plan).unchanged == expected
    plan.unchanged = []
    assert plan.counts()["unchanged"] == 0


def test_planning_changes_neither_frame() -> None:
    # Columns without a missing value share their arrays with the floats made of them: nothing
    # may be rounded, trimmed or reordered in place.
    records = [
        {**complete_listing(n), "ID": n, "City": " Austin ", "Latitude": 30.1234567 + n}
        for n in range(1, 6)
    ]
    remote = frame_of(records)
    sheet = remote.drop(columns=["ID"]).iloc[::-1]
    sheet["SalePrice"] = sheet["SalePrice"] + 0.004
    sheet.index = pd.RangeIndex(2, 7)
    remote_copy, sheet_copy = remote.copy(deep=True), sheet.copy(deep=True)
    plan_sync(sheet, remote).to_json()
    assert remote.equals(remote_copy)  # exactly (assert_frame_equal allows a tolerance)
    assert sheet.equals(sheet_copy)
