"""``estatebot fleet plan|sync|cleanup|undo|test-chat MANIFEST``: many chatbots as one change.

Every command reads the manifest (a row per chatbot; bad rows are shown as a sheet's are and
left out), plans every chatbot on the executor (threads here, or a Dask cluster with
``--dask``), shows one table, asks once, and applies every chatbot in one run folder
(``estatebot-runs/fleet-KIND-.../``, a folder per chatbot with its plan, journal, backup and
report). Run again after an interruption (Ctrl-C, a kill, a lost worker), the same command on
the same manifest finishes the run first: every chatbot goes on with its own journal, so
nothing is sent twice (``--no-resume`` abandons it and plans afresh).

Exit codes are the single commands', over the fleet: 0 success; 4 a chatbot failed (an
operation, or it could not be planned or applied); 5 not applied; 1 an error of the fleet
itself (the manifest, a worker that cannot reach the run folder); with
``--detailed-exitcode``, 2 changes and 3 rows invalid or held back, over every chatbot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.text import Text

from estatebot.cli.codes import ExitCode
from estatebot.cli.confirm import Answer, ask_to_apply
from estatebot.cli.console import out_console, safe
from estatebot.cli.error_messages import in_cli_terms
from estatebot.cli.flags.plan_options import BlankLocationOption
from estatebot.cli.flags.shared_options import ProgressOption, listing_statuses
from estatebot.cli.fleet_view import render_fleet_table
from estatebot.cli.guided import RunsDirOption
from estatebot.cli.report_view import shown_path
from estatebot.cli.runs import RUNS_DIR

if TYPE_CHECKING:
    from estatebot.fleet.fleet_plan import FleetPlan
    from estatebot.fleet.fleet_report import FleetReport
    from estatebot.fleet.manifest import Manifest
    from estatebot.fleet.run_folder import FleetRun

__all__ = ["fleet_app"]

fleet_app = typer.Typer(
    name="fleet",
    help="Many chatbots at once, from a manifest (a row per chatbot): plan, sync, cleanup, "
    "undo and test-chat as one reviewed change.",
    no_args_is_help=True,
    rich_markup_mode="rich",
)

ManifestArgument = Annotated[
    Path,
    typer.Argument(
        help="The fleet manifest: .csv, .xlsx, .ods or .toml, a row per chatbot (serial, "
        "sheet, where, key, delete_missing, defaults, the keys' environment variables).",
        exists=True,
        dir_okay=False,
        readable=True,
    ),
]
DaskOption = Annotated[
    str | None,
    typer.Option(
        "--dask",
        metavar="ADDRESS",
        envvar="ESTATEBOT_DASK",
        help="Run each chatbot as a task on the Dask cluster at ADDRESS (tcp://host:8786); "
        "the run folder must be on a path every worker reaches. Needs estatebot[dask].",
        rich_help_panel="Fleet",
    ),
]
WorkersOption = Annotated[
    int,
    typer.Option(
        "--workers", min=1, max=256, help="Chatbots worked on at once (without --dask).",
        rich_help_panel="Fleet",
    ),
]  # fmt: skip
InFlightOption = Annotated[
    int,
    typer.Option(
        "--max-in-flight",
        min=0,
        help="Most requests in flight per service across the fleet (0: no cap). A 429 holds "
        "off every chatbot of that service.",
        rich_help_panel="Fleet",
    ),
]
YesOption = Annotated[
    bool,
    typer.Option(
        "--yes", "-y", help="Apply without asking (for scheduled jobs; without a terminal it "
        "is needed).", rich_help_panel="Applying",
    ),
]  # fmt: skip
NoResumeOption = Annotated[
    bool,
    typer.Option(
        "--no-resume",
        help="Plan afresh even when an earlier fleet run of this manifest was interrupted "
        "(it is then abandoned).",
        rich_help_panel="Applying",
    ),
]
DetailedOption = Annotated[
    bool,
    typer.Option(
        "--detailed-exitcode",
        help="Exit 2 when there are changes and 3 when rows are invalid or held back, over "
        "the whole fleet. Without it success is 0.",
        rich_help_panel="Exit codes",
    ),
]
DeleteFractionOption = Annotated[
    float,
    typer.Option(
        "--max-delete-fraction",
        min=0.0,
        max=1.0,
        help="The share of each chatbot's listings its plan may delete (checked again at "
        "apply, against the listings as they are then).",
        rich_help_panel="Planning",
    ),
]
MaxRowsOption = Annotated[
    int, typer.Option("--max-rows", min=0, help="Chatbots listed in the table (0: all).")
]


@dataclass(frozen=True)
class _Run:
    """What every fleet command that applies shares."""

    runs_dir: Path
    yes: bool
    no_resume: bool
    detailed: bool
    dask: str | None
    workers: int
    max_in_flight: int
    max_rows: int
    progress: bool | None

    def executor(self) -> Any:
        if self.dask is None:
            return None
        from estatebot.fleet.executors import dask_client_at

        return dask_client_at(self.dask)

    def pool_options(self, executor: Any) -> dict[str, Any]:
        return {
            "executor": executor, "workers": self.workers, "max_in_flight": self.max_in_flight,
            "progress": self.progress,
        }  # fmt: skip


def _read_manifest(path: Path, max_rows: int) -> Manifest:
    from estatebot.fleet.manifest import read_manifest

    manifest = read_manifest(path)
    console = out_console()
    issues = manifest.issues
    if len(issues):
        left_out = issues.loc[issues["severity"] == "error", "row"].dropna().nunique()
        head = f"{shown_path(path)}: {len(manifest.entries)} chatbots"
        if left_out:
            head += f"; {left_out} row{'s' if left_out != 1 else ''} left out:"
        console.print(Text(head, style="bold yellow" if left_out else "bold"))
        limit = len(issues) if max_rows <= 0 else max_rows
        for record in issues.head(limit).to_dict("records"):
            where = f"row {record['row']}" if record.get("row") == record.get("row") else "file"
            column = record.get("column") or ""
            line = Text(
                f"  {record['severity']} ", "red" if record["severity"] == "error" else "yellow"
            )
            line.append(safe(f"{where}, {column}: " if column else f"{where}: ", one_line=True))
            line.append(safe(in_cli_terms(str(record["message"])), one_line=True))
            console.print(line)
    return manifest


def _close(executor: Any) -> None:
    if executor is not None:
        executor.close()


def _fleet_code(plan: FleetPlan | None, report: FleetReport | None, detailed: bool) -> ExitCode:
    """The single commands' codes over the fleet: 4 when any chatbot failed (an operation, or
    it could not be planned), else 0; with ``detailed``, 3 rows invalid or held back, 2
    changes."""
    if plan is not None and plan.errors:
        return ExitCode.FAILED
    if report is not None and not report.ok:
        return ExitCode.FAILED
    if not detailed:
        return ExitCode.OK
    if plan is not None:
        counts = plan.counts()
        if counts["invalid"] or counts["held back"]:
            return ExitCode.ROWS_NOT_SYNCED
        if report is None:
            return ExitCode.OK if plan.is_empty else ExitCode.CHANGES
    if report is not None and report.made_changes():
        return ExitCode.CHANGES
    return ExitCode.OK


def _show_plan(plan: FleetPlan, run: _Run) -> None:
    render_fleet_table(
        out_console(), f"Fleet {plan.kind}: {plan.summary()}", plan.to_frame(),
        max_rows=run.max_rows, where="the run's plan.xlsx",
    )  # fmt: skip


def _apply_planned(plan: FleetPlan, run: _Run, executor: Any, **apply_options: Any) -> NoReturn:
    """Seal ``plan`` in a new fleet run, ask once, apply every chatbot, report."""
    from estatebot.fleet.run_folder import FleetRun

    console = out_console()
    _show_plan(plan, run)
    if plan.is_empty:
        console.print(Text("Nothing to apply: every chatbot is in step.", "bold green"))
        raise typer.Exit(_fleet_code(plan, None, run.detailed))
    fleet_run = FleetRun.new(
        run.runs_dir, plan.kind, plan.manifest.path, plan.manifest.digest,
        fingerprint=plan.fingerprint, undoes=plan.undoes,
    )  # fmt: skip
    plan.seal(fleet_run)
    changing = sum(1 for item in plan.chatbots if item.plan is not None and not item.plan.is_empty)
    console.print(
        f"Saved in {shown_path(fleet_run.folder)}: plan.xlsx, the fleet's table, and a folder per "
        "chatbot with its sealed plan.json."
    )
    answer = ask_to_apply(
        f"Apply these plans to {changing} chatbot{'s' if changing != 1 else ''}?", yes=run.yes
    )
    if answer is not Answer.APPROVED:
        fleet_run.mark("declined")
        _not_applied(answer, fleet_run)
    _carry_out(fleet_run, plan, run, executor, **apply_options)


def _carry_out(
    fleet_run: FleetRun, plan: FleetPlan | None, run: _Run, executor: Any, **apply_options: Any
) -> NoReturn:
    from estatebot.fleet.fleet_plan import run_fleet

    console = out_console()
    manifest = plan.manifest if plan is not None else _manifest_of(fleet_run)
    try:
        report = run_fleet(
            fleet_run, manifest, plan=plan, options=apply_options, **run.pool_options(executor),
        )  # fmt: skip
    except KeyboardInterrupt:
        # The chatbots not begun were cancelled and those being applied ended their apply
        # (each with its journal): the run is left `applying`, for the same command to finish.
        console.print(
            Text(
                f"\nInterrupted: the fleet run in {shown_path(fleet_run.folder)} is left to "
                "resume. Run the same command again: every chatbot goes on with its journal, "
                "so nothing is sent twice.",
                style="bold yellow",
            )
        )
        raise typer.Exit(ExitCode.INTERRUPTED) from None
    console.print()
    render_fleet_table(
        console, f"Fleet {fleet_run.kind}: {report.summary()}", report.to_frame(),
        max_rows=run.max_rows, where="the run's fleet.xlsx",
    )  # fmt: skip
    for note in report.notes:
        console.print(Text(f"  note: {safe(in_cli_terms(note), one_line=True)}", "dim"))
    console.print(
        f"  reports: {shown_path(fleet_run.folder)} (fleet.xlsx, and a folder per chatbot)"
    )
    if fleet_run.kind != "undo":
        console.print(f"  undo:    estatebot fleet undo {shown_path(fleet_run.folder)}")
    raise typer.Exit(_fleet_code(plan, report, run.detailed))


def _manifest_of(fleet_run: FleetRun) -> Manifest:
    from estatebot.fleet.manifest import read_manifest
    from estatebot.fleet.run_folder import FleetRunError

    manifest = read_manifest(fleet_run.manifest)
    if manifest.digest != fleet_run.manifest_digest:
        raise FleetRunError(
            f"the manifest {fleet_run.manifest} changed since the fleet run in "
            f"{shown_path(fleet_run.folder)} began; put it back as it was to finish that run, "
            "or pass --no-resume to abandon it"
        )
    return manifest


def _not_applied(answer: Answer, fleet_run: FleetRun) -> NoReturn:
    console = out_console()
    if answer is Answer.NO_TERMINAL:
        text = "Not applied: no terminal to ask on; pass --yes to apply without asking."
    elif answer is Answer.INTERRUPTED:
        text = "Interrupted at the question: not applied."
    else:
        text = "Not applied."
    console.print(Text(text, style="bold yellow"))
    console.print(f"The plans are kept in {shown_path(fleet_run.folder)}.")
    raise typer.Exit(ExitCode.INTERRUPTED if answer is Answer.INTERRUPTED else ExitCode.NOT_APPLIED)


def _resume_if_interrupted(kind: str, manifest: Manifest, run: _Run, executor: Any) -> None:
    """Finish this manifest's interrupted fleet run of ``kind`` (and exit), or return."""
    from estatebot.fleet.chatbot_work import APPLIED_FILE
    from estatebot.fleet.run_folder import find_unfinished_fleet

    found = find_unfinished_fleet(run.runs_dir, kind, manifest.digest)
    if found is None:
        return
    console = out_console()
    if run.no_resume:
        found.mark("abandoned")
        console.print(
            Text(f"The interrupted fleet run in {shown_path(found.folder)} is abandoned "
                 "(--no-resume).")
        )  # fmt: skip
        return
    folders = [found.folder / name for name in found.chatbots.values()]
    left = [folder for folder in folders if not (folder / APPLIED_FILE).exists()]
    console.print(
        Text(
            f"Resuming the fleet {kind} interrupted in {shown_path(found.folder)} (started "
            f"{found.started}): {len(folders) - len(left)} of {len(folders)} chatbots were "
            f"done, {len(left)} go on with their journals, so nothing is sent twice "
            "(--no-resume plans afresh).",
            style="bold",
        )
    )
    answer = ask_to_apply(f"Resume applying to {len(left)} chatbots?", yes=run.yes)
    if answer is not Answer.APPROVED:
        _not_applied(answer, found)
    _carry_out(found, None, run, executor)


