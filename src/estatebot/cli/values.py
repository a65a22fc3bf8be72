"""Listing values as a person reads them in a terminal: money formatted, long text shortened.

A change of a long text shows the words that changed and a few around them, marked as word
diffs commonly are (``[-removed-]`` and ``{+added+}``), so the change reads the same with colour
or without. Every text passes :func:`~estatebot.cli.console.safe` (it is untrusted) and goes into
a :class:`rich.text.Text`, never parsed as markup.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text

from estatebot.cli.console import safe

__all__ = ["MONEY_FIELDS", "change_text", "currency_of", "value_text"]

#: Fields holding an amount of money, shown with the listing's currency symbol and grouping.
MONEY_FIELDS = frozenset(
    {"SalePrice", "RentPrice", "UnitAreaPrice", "HOAMonth", "ZestimatePrice", "DepositFee"}
)
#: Other numbers grouped by thousands (years, counts and coordinates are not).
_GROUPED = frozenset({"LotArea", "BuildingArea"})
#: Text longer than this is shortened; a change of text this long shows its changed words.
TEXT_LIMIT = 60
#: Words of unchanged text kept on each side of a change.
CONTEXT_WORDS = 4
#: A run of changed words longer than this keeps its first and last few.
_RUN_LIMIT = 12
_RUN_ENDS = 5

NONE_STYLE = "dim italic"
BEFORE_STYLE = "red"
AFTER_STYLE = "green"
REMOVED_STYLE = "bold red"
ADDED_STYLE = "bold green"


def currency_of(*sources: Mapping[str, Any] | None) -> str | None:
    """The first ``CurrencySymbol`` among ``sources`` (a listing's values), if any."""
    for source in sources:
        symbol = (source or {}).get("CurrencySymbol")
        if isinstance(symbol, str) and symbol.strip():
            return symbol.strip()
    return None


def _is_empty(value: Any) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    return isinstance(value, str | list | dict) and not value


def _number(field: str, value: float, currency: str | None) -> str:
    if field in MONEY_FIELDS:
        places = 0 if float(value).is_integer() else 2
        amount = f"{value:,.{places}f}"
        if currency is None:
            return amount
        # "$1,200" but "USD 1,200": a symbol of letters needs a space.
        return f"{currency} {amount}" if currency[-1].isalpha() else f"{currency}{amount}"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if field in _GROUPED:
        return f"{value:,}"
    return str(value)


def _short(text: str, limit: int = TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def plain_value(field: str, value: Any, currency: str | None = None, *, full: bool = False) -> str:
    """``value`` of ``field`` as one line of text (text quoted, shortened unless ``full``)."""
    if _is_empty(value):
        return "(none)"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return _number(field, value, currency)
    if isinstance(value, list) and field == "ExtensionColumn":  # the wire form: Key and value
        value = {
            str(item.get("Key")): item.get("value") for item in value if isinstance(item, dict)
        }
    if isinstance(value, dict):
        pairs = ", ".join(f"{key}={item}" for key, item in value.items())
        return safe(pairs if full else _short(pairs), one_line=True)
    if isinstance(value, list):
        items = ", ".join(str(item) for item in value)
        shown = f"{len(value)} items: {items}" if len(value) != 1 else items
        return safe(shown if full else _short(shown), one_line=True)
    text = safe(value, one_line=True)
    return f'"{text if full else _short(text)}"'


def value_text(field: str, value: Any, currency: str | None = None, *, full: bool = False) -> Text:
    """``value`` as styled text: an empty value reads ``(none)``, dimmed."""
    shown = plain_value(field, value, currency, full=full)
    return Text(shown, style=NONE_STYLE if _is_empty(value) else "")


def change_text(field: str, before: Any, after: Any, currency: str | None = None) -> Text:
    """One field's change: ``before -> after``, or the changed words of a long text."""
    if isinstance(before, str) and isinstance(after, str) and _long(before, after):
        return _word_diff(before, after)
    if isinstance(before, list) and isinstance(after, list):
        return _list_change(before, after)
    text = Text()
    text.append_text(_styled(field, before, currency, BEFORE_STYLE))
    text.append(" -> ")
    text.append_text(_styled(field, after, currency, AFTER_STYLE))
    return text


def _styled(field: str, value: Any, currency: str | None, style: str) -> Text:
    shown = plain_value(field, value, currency)
    return Text(shown, style=NONE_STYLE if _is_empty(value) else style)


def _long(before: str, after: str) -> bool:
    return max(len(before), len(after)) > TEXT_LIMIT // 2 and (" " in before or " " in after)


def _list_change(before: Sequence[Any], after: Sequence[Any]) -> Text:
    """``6 -> 7 items (+ url7)``: the count, and the items added and removed."""
    had = [str(item) for item in before]
    has = [str(item) for item in after]
    text = Text(f"{len(had)} -> {len(has)} items")
    added = [item for item in has if item not in had]
    removed = [item for item in had if item not in has]
    parts: list[tuple[str, str]] = [("+ " + item, ADDED_STYLE) for item in added]
    parts += [("- " + item, REMOVED_STYLE) for item in removed]
    if not parts:
        text.append(" (the same items, reordered)")
        return text
    text.append(" (")
    for n, (item, style) in enumerate(parts[:3]):
        if n:
            text.append(", ")
        text.append(safe(_short(item), one_line=True), style=style)
    if len(parts) > 3:
        text.append(f", and {len(parts) - 3} more")
    text.append(")")
    return text


def _run(words: Sequence[str]) -> str:
    if len(words) > _RUN_LIMIT:
        words = [*words[:_RUN_ENDS], "...", *words[-_RUN_ENDS:]]
    return safe(" ".join(words), one_line=True)


def _word_diff(before: str, after: str) -> Text:
    """The words that changed, ``[-removed-]{+added+}``, with a few unchanged words around."""
    old, new = before.split(), after.split()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    opcodes = matcher.get_opcodes()
    text = Text('"')
    for n, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if n:
            text.append(" ")
        if tag == "equal":
            text.append(_kept(old[i1:i2], first=n == 0, last=n == len(opcodes) - 1))
            continue
        if i2 > i1:
            text.append(f"[-{_run(old[i1:i2])}-]", style=REMOVED_STYLE)
        if j2 > j1:
            text.append(f"{{+{_run(new[j1:j2])}+}}", style=ADDED_STYLE)
    if not opcodes:  # both empty of words: only their spacing differs
        text.append("(spacing changed)")
    text.append('"')
    return text


def _kept(words: Sequence[str], *, first: bool, last: bool) -> str:
    """Unchanged words: all when few, else the few next to a change and ``...``."""
    keep = CONTEXT_WORDS
    if len(words) <= keep * 2 + 1 or (len(words) <= keep + 1 and (first or last)):
        return safe(" ".join(words), one_line=True)
    head = [] if first else list(words[:keep])
    tail = [] if last else list(words[-keep:])
    return safe(" ".join([*head, "...", *tail]), one_line=True)
