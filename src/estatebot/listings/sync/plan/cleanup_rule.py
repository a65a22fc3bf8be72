"""A cleanup's rule in words: "Sold, or on the market 180 days or more".

Said from the plan's options (``status``, ``min_days_on_market``, ``where`` and the words given
for ``where``), so a saved cleanup plan read back is named the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["WHERE_WORDS", "cleanup_rule", "rule_in_words"]

#: How a ``where=`` filter is named when the caller gave no words for it.
WHERE_WORDS = "chosen by the where= filter"


def rule_in_words(
    statuses: Sequence[str], min_days_on_market: int | None, where: str | None
) -> str:
    """The rule: statuses, **or** days on market, narrowed (**and**) by ``where`` (its words)."""
    either: list[str] = []
    if statuses:
        either.append(" or ".join(str(s) for s in statuses))
    if min_days_on_market is not None:
        unit = "day" if min_days_on_market == 1 else "days"
        either.append(f"on the market {min_days_on_market} {unit} or more")
    text = ", or ".join(either)
    if where is not None:
        text = f"{text}, and {where}" if text else where
    return text[:1].upper() + text[1:]


def cleanup_rule(options: Mapping[str, Any]) -> str | None:
    """The rule of a cleanup plan's ``options`` in words; None for a plan that is no cleanup."""
    if not options.get("cleanup"):
        return None
    rule = options.get("rule")
    if isinstance(rule, str) and rule:
        return rule
    status = options.get("status") or ()
    statuses = [status] if isinstance(status, str) else list(status)
    where = WHERE_WORDS if options.get("where") else None
    return rule_in_words(statuses, options.get("min_days_on_market"), where)
