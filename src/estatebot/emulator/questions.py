"""Understanding a question: the criteria it expresses, and the listings that meet them.

Pure functions, no I/O: :func:`parse_question` reads a question against a chatbot's listings
(stored bodies, each with its ``ID``) or a :class:`Catalog` of them and returns its
:class:`Criteria`; :func:`matching` keeps the listings that meet them.

What a question can ask (case-insensitive, several at once):

* **city** — any city of the chatbot's listings, multi-word ones included ("San Antonio");
* **price** — "under $500k", "below 2,000", "less than 1.2m", "over 300k", "at least $250,000",
  "between 300k and 500k", "$300k-$500k", "$2000/month"; a price with no comparison word is a
  budget (a maximum). Sale listings compare ``SalePrice``, rentals ``RentPrice``;
* **bedrooms / bathrooms** — "3 bed", "3-bedroom", "3br", "two bedrooms", "studio" (0 beds),
  "at least 2 bedrooms", "2+ beds", "2 or more baths", "up to 3 bedrooms"; a bare count is exact;
* **sale or rent** — "for rent", "rentals", "to rent", "lease", "/month" vs "buy", "for sale";
* **property type** — any PropertyType of the listings, singular or plural, and the usual
  short names of the common ones: "condos" for Condominium, "townhomes" for Townhouse,
  "single-family homes", "apartments", "duplexes" (:data:`TYPE_ALIASES`);
* **MLS number** — any word equal to a listing's MLSNumber (then its status is not filtered).

A price of :data:`RENT_CEILING` or more, with no word for sale or rent, means a home for sale:
nobody pays that a month, so "under $700k" does not list rentals.

Sold listings are left out unless the question says "sold" (then only sold ones) or names an MLS
number. A number too large to mean anything (beyond the largest float) is not a criterion.

Parsing is linear in the question's length: every pattern is written so that a failed attempt
cannot backtrack over a long run of digits or spaces (possessive quantifiers, and number
patterns that start only where a run of digits starts), and the spans a step takes are blanked
in one pass, not by copying the whole text once per match.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_WORD_NUMBERS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}  # fmt: skip
_WORD_NUMBER = re.compile(
    r"\b("
    + "|".join(_WORD_NUMBERS)
    + r")\b(?=\s*+(?:\+|or more|or less)?[\s-]*+(?:bed|bath|br\b|ba\b))"
)

_UNIT_BEDS = r"(?:bedrooms?|beds?|bdrms?|bds?|br)"
_UNIT_BATHS = r"(?:bathrooms?|baths?|ba)"
# Possessive runs and a start only where a run of digits starts: a failed attempt costs the
# length of one run, never a retry from every digit or space of it (quadratic on hostile text).
_COUNT = r"(?<!\d)(?P<n>\d++(?:\.\d+)?)\s*+(?P<rel>\+|or\s+more|or\s+less|or\s+fewer)?[\s-]*+"
_BEDS = re.compile(_COUNT + _UNIT_BEDS + r"(?!\w)")
_BATHS = re.compile(_COUNT + _UNIT_BATHS + r"(?!\w)")
_STUDIO = re.compile(r"\bstudios?\b")

_MIN_WORDS = re.compile(
    r"(?:at\s+least|no\s+less\s+than|minimum(?:\s+of)?|min\.?|from|starting\s+at|>=?)\s*$"
)
_MORE_WORDS = re.compile(r"(?:more\s+than|over|above|greater\s+than)\s*$")
_MAX_WORDS = re.compile(
    r"(?:up\s+to|at\s+most|no\s+more\s+than|maximum(?:\s+of)?|max\.?|within|budget(?:\s+of|\s+is)?"
    r"|<=)\s*$"
)
_LESS_WORDS = re.compile(r"(?:under|below|less\s+than|fewer\s+than|cheaper\s+than|<)\s*$")

_MULTIPLIERS = {
    "k": 1e3, "thousand": 1e3, "grand": 1e3, "m": 1e6, "mm": 1e6, "mil": 1e6, "million": 1e6,
}  # fmt: skip


def _amount(tag: str) -> str:
    # An amount starts where a run of digits starts, and a 1,234,567 grouping not after a
    # "digit,": otherwise a failed range attempt is retried from every group of a long
    # 1,234,234,... chain, each retry scanning the rest of it (quadratic).
    return (
        rf"(?P<cur{tag}>[$€£¥])?\s?(?<!\d)"
        rf"(?P<num{tag}>(?<!\d,)\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d++(?:\.\d+)?)\s?"
        rf"(?P<mult{tag}>k|mm|m|million|mil|thousand|grand)?(?!\w)"
    )


_AMOUNT = re.compile(_amount(""))
_BETWEEN = re.compile(rf"between\s++{_amount('a')}\s++(?:and|to|-)\s++{_amount('b')}")
_DASH_RANGE = re.compile(rf"{_amount('a')}\s*+(?:-|–|to)\s*+{_amount('b')}")
_PER_MONTH = re.compile(r"\s*(?:/\s*mo(?:nth)?|per\s+month|a\s+month|monthly)\b")

_RENT_WORDS = re.compile(
    r"\b(?:for\s+rent|to\s+rent|rent|rents|rental|rentals|renting|lease|leasing|per\s+month|"
    r"a\s+month|monthly)\b|/\s*mo"
)
_SALE_WORDS = re.compile(
    r"\b(?:for\s+sale|buy|buying|purchase|purchasing|to\s+own|sale|on\s+the\s+market)\b"
)
_SOLD = re.compile(r"\bsold\b")
_MLS_TOKEN = re.compile(r"[\w-]+")

#: A price at or above this, with no word for sale or rent, is a sale price (not a monthly rent).
RENT_CEILING = 25_000.0

#: Short names people use for property types: a listing type containing any word of a group
#: (case-insensitively) is also found by every other word of that group.
TYPE_ALIASES: tuple[tuple[str, ...], ...] = (
    ("condo", "condominium", "condo unit"),
    ("townhouse", "townhome", "town house", "town home", "row house"),
    ("single family", "single-family", "single family home", "single-family home",
     "single family house", "single-family house", "detached house"),
    ("apartment", "apt", "flat"),
    ("duplex", "two-family"),
)  # fmt: skip


@dataclass(frozen=True)
class Criteria:
    """What a question asks for. Bounds are inclusive; None means no bound.

    Cities, property types and MLS numbers are written as in the listings; they match
    case-insensitively.
    """

    cities: tuple[str, ...] = ()
    sale_type: str | None = None
    min_price: float | None = None
    max_price: float | None = None
    min_beds: float | None = None
    max_beds: float | None = None
    min_baths: float | None = None
    max_baths: float | None = None
    property_types: tuple[str, ...] = ()
    mls_numbers: tuple[str, ...] = ()
    sold: bool = False

    @property
    def empty(self) -> bool:
        """Whether the question asks for nothing in particular."""
        return self == Criteria()


class Catalog:
    """A chatbot's listings with what parsing needs precomputed (cities, types, MLS numbers).

    Building one costs a pass over the listings; reuse it while the listings do not change
    (the app keeps one per chatbot). Every function taking listings also takes a catalog.
    """

    def __init__(self, listings: Sequence[Mapping[str, Any]]) -> None:
        self.listings = listings
        self.cities = _phrase_finder(_distinct(listings, "City"), plural=False)
        self.property_types = _phrase_finder(
            _with_aliases(_distinct(listings, "PropertyType")), plural=True
        )
        self.mls_numbers = dict(_distinct(listings, "MLSNumber"))
        self.currency = next(
            (str(x["CurrencySymbol"]) for x in listings if x.get("CurrencySymbol")), "$"
        )

    @classmethod
    def of(cls, listings: Sequence[Mapping[str, Any]] | Catalog) -> Catalog:
        """``listings`` as a catalog (a catalog is returned as is)."""
        return listings if isinstance(listings, Catalog) else cls(listings)


Listings = Sequence[Mapping[str, Any]] | Catalog


def parse_question(question: str, listings: Listings) -> Criteria:
    """The criteria a question expresses, given the listings it may refer to."""
    catalog = Catalog.of(listings)
    text = _WORD_NUMBER.sub(lambda m: _WORD_NUMBERS[m.group(1)], question.casefold())

    text, mls_numbers = _take_mls_numbers(text, catalog.mls_numbers)
    text, cities = _take_phrases(text, catalog.cities)
    text, types = _take_phrases(text, catalog.property_types)
    text, beds = _take_counts(text, _BEDS)
    if _STUDIO.search(text):
        beds = (0.0, 0.0)
    text, baths = _take_counts(text, _BATHS)
    min_price, max_price, per_month = _prices(text)

    rent = bool(_RENT_WORDS.search(text)) or per_month
    sale = bool(_SALE_WORDS.search(text))
    sale_type = "for_rent" if rent and not sale else "for_sale" if sale and not rent else None
    if sale_type is None and not rent and max(min_price or 0, max_price or 0) >= RENT_CEILING:
        sale_type = "for_sale"  # "under $700k" is a sale budget: a rent is never that much
    return Criteria(
        cities=cities,
        sale_type=sale_type,
        min_price=min_price,
        max_price=max_price,
        min_beds=beds[0],
        max_beds=beds[1],
        min_baths=baths[0],
        max_baths=baths[1],
        property_types=types,
        mls_numbers=mls_numbers,
        sold=bool(_SOLD.search(text)),
    )


def matching(criteria: Criteria, listings: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The listings meeting every criterion, in the order given."""
    return [item for item in listings if _matches(criteria, item)]


