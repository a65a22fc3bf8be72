"""The HTML view of chat test results: what a notebook shows for ``results``.

A headline with the verdict, the run's figures, then one row per case: its name over its
question, answer, pass or fail (coloured), latency, tokens, the facts checked and why it failed.
Every text cell is untrusted and goes through :func:`~estatebot.chat.textview.safe_text` inside
an element MathJax skips, so an answer quoting ``$650,000`` and ``$700,000`` reads as written;
colours come from the notebook's theme (:mod:`estatebot._theme`).
"""

from __future__ import annotations

import html
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
from estatebot.chat.harness.checks import outcome
from estatebot.chat.textview import NO_MATH, latency_text, safe_text

__all__ = ["ANSWER_CHARS", "HTML_ROWS", "outcome", "results_html"]

#: The most cases listed; the rest are counted.
HTML_ROWS = 200
#: The longest answer shown whole in a cell; a longer one is cut and marked (the frame has it all).
ANSWER_CHARS = 1200

# Table selectors name the class twice (".eb-results.eb-results table td") so they outrank
# JupyterLab's rules for tables in rendered HTML (right-aligned cells, striped rows).
# Layout at 900 px: no text breaks inside a word (``overflow-wrap: anywhere`` squeezed columns
# to "1 contradi cted"); the answer yields (its box adds nothing to the table's width and fills
# what its column gets, scrolling when long), so result, facts and why keep theirs.
STYLE = f"""
<style>
.eb-results {{ font-family: {FONT}; color: {TEXT}; font-size: 13px; line-height: 1.45;
  max-width: 100%; overflow-x: auto; }}
.eb-results .eb-head {{ font-size: 14px; margin: 2px 0 6px; }}
.eb-results .eb-figures {{ color: {MUTED}; margin: 0 0 8px; }}
.eb-results.eb-results table {{
  border-collapse: collapse; width: 100%; table-layout: auto; margin: 0; }}
.eb-results.eb-results table th {{
  text-align: left; font-weight: 600; color: {TEXT}; background: {LAYER2};
  border-bottom: 1px solid {BORDER}; padding: 4px 6px; white-space: nowrap; }}
.eb-results.eb-results table td {{
  vertical-align: top; text-align: left; padding: 4px 6px; color: {TEXT};
  border: none; border-bottom: 1px solid {BORDER_SOFT}; background: {LAYER1};
  overflow-wrap: normal; word-break: normal; max-width: none; }}
.eb-results.eb-results table td.eb-num {{ text-align: right; white-space: nowrap;
  font-variant-numeric: tabular-nums; }}
.eb-results .eb-name {{ font-weight: 600; }}
.eb-results.eb-results table td.eb-case {{ min-width: 8em; }}
.eb-results.eb-results table td.eb-answer {{ min-width: 9em; width: 40%; }}
.eb-results.eb-results table td.eb-why {{ min-width: 8em; }}
.eb-results.eb-results table td.eb-facts {{ min-width: 5em; }}
.eb-results .eb-nowrap {{ white-space: nowrap; }}
.eb-results .eb-clip {{ display: block; width: 0; min-width: 100%; max-height: 7.5em;
  overflow-y: auto; overflow-wrap: break-word; }}
.eb-results .eb-cut {{ color: {MUTED}; font-style: italic; }}
.eb-results.eb-results table tr.eb-fail td {{ background: {tint(ERROR, 8)}; }}
.eb-results.eb-results table tr.eb-error td {{ background: {tint(WARN, 10)}; }}
.eb-results .eb-outcome {{ display: inline-block; padding: 0 8px; border-radius: 9px;
  font-size: 11px; font-weight: 700; letter-spacing: 0.03em; white-space: nowrap;
  border: 1px solid transparent; }}
.eb-results .eb-outcome-pass {{ {solid(SUCCESS)} }}
.eb-results .eb-outcome-fail {{ {solid(ERROR)} }}
.eb-results .eb-outcome-error {{ {solid(WARN)} }}
.eb-results .eb-ok {{ color: {SUCCESS}; font-weight: 600; }}
.eb-results .eb-bad {{ color: {ERROR}; font-weight: 600; }}
.eb-results .eb-more {{ color: {MUTED}; margin-top: 6px; }}
</style>
"""


def _figures_line(figures: Mapping[str, Any]) -> str:
    parts: list[str] = []
    if figures.get("pass_rate") is not None:
        parts.append(f"pass rate {figures['pass_rate']:.0%}")
    if figures.get("latency_p50_ms") is not None:
        parts.append(f"median latency {latency_text(figures['latency_p50_ms'])}")
    if figures.get("latency_p90_ms") is not None:
        parts.append(f"p90 {latency_text(figures['latency_p90_ms'])}")
    if figures.get("latency_max_ms") is not None:
        parts.append(f"slowest {latency_text(figures['latency_max_ms'])}")
    if figures.get("tokens_total"):
        parts.append(f"{int(figures['tokens_total']):,} tokens in all")
    return " · ".join(html.escape(p) for p in parts)


