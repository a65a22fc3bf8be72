"""The badge a chat message gets when it states facts the chatbot's listings do not hold.

:func:`badge_html` turns a message's claims frame into a small inline badge, "2 facts not in
your listings", with each contradicted or unknown-listing claim listed in a ``<details>`` that
opens on click, and the same list in the badge's ``title`` for a hover. A message with no such
claim gets no badge (the empty string). Colours are JupyterLab's CSS variables, so the badge
follows the light and dark themes; every text from the answer or the listings is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from estatebot._theme import LAYER2, SOFT, UI_FONT, WARN
from estatebot.chat.factcheck.claims import CONTRADICTED, UNKNOWN_LISTING, doubtful_lines

__all__ = ["Claims", "badge_html", "badge_text", "doubtful_claims"]

_STYLE = (
    "display:inline-block;margin:2px 0;padding:0 6px;border-radius:8px;"
    f"font-family:{UI_FONT};font-size:var(--jp-ui-font-size0, 11px);"
    f"line-height:1.6;color:{SOFT};background:{LAYER2};border:1px solid {WARN};"
)
_SUMMARY_STYLE = f"cursor:pointer;color:{WARN};font-weight:600;"
_LIST_STYLE = f"margin:2px 0 2px 1em;padding:0;color:{SOFT};font-weight:normal;"


#: A claims frame, or its rows as dicts (``ClaimChecker.records``).
Claims = pd.DataFrame | Sequence[Mapping[str, Any]]


def _records(claims: Claims) -> Sequence[Mapping[str, Any]]:
    """The claims as dicts, in order."""
    if isinstance(claims, pd.DataFrame):
        return [{str(k): v for k, v in row.items()} for row in claims.to_dict(orient="records")]
    return claims


def doubtful_claims(claims: Claims) -> list[Mapping[str, Any]]:
    """The claims that are contradicted or about an unknown listing, as dicts, in order."""
    return [row for row in _records(claims) if row["verdict"] in (CONTRADICTED, UNKNOWN_LISTING)]


def badge_text(claims: Claims) -> str:
    """The badge's label: ``"1 fact not in your listings"``, ``"2 facts ..."``; ``""`` for none.

    A listing the answer names that you do not have counts once, however many of its facts
    the answer gives (the lines of `doubtful_lines`)."""
    return _label(doubtful_lines(list(_records(claims))))


def _label(lines: Sequence[str]) -> str:
    """The label for ``lines``, the badge's doubtful facts; ``""`` for none."""
    count = len(lines)
    if not count:
        return ""
    return f"{count} fact{'s' if count != 1 else ''} not in your listings"


def badge_html(claims: Claims) -> str:
    """The badge for one message's claims (``""`` when none is doubtful; see the module)."""
    lines = doubtful_lines(list(_records(claims)))  # read once, for the label and the list
    label = _label(lines)
    if not label:
        return ""
    title = html.escape("\n".join(lines), quote=True)
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return (
        f'<details class="estatebot-factcheck" style="{_STYLE}" title="{title}">'
        f'<summary style="{_SUMMARY_STYLE}">⚠ {html.escape(label)}</summary>'
        f'<ul style="{_LIST_STYLE}">{items}</ul></details>'
    )
