"""The apply report in a notebook: what failed first, then the call that retries it.

Failures come first, with the service's ``Code`` and ``Message``; then the exact call that sends
them again (the same plan with the same journal); then what was done. Unchanged listings are a
count, not 175 rows of nothing. Given the listings' names (:func:`listing_names` of the plan's
operations), each row also shows the listing's MLS number and address: a cleanup goes by NewOaks
ID, which tells a person nothing. Colours come from the notebook's theme (:mod:`.theme`); keys and
messages come from sheets and the service, so every value is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from estatebot._theme import styled
from estatebot.listings.sync.plan.operations import PlannedOp
from estatebot.listings.sync.report.outcomes import CHANGED, FAILED, NOT_DONE, SKIPPED, UNCHANGED

__all__ = ["REPORT_ROWS", "ListingName", "listing_names", "render_report"]

#: Rows shown per section; the rest are counted (the whole report is in ``.frame``).
REPORT_ROWS = 50

# The chip class of each summary word: done is success, not done is error, the rest plain.
_GOOD = {"created", "updated", "deleted", "redone"}
_NUMBERS = ("row", "id", "code", "attempts", "elapsed_ms")
# The columns a person decides by: what happened, and the service's word on a failure.
_DECIDE = ("outcome", "code", "message")


@dataclass(frozen=True)
class ListingName:
    """How a person knows a listing: its MLS number and its address (street, city)."""

    mls: str | None
    address: str


def listing_names(ops: Iterable[PlannedOp]) -> dict[str, ListingName]:
    """The names of the listings ``ops`` touch, by key: from the listing's values before (an
    update or a delete), else from what a create sends."""
    names: dict[str, ListingName] = {}
    for op in ops:
        values = op.before or op.body or {}
        parts = [str(values[f]) for f in ("Address", "City") if values.get(f) not in (None, "")]
        mls = values.get("MLSNumber")
        names[op.key] = ListingName(None if mls in (None, "") else str(mls), ", ".join(parts))
    return names


def _where_line(line: str) -> str:
    """``backup: PATH`` with the path as code: a path breaks at the edge of the line, not at
    the hyphens of a folder's name as if they were words."""
    label, colon, path = line.partition(": ")
    if not colon:
        return f"<p class='eb-muted'>{html.escape(line)}</p>"
    return f"<p class='eb-muted'>{html.escape(label)}: <code>{html.escape(path)}</code></p>"


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


def _cell_class(column: str) -> str:
    if column in _NUMBERS:
        return "eb-num" + (" eb-decide" if column in _DECIDE else "")
    if column in ("key", "mls"):
        return "eb-key" + (" eb-mls" if column == "mls" else "")
    if column == "message":
        return "eb-why eb-decide"
    if column == "address":
        return "eb-address"
    return "eb-decide" if column in _DECIDE else ""


def _named(
    columns: Sequence[str], headers: Sequence[str], names: Mapping[str, ListingName] | None
) -> tuple[list[str], list[str]]:
    """``columns`` and ``headers`` with the listing's MLS number (when some key is not it) and
    address after the key."""
    if not names:
        return list(columns), list(headers)
    extra = [("address", "address")]
    if any(name.mls is not None and name.mls != key for key, name in names.items()):
        extra.insert(0, ("mls", "MLS#"))
    at = list(columns).index("key") + 1
    new_columns = [*columns[:at], *(c for c, _ in extra), *columns[at:]]
    new_headers = [*headers[:at], *(h for _, h in extra), *headers[at:]]
    return new_columns, new_headers


def _needed(
    shown: pd.DataFrame, columns: Sequence[str], headers: Sequence[str]
) -> tuple[list[str], list[str]]:
    """``columns`` without the ones that say nothing, which a 900 px notebook has no room for:
    ``row`` when no operation came from a sheet row (a cleanup), ``key`` when every key is the
    listing's ID (a plan keyed by NewOaks ID)."""
    drop: set[str] = set()
    if "row" in shown and shown["row"].isna().all():
        drop.add("row")
    if "key" in shown and "id" in shown and len(shown):
        ids = shown["id"].astype("object").map(lambda v: None if v is pd.NA else str(v))
        if (shown["key"].astype("object") == ids).all():
            drop.add("key")
    kept = [(c, h) for c, h in zip(columns, headers, strict=True) if c not in drop]
    return [c for c, _ in kept], [h for _, h in kept]


def _table(
    frame: pd.DataFrame,
    columns: Sequence[str],
    headers: Sequence[str],
    *,
    failed: bool,
    names: Mapping[str, ListingName] | None = None,
) -> str:
    columns, headers = _named(columns, headers, names)
    columns, headers = _needed(frame.head(REPORT_ROWS), columns, headers)
    head = "".join(
        f"<th{' class=eb-num' if c in _NUMBERS else ''}>{html.escape(h)}</th>"
        for c, h in zip(columns, headers, strict=True)
    )
    rows: list[str] = []
    for record in frame.head(REPORT_ROWS).to_dict("records"):
        name = (names or {}).get(str(record["key"]))
        record = {
            **record,
            "mls": name.mls if name else None,
            "address": name.address if name else None,
        }
        cells = "".join(
            f"<td class='{_cell_class(c)}'>{html.escape(_cell(record[c]))}</td>" for c in columns
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
    names: Mapping[str, ListingName] | None = None,
) -> str:
    """The report as themed HTML: summary, failures and the retry, then what was done; with
    ``names`` (by key, :func:`listing_names`), each listing's MLS number and address too."""
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
            f"{_table(failed, columns, headers, failed=True, names=names)}</details>"
        )
        changed = int((failed["outcome"] == CHANGED).sum())
        parts.append(_retry(title, len(failed), len(others), retry_call, changed))
    if len(others):
        columns = ["action", "key", "row", "id", "outcome", "message", "attempts", "elapsed_ms"]
        headers = ["action", "key", "row", "ID", "outcome", "message", "attempts", "ms"]
        parts.append(
            f"<details{'' if len(failed) else ' open'} class='eb-section' data-section='done'>"
            f"<summary>Done <span class='eb-muted'>({len(others):,})</span></summary>"
            f"{_table(others, columns, headers, failed=False, names=names)}</details>"
        )
    if unchanged.any():
        parts.append(
            f"<p class='eb-muted eb-unchanged-count'>{int(unchanged.sum()):,} listings unchanged: "
            "nothing sent (in <code>report.frame</code>)</p>"
        )
    parts += [_where_line(line) for line in where]
    if notes:
        items = "".join(f"<li>{html.escape(note)}</li>" for note in notes)
        parts.append(f"<ul class='eb-notes'>{items}</ul>")
    return styled("".join(parts))
