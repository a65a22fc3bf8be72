"""The plan in a notebook: a summary bar, then a diff of every listing it touches.

What :meth:`SyncPlan._repr_html_ <estatebot.listings.sync.plan.artifact.PlanArtifact._repr_html_>`
and :meth:`~estatebot.listings.sync.plan.artifact.PlanArtifact.view` show:

* a title (a cleanup names its rule in words) and a bar of counts by action;
* each listing created or deleted by its key, its MLS number (when the plan goes by another key:
  a cleanup goes by NewOaks ID) and its address;
* refusals and notes, whole (they are our sentences: a cut one loses what apply will do);
* each action in its own section, its table in a box as wide as the output area that scrolls
  inside itself with its header kept in view;
* an update as a diff of its changed fields only: the value before struck through, the value
  after marked; money as money in the listing's currency with the change as amount and percent;
  long text word by word; ``ExtensionColumn`` key by key; images added and removed;
* a change of days on market folded away in a closed section with its count: it moves on every
  listing every day, and mixed in with real updates it hides them;
* rows that cannot be synced and values held back, with row, column and message.

Laid out for a 900 px notebook (the rules are in :mod:`estatebot._theme`): the value before
yields its width to the value after and the change, which never leave the box; text wraps at
words; numbers never wrap.

Listing text is untrusted (it comes from sheets and the service): every value is escaped. Colours
come from the notebook's theme (:mod:`.theme`).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from estatebot._theme import styled
from estatebot.listings import schema
from estatebot.listings.money import MONEY_FIELDS, format_money, format_money_change, is_number
from estatebot.listings.sync.plan.cleanup_rule import cleanup_rule
from estatebot.listings.sync.plan.operations import Change, PlannedOp
from estatebot.listings.sync.views.shown_plan import ShownPlan
from estatebot.listings.sync.views.value_diffs import Piece, key_diff, list_diff, word_diff

__all__ = ["ACTIONS", "DRIFT_FIELD", "HTML_ROWS", "PRICE_FIELDS", "PlanView", "render_html"]

#: Listings shown per section; the rest are counted (the whole plan is in ``to_frame()``).
HTML_ROWS = 50
#: The field whose change alone is folded away: it drifts on every listing, every day.
DRIFT_FIELD = "DaysOnMarket"
#: The sections a view can be narrowed to, by the names ``view(action=...)`` takes.
ACTIONS: tuple[str, ...] = ("create", "update", "delete", "invalid", "held back", "skipped create")

_TEXT_LIMIT = 200
HELD_HINT = "accept_flagged=True plans what the reader warned about)"
# Text this long or longer is compared word by word; a shorter one is shown whole on each side.
_LONG_TEXT = 40
# An unchanged stretch of a long text keeps this many words on each side of what changed.
_CONTEXT_WORDS = 6


# --------------------------------------------------------------------------- values


def _display(value: Any) -> str:
    """A value as short display text (not escaped): areas with separators, JSON for lists."""
    if value is None:
        return ""
    if isinstance(value, bool | int):
        return str(value)  # IDs, rows and years: no separators
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:,}"
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else str(value)
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"


def _e(value: Any) -> str:
    return html.escape(_display(value), quote=True)


def _empty() -> str:
    # In a change an empty side is worth seeing: it is how a cleared or new value reads.
    return "<span class='eb-empty'>(empty)</span>"


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _currency(op: PlannedOp) -> Any:
    for source in (op.body, op.before):
        if source and source.get("CurrencySymbol"):
            return source["CurrencySymbol"]
    return "$"


def _money(value: Any, currency: Any) -> str:
    return html.escape(format_money(value, currency))


# --------------------------------------------------------------------------- one change


@dataclass(frozen=True)
class _Cells:
    """The before and after cells of one change, and whether they hold a number, a long text
    or tokens wider than a column may be (links, keys: ``links``)."""

    before: str
    after: str
    numeric: bool = False
    text: bool = False
    links: bool = False


def _pieces_html(pieces: Sequence[Piece], side: str) -> str:
    """One side of a word diff: what it shares with the other side, and its own words marked.

    A long unchanged stretch keeps a few words on each side of a change, the rest elided.
    """
    own = "deleted" if side == "before" else "inserted"
    tag = "del" if side == "before" else "ins"
    shown = [p for p in pieces if p.kind in ("same", own)]
    out: list[str] = []
    last = len(shown) - 1
    for n, piece in enumerate(shown):
        if piece.kind == own:
            out.append(f"<{tag}>{html.escape(piece.text)}</{tag}>")
        else:
            out.append(_context(piece.text, leading=n == 0 < last, trailing=n == last > 0))
    return "".join(out)


def _context(text: str, *, leading: bool, trailing: bool) -> str:
    """An unchanged stretch, cut to the words next to the changes around it."""
    words = text.split(" ")
    keep = _CONTEXT_WORDS
    elided = "<span class='eb-elided'>…</span>"
    if leading and len(words) > keep:
        return f"{elided} " + html.escape(" ".join(words[-keep:]))
    if trailing and len(words) > keep:
        return html.escape(" ".join(words[:keep])) + f" {elided}"
    if not (leading or trailing) and len(words) > 2 * keep + 1:
        head, tail = " ".join(words[:keep]), " ".join(words[-keep:])
        return f"{html.escape(head)} {elided} {html.escape(tail)}"
    return html.escape(text)


def _text_cells(before: str, after: str) -> _Cells:
    pieces = word_diff(before, after)
    return _Cells(_pieces_html(pieces, "before"), _pieces_html(pieces, "after"), text=True)


def _extension_cells(before: Any, after: Any) -> _Cells:
    olds: list[str] = []
    news: list[str] = []
    for change in key_diff(before if isinstance(before, dict) else None, after):
        key = html.escape(change.key)
        if change.kind == "added":
            news.append(f"<li><ins>+ {key}: {_e(change.after)}</ins></li>")
        elif change.kind == "removed":
            olds.append(f"<li><del>{key}: {_e(change.before)}</del></li>")
            news.append(f"<li><del>{key}</del> removed</li>")
        else:
            olds.append(f"<li>{key}: <del>{_e(change.before)}</del></li>")
            news.append(f"<li>{key}: <ins>{_e(change.after)}</ins></li>")
    old = f"<ul class='eb-list'>{''.join(olds)}</ul>" if olds else _empty()
    new = f"<ul class='eb-list'>{''.join(news)}</ul>" if news else _empty()
    return _Cells(old, new, links=True)


def _url(item: Any) -> str:
    """The attributes of a list item holding ``item`` (an image or tour link): marked as a link,
    which may break anywhere at the edge of its column (it has no words), whole on hover."""
    return f"class='eb-url' title='{_e(item)}'"


def _list_cells(before: Any, after: Any) -> _Cells:
    diff = list_diff(before, after)
    kept = f"<li class='eb-muted'>{diff.kept} unchanged</li>" if diff.kept else ""
    olds = "".join(f"<li {_url(item)}><del>{_e(item)}</del></li>" for item in diff.removed)
    news = "".join(f"<li {_url(item)}><ins>+ {_e(item)}</ins></li>" for item in diff.added)
    if not diff.added and not diff.removed:  # the same items in another order
        news = "<li>the same, in a new order</li>"
    old = f"<ul class='eb-list'>{olds}{kept}</ul>" if olds or kept else _empty()
    new = f"<ul class='eb-list'>{news}{kept}</ul>"
    return _Cells(old, new, links=True)


def change_cells(change: Change, currency: Any = "$") -> _Cells:
    """The before and after cells of one changed field (HTML, escaped)."""
    before, after = change.before, change.after
    if change.field == "ExtensionColumn":
        return _extension_cells(before, after)
    if isinstance(before, list) or isinstance(after, list):
        return _list_cells(before, after)
    if change.field in MONEY_FIELDS and (is_number(before) or is_number(after)):
        old = f"<del>{_money(before, currency)}</del>" if is_number(before) else _empty()
        new = f"<ins>{_money(after, currency)}</ins>" if is_number(after) else _empty()
        delta = format_money_change(before, after, currency)
        if delta:
            new += f" <span class='eb-delta'>({html.escape(delta)})</span>"
        return _Cells(old, new, numeric=True)
    if (
        isinstance(before, str)
        and isinstance(after, str)
        and max(len(before), len(after)) >= _LONG_TEXT
    ):
        return _text_cells(before, after)
    old = _empty() if _is_empty(before) else f"<del>{_e(before)}</del>"
    new = _empty() if _is_empty(after) else f"<ins>{_e(after)}</ins>"
    numeric = (before is None or is_number(before)) and (after is None or is_number(after))
    return _Cells(old, new, numeric=numeric)


# --------------------------------------------------------------------------- tables


def _table(header: Sequence[str], rows: Iterable[str], numeric: Sequence[str] = ()) -> str:
    head = "".join(
        f"<th{' class=eb-num' if h in numeric else ''}>{html.escape(h)}</th>" for h in header
    )
    body = "".join(rows)
    return (
        "<div class='eb-scroll'><table class='eb-table'>"
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _more(total: int) -> str:
    if total <= HTML_ROWS:
        return ""
    return (
        f"<p class='eb-muted more'>… and {total - HTML_ROWS} more "
        "(every one in <code>plan.to_frame()</code>)</p>"
    )


def _section(title: str, total: int, body: str, *, name: str, open_: bool = True) -> str:
    state = " open" if open_ else ""
    return (
        f"<details{state} class='eb-section' data-action='{html.escape(name)}'>"
        f"<summary>{html.escape(title)} <span class='eb-muted'>({total})</span></summary>"
        f"{body}{_more(total)}</details>"
    )


def _price_cell(op: PlannedOp, values: dict[str, Any] | None) -> str:
    values = values or {}
    currency = _currency(op)
    if is_number(values.get("SalePrice")):
        return f"<td class='eb-num'>{_money(values['SalePrice'], currency)}</td>"
    if is_number(values.get("RentPrice")):
        return f"<td class='eb-num'>{_money(values['RentPrice'], currency)}/mo</td>"
    return "<td class='eb-num'></td>"


def _address(values: dict[str, Any]) -> str:
    """Street and city, as one reads an address: ``4445 W Wellington Ave, Chicago``."""
    parts = [_display(values.get(name)) for name in ("Address", "City")]
    return html.escape(", ".join(p for p in parts if p))


def _names(key_type: str) -> list[str]:
    """The columns that name a listing besides its key: its MLS number when the plan is keyed
    by something else (a cleanup goes by NewOaks ID), and its address."""
    return (["MLS#"] if key_type != "MLSNumber" else []) + ["address"]


def _name_cells(key_type: str, values: dict[str, Any] | None) -> str:
    values = values or {}
    mls = f"<td class='eb-key eb-mls'>{_e(values.get('MLSNumber'))}</td>"
    address = f"<td class='eb-address'>{_address(values)}</td>"
    return (mls if key_type != "MLSNumber" else "") + address


_BRIEF_HEADER = ["PropertyType", "Status", "price"]


def _brief_cells(op: PlannedOp, values: dict[str, Any] | None) -> str:
    values = values or {}
    cells = "".join(f"<td>{_e(values.get(f))}</td>" for f in ("PropertyType", "Status"))
    return cells + _price_cell(op, values)


def _creates(ops: Sequence[PlannedOp], key_type: str) -> str:
    rows = [
        f"<tr><td class='eb-key'>{_e(op.key)}</td><td class='eb-num'>{_e(op.row)}</td>"
        f"{_name_cells(key_type, op.body)}{_brief_cells(op, op.body)}</tr>"
        for op in ops[:HTML_ROWS]
    ]
    header = ["key", "row", *_names(key_type), *_BRIEF_HEADER]
    return _table(header, rows, numeric=("row", "price"))


def _deletes(ops: Sequence[PlannedOp], key_type: str) -> str:
    # Keyed by NewOaks ID (a cleanup), the key is the ID: shown once.
    by_id = key_type == "NewOaks"
    rows: list[str] = []
    for op in ops[:HTML_ROWS]:
        key = "" if by_id else f"<td class='eb-key'>{_e(op.key)}</td>"
        rows.append(
            f"<tr>{key}<td class='eb-num'>{_e(op.id)}</td>{_name_cells(key_type, op.before)}"
            f"<td class='eb-why eb-decide'>{_e(op.reason)}</td>{_brief_cells(op, op.before)}</tr>"
        )
    header = [*([] if by_id else ["key"]), "ID", *_names(key_type), "why", *_BRIEF_HEADER]
    return _table(header, rows, numeric=("ID", "price"))


def _kind(cells: _Cells) -> str:
    """The class of a change's cells, which the style sheet lays out by (numbers never wrap)."""
    if cells.numeric:
        return " eb-num"
    if cells.text:
        return " eb-text"
    return " eb-links" if cells.links else ""


