"""Many chatbots planned as one reviewed change, and applied as one run.

:func:`plan_fleet` plans every chatbot of a manifest (its sheet, or its rows of a shared sheet,
against its listings) on an executor; :func:`plan_fleet_cleanup` plans a cleanup rule for each,
:func:`plan_fleet_undo` the undo of every chatbot of an earlier fleet run. The result is a
:class:`FleetPlan`: a table of chatbots with their counts, invalid and held-back rows and
errors, each chatbot's own :class:`~estatebot.SyncPlan` beside it. :meth:`FleetPlan.apply`
seals each plan in a run folder (:mod:`.run_folder`), checks every worker reaches that folder,
then applies the chatbots on the executor, each with its journal and backup; a run interrupted
anywhere (Ctrl-C, a killed process, a lost Dask worker) is finished by :func:`resume_fleet`
with nothing sent twice.

A shared sheet is read once: its rows are typed once and each chatbot's ``where`` filter picks
its rows from the raw cells (:mod:`.row_filter`). A chatbot's own sheet is read by the worker
that plans it, so reading many sheets runs where the work runs.
"""

from __future__ import annotations

import html
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from estatebot._progress import progress_bar
from estatebot._summary import Summary
from estatebot.errors import SheetError
from estatebot.fleet.chatbot_work import (
    APPLIED_FILE,
    ApplyJob,
    ChatbotApplied,
    ChatbotPlanned,
    FleetKind,
    PlanJob,
    apply_chatbot,
    plan_chatbot,
    probe_folder,
)
from estatebot.fleet.executors import DEFAULT_MAX_IN_FLIGHT, DEFAULT_WORKERS, Workers, resolve
from estatebot.fleet.fleet_report import FleetReport
from estatebot.fleet.run_folder import FleetRun, FleetRunError

if TYPE_CHECKING:
    from estatebot.fleet.manifest import ChatbotEntry, Manifest
    from estatebot.listings.sheet.result import Sheet

__all__ = [
    "FleetPlan",
    "plan_fleet",
    "plan_fleet_cleanup",
    "plan_fleet_undo",
    "resume_fleet",
]

_PLAN_COLUMNS = ("create", "update", "delete", "unchanged", "invalid", "held back")


