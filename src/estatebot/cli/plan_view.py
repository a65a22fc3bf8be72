"""A plan in the terminal, as Terraform shows one: what happens to each listing, and why.

Each listing gets a line with its action's sign: ``+`` create, ``~`` update (each changed field's
before -> after under it), ``-`` delete; ``!`` a value held back and ``x`` an invalid row, with
row, column and reason; ``.`` a create not made. Notes and refusals follow, then the one-line
summary. ``detail`` chooses how much: ``summary`` (counts, notes), ``changes`` (the default) or
``full`` (every field of a created or deleted listing); ``max_rows`` caps each section (0: no
cap), saying how many more there are and where to see them. A plan made from a sheet is shown
after the sheet as read: its headline and the reader's warnings the plan does not show itself.

The view is built whole first (:func:`plan_lines`), every text from the sheet, the service or
the library put through :func:`~estatebot.cli.error_messages.in_cli_terms` and
:func:`~estatebot.cli.console.safe` on the way, and then handed to the console to print
(:func:`~estatebot.cli.console.print_lines`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import pandas as pd
from rich.console import Console
from rich.text import Text

from estatebot.cli.console import Block, Line, print_lines, safe
from estatebot.cli.error_messages import in_cli_terms
from estatebot.cli.values import change_text, currency_of, plain_value, value_text

if TYPE_CHECKING:
    from estatebot.listings.sheet.result import Sheet
    from estatebot.listings.sync.plan.artifact import PlanArtifact
    from estatebot.listings.sync.plan.operations import Change, HeldBack, InvalidRow, PlannedOp

__all__ = ["Detail", "plan_lines", "render_plan"]


class Detail(StrEnum):
    """How much of a plan to show."""

    SUMMARY = "summary"
    CHANGES = "changes"
    FULL = "full"


SIGNS: dict[str, tuple[str, str]] = {
    "create": ("+", "green"),
    "update": ("~", "yellow"),
    "delete": ("-", "red"),
    "held": ("!", "magenta"),
    "invalid": ("x", "bold red"),
    "skipped": (".", "dim"),
}
_INDENT = 6
_UNIT_WORDS = {"Square Feet": "sq ft", "Square Meters": "m²"}


def _text(value: object) -> str:
    """Library or sheet text, put in the command line's terms and made safe."""
    said = in_cli_terms(str(value))
    return safe(said)


# --------------------------------------------------------------------------- lines


# --------------------------------------------------------------------------- one listing


def _head(kind: str, key: str | None, *where: str) -> Block:
    sign, style = SIGNS[kind]
    line = Text("  ")
    line.append(f"{sign} ", style=style)
    line.append(safe(key, one_line=True) if key else "(no key)", style="bold")
    place = ", ".join(part for part in where if part)
    if place:
        line.append(f"  {place}", style="dim")
    return Block(line)


def _where(row: int | None, listing_id: int | None) -> tuple[str, str]:
    return (f"row {row}" if row is not None else "", f"ID {listing_id}" if listing_id else "")


def _op_head(kind: str, op: PlannedOp) -> Block:
    """The line of one operation: its key, row and ID (by ID: the MLS number instead)."""
    if op.key_type == "NewOaks":  # the key is the ID: say it once, with the listing's MLS number
        mls = (op.before or op.body or {}).get("MLSNumber")
        shown = f"MLSNumber {safe(mls, one_line=True)}" if mls else ""
        return _head(kind, f"ID {op.key}", f"row {op.row}" if op.row is not None else "", shown)
    return _head(kind, op.key, *_where(op.row, op.id))


def brief(values: Mapping[str, Any]) -> Text:
    """A listing in one line: type, rooms, area, address, and what it sells or rents for."""
    currency = currency_of(values)
    parts: list[str] = []
    if values.get("PropertyType"):
        parts.append(safe(values["PropertyType"], one_line=True))
    if values.get("Bedrooms") is not None:
        parts.append(f"{values['Bedrooms']} bd")
    if values.get("Bathrooms") is not None:
        parts.append(f"{float(values['Bathrooms']):g} ba")
    unit = _UNIT_WORDS.get(str(values.get("AreaUnit")))
    if values.get("BuildingArea") and unit:  # List never returns the unit: no bare number
        parts.append(f"{plain_value('BuildingArea', values['BuildingArea'])} {unit}")
    place = ", ".join(
        safe(values[name], one_line=True) for name in ("Address", "City") if values.get(name)
    )
    region = " ".join(str(values[name]) for name in ("State", "ZIP") if values.get(name))
    if region:
        place = f"{place}, {safe(region, one_line=True)}" if place else safe(region, one_line=True)
    price = _price(values, currency)
    text = Text(", ".join(parts))
    for extra in (place, price):
        if extra:
            text.append(" · " if len(text) else "")
            text.append(extra)
    status = values.get("Status")
    if status and status != "Active":
        text.append(f" ({safe(status, one_line=True)})")
    return text