# --------------------------------------------------------------------------- matching


def price_of(item: Mapping[str, Any]) -> float | None:
    """A listing's price: ``RentPrice`` for a rental, ``SalePrice`` otherwise; None if absent."""
    key = "RentPrice" if item.get("SaleType") == "for_rent" else "SalePrice"
    value = item.get(key)
    return None if value is None else float(value)


def _within(value: Any, low: float | None, high: float | None) -> bool:
    if low is None and high is None:
        return True
    if value is None:
        return False
    number = float(value)
    return (low is None or number >= low) and (high is None or number <= high)


def _one_of(value: Any, choices: Iterable[str]) -> bool:
    folded = str(value or "").strip().casefold()
    return any(folded == choice.casefold() for choice in choices)


def _matches(criteria: Criteria, item: Mapping[str, Any]) -> bool:
    if criteria.mls_numbers:
        if not _one_of(item.get("MLSNumber"), criteria.mls_numbers):
            return False
    elif (item.get("Status") == "Sold") != criteria.sold:
        return False
    if criteria.cities and not _one_of(item.get("City"), criteria.cities):
        return False
    if criteria.sale_type is not None and item.get("SaleType") != criteria.sale_type:
        return False
    if criteria.property_types and not _one_of(item.get("PropertyType"), criteria.property_types):
        return False
    return (
        _within(item.get("Bedrooms"), criteria.min_beds, criteria.max_beds)
        and _within(item.get("Bathrooms"), criteria.min_baths, criteria.max_baths)
        and _within(price_of(item), criteria.min_price, criteria.max_price)
    )


