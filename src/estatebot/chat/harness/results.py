"""The results of a chat test run: one typed row per case, and `ChatTestResults` over them.

`results_frame` turns what happened to each case (`CaseRun`) and the verdict on its
answer into the results frame; `ChatTestResults` holds that frame, sums it up, writes it to
a workbook and reads it back.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from openpyxl import Workbook
from openpyxl.styles import PatternFill

from estatebot._safe_cells import SheetWriter, frame_rows, warn_changes
from estatebot._summary import Summary
from estatebot.api.models import Answer
from estatebot.chat.factcheck.claims import (
    CONTRADICTED,
    SUPPORTED,
    UNKNOWN_LISTING,
    claims_frame,
    empty_claims,
    unknown_listings,
)
from estatebot.chat.harness.case_cells import is_true, parse_bool
from estatebot.chat.harness.cases import EXPECTATIONS, ChatCase
from estatebot.chat.harness.checks import Observed, judge
from estatebot.chat.harness.naming import case_label, fill_case_names
from estatebot.chat.harness.results_html import results_html

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "CLAIMS_CASE_COLUMNS",
    "RESULT_COLUMNS",
    "CaseRun",
    "ChatTestResults",
    "claims_of_run",
    "main_exit_code",
    "results_frame",
]

#: Result columns before the ``<expectation>_pass`` columns, with their dtypes.
_HEAD_DTYPES: dict[str, str] = {
    "case": "string",
    "conversation": "string",
    "question": "string",
    "answer": "string",
    "no_answer": "boolean",
    "tokens": "Int64",
    "latency_ms": "Float64",
    "session_id": "Int64",
    "message_id": "Int64",
    "attempts": "Int64",
    "error": "string",
}
#: The claim counts of each answer, when the run fact-checked its answers.
_CLAIM_COUNTS: dict[str, str] = {
    "claims_supported": SUPPORTED,
    "claims_contradicted": CONTRADICTED,
    "claims_unknown": UNKNOWN_LISTING,
}
#: Result columns after the ``_pass`` columns.
_TAIL_DTYPES: dict[str, str] = {"why": "string", "passed": "boolean"}

#: Every column a results frame can have, in order (``_pass`` columns only for expectations
#: used, claim counts only when the answers were fact-checked).
RESULT_COLUMNS: tuple[str, ...] = (
    *_HEAD_DTYPES,
    *(f"{e}_pass" for e in EXPECTATIONS),
    *_CLAIM_COUNTS,
    *_TAIL_DTYPES,
)
#: The columns of ``ChatTestResults.claims``: the case, then the claim's columns.
CLAIMS_CASE_COLUMNS: tuple[str, ...] = ("case", "question")

_RESULTS_SHEET = "results"
_SUMMARY_SHEET = "summary"
_FAILED_FILL = PatternFill(start_color="FFF4CCCC", end_color="FFF4CCCC", fill_type="solid")


@dataclass(frozen=True)
class CaseRun:
    """What happened to one case: the answer's figures, or an error."""

    attempts: int = 0
    session_id: int | None = None
    answer: Answer | None = None
    latency_ms: float | None = None
    error: str | None = None


def results_frame(
    cases: Sequence[ChatCase],
    runs: Sequence[CaseRun],
    claims: Sequence[Sequence[Mapping[str, Any]] | None] | None = None,
) -> pd.DataFrame:
    """The typed results frame: one row per case, in order, with each case's verdict.

    `claims`, when the answers were fact-checked, holds each case's claim records
    (`ClaimChecker.records`; None for a case with no answer); the frame then has the
    `claims_*` counts.

    Args:
        cases: the cases, in order.
        runs: what happened to each case, one per case.
        claims: each case's claim records, one entry per case; None when nothing was
            fact-checked.

    Returns:
        The results frame (the columns of `RESULT_COLUMNS` that apply, in their dtypes).

    Raises:
        ValueError: `runs` or `claims` does not have one entry per case.
    """
    used = [e for e in EXPECTATIONS if any(e in case.expectations() for case in cases)]
    checked = claims if claims is not None else [None] * len(cases)
    rows = [
        _row(case, run, used, case_claims, counted=claims is not None)
        for case, run, case_claims in zip(cases, runs, checked, strict=True)
    ]
    return _typed(pd.DataFrame(rows, columns=_columns(used, counted=claims is not None)))