@dataclass
class FleetPlan:
    """One plan per chatbot of a manifest, reviewed and applied as one.

    `chatbots` holds each chatbot's `ChatbotPlanned`: its manifest `entry`, its `plan` (a
    `SyncPlan`) or its `error`. `to_frame()` is the fleet's table; in a notebook the plan shows
    that table with each chatbot's plan a click away.
    """

    manifest: Manifest
    kind: FleetKind
    chatbots: list[ChatbotPlanned]
    #: What shaped the plans beside the manifest, recorded with a run so a resume matches it.
    fingerprint: dict[str, Any] = field(default_factory=dict)
    #: ``undo``: the fleet run undone.
    undoes: Path | None = None

    @property
    def is_empty(self) -> bool:
        """True when no chatbot's plan creates, updates or deletes anything."""
        return all(item.plan is None or item.plan.is_empty for item in self.chatbots)

    @property
    def errors(self) -> list[ChatbotPlanned]:
        """The chatbots that could not be planned (each with its `error`)."""
        return [item for item in self.chatbots if item.error is not None]

    def plan_of(self, chatbot: str) -> Any:
        """The plan of the chatbot whose serial or name is `chatbot`.

        Args:
            chatbot: A serial or a manifest name.

        Returns:
            Its `SyncPlan` (None when it could not be planned: see `errors`).

        Raises:
            KeyError: No chatbot of the manifest has that serial or name.
        """
        for item in self.chatbots:
            if chatbot in (item.entry.serial, item.entry.name, item.entry.label):
                return item.plan
        raise KeyError(f"no chatbot {chatbot!r} in {self.manifest.path.name}")

    def counts(self) -> dict[str, int]:
        """The listings of the whole fleet by class, and `chatbots` and `chatbots failed`.

        Returns:
            The figures by name: `chatbots`, `create`, `update`, `delete`, `unchanged`,
                `invalid`, `held back`, `sheet issues`, `chatbots failed`.
        """
        frame = self.to_frame()
        totals = {"chatbots": len(frame)}
        totals.update({name: int(frame[name].sum()) for name in _PLAN_COLUMNS})
        totals["chatbots failed"] = int((frame["error"] != "").sum())
        return totals

    def summary(self) -> Summary:
        """One line: ``"20 chatbots: 3 create, 95 update, 0 delete, 1 invalid; 1 chatbot
        could not be planned"``.

        Returns:
            The line, as a `Summary` whose figures are those of `counts`.
        """
        counts = self.counts()
        text = f"{counts['chatbots']} chatbots: " + ", ".join(
            f"{counts[name]} {name}" for name in ("create", "update", "delete", "invalid")
        )
        if counts["held back"]:
            text += f", {counts['held back']} held back"
        failed = counts["chatbots failed"]
        if failed:
            text += f"; {failed} chatbot{'s' if failed != 1 else ''} could not be planned"
        return Summary(text, counts)

    def to_frame(self) -> pd.DataFrame:
        """The fleet's table: one row per chatbot, in the manifest's order.

        Returns:
            A new DataFrame with `chatbot` (its name), `serial`, `row` (its manifest row),
                the plan's counts (`create`, `update`, `delete`, `unchanged`, `invalid`,
                `held back`) and `error` (why it could not be planned, else "").
        """
        rows = []
        for item in self.chatbots:
            counts = item.plan.counts() if item.plan is not None else {}
            rows.append(
                {
                    "chatbot": item.entry.label,
                    "serial": item.entry.serial,
                    "row": item.entry.row,
                    **{name: int(counts.get(name.replace(" ", "_"), 0)) for name in _PLAN_COLUMNS},
                    "error": item.error or "",
                }
            )
        return pd.DataFrame(rows, columns=["chatbot", "serial", "row", *_PLAN_COLUMNS, "error"])

    def to_excel(self, path: str | PathLike[str]) -> Path:
        """Write the fleet's table to an .xlsx workbook; returns the path.

        Args:
            path: The workbook to write; its folder is made when missing.

        Returns:
            The path written, as a `Path`.
        """
        from estatebot.fleet.fleet_workbook import write_fleet_table

        return write_fleet_table(self.to_frame(), path, sheet_name="fleet plan")

    def __repr__(self) -> str:
        return f"<FleetPlan {self.kind} of {self.manifest.path.name}: {self.summary()}>"

    def __str__(self) -> str:
        lines = [f"Fleet {self.kind} of {self.manifest.path.name}: {self.summary()}"]
        lines += [f"  {item.entry.label}: {item.error}" for item in self.errors]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from estatebot.fleet.fleet_html import fleet_html

        details = [(item.entry.heading, partial(_plan_html, item)) for item in self.chatbots]
        counts = self.counts()
        totals = {name: counts[name] for name in (*_PLAN_COLUMNS, "chatbots failed")}
        return fleet_html(
            f"Fleet {self.kind} of {self.manifest.path.name}: {counts['chatbots']} chatbots",
            self.to_frame(), totals, details,
        )  # fmt: skip

    def apply(
        self,
        *,
        runs_dir: str | PathLike[str] = "estatebot-runs",
        executor: Any = None,
        workers: int = DEFAULT_WORKERS,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        concurrency: int = 4,
        progress: bool | None = None,
        **apply_options: Any,
    ) -> FleetReport:
        """Apply every chatbot's plan, as one run with a folder per chatbot.

        Each plan with work is sealed in its chatbot's folder (`plan.json`),
        then applied with its journal and backup there (`SyncPlan.apply` with its guards
        checked again against the service as it is), its report written beside them. Before
        the first write, every worker must read the run's folder back (a path every Dask
        worker reaches). A chatbot that fails does not stop the others. Interrupted, the run is
        finished by `resume_fleet` (or the same `estatebot fleet` command again).

        Args:
            runs_dir: Where the run's folder is made.
            executor: None (threads of this process), a `concurrent.futures.Executor`, or a
                `distributed.Client` (each chatbot a Dask task).
            workers: The threads of the default executor (chatbots applied at once).
            max_in_flight: The most requests in flight per service across the fleet (0: no
                cap); a 429 holds off every chatbot of that service.
            concurrency: Threads per chatbot sending its creates and updates.
            progress: Show a bar of chatbots done (None: as `ESTATEBOT_PROGRESS` says).
            **apply_options: Further options of `SyncPlan.apply` (`force`,
                `max_delete_fraction`, ...), the same for every chatbot.

        Returns:
            The `FleetReport`: a row per chatbot, each with its `ApplyReport`.

        Raises:
            FleetRunError: A worker cannot reach the run's folder (nothing was sent).
        """
        run = FleetRun.new(
            runs_dir, self.kind, self.manifest.path, self.manifest.digest,
            fingerprint=self.fingerprint, undoes=self.undoes,
        )  # fmt: skip
        self.seal(run)
        return run_fleet(
            run, self.manifest, executor=executor, workers=workers, max_in_flight=max_in_flight,
            options={"concurrency": concurrency, **apply_options}, progress=progress, plan=self,
        )  # fmt: skip

    def seal(self, run: FleetRun) -> None:
        """Save each plan with work in its chatbot's folder of `run` (sealed), and the fleet's
        table as `plan.xlsx` of the run. A chatbot's own workbook is one call away
        (`SyncPlan.load(folder / "plan.json").to_excel(...)`): writing a workbook per chatbot
        would cost a fleet of hundreds more than its plans.

        Args:
            run: The fleet run whose folders receive the plans.
        """
        for place, item in enumerate(self.chatbots):
            if item.plan is None or item.plan.is_empty:
                continue
            folder = run.chatbot_folder(place, item.entry.serial)
            item.plan.save(folder / "plan.json")
        self.to_excel(run.folder / "plan.xlsx")
        run.write()


