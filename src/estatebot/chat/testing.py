"""Run a batch of chat test cases against a chatbot and collect the results as a frame.

>>> results = run_chat_tests(client, serial, "chat_tests.xlsx")   # doctest: +SKIP
>>> results.summary(); results.to_excel("results.xlsx")           # doctest: +SKIP

Cases and their expectations are described in :mod:`estatebot.chat.expectations`. The run uses a
thread pool (the sync client is thread-safe), never ``asyncio.run``, so it works from a script and
inside Jupyter's running event loop alike.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from os import PathLike
from typing import Any, Protocol

import pandas as pd
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter

from estatebot._progress import progress_bar
from estatebot.api.errors import RateLimitError
from estatebot.api.models import Answer
from estatebot.chat.expectations import (
    EXPECTATIONS,
    CasesInput,
    ChatCase,
    Observed,
    judge,
    load_cases,
    parse_bool,
)

__all__ = [
    "DEFAULT_RATE_LIMIT_WAIT",
    "RESULT_COLUMNS",
    "ChatClient",
    "ChatTestResults",
    "compare_chat_runs",
    "main_exit_code",
    "rate_limit_wait",
    "run_chat_tests",
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
#: Result columns after the ``_pass`` columns.
_TAIL_DTYPES: dict[str, str] = {"why": "string", "passed": "boolean"}

#: Every column a results frame can have, in order (``_pass`` columns only for expectations used).
RESULT_COLUMNS: tuple[str, ...] = (
    *_HEAD_DTYPES,
    *(f"{e}_pass" for e in EXPECTATIONS),
    *_TAIL_DTYPES,
)

#: The wait before retrying a rate-limited question when the service gave no ``Retry-After``;
#: it doubles on each further attempt (still capped by ``max_wait``).
DEFAULT_RATE_LIMIT_WAIT = 1.0

_RESULTS_SHEET = "results"
_SUMMARY_SHEET = "summary"
_FAILED_FILL = PatternFill(start_color="FFF4CCCC", end_color="FFF4CCCC", fill_type="solid")


# --------------------------------------------------------------------------- the client we need


class _ChatOperations(Protocol):
    def create_session(self, serial: str) -> int: ...

    def ask(self, session_id: int, content: str, *, timeout: float | None = None) -> Answer: ...


class ChatClient(Protocol):
    """What the harness needs of a client: ``estatebot.Client`` has it."""

    @property
    def chat(self) -> _ChatOperations: ...


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class _Settings:
    serial: str
    rate_limit_retries: int
    max_wait: float
    timeout: float | None


@dataclass(frozen=True)
class _CaseRun:
    """What happened to one case: the answer's figures, or an error."""

    attempts: int = 0
    session_id: int | None = None
    answer: Answer | None = None
    latency_ms: float | None = None
    error: str | None = None


