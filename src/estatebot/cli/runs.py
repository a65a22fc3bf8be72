"""The folders ``sync``, ``cleanup``, ``apply`` and ``undo`` keep their work in, so an interrupted
run can resume and a new run never picks up another run's journal.

Each run that has something to apply gets a folder under the runs folder (``estatebot-runs``
in the current folder unless ``--runs-dir`` says otherwise), named by its kind and start time:

* ``plan.json`` and ``plan.xlsx``: the plan as shown, sealed, and its workbook;
* ``journal.jsonl``: every operation's start and outcome, for resuming;
* ``backup.json``: the before-image of every listing updated or deleted (``estatebot restore``);
* ``report.xlsx``: one row per operation, written when the apply ends;
* ``run.json``: what the run is for (kind, chatbot, service, sheet) and how far it got.

A run whose status is still ``applying`` was interrupted (Ctrl-C, a kill, a crash): the same
command finds it and resumes its plan with its journal and backup, so nothing is done twice and
the backup keeps the listings as they were before the first run touched them.

``apply PLAN`` keeps no copy of the plan: its run folder holds the journal, the backup and
``run.json``, which names the plan file and its digest. The same plan applied again to the same
chatbot and service finds that folder (:func:`find_run_of_plan`) and goes on with its journal;
another plan, chatbot or service gets a folder of its own, so a journal written for one service
is never offered to another (two emulators on two ports, one after the other, in one folder).

``undo [RUN]`` reverses a run from its folder (:func:`latest_run` when RUN is left out) and keeps
its own work in an ``undo-...`` folder like any run, whose ``run.json`` names the run it undoes
(``undoes``): the same undo run again after an interruption resumes it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

__all__ = [
    "RUNS_DIR",
    "Run",
    "find_run_of_plan",
    "find_unfinished",
    "latest_run",
    "new_run",
    "run_of_plan",
]

#: The default runs folder, in the current folder (as Terraform keeps its state).
RUNS_DIR = Path("estatebot-runs")
RUN_FILE = "run.json"

Kind = Literal["sync", "cleanup", "apply", "undo"]
#: planned (shown, not confirmed), declined, applying (interrupted if found so), failed (refused
#: before anything was written), abandoned (``--no-resume``), finished.
Status = Literal["planned", "declined", "applying", "failed", "abandoned", "finished"]


@dataclass
class Run:
    """One run's folder and what it is for."""

    folder: Path
    kind: str
    serial: str
    service: str
    sheet: str | None
    sheet_digest: str | None
    status: str
    started: str
    #: ``apply``: the digest of the plan file applied (:func:`file_digest`); None otherwise.
    plan_digest: str | None = None
    #: ``undo``: the folder of the run it undoes (resolved); None otherwise.
    undoes: str | None = None

    @property
    def plan_path(self) -> Path:
        """The saved plan."""
        return self.folder / "plan.json"

    @property
    def preview_path(self) -> Path:
        """The plan's workbook."""
        return self.folder / "plan.xlsx"

    @property
    def journal_path(self) -> Path:
        """The apply journal."""
        return self.folder / "journal.jsonl"

    @property
    def backup_path(self) -> Path:
        """The before-image of the listings changed."""
        return self.folder / "backup.json"

    @property
    def report_path(self) -> Path:
        """The apply report's workbook."""
        return self.folder / "report.xlsx"

    def mark(self, status: Status) -> None:
        """Record how far the run got (written atomically: a kill leaves the old or the new)."""
        self.status = status
        data = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items()}
        data.pop("folder")
        temporary = self.folder / (RUN_FILE + ".tmp")
        temporary.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(temporary, self.folder / RUN_FILE)


def file_digest(path: Path) -> str:
    """SHA-256 of a file's bytes: tells a sheet changed since a run planned it."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def new_run(
    root: Path,
    kind: Kind,
    *,
    serial: str,
    service: str,
    sheet: Path | None = None,
    plan_digest: str | None = None,
    undoes: Path | None = None,
) -> Run:
    """A new run folder under ``root``, marked ``planned``."""
    now = datetime.now(UTC)
    base = f"{kind}-{now.strftime('%Y%m%d-%H%M%S')}"
    folder = root / base
    number = 1
    while folder.exists():  # two runs in one second
        number += 1
        folder = root / f"{base}-{number}"
    folder.mkdir(parents=True)
    run = Run(
        folder=folder,
        kind=kind,
        serial=serial,
        service=service,
        sheet=str(sheet.resolve()) if sheet is not None else None,
        sheet_digest=file_digest(sheet) if sheet is not None and sheet.is_file() else None,
        status="planned",
        started=now.isoformat(timespec="seconds"),
        plan_digest=plan_digest,
        undoes=str(undoes.resolve()) if undoes is not None else None,
    )
    run.mark("planned")
    return run


def _load(folder: Path) -> Run | None:
    try:
        data = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
        return Run(folder=folder, **data)
    except (OSError, ValueError, TypeError):
        return None  # not a run folder, or one damaged beyond use: never resumed


def find_unfinished(
    root: Path,
    kind: Kind,
    *,
    serial: str,
    service: str,
    sheet: Path | None = None,
    undoes: Path | None = None,
) -> Run | None:
    """The latest run of this kind, chatbot, service (and sheet, or run undone) left
    ``applying``."""
    wanted = str(sheet.resolve()) if sheet is not None else None
    undone = str(undoes.resolve()) if undoes is not None else None
    return _latest(
        root,
        lambda run: (
            run.status == "applying"
            and run.kind == kind
            and run.serial == serial
            and run.service == service
            and run.sheet == wanted
            and run.undoes == undone
        ),
    )


def latest_run(root: Path, *, serial: str, service: str) -> Run | None:
    """The latest run under ``root`` that sent something (it has a journal) to this chatbot and
    service, undo runs aside: what ``estatebot undo`` undoes when no run is named."""
    return _latest(
        root,
        lambda run: (
            run.kind != "undo"
            and run.serial == serial
            and run.service == service
            and run.journal_path.is_file()
        ),
    )


def find_run_of_plan(root: Path, *, serial: str, service: str, plan_digest: str) -> Run | None:
    """The latest ``apply`` run of this plan (by digest) on this chatbot and service, if any.

    Whatever its status: an interrupted one resumes, a finished one finds every operation done
    (nothing is sent twice), one refused before its first write has an empty journal.
    """
    return _latest(
        root,
        lambda run: (
            run.kind == "apply"
            and run.plan_digest == plan_digest
            and run.serial == serial
            and run.service == service
        ),
    )


def _latest(root: Path, keep: Callable[[Run], bool]) -> Run | None:
    """The latest run under ``root`` that ``keep`` keeps (by start, then folder name)."""
    if not root.is_dir():
        return None
    found = [
        run
        for folder in root.iterdir()
        if folder.is_dir() and (run := _load(folder)) is not None and keep(run)
    ]
    return max(found, key=lambda run: (run.started, run.folder.name), default=None)


def run_of_plan(plan_path: Path) -> Run | None:
    """The run whose folder holds ``plan_path`` as its plan, if any (``apply`` resumed it)."""
    run = _load(plan_path.parent)
    if run is None or run.plan_path.resolve() != plan_path.resolve():
        return None
    return run
