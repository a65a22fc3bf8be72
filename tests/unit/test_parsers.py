"""Column parsers: numbers, enums, text, Images and ExtensionColumn, in every accepted form."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from estatebot.listings.remote import arrow
from estatebot.listings.remote.parsers import (
    parse_enum,
    parse_extensions,
    parse_images,
    parse_numbers,
    parse_text,
)


def raw(*values: Any) -> pd.Series:
    """A column as List records give it: Python objects."""
    return pd.Series(list(values), dtype=object)


@pytest.fixture(params=["pyarrow", "pandas"])
def storage(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with the direct pyarrow text conversion and with pandas' own."""
    if request.param == "pandas":
        monkeypatch.setattr(arrow, "_pyarrow", None)
    return str(request.param)


# --------------------------------------------------------------------------- numbers

DECORATED = [
    ("1234", 1234.0),
    ("1234.5", 1234.5),
    ("  42\u00a0", 42.0),
    ("\u00a0\u00a07.25 ", 7.25),
    ("$1,234,567.50", 1234567.5),
    ("$450,000.00", 450000.0),
    ("US$ 950", 950.0),
    ("€99", 99.0),
    ("£1,000", 1000.0),
    ("1,250 €", 1250.0),
    ("2,500 sqft", 2500.0),
    ("2500 sq ft", 2500.0),
    ("1,200 ft²", 1200.0),
    ("120 m²", 120.0),
    ("85 m2", 85.0),
    ("$2,400/mo", 2400.0),
    ("-12.5", -12.5),
    ("1e3", 1000.0),
    (".5", 0.5),
]


@pytest.mark.parametrize(("text", "expected"), DECORATED)
def test_numbers_in_every_accepted_form(storage: str, text: str, expected: float) -> None:
    parsed = parse_numbers(raw(text, "1"))
    assert parsed.values.dtype == "Float64"
    assert parsed.values.iloc[0] == expected
    assert parsed.problems.empty


@pytest.mark.parametrize("marker", ["", "null", "None", "-", "N/A", "NA", "n/a", " null ", "nan"])
def test_absent_markers_are_na_without_a_problem(storage: str, marker: str) -> None:
    parsed = parse_numbers(raw(marker, "5", None))
    assert parsed.values.isna().tolist() == [True, False, True]
    assert parsed.problems.empty


@pytest.mark.parametrize(
    "text", ["abc", "3 beds and a den", "1,5", "12,34,567", "1.2.3", "$", "inf", "1e999", "0x10"]
)
def test_unreadable_numbers_are_na_with_a_problem(storage: str, text: str) -> None:
    parsed = parse_numbers(raw("10", text, "20"))
    assert parsed.values.isna().tolist() == [False, True, False]
    assert parsed.values.iloc[2] == 20.0
    assert parsed.problems.index.tolist() == [1]
    assert "number" in parsed.problems.iloc[0]


def test_whole_numbers_accept_trailing_zeros_and_reject_fractions(storage: str) -> None:
    parsed = parse_numbers(raw("3", "3.0", "2.5", "1e3", "$1,200.00", " 7 ", "x"), integer=True)
    assert parsed.values.dtype == "Int64"
    assert parsed.values.tolist() == [3, 3, pd.NA, 1000, 1200, 7, pd.NA]
    assert parsed.problems.to_dict() == {2: "not a whole number", 6: "not a number"}


def test_long_whole_numbers_are_read_digit_by_digit(storage: str) -> None:
    # 2**53 + 1 cannot survive a float; the digits path keeps it.
    parsed = parse_numbers(raw("9007199254740993", "9007199254740993.00", "-12"), integer=True)
    assert parsed.values.tolist() == [9007199254740993, 9007199254740993, -12]
    too_long = parse_numbers(raw("1234567890123456789012", "1"), integer=True)
    assert too_long.values.isna().tolist() == [True, False]
    assert too_long.problems.iloc[0] == "out of range for a whole number"


def test_numbers_that_are_already_numbers() -> None:
    assert parse_numbers(raw(1, 2.5, None)).values.tolist() == [1.0, 2.5, pd.NA]
    ints = parse_numbers(raw(3, 3.0, None, 2.5), integer=True)
    assert ints.values.tolist() == [3, 3, pd.NA, pd.NA]
    assert ints.problems.to_dict() == {3: "not a whole number"}
    floats = parse_numbers(pd.Series([1.5, np.nan, np.inf]))
    assert floats.values.tolist() == [1.5, pd.NA, pd.NA]
    assert floats.problems.to_dict() == {2: "not a finite number"}
    assert parse_numbers(pd.Series([4, 5]), integer=True).values.dtype == "Int64"