def run_chat_tests(
    client: ChatClient,
    serial: str,
    cases: CasesInput,
    *,
    concurrency: int = 4,
    progress: bool | None = None,
    rate_limit_retries: int = 3,
    max_wait: float = 60.0,
    timeout: float | None = None,
) -> ChatTestResults:
    """Ask every case's question and check its expectations; one results row per case, in order.

    Cases sharing a ``conversation`` run in order in one chat session; every other case gets a
    fresh session. At most ``concurrency`` sessions run at once. A 429 waits as long as the
    service asks (``Retry-After``, capped at ``max_wait`` seconds; ``DEFAULT_RATE_LIMIT_WAIT``
    doubling when it does not say) and asks the same question again, up to ``rate_limit_retries``
    times. A case that still fails, or fails in any other way, is recorded in the ``error``
    column and the run goes on.

    Bad cases raise :class:`~estatebot.api.errors.SheetError` before anything is sent.
    ``timeout`` (seconds) applies to each question; ``None`` keeps the client's.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if rate_limit_retries < 0:
        raise ValueError(f"rate_limit_retries must be 0 or more, got {rate_limit_retries}")
    if max_wait < 0:
        raise ValueError(f"max_wait must be 0 or more, got {max_wait}")
    loaded = load_cases(cases)
    settings = _Settings(serial, rate_limit_retries, max_wait, timeout)
    runs: list[_CaseRun | None] = [None] * len(loaded)
    units = _units(loaded)
    stop = threading.Event()
    lock = threading.Lock()

    with progress_bar(len(loaded), "Chat tests", progress=progress, unit="case") as bar:

        def done(case: ChatCase, run: _CaseRun) -> None:
            runs[case.position] = run
            with lock:  # workers finish concurrently; keep the bar's counter exact
                bar.update(1)

        if units:
            workers = min(concurrency, len(units))
            with ThreadPoolExecutor(workers, thread_name_prefix="estatebot-chat-tests") as pool:
                futures = [
                    pool.submit(_run_unit, client, unit, settings, stop, done) for unit in units
                ]
                try:
                    for future in as_completed(futures):
                        future.result()
                except BaseException:
                    # Ctrl-C (or a bug): let workers stop at their next wait instead of running on.
                    stop.set()
                    for future in futures:
                        future.cancel()
                    raise

    return ChatTestResults(_frame(loaded, [run or _CaseRun(error="not run") for run in runs]))


def _units(cases: Sequence[ChatCase]) -> list[list[ChatCase]]:
    """Work units in input order: one per conversation (its cases in order), one per other case."""
    units: list[list[ChatCase]] = []
    conversations: dict[str, list[ChatCase]] = {}
    for case in cases:
        if case.conversation is None:
            units.append([case])
        elif case.conversation in conversations:
            conversations[case.conversation].append(case)
        else:
            conversations[case.conversation] = [case]
            units.append(conversations[case.conversation])
    return units


def _run_unit(
    client: ChatClient,
    unit: Sequence[ChatCase],
    settings: _Settings,
    stop: threading.Event,
    done: Callable[[ChatCase, _CaseRun], None],
) -> None:
    try:
        session_id = client.chat.create_session(settings.serial)
    except Exception as exc:  # recorded on every case of the unit; the run goes on
        for case in unit:
            done(case, _CaseRun(error=f"create_session: {_describe(exc)}"))
        return
    for case in unit:
        if stop.is_set():
            return
        done(case, _ask(client, session_id, case, settings, stop))


def _ask(
    client: ChatClient,
    session_id: int,
    case: ChatCase,
    settings: _Settings,
    stop: threading.Event,
) -> _CaseRun:
    attempts = 0
    while True:
        attempts += 1
        started = time.perf_counter()
        try:
            answer = client.chat.ask(session_id, case.question, timeout=settings.timeout)
        except RateLimitError as exc:
            if attempts > settings.rate_limit_retries:
                error = f"{_describe(exc)} (gave up after {attempts} attempts)"
                return _CaseRun(attempts=attempts, session_id=session_id, error=error)
            # Event.wait rather than sleep, so an interrupted run stops waiting at once.
            if stop.wait(rate_limit_wait(exc.retry_after, attempts, settings.max_wait)):
                return _CaseRun(attempts=attempts, session_id=session_id, error="stopped")
            continue
        except Exception as exc:  # any failure belongs to this case only
            return _CaseRun(attempts=attempts, session_id=session_id, error=_describe(exc))
        latency_ms = (time.perf_counter() - started) * 1000.0
        return _CaseRun(attempts, session_id, answer, latency_ms)


def rate_limit_wait(retry_after: float | None, attempt: int, max_wait: float) -> float:
    """Seconds to wait after a 429 on the given attempt: as asked, or a doubling default."""
    if retry_after is None:
        retry_after = DEFAULT_RATE_LIMIT_WAIT * 2 ** (attempt - 1)
    return max(0.0, min(retry_after, max_wait))


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _frame(cases: Sequence[ChatCase], runs: Sequence[_CaseRun]) -> pd.DataFrame:
    used = [e for e in EXPECTATIONS if any(e in case.expectations() for case in cases)]
    rows = [_row(case, run, used) for case, run in zip(cases, runs, strict=True)]
    return _typed(pd.DataFrame(rows, columns=_columns(used)))


def _row(case: ChatCase, run: _CaseRun, used: Sequence[str]) -> dict[str, Any]:
    answer = run.answer
    row: dict[str, Any] = {
        "case": case.name,
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
        observed = Observed(answer.content, answer.no_answer, answer.total_tokens, run.latency_ms)
        verdict = judge(case, observed)
        checks, why = verdict.checks, "; ".join(verdict.failures)
    for expectation in used:
        row[f"{expectation}_pass"] = checks.get(expectation)
    row["why"] = why
    row["passed"] = run.error is None and all(checks.values())
    return row


def _columns(used: Sequence[str]) -> list[str]:
    return [*_HEAD_DTYPES, *(f"{e}_pass" for e in used), *_TAIL_DTYPES]


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every known column in its nullable dtype, in the canonical order."""
    dtypes = {**_HEAD_DTYPES, **{c: "boolean" for c in frame.columns if c.endswith("_pass")}}
    dtypes.update(_TAIL_DTYPES)
    order = [c for c in RESULT_COLUMNS if c in frame.columns]
    return frame[order].astype({c: dtypes[c] for c in order})


# --------------------------------------------------------------------------- results


