"""Untrusted text and figures as a person reads them in a notebook's HTML output.

JupyterLab typesets any ``$…$`` or ``\\(…\\)`` it finds in HTML output with MathJax, so an answer
quoting two prices turns into italic math. Escaping ``$`` as an entity is not enough (MathJax
reads the text, not the markup): text goes inside an element with the classes MathJax skips
(:data:`NO_MATH`), and the characters Markdown and TeX give a meaning to are written as entities
besides, for front ends that treat output as Markdown.
"""

from __future__ import annotations

import math
from datetime import datetime

__all__ = ["NO_MATH", "clock", "latency_text", "safe_text", "tokens_text"]

#: Classes on an element whose text MathJax must leave alone (v2 and v3 names).
NO_MATH = "tex2jax_ignore mathjax_ignore"

# HTML's own specials and the Markdown and TeX ones, written as entities in one pass (a second
# pass would escape the first one's entities: ``'`` → ``&#x27;`` → ``&#x27;`` shown as text):
# shown as themselves, read as nothing.
_SPECIALS = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "'": "&#x27;",
        "$": "&#36;",
        "\\": "&#92;",
        "*": "&#42;",
        "_": "&#95;",
        "`": "&#96;",
        "~": "&#126;",
        "[": "&#91;",
        "]": "&#93;",
        "|": "&#124;",
        "#": "&#35;",
    }
)


def safe_text(text: object) -> str:
    """``text`` as HTML that shows exactly its characters: escaped, specials as entities, each
    line break a ``<br>`` (``\\r\\n`` counts once). ``None`` and NA are empty."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return ""
    value = str(text)
    if value == "<NA>" and not isinstance(text, str):
        return ""
    escaped = value.translate(_SPECIALS)
    return "<br>".join(escaped.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def latency_text(ms: float | None) -> str:
    """A latency in milliseconds as read at a glance: ``640 ms``, ``12.8 s``; ``""`` if none."""
    if ms is None or (isinstance(ms, float) and math.isnan(ms)):
        return ""
    value = float(ms)
    if value < 1000:
        return f"{value:.0f} ms"
    if value < 60_000:
        return f"{value / 1000:.1f} s"
    minutes, seconds = divmod(round(value / 1000), 60)
    return f"{minutes} min {seconds:02d} s"


def tokens_text(tokens: int | None) -> str:
    """A token count with thousands separators (``1,234 tokens``); ``""`` if unknown."""
    if tokens is None:
        return ""
    return f"{int(tokens):,} token" + ("" if int(tokens) == 1 else "s")


def clock(moment: datetime) -> str:
    """``moment``'s time of day, as shown to the user."""
    return moment.strftime("%H:%M:%S")