def test_mixed_text_and_numbers_in_one_column(storage: str) -> None:
    parsed = parse_numbers(raw(30.25, "31.5", None, "", "$1,000"))
    assert parsed.values.tolist() == [30.25, 31.5, pd.NA, pd.NA, 1000.0]


def test_booleans_are_not_numbers() -> None:
    parsed = parse_numbers(pd.Series([True, False]))
    assert parsed.values.isna().all()
    assert len(parsed.problems) == 2


def test_an_empty_column_keeps_its_dtype(storage: str) -> None:
    assert parse_numbers(raw()).values.dtype == "Float64"
    assert parse_numbers(raw(), integer=True).values.dtype == "Int64"
    assert parse_numbers(raw(None, None), integer=True).values.isna().all()


def test_parsers_keep_the_index() -> None:
    column = pd.Series(["1", "x"], index=[10, 20], dtype=object)
    parsed = parse_numbers(column)
    assert parsed.values.index.tolist() == [10, 20]
    assert parsed.problems.index.tolist() == [20]


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), finite), max_size=30))
def test_decided_float_text_parses_back_exactly(values: list[float | None]) -> None:
    texts = ["" if value is None else repr(value) for value in values]
    parsed = parse_numbers(raw(*texts))
    assert parsed.problems.empty
    for value, got in zip(values, parsed.values.tolist(), strict=True):
        if value is None:
            assert got is pd.NA
        else:
            assert got == value  # exact: not merely close
            assert math.copysign(1.0, got) == math.copysign(1.0, value) or value == 0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(-(10**18) + 1, 10**18 - 1)), max_size=30))
def test_decided_int_text_parses_back_exactly(values: list[int | None]) -> None:
    texts = ["" if value is None else str(value) for value in values]
    parsed = parse_numbers(raw(*texts), integer=True)
    assert parsed.problems.empty
    assert parsed.values.tolist() == [pd.NA if value is None else value for value in values]


# --------------------------------------------------------------------------- enums and text

SALE_TYPES = {"for_sale": "for_sale", "for_rent": "for_rent"}
SALE_ALIASES = {"for sale": "for_sale", "for rent": "for_rent", "rent": "for_rent"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("For Sale", "for_sale"),
        ("FOR RENT", "for_rent"),
        (" for  rent ", "for_rent"),
        ("For-Rent", "for_rent"),
        ("for_sale", "for_sale"),
        ("Rent", "for_rent"),
    ],
)
def test_enum_variants_match_loosely(text: str, expected: str) -> None:
    parsed = parse_enum(raw(text), tuple(SALE_TYPES), SALE_ALIASES)
    assert parsed.values.tolist() == [expected]
    assert parsed.problems.empty


def test_enum_empty_is_na_and_unknown_is_a_problem() -> None:
    parsed = parse_enum(raw("", None, "  ", "Auction", "Active"), ("Active", "Sold"))
    assert parsed.values.tolist() == [pd.NA, pd.NA, pd.NA, pd.NA, "Active"]
    assert parsed.problems.index.tolist() == [3]
    assert "Active, Sold" in parsed.problems.iloc[0]
    assert parsed.values.dtype == "string"


def test_text_is_trimmed_and_empty_is_na(storage: str) -> None:
    parsed = parse_text(raw("  Austin\u00a0", "", " \u00a0 ", None, "02134", 78701))
    assert parsed.values.tolist() == ["Austin", pd.NA, pd.NA, pd.NA, "02134", "78701"]
    assert parsed.values.dtype == "string"
    assert parsed.problems.empty


# --------------------------------------------------------------------------- Images


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('["https://a/1.jpg","https://a/2.jpg"]', ["https://a/1.jpg", "https://a/2.jpg"]),
        ('["https://a/1.jpg", "https://a/2.jpg"]', ["https://a/1.jpg", "https://a/2.jpg"]),
        (' [ " https://a/1.jpg " ] ', ["https://a/1.jpg"]),
        ('["https://a/x?y=1\\u0026z=2"]', ["https://a/x?y=1&z=2"]),
        ('["https://a/1.jpg",""]', ["https://a/1.jpg"]),
        ('["https://a/1.jpg\u00a0"]', ["https://a/1.jpg"]),
        (
            '["\u2003https://a/1.jpg", "https://a/2.jpg\x85"]',
            ["https://a/1.jpg", "https://a/2.jpg"],
        ),
        ("https://a/1.jpg, https://a/2.jpg", ["https://a/1.jpg", "https://a/2.jpg"]),
        ("https://a/1.jpg|https://a/2.jpg", ["https://a/1.jpg", "https://a/2.jpg"]),
        ("https://a/1.jpg", ["https://a/1.jpg"]),
        ("", []),
        ("[]", []),
        ("   ", []),
    ],
)
def test_images_in_every_accepted_form(storage: str, text: str, expected: list[str]) -> None:
    parsed = parse_images(raw(text, None))
    assert parsed.values.tolist() == [expected, []]
    assert parsed.problems.empty