def _answer_cell(answer: Any) -> str:
    if answer is None or pd.isna(answer):
        return ""
    text = str(answer)
    if len(text) <= ANSWER_CHARS:
        return safe_text(text)
    cut = f" … (cut: {len(text):,} characters in all; the frame holds the whole answer)"
    return safe_text(text[:ANSWER_CHARS]) + f'<span class="eb-cut">{safe_text(cut)}</span>'


#: The claim counts of a fact-checked run (``expect_grounded``), shown as one "facts" column.
CLAIM_COUNTS = ("claims_supported", "claims_contradicted", "claims_unknown")


def _facts_cell(row: Mapping[str, Any]) -> str:
    held, wrong, unknown = (row.get(column) for column in CLAIM_COUNTS)
    if all(value is None or pd.isna(value) for value in (held, wrong, unknown)):
        return '<td class="eb-facts eb-decide"></td>'
    # Each count stays with its word: the cell wraps between counts, never inside one (its
    # min-width holds "20 held,").
    parts = [f"{int(held or 0)} held"]
    if wrong and not pd.isna(wrong):
        parts.append(f'<span class="eb-bad eb-nowrap">{int(wrong)} contradicted</span>')
    if unknown and not pd.isna(unknown):
        listings = "listing" if int(unknown) == 1 else "listings"
        parts.append(f'<span class="eb-bad eb-nowrap">{int(unknown)} unknown {listings}</span>')
    return f'<td class="eb-facts eb-decide">{", ".join(parts)}</td>'


def _row_html(row: Mapping[str, Any], *, facts: bool = False) -> str:
    kind = outcome(row["passed"], row["error"])
    label = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[kind]
    why = row["error"] if kind == "error" else row["why"]
    tokens = row["tokens"]
    cells = [
        # The case's name over its question: one column less to fit at 900 px.
        f'<td class="eb-case"><div class="eb-name">{safe_text(row["case"])}</div>'
        f'<div class="eb-question">{safe_text(row["question"])}</div></td>',
        # Long answers scroll inside their cell: the table stays a table of cases.
        f'<td class="eb-answer"><div class="eb-clip">{_answer_cell(row["answer"])}</div></td>',
        f'<td class="eb-decide"><span class="eb-outcome eb-outcome-{kind}">{label}</span></td>',
        f'<td class="eb-num">{html.escape(latency_text(row["latency_ms"]))}</td>',
        f'<td class="eb-num">{"" if pd.isna(tokens) else f"{int(tokens):,}"}</td>',
        *([_facts_cell(row)] if facts else []),
        f'<td class="eb-why eb-decide">{safe_text(why)}</td>',
    ]
    return f'<tr class="eb-{kind}">{"".join(cells)}</tr>'


def results_html(frame: pd.DataFrame, figures: Mapping[str, Any]) -> str:
    """The rich view of a results ``frame`` whose run figures (``summary().counts``) are
    ``figures``: a coloured verdict, the figures, and a table of every case (up to
    :data:`HTML_ROWS`)."""
    cases = int(figures.get("cases") or 0)
    passed = int(figures.get("passed") or 0)
    failed = int(figures.get("failed") or 0)
    errors = int(figures.get("errors") or 0)
    verdict = (
        '<span class="eb-ok">all passed</span>'
        if cases and passed == cases
        else f'<span class="eb-bad">{failed + errors} not passing</span>'
        if cases
        else "no cases"
    )
    head = (
        f'<div class="eb-head"><b>Chat tests</b>: {cases} cases, {passed} passed, {failed} failed, '
        f"{errors} errors — {verdict}</div>"
        f'<div class="eb-figures">{_figures_line(figures)}</div>'
    )
    records = frame.head(HTML_ROWS).to_dict(orient="records")
    facts = all(column in frame.columns for column in CLAIM_COUNTS)
    rows = "".join(
        _row_html({str(k): v for k, v in record.items()}, facts=facts) for record in records
    )
    names = ("case: question", "answer", "result", "latency", "tokens")
    header = "".join(f"<th>{name}</th>" for name in (*names, *(["facts"] if facts else []), "why"))
    more = len(frame) - len(records)
    tail = f'<div class="eb-more">… and {more:,} more cases (see .frame)</div>' if more > 0 else ""
    table = f"<table><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>" if cases else ""
    return f'{STYLE}<div class="eb-results {NO_MATH}">{head}{table}{tail}</div>'
