"""Views of a plan: a table and a workbook (the notebook's HTML is :mod:`.plan_html`).

They read a plan through :class:`~estatebot.listings.sync.views.shown_plan.ShownPlan`, what a view
needs
of one, so the plan (:mod:`~estatebot.listings.sync.plan.artifact`) uses its views and the views
never import it.

Listing text comes from spreadsheets and the service, so it is untrusted: the HTML view escapes
every value, and the workbook writes it by the rules of :mod:`estatebot._safe_cells` (a description
starting with ``=`` is text, never a formula; characters a cell refuses are removed and long text
cut, and the cells so changed are named in a warning).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from os import PathLike
from pathlib import Path
from typing import Any

import pandas as pd
from openpyxl.styles import PatternFill

from estatebot._safe_cells import Table, plain_value, warn_changes, write_tables
from estatebot.listings import schema
from estatebot.listings.sync.plan.operations import PlannedOp
from estatebot.listings.sync.values.tidy import clean_extension
from estatebot.listings.sync.views.plan_html import HTML_ROWS, render_html
from estatebot.listings.sync.views.shown_plan import ShownPlan

__all__ = ["HTML_ROWS", "ShownPlan", "render_html", "to_excel", "to_frame", "values_after"]

_FIELDS: tuple[str, ...] = tuple(c for c in schema.COLUMNS if c != "ID")
# Excel's own pale yellow: a workbook has one look, whatever the notebook's theme.
_FILL = PatternFill(start_color="FFF3B0", end_color="FFF3B0", fill_type="solid")


# --------------------------------------------------------------------------- values


def values_after(op: PlannedOp) -> dict[str, Any]:
    """A listing's field values once ``op`` is done (for a delete: its values before)."""
    if op.action == "delete":
        return {name: (op.before or {}).get(name) for name in _FIELDS}
    if op.action == "update":
        values = {name: (op.before or {}).get(name) for name in _FIELDS}
        values.update({c.field: c.after for c in op.changes})
        return values
    body = op.body or {}
    values = {name: body.get(name) for name in _FIELDS}
    if body.get("ExtensionColumn") is not None:
        values["ExtensionColumn"] = clean_extension(body["ExtensionColumn"])
    return values


# --------------------------------------------------------------------------- frame


_LONG_COLUMNS = ("action", "key", "row", "ID", "field", "before", "after", "reason")


def to_frame(
    plan: ShownPlan, *, wide: bool = False, include_unchanged: bool = False
) -> pd.DataFrame:
    """The plan as a DataFrame.

    Long form (default): one row per operation, and one row per changed field of an update,
    with columns action, key, row, ID, field, before, after, reason. Held-back values, invalid
    rows and skipped creates are included (``reason`` holds why); unchanged and kept listings
    only with ``include_unchanged=True``.

    Wide form: one row per operation with action, key, row, ID, reason, ``changed`` (the
    changed field names) and every listing field's value after the operation.
    """
    records: list[dict[str, Any]] = []
    if wide:
        for op in [*plan.operations(), *plan.skipped_create]:
            record = {
                "action": op.action, "key": op.key, "row": op.row, "ID": op.id,
                "reason": op.reason, "changed": ", ".join(c.field for c in op.changes) or None,
            }  # fmt: skip
            record.update(values_after(op))
            records.append(record)
        columns = ["action", "key", "row", "ID", "reason", "changed", *_FIELDS]
    else:
        for op in [*plan.operations(), *plan.skipped_create]:
            base = {"action": op.action, "key": op.key, "row": op.row, "ID": op.id}
            base.update(field=None, before=None, after=None)
            if op.changes:
                for change in op.changes:
                    records.append(
                        {**base, "field": change.field, "before": change.before,
                         "after": change.after, "reason": op.reason}
                    )  # fmt: skip
            else:
                records.append({**base, "reason": op.reason})
        columns = list(_LONG_COLUMNS)
    empty = dict.fromkeys(columns)
    for held in plan.held_back:
        record = {**empty, "action": "held back", "key": held.key, "row": held.row, "ID": held.id}
        if not wide:
            record.update(field=held.field, after=held.value)
        record["reason"] = f"{held.column or held.field}: {held.message}"
        records.append(record)
    for bad in plan.invalid:
        records.append(
            {**empty, "action": "invalid", "key": bad.key, "row": bad.row, "ID": bad.id,
             "reason": "; ".join(bad.reasons)}
        )  # fmt: skip
    if include_unchanged:
        for name, refs in (("unchanged", plan.unchanged), ("kept", plan.kept)):
            records.extend(
                {**empty, "action": name, "key": r.key, "row": r.row, "ID": r.id} for r in refs
            )
    frame = pd.DataFrame.from_records(records, columns=columns)
    types = {"action": "string", "key": "string", "row": "Int64", "ID": "Int64", "reason": "string"}
    if wide:
        types["changed"] = "string"
    else:
        types["field"] = "string"
        frame["before"] = frame["before"].astype("object")
        frame["after"] = frame["after"].astype("object")
    return frame.astype(types)


