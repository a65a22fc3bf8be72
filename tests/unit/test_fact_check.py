"""The claim reader: facts an answer states about listings, held against a listings frame."""

from __future__ import annotations

import pandas as pd
import pytest

import estatebot as eb
from estatebot.chat.factcheck import (
    CLAIM_COLUMNS,
    CONTRADICTED,
    SUPPORTED,
    UNKNOWN_LISTING,
    ClaimChecker,
    badge_html,
    badge_text,
)

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
        },
        {
            "ID": 2,
            "MLSNumber": "ATX1002",
            "Address": "301 West Ave #1204",
            "City": "Austin",
            "Url": "https://listings.example.com/atx1002",
            "SaleType": "for_rent",
            "Status": "Active",
            "SalePrice": None,
            "RentPrice": 2500.0,
            "Bedrooms": 1,
            "Bathrooms": 1.0,
            "BuildingArea": 720.0,
            "AreaUnit": "Square Feet",
        },
        {
            "ID": 3,
            "MLSNumber": "DEN2001",
            "Address": "1535 N Williams St",
            "City": "Denver",
            "Url": "https://listings.example.com/den2001",
            "SaleType": "for_sale",
            "Status": "Sold",
            "SalePrice": 650_000.0,
            "RentPrice": None,
            "Bedrooms": 4,
            "Bathrooms": 3.0,
            "BuildingArea": 2400.0,
            "AreaUnit": "Square Feet",
        },
        {
            "ID": 4,
            "MLSNumber": "MIA3001",
            "Address": "4250 Biscayne Blvd #1410",
            "City": "Miami",
            "Url": "https://listings.example.com/mia3001",
            "SaleType": "for_sale",
            "Status": "PreOnMarket",
            "SalePrice": 489_000.0,
            "RentPrice": None,
            "Bedrooms": 2,
            "Bathrooms": 2.0,
            "BuildingArea": 1100.0,
            "AreaUnit": "Square Feet",
        },
    ]
).astype({"ID": "Int64", "Bedrooms": "Int64", "SalePrice": "Float64", "RentPrice": "Float64"})


def claims(text: str) -> pd.DataFrame:
    return eb.fact_check(text, LISTINGS)


def one(text: str, field: str) -> pd.Series:
    found = claims(text)
    rows = found[found["field"] == field]
    assert len(rows) == 1, found.to_string()
    return rows.iloc[0]


# --------------------------------------------------------------------------- prices


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("MLS# ATX1001 is listed at $1,250,000.", SUPPORTED),
        ("MLS# ATX1001 is listed at $1.25M.", SUPPORTED),
        ("MLS# ATX1001 is listed at $1.25 million.", SUPPORTED),
        ("MLS# ATX1001 is listed at 1.25 million dollars.", SUPPORTED),
        ("MLS# ATX1001 is listed at $1,350,000.", CONTRADICTED),
        ("MLS# ATX1001 is listed at $1.3M.", SUPPORTED),  # 1.25 rounds to 1.3
        ("MLS# ATX1001 is listed at $1.4M.", CONTRADICTED),
        ("MLS# DEN2001 sold for $650k.", SUPPORTED),
        ("MLS# DEN2001 sold for $700K.", CONTRADICTED),
        ("MLS# DEN2001 costs about $660k.", SUPPORTED),
    ],
)
def test_prices_are_read_as_people_write_them(text: str, verdict: str) -> None:
    row = one(text, "price")
    assert row["verdict"] == verdict
    assert row["listing"] == text.split()[1]


def test_a_rent_per_month_is_checked_against_the_rent() -> None:
    row = one("The unit at 301 West Ave #1204 rents for $2,500/month.", "rent")
    assert (row["verdict"], row["claimed_value"], row["listing_value"]) == (
        SUPPORTED, 2500.0, 2500.0,
    )  # fmt: skip
    wrong = one("301 West Ave #1204: $2,800 per month", "rent")
    assert wrong["verdict"] == CONTRADICTED
    assert wrong["claimed"] == "$2,800 per month"


def test_a_rent_claimed_for_a_home_for_sale_is_contradicted() -> None:
    row = one("ATX1001 can be yours for $4,000/month.", "rent")
    assert row["verdict"] == CONTRADICTED
    assert row["listing_value"] is None


def test_a_plain_price_of_a_rental_is_its_rent() -> None:
    row = one("ATX1002 is listed at $2,500.", "rent")
    assert row["verdict"] == SUPPORTED


@pytest.mark.parametrize(
    "text",
    [
        "A $500 deposit holds any home for a week.",
        "Homes under $700k go fast in Austin.",
        "Expect a $500 deposit.",
        "Budgets from $300k to $500k work well here.",
    ],
)
def test_amounts_next_to_no_listing_are_not_claims(text: str) -> None:
    assert claims(text).empty