# --------------------------------------------------------------------------- parsing helpers

Span = tuple[int, int]

#: How far before a number its comparison words ("at least", "under") are looked for.
_LOOKBACK = 25


def _blank(text: str, spans: Sequence[Span]) -> str:
    """``text`` with each span (ascending, not overlapping) replaced by as many spaces.

    A consumed span becomes spaces so later patterns neither see it nor join its sides. All the
    spans of a step are blanked in one pass: blanking them one at a time copied the whole text
    per match, which made a question full of matches quadratic.
    """
    if not spans:
        return text
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        pieces += (text[last:start], " " * (end - start))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _before(text: str, start: int, taken: Sequence[Span]) -> str:
    """The few characters before ``start``, with the spans this step took so far blanked."""
    low = max(0, start - _LOOKBACK)
    window = text[low:start]
    for span_start, span_end in reversed(taken):
        if span_end <= low:
            break  # spans ascend: the earlier ones end before the window too
        a, b = max(span_start, low) - low, span_end - low
        window = window[:a] + " " * (b - a) + window[b:]
    return window


def _distinct(listings: Iterable[Mapping[str, Any]], key: str) -> list[tuple[str, str]]:
    """A field's distinct values as (case-folded, as first written), longest first."""
    values: dict[str, str] = {}
    for item in listings:
        text = str(item.get(key) or "").strip()
        if text:
            values.setdefault(text.casefold(), text)
    # Longest first, so "san antonio" is taken before a city called "antonio".
    return sorted(values.items(), key=lambda pair: (-len(pair[0]), pair[0]))


_PhraseFinder = tuple[re.Pattern[str], dict[str, tuple[str, ...]]] | None


def _with_aliases(types: list[tuple[str, str]]) -> list[tuple[str, tuple[str, ...]]]:
    """Each type's folded name and its aliases, each with the types it stands for."""
    found: dict[str, dict[str, None]] = {}
    for folded, original in types:
        found.setdefault(folded, {})[original] = None
        for group in TYPE_ALIASES:
            if any(re.search(rf"(?<!\w){re.escape(alias)}(?!\w)", folded) for alias in group):
                for alias in group:
                    found.setdefault(alias, {})[original] = None
    return sorted(
        ((phrase, tuple(names)) for phrase, names in found.items()),
        key=lambda pair: (-len(pair[0]), pair[0]),
    )


