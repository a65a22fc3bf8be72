"""``estatebot undo [RUN]``: reverse exactly what a run did, as a plan shown, asked and applied.

The run is a folder of the runs folder (the latest one that sent something when RUN is left
out); its plan, journal and backup say what it did. The undo is planned
(:func:`~estatebot.listings.sync.apply.undo.plan_undo`) and then guided like a sync
(:class:`~estatebot.cli.guided.Guided`): a run folder of its own, the question, a journaled and
backed-up apply, resumed by running the same command again after an interruption.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from estatebot.cli.flags.exit_options import ExitFlags
from estatebot.cli.flags.option_groups import with_flags
from estatebot.cli.flags.plan_options import ApplyFlags, ShowFlags
from estatebot.cli.flags.run_options import LockFlags, ResumeFlags
from estatebot.cli.flags.shared_options import ProgressOption, SerialOption, parse_pairs
from estatebot.cli.guided import RUN_WORKBOOK, Guided, RunFlags
from estatebot.cli.plan_view import render_plan
from estatebot.cli.report_view import shown_path
from estatebot.cli.resuming import check_resume_flags
from estatebot.cli.run_fingerprint import undo_fingerprint
from estatebot.cli.run_lock import holding_chatbot
from estatebot.cli.runs import latest_run

if TYPE_CHECKING:
    from estatebot.api.client import Client

__all__ = ["undo"]


@with_flags(
    runs=RunFlags,
    resuming=ResumeFlags,
    locking=LockFlags,
    show=ShowFlags,
    applying=ApplyFlags,
    exits=ExitFlags,
)
def undo(
    serial: SerialOption,
    run: Annotated[
        Path | None,
        typer.Argument(
            metavar="RUN",
            help="The run's folder (estatebot-runs/sync-...); default: the latest run in "
            "--runs-dir that sent something.",
            exists=True,
            file_okay=False,
            show_default=False,
        ),
    ] = None,
    default: Annotated[
        list[str] | None,
        typer.Option(
            "--default",
            metavar="FIELD=VALUE",
            help="A value for a field the service never shows (AreaUnit, Location), for the "
            "listings created again whose value nobody knows: --default 'AreaUnit=Square Feet'. "
            "Undo never guesses one.",
        ),
    ] = None,
    progress: ProgressOption = None,
    *,
    runs: RunFlags,
    resuming: ResumeFlags,
    locking: LockFlags,
    show: ShowFlags,
    applying: ApplyFlags,
    exits: ExitFlags,
) -> None:
    """Undo a run: delete the listings it created, set back the fields it changed, create again
    the listings it deleted.

    The plan is shown and asked for like a sync's (--yes for scheduled jobs), and applied with a
    journal and a backup in a run folder of its own; run the same command again after an
    interruption and it resumes. A listing changed on the service since the run is not
    overwritten: it is listed with the field, the run's value and the value now.

    Exit 0 success, 4 part of the work could not be done (a listing changed since the run, a
    unit nobody knows, an operation failed; with or without --detailed-exitcode), 5 not
    applied, 1 an error (no such run, a damaged one, another run on the chatbot past
    --lock-wait, an interrupted undo made with other --default values), 130 interrupted. With
    --detailed-exitcode: 2 changes made.
    """
    from estatebot.api.client import Client
    from estatebot.listings.sync.apply.run_record import check_undo_defaults
    from estatebot.listings.sync.apply.undo import plan_undo
    from estatebot.listings.sync.sync_plan import SyncPlan

    try:
        defaults = check_undo_defaults(parse_pairs(default, "--default"))
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--default") from None
    if run is None and not runs.runs_dir.is_dir():
        raise FileNotFoundError(
            f"no runs folder {shown_path(runs.runs_dir)}: nothing to undo (sync, cleanup and "
            "apply keep each run there; --runs-dir or ESTATEBOT_RUNS_DIR names another, or give "
            "the run's folder)"
        )
    check_resume_flags(runs, resuming)
    with Client() as client, holding_chatbot(client, serial, wait=locking.lock_wait) as lock:
        target = run if run is not None else _latest(runs.runs_dir, serial, client)
        guided = Guided(
            "undo", client, serial, runs, show, applying, progress, exits=exits, undoes=target,
            fingerprint=undo_fingerprint(default), resume=resuming.resume, lock=lock,
            # An undo deletes what its run created, all shown before it is applied.
            guards={"max_delete_fraction": 1.0},
        )  # fmt: skip
        guided.resume_if_interrupted()
        guided.console.print(f"Undoing the run in {shown_path(target)}.")
        _check_target(target)
        made = plan_undo(
            client, serial, target, defaults=defaults, sent_values=applying.sent(),
            concurrency=applying.concurrency, progress=progress,
        )  # fmt: skip
        render_plan(
            guided.console, made, detail=show.detail, max_rows=show.max_rows, where=RUN_WORKBOOK
        )
        guided.apply_new(SyncPlan.of(made))


def _check_target(target: Path) -> None:
    """The run to undo read back whole (its plan, journal and backup), or one line naming the
    file that cannot be read."""
    from estatebot.cli.run_health import check_backup, check_journal, check_plan
    from estatebot.cli.runs import RUN_FILE

    if not (target / "plan.json").is_file() and not (target / RUN_FILE).is_file():
        return  # no run folder: plan_undo says so in its own words
    ways = f"the run in {shown_path(target)} cannot be undone from its folder"
    plan = check_plan(target / "plan.json", ways)
    check_journal(target / "journal.jsonl", ways, plan=plan)
    check_backup(target / "backup.json", ways)


def _latest(root: Path, serial: str, client: Client) -> Path:
    """The latest run in ``root`` that sent something to this chatbot and service; an error
    naming the folder if there is none."""
    from estatebot.listings.remote.sent_record import service_address

    service = service_address(client) or ""
    found = latest_run(root, serial=serial, service=service)
    if found is None:
        raise FileNotFoundError(
            f"nothing to undo: no run in {shown_path(root)} sent anything to chatbot {serial} "
            f"at {service} (give the run's folder)"
        )
    return found.folder
