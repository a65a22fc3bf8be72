"""One chatbot's share of a fleet run: the work units an executor runs, and what they hand back.

Every unit is a module-level function of one picklable argument, so a thread, a process or a
Dask worker runs it alike. A unit never raises for its chatbot's trouble (a key not set, the
service refusing, a sheet that cannot be read): it hands the error back as text, so one
chatbot's failure is one row of the fleet's table, not the end of the fleet. Keys reach a unit
as the *names* of environment variables (:meth:`ChatbotEntry.client_settings`), never as
values, so no credential travels in a task.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from estatebot.errors import EstatebotError

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.fleet.manifest import ChatbotEntry
    from estatebot.listings.sheet.result import Sheet
    from estatebot.listings.sync.report.apply_report import ApplyReport
    from estatebot.listings.sync.sync_plan import SyncPlan

__all__ = [
    "APPLIED_FILE",
    "ApplyJob",
    "ChatbotApplied",
    "ChatbotPlanned",
    "PlanJob",
    "apply_chatbot",
    "plan_chatbot",
    "probe_folder",
]

FleetKind = Literal["sync", "cleanup", "undo"]

#: Written in a chatbot's folder when its apply has ended (whatever its outcome), so a fleet run
#: resumed after a kill goes on only with the chatbots that have no such file.
APPLIED_FILE = "applied.json"


@dataclass(frozen=True)
class PlanJob:
    """What planning one chatbot needs: its manifest row, the kind of plan and its options."""

    entry: ChatbotEntry
    kind: FleetKind
    #: The chatbot's rows when its sheet is shared (read once for the fleet); None: the unit
    #: reads ``entry.sheet`` itself.
    sheet: Sheet | None = None
    #: Keyword options of the planner (``plan_sync``'s guards, ``plan_cleanup``'s rule).
    options: Mapping[str, Any] = field(default_factory=dict)
    #: ``undo``: the chatbot's folder in the fleet run being undone.
    undoes: Path | None = None
    #: The request gate the chatbot's client shares with the fleet (None: no shared limit).
    gate: Any = None


@dataclass
class ChatbotPlanned:
    """One chatbot's plan, or why there is none."""

    entry: ChatbotEntry
    plan: SyncPlan | None = None
    #: The sheet's row problems (the rows of this chatbot), for the fleet's table.
    sheet_issues: int = 0
    error: str | None = None

    @property
    def ok(self) -> bool:
        """True when the chatbot was planned."""
        return self.plan is not None


@dataclass(frozen=True)
class ApplyJob:
    """What applying one chatbot's sealed plan needs: its folder and how to apply."""

    entry: ChatbotEntry
    folder: Path
    options: Mapping[str, Any] = field(default_factory=dict)
    gate: Any = None


@dataclass
class ChatbotApplied:
    """One chatbot's apply: its report, or why it did not run to the end."""

    entry: ChatbotEntry
    folder: Path
    report: ApplyReport | None = None
    error: str | None = None
    #: Which worker ran it (a Dask worker's address, a process id), for the record.
    worker: str = ""
    #: The counts of an apply that ended in an earlier, interrupted run of the fleet (its
    #: report is in its folder's ``report.xlsx``); None when ``report`` says them.
    recorded_counts: dict[str, int] | None = None

    @property
    def ok(self) -> bool:
        """True when the apply ran to its end (or had nothing to do) with no operation
        failed."""
        if self.error is not None:
            return False
        if self.recorded_counts is not None:
            return not self.recorded_counts.get("failed")
        return self.report is None or self.report.ok

    def counts(self) -> dict[str, int]:
        """The operations by outcome word (as `ApplyReport.counts`)."""
        if self.report is not None:
            return self.report.counts()
        return dict(self.recorded_counts or {})

    @classmethod
    def recorded(cls, entry: ChatbotEntry, folder: Path) -> ChatbotApplied:
        """The apply that ended in an earlier run, from its folder's ``applied.json``."""
        record = json.loads((folder / APPLIED_FILE).read_text(encoding="utf-8"))
        counts = {str(k): int(v) for k, v in dict(record.get("counts", {})).items()}
        return cls(entry, folder, worker=str(record.get("worker", "")), recorded_counts=counts)


def client_for(entry: ChatbotEntry, gate: Any = None) -> Client:
    """A client for the entry's workspace, from the environment variables it names."""
    from estatebot.api.client import Client

    settings = entry.client_settings()
    if gate is not None:
        return Client(**settings, gate=gate)
    return Client(**settings)


def _described(error: BaseException) -> str:
    """An error as one safe line: the project's errors already say what to do and never hold
    a key; anything else is named by its type and text."""
    if isinstance(error, EstatebotError):
        return str(error)
    return f"{type(error).__name__}: {error}"


