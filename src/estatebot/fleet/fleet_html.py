"""The fleet's tables in a notebook: one row per chatbot, each linking to its own plan or report.

The table comes first (what a person reviews: counts, invalid, held back, failures, errors), a
row per chatbot; each chatbot's name links to its plan (or report) further down, in a closed
``<details>`` with an anchor, so a fleet of 300 stays one screen until a row is opened. Colours
and layout come from the notebook's theme (:mod:`estatebot._theme`); every value is escaped.
"""

from __future__ import annotations

import html
import secrets
from collections.abc import Callable, Sequence

import pandas as pd

from estatebot._theme import styled

__all__ = ["fleet_html", "shown_columns"]

#: Chatbots whose own plan or report is rendered below the table; the rest are in the table.
SHOWN_DETAILS = 50

#: The columns a person decides by: what each chatbot's plan or run does, and what went wrong.
_DECIDE = {"create", "update", "delete", "invalid", "held back", "created", "updated", "deleted",
           "failed", "passed", "error"}  # fmt: skip
_NUMERIC = {"create", "update", "delete", "unchanged", "invalid", "held back", "created",
            "updated", "deleted", "failed", "done", "sheet issues", "passed", "cases",
            "skipped (already done)", "errors", "chatbots failed"}  # fmt: skip


#: Columns shown even when every chatbot's figure is 0: what a plan or a run does.
_ALWAYS = {"create", "update", "delete", "created", "updated", "deleted", "failed", "passed"}


def shown_columns(
    table: pd.DataFrame, *, hide: tuple[str, ...] = ("serial", "row")
) -> pd.DataFrame:
    """The table as a person reads it: no serial nor manifest row (a chatbot is known by its
    name; both are in its details' heading), no column of zeros but the actions (the chips
    above give every total), no column of blanks."""
    keep = []
    for column in table.columns:
        values = table[column]
        if column in hide:
            continue
        if column in _NUMERIC and column not in _ALWAYS and not values.any():
            continue
        if values.dtype == object and (values.astype(str) == "").all():
            continue
        keep.append(column)
    return table[keep]


def _chip(word: str, count: int) -> str:
    zero = " eb-zero" if count == 0 else ""
    if count == 1 and word.startswith("chatbots "):
        word = "chatbot " + word.removeprefix("chatbots ")
    kind = word.replace(" ", "_")
    return f"<span class='eb-chip eb-{kind}{zero}'><b>{count:,}</b> {html.escape(word)}</span>"


def fleet_html(
    title: str,
    table: pd.DataFrame,
    totals: dict[str, int],
    details: Sequence[tuple[str, Callable[[], str]]],
    notes: Sequence[str] = (),
) -> str:
    """The fleet view: ``title``, chips of ``totals``, ``table`` (its ``chatbot`` column linked
    to ``details``: (label, a function making the inner HTML) per chatbot in the table's
    order), then the details: only the first :data:`SHOWN_DETAILS` are made, so a fleet of
    hundreds renders no more plans than a person opens."""
    prefix = f"eb-fleet-{secrets.token_hex(4)}"  # anchors unique in a notebook of many views
    table = shown_columns(table)
    chips = "".join(_chip(word, count) for word, count in totals.items())
    head = "".join(
        f"<th class='{'eb-num' if str(c) in _NUMERIC else ''}'>{html.escape(str(c))}</th>"
        for c in table.columns
    )
    rows = []
    for place, record in enumerate(table.itertuples(index=False)):
        cells = []
        failed = False
        for column, value in zip(table.columns, record, strict=True):
            text = "" if value is None or value is pd.NA or value != value else str(value)
            if column == "chatbot" and place < min(len(details), SHOWN_DETAILS):
                # A name stays on one line: the error beside it wraps instead.
                cell = f"<a class='eb-nowrap' href='#{prefix}-{place}'>{html.escape(text)}</a>"
            elif column == "chatbot":
                cell = f"<span class='eb-nowrap'>{html.escape(text)}</span>"
            else:
                cell = html.escape(text)
            if column in ("error", "failed") and text not in ("", "0"):
                failed = True
            kind = "eb-num" if str(column) in _NUMERIC else (
                "eb-key" if column == "serial" else ""
            )  # fmt: skip
            if column in _DECIDE:
                kind += " eb-decide"
            cells.append(f"<td class='{kind.strip()}'>{cell}</td>")
        row_class = " class='eb-failed'" if failed else ""
        rows.append(f"<tr{row_class}>{''.join(cells)}</tr>")
    body = [
        f"<div class='eb-title'>{html.escape(title)}</div>",
        f"<div class='eb-bar'>{chips}</div>",
        *(f"<p class='eb-muted'>{html.escape(note)}</p>" for note in notes),
        "<div class='eb-scroll'><table class='eb-table'>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>",
    ]
    for place, (label, inner) in enumerate(details[:SHOWN_DETAILS]):
        body.append(
            f"<details id='{prefix}-{place}'><summary>{html.escape(label)}</summary>"
            f"{inner()}</details>"
        )
    if len(details) > SHOWN_DETAILS:
        body.append(
            f"<p class='eb-muted'>The first {SHOWN_DETAILS} chatbots' details are shown; "
            f"every chatbot's is in <code>.chatbots</code>.</p>"
        )
    return styled("".join(body))