def _change_rows(ops: Sequence[tuple[PlannedOp, Sequence[Change]]]) -> list[str]:
    """Table rows of updates: the listing once (key, row, ID), then one row per changed field."""
    rows: list[str] = []
    for op, changes in ops[:HTML_ROWS]:
        span = max(1, len(changes))
        lead = (
            f"<td rowspan='{span}' class='eb-key'>{_e(op.key)}</td>"
            f"<td rowspan='{span}' class='eb-num'>{_e(op.row)}</td>"
            f"<td rowspan='{span}' class='eb-num'>{_e(op.id)}</td>"
        )
        currency = _currency(op)
        for n, change in enumerate(changes):
            cells = change_cells(change, currency)
            kind = _kind(cells)
            # The value before yields its width to the value after (see _theme); links after
            # take their column's width too, broken at its edge.
            after = f"<div class='eb-yield'>{cells.after}</div>" if cells.links else cells.after
            rows.append(
                f"<tr>{lead if n == 0 else ''}<td class='eb-field'>{_e(change.field)}</td>"
                f"<td class='eb-before{kind}'><div class='eb-yield'>{cells.before}</div></td>"
                f"<td class='eb-after{kind}'>{after}</td></tr>"
            )
    return rows


_UPDATE_HEADER = ["key", "row", "ID", "field", "before", "after"]


