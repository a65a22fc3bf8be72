"""The emulator's answer engine: deterministic answers grounded in a chatbot's listings.

Pure functions, no I/O: :func:`answer` takes the question, the chatbot's settings (the Edit
field names) and its listings (stored bodies, each with its ``ID``; only the fields named in
:data:`LISTING_FIELDS_USED` are read), or a :class:`Catalog` of them, and returns a :class:`Reply`.

What a question asks, and which listings meet it, is worked out by :mod:`.questions`.
Matches are listed in ID order, at most :data:`MAX_SHOWN`, each with address, city, price
(with the listing's currency symbol, "/month" for rentals), beds and baths, and MLS number,
after a sentence giving the total number of matches.

A greeting alone gets the chatbot's ``WelcomeMessage``; thanks get a short courtesy. A question
with no criterion and no real-estate word, or criteria that match nothing, get a polite
"I don't have listings matching that" text with ``no_answer`` true. Replies are in English
whatever ``AIResponseLanguage`` says.

Only the first :data:`MAX_READ_CHARS` characters of a message are read, as a model reads a
bounded context; the reply to a longer message says so in a last line. Reading is linear in
length anyway (see :mod:`.questions`): the bound keeps a huge message from holding the server
for seconds, and a single pattern search from holding it for more than a few milliseconds.

The chatbot's ``AnswerSuffix``, when set, is appended after a newline to every reply.

Token count (:func:`count_tokens`): the number of word pieces — runs of word characters and
single punctuation marks, the regex ``\\w+|[^\\w\\s]`` — in the system message, the question and
the reply together. It is an approximation with the right order of magnitude, and stable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .questions import Catalog, Criteria, Listings, matching, parse_question, price_of

# The engine's users import the question side from here too, wherever it is defined.
__all__ = [
    "LISTING_FIELDS_USED",
    "MAX_READ_CHARS",
    "MAX_SHOWN",
    "Catalog",
    "Criteria",
    "Listings",
    "Reply",
    "answer",
    "count_tokens",
    "describe_listing",
    "fragments",
    "matching",
    "parse_question",
]

#: The most listings one reply describes.
MAX_SHOWN = 5

#: The most characters of a message the engine reads (the rest is counted, not read).
MAX_READ_CHARS = 20_000

#: The listing fields the engine reads (besides ``ID``).
LISTING_FIELDS_USED: tuple[str, ...] = (
    "City", "PropertyType", "MLSNumber", "SaleType", "Status", "Bedrooms", "Bathrooms",
    "SalePrice", "RentPrice", "Address", "State", "ZIP", "CurrencySymbol",
)  # fmt: skip

_PIECE = re.compile(r"\w+|[^\w\s]")

_TOPIC_WORDS = re.compile(
    r"\b(?:homes?|house|houses|listings?|propert(?:y|ies)|apartments?|condos?|places?|units?|"
    r"real\s+estate|mls|bed\w*|bath\w*|price[sd]?|cost|afford\w*|available|neighbou?rhoods?|"
    r"rent\w*|buy\w*|sale|lease|move|moving|townhouses?|townhomes?|lofts?|duplex\w*)\b"
)
_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|hiya|howdy|greetings|good\s+(?:morning|afternoon|evening)|yo)\b"
)
_THANKS = re.compile(r"\b(?:thanks|thank\s+you|thx|cheers)\b")

_DEFAULT_WELCOME = "Hello! How can I help you find a home today?"
_HELP = "Try asking about a city, a price range, the number of bedrooms, or rentals."


@dataclass(frozen=True)
class Reply:
    """An answer: its text (suffix included), whether it is a non-answer, and its cost."""

    text: str
    no_answer: bool
    total_tokens: int
    matched: int = 0
    shown_ids: tuple[int, ...] = field(default=())


# --------------------------------------------------------------------------- public functions


def count_tokens(*texts: str | None) -> int:
    """The documented token estimate: word pieces (``\\w+|[^\\w\\s]``) in all the texts."""
    # Counted, not collected: a long question would otherwise become a list of a million words.
    return sum(sum(1 for _ in _PIECE.finditer(text)) for text in texts if text)


def fragments(text: str, words: int = 3) -> list[str]:
    """Split a reply into stream fragments of a few words; joined, they give ``text`` back."""
    if not text:
        return []
    lead = text[: len(text) - len(text.lstrip())]
    pieces = re.findall(r"\S+\s*", text)
    if not pieces:
        return [text]
    pieces[0] = lead + pieces[0]
    return ["".join(pieces[i : i + words]) for i in range(0, len(pieces), words)]


def answer(
    question: str,
    settings: Mapping[str, Any],
    listings: Listings,
    *,
    attachments: int = 0,
) -> Reply:
    """Answer one message from a chatbot's settings and listings (see the module docstring)."""
    read = question[:MAX_READ_CHARS]
    text, no_answer, matched, shown = _compose(read, settings, Catalog.of(listings), attachments)
    if len(read) < len(question):
        text += f"\n(I read only the first {MAX_READ_CHARS:,} characters of your message.)"
    suffix = settings.get("AnswerSuffix")
    if suffix:
        text = f"{text}\n{suffix}"
    tokens = count_tokens(settings.get("SystemMessage"), question, text)
    return Reply(text, no_answer, tokens, matched, shown)