def _plan_html(item: ChatbotPlanned) -> str:
    """A chatbot's part of the fleet view: its plan, or why it has none."""
    if item.plan is not None:
        return str(item.plan._repr_html_())
    return f"<p>{html.escape(item.error or '')}</p>"


def run_fleet(
    run: FleetRun,
    manifest: Manifest,
    *,
    executor: Any = None,
    workers: int = DEFAULT_WORKERS,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    options: Mapping[str, Any] | None = None,
    progress: bool | None = None,
    plan: FleetPlan | None = None,
) -> FleetReport:
    """Apply the sealed plans of ``run`` that have not ended (see :meth:`FleetPlan.apply`).

    The apply's options are recorded in the run, so a resume applies as the run began (its
    guards included) unless told otherwise."""
    options = {"concurrency": 4, **dict(run.fingerprint.get("apply") or {}), **dict(options or {})}
    run.fingerprint["apply"] = options
    pool = resolve(executor, workers=workers, max_in_flight=max_in_flight)
    try:
        _check_reach(pool, run)
        run.mark("applying")
        entries = dict(enumerate(manifest.entries))
        results: dict[int, ChatbotApplied] = {}
        jobs: list[tuple[int, ApplyJob]] = []
        for key in sorted(run.chatbots, key=int):
            place, folder = int(key), run.folder / run.chatbots[key]
            entry = entries[place]
            if (folder / APPLIED_FILE).exists():
                results[place] = ChatbotApplied.recorded(entry, folder)
                continue
            gate = pool.gate_for(_base_url_of(entry))
            jobs.append((place, ApplyJob(entry, folder, options, gate)))
        bar = progress_bar(len(jobs), f"Applying {len(jobs)} chatbots", progress=progress,
                           unit="chatbot")  # fmt: skip
        try:
            done = pool.map_unordered(
                apply_chatbot, [job for _, job in jobs], done=lambda _result: bar.update(1)
            )
        finally:
            bar.close()
        results.update({place: result for (place, _), result in zip(jobs, done, strict=True)})
        run.mark("applied")
        if plan is not None:  # chatbots with nothing to do, or that could not be planned
            for place, item in enumerate(plan.chatbots):
                results.setdefault(place, ChatbotApplied(item.entry, run.folder, error=item.error))
    finally:
        pool.close()
    report = FleetReport(
        [results[place] for place in sorted(results)], run.folder, plan=plan,
        title=f"Fleet {run.kind}",
    )  # fmt: skip
    report.notes += _gate_notes(pool)
    report.to_excel(run.folder / "fleet.xlsx")
    return report