def _price(values: Mapping[str, Any], currency: str | None) -> str:
    if values.get("SaleType") == "for_rent" and values.get("RentPrice") is not None:
        return f"for rent {plain_value('RentPrice', values['RentPrice'], currency)}"
    if values.get("SalePrice") is not None:
        return f"for sale {plain_value('SalePrice', values['SalePrice'], currency)}"
    return ""


def _field_blocks(rows: Sequence[tuple[str, Text]]) -> list[Block]:
    """Field name, then its value, names aligned; a long value wraps under itself."""
    width = max((len(name) for name, _ in rows), default=0)
    return [
        Block(Text(" " * _INDENT) + Text(name.ljust(width), style="dim") + Text("  "), value)
        for name, value in rows
    ]


def _all_fields(values: Mapping[str, Any]) -> list[Block]:
    currency = currency_of(values)
    return _field_blocks(
        [
            (safe(name), value_text(name, value, currency, full=True))
            for name, value in values.items()
            if value not in (None, "", [], {})
        ]
    )


def _change_rows(op: PlannedOp, detail: Detail) -> list[tuple[str, Text]]:
    """An update's changes, a row per field; ExtensionColumn key by key."""
    currency = currency_of(op.body, op.before)
    rows: list[tuple[str, Text]] = []
    for change in op.changes:
        rows.extend(_change_row(change, currency))
    if detail is Detail.FULL:  # the plan's note says it once for every update
        for name in op.unknown:
            rows.append((name, Text("unknown on the service: the value last sent", "dim")))
    return rows


def _change_row(change: Change, currency: str | None) -> list[tuple[str, Text]]:
    if change.field == "ExtensionColumn":
        before = change.before if isinstance(change.before, dict) else {}
        after = change.after if isinstance(change.after, dict) else {}
        return [
            (
                f"ExtensionColumn.{safe(key, one_line=True)}",
                change_text("ExtensionColumn", before.get(key), after.get(key)),
            )
            for key in sorted(before.keys() | after.keys())
        ]
    return [(change.field, change_text(change.field, change.before, change.after, currency))]


def _with_reason(head: Block, reason: str) -> Block:
    if not reason:
        return head
    return Block(head.prefix, Text(": ") + Text(_text(reason)))


def _op_lines(op: PlannedOp, detail: Detail) -> list[Block]:
    if op.action == "create":
        values = op.body or {}
        head = _op_head("create", op)
        if detail is Detail.FULL:
            return [head, *_all_fields(values)]
        return [head, Block.indented(brief(values), _INDENT)]
    if op.action == "update":
        head = _op_head("update", op)
        return [head, *_field_blocks(_change_rows(op, detail))]
    if op.action == "delete":
        head = _with_reason(_op_head("delete", op), op.reason)
        values = op.before or {}
        if detail is Detail.FULL:
            return [head, *_all_fields(values)]
        return [head, Block.indented(brief(values), _INDENT)]
    return [_with_reason(_op_head("skipped", op), op.reason)]


def _held_lines(held: HeldBack) -> list[Block]:
    column = held.column or held.field
    line = Text()
    line.append(safe(column, one_line=True), style="bold")
    if held.column and held.column != held.field:
        line.append(f" ({held.field})", style="dim")
    if held.value is not None:
        line.append(f" {plain_value(held.field, str(held.value))}")
    line.append(f": {_text(held.message)}")
    if held.whole:
        line.append("; the update is not sent", style="dim")
    else:
        line.append("; the listing keeps its value (--accept-flagged writes it)", style="dim")
    return [_head("held", held.key, *_where(held.row, held.id)), Block.indented(line, _INDENT)]


def _invalid_lines(bad: InvalidRow) -> list[Block]:
    sign, style = SIGNS["invalid"]
    head = Text("  ")
    head.append(f"{sign} ", style=style)
    head.append(f"row {bad.row}" if bad.row is not None else "no row", style="bold")
    if bad.key:
        head.append(f"  {safe(bad.key, one_line=True)}", style="dim")
    return [Block(head), *(Block.indented(Text(_text(reason)), _INDENT) for reason in bad.reasons)]


# --------------------------------------------------------------------------- sections


def _section(
    title: str,
    items: Sequence[Any],
    lines_of: Callable[[Any], list[Block]],
    max_rows: int,
    more_hint: str,
) -> list[Line]:
    if not items:
        return []
    shown = items if max_rows <= 0 else items[:max_rows]
    lines: list[Line] = [Text(f"{title} ({len(items)}):", style="bold")]
    for item in shown:
        lines += lines_of(item)
    if len(items) > len(shown):
        hidden = len(items) - len(shown)
        lines += [Block(Text("  "), Text(f"... and {hidden} more {more_hint}", "italic"))]
    return [*lines, Text()]