@pytest.mark.parametrize(
    "text",
    [
        "ATX1002 asks a $500 deposit and $2,500/month.",
        "ATX1002: deposit of $2,000, rent $2,500 a month.",
        "MLS# ATX1001 is under $1.5M, at $1,250,000; HOA $300/month.",
        "MLS# ATX1001 ($1,250,000) costs $676/sq ft to build, with $15,000 in taxes.",
    ],
)
def test_amounts_that_are_not_the_price_are_left_out(text: str) -> None:
    found = claims(text)
    prices = found[found["field"].isin(["price", "rent"])]
    assert len(prices) == 1, found.to_string()
    assert prices.iloc[0]["verdict"] == SUPPORTED


# --------------------------------------------------------------------------- rooms


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("ATX1001 has 3 bd.", "bedrooms", 3.0),
        ("ATX1001 has 3 beds.", "bedrooms", 3.0),
        ("ATX1001 is a 3-bedroom home.", "bedrooms", 3.0),
        ("ATX1001 has three bedrooms.", "bedrooms", 3.0),
        ("ATX1001 — Bedrooms: 3", "bedrooms", 3.0),
        ("ATX1001 has 2.5 ba.", "bathrooms", 2.5),
        ("ATX1001 has two and a half baths.", "bathrooms", 2.5),
        ("ATX1001 has 2.5 bathrooms.", "bathrooms", 2.5),
    ],
)
def test_room_counts_are_read_in_many_phrasings(text: str, field: str, value: float) -> None:
    row = one(text, field)
    assert row["claimed_value"] == value
    assert row["verdict"] == SUPPORTED


def test_a_wrong_room_count_is_contradicted() -> None:
    row = one("MLS# ATX1001 offers four bedrooms", "bedrooms")
    assert (row["verdict"], row["claimed_value"], row["listing_value"]) == (CONTRADICTED, 4.0, 3)


def test_bounds_on_rooms_are_not_claims() -> None:
    assert claims("ATX1001 has at least 2 bedrooms and 2+ baths.").empty


# --------------------------------------------------------------------------- naming listings


@pytest.mark.parametrize(
    "name",
    [
        "1208 S Lamar Blvd",
        "1208 South Lamar Boulevard",
        "1208 s. lamar blvd",
        "1208 SOUTH LAMAR BLVD",
        "301 West Avenue, Apt 1204",
        "301 W Ave Unit 1204",
        "1535 North Williams Street",
        "https://listings.example.com/atx1001/",
        "http://www.listings.example.com/ATX1001",
        "mls #atx1001",
        "MLS number ATX1001",
    ],
)
def test_listings_are_found_by_address_url_or_mls_number(name: str) -> None:
    found = claims(f"{name} is in Austin.")
    row = found[found["field"] == "city"].iloc[0] if "1535" not in name else None
    if row is None:  # the Denver listing named as in Austin
        row = one(f"{name} is in Austin.", "city")
        assert (row["listing"], row["verdict"]) == ("DEN2001", CONTRADICTED)
    else:
        assert row["verdict"] == SUPPORTED, found.to_string()
        assert row["listing"] in ("ATX1001", "ATX1002")


def test_a_listing_the_chatbot_does_not_have_is_an_unknown_listing() -> None:
    found = claims("Check out 9999 Juniper Hollow Ln, a 3 bd home for $450,000 (MLS# ATX9999).")
    assert set(found["verdict"]) == {UNKNOWN_LISTING}
    assert set(found["field"]) == {"bedrooms", "price"}
    assert found["listing"].iloc[0] == "9999 Juniper Hollow Ln"
    bare = claims("You might like MLS# ZZZ12345.")
    assert (bare["field"].tolist(), bare["verdict"].tolist()) == (["listing"], [UNKNOWN_LISTING])
    unit = claims("301 West Ave #999 rents for $2,500/month.")
    assert unit["verdict"].tolist() == [UNKNOWN_LISTING]
    url = claims("See https://listings.example.com/nope123 for the photos.")
    assert url["verdict"].tolist() == [UNKNOWN_LISTING]