def _gate_notes(pool: Workers) -> list[str]:
    notes = []
    for address, gate in pool.gates.items():
        throttled = getattr(gate, "throttled", 0)
        if throttled:
            waited = getattr(gate, "held_off_seconds", 0.0)
            notes.append(
                f"{address} asked the fleet to slow down {throttled} times; every chatbot of "
                f"that service held off ({waited:.1f} s waited in all)."
            )
    return notes


def _check_reach(pool: Workers, run: FleetRun) -> None:
    problems = [
        found for found in pool.everywhere(probe_folder, str(run.folder), run.token) if found
    ]
    if problems:
        raise FleetRunError(
            f"not every worker reaches the run folder {run.folder}, so nothing was sent: "
            + "; ".join(dict.fromkeys(problems))
            + ". Give --runs-dir a path every worker sees (a shared file system)"
        )


def _base_url_of(entry: ChatbotEntry) -> str:
    try:
        return str(entry.client_settings().get("base_url") or "")
    except Exception:
        return ""


def resume_fleet(
    folder: str | PathLike[str],
    *,
    executor: Any = None,
    workers: int = DEFAULT_WORKERS,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    concurrency: int = 4,
    progress: bool | None = None,
    **apply_options: Any,
) -> FleetReport:
    """Finish a fleet run that was interrupted: every chatbot whose apply had not ended goes on
    with its own journal and backup, so nothing is sent twice.

    Args:
        folder: The fleet run's folder (`estatebot-runs/fleet-sync-...`).
        executor: As for `FleetPlan.apply`.
        workers: As for `FleetPlan.apply`.
        max_in_flight: As for `FleetPlan.apply`.
        concurrency: As for `FleetPlan.apply`.
        progress: As for `FleetPlan.apply`.
        **apply_options: As for `FleetPlan.apply`.

    Returns:
        The `FleetReport` of the whole run (chatbots done before the interruption included,
            from their records).

    Raises:
        FleetRunError: The folder is no fleet run, or its manifest changed since the run began.
    """
    from estatebot.fleet.manifest import read_manifest

    run = FleetRun.open(folder)
    manifest = read_manifest(run.manifest)
    if manifest.digest != run.manifest_digest:
        raise FleetRunError(
            f"the manifest {run.manifest} changed since the fleet run in {run.folder} began, so "
            "its chatbots cannot be matched to their folders; put the manifest back as it was "
            "to finish the run, or plan afresh"
        )
    return run_fleet(
        run, manifest, executor=executor, workers=workers, max_in_flight=max_in_flight,
        options={"concurrency": concurrency, **apply_options}, progress=progress,
    )  # fmt: skip


def _plan_all(
    manifest: Manifest,
    jobs: list[PlanJob],
    pool: Workers,
    progress: bool | None,
    kind: FleetKind,
    fingerprint: dict[str, Any],
    undoes: Path | None = None,
) -> FleetPlan:
    bar = progress_bar(len(jobs), f"Planning {len(jobs)} chatbots", progress=progress,
                       unit="chatbot")  # fmt: skip
    try:
        planned = pool.map_unordered(plan_chatbot, jobs, done=lambda _result: bar.update(1))
    finally:
        bar.close()
        pool.close()
    return FleetPlan(manifest, kind, planned, fingerprint=fingerprint, undoes=undoes)


