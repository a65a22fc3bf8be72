"""A fleet in the terminal: one table row per chatbot, then the chatbots that need a look.

The table is a rich ``Table`` whose columns are the fleet frame's (counts right-aligned); a
chatbot with an error or a failure is red and its error follows under the table, one line
each, so one failure among 300 chatbots is never buried. ``max_rows`` caps the table (0: all)
and says where the whole of it is.
"""

from __future__ import annotations

import pandas as pd
from rich.console import Console
from rich.table import Table
from rich.text import Text

from estatebot.cli.console import safe
from estatebot.cli.error_messages import in_cli_terms

__all__ = ["render_fleet_table"]

_COUNTS = {"create", "update", "delete", "unchanged", "invalid", "held back", "created",
           "updated", "deleted", "skipped (already done)", "failed", "cases", "passed",
           "errors", "row"}  # fmt: skip
_HIDDEN = {"error", "folder", "results"}


def render_fleet_table(
    console: Console, title: str, frame: pd.DataFrame, *, max_rows: int = 50, where: str = ""
) -> None:
    """Show ``frame`` (a fleet's table) under ``title``, then each chatbot's error."""
    from estatebot.fleet.fleet_html import shown_columns

    # As the notebook shows it (no column of zeros but the actions), with the serial kept: the
    # terminal is where a person copies it.
    shown = [c for c in shown_columns(frame, hide=("row",)).columns if c not in _HIDDEN]
    table = Table(title=Text(title, style="bold"), title_justify="left", show_edge=False)
    for column in shown:
        right = column in _COUNTS
        # A name stays on one line; the serial gives way (cut with an ellipsis) when narrow.
        table.add_column(
            column,
            justify="right" if right else "left",
            no_wrap=right or column == "chatbot",
            overflow="ellipsis",
        )
    limit = len(frame) if max_rows <= 0 else max_rows
    troubled = _troubled(frame)
    for place, record in enumerate(frame.head(limit).to_dict("records")):
        style = "red" if troubled[place] else None
        cells = [safe(_cell(record[column]), one_line=True) for column in shown]
        table.add_row(*cells, style=style)
    console.print(table)
    if len(frame) > limit:
        more = f"  ... and {len(frame) - limit} more chatbots"
        console.print(Text(f"{more} ({where} holds them all)" if where else more, "italic"))
    if "error" in frame.columns:
        for record in frame[frame["error"] != ""].to_dict("records"):
            line = Text("  error ", "bold red")
            line.append(safe(str(record["chatbot"]), one_line=True), "bold")
            line.append(f": {safe(in_cli_terms(str(record['error'])), one_line=True)}")
            console.print(line)


def _troubled(frame: pd.DataFrame) -> list[bool]:
    flags = pd.Series(False, index=frame.index)
    if "error" in frame.columns:
        flags |= frame["error"] != ""
    for column in ("failed", "errors"):
        if column in frame.columns:
            flags |= frame[column] > 0
    return flags.tolist()


def _cell(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "" if value is None else str(value)