def claims_of_run(
    cases: Sequence[ChatCase], claims: Sequence[Sequence[Mapping[str, Any]] | None]
) -> pd.DataFrame:
    """Every claim of a run, each with its case's name and question, in case order.

    Args:
        cases: the cases, in order.
        claims: each case's claim records (None for a case with no answer), one per case.

    Returns:
        A claims frame with the columns `case` and `question` first.

    Raises:
        ValueError: `claims` does not have one entry per case.
    """
    rows = [
        {"case": case_label(case), "question": case.question, **row}
        for case, records in zip(cases, claims, strict=True)
        for row in records or ()
    ]
    return claims_frame(rows, CLAIMS_CASE_COLUMNS)


def _row(
    case: ChatCase,
    run: CaseRun,
    used: Sequence[str],
    claims: Sequence[Mapping[str, Any]] | None = None,
    *,
    counted: bool = False,
) -> dict[str, Any]:
    answer = run.answer
    row: dict[str, Any] = {
        "case": case_label(case),
        "conversation": case.conversation,
        "question": case.question,
        "answer": answer.content if answer else None,
        "no_answer": answer.no_answer if answer else None,
        "tokens": answer.total_tokens if answer else None,
        "latency_ms": run.latency_ms,
        "session_id": run.session_id,
        "message_id": answer.message_id if answer else None,
        "attempts": run.attempts,
        "error": run.error,
    }
    checks: dict[str, bool] = {}
    why = ""
    if answer is not None and run.latency_ms is not None:
        observed = Observed(
            answer.content, answer.no_answer, answer.total_tokens, run.latency_ms, claims
        )
        verdict = judge(case, observed)
        checks, why = verdict.checks, "; ".join(verdict.failures)
    for expectation in used:
        row[f"{expectation}_pass"] = checks.get(expectation)
    if counted:
        for column, verdict_name in _CLAIM_COUNTS.items():
            row[column] = (
                None if claims is None else sum(1 for c in claims if c["verdict"] == verdict_name)
            )
        if claims is not None:
            # A listing made up is one fault however many facts the answer gives about it.
            row["claims_unknown"] = len(unknown_listings(claims))
    row["why"] = why
    row["passed"] = run.error is None and all(checks.values())
    return row


