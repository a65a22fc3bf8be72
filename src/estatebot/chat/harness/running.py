"""Running chat test cases against a chatbot: sessions, concurrency, retries after a 429.

`run_chat_tests` reads the cases, asks each question in its chat session on a thread pool
(the sync client is thread-safe), never `asyncio.run`, so it works from a script and inside
Jupyter's running event loop alike, and hands what happened to each case to
`estatebot.chat.harness.results`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from estatebot._progress import progress_bar
from estatebot.api.models import Answer
from estatebot.chat.factcheck.claims import ClaimChecker
from estatebot.chat.harness.cases import CasesInput, ChatCase, load_cases
from estatebot.chat.harness.results import (
    CaseRun,
    ChatTestResults,
    claims_of_run,
    results_frame,
)
from estatebot.errors import RateLimitError
from estatebot.listings.remote.pull import pull_listings

__all__ = ["DEFAULT_RATE_LIMIT_WAIT", "ChatClient", "rate_limit_wait", "run_chat_tests"]

#: The wait before retrying a rate-limited question when the service gave no ``Retry-After``;
#: it doubles on each further attempt (still capped by ``max_wait``).
DEFAULT_RATE_LIMIT_WAIT = 1.0


# --------------------------------------------------------------------------- the client we need


class _ChatOperations(Protocol):
    def create_session(self, serial: str) -> int: ...

    def ask(self, session_id: int, content: str, *, timeout: float | None = None) -> Answer: ...


class ChatClient(Protocol):
    """What the harness needs of a client: `estatebot.Client` has it."""

    @property
    def chat(self) -> _ChatOperations: ...


# --------------------------------------------------------------------------- running


@dataclass(frozen=True)
class _Settings:
    serial: str
    rate_limit_retries: int
    max_wait: float
    timeout: float | None


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
    listings: pd.DataFrame | None = None,
) -> ChatTestResults:
    """Ask every case's question and check its expectations; one results row per case, in order.

    Cases sharing a `conversation` run in order in one chat session; every other case gets a
    fresh session. At most `concurrency` sessions run at once. A 429 waits as long as the
    service asks (`Retry-After`, capped at `max_wait` seconds; `DEFAULT_RATE_LIMIT_WAIT`
    doubling when it does not say) and asks the same question again, up to `rate_limit_retries`
    times. A case that still fails, or fails in any other way, is recorded in the `error`
    column and the run goes on.

    Bad cases raise `SheetError` before anything is sent.
    `timeout` (seconds) applies to each question; `None` keeps the client's.

    When a case sets `expect_grounded` true, the chatbot's listings are pulled once, before
    any question (or `listings`, a frame as `pull_listings` gives, is used), and every answer
    is fact-checked (`estatebot.fact_check`): the results gain the `claims_*` counts and
    `ChatTestResults.claims`, and a grounded case fails on any contradicted or
    unknown-listing claim.

    Args:
        client: the client to ask with: an `estatebot.Client` (thread-safe, shared by the
            worker threads), or anything with its `chat.create_session` and `chat.ask`.
        serial: the chatbot's `serialNumber`.
        cases: the cases: a DataFrame, a path to an `.xlsx`/`.csv` file (first sheet, read as
            text), or a list of dicts (a plain string is a question with no expectations).
        concurrency: the most chat sessions run at once (at least 1).
        progress: show a progress bar; None shows one unless `ESTATEBOT_PROGRESS` is false or
            the run is in CI.
        rate_limit_retries: how many times a rate-limited question is asked again (0 or more).
        max_wait: the longest wait after a 429, in seconds (0 or more).
        timeout: the time allowed for each question, in seconds; None keeps the client's.
        listings: the chatbot's listings to fact-check every answer against; None pulls them
            when a case sets `expect_grounded`, and checks nothing otherwise.

    Returns:
        One results row per case, in input order (with the claims when answers were checked).

    Raises:
        ValueError: `concurrency` is below 1, or `rate_limit_retries` or `max_wait` below 0;
            a cases file is neither `.xlsx` nor `.csv`; or `listings` has none of the columns
            that name a listing (`MLSNumber`, `Address`, `Url`).
        TypeError: `cases` is none of the accepted kinds; or `listings` is not a DataFrame.
        SheetError: a case is bad (names its row and column); nothing was sent.
        PullError: the listings a grounded case needs could not be pulled.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if rate_limit_retries < 0:
        raise ValueError(f"rate_limit_retries must be 0 or more, got {rate_limit_retries}")
    if max_wait < 0:
        raise ValueError(f"max_wait must be 0 or more, got {max_wait}")
    loaded = load_cases(cases)
    checker = _claim_checker(client, serial, loaded, listings)
    settings = _Settings(serial, rate_limit_retries, max_wait, timeout)
    runs: list[CaseRun | None] = [None] * len(loaded)
    units = _units(loaded)
    stop = threading.Event()
    lock = threading.Lock()

    with progress_bar(len(loaded), "Chat tests", progress=progress, unit="case") as bar:

        def done(case: ChatCase, run: CaseRun) -> None:
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

    finished = [run or CaseRun(error="not run") for run in runs]
    if checker is None:
        return ChatTestResults(results_frame(loaded, finished))
    claims = [checker.records(run.answer.content) if run.answer else None for run in finished]
    return ChatTestResults(results_frame(loaded, finished, claims), claims_of_run(loaded, claims))


