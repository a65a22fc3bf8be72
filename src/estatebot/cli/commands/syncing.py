"""``estatebot sync``: the whole job in one command: pull, read, plan, show, ask, apply, report."""

from __future__ import annotations

from estatebot.cli.commands.planning import SheetArgument
from estatebot.cli.flags.exit_options import ExitFlags
from estatebot.cli.flags.option_groups import with_flags
from estatebot.cli.flags.plan_options import ApplyFlags, GuardFlags, ShowFlags, SyncFlags
from estatebot.cli.flags.run_options import LockFlags, ResumeFlags
from estatebot.cli.flags.shared_options import ProgressOption, SerialOption
from estatebot.cli.flags.sheet_options import SheetFlags, read_with_flags
from estatebot.cli.guided import RUN_WORKBOOK, Guided, RunFlags
from estatebot.cli.plan_view import render_plan
from estatebot.cli.resuming import check_resume_flags
from estatebot.cli.run_fingerprint import sync_fingerprint
from estatebot.cli.run_lock import holding_chatbot

__all__ = ["sync"]


@with_flags(
    planning=SyncFlags,
    guards=GuardFlags,
    runs=RunFlags,
    resuming=ResumeFlags,
    locking=LockFlags,
    show=ShowFlags,
    applying=ApplyFlags,
    flags=SheetFlags,
    exits=ExitFlags,
)
def sync(
    sheet: SheetArgument,
    serial: SerialOption,
    progress: ProgressOption = None,
    *,
    planning: SyncFlags,
    guards: GuardFlags,
    runs: RunFlags,
    resuming: ResumeFlags,
    locking: LockFlags,
    show: ShowFlags,
    applying: ApplyFlags,
    flags: SheetFlags,
    exits: ExitFlags,
) -> None:
    """Sync a spreadsheet to the chatbot's listings in one go, with a journal and a backup.

    Pulls the listings, reads the sheet, plans, shows the plan, asks (only 'yes' approves;
    --yes for scheduled jobs; without a terminal nothing is applied unless --yes), applies it
    with a journal and a backup in a run folder, and shows the report. Run again after an
    interruption, it resumes that run (what is left is shown and asked for): nothing is done
    twice. A run made by another command (the sheet changed, another flag) is refused unless
    --resume (finish it) or --no-resume (plan afresh). One run at a time per chatbot: another
    waits --lock-wait seconds, then exits 1 naming it.

    Exit 0 success, 4 an operation failed, 5 not applied (declined, or no terminal and no
    --yes), 1 an error, 130 interrupted (at the question too). With --detailed-exitcode: 2
    changes made, 3 rows invalid or held back, 0 only when there was nothing to do.
    """
    from estatebot.api.client import Client
    from estatebot.listings.remote.pull import pull_listings
    from estatebot.listings.sync.sync_plan import plan_sync

    check_resume_flags(runs, resuming)
    fingerprint = sync_fingerprint(sheet, planning, guards, flags)
    with Client() as client, holding_chatbot(client, serial, wait=locking.lock_wait) as lock:
        guided = Guided(
            "sync", client, serial, runs, show, applying, progress, sheet=sheet, exits=exits,
            fingerprint=fingerprint, resume=resuming.resume, lock=lock,
            guards={**guards.options(), "force_identity_count": planning.force_identity_count},
        )  # fmt: skip
        guided.resume_if_interrupted()
        read = read_with_flags(sheet, flags, key=planning.key.value, progress=progress)
        # The pull keeps to --concurrency, as the apply does: it is how many requests at once
        # the service is asked to bear.
        remote = pull_listings(client, serial, concurrency=applying.concurrency, progress=progress)
        made = plan_sync(read, remote, **planning.options(), **guards.options())
        render_plan(
            guided.console, made, sheet=read, detail=show.detail, max_rows=show.max_rows,
            where=RUN_WORKBOOK,
        )  # fmt: skip
        guided.apply_new(made)