def _with_gates(jobs: list[PlanJob], pool: Workers) -> list[PlanJob]:
    from dataclasses import replace

    return [replace(job, gate=pool.gate_for(_base_url_of(job.entry))) for job in jobs]


def plan_fleet(
    manifest: Manifest | str | PathLike[str],
    *,
    executor: Any = None,
    workers: int = DEFAULT_WORKERS,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    progress: bool | None = None,
    **plan_options: Any,
) -> FleetPlan:
    """Plan every chatbot of a manifest against its listings; nothing is sent.

    Each chatbot's rows (its own sheet, or its `where` rows of a shared sheet, read once) are
    planned against its pulled listings by `plan_sync`, with its manifest row's `key`,
    `delete_missing` and `defaults`. A chatbot that cannot be planned (a key not set, the
    service refusing, a sheet that cannot be read) is a row with its `error`; the others are
    planned all the same.

    Args:
        manifest: A manifest read by `read_manifest`, or its path (csv, xlsx, ods or toml).
        executor: None (threads of this process), a `concurrent.futures.Executor`, or a
            `distributed.Client` (each chatbot a Dask task).
        workers: The threads of the default executor (chatbots planned at once).
        max_in_flight: The most requests in flight per service across the fleet (0: no cap).
        progress: Show a bar of chatbots planned (None: as `ESTATEBOT_PROGRESS` says).
        **plan_options: Further options of `plan_sync` for every chatbot (its guards,
            `accept_flagged`, ...).

    Returns:
        The `FleetPlan`.

    Raises:
        ManifestError: The manifest cannot be read or has no valid row.
    """
    manifest = _manifest(manifest)
    shared = _shared_sheets(manifest.entries)
    pool = resolve(executor, workers=workers, max_in_flight=max_in_flight)
    jobs = [
        PlanJob(entry, "sync", sheet=shared.get(place), options=plan_options)
        for place, entry in enumerate(manifest.entries)
    ]
    fingerprint = {"plan_options": {k: repr(v) for k, v in sorted(plan_options.items())}}
    return _plan_all(manifest, _with_gates(jobs, pool), pool, progress, "sync", fingerprint)


def plan_fleet_cleanup(
    manifest: Manifest | str | PathLike[str],
    *,
    status: Sequence[str] | str | None = ("Sold",),
    min_days_on_market: int | None = None,
    executor: Any = None,
    workers: int = DEFAULT_WORKERS,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    progress: bool | None = None,
    **plan_options: Any,
) -> FleetPlan:
    """Plan a cleanup of every chatbot of a manifest by one rule; nothing is sent.

    Args:
        manifest: A manifest read by `read_manifest`, or its path.
        status: The statuses to delete (as for `plan_cleanup`).
        min_days_on_market: Also delete listings on the market this many days or more.
        executor: As for `plan_fleet`.
        workers: As for `plan_fleet`.
        max_in_flight: As for `plan_fleet`.
        progress: As for `plan_fleet`.
        **plan_options: Further options of `plan_cleanup` (`key`, `max_delete_fraction`, ...).

    Returns:
        The `FleetPlan` of deletes.

    Raises:
        ManifestError: The manifest cannot be read or has no valid row.
    """
    manifest = _manifest(manifest)
    pool = resolve(executor, workers=workers, max_in_flight=max_in_flight)
    options = {"status": status, "min_days_on_market": min_days_on_market, **plan_options}
    jobs = [PlanJob(entry, "cleanup", options=options) for entry in manifest.entries]
    fingerprint = {"plan_options": {k: repr(v) for k, v in sorted(options.items())}}
    return _plan_all(manifest, _with_gates(jobs, pool), pool, progress, "cleanup", fingerprint)