def _columns(used: Sequence[str], *, counted: bool = False) -> list[str]:
    counts = list(_CLAIM_COUNTS) if counted else []
    return [*_HEAD_DTYPES, *(f"{e}_pass" for e in used), *counts, *_TAIL_DTYPES]


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every known column in its nullable dtype, in the canonical order."""
    dtypes = {**_HEAD_DTYPES, **{c: "boolean" for c in frame.columns if c.endswith("_pass")}}
    dtypes.update(dict.fromkeys(_CLAIM_COUNTS, "Int64"))
    dtypes.update(_TAIL_DTYPES)
    order = [c for c in RESULT_COLUMNS if c in frame.columns]
    return frame[order].astype({c: dtypes[c] for c in order})


# --------------------------------------------------------------------------- results


class ChatTestResults:
    """The outcome of `run_chat_tests`: `.frame` has one row per case, in input order.

    Columns: `case` (the case's name or id), `conversation`, `question`, `answer`,
    `no_answer`, `tokens`, `latency_ms`, `session_id`, `message_id`, `attempts`,
    `error`, one `<expectation>_pass` per expectation type used (NA where a case does not set
    it or has no answer), when the answers were fact-checked `claims_supported` and
    `claims_contradicted` (each answer's claims by verdict) and `claims_unknown` (the listings
    it names that you do not have, each once however many claims are about it), `why`
    (each failed expectation) and `passed` (no error and every expectation passed).

    `claims` holds every claim of the run (empty when nothing was fact-checked). `ok`
    says whether every case passed, `failures` lists those that did not.

    Args:
        frame: a results frame (as `results_frame` makes it, or read back from a workbook);
            its columns are put in their dtypes and canonical order.
        claims: every claim of the run, as `claims_of_run` makes it; None for none.

    Raises:
        ValueError: `frame` lacks one of the columns every results frame has.
    """

    def __init__(self, frame: pd.DataFrame, claims: pd.DataFrame | None = None) -> None:
        missing = [c for c in (*_HEAD_DTYPES, *_TAIL_DTYPES) if c not in frame.columns]
        if missing:
            raise ValueError(f"not a chat results frame: missing columns {missing}")
        self._frame = fill_case_names(_typed(frame))
        self._claims = empty_claims(CLAIMS_CASE_COLUMNS) if claims is None else claims.copy()

    @classmethod
    def from_excel(cls, path: str | PathLike[str]) -> ChatTestResults:
        """Results read back from a workbook written by `to_excel`.

        Args:
            path: the workbook (`.xlsx`).

        Returns:
            The results of its `results` sheet (the claims are not in the workbook: empty).

        Raises:
            FileNotFoundError: there is no file at `path`.
            ValueError: the workbook has no `results` sheet, the sheet lacks a results column,
                or a cell does not read back as its column's type (a true/false or a number).
        """
        raw = pd.read_excel(
            path, sheet_name=_RESULTS_SHEET, dtype=str, keep_default_na=False, engine="openpyxl"
        )
        return cls(_parse_text_frame(raw))

    @property
    def frame(self) -> pd.DataFrame:
        """The results, one row per case (a copy: changing it leaves these results alone)."""
        return self._frame.copy()

    @property
    def claims(self) -> pd.DataFrame:
        """Every claim the answers made about a listing, when the run fact-checked them: the
        case's `case` and `question`, then the columns of `estatebot.fact_check`
        (a copy)."""
        return self._claims.copy()

    @property
    def ok(self) -> bool:
        """True when every case passed."""
        return bool(self._frame["passed"].all())

    @property
    def failures(self) -> pd.DataFrame:
        """The rows that did not pass (failed expectations or errors)."""
        return self._frame[~self._frame["passed"]].copy()

    @property
    def passed(self) -> bool:
        """Deprecated: `ok` (every result says its success so); the frame's `passed`
        column is unchanged."""
        # Kept so scripts and notebooks written against the old name go on working.
        warnings.warn(
            "ChatTestResults.passed is deprecated; use ChatTestResults.ok",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.ok

    def to_frame(self) -> pd.DataFrame:
        """The results, one row per case (a copy, as `frame`).

        Returns:
            A copy of the results frame.
        """
        return self._frame.copy()

    def summary(self) -> Summary:
        """One line, such as `"8 of 10 cases passed, 1 failed, 1 errors"`, with the figures of
        the run in `.counts` (and by name: `summary["passed"]`).

        `cases` = `passed` + `failed` + `errors`: `failed` counts cases answered but
        failing an expectation, `errors` cases with no usable answer. `pass_rate` is
        passed / cases. Latency percentiles (ms) and token figures cover answered cases; None when
        there are none.

        Returns:
            The line, with the figures `cases`, `passed`, `failed`, `errors`, `pass_rate`,
            `latency_p50_ms`, `latency_p90_ms`, `latency_p99_ms`, `latency_max_ms`,
            `tokens_total` and `tokens_mean`.
        """
        frame = self._frame
        errors = int(frame["error"].notna().sum())
        passed = int(frame["passed"].sum())
        cases = len(frame)
        latency = frame["latency_ms"].dropna().astype("float64")
        tokens = frame["tokens"].dropna().astype("int64")

        def quantile(q: float) -> float | None:
            return float(latency.quantile(q)) if len(latency) else None

        figures: dict[str, float | int | None] = {
            "cases": cases,
            "passed": passed,
            "failed": cases - passed - errors,
            "errors": errors,
            "pass_rate": passed / cases if cases else None,
            "latency_p50_ms": quantile(0.5),
            "latency_p90_ms": quantile(0.9),
            "latency_p99_ms": quantile(0.99),
            "latency_max_ms": float(latency.max()) if len(latency) else None,
            "tokens_total": int(tokens.sum()),
            "tokens_mean": float(tokens.mean()) if len(tokens) else None,
        }
        text = f"{passed} of {cases} cases passed, {figures['failed']} failed, {errors} errors"
        return Summary(text, figures)

    def to_excel(self, path: str | PathLike[str]) -> Path:
        """Write a `results` sheet (failed rows highlighted) and a `summary` sheet.

        Questions and answers are untrusted text, written by the rules of
        `estatebot._safe_cells`: never a formula, and read back exactly by `from_excel`,
        except that characters a cell cannot hold are removed and an answer longer than a cell
        holds (32,767 characters) is cut, marked as cut; each cell so changed is named in a
        `CellWarning`. Returns the path written.

        Args:
            path: where to write the workbook (`.xlsx`); missing folders are made, an existing
                file is replaced.

        Returns:
            The path written.
        """
        figures = self.summary().counts
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        book = Workbook(write_only=True)
        columns = [str(c) for c in self._frame.columns]
        # Wide enough for the header, and room for answers without filling the screen.
        widths = {c: 60.0 if c in _WIDE else float(max(len(c) + 2, 10)) for c in columns}
        results = SheetWriter(book, _RESULTS_SHEET, columns, widths=widths)
        rows = frame_rows(self._frame)
        for values, passed in zip(rows, self._frame["passed"].tolist(), strict=True):
            results.append(values, fill=None if is_true(passed) else _FAILED_FILL)
        summary = SheetWriter(book, _SUMMARY_SHEET, ["metric", "value"], widths={"metric": 18})
        for name, value in figures.items():
            summary.append([name, value])
        book.save(target)
        warn_changes([*results.changes, *summary.changes], target.name)
        return target

    def __len__(self) -> int:
        return len(self._frame)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Each result row as a dict, in case order."""
        for record in self._frame.to_dict(orient="records"):
            yield {str(key): value for key, value in record.items()}

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"ChatTestResults(cases={s['cases']}, passed={s['passed']}, "
            f"failed={s['failed']}, errors={s['errors']})"
        )

    def _repr_html_(self) -> str:
        # The view is its own module (results_html): this class keeps to the data.
        return results_html(self._frame, self.summary().counts)

    def plot(self) -> Figure:
        """Latency per case (bars coloured by outcome, the median dashed) and the pass rate.

        Needs matplotlib (`pip install 'estatebot[plot]'`). Returns the figure, which a
        notebook shows when it is the cell's last value.

        Returns:
            The matplotlib figure.

        Raises:
            ImportError: matplotlib is not installed.
        """
        from estatebot.chat.harness.results_plot import plot_results

        return plot_results(self._frame, self.summary().counts)


