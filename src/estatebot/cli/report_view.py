"""An apply (or restore) report in the terminal: the summary, where the files went, what failed.

The summary line is the report's own (``8 created, 21 updated, 4 deleted``); the failed
operations follow, one line each with the service's code and message, capped at ``max_rows``.
The lines are built whole (:func:`report_lines`), then handed to the console to print.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from rich.console import Console
from rich.text import Text

from estatebot.cli.console import Block, Line, print_lines, safe
from estatebot.cli.error_messages import in_cli_terms

if TYPE_CHECKING:
    from estatebot.listings.sync.report.apply_report import ApplyReport

__all__ = ["render_report", "report_lines", "shown_path"]

_NOT_DONE = ("failed", "not sent", "changed during apply")


def shown_path(path: Path | str) -> str:
    """``path`` relative to the current folder when it is under it, else as it is."""
    target = Path(path)
    try:
        shown = str(target.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        shown = str(target)
    return safe(shown, one_line=True)


def render_report(console: Console, report: ApplyReport, *, max_rows: int = 50) -> None:
    """Show ``report``: summary, backup and journal, notes, and each operation not done."""
    lines = report_lines(report, max_rows=max_rows)
    print_lines(console, lines)


def report_lines(report: ApplyReport, *, max_rows: int = 50) -> list[Line]:
    """Every line :func:`render_report` prints, in order, the service's and the library's text
    already in the command line's terms and made safe."""
    style = "bold green" if report.ok else "bold red"
    lines: list[Line] = [Text(f"{report.title}: {report.summary()}", style=style)]
    if report.backup_path is not None:
        lines += [Text(f"  backup:  {shown_path(report.backup_path)}")]
    if report.journal_path is not None:
        lines += [Text(f"  journal: {shown_path(report.journal_path)}")]
    for note in report.notes:
        lines += [Block(Text("  note: ", "dim"), Text(_text(note), "dim"))]
    frame = report.frame
    not_done = frame[frame["outcome"].isin(_NOT_DONE).fillna(False)]
    limit = len(not_done) if max_rows <= 0 else max_rows
    for record in not_done.head(limit).to_dict("records"):
        line = Text()
        line.append(
            str(record["outcome"]), style="red" if record["outcome"] == "failed" else "yellow"
        )
        line.append(f" {record['action']} ")
        line.append(safe(record["key"] if isinstance(record["key"], str) else "", one_line=True))
        if not pd.isna(record["code"]):
            line.append(f" [{record['code']}]", style="dim")
        message = record["message"] if isinstance(record["message"], str) else ""
        if message:
            line.append(f": {_text(message, one_line=True)}")
        lines += [Block(Text("  "), line)]
    if len(not_done) > limit:
        more = f"  ... and {len(not_done) - limit} more not done (--report FILE lists them all)"
        lines += [Text(more, style="italic")]
    return lines


def _text(value: str, *, one_line: bool = False) -> str:
    """Library or service text, put in the command line's terms and made safe."""
    said = in_cli_terms(value)
    return safe(said, one_line=one_line)
