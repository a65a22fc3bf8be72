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

**A resume matches its command.** ``run.json`` keeps the *fingerprint* of the command that made
the plan (``fingerprint``: the sheet's content digest and every flag that shapes the plan, see
:mod:`~estatebot.cli.run_fingerprint`). An interrupted run is resumed by a command of the same
fingerprint only; another is refused before anything is written, naming what differs, unless
``--resume`` (finish the old plan as it was made) or ``--no-resume`` (abandon it and plan
afresh) says which (:mod:`~estatebot.cli.resuming`).

**A damaged run folder is named, never guessed at.** A ``run.json`` that is missing (beside a
plan, journal or backup), cut short, not JSON, nested too deep or not a run's record makes the
folder a :class:`DamagedRun`. Where it may be the run a command would go on with (the same kind,
and a journal that is not another chatbot's), the command stops with one line naming the file
and the ways on (:class:`DamagedRunError`): ``--no-resume`` sets it aside (``run.json.damaged``
kept, a ``run.json`` marking it abandoned written), or the folder is removed. A run folder with
no journal sent nothing, so there is nothing in it to resume or undo: it is passed over. The
plan, journal and backup of a run that is resumed are checked by :mod:`~estatebot.cli.run_health`.

One run at a time per chatbot and service: see :mod:`~estatebot.cli.run_lock`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from estatebot.cli.report_view import shown_path
from estatebot.errors import EstatebotError

__all__ = [
    "RUNS_DIR",
    "DamagedRun",
    "DamagedRunError",
    "Run",
    "damaged_unfinished",
    "find_run_of_plan",
    "find_unfinished",
    "latest_run",
    "new_run",
    "resume_ways",
    "run_of_plan",
    "set_aside",
]

#: The default runs folder, in the current folder (as Terraform keeps its state).
RUNS_DIR = Path("estatebot-runs")
RUN_FILE = "run.json"

Kind = Literal["sync", "cleanup", "apply", "undo"]
#: planned (shown, not confirmed), declined, applying (interrupted if found so), failed (refused
#: before anything was written), abandoned (``--no-resume``), finished.
Status = Literal["planned", "declined", "applying", "failed", "abandoned", "finished"]
#: The names :func:`new_run` gives: the kind, the start time, a number when two start in a second.
_RUN_NAME = re.compile(r"^(sync|cleanup|apply|undo)-(\d{8}-\d{6})(?:-\d+)?$")
#: The files of a run beside ``run.json``: one of them makes a folder without it a damaged run.
_RUN_FILES = ("plan.json", "journal.jsonl", "backup.json")
#: ``run.json`` nests two levels (the record, its fingerprint).
_RUN_DEPTH = 8


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
    #: What shaped the plan: the sheet's digest and the flags, by name (see
    #: :mod:`~estatebot.cli.run_fingerprint`); None for a run made before it was kept.
    fingerprint: dict[str, str] | None = None

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
    fingerprint: Mapping[str, str] | None = None,
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
        fingerprint=dict(fingerprint) if fingerprint is not None else None,
    )
    run.mark("planned")
    return run


# --------------------------------------------------------------------------- damaged folders


@dataclass(frozen=True)
class DamagedRun:
    """A run folder whose ``run.json`` cannot be read: the folder, the file and what is wrong."""

    folder: Path
    file: Path
    problem: str

    @property
    def kind(self) -> str | None:
        """The kind its name gives (``sync-20250602-120000``: sync), None for another name."""
        found = _RUN_NAME.match(self.folder.name)
        return found.group(1) if found else None

    @property
    def stamp(self) -> str:
        """The start time its name gives (``20250602-120000``), "" for another name."""
        found = _RUN_NAME.match(self.folder.name)
        return found.group(2) if found else ""


class DamagedRunError(EstatebotError):
    """A run folder a command would go on with holds a file that cannot be read.

    One line: the file, what is wrong with it, and the ways on (``ways``). Nothing was written.
    """

    def __init__(self, file: Path, problem: str, ways: str) -> None:
        self.file = file
        self.problem = problem
        super().__init__(f"{shown_path(file)} is damaged ({problem}); {ways}")


def resume_ways(kind: str, folder: Path) -> str:
    """What to do about a damaged run of ``kind`` in ``folder`` that a command would resume."""
    where = shown_path(folder)
    if kind == "apply":
        return f"the run in {where} cannot go on: remove that folder to apply the plan afresh"
    return (
        f"the interrupted {kind} in {where} cannot be resumed: --no-resume plans afresh "
        "(and sets it aside), or remove that folder"
    )


def _read_run(folder: Path) -> Run | DamagedRun | None:
    """The run recorded in ``folder``; a DamagedRun when its record cannot be read; None for a
    folder that is no run (nothing of a run in it)."""
    # Imported here: the command line starts without loading the listings package.
    from estatebot.listings.sync.plan.json_file import JsonFileError, read_json_file

    path = folder / RUN_FILE
    if not path.exists():
        if any((folder / name).exists() for name in _RUN_FILES):
            return DamagedRun(folder, path, "the file is missing")
        return None
    try:
        data = read_json_file(path, limit=_RUN_DEPTH)
    except JsonFileError as error:
        return DamagedRun(folder, path, error.problem)
    problem = _record_problem(data)
    if problem is not None:
        return DamagedRun(folder, path, problem)
    known = {f.name for f in fields(Run)} - {"folder"}
    return Run(folder=folder, **{name: value for name, value in data.items() if name in known})