@pytest.mark.parametrize(("text", "message"), [("[broken", "JSON"), ("[1, 2]", "URLs")])
def test_unreadable_images_are_empty_with_a_problem(text: str, message: str) -> None:
    parsed = parse_images(raw('["https://a/1.jpg"]', text))
    assert parsed.values.tolist() == [["https://a/1.jpg"], []]
    assert parsed.problems.index.tolist() == [1]
    assert message in parsed.problems.iloc[0]


def test_images_already_lists() -> None:
    parsed = parse_images(raw(["https://a/1.jpg", " "], None, '["https://b"]'))
    assert parsed.values.tolist() == [["https://a/1.jpg"], [], ["https://b"]]


def test_rows_never_share_a_list(storage: str) -> None:
    parsed = parse_images(raw('["https://a"]', '["https://a"]', "", ""))
    first, second, third, fourth = parsed.values.tolist()
    first.append("changed")
    third.append("changed")
    assert second == ["https://a"]
    assert fourth == []


# URLs as the decided form carries them: no comma or pipe inside, no surrounding space (URLs are
# trimmed); quotes, backslashes and any other Unicode are fine, JSON escapes them.
url = st.text(
    st.characters(blacklist_categories=("Cs", "Zs", "Cc"), blacklist_characters=",|"),
    min_size=1,
    max_size=40,
).map(lambda tail: f"https://x.example/{tail}")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(url, max_size=5), max_size=10), st.booleans())
def test_decided_image_json_parses_back_exactly(lists: list[list[str]], ascii_only: bool) -> None:
    texts = [
        json.dumps(urls, ensure_ascii=ascii_only, separators=(",", ":")) if urls else ""
        for urls in lists
    ]
    parsed = parse_images(raw(*texts))
    assert parsed.problems.empty
    assert parsed.values.tolist() == lists


# --------------------------------------------------------------------------- ExtensionColumn


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[{"Key":"Pool","value":"Yes"}]', {"Pool": "Yes"}),
        ('[{"Key":"Pool","Value":"Yes"},{"Key":"View","Value":"Lake"}]',
         {"Pool": "Yes", "View": "Lake"}),
        ('{"Pool": "Yes", "Floors": 2}', {"Pool": "Yes", "Floors": "2"}),
        ('[{"Key":"HOA","value":null},{"Key":"Gated","value":true}]', {"HOA": "", "Gated": "true"}),
        ("Pool: Yes; View: Lake", {"Pool": "Yes", "View": "Lake"}),
        ("Pool: Yes\nWebsite: https://x.example/a",
         {"Pool": "Yes", "Website": "https://x.example/a"}),
        ("", {}),
        ("[]", {}),
    ],
)  # fmt: skip
def test_extensions_in_every_accepted_form(text: str, expected: dict[str, str]) -> None:
    parsed = parse_extensions(raw(text, None))
    assert parsed.values.tolist() == [expected, {}]
    assert parsed.problems.empty


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"Key": "Pool"', "JSON"),
        ("just some words", "pairs"),
        ('[{"value": "Yes"}]', "no Key"),
        ("[1, 2]", "Key, value"),
    ],
)
def test_unreadable_extensions_are_empty_with_a_problem(text: str, message: str) -> None:
    parsed = parse_extensions(raw("A: 1", text, text))
    assert parsed.values.tolist() == [{"A": "1"}, {}, {}]
    assert parsed.problems.index.tolist() == [1, 2]
    assert message in parsed.problems.iloc[0]


def test_repeated_extension_texts_give_separate_dicts() -> None:
    parsed = parse_extensions(raw("A: 1", "A: 1"))
    first, second = parsed.values.tolist()
    first["B"] = "2"
    assert second == {"A": "1"}


def test_extensions_already_dicts() -> None:
    parsed = parse_extensions(raw({"A": 1}, [{"Key": "B", "value": "x"}], None))
    assert parsed.values.tolist() == [{"A": "1"}, {"B": "x"}, {}]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.dictionaries(st.text(max_size=12), st.text(max_size=12), max_size=4), max_size=10),
    st.booleans(),
)
def test_decided_extension_json_parses_back_exactly(
    dicts: list[dict[str, str]], ascii_only: bool
) -> None:
    texts = [
        json.dumps(
            [{"Key": key, "value": value} for key, value in items.items()],
            ensure_ascii=ascii_only,
            separators=(",", ":"),
        )
        if items
        else ""
        for items in dicts
    ]
    parsed = parse_extensions(raw(*texts))
    assert parsed.problems.empty
    assert parsed.values.tolist() == dicts