_WIDE = frozenset({"question", "answer", "error", "why"})


def _parse_text_frame(raw: pd.DataFrame) -> pd.DataFrame:
    """A results frame read as text turned back into typed columns ("" is NA)."""
    columns: dict[str, pd.Series[Any]] = {}
    for column in raw.columns:
        name = str(column)
        stripped = raw[column].astype("string").str.strip()
        text = stripped.mask(stripped == "")
        if name.endswith("_pass") or name in ("no_answer", "passed"):
            columns[name] = text.map(parse_bool, na_action="ignore").astype("boolean")
        elif name in ("tokens", "session_id", "message_id", "attempts", "latency_ms") or (
            name in _CLAIM_COUNTS
        ):
            columns[name] = pd.to_numeric(text)
        elif name == "why":
            columns[name] = text.fillna("")
        else:
            columns[name] = text
    return pd.DataFrame(columns)


# --------------------------------------------------------------------------- the command line


def main_exit_code(results: ChatTestResults) -> int:
    """The process exit code for `estatebot test-chat`: 0 when every case passed, else 1.

    A run with no cases also gives 1, so an empty cases file cannot pass a check unnoticed.

    Args:
        results: the run's results.

    Returns:
        0 or 1.
    """
    return 0 if len(results) and results.ok else 1
