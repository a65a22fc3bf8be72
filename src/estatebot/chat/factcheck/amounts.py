"""Amounts of money in a text: a number with a currency marker on either side, or a multiplier.

:func:`find_amounts` reads, in a text made plain by :mod:`.folding`:

* the number: ``298,900``, ``298900``, ``1,250,000.00``, ``298.9k``, ``1.25M``, ``1.2 million``;
* a currency marker before it or after it, with any spaces between: a symbol (``$298,900``,
  ``298,900 $``, ``US$ 298,900``, ``€450k``; every currency symbol but the cent sign), an ISO code
  (``USD 298,900``, ``298,900 usd``, ``EUR450k``), a word (``298,900 dollars``, ``bucks``,
  ``euros``, ``1.2 million US dollars``).

A number with a multiplier and no marker (``1.25 million``) is an amount too, of no named
currency; a bare number (``1850``) is not. Locale forms (``1.250.000 €``, ``298.900 €``,
``298 900 €``, ``1,2 Mio``) are not read, and no part of one is taken for an amount: not the
``298`` nor the ``900`` of ``$298 900``, nor ``298.9`` from ``298.900`` (a price is never
written with three decimals). A code that is also a word (``ALL``, ``TOP``) counts only in
capitals, and before a number only one written as a price (``TOP 3`` is no amount).
Two amounts joined by a dash or ``to`` (``$300k-$500k``), or by ``and`` after ``between``, are
a range: each is marked :attr:`Amount.in_range`; so is an amount joined so to a number with no
marker, grouped like a price or short before a multiplier, that is below it and at least a
tenth of it (``300,000-500,000 USD``, ``$300,000 to 350,000``, ``300-500k``; not
``78704 - $450,000``, ``$450,000 - 3 bd`` nor ``$1,250,000 - 1,850 sq ft``).

Each number is looked at once, and each marker only next to a number, so reading is linear in
the length of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from estatebot.chat.factcheck.currencies import (
    SYMBOLS,
    WORD_MARKERS,
    WORDLIKE,
    code_key,
    dollar_key,
    narrower,
    symbol_key,
    word_key,
)

__all__ = ["MULTIPLIERS", "NUMBER", "Amount", "find_amounts", "money_before", "parse_number"]

#: The words that multiply a number, and by how much.
MULTIPLIERS: dict[str, float] = {
    "k": 1e3, "thousand": 1e3, "grand": 1e3, "m": 1e6, "mm": 1e6, "mil": 1e6, "million": 1e6,
}  # fmt: skip
#: A number as written: ``1,250,000``, ``1250000``, ``1.25``.
NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# Longest first: "million" is not "m" followed by "illion".
_MULT = "|".join(sorted(MULTIPLIERS, key=len, reverse=True))
# A number starts where no digit, dot or comma stands before it and ends where none follows
# (so no number is read from the middle of another); its multiplier is a whole word.
_CORE = re.compile(
    rf"(?<![\d.,])(?P<num>{NUMBER})(?![.,]?\d)(?:[ \t]*(?P<mult>{_MULT})(?!\w))?",
    re.IGNORECASE,
)
_SPACES = " \t"
# A number written as a price: grouped, of four digits or more, or with a multiplier.
_PRICE_NEXT = re.compile(
    rf"[ \t]*(?:\d{{1,3}}(?:,\d{{3}})+|\d{{4,}}|\d+(?:\.\d+)?[ \t]*(?:{_MULT})(?!\w))",
    re.IGNORECASE,
)
# "298 900 €": a number of three digits or fewer next to three more digits across a space is a
# part of a number grouped with spaces.
_GROUP_BEFORE = re.compile(r"\d[ \t]")
_GROUP_AFTER = re.compile(r"[ \t]\d{3}(?!\d)")
_RANGE_WORD = r"\s*(?:-|–|—|to)\s*"
_RANGE_GAP = re.compile(_RANGE_WORD, re.IGNORECASE)
_GROUPED = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?"
# The other end of a range, a number with no marker: grouped like a price, or (before an amount
# with a multiplier) a short number the multiplier applies to as well.
_GROUPED_TO = re.compile(rf"(?<![\d.,])(?P<n>{_GROUPED}){_RANGE_WORD}$", re.IGNORECASE)
_SHORT_TO = re.compile(rf"(?<![\d.,])(?P<n>\d{{1,3}}(?:\.\d+)?){_RANGE_WORD}$", re.IGNORECASE)
_TO_GROUPED = re.compile(rf"{_RANGE_WORD}(?P<n>{_GROUPED})(?![.,]?\d)", re.IGNORECASE)
_RANGE_LOOKBACK = 40
# A range's ends differ by less than this factor ("$1,250,000 - 1,850 sq ft" is no range).
_RANGE_SPREAD = 10.0
_AND_GAP = re.compile(r"\s*and\s*", re.IGNORECASE)
_BETWEEN_BEFORE = re.compile(r"\bbetween\s*$", re.IGNORECASE)
_BETWEEN_LOOKBACK = 12


@dataclass(frozen=True)
class Amount:
    """An amount as written: its span (markers included), its value, the place value of its
    last written digit (``298.9k``: 100), its currency key (:mod:`.currencies`; None when no
    marker names one) and whether it is one end of a range."""

    start: int
    end: int
    value: float
    place: float
    currency: str | None
    in_range: bool = False
    scale: float = 1.0


def _letter(char: str) -> bool:
    return char.isalpha()


def _ascii_letters(text: str) -> bool:
    return text.isascii() and text.isalpha()


def money_before(text: str, at: int) -> tuple[int, str | None] | None:
    """The currency marker that ends at ``at`` (spaces between allowed): its start and currency
    key; None when there is none."""
    i = at
    while i > 0 and text[i - 1] in _SPACES:
        i -= 1
    if i == 0:
        return None
    char = text[i - 1]
    if char == "$":
        k = i - 1
        while k > 0 and i - 1 - k < 3 and _ascii_letters(text[k - 1]):
            k -= 1
        if k < i - 1 and not (k > 0 and _letter(text[k - 1])):
            key = dollar_key(text[k : i - 1])
            if key is not None:
                return k, key  # "US$", "C$"
        return i - 1, "$"
    if char in SYMBOLS:
        return i - 1, symbol_key(char)
    letters = text[max(0, i - 3) : i]
    if len(letters) == 3 and _ascii_letters(letters) and not (i > 3 and _letter(text[i - 4])):
        key = code_key(letters)
        if key is not None:
            return i - 3, key
    return None


def _money_after(text: str, at: int, marked_before: bool) -> tuple[int, str | None] | None:
    """The currency marker that starts at ``at`` (spaces between allowed): its end and key."""
    j = at
    while j < len(text) and text[j] in _SPACES:
        j += 1
    if j >= len(text):
        return None
    end: int
    key: str | None
    word = WORD_MARKERS.match(text, j)
    if text[j] in SYMBOLS:
        end, key = j + 1, symbol_key(text[j])
    elif word is not None:
        end, key = word.end(), word_key(word)
    else:
        letters = text[j : j + 3]
        if len(letters) < 3 or not _ascii_letters(letters):
            return None
        if j + 3 < len(text) and _letter(text[j + 3]):
            return None
        key = code_key(letters)
        if key is None:
            return None
        end = j + 3
    if marked_before and _PRICE_NEXT.match(text, end):
        return None  # "$300k $500k": the second "$" is the next amount's
    return end, key


def find_amounts(text: str) -> list[Amount]:
    """Every amount of money in ``text``, in order (see the module docstring)."""
    found: list[Amount] = []
    previous_end = 0
    for match in _CORE.finditer(text):
        number_start, core_end = match.start("num"), match.end()
        number, mult = match.group("num"), match.group("mult")
        if not mult and _locale_part(text, number, number_start, core_end):
            continue
        before = money_before(text, number_start)
        if before is not None and (
            before[0] < previous_end  # "298,900 USD 3 bd": that marker ends the amount before
            or (_word_code(text, before) and not (mult or _written_as_price(number)))
        ):
            before = None
        after = _money_after(text, core_end, before is not None)
        if before is None and after is None and not mult:
            continue  # a bare number: an area, a year, a count
        if before is None and number_start and _word_char(text[number_start - 1]):
            continue  # part of a word ("ATX1001")
        if after is None and core_end < len(text) and _word_char(text[core_end]):
            continue  # "100kg"
        value, place = parse_number(number)
        scale = MULTIPLIERS.get((mult or "").casefold(), 1.0)
        start = before[0] if before else number_start
        end = after[0] if after else core_end
        currency = narrower(before[1] if before else None, after[1] if after else None)
        found.append(Amount(start, end, value * scale, place * scale, currency, scale=scale))
        previous_end = end
    return _ranges(text, found)


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _locale_part(text: str, number: str, start: int, end: int) -> bool:
    """Whether ``number`` (with no multiplier) is a grouped number of a locale not read, or a
    part of one: ``298.900``, the ``298`` or the ``900`` of ``298 900``."""
    whole, _, decimals = number.partition(".")
    if len(decimals) == 3:
        return True
    if "," in whole or len(whole) > 3 or decimals:
        return False
    return bool(
        _GROUP_AFTER.match(text, end) or _GROUP_BEFORE.match(text, max(0, start - 2), start)
    )


def _word_code(text: str, marker: tuple[int, str | None]) -> bool:
    """Whether the marker is written as a code that is also a word (``ALL``, ``TOP``)."""
    start, key = marker
    return key in WORDLIKE and text[start : start + 3] == key


def _written_as_price(number: str) -> bool:
    """Whether a number is written as prices are: grouped, or of four digits or more."""
    return "," in number or len(number.partition(".")[0]) >= 4


def parse_number(text: str) -> tuple[float, float]:
    """A written number and the place value of its last digit (``"1.25"`` → 1.25, 0.01)."""
    plain = text.replace(",", "")
    if "." in plain:
        return float(plain), 10.0 ** -len(plain.split(".", 1)[1])
    return float(plain), 1.0


def _ranges(text: str, amounts: list[Amount]) -> list[Amount]:
    """``amounts`` with each end of a range marked."""
    in_range = [_with_bare_number(text, amount) for amount in amounts]
    for i in range(1, len(amounts)):
        first, second = amounts[i - 1], amounts[i]
        if _RANGE_GAP.fullmatch(text, first.end, second.start) or (
            _AND_GAP.fullmatch(text, first.end, second.start)
            and _BETWEEN_BEFORE.search(text, max(0, first.start - _BETWEEN_LOOKBACK), first.start)
        ):
            in_range[i - 1] = in_range[i] = True
    return [
        replace(amount, in_range=True) if ranged else amount
        for amount, ranged in zip(amounts, in_range, strict=True)
    ]


def _with_bare_number(text: str, amount: Amount) -> bool:
    """Whether a number with no marker is the amount's other end in a range."""
    window = max(0, amount.start - _RANGE_LOOKBACK)
    lower = _GROUPED_TO.search(text, window, amount.start)
    if lower is not None and _spread(parse_number(lower["n"])[0], amount.value):
        return True
    short = _SHORT_TO.search(text, window, amount.start) if amount.scale > 1 else None
    if short is not None and _spread(parse_number(short["n"])[0] * amount.scale, amount.value):
        return True
    upper = _TO_GROUPED.match(text, amount.end)
    return upper is not None and _spread(amount.value, parse_number(upper["n"])[0])


def _spread(low: float, high: float) -> bool:
    """Whether ``low`` and ``high`` can be the two ends of a range of prices."""
    return 0 < low < high <= low * _RANGE_SPREAD
