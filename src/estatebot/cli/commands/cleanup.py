"""``estatebot cleanup``: delete stale listings, planned, shown, guarded, asked and backed up."""

from __future__ import annotations

from typing import Annotated

import typer

from estatebot.cli.flags.exit_options import ExitFlags
from estatebot.cli.flags.option_groups import with_flags
from estatebot.cli.flags.plan_options import ApplyFlags, GuardFlags, ShowFlags
from estatebot.cli.flags.run_options import LockFlags, ResumeFlags
from estatebot.cli.flags.shared_options import (
    KeyName,
    ProgressOption,
    SerialOption,
    listing_statuses,
)
from estatebot.cli.guided import RUN_WORKBOOK, Guided, RunFlags
from estatebot.cli.plan_view import render_plan
from estatebot.cli.resuming import check_resume_flags
from estatebot.cli.run_fingerprint import cleanup_fingerprint
from estatebot.cli.run_lock import holding_chatbot

__all__ = ["cleanup"]


@with_flags(
    guards=GuardFlags,
    runs=RunFlags,
    resuming=ResumeFlags,
    locking=LockFlags,
    show=ShowFlags,
    applying=ApplyFlags,
    exits=ExitFlags,
)
def cleanup(
    serial: SerialOption,
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            metavar="STATUS",
            callback=listing_statuses,
            help="Delete listings with this Status: Active, PreOnMarket or Sold, in any case "
            "(repeatable).",
        ),
    ] = None,
    min_days_on_market: Annotated[
        int | None,
        typer.Option(
            "--min-days-on-market",
            min=0,
            metavar="DAYS",
            help="Delete listings on the market at least this many days.",
        ),
    ] = None,
    key: Annotated[
        KeyName,
        typer.Option("--key", case_sensitive=False, help="Delete listings by this key."),
    ] = KeyName.NEWOAKS,
    progress: ProgressOption = None,
    *,
    guards: GuardFlags,
    runs: RunFlags,
    resuming: ResumeFlags,
    locking: LockFlags,
    show: ShowFlags,
    applying: ApplyFlags,
    exits: ExitFlags,
) -> None:
    """Delete stale listings: those with a --status, or on the market --min-days-on-market.

    A listing is chosen when its Status is one of --status OR it has been on the market at
    least --min-days-on-market days. The plan of deletes is shown, guarded like a sync's
    (--max-delete-fraction), asked for (--yes for scheduled jobs) and applied with a journal
    and a backup (`estatebot restore` puts the listings back). Run again after an
    interruption, it resumes that run only when the rule is the same (another --status is
    refused unless --resume or --no-resume says which).

    Exit 0 success, 4 a delete failed, 5 not applied, 1 an error (also: another run on the
    chatbot past --lock-wait, an interrupted cleanup of another rule), 64 a --status that is
    no listing status, 130 interrupted. With --detailed-exitcode: 2 listings deleted, 0 only when
    none matched.
    """
    from estatebot.api.client import Client
    from estatebot.listings.remote.pull import pull_listings
    from estatebot.listings.sync.sync_plan import plan_cleanup

    if not status and min_days_on_market is None:
        raise typer.BadParameter(
            "say which listings are stale: --status (e.g. Sold) and/or --min-days-on-market",
            param_hint="--status / --min-days-on-market",
        )
    check_resume_flags(runs, resuming)
    fingerprint = cleanup_fingerprint(status, min_days_on_market, key, guards)
    with Client() as client, holding_chatbot(client, serial, wait=locking.lock_wait) as lock:
        guided = Guided(
            "cleanup", client, serial, runs, show, applying, progress, exits=exits,
            fingerprint=fingerprint, resume=resuming.resume, lock=lock, guards=guards.options(),
        )  # fmt: skip
        guided.resume_if_interrupted()
        # The pull keeps to --concurrency, as the apply does: it is how many requests at once
        # the service is asked to bear.
        remote = pull_listings(client, serial, concurrency=applying.concurrency, progress=progress)
        made = plan_cleanup(
            remote,
            status=tuple(status or ()),
            min_days_on_market=min_days_on_market,
            key=key.value,
            **guards.options(),
        )
        render_plan(
            guided.console, made, detail=show.detail, max_rows=show.max_rows, where=RUN_WORKBOOK
        )
        guided.apply_new(made)
