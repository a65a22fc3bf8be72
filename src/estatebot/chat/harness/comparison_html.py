"""The HTML view of two chat runs compared: each changed case, its outcome and its answer diff.

The outcome change is coloured (``pass → fail`` in the error colour, ``fail → pass`` in the
success colour); the old and new answers are compared word by word (:mod:`difflib`), words
taken out struck through, words put in underlined and tinted. Answers are untrusted text,
escaped by :func:`~estatebot.chat.textview.safe_text` inside an element MathJax skips.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from estatebot._theme import (
    BORDER,
    BORDER_SOFT,
    ERROR,
    FONT,
    LAYER1,
    LAYER2,
    MUTED,
    SUCCESS,
    TEXT,
    WARN,
    solid,
    tint,
)
from estatebot.chat.textview import NO_MATH, safe_text

__all__ = ["CONTEXT_WORDS", "changes_html", "outcome_text", "word_diff_html"]

STYLE = f"""
<style>
.eb-compare {{ font-family: {FONT}; color: {TEXT}; font-size: 13px; line-height: 1.45; }}
.eb-compare .eb-head {{ font-size: 14px; margin: 2px 0 6px; }}
.eb-compare.eb-compare table {{ border-collapse: collapse; width: 100%; table-layout: auto; }}
.eb-compare.eb-compare table th {{ text-align: left; background: {LAYER2}; color: {TEXT};
  border-bottom: 1px solid {BORDER}; padding: 4px 8px; white-space: nowrap; }}
.eb-compare.eb-compare table td {{
  text-align: left; vertical-align: top; padding: 4px 8px; color: {TEXT};
  background: {LAYER1}; border: none; border-bottom: 1px solid {BORDER_SOFT};
  overflow-wrap: normal; word-break: normal; }}
.eb-compare.eb-compare table td.eb-name {{ white-space: nowrap; }}
.eb-compare .eb-change {{ display: inline-block; padding: 0 8px; border-radius: 9px;
  font-size: 11px; font-weight: 700; white-space: nowrap; border: 1px solid transparent;
  {solid(MUTED)} }}
.eb-compare .eb-change-worse {{ {solid(ERROR)} }}
.eb-compare .eb-change-better {{ {solid(SUCCESS)} }}
.eb-compare .eb-change-other {{ {solid(WARN)} }}
.eb-compare del {{ color: {ERROR}; background: {tint(ERROR, 12)}; text-decoration: line-through; }}
.eb-compare ins {{ color: {SUCCESS}; background: {tint(SUCCESS, 14)}; text-decoration: underline; }}
.eb-compare .eb-gap {{ color: {MUTED}; }}
.eb-compare.eb-compare table td.eb-outcome {{ white-space: nowrap; }}
/* The answers yield: their box adds nothing to the table's width and fills its column, so the
   change and the outcome keep theirs at 900 px. */