def _phrase_finder(
    phrases: Sequence[tuple[str, str | tuple[str, ...]]], *, plural: bool
) -> _PhraseFinder:
    """One regex finding any of the phrases as whole words (and its folded → originals map)."""
    if not phrases:
        return None
    ending = r"(?:e?s)?" if plural else ""
    # Alternatives longest first: the regex takes the first that matches at a position.
    alternatives = "|".join(re.escape(folded) for folded, _ in phrases)
    pattern = re.compile(rf"(?<!\w)({alternatives}){ending}(?!\w)")
    originals = {folded: (names,) if isinstance(names, str) else names for folded, names in phrases}
    return pattern, originals


def _take_phrases(text: str, finder: _PhraseFinder) -> tuple[str, tuple[str, ...]]:
    if finder is None:
        return text, ()
    pattern, originals = finder
    found: dict[str, None] = {}
    spans: list[Span] = []
    for match in pattern.finditer(text):
        found.update(dict.fromkeys(originals[match.group(1)]))
        spans.append(match.span())
    return _blank(text, spans), tuple(found)


def _take_mls_numbers(text: str, known: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    found: dict[str, None] = {}
    spans: list[Span] = []
    for match in _MLS_TOKEN.finditer(text):
        original = known.get(match.group(0))
        if original is not None:
            found[original] = None
            spans.append(match.span())
    return _blank(text, spans), tuple(found)


def _take_counts(
    text: str, pattern: re.Pattern[str]
) -> tuple[str, tuple[float | None, float | None]]:
    low: float | None = None
    high: float | None = None
    spans: list[Span] = []
    for match in pattern.finditer(text):
        n = float(match.group("n"))
        before = _before(text, match.start(), spans)
        spans.append(match.span())
        if not math.isfinite(n):
            continue  # hundreds of digits: not a count anyone means
        rel = (match.group("rel") or "").replace(" ", "")
        if rel in ("+", "ormore") or _MIN_WORDS.search(before):
            low = n
        elif _MORE_WORDS.search(before):
            low = n + 0.5
        elif rel in ("orless", "orfewer") or _MAX_WORDS.search(before):
            high = n
        elif _LESS_WORDS.search(before):
            high = n - 0.5
        else:
            low = high = n
    return _blank(text, spans), (low, high)


def _value(match: re.Match[str], tag: str = "") -> tuple[float, bool]:
    """An amount's value and whether it is unmistakably money (currency or multiplier).

    The value is infinite for a number beyond the largest float; callers skip such amounts.
    """
    number = float(match.group(f"num{tag}").replace(",", ""))
    mult = match.group(f"mult{tag}")
    return number * _MULTIPLIERS.get(mult or "", 1.0), bool(mult or match.group(f"cur{tag}"))


def _prices(text: str) -> tuple[float | None, float | None, bool]:
    """The price bounds in a question, and whether it speaks of a monthly price."""
    low: float | None = None
    high: float | None = None
    per_month = False
    for pattern, needs_money in ((_BETWEEN, False), (_DASH_RANGE, True)):
        spans: list[Span] = []
        for match in pattern.finditer(text):
            a, a_money = _value(match, "a")
            b, b_money = _value(match, "b")
            if needs_money and not (a_money or b_money):
                continue
            spans.append(match.span())
            if not (math.isfinite(a) and math.isfinite(b)):
                continue
            mult_b = _MULTIPLIERS.get(match.group("multb") or "", 1.0)
            if not match.group("multa") and mult_b > 1 and a * mult_b <= b:
                a *= mult_b  # "300-500k" means 300k to 500k
            low, high = min(a, b), max(a, b)
            per_month = per_month or bool(_PER_MONTH.match(text, match.end()))
        text = _blank(text, spans)
    for match in _AMOUNT.finditer(text):
        amount, money = _value(match)
        if not math.isfinite(amount):
            continue
        monthly = bool(_PER_MONTH.match(text, match.end()))
        before = text[max(0, match.start() - _LOOKBACK) : match.start()]
        if _MIN_WORDS.search(before) or _MORE_WORDS.search(before):
            low = amount
        elif _MAX_WORDS.search(before) or _LESS_WORDS.search(before):
            high = amount
        elif money or monthly:
            high = amount  # a bare price is a budget
        else:
            continue  # a number that is not a price (a ZIP code, a year)
        per_month = per_month or monthly
    return low, high, per_month