# --------------------------------------------------------------------------- Excel


#: The columns a sheet of listings may have before the listing's fields, read off the operation.
_LEAD: dict[str, Callable[[PlannedOp], Any]] = {
    "key": lambda op: op.key,
    "row": lambda op: op.row,
    "ID": lambda op: op.id,
    "reason": lambda op: op.reason,
    "changed": lambda op: ", ".join(c.field for c in op.changes),
}


def _table(
    title: str, header: Sequence[str], rows: Iterable[Sequence[Any]], **wider: float
) -> Table:
    """A sheet whose columns are as wide as their names (10 to 40 characters) unless ``wider``."""
    sized = {name: float(max(10, min(40, len(name) + 4))) for name in header}
    return Table(title, header, rows, widths={**sized, **wider})


def _listing_table(title: str, lead: Sequence[str], ops: Sequence[PlannedOp]) -> Table:
    """The sheet ``title`` of one listing per row: the columns ``lead``, then the listing's values
    once the operation is done. Where ``lead`` says what changed, each changed cell is filled
    yellow and carries the previous value as a comment. Rows are made as they are written."""
    rows = ([*(_LEAD[name](op) for name in lead), *values_after(op).values()] for op in ops)
    table = _table(title, [*lead, *_FIELDS], rows)
    if "changed" not in lead:
        return table
    column_of = {name: index for index, name in enumerate(table.header)}
    comments = (
        {column_of[c.field]: f"before: {_comment_value(c.before)}" for c in op.changes}
        for op in ops
    )
    return replace(table, comments=comments, comment_fill=_FILL)


def _comment_value(value: Any) -> str:
    shown = plain_value(value)
    return "(empty)" if shown is None else str(shown)


def _tables(plan: ShownPlan) -> list[Table]:
    """Every sheet of the plan's workbook, in order, with its rows (made as they are written);
    those of held-back values, kept listings and skipped creates only when there are any."""
    summary: list[Sequence[Any]] = [*plan.counts().items()]
    summary += [
        ("key type", plan.key_type),
        ("remote listings", plan.remote_count),
        ("fingerprint", plan.fingerprint),
        ("created at", plan.created_at),
    ]
    summary += [("refused", text) for text in plan.refusals]
    summary += [("note", text) for text in plan.notes]
    held = ((h.row, h.key, h.id, h.field, h.column, h.value, h.message) for h in plan.held_back)
    tables = [
        _table("Summary", ["item", "value"], summary, value=80),
        _listing_table("Create", ["key", "row"], plan.creates),
        _listing_table("Update", ["key", "row", "ID", "changed"], plan.updates),
        _listing_table("Delete", ["key", "ID", "row", "reason"], plan.deletes),
        _table("Invalid", ["row", "key", "ID", "reasons"], (
            (r.row, r.key, r.id, "; ".join(r.reasons)) for r in plan.invalid
        )),
        _table("Held back", ["row", "key", "ID", "field", "column", "value", "why"], held),
        _table("Unchanged", ["key", "row", "ID"], ((r.key, r.row, r.id) for r in plan.unchanged)),
        _table("Kept", ["key", "ID"], ((r.key, r.id) for r in plan.kept)),
        _listing_table("Skipped create", ["key", "row"], plan.skipped_create),
    ]  # fmt: skip
    when_any = {
        "Held back": plan.held_back,
        "Kept": plan.kept,
        "Skipped create": plan.skipped_create,
    }
    return [table for table in tables if when_any.get(table.title, True)]


def to_excel(plan: ShownPlan, path: str | PathLike[str]) -> Path:
    """Write the plan as a workbook: Summary, Create, Update, Delete, Invalid, Unchanged.

    The Update sheet shows each listing's values after the update; changed cells are filled
    yellow and carry the previous value as a comment. Kept and skipped creates get their own
    sheets when there are any. Text goes in by the rules of :mod:`estatebot._safe_cells`: never a
    formula; characters a cell cannot hold removed, and text longer than a cell holds cut (the
    saved plan keeps every value whole), each cell so changed named in one ``CellWarning``.
    The sheets are described first (:func:`_tables`), then written in one pass, a row at a time
    (write-only: the time grows with the cells, however many, and no row is kept once written).
    """
    target = Path(path)
    tables = _tables(plan)
    changes = write_tables(target, tables)
    # Pointed at the caller of PlanArtifact.to_excel, through SyncPlan.to_excel and this.
    warn_changes(changes, target.name, stacklevel=4)
    return target
