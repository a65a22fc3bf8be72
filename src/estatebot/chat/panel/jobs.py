"""The chat panel's background work: its jobs, where they run, and what they do to their turns.

A job is an answer to fetch or a session to start (:class:`Job`). With a sync
:class:`~estatebot.api.client.Client` every job runs on one worker thread (one, so that questions
and new sessions happen in the order they were made); with an
:class:`~estatebot.api.client.AsyncClient` each runs as a task on the running event loop (or on a
private :class:`LoopThread` when there is none), chained in order.

:class:`JobRunner` holds the steps: stopping and waiting for jobs, scheduling one, the two send
loops (sync and async), and filling in the job's turn as fragments, the answer, a stop or a
failure arrive. A streamed answer is re-rendered through a
:class:`~estatebot.chat.panel.coalesce.Coalescer`. Error texts pass through the API layer's
redaction, so no credential is ever shown.

The runner is a part of :class:`~estatebot.chat.panel.widget.ChatPanel`, not a base of it: it
holds the chat's state (session, last answer, tokens, rate limit) and tells the panel of changes
through the two callables it is given, ``changed`` and ``settled``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from estatebot.api import models
from estatebot.api._redact import redact
from estatebot.api.client import AsyncClient, Client
from estatebot.chat.panel.coalesce import Coalescer, Schedule, thread_timer
from estatebot.chat.panel.failures import describe_failure
from estatebot.chat.panel.render import turn_html
from estatebot.chat.panel.turns import Turn
from estatebot.errors import EstatebotError

__all__ = ["AnswerHook", "Job", "JobRunner", "LoopThread", "running_loop"]

#: A hook run on every complete answer: the HTML it returns is shown under the answer.
AnswerHook = Callable[[Turn], "str | None"]


@dataclass(eq=False)
class Job:
    """One piece of background work: an answer to fetch or a session to start."""

    kind: Literal["ask", "session"]
    turn: Turn
    view: Any  # the turn's widgets.HTML
    question: Turn | None = None
    content: str = ""
    ask_type: models.ChatAskType | None = None
    file_ids: list[int] | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    future: concurrent.futures.Future[Turn] = field(default_factory=concurrent.futures.Future)
    started: float = 0.0
    task: asyncio.Task[None] | None = None
    loop: asyncio.AbstractEventLoop | None = None


class LoopThread:
    """A private event loop on a daemon thread, for an AsyncClient used with no loop running."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="estatebot-chat-loop", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop the loop and, once its thread has ended, close it."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class JobRunner:
    """Runs a chat panel's jobs one after another, shows each job's progress in its turn, and
    stops them or waits for them.

    Args:
        client: the client to send with (:meth:`use` swaps it for a new one).
        serial: the chatbot's ``serialNumber``.
        stream: stream answers fragment by fragment (else one request, one answer).
        interval: the shortest time, in seconds, between two re-renders of a streamed answer.
        lock: the lock that guards the chat's state, shared with the panel so that it can read
            and change that state together with its own in one step.
        changed: called whenever what the panel's controls and status line show may have changed
            (a job queued or finished, a session started).
        settled: called with each job once its turn is final (done, stopped or failed), before
            ``changed``.

    The public attributes set in ``__init__`` (:attr:`session_id`, :attr:`last_answer`, ...)
    are the chat's state: the runner writes them as jobs run, the panel reads them.
    """

    def __init__(
        self,
        client: Client | AsyncClient,
        serial: str,
        *,
        stream: bool,
        interval: float,
        lock: threading.RLock,
        changed: Callable[[], None],
        settled: Callable[[Job], None],
    ) -> None:
        self.client = client
        self.lock = lock
        #: The current chat session's ID (None until the first question or new session).
        self.session_id: int | None = None
        #: The latest answer that arrived in full.
        self.last_answer: Turn | None = None
        #: Tokens of every answer since the runner was made (or :meth:`forget` was called).
        self.total_tokens = 0
        #: When the service accepts messages again, after a rate limit (None: no limit holds).
        self.retry_at: datetime | None = None
        #: Whether a failure said the client was closed (cleared by :meth:`use`).
        self.closed = False
        #: Run on every complete answer; what they return is shown under it.
        self.answer_hooks: list[AnswerHook] = []
        self._serial = serial
        # Fixed by the first client: a reconnected one is of the same kind (connection.reopen).
        self._is_async = isinstance(client, AsyncClient)
        self._stream = stream
        self._interval = interval
        self._changed = changed
        self._settled = settled
        self._jobs: list[Job] = []
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._loop_thread: LoopThread | None = None
        self._last_task: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        """Whether an answer or a new session is on its way."""
        with self.lock:
            return bool(self._jobs)

    @property
    def asking(self) -> bool:
        """Whether an answer (not a new session) is on its way: what Stop can stop."""
        with self.lock:
            return any(job.kind == "ask" for job in self._jobs)

    def use(self, client: Client | AsyncClient) -> None:
        """Send with ``client`` from now on (a reconnected one): the chat session is kept."""
        with self.lock:
            self.client = client
            self.closed = False

    def forget(self) -> None:
        """Forget the last answer, the token total and any rate limit; the session stays."""
        with self.lock:
            self.last_answer = None
            self.total_tokens = 0
            self.retry_at = None

    def close(self) -> None:
        """Release the worker thread or the private loop (call :meth:`stop` first)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        if self._loop_thread is not None:
            self._loop_thread.close()

    # ------------------------------------------------------------------ stopping and waiting

    def stop(self) -> None:
        """Stop every answer on its way; what has arrived stays, marked stopped."""
        with self.lock:
            jobs = [job for job in self._jobs if job.kind == "ask"]
        for job in jobs:
            job.stop.set()
            if job.task is not None and job.loop is not None and not job.loop.is_closed():
                job.loop.call_soon_threadsafe(job.task.cancel)

    async def wait(self) -> Turn | None:
        """Wait until nothing is on its way; returns :attr:`last_answer`.

        Bound the wait with ``asyncio.timeout`` if needed.
        """
        while pending := self._pending_futures():
            await asyncio.gather(*(asyncio.wrap_future(f) for f in pending))
        return self.last_answer

    def wait_sync(self, timeout: float | None = None) -> Turn | None:
        """:meth:`wait`, blocking."""
        self.check_may_block("wait_sync", "await panel.wait()")
        deadline = None if timeout is None else time.monotonic() + timeout
        while pending := self._pending_futures():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            _, not_done = concurrent.futures.wait(pending, timeout=left)
            if not_done:
                raise TimeoutError("the chat panel is still busy")
        return self.last_answer

    def check_may_block(self, name: str, instead: str) -> None:
        """Raise RuntimeError when waiting here for an answer would block forever: ``name`` is
        the blocking call, ``instead`` what to use in its place."""
        # With an AsyncClient the answer runs on the running loop: blocking that loop's thread
        # would wait forever for a task that can never run.
        if self._is_async and running_loop() is not None:
            raise RuntimeError(f"{name} would block the event loop the answer needs; use {instead}")

    def _pending_futures(self) -> list[concurrent.futures.Future[Turn]]:
        with self.lock:
            return [job.future for job in self._jobs]

    # ------------------------------------------------------------------ starting work

    def schedule(self, job: Job) -> None:
        """Run ``job`` after the jobs already queued (in the background: this returns at once)."""
        with self.lock:
            self._jobs.append(job)
        self._changed()
        if not self._is_async:
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="estatebot-chat"
                )
            self._executor.submit(self._run_sync, job)
            return
        loop = running_loop()
        if loop is not None:
            self._spawn(loop, job)
        else:
            if self._loop_thread is None:
                self._loop_thread = LoopThread()
            own = self._loop_thread.loop
            own.call_soon_threadsafe(self._spawn, own, job)

    def _spawn(self, loop: asyncio.AbstractEventLoop, job: Job) -> None:
        previous = self._last_task
        job.loop = loop
        job.task = loop.create_task(self._run_async(job, previous))
        self._last_task = job.task

    # ------------------------------------------------------------------ the two send loops

    def _run_sync(self, job: Job) -> None:
        try:
            if job.kind == "session":
                self._session_started(job, self._sync_client().chat.create_session(self._serial))
            else:
                self._ask_sync(job)
        except Exception as exc:
            self._fail(job, exc)
        finally:
            self._finish(job)

    def _ask_sync(self, job: Job) -> None:
        if job.stop.is_set():
            self._stopped(job, None)
            return
        chat = self._sync_client().chat
        if self.session_id is None:
            self._set_session(chat.create_session(self._serial))
        session_id = self._require_session()
        self._begin(job, session_id)
        if not self._stream:
            answer = chat.ask(session_id, job.content, ask_type=job.ask_type, file_ids=job.file_ids)
            self._answered(job, None, answer)
            return
        coalescer = self._coalescer(job, thread_timer)
        with chat.stream(
            session_id, job.content, ask_type=job.ask_type, file_ids=job.file_ids
        ) as stream:
            for fragment in stream:
                if job.stop.is_set():
                    break  # leaving the with block closes the response
                self._fragment(job, coalescer, fragment)
            else:
                self._answered(job, coalescer, stream.result)
                return
        self._stopped(job, coalescer)

    async def _run_async(self, job: Job, previous: asyncio.Task[None] | None) -> None:
        coalescer: Coalescer | None = None
        try:
            # Jobs run one after another, in the order they were made.
            if (
                previous is not None
                and not previous.done()
                and previous.get_loop() is asyncio.get_running_loop()
            ):
                await asyncio.wait({previous})
            chat = self._async_client().chat
            if job.kind == "session":
                self._session_started(job, await chat.create_session(self._serial))
                return
            if job.stop.is_set():
                self._stopped(job, None)
                return
            if self.session_id is None:
                self._set_session(await chat.create_session(self._serial))
            session_id = self._require_session()
            self._begin(job, session_id)
            if not self._stream:
                answer = await chat.ask(
                    session_id, job.content, ask_type=job.ask_type, file_ids=job.file_ids
                )
                self._answered(job, None, answer)
                return
            loop = asyncio.get_running_loop()
            coalescer = self._coalescer(job, loop.call_later)
            async with chat.stream(
                session_id, job.content, ask_type=job.ask_type, file_ids=job.file_ids
            ) as stream:
                async for fragment in stream:
                    if job.stop.is_set():
                        break
                    self._fragment(job, coalescer, fragment)
                else:
                    self._answered(job, coalescer, stream.result)
                    return
            self._stopped(job, coalescer)
        except asyncio.CancelledError:
            self._stopped(job, coalescer)
            if not job.stop.is_set():
                raise  # cancelled by someone else (loop shutting down): let it propagate
        except Exception as exc:
            self._fail(job, exc)
        finally:
            self._finish(job)

    def _sync_client(self) -> Client:
        assert isinstance(self.client, Client)
        return self.client

    def _async_client(self) -> AsyncClient:
        assert isinstance(self.client, AsyncClient)
        return self.client

    # ------------------------------------------------------------------ job steps (shared)

    def _set_session(self, session_id: int) -> None:
        self.session_id = session_id
        self._changed()

    def _require_session(self) -> int:
        if self.session_id is None:  # only if another thread cleared it: say so plainly
            raise EstatebotError("no chat session")
        return self.session_id

    def _session_started(self, job: Job, session_id: int) -> None:
        job.turn.session_id = session_id
        job.turn.text = f"New session {session_id}"
        job.turn.state = "done"
        self._show(job)
        with self.lock:
            # The service counts messages per session: the old session's limit is not this one's.
            self.retry_at = None
        self._set_session(session_id)

    def _begin(self, job: Job, session_id: int) -> None:
        job.turn.session_id = session_id
        if job.question is not None:
            job.question.session_id = session_id
        job.started = time.perf_counter()

    def _coalescer(self, job: Job, schedule: Schedule) -> Coalescer:
        return Coalescer(lambda text: self._show(job, text), self._interval, schedule)

    def _fragment(self, job: Job, coalescer: Coalescer, fragment: str) -> None:
        job.turn.text += fragment
        job.turn.state = "streaming"
        coalescer.push(job.turn.text)

    def _answered(
        self,
        job: Job,
        coalescer: Coalescer | None,
        result: models.StreamResult | models.Answer,
    ) -> None:
        turn = job.turn
        if coalescer is not None:
            coalescer.close()
        turn.latency_ms = self._elapsed_ms(job)
        if isinstance(result, models.Answer):
            turn.text = result.content
            turn.answer_id = result.message_id
            turn.tokens = result.total_tokens
            turn.no_answer = result.no_answer
        else:
            # The final object's Answer is the whole text; the fragments are the fallback.
            turn.text = result.answer or turn.text
            turn.question_id = result.question_id
            turn.answer_id = result.answer_id
            if job.question is not None:
                job.question.question_id = result.question_id
            turn.tokens = result.total_tokens
            turn.no_answer = result.no_answer
            turn.complete = result.complete
        turn.state = "done"
        turn.answered_at = datetime.now()
        turn.extra_html = self._hook_html(turn)
        self._show(job)
        with self.lock:
            self.last_answer = turn
            self.total_tokens += turn.tokens or 0
            # An answer arrived: whatever limit held before is gone.
            self.retry_at = None

    def _hook_html(self, turn: Turn) -> str:
        """What the answer hooks add under a complete answer; a hook that fails says so."""
        pieces: list[str] = []
        for hook in list(self.answer_hooks):
            try:
                piece = hook(turn)
            except Exception as exc:  # a broken hook must not lose the answer
                name = getattr(hook, "__name__", type(hook).__name__)
                piece = f'<span class="eb-meta">{name} failed: {redact(type(exc).__name__)}</span>'
            if piece:
                pieces.append(piece)
        return "".join(pieces)

    def _stopped(self, job: Job, coalescer: Coalescer | None) -> None:
        if coalescer is not None:
            coalescer.close()
        if job.started:
            job.turn.latency_ms = self._elapsed_ms(job)
        job.turn.state = "stopped"
        self._show(job)

    def _fail(self, job: Job, exc: Exception) -> None:
        turn = job.turn
        # What had arrived of the answer stays; the headline says how much.
        arrived = len(turn.text) if turn.role == "bot" else 0
        turn.state = "failed"
        turn.failed_at = datetime.now()
        failure = describe_failure(exc, arrived=arrived)
        turn.error_title = failure.title
        turn.error_details = failure.technical or None
        # ``error`` keeps the service's own words (a rate limit's message), else the technical
        # details, for code and the history to check.
        turn.error = failure.detail or failure.technical or failure.title
        if failure.retry_after is not None:
            turn.retry_at = datetime.now() + timedelta(seconds=failure.retry_after)
            with self.lock:
                self.retry_at = turn.retry_at
        if failure.closed:
            with self.lock:
                self.closed = True
        if job.started:
            turn.latency_ms = self._elapsed_ms(job)
        self._show(job)

    def _finish(self, job: Job) -> None:
        with self.lock:
            if job in self._jobs:
                self._jobs.remove(job)
        self._settled(job)
        self._changed()
        job.future.set_result(job.turn)

    @staticmethod
    def _elapsed_ms(job: Job) -> float:
        return round((time.perf_counter() - job.started) * 1000, 1)

    def _show(self, job: Job, text: str | None = None) -> None:
        job.view.value = turn_html(job.turn, text)