.eb-compare.eb-compare table td.eb-diff {{ width: 50%; min-width: 12em; }}
.eb-compare .eb-yield {{ display: block; width: 0; min-width: 100%; overflow-wrap: break-word; }}
.eb-compare .eb-none {{ color: {MUTED}; font-style: italic; }}
</style>
"""

_WORDS = re.compile(r"\s+|[^\s]+")
#: Words kept on each side of a change; longer unchanged stretches are shortened to "…".
CONTEXT_WORDS = 12


def _outcome(passed: Any) -> str:
    if passed is None or pd.isna(passed):
        return "—"
    return "pass" if bool(passed) else "fail"


def outcome_text(old_passed: Any, new_passed: Any) -> str:
    """``pass → fail`` and the like; ``—`` for a side that does not exist."""
    return f"{_outcome(old_passed)} → {_outcome(new_passed)}"


def _context(tokens: list[str], first: bool, last: bool, keep: int | None) -> str:
    """An unchanged stretch, its middle (or its far end, at either end of the text) shortened
    to ``…`` when it holds more than ``keep`` words on a side (``keep`` None: never)."""
    words = [i for i, t in enumerate(tokens) if not t.isspace()]
    if keep is None or len(words) <= (keep if first or last else 2 * keep):
        return safe_text("".join(tokens))
    head = "" if first else "".join(tokens[: words[keep - 1] + 1])
    tail = "" if last else "".join(tokens[words[-keep] :])
    gap = '<span class="eb-gap">…</span>'
    if first:
        return f"{gap} {safe_text(tail)}"
    if last:
        return f"{safe_text(head)} {gap}"
    return f"{safe_text(head)} {gap} {safe_text(tail)}"


def word_diff_html(old: Any, new: Any, *, context: int | None = None) -> str:
    """``old`` and ``new`` as one text: words only in ``old`` in ``<del>``, words only in ``new``
    in ``<ins>``, the rest as is; every piece escaped. With ``context``, unchanged stretches keep
    that many words next to each change and the rest is shortened to ``…``."""
    before = "" if old is None or pd.isna(old) else str(old)
    after = "" if new is None or pd.isna(new) else str(new)
    a, b = _WORDS.findall(before), _WORDS.findall(after)
    out: list[str] = []
    opcodes = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for index, (op, i1, i2, j1, j2) in enumerate(opcodes):
        if op == "equal":
            first, last = index == 0, index == len(opcodes) - 1
            out.append(_context(a[i1:i2], first, last, context))
            continue
        if op in ("delete", "replace"):
            out.append(f"<del>{safe_text(''.join(a[i1:i2]))}</del>")
        if op in ("insert", "replace"):
            out.append(f"<ins>{safe_text(''.join(b[j1:j2]))}</ins>")
    return "".join(out)


def _kind(change: str) -> str:
    return {"now failing": "worse", "removed": "worse", "now passing": "better"}.get(
        change, "other"
    )


def _row_html(row: Mapping[str, Any]) -> str:
    change = str(row["change"])
    if row["old_answer"] is None or pd.isna(row["old_answer"]):
        answer = safe_text(row["new_answer"]) or '<span class="eb-none">no answer</span>'
    elif row["new_answer"] is None or pd.isna(row["new_answer"]):
        answer = f"<del>{safe_text(row['old_answer'])}</del>"
    else:
        answer = word_diff_html(row["old_answer"], row["new_answer"], context=CONTEXT_WORDS)
    cells = [
        f'<td class="eb-name">{safe_text(row["case"])}</td>',
        f"<td>{safe_text(row['question'])}</td>",
        f'<td class="eb-decide"><span class="eb-change eb-change-{_kind(change)}">'
        f"{safe_text(change)}</span></td>",
        f'<td class="eb-outcome eb-decide">'
        f"{safe_text(outcome_text(row['old_passed'], row['new_passed']))}</td>",
        f'<td class="eb-diff"><div class="eb-yield">{answer}</div></td>',
    ]
    return f'<tr class="eb-{_kind(change)}">{"".join(cells)}</tr>'


def changes_html(frame: pd.DataFrame) -> str:
    """The comparison ``frame`` (columns of :func:`compare_chat_runs`) as a coloured diff."""
    counts = frame["change"].value_counts()
    if frame.empty:
        head = "<b>Chat runs compared</b>: no case changed its outcome or answer"
    else:
        parts = ", ".join(f"{int(n)} {safe_text(change)}" for change, n in counts.items())
        head = f"<b>Chat runs compared</b>: {len(frame)} cases changed ({parts})"
    rows = "".join(
        _row_html({str(k): v for k, v in record.items()})
        for record in frame.to_dict(orient="records")
    )
    header = "".join(
        f"<th>{n}</th>" for n in ("case", "question", "change", "outcome", "answer (old → new)")
    )
    table = f"<table><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>" if rows else ""
    body = f'<div class="eb-head">{head}</div>{table}'
    return f'{STYLE}<div class="eb-compare {NO_MATH}">{body}</div>'
