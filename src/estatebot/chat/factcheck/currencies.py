"""Currencies as answers write them and as listings state them, made comparable.

A currency is kept as a *key*: an ISO 4217 code (``"USD"``, ``"EUR"``) when the marker names
one currency, else the symbol itself when it is shared (``"$"``: a dollar or a peso of some
country; ``"¥"``: yen or yuan; ``"£"``). :func:`same_currency` says whether two keys can be the
same currency: ``"$"`` and ``"USD"`` can, ``"$"`` and ``"EUR"`` cannot. A listing's
``CurrencySymbol`` (``$``, ``US$``, ``USD``, ``€``, ``EUR``...) is read by :func:`currency_key`
into the same keys.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "ISO_CODES",
    "SYMBOLS",
    "WORDLIKE",
    "WORD_MARKERS",
    "code_key",
    "currency_key",
    "dollar_key",
    "narrower",
    "same_currency",
    "symbol_key",
    "word_key",
]


def _code_set(codes: str) -> frozenset[str]:
    """A set of codes written as one text, separated by spaces (a long list stays readable)."""
    return frozenset(codes.split())


#: The ISO 4217 codes of money in use (no metals, funds or test codes).
ISO_CODES: frozenset[str] = _code_set(
    """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP
    BYN BZD CAD CDF CHF CLP CNY COP CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP
    GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS
    KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR
    MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF
    SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD
    TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWG ZWL
    """
)
#: Codes that are also English words or common abbreviations ("all in", "top 5", "500 kgs"):
#: an answer names these currencies only in capitals.
WORDLIKE: frozenset[str] = _code_set(
    """
    ALL AMD BAM BND BOB BTN CAD COP CUP GEL KGS MAD MNT MOP PEN PHP RON RUB SOS TOP TRY
    """
)

_DOLLAR_CODES = _code_set(
    """
    USD CAD AUD NZD HKD SGD TWD MXN ARS CLP COP UYU DOP JMD TTD BSD BBD BZD BMD KYD FJD GYD LRD
    NAD SBD SRD XCD BND CUP ZWL ZWG
    """
)
#: Each currency symbol (after folding: ``＄`` is ``$``) and the currencies that use it.
_SYMBOL_CODES: dict[str, frozenset[str]] = {
    "$": _DOLLAR_CODES,
    "£": frozenset({"GBP", "EGP", "FKP", "GIP", "SHP", "SSP", "SYP", "LBP"}),
    "¥": frozenset({"JPY", "CNY"}),
    "€": frozenset({"EUR"}),
    "₹": frozenset({"INR"}),
    "₨": frozenset({"INR", "PKR", "LKR", "NPR", "MUR", "SCR"}),
    "₩": frozenset({"KRW", "KPW"}),
    "₽": frozenset({"RUB"}),
    "₺": frozenset({"TRY"}),
    "₪": frozenset({"ILS"}),
    "₱": frozenset({"PHP"}),
    "₦": frozenset({"NGN"}),
    "₫": frozenset({"VND"}),
    "฿": frozenset({"THB"}),
    "₴": frozenset({"UAH"}),
    "₡": frozenset({"CRC", "SVC"}),
    "₲": frozenset({"PYG"}),
    "₵": frozenset({"GHS"}),
    "₸": frozenset({"KZT"}),
    "₼": frozenset({"AZN"}),
    "₾": frozenset({"GEL"}),
    "₭": frozenset({"LAK"}),
    "₮": frozenset({"MNT"}),
    "៛": frozenset({"KHR"}),
    "֏": frozenset({"AMD"}),
    "৳": frozenset({"BDT"}),
    "₣": frozenset({"CHF", "XAF", "XOF", "XPF"}),
}
#: The generic currency sign: money, of no named currency.
_ANY_CURRENCY = "¤"
#: Every currency symbol character (Unicode category Sc) but the cent sign, which is no price.
SYMBOLS: frozenset[str] = frozenset(
    {"$", "£", "¤", "¥", "֏", "؋", "߾", "߿", "৲", "৳", "৻", "૱", "௹", "฿", "៛", "꠸", "﷼"}
    | {chr(code) for code in range(0x20A0, 0x20C1)}
)
#: The letters before a dollar sign that say whose dollar (or peso) it is: ``US$``, ``C$``.
_DOLLAR_PREFIXES: dict[str, str] = {
    "US": "USD", "C": "CAD", "CA": "CAD", "CAN": "CAD", "A": "AUD", "AU": "AUD", "NZ": "NZD",
    "HK": "HKD", "S": "SGD", "SG": "SGD", "NT": "TWD", "MX": "MXN", "MEX": "MXN", "R": "BRL",
    "RD": "DOP", "J": "JMD", "TT": "TTD", "EC": "XCD", "FJ": "FJD", "AR": "ARS", "CL": "CLP",
    "COL": "COP",
}  # fmt: skip
#: Currency words an amount is followed by ("298,900 dollars"), with the currency of each.
WORD_MARKERS = re.compile(
    r"(?P<whose>u\.?\s?s\.?|american|canadian|australian|new\s+zealand|hong\s+kong|singapore)?"
    r"\s*(?P<word>dollars?|bucks)(?![^\W\d_])"
    r"|(?P<other>euros?|pounds?\s+sterling|sterling|quid|yen|yuan|renminbi|rupees?)(?![^\W\d_])",
    re.IGNORECASE,
)
_WHOSE_DOLLAR = {
    "us": "USD", "american": "USD", "canadian": "CAD", "australian": "AUD",
    "newzealand": "NZD", "hongkong": "HKD", "singapore": "SGD",
}  # fmt: skip
_OTHER_WORDS = {
    "euro": "EUR", "euros": "EUR", "sterling": "GBP", "quid": "GBP", "yen": "JPY",
    "yuan": "CNY", "renminbi": "CNY", "rupee": "₨", "rupees": "₨",
}  # fmt: skip


def symbol_key(symbol: str) -> str | None:
    """The key of one currency symbol character (None for ``¤``, money of no named currency)."""
    if symbol == _ANY_CURRENCY:
        return None
    codes = _SYMBOL_CODES.get(symbol)
    if codes is not None and len(codes) == 1:
        return next(iter(codes))
    return symbol


def dollar_key(prefix: str) -> str | None:
    """The key of a dollar sign written after ``prefix`` (``"US"`` → ``"USD"``), None when the
    letters are not a known prefix."""
    upper = prefix.upper()
    if upper in _DOLLAR_PREFIXES:
        return _DOLLAR_PREFIXES[upper]
    return upper if upper in _DOLLAR_CODES else None


def code_key(letters: str) -> str | None:
    """``letters`` as an ISO code (any case; codes that are also words only in capitals)."""
    upper = letters.upper()
    if upper not in ISO_CODES:
        return None
    if upper in WORDLIKE and letters != upper:
        return None
    return upper


def word_key(match: re.Match[str]) -> str:
    """The key of a currency word found by :data:`WORD_MARKERS`."""
    if match.group("word"):
        whose = re.sub(r"[\s.]", "", (match.group("whose") or "").casefold())
        return _WHOSE_DOLLAR.get(whose, "$")
    other = re.sub(r"\s+", " ", match.group("other").casefold())
    if other.startswith("pound"):
        return "GBP"
    return _OTHER_WORDS[other]


def currency_key(marker: object) -> str | None:
    """The key of a currency as a listing states it (``$``, ``US$``, ``usd``, ``€``, ``Euro``);
    None when it is none that is known (then any currency agrees with it)."""
    if not isinstance(marker, str):
        return None
    text = unicodedata.normalize("NFKC", marker).strip()
    if not text:
        return None
    if len(text) == 1 and text in SYMBOLS:
        return symbol_key(text)
    if text.upper() in ISO_CODES:
        return text.upper()  # a listing's own field: any case is a code
    if text.endswith("$") and text[:-1].isalpha():
        return dollar_key(text[:-1])
    word = WORD_MARKERS.fullmatch(text)
    return word_key(word) if word else None


def _codes(key: str) -> frozenset[str]:
    if key in ISO_CODES:
        return frozenset({key})
    return _SYMBOL_CODES.get(key, frozenset({key}))


def same_currency(claimed: str | None, listed: str | None) -> bool:
    """Whether a claim in currency ``claimed`` can be about a listing in ``listed`` (unknown,
    None, agrees with anything; ``"$"`` agrees with every dollar and peso)."""
    if claimed is None or listed is None:
        return True
    return bool(_codes(claimed) & _codes(listed))


def narrower(first: str | None, second: str | None) -> str | None:
    """Of two markers of one amount (``$298,900 USD``), the one naming fewer currencies
    (``"USD"``); the first when they name as many."""
    if first is None or second is None:
        return first if second is None else second
    return second if len(_codes(second)) < len(_codes(first)) else first
