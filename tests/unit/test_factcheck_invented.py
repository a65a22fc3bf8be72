"""A listing the answer makes up is told once, as what it is: "the answer names a listing you do
not have: MLS# X", its name as the answer writes it, with no field and no claimed or real
value; every fact the answer gives about it folds into that one line."""

from __future__ import annotations

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from estatebot.api.models import Answer
from estatebot.chat.factcheck.claims import (
    UNKNOWN_LISTING,
    ClaimChecker,
    describe_claim,
    doubtful_lines,
    unknown_listings,
)
from estatebot.chat.factcheck.reader import mention_key
from estatebot.chat.harness.cases import load_cases
from estatebot.chat.harness.checks import check_grounded
from estatebot.chat.harness.results import CaseRun, results_frame

LISTINGS = pd.DataFrame(
    [
        {
            "ID": 1,
            "MLSNumber": "ATX1001",
            "Address": "1208 S Lamar Blvd",
            "City": "Austin",
            "Url": "https://listings.example.com/atx1001",
            "SaleType": "for_sale",
            "Status": "Active",
            "SalePrice": 1_250_000.0,
            "RentPrice": None,
            "Bedrooms": 3,
            "Bathrooms": 2.5,
            "BuildingArea": 1850.0,
            "AreaUnit": "Square Feet",
        }
    ]
)
CHECKER = ClaimChecker(LISTINGS)
INVENTED = (
    "MLS# ATX9999 is a 3-bedroom, 2-bath home in Austin listed at $495,000, with 1,900 sq ft."
)
LINE = "the answer names a listing you do not have: MLS# ATX9999"


def test_four_claims_about_an_invented_listing_are_one_line() -> None:
    claims = CHECKER.check(INVENTED)
    assert len(claims) >= 4  # price, bedrooms, bathrooms, city, area: each still a claim
    assert set(claims["verdict"]) == {UNKNOWN_LISTING}
    assert doubtful_lines(claims) == [LINE]
    assert doubtful_lines(CHECKER.records(INVENTED)) == [LINE]  # records as well as a frame
    assert unknown_listings(claims) == ["MLS# ATX9999"]


def test_the_line_names_no_field_and_no_value() -> None:
    for _, row in CHECKER.check(INVENTED).iterrows():
        line = describe_claim(row)
        assert line == LINE
        for word in ("price", "bedrooms", "claimed", "listing says", "$495,000", "unknown"):
            assert word not in line


def test_the_why_of_a_grounded_case_tells_the_invented_listing_once() -> None:
    why = check_grounded(CHECKER.check(INVENTED))
    assert why == f"expect_grounded: 1 unknown listing: {LINE}"


def test_a_wrong_price_and_an_invented_listing_each_have_their_line_in_order() -> None:
    text = f"MLS# ATX1001 is listed at $1.5M. {INVENTED}"
    lines = doubtful_lines(CHECKER.check(text))
    assert lines == ["ATX1001: price $1.5M claimed, the listing says $1,250,000", LINE]
    why = check_grounded(CHECKER.check(text))
    assert why == f"expect_grounded: 1 contradicted, 1 unknown listing: {'; '.join(lines)}"


def test_one_invented_listing_written_two_ways_is_one_line_as_first_written() -> None:
    text = "MLS# ATX9999 has 3 bd.\n\nAlso, mls number atx9999 is listed at $495,000."
    claims = CHECKER.check(text)
    assert claims["listing"].nunique() == 2  # two spellings in the frame, as written
    assert doubtful_lines(claims) == [LINE]


def test_two_invented_listings_are_two_lines() -> None:
    text = (
        "MLS# ATX9999 is listed at $495,000 with 3 bd.\n\n"
        "9999 Juniper Hollow Ln is listed at $450,000 with 2 bd.\n\n"
        "See https://listings.example.com/nope123 for $300,000."
    )
    lines = doubtful_lines(CHECKER.check(text))
    assert lines == [
        LINE,
        "the answer names a listing you do not have: 9999 Juniper Hollow Ln",
        "the answer names a listing you do not have: https://listings.example.com/nope123",
    ]
    assert check_grounded(CHECKER.check(text)).startswith("expect_grounded: 3 unknown listings: ")


def test_keys_fold_the_ways_a_name_is_written() -> None:
    assert mention_key("MLS# ATX9999") == mention_key("mls number atx9999")
    assert mention_key("MLS# ATX9999") != mention_key("MLS# ATX9998")
    assert mention_key("9999 Juniper Hollow Lane") == mention_key("9999 juniper hollow ln")
    assert mention_key("https://x.example.com/A1/") == mention_key("https://X.example.com/a1")


def test_the_results_count_an_invented_listing_once() -> None:
    cases = load_cases([{"question": "homes in Austin", "expect_grounded": True}])
    answer = Answer(messageid=1, content=INVENTED, totalToken=10, noAnswer=False)
    run = CaseRun(attempts=1, session_id=1, answer=answer, latency_ms=12.0)
    frame = results_frame(cases, [run], [CHECKER.records(INVENTED)])
    assert frame.loc[0, "claims_unknown"] == 1
    assert frame.loc[0, "why"] == f"expect_grounded: 1 unknown listing: {LINE}"
    assert not frame.loc[0, "passed"]


@given(
    facts=st.lists(
        st.sampled_from(["3 bd", "2 ba", "$495,000", "1,900 sq ft", "in Austin"]),
        min_size=1,
        max_size=5,
    ),
    invented=st.lists(st.integers(1000, 9999), min_size=1, max_size=4, unique=True),
)
def test_lines_are_one_per_invented_listing_whatever_is_said_of_it(
    facts: list[str], invented: list[int]
) -> None:
    paragraphs = [f"MLS# ZZ{n} is {', '.join(facts)}." for n in invented]
    claims = CHECKER.check("\n\n".join(paragraphs))
    lines = doubtful_lines(claims)
    assert lines == [f"the answer names a listing you do not have: MLS# ZZ{n}" for n in invented]
    assert len(unknown_listings(claims)) == len(invented)