# --------------------------------------------------------------------------- composing


def _compose(
    question: str,
    settings: Mapping[str, Any],
    catalog: Catalog,
    attachments: int,
) -> tuple[str, bool, int, tuple[int, ...]]:
    if not question.strip():
        if attachments:
            return (
                "Thanks for the file. I can't look at files here, but I can help you find a "
                f"listing. {_HELP}",
                True,
                0,
                (),
            )
        return f"I'm sorry, I didn't catch a question. {_HELP}", True, 0, ()

    criteria = parse_question(question, catalog)
    folded = question.casefold()
    if criteria.empty and not _TOPIC_WORDS.search(folded):
        if _GREETING.search(folded):
            return str(settings.get("WelcomeMessage") or _DEFAULT_WELCOME), False, 0, ()
        if _THANKS.search(folded):
            return "You're welcome! Let me know if I can help with anything else.", False, 0, ()
        return (
            "I'm sorry, I don't have information about that. I can help with our property "
            f"listings. {_HELP}",
            True,
            0,
            (),
        )

    found = matching(criteria, catalog.listings)
    description = _describe(criteria, catalog.currency)
    if not found:
        what = f" ({description.strip()})" if description else ""
        return (
            f"I'm sorry, I don't have listings matching that{what}. {_HELP}",
            True,
            0,
            (),
        )

    shown = found[:MAX_SHOWN]
    noun = "listing" if len(found) == 1 else "listings"
    head = f"I found {len(found)} {noun}{description}"
    head += ":" if len(found) <= MAX_SHOWN else f". Here are the first {MAX_SHOWN}:"
    lines = [head, *(f"{i}. {describe_listing(item)}" for i, item in enumerate(shown, 1))]
    return "\n".join(lines), False, len(found), tuple(int(item["ID"]) for item in shown)


def _describe(criteria: Criteria, symbol: str) -> str:
    parts: list[str] = []
    if criteria.sold:
        parts.append("sold")
    if criteria.sale_type is not None:
        parts.append("for rent" if criteria.sale_type == "for_rent" else "for sale")
    if criteria.cities:
        parts.append("in " + " or ".join(criteria.cities))
    if criteria.property_types:
        parts.append("of type " + " or ".join(criteria.property_types))
    for low, high, unit in (
        (criteria.min_beds, criteria.max_beds, "bedrooms"),
        (criteria.min_baths, criteria.max_baths, "bathrooms"),
    ):
        bounds = _describe_bounds(low, high, lambda v: _number(v))
        if bounds:
            parts.append(f"with {bounds} {unit}")
    price = _describe_bounds(
        criteria.min_price, criteria.max_price, lambda v: f"{symbol}{_money(v)}"
    )
    if price:
        parts.append(f"priced {price}")
    if criteria.mls_numbers:
        parts.append("with MLS# " + ", ".join(criteria.mls_numbers))
    return (" " + " ".join(parts)) if parts else ""


def _describe_bounds(low: float | None, high: float | None, show: Any) -> str:
    if low is not None and high is not None:
        return show(low) if low == high else f"from {show(low)} to {show(high)}"
    if low is not None:
        return f"at least {show(low)}"
    if high is not None:
        return f"at most {show(high)}"
    return ""


def describe_listing(item: Mapping[str, Any]) -> str:
    """One listing as a reply line shows it: place, price, rooms, type, status, MLS number."""
    place = ", ".join(
        str(part)
        for part in (
            item.get("Address") or "Address not listed",
            item.get("City"),
            " ".join(str(p) for p in (item.get("State"), item.get("ZIP")) if p),
        )
        if part
    )
    price = price_of(item)
    symbol = item.get("CurrencySymbol") or "$"
    if price is None:
        price_text = "price on request"
    elif item.get("SaleType") == "for_rent":
        price_text = f"{symbol}{_money(price)}/month"
    else:
        price_text = f"{symbol}{_money(price)}"
    rooms = f"{_number(item.get('Bedrooms', 0))} bd / {_number(item.get('Bathrooms', 0))} ba"
    parts = [place, price_text, rooms]
    if item.get("PropertyType"):
        parts.append(str(item["PropertyType"]))
    if item.get("Status") and item["Status"] != "Active":
        parts.append("Sold" if item["Status"] == "Sold" else "Coming soon")
    parts.append(f"MLS# {item.get('MLSNumber') or 'n/a'}")
    return " - ".join(parts)


def _money(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.2f}"


def _number(value: Any) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)
