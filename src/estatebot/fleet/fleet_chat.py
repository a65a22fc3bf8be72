"""Test every chatbot of a manifest after a model change: one batch of chat cases each.

:func:`run_fleet_chat_tests` runs :func:`~estatebot.run_chat_tests` for every chatbot on an
executor, each with the cases its manifest row names (``tests``) or the fleet's, and keeps each
chatbot's results workbook in a folder of the run. :class:`FleetChatResults` is the fleet's
table: cases, passed, failed, errors, and why a chatbot could not be tested.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from functools import partial
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from estatebot._progress import progress_bar
from estatebot._summary import Summary
from estatebot.errors import ConfigurationError, EstatebotError
from estatebot.fleet.executors import DEFAULT_MAX_IN_FLIGHT, DEFAULT_WORKERS, resolve

if TYPE_CHECKING:
    from estatebot.chat.harness.results import ChatTestResults
    from estatebot.fleet.manifest import ChatbotEntry, Manifest

__all__ = ["ChatbotTested", "FleetChatResults", "run_fleet_chat_tests"]


@dataclass(frozen=True)
class _ChatJob:
    entry: ChatbotEntry
    cases: Path
    out: Path | None
    concurrency: int
    gate: Any = None


@dataclass
class ChatbotTested:
    """One chatbot's chat test results, or why it could not be tested."""

    entry: ChatbotEntry
    results: ChatTestResults | None = None
    error: str | None = None
    out: Path | None = None

    @property
    def ok(self) -> bool:
        """True when every case passed."""
        return self.error is None and self.results is not None and self.results.ok


def _test_chatbot(job: _ChatJob) -> ChatbotTested:
    from estatebot.chat.harness.running import run_chat_tests
    from estatebot.fleet.chatbot_work import client_for

    try:
        with client_for(job.entry, job.gate) as client:
            results = run_chat_tests(
                client, job.entry.serial, job.cases, concurrency=job.concurrency, progress=False
            )
        if job.out is not None:
            results.to_excel(job.out)
    except (EstatebotError, OSError, ValueError) as error:
        text = (
            str(error) if isinstance(error, EstatebotError) else f"{type(error).__name__}: {error}"
        )
        return ChatbotTested(job.entry, error=text)
    return ChatbotTested(job.entry, results=results, out=job.out)


@dataclass
class FleetChatResults:
    """Every chatbot's chat test results: `chatbots` holds each chatbot's `ChatbotTested`."""

    chatbots: list[ChatbotTested]
    folder: Path | None = None

    @property
    def ok(self) -> bool:
        """True when every case of every chatbot passed."""
        return all(item.ok for item in self.chatbots)

    @property
    def failures(self) -> pd.DataFrame:
        """The rows of `to_frame` of chatbots with a failed case or an error."""
        frame = self.to_frame()
        return frame[(frame["failed"] > 0) | (frame["errors"] > 0) | (frame["error"] != "")]

    def to_frame(self) -> pd.DataFrame:
        """One row per chatbot: `chatbot`, `serial`, `cases`, `passed`, `failed`, `errors`,
        `error` (why it could not be tested), `results` (its workbook).

        Returns:
            A new DataFrame, in the manifest's order.
        """
        rows = []
        for item in self.chatbots:
            counts = dict(item.results.summary().counts) if item.results is not None else {}
            rows.append(
                {
                    "chatbot": item.entry.label,
                    "serial": item.entry.serial,
                    **{
                        k: int(counts.get(k, 0) or 0)
                        for k in ("cases", "passed", "failed", "errors")
                    },
                    "error": item.error or "",
                    "results": str(item.out or ""),
                }
            )
        columns = ["chatbot", "serial", "cases", "passed", "failed", "errors", "error", "results"]
        return pd.DataFrame(rows, columns=columns)

    def summary(self) -> Summary:
        """One line: ``"20 chatbots: 236 of 240 cases passed; 2 chatbots failed"``.

        Returns:
            The line, as a `Summary` with `chatbots`, `cases`, `passed`, `failed`, `errors`
                and `chatbots failed`.
        """
        frame = self.to_frame()
        counts = {"chatbots": len(frame)}
        counts.update({k: int(frame[k].sum()) for k in ("cases", "passed", "failed", "errors")})
        counts["chatbots failed"] = sum(1 for item in self.chatbots if not item.ok)
        text = (
            f"{counts['chatbots']} chatbots: {counts['passed']} of {counts['cases']} cases passed"
        )
        if counts["chatbots failed"]:
            failed = counts["chatbots failed"]
            text += f"; {failed} chatbot{'s' if failed != 1 else ''} failed"
        return Summary(text, counts)

    def to_excel(self, path: str | PathLike[str]) -> Path:
        """Write the fleet's table to an .xlsx workbook; returns the path.

        Args:
            path: The workbook to write; its folder is made when missing.

        Returns:
            The path written, as a `Path`.
        """
        from estatebot.fleet.fleet_workbook import write_fleet_table

        return write_fleet_table(self.to_frame(), path, sheet_name="fleet chat tests")

    def __repr__(self) -> str:
        return f"<FleetChatResults {self.summary()}>"

    def _repr_html_(self) -> str:
        from estatebot.fleet.fleet_html import fleet_html

        details = [(item.entry.heading, partial(_tested_html, item)) for item in self.chatbots]
        counts = dict(self.summary().counts)
        totals = {k: int(counts[k] or 0) for k in ("passed", "failed", "errors", "chatbots failed")}
        return fleet_html(
            f"Fleet chat tests: {self.summary()}", self.to_frame().drop(columns=["results"]),
            totals, details,
        )  # fmt: skip