def _updates(plan_updates: Sequence[PlannedOp], fields: Sequence[str] | None) -> tuple[str, int]:
    """The update section (real changes, then the folded drift) and the listings it shows."""
    real: list[tuple[PlannedOp, Sequence[Change]]] = []
    drift: list[tuple[PlannedOp, Sequence[Change]]] = []
    for op in plan_updates:
        changes = [c for c in op.changes if fields is None or c.field in fields]
        others = [c for c in changes if c.field != DRIFT_FIELD]
        moved = [c for c in changes if c.field == DRIFT_FIELD]
        if others:
            real.append((op, others))
        if moved:
            drift.append((op, moved))
    parts: list[str] = []
    if real:
        table = _table(_UPDATE_HEADER, _change_rows(real), numeric=("row", "ID"))
        parts.append(_section("Update", len(real), table, name="update"))
    if drift:
        alone = sum(1 for op, _ in drift if all(c.field == DRIFT_FIELD for c in op.changes))
        rows = [
            f"<tr><td class='eb-key'>{_e(op.key)}</td><td class='eb-num'>{_e(op.row)}</td>"
            f"<td class='eb-num'>{_e(op.id)}</td>"
            f"<td class='eb-num'>{_e(changes[0].before)}</td>"
            f"<td class='eb-num'>{_e(changes[0].after)}</td></tr>"
            for op, changes in drift[:HTML_ROWS]
        ]
        table = _table(
            ["key", "row", "ID", "days before", "days after"],
            rows,
            numeric=("row", "ID", "days before", "days after"),
        )
        why = (
            "the count moves every day: sent with the updates, folded here"
            if not alone
            else f"{alone} of them change nothing else"
        )
        title = f"Days on market moved ({why})"
        parts.append(_section(title, len(drift), table, name="drift", open_=False))
    return "".join(parts), len(real)


