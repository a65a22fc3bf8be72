"""``estatebot restore``: put the listings of a backup back as they were.

It holds the chatbot's run lock (:mod:`estatebot.cli.run_lock`) while it restores: a sync or an
undo of the same chatbot running meanwhile would write over what it puts back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from estatebot.cli.codes import ExitCode
from estatebot.cli.console import out_console
from estatebot.cli.flags.option_groups import with_flags
from estatebot.cli.flags.run_options import LockFlags
from estatebot.cli.flags.shared_options import (
    ConcurrencyOption,
    ProgressOption,
    SerialOption,
    parse_pairs,
)
from estatebot.cli.report_view import render_report, shown_path
from estatebot.cli.run_lock import holding_chatbot

__all__ = ["restore"]


@with_flags(locking=LockFlags)
def restore(
    backup: Annotated[
        Path,
        typer.Argument(
            help="A backup written by `apply`, `sync` or `cleanup` (.json or .xlsx).",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ],
    serial: SerialOption,
    concurrency: ConcurrencyOption = 8,
    progress: ProgressOption = None,
    default: Annotated[
        list[str] | None,
        typer.Option(
            "--default",
            metavar="FIELD=VALUE",
            help="A value for a field the service never shows (AreaUnit, Location), used for "
            "listings whose value neither the backup nor the record of values sent knows: "
            "--default 'AreaUnit=Square Feet'. A restore never guesses one.",
        ),
    ] = None,
    *,
    locking: LockFlags,
) -> None:
    """Put the listings of a backup back as they were (exit 0, 4 when any failed, 1 error).

    A restore leaves in place the listings the run created; when the backup is in a run's
    folder, the report says how many and names `estatebot undo RUN`, which removes them too.
    """
    from estatebot.api.client import Client
    from estatebot.listings.sync.apply.apply_options import ApplyOptions
    from estatebot.listings.sync.apply.restore import (
        check_restore_defaults,
        run_creates,
        with_undo_command,
    )
    from estatebot.listings.sync.apply.restore import restore as restore_backup

    options = ApplyOptions(concurrency=concurrency, progress=progress)
    try:
        defaults = check_restore_defaults(parse_pairs(default, "--default"))
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--default") from None
    with Client() as client, holding_chatbot(client, serial, wait=locking.lock_wait):
        result = restore_backup(backup, client, serial, options=options, defaults=defaults)
    made = run_creates(backup)
    if made is not None and made.run is not None:  # the command that undoes a run of ours
        undo = f"`estatebot undo {shown_path(made.run)} --serial {serial}`"
        result.notes = with_undo_command(result.notes, undo)
    render_report(out_console(), result)
    raise typer.Exit(ExitCode.OK if result.ok else ExitCode.FAILED)
