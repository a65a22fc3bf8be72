"""Money as people read it: the listing's currency, thousands separators, a change with its sign.

``CurrencySymbol`` is whatever the service holds for a listing: ``$`` or ``USD`` read as ``$``
(``$480,000``), another symbol stands before the amount (``€1,250``), and a code is written out
with a space (``EUR 1,250``). Amounts show cents only when they have any, so a price reads
``$480,000`` and a price per square foot ``$162.71``. The minus sign is the typographic one
(U+2212), as in ``−$15,000``.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

__all__ = ["MONEY_FIELDS", "currency_prefix", "format_money", "format_money_change", "is_number"]

#: Listing fields that hold an amount of money, in the listing's currency.
MONEY_FIELDS: frozenset[str] = frozenset(
    {"SalePrice", "RentPrice", "UnitAreaPrice", "HOAMonth", "ZestimatePrice", "DepositFee"}
)
MINUS = "\u2212"
_DOLLAR = {"", "$", "USD", "US$"}


def is_number(value: Any) -> bool:
    """Whether ``value`` is a finite real number (not a bool, not NA)."""
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(float(value))


def currency_prefix(currency: Any) -> str:
    """What stands before an amount: ``$`` for dollars (and when unknown), else the symbol, or
    the code and a space."""
    code = str(currency).strip() if isinstance(currency, str) else ""
    if code.upper() in _DOLLAR:
        return "$"
    if code.isalpha() and code.isascii():
        return f"{code.upper()} "  # a code such as EUR: a space keeps it apart from the digits
    return code


def _amount(value: float) -> str:
    magnitude = abs(value)
    if magnitude == int(magnitude) and magnitude < 1e15:
        return f"{int(magnitude):,}"
    return f"{magnitude:,.2f}"


def format_money(value: Any, currency: Any = "$") -> str:
    """``480000.0`` as ``$480,000``; ``-15000`` as ``−$15,000``; a non-number as its text."""
    if not is_number(value):
        return "" if value is None else str(value)
    number = float(value)
    sign = MINUS if number < 0 else ""
    return f"{sign}{currency_prefix(currency)}{_amount(number)}"


def format_money_change(before: Any, after: Any, currency: Any = "$") -> str:
    """The change from ``before`` to ``after`` as amount and percent: ``−$15,000, −3.1%``.

    The percent is left out when there is nothing to take it of (``before`` is 0); the whole is
    empty when either side is not a number.
    """
    if not (is_number(before) and is_number(after)):
        return ""
    delta = float(after) - float(before)
    amount = format_money(delta, currency)
    if delta > 0:
        amount = "+" + amount
    if float(before) == 0:
        return amount
    percent = delta / abs(float(before)) * 100
    shown = f"{abs(percent):.1f}%"
    sign = "+" if percent > 0 else MINUS if percent < 0 else ""
    if shown == "0.0%":
        sign = ""
    return f"{amount}, {sign}{shown}"