def _invalid(plan: ShownPlan) -> str:
    column = schema.KEY_COLUMNS.get(plan.key_type, plan.key_type)
    rows: list[str] = []
    for bad in plan.invalid[:HTML_ROWS]:
        key = _e(bad.key) if bad.key else f"<span class='eb-empty'>no {html.escape(column)}</span>"
        reasons = "<br>".join(_e(reason) for reason in bad.reasons)
        rows.append(
            f"<tr><td class='eb-num'>{_e(bad.row)}</td><td class='eb-key'>{key}</td>"
            f"<td class='eb-num'>{_e(bad.id)}</td><td class='eb-why eb-decide'>{reasons}</td></tr>"
        )
    return _table(["row", column, "ID", "why"], rows, numeric=("row", "ID"))


def _held_back(plan: ShownPlan, fields: Sequence[str] | None) -> tuple[str, int]:
    held = [h for h in plan.held_back if fields is None or h.field in fields]
    rows = [
        f"<tr><td class='eb-num'>{_e(h.row)}</td><td class='eb-key'>{_e(h.key)}</td>"
        f"<td class='eb-field'>{_e(h.column or h.field)}</td>"
        f"<td class='eb-decide'>{_e(h.value)}</td>"
        f"<td class='eb-why eb-decide'>{_e(h.message)}</td></tr>"
        for h in held[:HTML_ROWS]
    ]
    return _table(["row", "key", "column", "value", "why"], rows, numeric=("row",)), len(held)


