"""The guided apply of ``sync``, ``cleanup`` and ``undo``: save, ask, apply, report, resume.

Each command shows the plan it made (:func:`~estatebot.cli.plan_view.render_plan`) and hands it
to :meth:`Guided.apply_new`, which takes it to its end and exits once, with the code of what
came of it (:func:`~estatebot.cli.codes.exit_code`). A plan with something to do gets a run
folder (:mod:`~estatebot.cli.runs`) holding the plan, its workbook, the journal, the backup and
the report; the person is asked (``--yes`` for jobs; without a terminal nothing is asked and
nothing applied); the apply is journaled and backed up; the report is shown and saved. The
same command run again after an interruption finds the run still ``applying`` and resumes its
plan, unless ``--no-resume``; a command that asks for something else is refused, and a damaged
run folder named (the rules are in :mod:`~estatebot.cli.resuming`).

An ``undo`` is such a run too, bound to the run it undoes; what it cannot do (a listing changed
since that run, a unit nobody knows) makes it exit 4, "part of the work could not be done".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.text import Text

from estatebot.cli.codes import ExitCode
from estatebot.cli.confirm import Answer, ask_to_apply
from estatebot.cli.console import out_console
from estatebot.cli.execution import Files, carry_out, resume_command, tracked
from estatebot.cli.flags.exit_options import ExitFlags
from estatebot.cli.flags.plan_options import ApplyFlags, ShowFlags
from estatebot.cli.plan_view import render_plan
from estatebot.cli.report_view import render_report, shown_path
from estatebot.cli.resuming import NothingToResumeError, ResumeRefusedError, remaining
from estatebot.cli.run_fingerprint import Fingerprint, differences
from estatebot.cli.run_health import check_run
from estatebot.cli.runs import (
    RUNS_DIR,
    DamagedRunError,
    Kind,
    Run,
    damaged_unfinished,
    find_unfinished,
    new_run,
    resume_ways,
    set_aside,
)

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.sync.apply.held_lock import HeldLock
    from estatebot.listings.sync.report.apply_report import ApplyReport
    from estatebot.listings.sync.sync_plan import SyncPlan

__all__ = ["RUN_WORKBOOK", "Guided", "RunFlags", "RunsDirOption"]

#: Where every row of a plan that a guided run shows is found: the run's workbook (named in
#: the "... and N more" line of a section the terminal cuts short).
RUN_WORKBOOK = "the run's plan.xlsx"

#: ``--runs-dir``: where each run keeps its files (``sync``, ``cleanup`` and ``apply``).
RunsDirOption = Annotated[
    Path,
    typer.Option(
        "--runs-dir",
        file_okay=False,
        envvar="ESTATEBOT_RUNS_DIR",
        help="Where each run keeps its plan, journal, backup and report.",
        rich_help_panel="Applying",
    ),
]


@dataclass(frozen=True)
class RunFlags:
    """Where runs are kept, and whether to ask."""

    yes: Annotated[
        bool,
        typer.Option(
            "--yes",
            "-y",
            help="Apply without asking (for scheduled jobs; without a terminal it is needed).",
            rich_help_panel="Applying",
        ),
    ] = False
    runs_dir: RunsDirOption = RUNS_DIR
    no_resume: Annotated[
        bool,
        typer.Option(
            "--no-resume",
            help="Plan afresh even when an earlier run was interrupted (it is then abandoned).",
            rich_help_panel="Applying",
        ),
    ] = False


@dataclass
class Guided:
    """One guided run of ``kind`` on the chatbot ``serial``."""

    kind: Kind
    client: Client
    serial: str
    runs: RunFlags
    show: ShowFlags
    applying: ApplyFlags
    progress: bool | None
    sheet: Path | None = None
    #: ``--detailed-exitcode``: whether changes (2) and rows not synced (3) are told apart.
    exits: ExitFlags = field(default_factory=ExitFlags)
    #: ``undo``: the folder of the run it undoes (an interrupted undo of it is resumed).
    undoes: Path | None = None
    #: What shaped this command's plan (stored in a new run's ``run.json``): an interrupted
    #: run is resumed only by a command with the same (see :mod:`~estatebot.cli.resuming`).
    fingerprint: Fingerprint = field(default_factory=dict)
    #: ``--resume``: finish the interrupted run whatever this command asks.
    resume: bool = False
    #: The run lock held (told the run's folder once there is one).
    lock: HeldLock | None = None
    #: The command's guard flags, checked again by the apply against the service as it is
    #: (a resumed plan is read back from its file, which is never trusted for them).
    guards: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from estatebot.listings.remote.sent_record import service_address

        self.console = out_console()
        #: The service's address, which a run is bound to (never a credential).
        self.service = service_address(self.client) or ""

    # -- resuming

    def resume_if_interrupted(self) -> None:
        """Resume the run this command left interrupted (and exit), or return to plan afresh;
        refuse one made by another command, or one that cannot be read (see the module)."""
        self._damaged_records()
        run = find_unfinished(
            self.runs.runs_dir, self.kind, serial=self.serial, service=self.service,
            sheet=self.sheet, undoes=self.undoes,
        )  # fmt: skip
        if run is None:
            if self.resume:
                raise NothingToResumeError(
                    f"nothing to resume: no {self.kind} {self._of()}is left interrupted in "
                    f"{shown_path(self.runs.runs_dir)} for chatbot {self.serial} at "
                    f"{self.service} (without --resume, the command plans afresh)"
                )
            return
        if self.runs.no_resume:
            run.mark("abandoned")
            self.console.print(
                Text(f"The interrupted run in {shown_path(run.folder)} is abandoned (--no-resume).")
            )
            return
        plan = check_run(run, resume_ways(self.kind, run.folder))
        said = differences(run.fingerprint, self.fingerprint)
        if said and not self.resume:
            raise ResumeRefusedError(
                f"the {self.kind} interrupted in {shown_path(run.folder)} (started "
                f"{run.started}) was planned by another command: {'; '.join(said)}. Nothing "
                "was done. --resume finishes that run's plan as it was made; --no-resume "
                "abandons it and plans afresh"
            )
        self._resume_checked(run, plan, said)

    def _of(self) -> str:
        if self.sheet is not None:
            return f"of {shown_path(self.sheet)} "
        if self.undoes is not None:
            return f"of {shown_path(self.undoes)} "
        return ""

    def _damaged_records(self) -> None:
        """A damaged run folder of this kind that may be this chatbot's: set aside with
        ``--no-resume``, else the end of the command (nobody can tell what it was)."""
        found = damaged_unfinished(
            self.runs.runs_dir, self.kind, serial=self.serial, service=self.service
        )
        if found and not self.runs.no_resume:
            damaged = found[-1]
            raise DamagedRunError(
                damaged.file, damaged.problem, resume_ways(self.kind, damaged.folder)
            )
        for damaged in found:
            set_aside(damaged)
            self.console.print(
                Text(
                    f"The run in {shown_path(damaged.folder)}, whose {damaged.file.name} is "
                    f"damaged ({damaged.problem}), is set aside (--no-resume).",
                )
            )

    def _resume_checked(self, run: Run, plan: SyncPlan, said: list[str]) -> NoReturn:
        """Show what is left of ``run``'s plan, ask, and apply it with the run's journal."""
        from estatebot.listings.sync.apply.journal_records import read_journal

        records = read_journal(run.journal_path).records()
        done = {name for name, record in records.items() if record.done}
        left = remaining(plan, done)
        total, todo = len(plan.operations()), len(left.operations())
        self.console.print(
            Text(
                f"Resuming the {self.kind} interrupted in {shown_path(run.folder)} (started "
                f"{run.started}): {total - todo} of {total} operations were done, {todo} are "
                "left. Its plan goes on with its journal and backup, so nothing is done twice "
                "(--no-resume plans afresh).",
                style="bold",
            )
        )
        if said:
            self.console.print(
                Text(f"Resumed as asked (--resume), although {'; '.join(said)}.", "yellow")
            )
        render_plan(
            self.console, left, detail=self.show.detail, max_rows=self.show.max_rows,
            where=RUN_WORKBOOK,
        )  # fmt: skip
        report = self._apply_in(run, plan, resumed=True)
        raise typer.Exit(self.exits.code(plan, report, undo=self.kind == "undo"))

    # -- a new plan

    def apply_new(self, plan: SyncPlan) -> NoReturn:
        """Carry out ``plan``, which the command has shown (pointing at :data:`RUN_WORKBOOK`):
        when it has work, save it in a new run, ask, apply and report; then exit with the code
        of what came of it."""
        report: ApplyReport | None = None
        if plan.is_empty:
            self.console.print(self._nothing_to_do(plan))
        else:
            run = new_run(
                self.runs.runs_dir, self.kind, serial=self.serial, service=self.service,
                sheet=self.sheet, undoes=self.undoes,
            )  # fmt: skip
            report = self._apply_in(run, plan, resumed=False)
        raise typer.Exit(self.exits.code(plan, report, undo=self.kind == "undo"))

    def _nothing_to_do(self, plan: SyncPlan) -> Text:
        if self.kind == "undo":
            if plan.invalid or plan.held_back:
                return Text("Nothing to undo; the listings above are left as they are.", "bold red")
            return Text(
                "Nothing to undo: the listings are as they were before the run.", "bold green"
            )
        if plan.invalid or plan.held_back:
            return Text("Nothing to apply; the rows above are not synced.", style="bold yellow")
        if self.kind == "cleanup":
            return Text("Nothing to apply: no listing matches.", style="bold green")
        return Text("Nothing to apply: the listings are in step with the sheet.", "bold green")

    # -- asking and applying

    def _apply_in(self, run: Run, plan: SyncPlan, *, resumed: bool) -> ApplyReport:
        """``plan`` carried out in ``run``: saved there (a new run), asked for, applied with the
        run's journal and backup, and its report shown and saved; the report."""
        if not resumed:
            plan.save(run.plan_path)
            plan.to_excel(run.preview_path)
            self.console.print(
                f"Saved in {shown_path(run.folder)}: plan.json (the plan), plan.xlsx (its "
                "workbook)."
            )
            run.fingerprint = dict(self.fingerprint)
            run.mark("planned")
        if self.lock is not None:
            self.lock.note_run_folder(run.folder)
        files = Files(plan=run.plan_path, journal=run.journal_path, backup=run.backup_path)
        verb = "Resume applying" if resumed else "Apply"
        answer = ask_to_apply(f"{verb} this plan to chatbot {self.serial}?", yes=self.runs.yes)
        if answer is not Answer.APPROVED:
            run.mark("applying" if resumed else "declined")
            self._not_applied(answer, files)
        hint = f"(or run the same `estatebot {self.kind}` again: it resumes)"
        with tracked(run, files):
            report = carry_out(
                plan, self.client, self.serial, files, self.applying, progress=self.progress,
                resume_hint=hint, guards=self.guards,
            )  # fmt: skip
        report.to_excel(run.report_path)
        self.console.print()
        render_report(self.console, report, max_rows=self.show.max_rows)
        self.console.print(f"  report:  {shown_path(run.report_path)}")
        self.console.print(
            f"  undo:    estatebot restore {shown_path(run.backup_path)} --serial {self.serial}"
            if run.backup_path.exists()
            else "  undo:    nothing to restore (no listing was updated or deleted)"
        )
        if self.kind != "undo":  # the whole run reversed, the listings it created too
            self.console.print(
                f"           or: estatebot undo {shown_path(run.folder)} --serial {self.serial}"
            )
        if resumed and self.sheet is not None:
            self.console.print(
                "The sheet was not read again: run the same command again to plan it against "
                "the service as it is now."
            )
        return report

    def _not_applied(self, answer: Answer, files: Files) -> NoReturn:
        if answer is Answer.NO_TERMINAL:
            text = "Not applied: no terminal to ask on; pass --yes to apply without asking."
        elif answer is Answer.INTERRUPTED:
            text = "Interrupted at the question: not applied."
        else:
            text = "Not applied."
        self.console.print(Text(text, style="bold yellow"))
        self.console.print(
            f"The plan is kept; to apply it as it is: {resume_command(files, self.serial)}"
        )
        # Ctrl-C is an interruption wherever it comes (130), not a declined plan (5).
        interrupted = answer is Answer.INTERRUPTED
        raise typer.Exit(ExitCode.INTERRUPTED if interrupted else ExitCode.NOT_APPLIED)