def _tested_html(item: ChatbotTested) -> str:
    """A chatbot's part of the fleet's chat results: its results, or why it was not tested."""
    if item.results is not None:
        return str(item.results._repr_html_())
    return f"<p>{html.escape(item.error or '')}</p>"


def run_fleet_chat_tests(
    manifest: Manifest | str | PathLike[str],
    cases: str | PathLike[str] | None = None,
    *,
    out_dir: str | PathLike[str] | None = None,
    executor: Any = None,
    workers: int = DEFAULT_WORKERS,
    max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
    concurrency: int = 2,
    progress: bool | None = None,
) -> FleetChatResults:
    """Run chat test cases against every chatbot of a manifest.

    Args:
        manifest: A manifest read by `read_manifest`, or its path.
        cases: The cases for every chatbot whose manifest row names none (`tests`).
        out_dir: A folder for each chatbot's results workbook (`NNN-SERIAL.xlsx`); None
            keeps none.
        executor: As for `plan_fleet`.
        workers: As for `plan_fleet`.
        max_in_flight: As for `plan_fleet`.
        concurrency: Cases asked at once per chatbot.
        progress: Show a bar of chatbots tested (None: as `ESTATEBOT_PROGRESS` says).

    Returns:
        The `FleetChatResults`, one row per chatbot.

    Raises:
        ConfigurationError: A chatbot has no cases (no `tests` in its row and no `cases`).
    """
    from estatebot.fleet.fleet_plan import _base_url_of, _manifest

    manifest = _manifest(manifest)
    missing = [entry for entry in manifest.entries if entry.tests is None and cases is None]
    if missing:
        names = ", ".join(f"row {entry.row} ({entry.label})" for entry in missing[:5])
        raise ConfigurationError(
            f"no chat test cases for {names}: give the cases file, or a `tests` column in "
            f"{manifest.path.name}"
        )
    folder = Path(out_dir) if out_dir is not None else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    pool = resolve(executor, workers=workers, max_in_flight=max_in_flight)
    jobs = [
        _ChatJob(
            entry,
            Path(entry.tests if entry.tests is not None else cases),  # type: ignore[arg-type]
            folder / f"{place:03d}-{entry.serial}.xlsx" if folder is not None else None,
            concurrency,
            pool.gate_for(_base_url_of(entry)),
        )
        for place, entry in enumerate(manifest.entries)
    ]
    bar = progress_bar(len(jobs), f"Testing {len(jobs)} chatbots", progress=progress,
                       unit="chatbot")  # fmt: skip
    try:
        tested = pool.map_unordered(_test_chatbot, jobs, done=lambda _result: bar.update(1))
    finally:
        bar.close()
        pool.close()
    results = FleetChatResults(tested, folder)
    if folder is not None:
        results.to_excel(folder / "fleet.xlsx")
    return results