# --------------------------------------------------------------------------- the whole


_CHIPS: tuple[tuple[str, str], ...] = (
    ("create", "create"),
    ("update", "update"),
    ("delete", "delete"),
    ("unchanged", "unchanged"),
    ("invalid", "invalid"),
    ("held_back", "held back"),
    ("kept", "kept"),
    ("skipped_create", "skipped create"),
)


def summary_bar(counts: dict[str, int], *, cleanup: bool = False) -> str:
    """The counts by action as a row of chips (the ones after ``invalid`` only when nonzero; a
    cleanup's only deletes and keeps)."""
    chips: list[str] = []
    for name, words in _CHIPS:
        count = counts.get(name, 0)
        if cleanup and name not in ("delete", "kept"):
            continue
        if name in ("held_back", "kept", "skipped_create") and not count:
            continue
        zero = " eb-zero" if not count else ""
        chips.append(
            f"<span class='eb-chip eb-{name}{zero}' data-count='{count}'>"
            f"<b>{count:,}</b> {words}</span>"
        )
    return f"<div class='eb-bar'>{''.join(chips)}</div>"


def _title(plan: ShownPlan) -> str:
    rule = cleanup_rule(plan.options)
    if rule is not None:
        return (
            f"<p class='eb-title'>Cleanup: {html.escape(rule)}</p>"
            f"<p class='eb-muted'>deletes {len(plan.deletes):,} of {plan.remote_count:,} listings "
            f"on the service, keyed by {_e(plan.key_type)}</p>"
        )
    column = schema.KEY_COLUMNS.get(plan.key_type, plan.key_type)
    return (
        "<p class='eb-title'>Sync plan</p>"
        f"<p class='eb-muted'>sheet rows matched to listings by {html.escape(column)}; "
        f"{plan.remote_count:,} listings on the service</p>"
    )


#: What ``field="Price"`` names: the listing's price, for sale or for rent (the plan's "price"
#: column), not the other amounts whose names end in Price (UnitAreaPrice, ZestimatePrice).
PRICE_FIELDS: tuple[str, ...] = ("SalePrice", "RentPrice")


def _fields(field: str | Sequence[str] | None) -> list[str] | None:
    """The field names ``field`` picks: each a listing field's name in any case, or ``"Price"``
    (:data:`PRICE_FIELDS`). A part of a name picks nothing: ``"Price"`` once matched every name
    holding it, UnitAreaPrice included."""
    if field is None:
        return None
    asked = [field] if isinstance(field, str) else list(field)
    names = {name.lower(): name for name in schema.COLUMNS}
    picked: list[str] = []
    for item in asked:
        wanted = str(item).strip().lower()
        if wanted == "price":
            found = list(PRICE_FIELDS)
        else:
            found = [names[wanted]] if wanted in names else []
        if not found:
            raise ValueError(
                f"field {item!r} is no listing field; fields: {', '.join(schema.COLUMNS)} "
                "(or Price: SalePrice and RentPrice)"
            )
        picked += [n for n in found if n not in picked]
    return picked