def test_extensions_from_a_string_column() -> None:
    column = pd.Series(
        ['[{"Key":"Pool","value":"Yes"}]', "A: 1", None, "", "just words", "A: 1", "just words"],
        dtype="string",
    )
    parsed = parse_extensions(column)
    values = parsed.values.tolist()
    assert values == [{"Pool": "Yes"}, {"A": "1"}, {}, {}, {}, {"A": "1"}, {}]
    assert parsed.problems.index.tolist() == [4, 6]
    assert "pairs" in parsed.problems.iloc[0]
    values[1]["B"] = "2"
    assert parsed.values.iloc[5] == {"A": "1"}


# ------------------------------------------------------------------ with and without pyarrow

NUMBER_FORMS = [
    "0", "7", "42", "007", "-12", "+5", "3.0", "2.5", "-0.5", ".5", "5.", "1e3", "1e999", "inf",
    "nan", "", " ", " 7 ", "N/A", "null", "$1,200.00", "US$ 950", "2,500 sqft", "1,5", "abc",
    "9007199254740993", "1234567890123456789", "-123456789012345678",
]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.sampled_from(NUMBER_FORMS)), max_size=40),
    st.booleans(),
)
def test_number_text_reads_alike_with_and_without_pyarrow(
    values: list[str | None], integer: bool
) -> None:
    with_arrow = parse_numbers(raw(*values), integer=integer)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arrow, "_pyarrow", None)
        without = parse_numbers(raw(*values), integer=integer)
    pd.testing.assert_series_equal(with_arrow.values, without.values)
    pd.testing.assert_series_equal(with_arrow.problems, without.problems)


IMAGE_FORMS = [
    '["https://a/1.jpg","https://a/2.jpg"]', '["https://a/1.jpg", "https://a/2.jpg"]',
    '["https://a/1.jpg"]', '[ "https://a/1.jpg" ]', '["https://a/1 2.jpg"]', '["https://a/\\u00e9"]',
    '["https://a/1.jpg",  "https://a/2.jpg"]', '[""]', "[]", '["]', "https://a/1, https://a/2",
    "https://a/1|https://a/2", "", "  ", '["https://a/1.jpg"', "[1, 2]",
    '["https://a/1.jpg\u00a0"]', '["\u2003https://a/1.jpg"]', '["https://a/1.jpg\x85"]',
]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(IMAGE_FORMS)), max_size=30))
def test_images_read_alike_with_and_without_pyarrow(values: list[str | None]) -> None:
    with_arrow = parse_images(pd.Series(values, dtype="string"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arrow, "_pyarrow", None)
        without = parse_images(raw(*values))
    assert with_arrow.values.tolist() == without.values.tolist()
    pd.testing.assert_series_equal(with_arrow.problems, without.problems)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.sampled_from(IMAGE_FORMS)), min_size=1, max_size=30),
    st.integers(1, 30),
)
def test_images_read_alike_in_any_number_of_pyarrow_chunks(
    values: list[str | None], chunk_rows: int
) -> None:
    # Filtering leaves pyarrow chunks whose list offsets do not start at zero.
    chunks = [
        pa.array(values[start : start + chunk_rows], type=pa.large_string())
        for start in range(0, len(values), chunk_rows)
    ]
    chunked = pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array(chunks)))
    in_chunks = parse_images(chunked)
    whole = parse_images(pd.Series(values, dtype="string"))
    assert in_chunks.values.tolist() == whole.values.tolist()
    pd.testing.assert_series_equal(in_chunks.problems, whole.problems)


EXTENSION_FORMS = [
    '[{"Key":"Pool","value":"Yes"}]', '{"Pool": "Yes"}', "Pool: Yes; View: Lake", "", " ", "[]",
    '[{"value": "Yes"}]', "just words", '[{"Key": "Pool"',
]  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(EXTENSION_FORMS)), max_size=30))
def test_extension_text_reads_alike_as_string_and_as_objects(values: list[str | None]) -> None:
    as_string = parse_extensions(pd.Series(values, dtype="string"))
    as_objects = parse_extensions(raw(*values))
    assert as_string.values.tolist() == as_objects.values.tolist()
    pd.testing.assert_series_equal(as_string.problems, as_objects.problems)
