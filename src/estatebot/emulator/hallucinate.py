"""The hallucination fault: an answer that states what the chatbot's listings do not say.

:func:`falsify` takes a true reply listing homes and changes one of the listings it shows, in
one of three ways (:data:`KINDS`):

* ``"price"`` — the price (or monthly rent) is stated 15 to 30 % off, rounded as a person would;
* ``"bedrooms"`` — the bedroom count is stated one or two off;
* ``"invented"`` — the listing's line is replaced by one for a listing the chatbot does not
  have: an address and an MLS number that none of its listings has.

Everything else in the reply stays as it was (the count of matches, the other listings), so a
checker has exactly one thing to catch. The :class:`Falsification` says what was changed: the
emulator keeps one per falsified answer, by message ID (``EmulatorServer.falsified``), as the
ground truth a test measures a fact-checker against. The reply's shape on the wire is the
contract's; nothing in it says it was falsified.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .answers import Reply, count_tokens, describe_listing
from .questions import Catalog, price_of

__all__ = ["KINDS", "Falsification", "falsify"]

#: The ways an answer can be falsified.
KINDS: tuple[str, ...] = ("price", "bedrooms", "invented")

_FACTORS = (0.7, 0.75, 0.8, 0.85, 1.15, 1.2, 1.25, 1.3)
_STREETS = (
    "Juniper Hollow Ln", "Copperleaf Dr", "Silver Maple Ct", "Quarry Ridge Rd", "Bluebonnet Way",
    "Harbor Mist Ave", "Old Mill Pkwy", "Starling Crest Blvd",
)  # fmt: skip


@dataclass(frozen=True)
class Falsification:
    """What a falsified answer states wrongly.

    ``field`` is ``"price"``, ``"rent"``, ``"bedrooms"`` or ``"listing"`` (an invented listing);
    ``mls_number`` is the listing changed (for an invented one: the MLS number stated, which no
    listing has); ``true_value`` and ``stated_value`` are what the listing says and what the
    answer says (for an invented listing: the listing it replaced, and the invented MLS number).
    """

    kind: str
    mls_number: str
    field: str
    true_value: float | str | None
    stated_value: float | str
    question: str


def falsify(
    reply: Reply,
    catalog: Catalog,
    rng: random.Random,
    *,
    question: str,
    system_message: str | None = None,
) -> tuple[Reply, Falsification] | None:
    """``reply`` with one shown listing misstated, and what was misstated; None when the reply
    shows no listing (a greeting, a refusal: nothing to falsify)."""
    by_id = {int(item["ID"]): item for item in catalog.listings}
    shown = [by_id[i] for i in reply.shown_ids if i in by_id]
    if not shown:
        return None
    position = rng.randrange(len(shown))
    item = shown[position]
    kind = rng.choice(KINDS)
    if kind == "price" and price_of(item) is None:
        kind = "bedrooms"
    changed, record = _change(kind, item, catalog, rng, question)
    line = f"{position + 1}. {describe_listing(item)}"
    if line not in reply.text:  # the engine's own line: always there, but never guess
        return None
    text = reply.text.replace(line, f"{position + 1}. {describe_listing(changed)}", 1)
    tokens = count_tokens(system_message, question, text)
    return replace(reply, text=text, total_tokens=tokens), record


def _change(
    kind: str,
    item: Mapping[str, Any],
    catalog: Catalog,
    rng: random.Random,
    question: str,
) -> tuple[dict[str, Any], Falsification]:
    mls = str(item.get("MLSNumber") or "")
    if kind == "price":
        rental = item.get("SaleType") == "for_rent"
        key = "RentPrice" if rental else "SalePrice"
        true = float(item[key])
        step = 50.0 if rental else 1000.0
        stated = max(step, round(true * rng.choice(_FACTORS) / step) * step)
        field = "rent" if rental else "price"
        return {**item, key: stated}, Falsification(kind, mls, field, true, stated, question)
    if kind == "bedrooms":
        true_beds = float(item.get("Bedrooms") or 0)
        delta = rng.choice((-1, 1, 2)) if true_beds >= 1 else rng.choice((1, 2))
        beds = true_beds + delta
        record = Falsification(kind, mls, "bedrooms", true_beds, beds, question)
        return {**item, "Bedrooms": beds}, record
    address, number = _invented(item, catalog.listings, rng)
    record = Falsification(kind, mls, "listing", mls, number, question)
    return {**item, "Address": address, "MLSNumber": number}, record


def _invented(
    item: Mapping[str, Any], listings: Sequence[Mapping[str, Any]], rng: random.Random
) -> tuple[str, str]:
    """An address and an MLS number no listing of the chatbot has."""
    addresses = {str(x.get("Address") or "").casefold() for x in listings}
    numbers = {str(x.get("MLSNumber") or "").casefold() for x in listings}
    prefix = "".join(c for c in str(item.get("MLSNumber") or "") if c.isalpha())[:3] or "MLS"
    while True:
        address = f"{rng.randrange(100, 9999)} {rng.choice(_STREETS)}"
        number = f"{prefix.upper()}{rng.randrange(9_000_000, 9_999_999)}"
        if address.casefold() not in addresses and number.casefold() not in numbers:
            return address, number
