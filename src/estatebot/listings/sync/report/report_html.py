"""The apply report in a notebook: what failed first, then the call that retries it.

Failures come first, with the service's ``Code`` and ``Message``; then the exact call that sends
them again (the same plan with the same journal); then what was done. Unchanged listings are a
count, not 175 rows of nothing. Colours come from the notebook's theme (:mod:`.theme`); keys and
messages come from sheets and the service, so every value is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from estatebot._theme import styled
from estatebot.listings.sync.report.outcomes import CHANGED, FAILED, NOT_DONE, SKIPPED, UNCHANGED

__all__ = ["REPORT_ROWS", "render_report"]

#: Rows shown per section; the rest are counted (the whole report is in ``.frame``).
REPORT_ROWS = 50

# The chip class of each summary word: done is success, not done is error, the rest plain.
_GOOD = {"created", "updated", "deleted", "redone"}
_NUMBERS = ("row", "id", "code", "attempts", "elapsed_ms")


def _cell(value: Any) -> str:
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float):
        return f"{value:,.1f}"
    return str(value)


def _chip(word: str, count: int) -> str:
    kind = (
        "eb-create"
        if word in _GOOD
        else "eb-failed"
        if word in NOT_DONE
        else "eb-unchanged"
        if word in (UNCHANGED, SKIPPED)
        else "eb-update"
    )
    label = html.escape(word)
    return f"<span class='eb-chip {kind}' data-count='{count}'><b>{count:,}</b> {label}</span>"


def _table(
    frame: pd.DataFrame, columns: Sequence[str], headers: Sequence[str], *, failed: bool
) -> str:
    head = "".join(
        f"<th{' class=eb-num' if c in _NUMBERS else ''}>{html.escape(h)}</th>"
        for c, h in zip(columns, headers, strict=True)
    )
    rows: list[str] = []
    for record in frame.head(REPORT_ROWS).to_dict("records"):
        cells = "".join(
            f"<td class='{'eb-num' if c in _NUMBERS else 'eb-key' if c == 'key' else ''}'>"
            f"{html.escape(_cell(record[c]))}</td>"
            for c in columns
        )
        rows.append(f"<tr class='{'eb-failed' if failed else ''}'>{cells}</tr>")
    more = ""
    if len(frame) > REPORT_ROWS:
        more = (
            f"<p class='eb-muted more'>… and {len(frame) - REPORT_ROWS} more "
            "(every one in <code>report.frame</code>)</p>"
        )
    return (
        "<div class='eb-scroll'><table class='eb-table'>"
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>{more}"
    )


def _retry(title: str, failed: int, done: int, retry_call: str | None, changed: int = 0) -> str:
    if retry_call is None:
        return (
            "<div class='eb-retry'>To retry: this apply kept no journal, and the plan is now stale "
            "for the listings it changed (applying it again is refused). Pull the listings, plan "
            "again (the new plan holds only what is still to do) and apply that with "
            "<code>journal=</code>, so a next retry is one call.</div>"
        )
    if title == "Apply":
        how = (
            f"The same plan with the same journal: the {done:,} operations done are skipped, the "
            f"{failed:,} not done are sent again, nothing twice."
        )
    else:
        how = "Listings that already hold their backed-up values are left alone."
    if changed:
        # Sending the plan's values over an edit made on the service meanwhile would lose the
        # edit: the stale check refuses the same plan for those listings.
        how += (
            f" {changed:,} listing{'s were' if changed != 1 else ' was'} changed on the service "
            "during the apply: the stale check refuses the same plan for "
            f"{'them' if changed != 1 else 'it'}; pull and plan again to include the edits."
        )
    return (
        f"<div class='eb-retry'>To retry the {failed:,} not done:<br>"
        f"<code class='eb-retry-call'>{html.escape(retry_call)}</code><br>"
        f"<span class='eb-muted'>{html.escape(how)}</span></div>"
    )


def render_report(
    *,
    title: str,
    summary: str,
    counts: Mapping[str, int],
    frame: pd.DataFrame,
    where: Sequence[str],
    notes: Sequence[str],
    retry_call: str | None,
) -> str:
    """The report as themed HTML: summary, failures and the retry, then what was done."""
    outcome = frame["outcome"].astype("object")
    not_done = outcome.isin(list(NOT_DONE)).to_numpy(dtype=bool)
    unchanged = (outcome == UNCHANGED).to_numpy(dtype=bool)
    failed = frame[not_done]
    others = frame[~not_done & ~unchanged]
    chips = "".join(_chip(word, count) for word, count in counts.items())
    parts = [
        f"<p class='eb-title'>{html.escape(title)}: {html.escape(summary)}</p>",
        f"<div class='eb-bar'>{chips}</div>",
    ]
    if len(failed):
        columns = ["action", "key", "row", "id", "outcome", "code", "message", "attempts"]
        headers = ["action", "key", "row", "ID", "outcome", "Code", "Message", "attempts"]
        word = "Failed" if (failed["outcome"] == FAILED).all() else "Not done"
        parts.append(
            f"<details open class='eb-section' data-section='failed'><summary>{word} "
            f"<span class='eb-muted'>({len(failed):,})</span></summary>"
            f"{_table(failed, columns, headers, failed=True)}</details>"
        )
        changed = int((failed["outcome"] == CHANGED).sum())
        parts.append(_retry(title, len(failed), len(others), retry_call, changed))
    if len(others):
        columns = ["action", "key", "row", "id", "outcome", "message", "attempts", "elapsed_ms"]
        headers = ["action", "key", "row", "ID", "outcome", "message", "attempts", "ms"]
        parts.append(
            f"<details{'' if len(failed) else ' open'} class='eb-section' data-section='done'>"
            f"<summary>Done <span class='eb-muted'>({len(others):,})</span></summary>"
            f"{_table(others, columns, headers, failed=False)}</details>"
        )
    if unchanged.any():
        parts.append(
            f"<p class='eb-muted eb-unchanged-count'>{int(unchanged.sum()):,} listings unchanged: "
            "nothing sent (in <code>report.frame</code>)</p>"
        )
    parts += [f"<p class='eb-muted'>{html.escape(line)}</p>" for line in where]
    if notes:
        items = "".join(f"<li>{html.escape(note)}</li>" for note in notes)
        parts.append(f"<ul class='eb-notes'>{items}</ul>")
    return styled("".join(parts))
