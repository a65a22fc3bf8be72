"""Fact-checking a chatbot's answers against the chatbot's own listings.

>>> claims = fact_check(answer_text, listings)          # doctest: +SKIP

`fact_check` reads the facts an answer states about listings (price, rent, bedrooms, bathrooms,
city, area, status, sale or rent), finds the listing each is about (by MLS number, address or
URL) and gives one row per claim with its verdict: `supported`, `contradicted` or
`unknown listing`. `GroundingChecker` keeps a chatbot's listings to check answer after answer;
`badge_html` shows a message's doubtful claims in a small badge.
"""

from __future__ import annotations

from estatebot.chat.factcheck.badge import badge_html, badge_text
from estatebot.chat.factcheck.checker import GroundingChecker
from estatebot.chat.factcheck.claims import (
    CLAIM_COLUMNS,
    CONTRADICTED,
    FIELDS,
    SUPPORTED,
    UNKNOWN_LISTING,
    VERDICTS,
    ClaimChecker,
    describe_claim,
    fact_check,
)
from estatebot.chat.factcheck.index import ListingIndex

__all__ = [
    "CLAIM_COLUMNS",
    "CONTRADICTED",
    "FIELDS",
    "SUPPORTED",
    "UNKNOWN_LISTING",
    "VERDICTS",
    "ClaimChecker",
    "GroundingChecker",
    "ListingIndex",
    "badge_html",
    "badge_text",
    "describe_claim",
    "fact_check",
]