def _options(
    runs_dir: Path, yes: bool, no_resume: bool, detailed: bool, dask: str | None, workers: int,
    max_in_flight: int, max_rows: int, progress: bool | None,
) -> _Run:  # fmt: skip
    return _Run(runs_dir, yes, no_resume, detailed, dask, workers, max_in_flight, max_rows,
                progress)  # fmt: skip


@fleet_app.command("plan")
def fleet_plan(
    manifest: ManifestArgument,
    dask: DaskOption = None,
    workers: WorkersOption = 8,
    max_in_flight: InFlightOption = 32,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", dir_okay=False, help="The fleet's table as .xlsx."),
    ] = None,
    blank_unknown_location: BlankLocationOption = False,
    detailed_exitcode: DetailedOption = False,
    max_rows: MaxRowsOption = 50,
    progress: ProgressOption = None,
) -> None:
    """Plan every chatbot of the manifest and show the fleet's table; nothing is sent.

    Exit 0, 4 when a chatbot could not be planned (its error is shown), 1 an error of the
    manifest. With --detailed-exitcode: 2 changes, 3 rows invalid or held back.
    """
    from estatebot.fleet.fleet_plan import plan_fleet

    run = _options(RUNS_DIR, False, False, detailed_exitcode, dask, workers, max_in_flight,
                   max_rows, progress)  # fmt: skip
    read = _read_manifest(manifest, max_rows)
    executor = run.executor()
    try:
        made = plan_fleet(
            read, blank_unknown_location=blank_unknown_location, **run.pool_options(executor)
        )
    finally:
        _close(executor)
    _show_plan(made, run)
    if out is not None:
        made.to_excel(out)
        out_console().print(f"The fleet's table: {shown_path(out)}")
    raise typer.Exit(_fleet_code(made, None, run.detailed))