def plan_fleet_undo(
    run_folder: str | PathLike[str],
    *,
    executor: Any = None,
    workers: int = DEFAULT_WORKERS,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    progress: bool | None = None,
) -> FleetPlan:
    """Plan the undo of every chatbot of an earlier fleet run; nothing is sent.

    Each chatbot the run applied is planned back from its folder (`plan_undo`): what it created
    is deleted, what it updated or deleted is put back as it was; a listing changed since is
    left as it is and named.

    Args:
        run_folder: The fleet run to undo (`estatebot-runs/fleet-sync-...`).
        executor: As for `plan_fleet`.
        workers: As for `plan_fleet`.
        max_in_flight: As for `plan_fleet`.
        progress: As for `plan_fleet`.

    Returns:
        The `FleetPlan` of the undo (chatbots the run did not touch are left out).

    Raises:
        FleetRunError: The folder is no fleet run, or its manifest changed since.
    """
    from estatebot.fleet.manifest import read_manifest

    run = FleetRun.open(run_folder)
    if run.kind == "undo":
        raise FleetRunError(f"{run.folder} is an undo; undo the run it undid instead")
    manifest = read_manifest(run.manifest)
    if manifest.digest != run.manifest_digest:
        raise FleetRunError(
            f"the manifest {run.manifest} changed since the fleet run in {run.folder}; put it "
            "back as it was to undo that run"
        )
    pool = resolve(executor, workers=workers, max_in_flight=max_in_flight)
    entries = dict(enumerate(manifest.entries))
    jobs = []
    for key in sorted(run.chatbots, key=int):
        folder = run.folder / run.chatbots[key]
        if (folder / "journal.jsonl").exists():
            jobs.append(PlanJob(entries[int(key)], "undo", undoes=folder))
    plan = _plan_all(
        manifest, _with_gates(jobs, pool), pool, progress, "undo",
        {"undoes": str(run.folder)}, undoes=run.folder,
    )  # fmt: skip
    return plan


def _manifest(manifest: Manifest | str | PathLike[str]) -> Manifest:
    from estatebot.fleet.manifest import read_manifest

    if isinstance(manifest, (str, os.PathLike)):
        return read_manifest(manifest)
    return manifest


def _shared_sheets(entries: Sequence[ChatbotEntry]) -> dict[int, Sheet]:
    """The rows of each chatbot whose sheet (read the same way) serves more than one: read and
    typed once, each chatbot's rows picked by its filter from the raw cells, read once too.

    A sheet that cannot be read, or a filter naming a column it lacks, leaves the chatbots
    concerned out of the result: each one's own job reads its sheet again and reports the error
    as its row of the fleet's table, and the other chatbots are planned all the same."""
    from estatebot.listings.sheet.read import read_sheet
    from estatebot.listings.sheet.readers.table import read_table

    def how(entry: ChatbotEntry) -> tuple[Path, str, tuple[tuple[str, str], ...]]:
        return entry.sheet, entry.key, tuple(sorted(entry.defaults.items()))

    uses = Counter(how(entry) for entry in entries)
    read: dict[tuple[Path, str, tuple[tuple[str, str], ...]], Sheet | None] = {}
    tables: dict[Path, Any] = {}
    picked: dict[int, Sheet] = {}
    for place, entry in enumerate(entries):
        reading = how(entry)
        if uses[reading] < 2:
            continue
        try:
            if reading not in read:
                read[reading] = None  # until it is read: a failure is not tried again
                read[reading] = read_sheet(
                    entry.sheet, defaults=dict(entry.defaults) or None, key=entry.key,
                    progress=False,
                )  # fmt: skip
            sheet = read[reading]
            if sheet is None:
                continue
            if entry.where is None:
                picked[place] = sheet
                continue
            if entry.sheet not in tables:
                tables[entry.sheet] = None
                tables[entry.sheet] = read_table(entry.sheet, None)[1]
            table = tables[entry.sheet]
            if table is None:
                continue
            rows = entry.where.rows(table.headers, table.columns, table.rows)
            picked[place] = sheet.only_rows(rows)
        except (SheetError, OSError):
            continue
    return picked