def _actions(action: str | Sequence[str] | None) -> set[str]:
    if action is None:
        return set(ACTIONS)
    asked = [action] if isinstance(action, str) else list(action)
    out = {a.replace("_", " ").strip().lower() for a in asked}
    unknown = sorted(out - set(ACTIONS))
    if unknown:
        raise ValueError(f"action {unknown[0]!r} is not one of: {', '.join(ACTIONS)}")
    return out


def render_html(
    plan: ShownPlan,
    *,
    action: str | Sequence[str] | None = None,
    field: str | Sequence[str] | None = None,
) -> str:
    """The notebook view of ``plan``, or the part of it ``action`` and ``field`` pick.

    ``action`` is one of :data:`ACTIONS` (or several); ``field`` a listing field's name in any
    case (or several), or ``"Price"``: the listing's price, ``SalePrice`` and ``RentPrice``. With
    a field, only the updates of that field (and values held back from it) are shown.
    """
    fields = _fields(field)
    actions = _actions(action)
    if fields is not None:
        actions &= {"update", "held back"}
    cleanup = bool(plan.options.get("cleanup"))
    parts = [_title(plan), summary_bar(plan.counts(), cleanup=cleanup)]
    if action is not None or field is not None:
        asked = ", ".join(sorted(actions)) or "nothing"
        on = f" of {', '.join(fields)}" if fields else ""
        parts.append(f"<p class='eb-muted'>showing: {html.escape(asked + on)}</p>")
    for text in plan.refusals:
        parts.append(f"<p class='eb-refusal'>⚠ {html.escape(text)}</p>")
    if plan.notes and action is None and field is None:
        items = "".join(f"<li>{html.escape(t)}</li>" for t in plan.notes)
        parts.append(f"<ul class='eb-notes'>{items}</ul>")
    if "create" in actions and plan.creates:
        parts.append(
            _section(
                "Create", len(plan.creates), _creates(plan.creates, plan.key_type), name="create"
            )
        )
    if "update" in actions and plan.updates:
        parts.append(_updates(plan.updates, fields)[0])
    if "delete" in actions and plan.deletes:
        parts.append(
            _section(
                "Delete", len(plan.deletes), _deletes(plan.deletes, plan.key_type), name="delete"
            )
        )
    if "invalid" in actions and plan.invalid:
        title = "Invalid (cannot be synced: correct the sheet and plan again)"
        parts.append(_section(title, len(plan.invalid), _invalid(plan), name="invalid"))
    if "held back" in actions and plan.held_back:
        table, count = _held_back(plan, fields)
        if count:
            title = (
                "Held back (not written: the listing keeps its value; why, row by row; " + HELD_HINT
            )
            parts.append(_section(title, count, table, name="held back"))
    if "skipped create" in actions and plan.skipped_create:
        rows = [
            f"<tr><td class='eb-key'>{_e(op.key)}</td><td class='eb-num'>{_e(op.row)}</td></tr>"
            for op in plan.skipped_create[:HTML_ROWS]
        ]
        parts.append(
            _section(
                "Skipped create (create_missing=False)",
                len(plan.skipped_create),
                _table(["key", "row"], rows, numeric=("row",)),
                name="skipped create",
            )
        )
    parts.append(
        f"<p class='eb-muted'>{len(plan.unchanged):,} unchanged, {len(plan.kept):,} kept on the "
        f"service; fingerprint <code>{_e(plan.fingerprint[:12])}</code>, made "
        f"{_e(plan.created_at)}</p>"
    )
    return styled("".join(parts))


class PlanView:
    """A part of a plan to display: what :meth:`SyncPlan.view` returns (shown as HTML)."""

    def __init__(
        self,
        plan: ShownPlan,
        action: str | Sequence[str] | None = None,
        field: str | Sequence[str] | None = None,
    ) -> None:
        self._html = render_html(plan, action=action, field=field)  # checks the names now
        self._text = f"<PlanView action={action!r} field={field!r}: {plan.summary()}>"

    def _repr_html_(self) -> str:
        return self._html

    def __repr__(self) -> str:
        return self._text