@fleet_app.command("sync")
def fleet_sync(
    manifest: ManifestArgument,
    yes: YesOption = False,
    runs_dir: RunsDirOption = RUNS_DIR,
    no_resume: NoResumeOption = False,
    dask: DaskOption = None,
    workers: WorkersOption = 8,
    max_in_flight: InFlightOption = 32,
    blank_unknown_location: BlankLocationOption = False,
    max_delete_fraction: DeleteFractionOption = 0.2,
    detailed_exitcode: DetailedOption = False,
    max_rows: MaxRowsOption = 50,
    progress: ProgressOption = None,
) -> None:
    """Sync every chatbot of the manifest to its sheet, asked once, in one run folder.

    Plans every chatbot, shows one table, asks once, and applies every chatbot in one run
    folder (a folder per chatbot: plan, journal, backup, report).

    Run again after an interruption, it finishes that run first. Exit 0 success, 4 a chatbot
    failed, 5 not applied, 1 an error, 130 interrupted; with --detailed-exitcode, 2 changes
    made and 3 rows invalid or held back.
    """
    from estatebot.fleet.fleet_plan import plan_fleet

    run = _options(runs_dir, yes, no_resume, detailed_exitcode, dask, workers, max_in_flight,
                   max_rows, progress)  # fmt: skip
    read = _read_manifest(manifest, max_rows)
    executor = run.executor()
    try:
        _resume_if_interrupted("sync", read, run, executor)
        made = plan_fleet(
            read, blank_unknown_location=blank_unknown_location,
            max_delete_fraction=max_delete_fraction, **run.pool_options(executor),
        )  # fmt: skip
        _apply_planned(made, run, executor, max_delete_fraction=max_delete_fraction)
    finally:
        _close(executor)


