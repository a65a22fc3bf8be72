"""``estatebot apply``: carry out a saved plan exactly, journaled and backed up.

The journal and the backup belong to the run (:mod:`estatebot.cli.runs`): unless ``--journal``
and ``--backup`` name them, they are kept in a run folder bound to the plan, the chatbot and the
service, so applying the same plan again resumes it (nothing is done twice), and a new plan, or
the same file name planned afresh against another service, starts a journal of its own instead
of being refused by the last one's.

One run at a time per chatbot and service (:mod:`estatebot.cli.run_lock`): the lock is held
from loading the plan to the end of the apply. A run folder it would go on with whose journal
or backup cannot be read stops it with one line naming the file (:mod:`estatebot.cli.run_health`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from estatebot.cli.console import out_console
from estatebot.cli.execution import Files, carry_out, journal_progress, tracked
from estatebot.cli.flags.exit_options import ExitFlags
from estatebot.cli.flags.option_groups import with_flags
from estatebot.cli.flags.plan_options import ApplyFlags, ForceIdentityOption, GuardFlags
from estatebot.cli.flags.run_options import LockFlags
from estatebot.cli.flags.shared_options import ProgressOption, SerialOption
from estatebot.cli.guided import RunsDirOption
from estatebot.cli.report_view import render_report, shown_path
from estatebot.cli.run_health import check_backup, check_journal
from estatebot.cli.run_lock import holding_chatbot
from estatebot.cli.runs import (
    RUNS_DIR,
    Run,
    file_digest,
    find_run_of_plan,
    new_run,
    resume_ways,
    run_of_plan,
)

if TYPE_CHECKING:
    from estatebot.listings.sync.sync_plan import SyncPlan

__all__ = ["apply"]


@with_flags(applying=ApplyFlags, guards=GuardFlags, locking=LockFlags, exits=ExitFlags)
def apply(
    plan_file: Annotated[
        Path,
        typer.Argument(
            metavar="PLAN",
            help="A plan saved by `estatebot plan` (or by `sync` in its run folder).",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ],
    serial: SerialOption,
    journal: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="The journal (default: journal.jsonl in the run's folder). Run the same "
            "command again to resume: what is done is not done again.",
        ),
    ] = None,
    backup: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="Before-image of the listings changed, .json or .xlsx (default: backup.json "
            "in the run's folder); `estatebot restore` puts it back.",
        ),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="Write the report as xlsx (default: report.xlsx in the run's folder).",
        ),
    ] = None,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=0, help="Operations not done listed (0: all).")
    ] = 50,
    progress: ProgressOption = None,
    runs_dir: RunsDirOption = RUNS_DIR,
    force_identity_count: ForceIdentityOption = None,
    *,
    applying: ApplyFlags,
    guards: GuardFlags,
    locking: LockFlags,
    exits: ExitFlags,
) -> None:
    """Apply a saved plan exactly: journaled, backed up, refused when stale.

    The plan's guards are checked again against the service as it is, whatever the file says:
    more deletes (or changes of MLSNumber or Url) than --max-delete-fraction need
    --force-delete-count (--force-identity-count) with their exact number.

    The journal, the backup and the report go in a run folder of --runs-dir (a copy of the plan
    too); the same command run again resumes that run: what is done is not done again.

    Exit 0 when every operation is done, 4 when any failed (the report lists them), 1 on an
    error (nothing written: a stale or altered plan, a guard passed, the service unreachable,
    another run on the chatbot past --lock-wait, a damaged run folder), 130 when interrupted
    (it prints the command that resumes). With --detailed-exitcode: 2 when changes were made,
    3 when the plan has rows invalid or held back.
    """
    from estatebot.api.client import Client
    from estatebot.listings.remote.sent_record import service_address

    console = out_console()
    with Client() as client, holding_chatbot(client, serial, wait=locking.lock_wait) as lock:
        loaded = _load(plan_file)
        service = service_address(client) or ""
        run, files = _run_files(plan_file, serial, service, runs_dir, journal, backup)
        if run is not None:
            lock.note_run_folder(run.folder)
            _check_files(run, files, loaded, serial)
        console.print(f"Applying {shown_path(plan_file)}: {loaded.summary()}")
        _say_resumed(run, files, len(loaded.operations()))
        # In a run folder (this apply's, or that of `sync` or `cleanup` whose plan it is):
        # resuming it here finishes that run too.
        with tracked(run, files):
            checked = {**guards.options(), "force_identity_count": force_identity_count}
            result = carry_out(
                loaded, client, serial, files, applying, progress=progress, guards=checked
            )
    target = report if report is not None else run.report_path if run is not None else None
    if target is not None:
        result.to_excel(target)
    render_report(console, result, max_rows=max_rows)
    if target is not None:
        console.print(f"  report:  {shown_path(target)}")
    raise typer.Exit(exits.applied_code(loaded, result))


def _run_files(
    plan_file: Path,
    serial: str,
    service: str,
    runs_dir: Path,
    journal: Path | None,
    backup: Path | None,
) -> tuple[Run | None, Files]:
    """The run an apply of ``plan_file`` belongs to, and where its journal and backup go.

    A plan saved in a run folder by ``sync`` or ``cleanup`` belongs to that run. Otherwise the
    run of the same plan (by its digest) on this chatbot and service is taken up again, or a new
    one made; only when both ``--journal`` and ``--backup`` are given is there no run folder.
    """
    owner = run_of_plan(plan_file)
    if owner is None and journal is not None and backup is not None:
        return None, Files(plan=plan_file, journal=journal, backup=backup)
    if owner is None:
        digest = file_digest(plan_file)
        owner = find_run_of_plan(runs_dir, serial=serial, service=service, plan_digest=digest)
        if owner is None:
            owner = new_run(runs_dir, "apply", serial=serial, service=service, plan_digest=digest)
            # A copy of the plan: the run folder tells, on its own, what the run was to do.
            shutil.copyfile(plan_file, owner.plan_path)
    files = Files(
        plan=plan_file,
        journal=journal or owner.journal_path,
        backup=backup or owner.backup_path,
    )
    return owner, files


def _say_resumed(run: Run | None, files: Files, total: int) -> None:
    """In a run folder: say where the journal goes, or how far it got when it goes on with one.

    Files named with ``--journal`` and ``--backup`` are the person's own: nothing to say.
    """
    if run is None:
        return
    if not files.journal.exists():
        out_console().print(f"Its journal and backup go in {shown_path(run.folder)}.")
        return
    done, _ = journal_progress(files.journal)
    out_console().print(
        f"Going on with the journal {shown_path(files.journal)}: {done} of {total} operations "
        "are done and are not done again."
    )


def _check_files(run: Run, files: Files, plan: SyncPlan, serial: str) -> None:
    """The journal and backup of the run folder this apply goes on with, read back whole: a
    damaged one is named before anything is sent (files given with --journal and --backup are
    the person's own, and the apply reads them itself)."""
    ways = resume_ways("apply", run.folder)
    if files.journal.resolve() == run.journal_path.resolve():
        check_journal(files.journal, ways, plan=plan, serial=serial)
    if files.backup.resolve() == run.backup_path.resolve():
        check_backup(files.backup, ways)


def _load(path: Path) -> SyncPlan:
    """The plan saved in ``path``; an error naming the file and what it holds instead when it
    holds none (:meth:`~estatebot.listings.sync.plan.artifact.PlanArtifact.load`)."""
    from estatebot.listings.sync.sync_plan import SyncPlan

    return SyncPlan.load(path)