def _record_problem(data: Any) -> str | None:
    """What makes ``data`` no run record (a field missing or of another type), or None."""
    if not isinstance(data, dict):
        return f"not a run record: a JSON {type(data).__name__}"
    for name in ("kind", "serial", "service", "status", "started"):
        if not isinstance(data.get(name), str):
            return f"not a run record: {name!r} is missing or not text"
    for name in ("sheet", "sheet_digest", "plan_digest", "undoes"):
        if data.get(name) is not None and not isinstance(data[name], str):
            return f"not a run record: {name!r} is not text"
    mark = data.get("fingerprint")
    if mark is not None and not (
        isinstance(mark, dict) and all(isinstance(v, str) for v in mark.values())
    ):
        return "not a run record: 'fingerprint' is not a table of texts"
    return None


def _load(folder: Path) -> Run | None:
    found = _read_run(folder)
    return found if isinstance(found, Run) else None  # damaged ones are looked at on their own


def _damaged(root: Path, keep: Callable[[DamagedRun], bool]) -> list[DamagedRun]:
    """The damaged run folders under ``root`` that ``keep`` keeps, oldest first."""
    if not root.is_dir():
        return []
    found = [
        run
        for folder in root.iterdir()
        if folder.is_dir() and isinstance(run := _read_run(folder), DamagedRun) and keep(run)
    ]
    return sorted(found, key=lambda run: (run.stamp, run.folder.name))


def _may_be_of(damaged: DamagedRun, serial: str, service: str) -> bool:
    """Whether a damaged run may have sent something to this chatbot and service.

    Its journal says: none, and it sent nothing (nothing to resume or undo); a header naming
    another chatbot or service, and it is not this one's; a header that cannot be read, and it
    may be.
    """
    from estatebot.listings.sync.plan.json_file import check_depth

    journal = damaged.folder / "journal.jsonl"
    try:
        with journal.open("rb") as handle:
            first = handle.readline(1 << 16).decode("utf-8")
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError):
        return True
    if check_depth(first, _RUN_DEPTH) is not None:
        return True
    try:
        header = json.loads(first)
    except ValueError:
        return True
    if not isinstance(header, dict):
        return True
    named = header.get("service")
    return header.get("serial") == serial and (named is None or named == service)


def damaged_unfinished(root: Path, kind: Kind, *, serial: str, service: str) -> list[DamagedRun]:
    """The damaged run folders of ``kind`` under ``root`` that may be an interrupted run of
    this chatbot and service: a command of that kind cannot tell, so it must not pass them
    over unsaid (see the module)."""
    return _damaged(root, lambda run: run.kind == kind and _may_be_of(run, serial, service))


def set_aside(damaged: DamagedRun) -> Run:
    """Mark a damaged run abandoned (``--no-resume``), keeping what is left of its record.

    A ``run.json`` that cannot be read is kept as ``run.json.damaged``, and a new one marks the
    folder abandoned, bound to no chatbot: no later command resumes or undoes it.
    """
    if damaged.file.name == RUN_FILE and damaged.file.exists():
        os.replace(damaged.file, damaged.file.with_name(RUN_FILE + ".damaged"))
    stamp = damaged.stamp
    started = (
        datetime.strptime(stamp, "%Y%m%d-%H%M%S").replace(tzinfo=UTC).isoformat()
        if stamp
        else datetime.now(UTC).isoformat(timespec="seconds")
    )
    run = Run(
        folder=damaged.folder,
        kind=damaged.kind or "",
        serial="",
        service="",
        sheet=None,
        sheet_digest=None,
        status="abandoned",
        started=started,
    )
    run.mark("abandoned")
    return run


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
    service, undo runs aside: what ``estatebot undo`` undoes when no run is named.

    A damaged run folder as late or later that may be this chatbot's raises
    :class:`DamagedRunError`: undo cannot tell which run is the latest, and must not reverse
    an earlier one in its place.
    """
    found = _latest(
        root,
        lambda run: (
            run.kind != "undo"
            and run.serial == serial
            and run.service == service
            and run.journal_path.is_file()
        ),
    )
    stamp = _RUN_NAME.match(found.folder.name) if found is not None else None
    since = stamp.group(2) if stamp else ""
    later = _damaged(
        root,
        lambda run: (
            run.kind not in (None, "undo")
            and run.stamp >= since
            and _may_be_of(run, serial, service)
        ),
    )
    if later:
        damaged = later[-1]
        raise DamagedRunError(
            damaged.file,
            damaged.problem,
            f"undo cannot tell whether the run in {shown_path(damaged.folder)} is the latest: "
            "name the run to undo (estatebot undo RUN), or remove that folder",
        )
    return found


def find_run_of_plan(root: Path, *, serial: str, service: str, plan_digest: str) -> Run | None:
    """The latest ``apply`` run of this plan (by digest) on this chatbot and service, if any.

    Whatever its status: an interrupted one resumes, a finished one finds every operation done
    (nothing is sent twice), one refused before its first write has an empty journal. A damaged
    ``apply`` folder holding a copy of this plan raises :class:`DamagedRunError`: its journal
    may say what is done.
    """
    for damaged in _damaged(
        root, lambda run: run.kind == "apply" and _may_be_of(run, serial, service)
    ):
        copy = damaged.folder / "plan.json"
        if copy.is_file() and file_digest(copy) == plan_digest:
            raise DamagedRunError(
                damaged.file, damaged.problem, resume_ways("apply", damaged.folder)
            )
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
