"""The claims frame: each fact an answer states about a listing, held against the listing.

`fact_check` (`eb.fact_check`) gives one row per claim, in the order of the answer:

- `listing`: the listing the claim is about: its MLS number (else its address or URL) when
  the chatbot has it, else the name as the answer wrote it.
- `ID`: the listing's ID (NA for an unknown listing, or when the frame has no `ID` column).
- `mention`: how the answer named the listing (`MLS# ATX1001`, `1208 south lamar boulevard`,
  a URL).
- `field`: one of `FIELDS`: `price`, `rent`, `bedrooms`, `bathrooms`, `city`, `area` (living
  area), `status`, `sale_type` (for sale or for rent); `listing` for an unknown listing named
  with no fact next to it.
- `claimed`: the claim as written (`$1.25M`, `three bedrooms`).
- `claimed_value` / `listing_value`: the value read from the answer and the listing's value (a
  number or a text; None when the listing has none). A price claimed in another currency than
  the listing's has the listing's price as text with its currency (`"€450,000"`): the two
  numbers do not compare.
- `verdict`: `supported`, `contradicted` or `unknown listing` (`VERDICTS`).
- `start` / `end`: where the claim is in the answer.

Numbers agree within half a unit of their last written digit (`$1.25M` is 1,245,000 to
1,255,000; `$650k` is 649,500 to 650,500), within 5 % when the answer hedges ("about
$650k"); counts agree exactly. A price stated for a listing that has none (a rent for a home
for sale) is contradicted. A price is in the listing's currency (its `CurrencySymbol`) or
contradicted: `€450,000` of a home listed in `$` is, `USD 450,000` and `450,000 dollars`
are not (`estatebot.chat.factcheck.currencies`; an amount that names no currency, or a listing
without one, is compared by its number alone). A claim on a column the frame does not have is
not read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from estatebot.chat.factcheck.currencies import currency_key, same_currency
from estatebot.chat.factcheck.facts import Fact
from estatebot.chat.factcheck.index import Listing, ListingIndex
from estatebot.chat.factcheck.reader import RawClaim, mention_key, read_claims

__all__ = [
    "CLAIM_COLUMNS",
    "CONTRADICTED",
    "FIELDS",
    "SUPPORTED",
    "UNKNOWN_LISTING",
    "VERDICTS",
    "ClaimChecker",
    "claims_frame",
    "describe_claim",
    "doubtful_lines",
    "empty_claims",
    "fact_check",
    "unknown_listings",
]

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
UNKNOWN_LISTING = "unknown listing"
#: How a listing the answer names and the listings do not hold is told, before its name.
UNKNOWN_LISTING_LINE = "the answer names a listing you do not have: "
#: Every verdict, from best to worst.
VERDICTS: tuple[str, ...] = (SUPPORTED, CONTRADICTED, UNKNOWN_LISTING)

#: The fields a claim can be about.
FIELDS: tuple[str, ...] = (
    "price", "rent", "bedrooms", "bathrooms", "city", "area", "status", "sale_type", "listing",
)  # fmt: skip

_DTYPES: dict[str, str] = {
    "listing": "string",
    "ID": "Int64",
    "mention": "string",
    "field": "string",
    "claimed": "string",
    "claimed_value": "object",
    "listing_value": "object",
    "verdict": "string",
    "start": "Int64",
    "end": "Int64",
}
#: The columns of a claims frame, in order.
CLAIM_COLUMNS: tuple[str, ...] = tuple(_DTYPES)

_COLUMN_OF = {
    "price": "SalePrice",
    "rent": "RentPrice",
    "bedrooms": "Bedrooms",
    "bathrooms": "Bathrooms",
    "city": "City",
    "area": "BuildingArea",
    "status": "Status",
    "sale_type": "SaleType",
}
_SQFT_PER_SQM = 10.763910416709722
_STATUS_WORDS = {"Active": "active", "Sold": "sold", "PreOnMarket": "coming soon"}
_SALE_WORDS = {"for_sale": "for sale", "for_rent": "for rent"}


def empty_claims(extra: Sequence[str] = ()) -> pd.DataFrame:
    """A claims frame with no rows (every column, with its dtype); `extra` columns first.

    Args:
        extra: names of text columns put before the claim columns.

    Returns:
        An empty frame with the columns `extra` then `CLAIM_COLUMNS`, each in its dtype.
    """
    return claims_frame([], extra)


def claims_frame(rows: Sequence[Mapping[str, Any]], extra: Sequence[str] = ()) -> pd.DataFrame:
    """Claim records (as `ClaimChecker.records` gives) as a typed claims frame; the
    `extra` columns (text) come first.

    Args:
        rows: the claim records, each with a key for every column of `CLAIM_COLUMNS` and of
            `extra`.
        extra: names of text columns put before the claim columns.

    Returns:
        One row per record, in order, with the columns `extra` then `CLAIM_COLUMNS`.

    Raises:
        KeyError: a record lacks one of the columns.
    """
    # Column by column: one astype of a whole frame costs more than reading the answer.
    columns = {name: pd.Series([row[name] for row in rows], dtype="string") for name in extra}
    for name, dtype in _DTYPES.items():
        columns[name] = pd.Series([row[name] for row in rows], dtype=dtype)
    return pd.DataFrame(columns)


class ClaimChecker:
    """A listings frame made ready to check many answers (`fact_check` builds one per
    call; build one yourself to check a batch).

    Args:
        listings: the chatbot's listings, as for `fact_check`.

    Raises:
        TypeError: `listings` is not a DataFrame.
        ValueError: the frame has none of the columns that name a listing (`MLSNumber`,
            `Address`, `Url`).
    """

    def __init__(self, listings: pd.DataFrame) -> None:
        self.index = ListingIndex(listings)

    def __len__(self) -> int:
        return len(self.index.listings)

    def check(self, answer: str) -> pd.DataFrame:
        """The claims frame of one answer (see the module docstring).

        Args:
            answer: the answer's text.

        Returns:
            One row per claim (columns `CLAIM_COLUMNS`), in the order of the answer.

        Raises:
            TypeError: `answer` is not text.
        """
        return claims_frame(self.records(answer))

    def records(self, answer: str) -> list[dict[str, Any]]:
        """The claims of one answer as plain dicts (the columns of `CLAIM_COLUMNS`):
        cheaper than a frame per answer when checking many.

        Args:
            answer: the answer's text.

        Returns:
            One dict per claim, in the order of the answer.

        Raises:
            TypeError: `answer` is not text.
        """
        if not isinstance(answer, str):
            raise TypeError(f"the answer must be text, not {type(answer).__name__}")
        return [row for raw in read_claims(answer, self.index) if (row := self._row(raw))]

    def _row(self, raw: RawClaim) -> dict[str, Any] | None:
        mention, fact = raw.mention, raw.fact
        listing = mention.listing
        if mention.ambiguous:
            return None
        if fact is None:
            name = mention.text
            return _make_row(name, None, name, "listing", name, name, None, UNKNOWN_LISTING,
                             mention.start, mention.end)  # fmt: skip
        if listing is None:
            return _make_row(mention.text, None, mention.text, fact.field, fact.text, fact.value,
                             None, UNKNOWN_LISTING, fact.start, fact.end)  # fmt: skip
        judged = self._judge(fact, listing)
        if judged is None:
            return None
        field, real, verdict = judged
        return _make_row(listing.name, listing.id, mention.text, field, fact.text, fact.value,
                         real, verdict, fact.start, fact.end)  # fmt: skip

    def _judge(self, fact: Fact, listing: Listing) -> tuple[str, Any, str] | None:
        field = fact.field
        values = listing.values
        if (
            field == "price"
            and values.get("SalePrice") is None
            and values.get("SaleType") == "for_rent"
        ):
            field = "rent"  # "listed at $3,400" of a rental states its rent
        column = _COLUMN_OF[field]
        if column not in self.index.columns:
            return None  # the frame cannot say: no claim read
        real = values.get(column)
        if real is None:
            return field, None, CONTRADICTED
        if field in ("price", "rent"):
            symbol = values.get("CurrencySymbol")
            if not same_currency(fact.unit, currency_key(symbol)):
                return field, _money_text(float(real), str(symbol)), CONTRADICTED
        if field in ("city", "status", "sale_type"):
            agrees = str(real).casefold() == str(fact.value).casefold()
            return field, real, SUPPORTED if agrees else CONTRADICTED
        number = float(real)
        claimed = float(fact.value)
        tolerance = fact.tolerance
        if field == "area":
            unit = values.get("AreaUnit") or "Square Feet"
            if fact.unit and unit != fact.unit:
                factor = _SQFT_PER_SQM if fact.unit == "Square Feet" else 1 / _SQFT_PER_SQM
                number *= factor
                tolerance = max(tolerance, number * 0.02)
        agrees = abs(number - claimed) <= tolerance + 1e-9
        return field, real, SUPPORTED if agrees else CONTRADICTED


def _money_text(amount: float, symbol: str) -> str:
    """An amount with its currency as a listing states it (`$450,000`, `EUR 450,000`)."""
    places = 0 if amount.is_integer() else 2
    number = f"{amount:,.{places}f}"
    # A symbol of letters needs a space: "$450,000" but "EUR 450,000".
    return f"{symbol} {number}" if symbol[-1:].isalpha() else f"{symbol}{number}"


def _make_row(
    listing: str,
    listing_id: int | None,
    mention: str,
    field: str,
    claimed: str,
    claimed_value: Any,
    listing_value: Any,
    verdict: str,
    start: int,
    end: int,
) -> dict[str, Any]:
    return {
        "listing": listing,
        "ID": listing_id,
        "mention": mention,
        "field": field,
        "claimed": claimed,
        "claimed_value": claimed_value,
        "listing_value": listing_value,
        "verdict": verdict,
        "start": start,
        "end": end,
    }


def fact_check(answer_text: str, listings_frame: pd.DataFrame) -> pd.DataFrame:
    """The claims an answer makes about the chatbot's listings, each with its verdict.

    `listings_frame` is the chatbot's listings (`eb.pull_listings(client, serial)`, or any
    frame with an `MLSNumber`, `Address` or `Url` column and the value columns
    `SalePrice`, `RentPrice`, `Bedrooms`, `Bathrooms`, `City`, `BuildingArea`,
    `Status`, `SaleType`). One row per claim (columns `CLAIM_COLUMNS`, described in
    the module docstring); no rows when the answer states nothing about a listing. Numbers near
    no listing mention are not claims. To check many answers, build one `ClaimChecker`.

    Args:
        answer_text: the chatbot's answer.
        listings_frame: the chatbot's listings, as above. A claim on a value column the frame
            does not have is not read.

    Returns:
        The claims frame: one row per claim, in the order of the answer, with the columns
        `listing`, `ID`, `mention`, `field`, `claimed`, `claimed_value`, `listing_value`,
        `verdict`, `start` and `end`.

    Raises:
        TypeError: `answer_text` is not text, or `listings_frame` is not a DataFrame.
        ValueError: `listings_frame` has none of the columns `MLSNumber`, `Address` and `Url`.
    """
    return ClaimChecker(listings_frame).check(answer_text)


# --------------------------------------------------------------------------- describing


def _shown(field: str, value: Any) -> str:
    if value is None or value is pd.NA:
        return {
            "price": "no sale price",
            "rent": "no rent (not for rent)",
            "area": "no living area",
        }.get(field, f"no {field}")
    if field in ("price", "rent") and isinstance(value, str):
        # Already written with the listing's currency.
        return f"{value}/month" if field == "rent" else value
    if field == "price":
        return f"${float(value):,.0f}"
    if field == "rent":
        return f"${float(value):,.0f}/month"
    if field in ("bedrooms", "bathrooms"):
        number = float(value)
        return f"{number:g}"
    if field == "area":
        return f"{float(value):,.0f} sq ft"
    if field == "status":
        return _STATUS_WORDS.get(str(value), str(value))
    if field == "sale_type":
        return _SALE_WORDS.get(str(value), str(value))
    return str(value)


def describe_claim(claim: Any) -> str:
    """One claim row (a mapping or a frame row) in words, as `why` and the badge show it:
    `"ATX1001: price $495,000 claimed, the listing says $450,000"` or
    `"the answer names a listing you do not have: MLS# ATX9999"` (the listing's name as the
    answer writes it).

    Args:
        claim: one claim, with at least the keys `verdict`, `field`, `listing`, `claimed` and
            `listing_value` (a row of a claims frame, or a record of `ClaimChecker.records`).

    Returns:
        The claim in one sentence.
    """
    verdict = claim["verdict"]
    field = claim["field"]
    if verdict == UNKNOWN_LISTING:
        # No field and no value: the listing itself is what the answer made up.
        return f"{UNKNOWN_LISTING_LINE}{claim['listing']}"
    said = f"{field} {claim['claimed']}"
    if verdict == SUPPORTED:
        return f"{claim['listing']}: {said} (matches)"
    return (
        f"{claim['listing']}: {said} claimed, the listing says "
        f"{_shown(str(field), claim['listing_value'])}"
    )


def _records(claims: pd.DataFrame | Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    if isinstance(claims, pd.DataFrame):
        return [{str(k): v for k, v in row.items()} for row in claims.to_dict(orient="records")]
    return claims


def unknown_listings(claims: pd.DataFrame | Sequence[Mapping[str, Any]]) -> list[str]:
    """The listings an answer names that you do not have, each once (however many claims are
    about it, however it is written again), by its name as first written, in order.

    Args:
        claims: a claims frame, or its records (`ClaimChecker.records`).

    Returns:
        The names (`MLS# ATX9999`, `9999 Elm St`, a URL), in the order of the answer.
    """
    names: dict[tuple[str, ...], str] = {}
    for row in _records(claims):
        if row["verdict"] == UNKNOWN_LISTING:
            name = str(row["listing"])
            names.setdefault(mention_key(name), name)
    return list(names.values())


def doubtful_lines(claims: pd.DataFrame | Sequence[Mapping[str, Any]]) -> list[str]:
    """What the listings do not hold, one line each, in the order of the answer: each
    contradicted claim (`describe_claim`), and each listing the answer names that you do not
    have, once (`"the answer names a listing you do not have: MLS# ATX9999"`): its price,
    rooms and city claimed beside it fold into that line. The same line is never given twice.

    Args:
        claims: a claims frame, or its records (`ClaimChecker.records`).

    Returns:
        The lines; none when every claim holds.
    """
    lines: dict[str, None] = {}
    named: set[tuple[str, ...]] = set()
    for row in _records(claims):
        verdict = row["verdict"]
        if verdict == UNKNOWN_LISTING:
            key = mention_key(str(row["listing"]))
            if key in named:
                continue
            named.add(key)
        elif verdict != CONTRADICTED:
            continue
        lines.setdefault(describe_claim(row))
    return list(lines)
