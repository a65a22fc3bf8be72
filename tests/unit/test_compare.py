"""Canonical comparison: precision, trimming, missing values, structured columns, hashes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estatebot.listings import schema
from estatebot.listings.sync.values.compare import (
    PRECISION,
    blank_mask,
    canonical_value,
    equal_mask,
    key_values,
    normalize_key,
)
from estatebot.listings.sync.values.hashing import (
    HASH_VERSION,
    frame_fingerprint,
    frame_hashes,
    listing_hash,
)
from estatebot.listings.sync.values.tidy import (
    clean_extension,
    clean_frame,
    clean_images,
    clean_text,
)


def column(name: str, values: list[Any]) -> pd.Series:
    """A clean canonical column named ``name`` holding ``values``."""
    frame = schema.conform(pd.DataFrame({name: pd.Series(values, dtype=schema.DTYPES[name])}))
    return clean_frame(frame)[name]


def same(name: str, left: list[Any], right: list[Any], **kwargs: Any) -> list[bool]:
    return [bool(x) for x in equal_mask(column(name, left), column(name, right), **kwargs)]


def test_every_float_column_has_a_precision() -> None:
    assert set(PRECISION) == set(schema.FLOAT_COLUMNS)


def test_money_is_compared_to_the_cent() -> None:
    assert same("SalePrice", [100.004, 100.01, 250000.0], [100.001, 100.02, 250000]) == [
        True,
        False,
        True,
    ]


def test_coordinates_to_six_decimals_and_areas_to_two() -> None:
    assert same("Latitude", [30.1234561, 30.123456], [30.1234564, 30.123457]) == [True, False]
    assert same("BuildingArea", [1500.001, 1500.0], [1500.004, 1500.1]) == [True, False]


def test_counts_are_exact() -> None:
    assert same("Bedrooms", [3, 3, None], [3, 4, None]) == [True, False, True]


def test_tolerance_replaces_the_precision() -> None:
    assert same("SalePrice", [100_000.0], [100_900.0], tolerance=1000) == [True]
    assert same("SalePrice", [100.004], [100.001], tolerance=0) == [False]


def test_text_is_trimmed_and_empty_is_missing() -> None:
    assert same(
        "City", [" Austin\u00a0", "", None, "Austin"], ["Austin", None, None, "austin"]
    ) == [
        True,
        True,
        True,
        False,  # case matters
    ]


def test_missing_number_differs_from_zero() -> None:
    assert same("HOAMonth", [None, 0.0], [0.0, 0.0]) == [False, True]


def test_images_are_ordered_lists() -> None:
    a, b = "https://i/1.jpg", "https://i/2.jpg"
    assert same("Images", [[a, b], [a, b], [f" {a} ", ""]], [[a, b], [b, a], [a]]) == [
        True,
        False,
        True,
    ]
    assert blank_mask(column("Images", [[], ["  "], [a]])).tolist() == [True, True, False]


def test_extension_column_compares_as_a_mapping() -> None:
    left = [{"Pool": "Yes", "View": "Lake"}, {"Pool": "Yes"}, {"Pool": " "}]
    right = [{"View": "Lake", "Pool": "Yes"}, {"Pool": "No"}, {}]
    assert same("ExtensionColumn", left, right) == [True, False, True]


def test_extension_reads_the_wire_form() -> None:
    wire = [{"Key": " Pool ", "value": "Yes"}, {"Key": "Garage", "Value": 2}]
    assert clean_extension(wire) == {"Pool": "Yes", "Garage": "2"}
    assert clean_extension(None) == {}
    assert clean_images("https://i/1.jpg") == ["https://i/1.jpg"]
    assert clean_images(np.nan) == []


def test_canonical_value_rounds_and_normalizes() -> None:
    assert canonical_value("SalePrice", 100.004) == 100.0
    assert canonical_value("Latitude", -0.0000001) == 0.0
    assert canonical_value("Bedrooms", 3.0) == 3
    assert canonical_value("City", "  ") is None
    assert canonical_value("Images", []) is None
    assert canonical_value("ExtensionColumn", {"b": "2", "a": "1"}) == [["a", "1"], ["b", "2"]]


def test_listing_hash_is_canonical() -> None:
    row = {"ID": 7, "MLSNumber": "A1", "SalePrice": 100.0, "City": "Austin", "Images": ["u"]}
    same_row = {
        "Images": [" u "],
        "City": "Austin ",
        "SalePrice": 100.001,
        "MLSNumber": "A1",
        "ID": 7.0,
        "Description": "",
        "HOAMonth": float("nan"),
        "ZIP": pd.NA,
        "not a column": "ignored",
    }
    assert listing_hash(row) == listing_hash(same_row)
    assert listing_hash(row) != listing_hash({**row, "SalePrice": 100.01})
    assert listing_hash(row) != listing_hash({**row, "Images": ["u", "v"]})
    assert len(listing_hash({})) == 64


def test_fingerprint_ignores_row_order_and_formatting() -> None:
    frame = schema.conform(
        pd.DataFrame({"ID": [2, 1], "MLSNumber": ["B", "A"], "SalePrice": [1.0, 2.0]})
    )
    shuffled = frame.iloc[::-1].copy()
    shuffled["MLSNumber"] = shuffled["MLSNumber"] + " "
    assert frame_fingerprint(frame) == frame_fingerprint(shuffled)
    changed = frame.copy()
    changed.loc[0, "SalePrice"] = 3.0
    assert frame_fingerprint(frame) != frame_fingerprint(changed)


def test_keys_as_text() -> None:
    assert key_values(pd.Series([" A1 ", "", None], name="MLSNumber", dtype="string")) == [
        "A1",
        None,
        None,
    ]
    assert key_values(pd.Series([12, None], name="ID", dtype="Int64")) == ["12", None]
    assert normalize_key(12.0, "ID") == "12"
    assert normalize_key(" 0012 ", "MLSNumber") == "0012"
    assert normalize_key(None, "Url") is None


def test_clean_frame_leaves_the_input_alone() -> None:
    frame = schema.conform(pd.DataFrame({"City": [" Austin "], "Images": [[" u "]]}))
    clean_frame(frame)
    assert frame["City"].iloc[0] == " Austin "
    assert frame["Images"].iloc[0] == [" u "]


# --------------------------------------------------------------------------- properties

texts = st.one_of(st.none(), st.text(alphabet=" \u00a0ab<>&", max_size=6))
numbers = st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False))
rows = st.fixed_dictionaries(
    {
        "ID": st.one_of(st.none(), st.integers(1, 10**6)),
        "MLSNumber": texts,
        "City": texts,
        "Bedrooms": st.one_of(st.none(), st.integers(0, 9)),
        "SalePrice": numbers,
        "Latitude": numbers,
        "Images": st.lists(st.text(alphabet=" ab", max_size=3), max_size=3),
        "ExtensionColumn": st.dictionaries(
            st.text(alphabet=" ab", max_size=2), st.text(alphabet=" ab", max_size=2), max_size=2
        ),
    }
)


@settings(max_examples=60, deadline=None)
@given(st.lists(rows, max_size=5))
def test_frame_hashes_agree_with_listing_hash(records: list[dict[str, Any]]) -> None:
    frame = schema.conform(pd.DataFrame.from_records(records, columns=list(rows_keys())))
    assert frame_hashes(frame) == [listing_hash(r) for r in records]


def rows_keys() -> tuple[str, ...]:
    return (
        "ID",
        "MLSNumber",
        "City",
        "Bedrooms",
        "SalePrice",
        "Latitude",
        "Images",
        "ExtensionColumn",
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(numbers, numbers), min_size=1, max_size=6))
def test_equality_agrees_with_canonical_values(pairs: list[tuple[Any, Any]]) -> None:
    left, right = [a for a, _ in pairs], [b for _, b in pairs]
    for name in ("SalePrice", "Latitude"):
        expected = [
            canonical_value(name, a) == canonical_value(name, b)
            for a, b in zip(left, right, strict=True)
        ]
        # Float columns need no cleaning beyond their dtype: build them directly (fast).
        a_col = pd.Series(left, dtype="Float64", name=name)
        b_col = pd.Series(right, dtype="Float64", name=name)
        assert equal_mask(a_col, b_col).tolist() == expected


@pytest.mark.parametrize("value", [None, pd.NA, float("nan"), np.nan])
def test_missing_forms_hash_alike(value: Any) -> None:
    assert listing_hash({"SalePrice": value, "City": value}) == listing_hash({})


@pytest.mark.parametrize(
    ("images", "expected"),
    [
        ([["a", "b"], []], [["a", "b"], []]),
        ([["a"], ["b "]], [["a"], ["b"]]),
        ([["a"], ["", "c"]], [["a"], ["c"]]),
        ([["a"], ["\u00a0c"]], [["a"], ["c"]]),
        ([["a"], None], [["a"], []]),
    ],
)
def test_clean_frame_tidies_images_row_by_row(images: list[Any], expected: list[list[str]]) -> None:
    frame = pd.DataFrame({"Images": pd.Series(images, dtype="object")})
    assert clean_frame(frame)["Images"].tolist() == expected


def test_clean_frame_tidies_extension_mappings() -> None:
    frame = pd.DataFrame({"ExtensionColumn": [{"Pool": "Yes"}, {" View ": "Lake", "Gone": " "}]})
    assert clean_frame(frame)["ExtensionColumn"].tolist() == [{"Pool": "Yes"}, {"View": "Lake"}]


# --------------------------------------------------------------------------- hash scheme 2

# Text with the encoding's separators and escape character, spaces and a non-ASCII letter.
awkward = st.text(alphabet="\x00\x01\x02\x03 ab\u00e9", max_size=4)
awkward_rows = st.fixed_dictionaries(
    {
        "ID": st.one_of(st.none(), st.integers(1, 10**6)),
        "MLSNumber": st.one_of(st.none(), awkward),
        "Description": st.one_of(st.none(), awkward),
        "HOAMonth": numbers,
        "Images": st.lists(awkward, max_size=3),
        # Keys drawn in any order: mappings with the same entries must hash alike.
        "ExtensionColumn": st.lists(st.tuples(awkward, awkward), max_size=3).map(dict),
    }
)


@settings(max_examples=80, deadline=None)
@given(st.lists(awkward_rows, max_size=6))
def test_frame_hashes_agree_with_listing_hash_on_awkward_text(
    records: list[dict[str, Any]],
) -> None:
    frame = schema.conform(pd.DataFrame.from_records(records, columns=list(awkward_rows_keys())))
    hashes = frame_hashes(frame)
    assert hashes == [listing_hash(r) for r in records]
    # A listing's hash does not depend on the other listings of its frame.
    assert hashes == [frame_hashes(frame.iloc[[i]])[0] for i in range(len(frame))]
    # Equal canonical values, equal hashes; different canonical values, different hashes.
    canon = [tuple(repr(canonical_value(c, r.get(c))) for c in schema.COLUMNS) for r in records]
    for i in range(len(records)):
        for j in range(len(records)):
            assert (hashes[i] == hashes[j]) == (canon[i] == canon[j])


def awkward_rows_keys() -> tuple[str, ...]:
    return ("ID", "MLSNumber", "Description", "HOAMonth", "Images", "ExtensionColumn")


def pulled(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return schema.conform(pd.DataFrame.from_records(rows, columns=list(schema.COLUMNS)))


def test_a_listing_pulled_again_unchanged_hashes_the_same() -> None:
    first = pulled(
        [
            {"ID": 1, "MLSNumber": "A1", "City": "Austin", "SalePrice": 100.0, "Bedrooms": 3,
             "Images": ["u", "v"], "ExtensionColumn": {"Pool": "Yes", "View": "Lake"}},
            {"ID": 2, "MLSNumber": "B2", "Description": None, "ZIP": "02108"},
        ]
    )  # fmt: skip
    again = pulled(
        [
            {"ID": 2, "MLSNumber": " B2", "Description": "", "ZIP": "02108 "},
            {"ID": 1, "MLSNumber": "A1 ", "City": "Austin\u00a0", "SalePrice": 100.004,
             "Bedrooms": 3.0, "Images": [" u", "v "], "ExtensionColumn": {"View": "Lake ",
             "Pool": "Yes", "Empty": " "}},
        ]
    )  # fmt: skip
    assert frame_hashes(first) == frame_hashes(again)[::-1]
    assert frame_fingerprint(first) == frame_fingerprint(again)
    changed = again.copy()
    changed["Images"] = pd.Series([[], ["v", "u"]], dtype="object")
    assert frame_hashes(changed)[1] != frame_hashes(first)[0]
    assert frame_fingerprint(changed) != frame_fingerprint(first)


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ({"Images": ["a\x01b"]}, {"Images": ["a", "b"]}),
        ({"Images": ["a\x00"], "City": "b"}, {"Images": ["a"], "City": "\x00b"}),
        ({"ExtensionColumn": {"a": "b\x02c"}}, {"ExtensionColumn": {"a\x02b": "c"}}),
        ({"City": "a\x03", "State": "b"}, {"City": "a", "State": "\x03b"}),
        ({"City": "ab", "State": None}, {"City": "a", "State": "b"}),
    ],
)
def test_separators_in_values_never_collide(left: dict[str, Any], right: dict[str, Any]) -> None:
    assert listing_hash(left) != listing_hash(right)
    assert frame_fingerprint(pulled([{"ID": 1, **left}])) != frame_fingerprint(
        pulled([{"ID": 1, **right}])
    )


def test_fingerprint_reads_every_mapping_group_in_key_order() -> None:
    rows = [
        {"ID": 1, "ExtensionColumn": {"b": "1", "a": "2"}},
        {"ID": 2, "ExtensionColumn": {"a": "3"}},
        {"ID": 3, "ExtensionColumn": {}},
        {"ID": 4, "ExtensionColumn": {"c": "4", "a": "5", "b": "6"}},
    ]
    reordered = [
        {**r, "ExtensionColumn": dict(reversed(r["ExtensionColumn"].items()))} for r in rows
    ]
    assert frame_fingerprint(pulled(rows)) == frame_fingerprint(pulled(reordered))
    assert frame_hashes(pulled(rows)) == frame_hashes(pulled(reordered))
    swapped = [*rows[:3], {"ID": 4, "ExtensionColumn": {"c": "4", "a": "6", "b": "5"}}]
    assert frame_fingerprint(pulled(rows)) != frame_fingerprint(pulled(swapped))


def test_fingerprint_does_not_depend_on_string_storage() -> None:
    frame = pulled(
        [{"ID": i, "MLSNumber": f"M{i}", "City": None if i % 3 else "Austin"} for i in range(5)]
    )
    python = frame.copy()
    for name in ("MLSNumber", "City", "Description"):
        python[name] = python[name].astype(pd.StringDtype("python"))
    assert frame_fingerprint(python) == frame_fingerprint(frame)
    assert frame_hashes(python) == frame_hashes(frame)


def test_hash_scheme_version() -> None:
    assert HASH_VERSION == 3
    assert len(listing_hash({"MLSNumber": "A1"})) == 64


def test_clean_text_trims_and_empties() -> None:
    text = clean_text(pd.Series([" a ", "", "\u00a0", None, "b"], dtype=object))
    assert text.dtype == "string"
    assert text.tolist() == ["a", pd.NA, pd.NA, pd.NA, "b"]


def test_clean_frame_reads_wire_extension_and_lone_images() -> None:
    frame = pd.DataFrame(
        {
            "ExtensionColumn": [[{"Key": " Pool ", "value": "Yes"}], None, {"a": "1"}],
            "Images": [("u", " v "), "w", 5],
        }
    )
    clean = clean_frame(frame)
    assert clean["ExtensionColumn"].tolist() == [{"Pool": "Yes"}, {}, {"a": "1"}]
    assert clean["Images"].tolist() == [["u", "v"], ["w"], []]
    assert list(clean.columns) == list(schema.COLUMNS)
    assert list(clean_frame(frame, columns=["Images", "ID"]).columns) == ["ID", "Images"]