def test_several_listings_in_one_answer_each_get_their_facts() -> None:
    text = (
        "I found 3 listings in Austin:\n"
        "1. 1208 S Lamar Blvd, Austin, TX 78704 - $1,250,000 - 3 bd / 2.5 ba - MLS# ATX1001\n"
        "2. 301 West Ave #1204, Austin, TX 78701 - $2,500/month - 2 bd / 1 ba - MLS# ATX1002\n"
        "3. 4250 Biscayne Blvd #1410, Miami, FL - $489,000 - 2 bd / 2 ba - Coming soon - "
        "MLS# MIA3001\n"
        "Prices start at $2,500."
    )
    found = claims(text)
    by_listing = found.groupby("listing")["field"].apply(set).to_dict()
    assert by_listing["ATX1001"] == {"city", "price", "bedrooms", "bathrooms"}
    assert by_listing["MIA3001"] == {"city", "price", "bedrooms", "bathrooms", "status"}
    bad = found[found["verdict"] != SUPPORTED]
    assert bad[["listing", "field"]].values.tolist() == [["ATX1002", "bedrooms"]]


def test_facts_follow_the_listing_a_bulleted_block_is_about() -> None:
    text = (
        "**1535 N Williams St, Denver** (MLS# DEN2001)\n"
        "- Price: $650,000\n- Bedrooms: 4\n- 3 baths, 2,400 sq ft\n- Status: sold\n\n"
        "Let me know if you want a tour! Most homes here have 3 beds."
    )
    found = claims(text)
    assert set(found["listing"]) == {"DEN2001"}
    assert set(found["verdict"]) == {SUPPORTED}
    assert {"price", "bedrooms", "bathrooms", "area", "status", "city"} <= set(found["field"])


def test_a_sentence_after_the_mention_keeps_its_listing() -> None:
    found = claims("The home at 1208 S Lamar Blvd is lovely. It has 4 bedrooms and is for rent.")
    bad = found[found["verdict"] == CONTRADICTED]
    assert set(bad["field"]) == {"bedrooms", "sale_type"}


def test_status_city_area_and_sale_type() -> None:
    assert one("DEN2001 is still available.", "status")["verdict"] == CONTRADICTED
    assert one("DEN2001 has sold.", "status")["verdict"] == SUPPORTED
    assert one("MIA3001 is coming soon.", "status")["verdict"] == SUPPORTED
    assert one("ATX1001 in Denver", "city")["verdict"] == CONTRADICTED
    assert one("ATX1001 has 1,850 sq ft of living space.", "area")["verdict"] == SUPPORTED
    assert one("ATX1001 offers 2,000 square feet.", "area")["verdict"] == CONTRADICTED
    assert claims("ATX1001 sits on a 5,550 sq ft lot.").empty
    assert one("ATX1002 is for rent.", "sale_type")["verdict"] == SUPPORTED
    assert one("ATX1002 is for sale.", "sale_type")["verdict"] == CONTRADICTED


def test_an_answer_with_no_listing_facts_gives_an_empty_frame_with_every_column() -> None:
    for text in ("Hello! How can I help?", "", "Austin has 3 bedroom homes from $300k."):
        found = claims(text)
        assert found.empty
        assert tuple(found.columns) == CLAIM_COLUMNS


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="DataFrame"):
        eb.fact_check("x", [{"MLSNumber": "A1"}])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="MLSNumber, Address, Url"):
        eb.fact_check("x", pd.DataFrame({"City": ["Austin"]}))
    with pytest.raises(TypeError, match="text"):
        ClaimChecker(LISTINGS).check(None)  # type: ignore[arg-type]


def test_the_caller_frame_is_not_changed() -> None:
    before = LISTINGS.copy()
    claims("MLS# ATX1001 is $1.25M")
    pd.testing.assert_frame_equal(LISTINGS, before)


# --------------------------------------------------------------------------- the badge


def test_the_badge_counts_the_doubtful_claims_and_lists_them() -> None:
    found = claims("MLS# ATX1001 is $1.5M with 3 bd. Also see MLS# ZZZ99999.")
    assert badge_text(found) == "2 facts not in your listings"
    html = badge_html(found)
    assert "<details" in html
    assert "2 facts not in your listings" in html
    assert "ATX1001: price $1.5M claimed, the listing says $1,250,000" in html
    assert "the answer names a listing you do not have: MLS# ZZZ99999" in html
    assert "var(--jp-warn-color1" in html
    assert "var(--jp-layout-color2" in html
    assert "var(--jp-ui-font-color1" in html
    assert 'title="' in html


def test_no_badge_when_every_claim_holds() -> None:
    assert badge_html(claims("MLS# ATX1001 is $1.25M with 3 bd.")) == ""
    assert badge_html(claims("Hello")) == ""


def test_the_badge_escapes_what_the_answer_wrote() -> None:
    found = claims("MLS# <b>ATX9<script>1")
    hostile = {"listing": "<script>x</script>", "field": "listing", "verdict": UNKNOWN_LISTING}
    frame = pd.DataFrame([{**dict.fromkeys(CLAIM_COLUMNS), **hostile}])
    html = badge_html(pd.concat([found, frame], ignore_index=True))
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