@fleet_app.command("cleanup")
def fleet_cleanup(
    manifest: ManifestArgument,
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            callback=listing_statuses,
            help="Delete listings with this Status (repeatable; default Sold).",
        ),
    ] = None,
    min_days_on_market: Annotated[
        int | None,
        typer.Option(
            "--min-days-on-market",
            min=0,
            help="Delete listings on the market at least this many days.",
        ),
    ] = None,
    max_delete_fraction: DeleteFractionOption = 0.2,
    yes: YesOption = False,
    runs_dir: RunsDirOption = RUNS_DIR,
    no_resume: NoResumeOption = False,
    dask: DaskOption = None,
    workers: WorkersOption = 8,
    max_in_flight: InFlightOption = 32,
    detailed_exitcode: DetailedOption = False,
    max_rows: MaxRowsOption = 50,
    progress: ProgressOption = None,
) -> None:
    """Delete stale listings of every chatbot of the manifest by one rule, asked once.

    The rule is --status and --min-days-on-market, as for `estatebot cleanup`; each chatbot's
    deletes are guarded, journaled and backed up in its folder of the run.

    Exit codes as for `fleet sync`.
    """
    from estatebot.fleet.fleet_plan import plan_fleet_cleanup

    run = _options(runs_dir, yes, no_resume, detailed_exitcode, dask, workers, max_in_flight,
                   max_rows, progress)  # fmt: skip
    read = _read_manifest(manifest, max_rows)
    statuses = status if status else (["Sold"] if min_days_on_market is None else None)
    executor = run.executor()
    try:
        _resume_if_interrupted("cleanup", read, run, executor)
        made = plan_fleet_cleanup(
            read, status=statuses, min_days_on_market=min_days_on_market,
            max_delete_fraction=max_delete_fraction, **run.pool_options(executor),
        )  # fmt: skip
        _apply_planned(made, run, executor, max_delete_fraction=max_delete_fraction)
    finally:
        _close(executor)