class ChatTestResults:
    """The outcome of :func:`run_chat_tests`: ``.frame`` has one row per case, in input order.

    Columns: ``case`` (the case's name or id), ``conversation``, ``question``, ``answer``,
    ``no_answer``, ``tokens``, ``latency_ms``, ``session_id``, ``message_id``, ``attempts``,
    ``error``, one ``<expectation>_pass`` per expectation type used (NA where a case does not set
    it or has no answer), ``why`` (each failed expectation) and ``passed`` (no error and every
    expectation passed).
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        missing = [c for c in (*_HEAD_DTYPES, *_TAIL_DTYPES) if c not in frame.columns]
        if missing:
            raise ValueError(f"not a chat results frame: missing columns {missing}")
        self._frame = _typed(frame)

    @classmethod
    def from_excel(cls, path: str | PathLike[str]) -> ChatTestResults:
        """Results read back from a workbook written by :meth:`to_excel`."""
        raw = pd.read_excel(
            path, sheet_name=_RESULTS_SHEET, dtype=str, keep_default_na=False, engine="openpyxl"
        )
        return cls(_parse_text_frame(raw))

    @property
    def frame(self) -> pd.DataFrame:
        """The results, one row per case (a copy: changing it leaves these results alone)."""
        return self._frame.copy()

    @property
    def passed(self) -> bool:
        """True when every case passed."""
        return bool(self._frame["passed"].all())

    @property
    def failures(self) -> pd.DataFrame:
        """The rows that did not pass (failed expectations or errors)."""
        return self._frame[~self._frame["passed"]].copy()

    def summary(self) -> dict[str, float | int | None]:
        """Counts and figures of the run.

        ``cases`` = ``passed`` + ``failed`` + ``errors``: ``failed`` counts cases answered but
        failing an expectation, ``errors`` cases with no usable answer. ``pass_rate`` is
        passed / cases. Latency percentiles (ms) and token figures cover answered cases; None when
        there are none.
        """
        frame = self._frame
        errors = int(frame["error"].notna().sum())
        passed = int(frame["passed"].sum())
        cases = len(frame)
        latency = frame["latency_ms"].dropna().astype("float64")
        tokens = frame["tokens"].dropna().astype("int64")

        def quantile(q: float) -> float | None:
            return float(latency.quantile(q)) if len(latency) else None

        return {
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

    def to_excel(self, path: str | PathLike[str]) -> None:
        """Write a ``results`` sheet (failed rows highlighted) and a ``summary`` sheet."""
        figures = self.summary()
        summary = pd.DataFrame({"metric": list(figures), "value": list(figures.values())})
        with pd.ExcelWriter(path, engine="openpyxl") as writer:
            self._frame.to_excel(writer, sheet_name=_RESULTS_SHEET, index=False)
            summary.to_excel(writer, sheet_name=_SUMMARY_SHEET, index=False)
            sheet = writer.sheets[_RESULTS_SHEET]
            sheet.freeze_panes = "A2"
            width = len(self._frame.columns)
            for position, passed in enumerate(self._frame["passed"], start=2):
                if not passed:
                    for cell in sheet[position][:width]:
                        cell.fill = _FAILED_FILL
            for cell in sheet[1]:
                cell.font = Font(bold=True)
            for letter, column in zip(_letters(width), self._frame.columns, strict=True):
                # Wide enough for the header, and room for answers without filling the screen.
                sheet.column_dimensions[letter].width = (
                    60 if column in _WIDE else max(len(column) + 2, 10)
                )
            writer.sheets[_SUMMARY_SHEET].column_dimensions["A"].width = 18

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
        s = self.summary()
        rate = "n/a" if s["pass_rate"] is None else f"{s['pass_rate']:.0%}"
        head = (
            f"<p><b>Chat tests</b>: {s['cases']} cases, {s['passed']} passed, "
            f"{s['failed']} failed, {s['errors']} errors ({rate})</p>"
        )
        shown_summary = {key: _shown(key, value) for key, value in s.items()}
        table = pd.DataFrame({"value": pd.Series(shown_summary, dtype="string")}).to_html(
            escape=True
        )
        failing = self.failures
        if failing.empty:
            return f"<div>{head}{table}</div>"
        shown = failing[["case", "question", "answer", "error", "why"]].head(_HTML_ROWS)
        # Blank rather than "<NA>", and long answers cut so the table stays readable.
        shown = shown.fillna("").assign(answer=shown["answer"].fillna("").str.slice(0, 200))
        more = len(failing) - len(shown)
        tail = f"<p>… and {more} more failing cases</p>" if more > 0 else ""
        rows = shown.to_html(escape=True, index=False)
        return f"<div>{head}{table}<p><b>Failing cases</b></p>{rows}{tail}</div>"


def _shown(key: str, value: float | int | None) -> str:
    if value is None:
        return ""
    if key == "pass_rate":
        return f"{value:.1%}"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return f"{value:,}"


_WIDE = frozenset({"question", "answer", "error", "why"})
_HTML_ROWS = 50


def _letters(count: int) -> list[str]:
    return [get_column_letter(i) for i in range(1, count + 1)]


def _parse_text_frame(raw: pd.DataFrame) -> pd.DataFrame:
    """A results frame read as text turned back into typed columns ("" is NA)."""
    columns: dict[str, pd.Series[Any]] = {}
    for column in raw.columns:
        name = str(column)
        stripped = raw[column].astype("string").str.strip()
        text = stripped.mask(stripped == "")
        if name.endswith("_pass") or name in ("no_answer", "passed"):
            columns[name] = text.map(parse_bool, na_action="ignore").astype("boolean")
        elif name in ("tokens", "session_id", "message_id", "attempts", "latency_ms"):
            columns[name] = pd.to_numeric(text)
        elif name == "why":
            columns[name] = text.fillna("")
        else:
            columns[name] = text
    return pd.DataFrame(columns)


# --------------------------------------------------------------------------- comparing runs

RunLike = ChatTestResults | pd.DataFrame | str | PathLike[str]

_CHANGE_COLUMNS: dict[str, str] = {
    "case": "string",
    "question": "string",
    "old_passed": "boolean",
    "new_passed": "boolean",
    "change": "string",
    "old_answer": "string",
    "new_answer": "string",
}


def compare_chat_runs(old: RunLike, new: RunLike) -> pd.DataFrame:
    """The cases whose verdict or answer changed between two runs.

    Cases are matched by name/id, else by question and conversation (a key used twice in one run
    is an error, never paired by order). ``change`` is ``now failing``, ``now passing``,
    ``answer changed``, ``added`` or ``removed``. Rows follow the new run's order; removed cases
    come last. Each run may be a :class:`ChatTestResults`, its frame, or a workbook written by
    :meth:`ChatTestResults.to_excel`.
    """
    before = _keyed(_as_frame(old), "old")
    after = _keyed(_as_frame(new), "new")
    rows: list[dict[str, Any]] = []
    for key, now in after.items():
        then = before.get(key)
        change = "added" if then is None else _change(then, now)
        if change is not None:
            rows.append(_change_row(then, now, change))
    for key, then in before.items():
        if key not in after:
            rows.append(_change_row(then, None, "removed"))
    return pd.DataFrame(rows, columns=list(_CHANGE_COLUMNS)).astype(_CHANGE_COLUMNS)


def _as_frame(run: RunLike) -> pd.DataFrame:
    if isinstance(run, ChatTestResults):
        return run.frame
    if isinstance(run, pd.DataFrame):
        return ChatTestResults(run).frame
    return ChatTestResults.from_excel(run).frame


def _keyed(frame: pd.DataFrame, which: str) -> dict[tuple[str, ...], dict[str, Any]]:
    keyed: dict[tuple[str, ...], dict[str, Any]] = {}
    for record in frame.to_dict(orient="records"):
        row = {str(k): (None if _is_na(v) else v) for k, v in record.items()}
        if row["case"] is not None:
            key: tuple[str, ...] = ("case", str(row["case"]))
        else:
            key = ("question", str(row["conversation"] or ""), str(row["question"]))
        if key in keyed:
            raise ValueError(
                f"the {which} run has two cases keyed {key[1:]!r}; name them to compare runs"
            )
        keyed[key] = row
    return keyed


def _is_na(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _change(then: dict[str, Any], now: dict[str, Any]) -> str | None:
    if bool(then["passed"]) and not bool(now["passed"]):
        return "now failing"
    if not bool(then["passed"]) and bool(now["passed"]):
        return "now passing"
    if then["answer"] != now["answer"]:
        return "answer changed"
    return None


def _change_row(
    then: dict[str, Any] | None, now: dict[str, Any] | None, change: str
) -> dict[str, Any]:
    either = now if now is not None else then
    assert either is not None  # one side always exists
    return {
        "case": either["case"],
        "question": either["question"],
        "old_passed": then["passed"] if then else None,
        "new_passed": now["passed"] if now else None,
        "change": change,
        "old_answer": then["answer"] if then else None,
        "new_answer": now["answer"] if now else None,
    }


# --------------------------------------------------------------------------- the command line


def main_exit_code(results: ChatTestResults) -> int:
    """The process exit code for ``estatebot test-chat``: 0 when every case passed, else 1.

    A run with no cases also gives 1, so an empty cases file cannot pass a check unnoticed.
    """
    return 0 if len(results) and results.passed else 1
