"""Carrying a plan out from the command line: journaled and backed up, and resumable.

:func:`carry_out` applies a plan with a journal and a backup (always: the command line has no
way to run without them). On Ctrl-C the apply sends nothing more, lets the requests in flight
finish (the journal records their outcome, each line synced to disk), and this module prints
how much was done and the exact command that resumes: the same plan, journal and backup, so
nothing is done twice and the backup keeps the listings as they were before the first run.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.text import Text

from estatebot.cli.codes import ExitCode
from estatebot.cli.console import err_console, safe
from estatebot.cli.flags.plan_options import ApplyFlags
from estatebot.cli.report_view import shown_path
from estatebot.cli.runs import Run

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.sync.apply.apply_options import ApplyOptions
    from estatebot.listings.sync.report.apply_report import ApplyReport
    from estatebot.listings.sync.sync_plan import SyncPlan

__all__ = ["Files", "apply_options", "carry_out", "journal_progress", "resume_command", "tracked"]


@dataclass(frozen=True)
class Files:
    """Where an apply keeps its plan, journal and backup."""

    plan: Path
    journal: Path
    backup: Path


def resume_command(files: Files, serial: str) -> str:
    """The command that resumes an apply of ``files.plan`` with its journal and backup."""
    return shlex.join(
        [
            "estatebot", "apply", shown_path(files.plan), "--serial", serial,
            "--journal", shown_path(files.journal), "--backup", shown_path(files.backup),
        ]
    )  # fmt: skip


def journal_progress(journal: Path) -> tuple[int, int]:
    """(operations done, operations started) by the journal so far."""
    from estatebot.listings.sync.apply.journal_records import read_journal

    records = read_journal(journal).records()
    done = sum(1 for record in records.values() if record.done)
    return done, len(records)


def apply_options(
    files: Files,
    flags: ApplyFlags,
    progress: bool | None,
    guards: Mapping[str, Any] | None = None,
) -> ApplyOptions:
    """The options of an apply from the command line: its flags, with the journal and backup of
    ``files`` (always both: the command line has no way to run without them). ``guards`` are
    the command's own guard flags (``max_delete_fraction``, ``force_delete_count``,
    ``force_identity_count``), which the apply checks again against the service as it is: a
    plan read back from a file is never trusted for them."""
    from estatebot.listings.sync.apply.apply_options import ApplyOptions

    return ApplyOptions(
        concurrency=flags.concurrency,
        journal=files.journal,
        backup=files.backup,
        progress=progress,
        force=flags.force,
        sent_values=flags.sent(),
        **dict(guards or {}),
    )


def carry_out(
    plan: SyncPlan,
    client: Client,
    serial: str,
    files: Files,
    flags: ApplyFlags,
    *,
    progress: bool | None,
    resume_hint: str | None = None,
    guards: Mapping[str, Any] | None = None,
) -> ApplyReport:
    """``apply_plan`` with the journal and backup of ``files``; on Ctrl-C, say how to resume.

    An interruption exits 130 after printing how many operations are done and the command that
    resumes (``resume_hint`` adds another way, such as running the same ``sync`` again).
    """
    from estatebot.listings.sync.apply.phases import apply_plan

    with _resumable(plan, files, serial, resume_hint):
        options = apply_options(files, flags, progress, guards)
        return apply_plan(plan, client, serial, options=options)


@contextmanager
def _resumable(plan: SyncPlan, files: Files, serial: str, hint: str | None) -> Iterator[None]:
    """On Ctrl-C in the block: say how much of ``plan`` is done and the command that resumes
    it, then exit 130."""
    try:
        yield
    except KeyboardInterrupt:
        _interrupted(plan, files, serial, hint)
        raise typer.Exit(ExitCode.INTERRUPTED) from None


def _interrupted(plan: SyncPlan, files: Files, serial: str, hint: str | None) -> None:
    console = err_console()
    done, started = journal_progress(files.journal)
    total = len(plan.operations())
    console.print()
    if started == 0:
        console.print(Text("Interrupted before anything was sent.", style="bold yellow"))
    else:
        console.print(
            Text(
                f"Interrupted: {done} of {total} operations done, each recorded in the journal; "
                "nothing more was sent (the requests in flight were let finish).",
                style="bold yellow",
            ),
            soft_wrap=True,
        )
    console.print(Text(f"To resume: {safe(resume_command(files, serial))}"), soft_wrap=True)
    if hint:
        console.print(Text(hint), soft_wrap=True)


@contextmanager
def tracked(run: Run | None, files: Files) -> Iterator[None]:
    """Mark ``run`` applying for the block, finished after it.

    A run stopped before its first write (a stale plan refused, the service unreachable) is
    marked failed: there is nothing to resume, and the next run plans afresh. One stopped
    after it (interrupted, killed) stays ``applying``, so the same command resumes it. A
    resumed run whose journal another process holds (``LockHeldError``) stays ``applying``
    too: that process is going on with it.
    """
    from estatebot.listings.sync.apply.held_lock import LockHeldError

    if run is None:
        yield
        return
    before = run.status
    run.mark("applying")
    try:
        yield
    except LockHeldError:
        run.mark("applying" if before == "applying" else "failed")
        raise
    except BaseException:
        _, started = journal_progress(files.journal)
        if started == 0:
            run.mark("failed")
        raise
    run.mark("finished")
