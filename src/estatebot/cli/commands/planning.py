"""``estatebot plan``: read a sheet, pull the listings, show and save what a sync would do."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from estatebot.cli.console import out_console
from estatebot.cli.flags.exit_options import ExitFlags
from estatebot.cli.flags.option_groups import with_flags
from estatebot.cli.flags.plan_options import GuardFlags, ShowFlags, SyncFlags
from estatebot.cli.flags.shared_options import ProgressOption, SerialOption
from estatebot.cli.flags.sheet_options import SheetFlags, read_with_flags
from estatebot.cli.plan_view import render_plan
from estatebot.cli.report_view import shown_path

__all__ = ["plan"]

SheetArgument = Annotated[
    Path,
    typer.Argument(
        metavar="SHEET",
        help="The MLS export: .xlsx, .csv (or .tsv, .txt) or .parquet.",
        exists=True,
        dir_okay=False,
        readable=True,
    ),
]


@with_flags(
    planning=SyncFlags, guards=GuardFlags, show=ShowFlags, flags=SheetFlags, exits=ExitFlags
)
def plan(
    sheet: SheetArgument,
    serial: SerialOption,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            dir_okay=False,
            help="Where to save the plan (JSON; its workbook goes beside it as .xlsx).",
        ),
    ] = Path("plan.json"),
    progress: ProgressOption = None,
    *,
    planning: SyncFlags,
    guards: GuardFlags,
    show: ShowFlags,
    flags: SheetFlags,
    exits: ExitFlags,
) -> None:
    """Plan the sync of a spreadsheet: show each change, save the plan and its workbook.

    Nothing is sent; `estatebot apply PLAN` carries it out. Exit 0 when the plan is made, 1 on
    an error (a file that is no listings sheet, the service). With --detailed-exitcode: 0 only
    when the listings are in step with the sheet (every row valid, nothing to change), 2 when
    the plan has changes, 3 when rows are invalid or held back (whatever else the plan does).
    """
    from estatebot.api.client import Client
    from estatebot.listings.remote.pull import pull_listings
    from estatebot.listings.sync.sync_plan import plan_sync

    read = read_with_flags(sheet, flags, key=planning.key.value, progress=progress)
    with Client() as client:
        remote = pull_listings(client, serial, progress=progress)
    made = plan_sync(read, remote, **planning.options(), **guards.options())
    preview = out.with_suffix(".xlsx")
    console = out_console()
    render_plan(
        console, made, sheet=read, detail=show.detail, max_rows=show.max_rows,
        where=shown_path(preview),
    )  # fmt: skip
    made.save(out)
    made.to_excel(preview)
    console.print(f"Saved: {shown_path(out)} (the plan), {shown_path(preview)} (its workbook).")
    if made.is_empty and not (made.invalid or made.held_back):
        console.print("Nothing to change: the listings are in step with the sheet.")
    if not made.is_empty:
        command = shlex.join(["estatebot", "apply", shown_path(out), "--serial", serial])
        console.print(f"To apply it: {command}")
    raise typer.Exit(exits.plan_code(made))