def _headline(plan: PlanArtifact) -> list[Line]:
    """What the plan is made against, and the signs of the actions it has."""
    legend = Text("  ")
    present = [kind for kind, ops in (("create", plan.creates), ("update", plan.updates),
                                      ("delete", plan.deletes)) if ops]  # fmt: skip
    for number, kind in enumerate(present):
        sign, style = SIGNS[kind]
        legend.append("   " if number else "")
        legend.append(f"{sign} ", style=style)
        legend.append(kind)
    heading = f"Plan by {plan.key_type} against {plan.remote_count} listings on the service:"
    return [Text(heading, style="bold"), legend, Text()]


def _remarks(plan: PlanArtifact) -> list[Line]:
    """The plan's refusals, then its notes."""
    said = [("Refused: ", "bold red", "red", text) for text in plan.refusals]
    said += [("Note: ", "dim", "dim", text) for text in plan.notes]
    lines: list[Line] = [
        Block(Text(label, label_style), Text(_text(text), style))
        for label, label_style, style, text in said
    ]
    return [*lines, Text()] if lines else []


def plan_lines(
    plan: PlanArtifact,
    *,
    sheet: Sheet | None = None,
    detail: Detail = Detail.CHANGES,
    max_rows: int = 50,
    where: str = "",
) -> list[Line]:
    """Every line :func:`render_plan` prints, in order, each text from the sheet, the service
    or the library already in the command line's terms and made safe."""
    more = f"(--max-rows 0 shows all{'; every row is in ' + where if where else ''})"
    lines: list[Line] = [] if sheet is None else _sheet_lines(sheet, plan, max_rows)
    if detail is not Detail.SUMMARY:
        if not plan.is_empty:
            lines += _headline(plan)

        def ops(op: PlannedOp) -> list[Block]:
            return _op_lines(op, detail)

        lines += _section("Create", plan.creates, ops, max_rows, more)
        lines += _section("Update", plan.updates, ops, max_rows, more)
        lines += _section("Delete", plan.deletes, ops, max_rows, more)
        lines += _section("Not created", plan.skipped_create, ops, max_rows, more)
    # A whole update held back is the plan's doing; a value held back, the reader's warning.
    held_title = (
        "Held back" if any(h.whole for h in plan.held_back) else "Held back (the reader warned)"
    )
    lines += _section(held_title, plan.held_back, _held_lines, max_rows, more)
    lines += _section("Invalid rows", plan.invalid, _invalid_lines, max_rows, more)
    lines += _remarks(plan)
    return [*lines, Text(f"Plan: {plan.summary()}", style="bold")]


def render_plan(
    console: Console,
    plan: PlanArtifact,
    *,
    sheet: Sheet | None = None,
    detail: Detail = Detail.CHANGES,
    max_rows: int = 50,
    where: str = "",
) -> None:
    """Show ``plan``: per listing what happens (by ``detail``), then notes and the summary;
    first, when given, the ``sheet`` it was planned from, as read (its headline and warnings).

    ``where`` names the file holding every row (the plan's workbook), for the "... and N more"
    lines of a capped section.
    """
    lines = plan_lines(plan, sheet=sheet, detail=detail, max_rows=max_rows, where=where)
    print_lines(console, lines)


# --------------------------------------------------------------------------- the sheet


def _sheet_lines(sheet: Sheet, plan: PlanArtifact, max_rows: int) -> list[Line]:
    """The sheet as read: its headline, then its warnings (those the plan holds back are shown
    with the plan, and errors as the plan's invalid rows)."""
    held = {(h.row, h.column) for h in plan.held_back}
    shown: list[Line] = []
    for record in sheet.issues.to_dict("records"):
        row = None if pd.isna(record["row"]) else int(record["row"])
        sheet_level = row is None
        if record["severity"] != "warning" and not sheet_level:
            continue  # an error rejects its row: the plan lists it, with its reasons
        if sheet_level and record["severity"] == "error":
            continue  # the plan's notes carry it ("sheet: ...")
        column = record["column"] if isinstance(record["column"], str) else record["field"]
        if (row, column) in held:
            continue
        shown += [_issue_line(row, column, record["value"], record["message"])]
    limit = len(shown) if max_rows <= 0 else max_rows
    lines: list[Line] = [Text(f"Read {safe(sheet.source)}: {sheet.headline()}", style="bold")]
    lines += shown[:limit]
    if len(shown) > limit:
        more = f"... and {len(shown) - limit} more warnings (--max-rows 0 shows all)"
        lines += [Block(Text("  "), Text(more, "italic"))]
    return [*lines, Text()]


def _issue_line(row: int | None, column: Any, value: Any, message: Any) -> Block:
    line = Text()
    line.append(f"row {row}" if row is not None else "sheet", style="bold")
    if isinstance(column, str):
        line.append(f", {safe(column, one_line=True)}")
    if isinstance(value, str):
        line.append(f" {plain_value('', value)}")
    line.append(f": {_text(message)}")
    return Block(Text("  ") + Text("warning ", style="yellow"), line)
