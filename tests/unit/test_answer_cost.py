"""The emulator's answer engine on hostile questions: linear cost, bounded reading, no crash."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from estatebot.emulator import SAMPLE_LISTINGS
from estatebot.emulator.answers import (
    MAX_READ_CHARS,
    Catalog,
    Criteria,
    answer,
    count_tokens,
    parse_question,
)

LISTINGS: list[dict[str, Any]] = [
    {"ID": 10001 + i, **item} for i, item in enumerate(SAMPLE_LISTINGS)
]
CATALOG = Catalog(LISTINGS)


def parse_seconds(text: str) -> float:
    """The best of five timings of parsing ``text`` (the best is the least disturbed)."""
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        parse_question(text, CATALOG)
        timings.append(time.perf_counter() - start)
    return min(timings)


# Each shape made parsing quadratic or worse: a failed attempt backtracked over a whole run of
# digits, spaces or 1,234 groups, from every position of it. ``n`` is the small size; the test
# compares it with 16 times as much.
SHAPES: list[tuple[str, Callable[[int], str], int]] = [
    ("digits then a letter", lambda n: "1" * n + "x", 400),
    ("a count word then spaces", lambda n: "two" + " " * n + "x", 2500),
    ("a count then spaces", lambda n: "3" + " " * n + "x", 2500),
    ("an amount then spaces", lambda n: "$1" + " " * n + "x", 2500),
    ("a chain of 1,234 groups", lambda n: "1" + ",234" * (n // 4) + "x", 750),
    ("digits then a dash", lambda n: "1" * n + "-", 400),
]


@pytest.mark.parametrize(("shape", "make", "n"), SHAPES, ids=[s[0] for s in SHAPES])
def test_parsing_grows_linearly_with_the_question(
    shape: str, make: Callable[[int], str], n: int
) -> None:
    small, large = parse_seconds(make(n)), parse_seconds(make(16 * n))
    # Linear: about 16 times as long. Quadratic would be 256 times; the bound leaves room for
    # a busy machine, and the constant for timings too short to measure well.
    assert large < 64 * small + 0.05, (shape, small, large)


def test_only_the_first_characters_are_read_and_the_reply_says_so() -> None:
    padding = "x" * MAX_READ_CHARS
    read = answer("homes in Austin " + padding, {}, CATALOG)
    unread = answer(padding + " homes in Austin", {}, CATALOG)
    assert read.no_answer is False
    assert "Austin" in read.text
    assert unread.no_answer is True  # the question came after what is read
    note = f"(I read only the first {MAX_READ_CHARS:,} characters of your message.)"
    assert read.text.endswith(note)
    assert unread.text.endswith(note)
    assert not answer("homes in Austin", {}, CATALOG).text.endswith(note)
    # Tokens still count the whole message.
    assert read.total_tokens >= count_tokens("homes in Austin " + padding)


def test_a_long_question_is_answered_well_within_a_second() -> None:
    question = ("1" * 3000 + "x two" + " " * 3000 + "3 beds $300k austin 1,234" * 500) * 40
    start = time.perf_counter()
    reply = answer(question, {}, CATALOG)
    # Typically a few hundredths of a second; the bound only catches a return of the old cost.
    assert time.perf_counter() - start < 2.0
    assert reply.text


@pytest.mark.parametrize(
    "question",
    [
        "homes under $" + "9" * 400,
        "homes between " + "9" * 400 + " and " + "9" * 401,
        "homes for " + "9" * 400 + "k - " + "9" * 400 + "m",
        "a " + "9" * 400 + " bedroom home",
        "at least " + "9" * 400 + " baths",
    ],
)
def test_a_number_beyond_the_largest_float_is_not_a_criterion(question: str) -> None:
    criteria = parse_question(question, CATALOG)
    bounds = (
        criteria.min_price,
        criteria.max_price,
        criteria.min_beds,
        criteria.max_beds,
        criteria.min_baths,
        criteria.max_baths,
    )
    assert bounds == (None,) * 6
    assert answer(question, {}, CATALOG).text


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "over 2 beds up to 4 beds at least 1.5 baths",
            {"min_beds": 2.5, "max_beds": 4.0, "min_baths": 1.5},
        ),
        (
            "3br 2ba condos for rent under 2,000/month",
            {"min_beds": 3.0, "max_beds": 3.0, "min_baths": 2.0, "max_baths": 2.0,
             "max_price": 2000.0, "sale_type": "for_rent", "property_types": ("Condo",)},
        ),
        (
            "between 300k and 450k, ATX1001 sold",
            {"min_price": 300_000.0, "max_price": 450_000.0, "mls_numbers": ("ATX1001",),
             "sold": True, "sale_type": "for_sale"},
        ),
        ("2 baths, $300-500k", {"min_baths": 2.0, "max_baths": 2.0, "min_price": 300_000.0,
                                "max_price": 500_000.0, "sale_type": "for_sale"}),
        ("under $1,250,000 in Austin or San Antonio",
         {"max_price": 1_250_000.0, "cities": ("Austin", "San Antonio"),
          "sale_type": "for_sale"}),
        ("homes 1,234,5678 $5 1234,567,890", {"max_price": 5.0}),
    ],
)  # fmt: skip
def test_ordinary_questions_mean_what_they_meant(question: str, expected: dict[str, Any]) -> None:
    # The rewritten patterns keep their meaning: these are the criteria the engine read before
    # (and a price no rent reaches now means a home for sale).
    criteria = parse_question(question, CATALOG)
    assert criteria == Criteria(**expected)