@fleet_app.command("undo")
def fleet_undo(
    run_folder: Annotated[
        Path | None,
        typer.Argument(
            help="The fleet run to undo (estatebot-runs/fleet-sync-...); default the latest "
            "fleet sync or cleanup in --runs-dir.",
            file_okay=False,
        ),
    ] = None,
    yes: YesOption = False,
    runs_dir: RunsDirOption = RUNS_DIR,
    dask: DaskOption = None,
    workers: WorkersOption = 8,
    max_in_flight: InFlightOption = 32,
    detailed_exitcode: DetailedOption = False,
    max_rows: MaxRowsOption = 50,
    progress: ProgressOption = None,
) -> None:
    """Undo a fleet run: every chatbot it changed gets its listings back, asked once.

    What the run created is deleted, what it updated or deleted is put back as it was; a
    listing changed since is left as it is and named. Journaled and backed up like any run.

    Exit 0, 4 a chatbot failed or a listing is left as it is, 5 not applied, 1 an error.
    """
    from estatebot.fleet.fleet_plan import plan_fleet_undo
    from estatebot.fleet.run_folder import FleetRunError, latest_fleet

    run = _options(runs_dir, yes, False, detailed_exitcode, dask, workers, max_in_flight,
                   max_rows, progress)  # fmt: skip
    if run_folder is None:
        found = latest_fleet(runs_dir, ("sync", "cleanup"))
        if found is None:
            raise FleetRunError(
                f"no fleet run to undo in {shown_path(runs_dir)}: name one "
                "(estatebot fleet undo estatebot-runs/fleet-sync-...)"
            )
        run_folder = found.folder
    executor = run.executor()
    try:
        made = plan_fleet_undo(run_folder, **run.pool_options(executor))
        left = made.counts()["invalid"] + made.counts()["held back"]
        if left:
            out_console().print(
                Text(f"{left} listings changed since the run are left as they are (see each "
                     "chatbot's plan).", "bold yellow")
            )  # fmt: skip
        if made.is_empty:
            _show_plan(made, run)
            out_console().print(Text("Nothing to undo.", "bold green"))
            raise typer.Exit(ExitCode.FAILED if left else _fleet_code(made, None, run.detailed))
        _apply_planned(made, run, executor)
    finally:
        _close(executor)


@fleet_app.command("test-chat")
def fleet_test_chat(
    manifest: ManifestArgument,
    cases: Annotated[
        Path | None,
        typer.Argument(
            help="Test cases for every chatbot whose manifest row names none (tests column).",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out-dir",
            file_okay=False,
            help="A folder for each chatbot's results workbook and the fleet's.",
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option(min=1, max=64, help="Cases asked at once per chatbot.")
    ] = 2,
    dask: DaskOption = None,
    workers: WorkersOption = 8,
    max_in_flight: InFlightOption = 32,
    max_rows: MaxRowsOption = 50,
    progress: ProgressOption = None,
) -> None:
    """Run chat test cases against every chatbot of the manifest: one table of results.

    With --out-dir, a results workbook per chatbot and the fleet's table are kept there.

    Exit 0 when every case of every chatbot passed, 4 when any failed (or a chatbot could not
    be tested), 1 an error.
    """
    from estatebot.fleet.fleet_chat import run_fleet_chat_tests

    run = _options(RUNS_DIR, False, False, False, dask, workers, max_in_flight, max_rows,
                   progress)  # fmt: skip
    read = _read_manifest(manifest, max_rows)
    executor = run.executor()
    try:
        results = run_fleet_chat_tests(
            read, cases, out_dir=out_dir, concurrency=concurrency, **run.pool_options(executor)
        )
    finally:
        _close(executor)
    render_fleet_table(
        out_console(), f"Fleet chat tests: {results.summary()}", results.to_frame(),
        max_rows=max_rows, where="--out-dir's fleet.xlsx",
    )  # fmt: skip
    if out_dir is not None:
        out_console().print(f"Results: {shown_path(out_dir)}")
    raise typer.Exit(ExitCode.OK if results.ok else ExitCode.FAILED)