def _claim_checker(
    client: Any,
    serial: str,
    cases: Sequence[ChatCase],
    listings: pd.DataFrame | None,
) -> ClaimChecker | None:
    """The listings to fact-check answers against: given, or pulled once when a case needs it."""
    if listings is not None:
        return ClaimChecker(listings)
    if not any(case.expect_grounded for case in cases):
        return None
    return ClaimChecker(pull_listings(client, serial, progress=False))


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
    done: Callable[[ChatCase, CaseRun], None],
) -> None:
    try:
        session_id = client.chat.create_session(settings.serial)
    except Exception as exc:  # recorded on every case of the unit; the run goes on
        for case in unit:
            done(case, CaseRun(error=f"create_session: {_describe(exc)}"))
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
) -> CaseRun:
    attempts = 0
    while True:
        attempts += 1
        started = time.perf_counter()
        try:
            answer = client.chat.ask(session_id, case.question, timeout=settings.timeout)
        except RateLimitError as exc:
            if attempts > settings.rate_limit_retries:
                error = f"{_describe(exc)} (gave up after {attempts} attempts)"
                return CaseRun(attempts=attempts, session_id=session_id, error=error)
            # Event.wait rather than sleep, so an interrupted run stops waiting at once.
            if stop.wait(rate_limit_wait(exc.retry_after, attempts, settings.max_wait)):
                return CaseRun(attempts=attempts, session_id=session_id, error="stopped")
            continue
        except Exception as exc:  # any failure belongs to this case only
            return CaseRun(attempts=attempts, session_id=session_id, error=_describe(exc))
        latency_ms = (time.perf_counter() - started) * 1000.0
        return CaseRun(attempts, session_id, answer, latency_ms)


def rate_limit_wait(retry_after: float | None, attempt: int, max_wait: float) -> float:
    """Seconds to wait after a 429 on the given attempt: as asked, or a doubling default.

    Args:
        retry_after: the wait the service asked for, in seconds; None when it did not say
            (then `DEFAULT_RATE_LIMIT_WAIT`, doubled for each attempt after the first).
        attempt: the number of the attempt that was rate limited, from 1.
        max_wait: the longest wait, in seconds.

    Returns:
        The wait in seconds, between 0 and `max_wait`.
    """
    if retry_after is None:
        retry_after = DEFAULT_RATE_LIMIT_WAIT * 2 ** (attempt - 1)
    return max(0.0, min(retry_after, max_wait))


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
