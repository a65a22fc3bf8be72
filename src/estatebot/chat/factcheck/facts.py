"""The facts a sentence states, read as people and models write them.

:func:`read_facts` finds, in a piece of text, every statement of a price or rent (``$1,250,000``,
``$1.25M``, ``$650k``, ``$2,500/month``, ``298,900 USD``, ``1.2 million dollars``: every amount
:mod:`.amounts` reads, with its currency), a bedroom or bathroom count (``3 bd``, ``3 beds``,
``three bedrooms``, ``2.5 ba``, ``Bedrooms: 3``, ``studio``), a living area (``1,850 sq ft``), a
city (one of the given names), a status (sold, coming soon, active) and sale or rent (for sale,
for rent). It knows nothing of listings: :mod:`.reader` decides which listing a fact is about.

Amounts that are not a listing's price are not facts: a range or a bound (``under $700k``,
``$300k-$500k``), and amounts next to a word that makes them something else (a deposit, an HOA
fee, taxes, a mortgage payment, a price per square foot, a down payment).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from estatebot.chat.factcheck.amounts import NUMBER, find_amounts, parse_number
from estatebot.chat.factcheck.spans import Taken

__all__ = ["Fact", "city_pattern", "read_facts"]

_WORDS = {
    "zero": 0, "no": 0, "one": 1, "a": 1, "an": 1, "single": 1, "two": 2, "three": 3,
    "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip
_WORD_ALTERNATIVES = "zero|one|two|three|four|five|six|seven|eight|nine|ten"
_COUNT = (
    rf"(?<![\w.,$])(?P<n>\d{{1,2}}(?:\.\d)?|{_WORD_ALTERNATIVES})"
    r"(?P<half>\s+and\s+a\s+half|\s*½)?(?:\s*-\s*|\s*)"
)
_BEDS = re.compile(_COUNT + r"(?:bedrooms?|beds?|bdrms?|bds?|br)(?!\w)", re.IGNORECASE)
_BATHS = re.compile(_COUNT + r"(?:bathrooms?|baths?|bths?|ba)(?!\w)", re.IGNORECASE)
_BEDS_LABEL = re.compile(r"\b(?:bedrooms?|beds?)\s*[:=]\s*(?P<n>\d{1,2})(?![\d.])", re.IGNORECASE)
_BATHS_LABEL = re.compile(
    r"\b(?:bathrooms?|baths?)\s*[:=]\s*(?P<n>\d{1,2}(?:\.\d)?)(?![\d.])", re.IGNORECASE
)
_STUDIO = re.compile(r"\bstudio\b", re.IGNORECASE)

_PER_MONTH = re.compile(
    r"\s*(?:/\s*mo(?:nth|\.)?|/\s*mth|per\s+month|a\s+month|each\s+month|monthly|pcm)(?!\w)",
    re.IGNORECASE,
)
_BOUND_BEFORE = re.compile(
    r"(?:under|below|less\s+than|up\s+to|at\s+most|no\s+more\s+than|over|above|more\s+than|"
    r"at\s+least|no\s+less\s+than|between|from|within|budget(?:\s+of)?|max(?:imum)?|"
    r"min(?:imum)?|starting\s+at|ranging\s+from|range\s+of|cheaper\s+than|<|>|<=|>=)\s*$",
    re.IGNORECASE,
)
_OTHER_AMOUNT_BEFORE = re.compile(
    r"(?:deposit|hoa|fees?|dues|taxe?s?|mortgage|payments?|down|insurance|utilities|"
    r"commission|closing\s+costs?|credit|save|savings|reduced\s+by|discount|cut|drop(?:ped)?\s+by|"
    r"zestimate|estimate[ds]?|estimated\s+value)\b"
    r"(?:\s*(?:of|is|are|at|:|=|about|around|roughly|approximately|just|only))*\s*$",
    re.IGNORECASE,
)
_OTHER_AMOUNT_AFTER = re.compile(
    r"\s*(?:/\s*mo(?:nth)?\.?\s*|per\s+month\s*|a\s+month\s*|monthly\s*)?"
    r"(?:security\s+)?(?:deposit|hoa|fees?|dues|in\s+taxes|taxes|mortgage|payment|down|off|"
    r"reduction|less|more|cheaper|higher|lower|below|above|savings|closing|credit|"
    r"(?:/|per)\s*(?:sq|square))\b",
    re.IGNORECASE,
)
_RENT_BEFORE = re.compile(r"\b(?:rent|rents|rented|renting|lease|leases|leasing)\b", re.IGNORECASE)
_HEDGE_BEFORE = re.compile(
    r"(?:about|around|approximately|approx\.?|roughly|nearly|almost|~|circa|some|close\s+to|"
    r"just\s+(?:under|over|below|above))\s*$",
    re.IGNORECASE,
)
_COUNT_BOUND_BEFORE = re.compile(
    r"(?:at\s+least|up\s+to|over|under|more\s+than|fewer\s+than|less\s+than|minimum(?:\s+of)?|"
    r"max(?:imum)?(?:\s+of)?|min(?:imum)?(?:\s+of)?|or)\s*$",
    re.IGNORECASE,
)
_COUNT_BOUND_AFTER = re.compile(r"\s*(?:\+|or\s+more|or\s+fewer|or\s+less|plus)", re.IGNORECASE)
_COUNT_KIND_AFTER = re.compile(r"\s*(?:full|half|partial)\b", re.IGNORECASE)

# "\s*(?:-\s*)?", not "\s*-?\s*": two stars side by side would try every split of a long run
# of spaces after every number.
_AREA = re.compile(
    rf"(?<![\w$.,])(?P<num>{NUMBER})\s*(?:-\s*)?(?P<unit>sq\.?\s*ft\.?|sqft|square\s+f(?:ee|oo)t|sf|"
    r"ft²|ft2|m²|m2|sq\.?\s*m\b\.?|sqm|square\s+met(?:er|re)s?)(?!\w)",
    re.IGNORECASE,
)
_LOT_NEAR = re.compile(r"\blot\b", re.IGNORECASE)

_STATUS = (
    (re.compile(r"\bsold\b", re.IGNORECASE), "Sold"),
    (re.compile(r"\b(?:coming\s+soon|pre-?market|pre-?on-?market)\b", re.IGNORECASE),
     "PreOnMarket"),
    (re.compile(r"\b(?:active|still\s+available|currently\s+available)\b", re.IGNORECASE),
     "Active"),
)  # fmt: skip
_SALE_TYPE = (
    (re.compile(r"\bfor\s+(?:rent|lease)\b|\brentals?\b", re.IGNORECASE), "for_rent"),
    (re.compile(r"\bfor\s+sale\b", re.IGNORECASE), "for_sale"),
)

_LOOKBACK = 30


@dataclass(frozen=True)
class Fact:
    """One fact as written: where it is, its field, the text and the value read.

    ``tolerance`` is how far a number may be from the listing's and still agree: half a unit
    of its last written digit (``$1.25M`` agrees with 1,245,000 to 1,255,000), wider when the
    text hedges ("about $650k": 5 %). ``unit`` is what the number counts: an area's unit
    (``"Square Feet"``, ``"Square Meters"``), an amount's currency key (``"USD"``, ``"$"``;
    :mod:`.currencies`; None when the amount names none).
    """

    start: int
    end: int
    field: str
    text: str
    value: float | str
    tolerance: float = 0.0
    unit: str | None = None


def city_pattern(cities: Iterable[str]) -> re.Pattern[str] | None:
    """One regex finding any of the cities as whole words, any case (None for no city)."""
    names = sorted(set(cities), key=len, reverse=True)
    if not names:
        return None
    alternatives = "|".join(re.escape(name) for name in names)
    return re.compile(rf"(?<!\w)({alternatives})(?!\w)", re.IGNORECASE)


def read_facts(
    text: str, cities: Mapping[str, str], city_finder: re.Pattern[str] | None = None
) -> list[Fact]:
    """Every fact in ``text`` (see the module docstring), in order of position.

    ``cities`` maps each known city, case-folded, to its name as the listings write it;
    ``city_finder`` is :func:`city_pattern` of them (built here when not given).
    """
    if city_finder is None:
        city_finder = city_pattern(cities)
    facts: list[Fact] = []
    taken = Taken(len(text))
    facts += _amounts(text, taken)
    facts += _areas(text, taken)
    facts += _counts(text, taken)
    facts += _words(text, cities, city_finder, taken)
    return sorted(facts, key=lambda f: f.start)


# --------------------------------------------------------------------------- amounts


def _amounts(text: str, taken: Taken) -> list[Fact]:
    facts: list[Fact] = []
    for amount in find_amounts(text):
        start, end, value = amount.start, amount.end, amount.value
        before = text[max(0, start - _LOOKBACK) : start]
        per_month = _PER_MONTH.match(text, end)
        after_end = per_month.end() if per_month else end
        taken.add(start, after_end)
        if (
            amount.in_range
            or _BOUND_BEFORE.search(before)
            or _OTHER_AMOUNT_BEFORE.search(before)
            or _OTHER_AMOUNT_AFTER.match(text, end)
        ):
            continue  # a bound, a range, a deposit...: not a listing's price
        rent = per_month is not None or bool(_RENT_BEFORE.search(before))
        tolerance = amount.place / 2
        if _HEDGE_BEFORE.search(before):
            tolerance = max(tolerance, value * 0.05)
        field = "rent" if rent else "price"
        facts.append(
            Fact(start, after_end, field, text[start:after_end], value, tolerance, amount.currency)
        )
    return facts


def _areas(text: str, taken: Taken) -> list[Fact]:
    facts: list[Fact] = []
    for match in _AREA.finditer(text):
        start, end = match.span()
        taken.add(start, end)
        around = text[max(0, start - 12) : min(len(text), end + 12)]
        if _LOT_NEAR.search(around):
            continue  # a lot size, not the living area
        value, place = parse_number(match.group("num"))
        unit_text = match.group("unit").casefold()
        unit = "Square Meters" if "m" in unit_text.replace("sq", "") else "Square Feet"
        tolerance = place / 2
        if _HEDGE_BEFORE.search(text[max(0, start - _LOOKBACK) : start]):
            tolerance = max(tolerance, value * 0.05)
        facts.append(Fact(start, end, "area", text[start:end], value, tolerance, unit))
    return facts


# --------------------------------------------------------------------------- counts


def _count_value(match: re.Match[str]) -> float:
    raw = match.group("n").casefold()
    value = float(_WORDS[raw]) if raw in _WORDS else float(raw)
    if match.groupdict().get("half"):
        value += 0.5
    return value


def _counts(text: str, taken: Taken) -> list[Fact]:
    facts: list[Fact] = []
    for field, pattern, label in (
        ("bedrooms", _BEDS, _BEDS_LABEL),
        ("bathrooms", _BATHS, _BATHS_LABEL),
    ):
        for regex in (pattern, label):
            for match in regex.finditer(text):
                span = match.span()
                if taken.overlaps(*span):
                    continue
                taken.add(*span)
                before = text[max(0, span[0] - _LOOKBACK) : span[0]]
                if regex is pattern and (
                    _COUNT_BOUND_BEFORE.search(before)
                    or _COUNT_BOUND_AFTER.match(text, span[1])
                    or _COUNT_KIND_AFTER.match(text, match.end("n"))
                ):
                    continue  # "at least 3 bedrooms", "2+ baths", "2 full baths"
                value = _count_value(match)
                facts.append(Fact(span[0], span[1], field, text[span[0] : span[1]], value))
    for match in _STUDIO.finditer(text):
        if taken.free(*match.span()):
            facts.append(Fact(match.start(), match.end(), "bedrooms", match.group(0), 0.0))
    return facts


# --------------------------------------------------------------------------- words


def _words(
    text: str,
    cities: Mapping[str, str],
    city_finder: re.Pattern[str] | None,
    taken: Taken,
) -> list[Fact]:
    facts: list[Fact] = []
    if city_finder is not None:
        for match in city_finder.finditer(text):
            if taken.free(*match.span()):
                city = cities[match.group(1).casefold()]
                facts.append(Fact(match.start(), match.end(), "city", match.group(0), city))
    for field, choices in (("status", _STATUS), ("sale_type", _SALE_TYPE)):
        for regex, value in choices:
            for match in regex.finditer(text):
                if taken.free(*match.span()):
                    facts.append(Fact(match.start(), match.end(), field, match.group(0), value))
    return facts