def plan_chatbot(job: PlanJob) -> ChatbotPlanned:
    """Plan one chatbot: read (or take) its rows, pull its listings, plan; never raises for the
    chatbot's own trouble (the error comes back as text)."""
    try:
        with client_for(job.entry, job.gate) as client:
            plan, issues = _plan(job, client)
    except (EstatebotError, OSError, ValueError) as error:
        return ChatbotPlanned(job.entry, error=_described(error))
    return ChatbotPlanned(job.entry, plan=plan, sheet_issues=issues)


def _plan(job: PlanJob, client: Client) -> tuple[SyncPlan, int]:
    from estatebot.listings.remote.pull import pull_listings
    from estatebot.listings.sync.sync_plan import plan_cleanup, plan_sync, plan_undo

    entry = job.entry
    if job.kind == "undo":
        if job.undoes is None:
            raise ValueError("an undo job needs the folder of the run it undoes")
        return plan_undo(client, entry.serial, job.undoes, progress=False), 0
    remote = pull_listings(client, entry.serial, progress=False)
    if job.kind == "cleanup":
        return plan_cleanup(remote, **job.options), 0
    sheet = job.sheet if job.sheet is not None else read_entry_sheet(entry)
    options = {"key": entry.key, "delete_missing": entry.delete_missing, **job.options}
    plan = plan_sync(sheet, remote, **options)
    return plan, len(sheet.invalid_rows)


def read_entry_sheet(entry: ChatbotEntry, sheet: Sheet | None = None) -> Sheet:
    """The entry's rows: its sheet read with its defaults and key (or ``sheet``, already read
    so), narrowed by its ``where`` filter."""
    from estatebot.fleet.row_filter import select_sheet_rows
    from estatebot.listings.sheet.read import read_sheet

    if sheet is None:
        sheet = read_sheet(
            entry.sheet, defaults=dict(entry.defaults) or None, key=entry.key, progress=False
        )
    if entry.where is None:
        return sheet
    return sheet.only_rows(select_sheet_rows(entry.sheet, entry.where))


def apply_chatbot(job: ApplyJob) -> ChatbotApplied:
    """Apply one chatbot's sealed plan from its folder, with its journal and backup there; the
    report is written beside them. Run again on the same folder (after a kill), it goes on
    with the journal: nothing done is done twice."""
    from estatebot.listings.sync.sync_plan import SyncPlan

    folder = job.folder
    worker = _worker_name()
    try:
        plan = SyncPlan.load(folder / "plan.json")
        with client_for(job.entry, job.gate) as client:
            report = plan.apply(
                client,
                job.entry.serial,
                journal=folder / "journal.jsonl",
                backup=folder / "backup.json",
                progress=False,
                **job.options,
            )
        # The operations only: the unchanged listings are a count in the fleet's table.
        report.to_excel(folder / "report.xlsx", include_unchanged=False)
    except (EstatebotError, OSError, ValueError) as error:
        # No record: a resumed fleet run tries this chatbot again with its journal.
        return ChatbotApplied(job.entry, folder, error=_described(error), worker=worker)
    applied = ChatbotApplied(job.entry, folder, report=report, worker=worker)
    _write_applied(folder, applied)
    return applied


def _write_applied(folder: Path, applied: ChatbotApplied) -> None:
    record = {
        "serial": applied.entry.serial,
        "ok": applied.ok,
        "counts": applied.counts(),
        "worker": applied.worker,
    }
    temporary = folder / f".{APPLIED_FILE}.{os.getpid()}"
    temporary.write_text(json.dumps(record, indent=2), encoding="utf-8")
    temporary.replace(folder / APPLIED_FILE)


def _worker_name() -> str:
    # Only a process Dask started has a worker; importing distributed elsewhere costs 0.2 s.
    if "distributed" in sys.modules:
        from distributed import get_worker

        try:
            return str(get_worker().address)
        except ValueError:
            pass
    return f"pid {os.getpid()}"


def probe_folder(folder: str, token: str) -> str | None:
    """Whether this worker reaches the fleet run's folder: None when it reads ``token`` back
    from the folder's ``fleet.json`` and can write beside it; else what is wrong."""
    path = Path(folder)
    try:
        recorded = json.loads((path / "fleet.json").read_text(encoding="utf-8"))
        if recorded.get("token") != token:
            return f"{path / 'fleet.json'} is another run's (this worker sees another folder)"
        probe = path / f".probe-{os.getpid()}"
        probe.write_text(token, encoding="utf-8")
        probe.unlink()
    except (OSError, ValueError) as error:
        return f"{_worker_name()} cannot use {path}: {error}"
    except Exception:
        return traceback.format_exc(limit=1)
    return None
