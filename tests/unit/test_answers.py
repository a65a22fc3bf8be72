"""The emulator's answer engine: question parsing, matching, replies, tokens and fragments."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from estatebot.emulator import SAMPLE_LISTINGS
from estatebot.emulator.answers import (
    MAX_SHOWN,
    Catalog,
    Criteria,
    answer,
    count_tokens,
    fragments,
    matching,
    parse_question,
)

LISTINGS: list[dict[str, Any]] = [
    {"ID": 10001 + i, **item} for i, item in enumerate(SAMPLE_LISTINGS)
]
SETTINGS: dict[str, Any] = {
    "WelcomeMessage": "Welcome to Sunny Homes!",
    "SystemMessage": "You help people find homes.",
}


def mls_of(question: str) -> list[str]:
    """The MLS numbers of the listings a question matches."""
    return [str(x["MLSNumber"]) for x in matching(parse_question(question, LISTINGS), LISTINGS)]


# --------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("homes in austin", ("Austin",)),
        ("Anything in SAN ANTONIO?", ("San Antonio",)),
        ("Denver or Miami please", ("Denver", "Miami")),
        ("homes near the river", ()),
    ],
)
def test_cities_are_found_case_insensitively(question: str, expected: tuple[str, ...]) -> None:
    assert set(parse_question(question, LISTINGS).cities) == set(expected)


def test_a_multi_word_city_is_not_also_taken_as_its_last_word() -> None:
    listings = [*LISTINGS, {**LISTINGS[0], "ID": 1, "City": "Antonio", "MLSNumber": "Z"}]
    assert parse_question("homes in San Antonio", listings).cities == ("San Antonio",)


@pytest.mark.parametrize(
    ("question", "low", "high"),
    [
        ("under $500k", None, 500_000),
        ("below 2,000", None, 2_000),
        ("less than 1.2m", None, 1_200_000),
        ("over 300k", 300_000, None),
        ("at least $250,000", 250_000, None),
        ("between 300k and 500k", 300_000, 500_000),
        ("between $300,000 and $500,000", 300_000, 500_000),
        ("$300k-$500k", 300_000, 500_000),
        ("300-500k", 300_000, 500_000),
        ("from 1 to 1.5 million", 1_000_000, 1_500_000),
        ("$2000/month", None, 2_000),
        ("my budget is 450k", None, 450_000),
        ("homes in 78704", None, None),
        ("built in 1998", None, None),
    ],
)
def test_price_bounds(question: str, low: float | None, high: float | None) -> None:
    criteria = parse_question(question, LISTINGS)
    assert (criteria.min_price, criteria.max_price) == (low, high)


@pytest.mark.parametrize(
    ("question", "low", "high"),
    [
        ("3 bed", 3, 3),
        ("a 3-bedroom house", 3, 3),
        ("3br in austin", 3, 3),
        ("three bedrooms", 3, 3),
        ("at least 2 bedrooms", 2, None),
        ("2+ beds", 2, None),
        ("2 or more bedrooms", 2, None),
        ("up to 3 bedrooms", None, 3),
        ("a studio", 0, 0),
    ],
)
def test_bedroom_bounds(question: str, low: float | None, high: float | None) -> None:
    criteria = parse_question(question, LISTINGS)
    assert (criteria.min_beds, criteria.max_beds) == (low, high)


def test_bedrooms_and_bathrooms_are_not_prices() -> None:
    criteria = parse_question("3 bed 2 bath under 400k", LISTINGS)
    assert (criteria.min_beds, criteria.max_beds) == (3, 3)
    assert (criteria.min_baths, criteria.max_baths) == (2, 2)
    assert (criteria.min_price, criteria.max_price) == (None, 400_000)


def test_fractional_bathrooms() -> None:
    assert parse_question("2.5 baths", LISTINGS).min_baths == 2.5


@pytest.mark.parametrize(
    ("question", "sale_type"),
    [
        ("anything for rent?", "for_rent"),
        ("show me rentals", "for_rent"),
        ("looking to rent in Denver", "for_rent"),
        ("2 bed for $2000/month", "for_rent"),
        ("I want to buy", "for_sale"),
        ("homes for sale", "for_sale"),
        ("homes in Miami", None),
    ],
)
def test_sale_or_rent(question: str, sale_type: str | None) -> None:
    assert parse_question(question, LISTINGS).sale_type == sale_type


def test_mls_numbers_are_found_whatever_their_case() -> None:
    criteria = parse_question("tell me about mia3002 please", LISTINGS)
    assert criteria.mls_numbers == ("MIA3002",)


def test_property_types_match_in_the_plural() -> None:
    assert parse_question("any condos?", LISTINGS).property_types == ("Condo",)


TYPED: list[dict[str, Any]] = [
    {**LISTINGS[0], "ID": 1, "MLSNumber": "T1", "PropertyType": "Condominium"},
    {**LISTINGS[1], "ID": 2, "MLSNumber": "T2", "PropertyType": "Townhouse"},
    {**LISTINGS[2], "ID": 3, "MLSNumber": "T3", "PropertyType": "Single Family Residence"},
    {**LISTINGS[3], "ID": 4, "MLSNumber": "T4", "PropertyType": "Apartment"},
]


@pytest.mark.parametrize(
    ("question", "types"),
    [
        ("any condos?", ("Condominium",)),
        ("Condominiums please", ("Condominium",)),
        ("townhouses", ("Townhouse",)),
        ("show me townhomes", ("Townhouse",)),
        ("single-family homes", ("Single Family Residence",)),
        ("single family houses", ("Single Family Residence",)),
        ("apartments", ("Apartment",)),
    ],
)
def test_property_types_are_found_by_their_short_names(
    question: str, types: tuple[str, ...]
) -> None:
    criteria = parse_question(question, TYPED)
    assert criteria.property_types == types
    assert {x["PropertyType"] for x in matching(criteria, TYPED)} <= set(types)


def test_a_sale_sized_budget_does_not_list_rentals() -> None:
    criteria = parse_question("homes under $700k", LISTINGS)
    assert criteria.sale_type == "for_sale"
    found = matching(criteria, LISTINGS)
    assert found
    assert all(x["SaleType"] == "for_sale" for x in found)
    assert "/month" not in answer("anything under $700k?", SETTINGS, LISTINGS).text


def test_a_rent_sized_budget_keeps_its_meaning() -> None:
    assert parse_question("under $3,000/month", LISTINGS).sale_type == "for_rent"
    assert parse_question("2 bed places under $3,000", LISTINGS).sale_type is None


def test_nothing_asked_gives_empty_criteria() -> None:
    assert parse_question("what is the weather like", LISTINGS) == Criteria()


def test_a_catalog_parses_like_the_listings_it_wraps() -> None:
    question = "3 bed homes in Austin under 500k"
    assert parse_question(question, Catalog(LISTINGS)) == parse_question(question, LISTINGS)


# --------------------------------------------------------------------------- matching


def test_city_bedrooms_and_price_combine() -> None:
    assert mls_of("3 bed homes in Austin under $500k") == ["ATX1001", "ATX1004"]


def test_rentals_compare_the_rent_price() -> None:
    assert mls_of("rentals under $2,000/month") == ["DEN2003", "MIA3004", "SAT4003"]


def test_a_price_range_on_sales() -> None:
    assert mls_of("for sale between 300k and 420k") == ["ATX1004", "SAT4001", "SAT4002"]


def test_sold_listings_are_left_out_unless_asked_for() -> None:
    assert "DEN2004" not in mls_of("homes in Denver")
    assert mls_of("sold homes in Denver") == ["DEN2004"]


def test_an_mls_number_finds_its_listing_whatever_its_status() -> None:
    assert mls_of("is DEN2004 still available?") == ["DEN2004"]


def test_bathrooms_at_least() -> None:
    assert mls_of("at least 3 baths") == ["ATX1002", "MIA3002", "SAT4002"]


# --------------------------------------------------------------------------- replies


def test_a_reply_lists_the_matches_with_their_details() -> None:
    reply = answer("3 bed homes in Austin under $500k", SETTINGS, LISTINGS)
    assert not reply.no_answer
    assert reply.matched == 2
    assert reply.text.startswith("I found 2 listings")
    assert "1208 S Lamar Blvd, Austin, TX 78704 - $450,000 - 3 bd / 2 ba" in reply.text
    assert "MLS# ATX1001" in reply.text
    assert "2.5 ba" in reply.text


def test_a_rental_price_is_per_month() -> None:
    reply = answer("rentals in Denver", SETTINGS, LISTINGS)
    assert "$2,950/month" in reply.text
    assert reply.shown_ids == (10006, 10007)


def test_at_most_five_listings_are_shown_but_all_are_counted() -> None:
    reply = answer("what homes do you have for sale?", SETTINGS, LISTINGS)
    assert reply.matched == 8  # 9 for sale, one of them sold
    assert len(reply.shown_ids) == MAX_SHOWN
    assert f"I found 8 listings for sale. Here are the first {MAX_SHOWN}:" in reply.text
    assert reply.text.count("MLS# ") == MAX_SHOWN


def test_a_greeting_gets_the_welcome_message() -> None:
    reply = answer("Hello!", SETTINGS, LISTINGS)
    assert reply.text == "Welcome to Sunny Homes!"
    assert not reply.no_answer


def test_a_greeting_with_a_question_is_answered() -> None:
    reply = answer("Hi, any rentals in Miami?", SETTINGS, LISTINGS)
    assert reply.matched == 2


def test_an_off_topic_question_is_a_polite_no_answer() -> None:
    reply = answer("Who won the game last night?", SETTINGS, LISTINGS)
    assert reply.no_answer
    assert reply.text.startswith("I'm sorry")


def test_no_match_is_a_no_answer_that_says_what_was_asked() -> None:
    reply = answer("10 bedroom homes in Miami", SETTINGS, LISTINGS)
    assert reply.no_answer
    assert "I don't have listings matching that" in reply.text
    assert "in Miami" in reply.text
    assert reply.matched == 0


def test_no_listings_at_all_is_a_no_answer() -> None:
    assert answer("homes in Austin", SETTINGS, []).no_answer


def test_a_file_without_text_is_acknowledged() -> None:
    reply = answer("", SETTINGS, LISTINGS, attachments=1)
    assert reply.no_answer
    assert "file" in reply.text


def test_the_answer_suffix_is_appended_after_a_newline() -> None:
    settings = {**SETTINGS, "AnswerSuffix": "Call us at 555-0100."}
    plain = answer("rentals in Denver", SETTINGS, LISTINGS)
    suffixed = answer("rentals in Denver", settings, LISTINGS)
    assert suffixed.text == plain.text + "\nCall us at 555-0100."
    assert answer("Who are you?", settings, LISTINGS).text.endswith("\nCall us at 555-0100.")


def test_answers_are_deterministic() -> None:
    question = "2+ bed condos under 1m"
    assert answer(question, SETTINGS, LISTINGS) == answer(question, SETTINGS, LISTINGS)


# --------------------------------------------------------------------------- tokens, fragments


def test_token_count_is_word_pieces_of_system_question_and_answer() -> None:
    assert count_tokens("Hello, world!") == 4
    assert count_tokens("a b", None, "c.") == 4
    reply = answer("Hello", SETTINGS, LISTINGS)
    assert reply.total_tokens == count_tokens(SETTINGS["SystemMessage"], "Hello", reply.text)


def test_fragments_are_a_few_words_each() -> None:
    parts = fragments("one two three four five six seven", words=3)
    assert parts == ["one two three ", "four five six ", "seven"]


@given(st.text(alphabet=st.sampled_from("ab \n\t$,é"), max_size=60))
def test_fragments_join_back_to_the_text(text: str) -> None:
    assert "".join(fragments(text)) == text
