"""ChatPanel: chat with a chatbot from a notebook, answers streamed into an ipywidgets transcript.

The panel is a ``VBox``: ``display(panel)`` (or leaving it last in a cell) shows it. Questions are
sent from the input box (Enter or Send) or from code with ``await panel.ask(...)`` /
``panel.ask_sync(...)``.

How the work is done:

* **In the background.** With a sync :class:`~estatebot.api.client.Client` every request runs on
  one worker thread (one, so that questions and new sessions happen in the order they were made);
  with an :class:`~estatebot.api.client.AsyncClient` each runs as a task on the running event loop
  (or on a private loop thread when there is none), chained in order. The notebook stays free.
* **Stop** sets the job's stop event; the sync stream loop checks it at every fragment and breaks,
  which closes the HTTP response; an async task is also cancelled at once. The partial answer
  stays in the transcript, marked stopped.
* **Coalescing.** Every change of an HTML widget's ``value`` sends the whole value to the
  browser, so a streamed answer is re-rendered at most once per ``update_interval`` seconds:
  the first fragment at once, later ones at the end of the interval (a timer flushes a pending
  text even if no further fragment comes), and the final text always.

Answers are untrusted text: they are rendered by :mod:`estatebot.chat.markdown` (raw HTML
escaped, web links only); questions, errors and notices are escaped. Error texts pass through
the API layer's redaction, so no credential is ever shown.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import html
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

import ipywidgets as widgets
import pandas as pd
from pydantic import ValidationError

from estatebot.api import models
from estatebot.api._redact import redact
from estatebot.api.client import AsyncClient, Client
from estatebot.api.errors import EstatebotError, RateLimitError, RequestValidationError
from estatebot.chat.markdown import render_markdown, render_plain

__all__ = ["HISTORY_COLUMNS", "ChatPanel", "Turn"]

Role = Literal["user", "bot", "session", "notice"]
TurnState = Literal["waiting", "streaming", "done", "stopped", "failed"]

#: Columns of :attr:`ChatPanel.history` and their dtypes.
HISTORY_COLUMNS: dict[str, str] = {
    "turn": "Int64",
    "role": "string",
    "text": "string",
    "question_id": "Int64",
    "answer_id": "Int64",
    "tokens": "Int64",
    "latency_ms": "Float64",
    "no_answer": "boolean",
    "error": "string",
    "session_id": "Int64",
    "state": "string",
}

ASK_TYPES: tuple[str, ...] = tuple(kind.value for kind in models.ChatAskType)


@dataclass
class Turn:
    """One entry of the transcript: a question, an answer, a session marker or a notice.

    ``state`` is ``waiting`` or ``streaming`` while an answer is on its way, then ``done``,
    ``stopped`` (Stop was pressed; ``text`` holds what had arrived) or ``failed`` (``error``
    says why). ``complete`` is False when a stream ended without its final object.
    """

    role: Role
    text: str = ""
    turn: int = 0
    question_id: int | None = None
    answer_id: int | None = None
    tokens: int | None = None
    latency_ms: float | None = None
    no_answer: bool | None = None
    error: str | None = None
    session_id: int | None = None
    state: TurnState = "done"
    complete: bool = True
    ask_type: str | None = None
    file_ids: tuple[int, ...] = ()
    retry_at: datetime | None = None

    @property
    def stopped(self) -> bool:
        """Whether Stop cut this answer short."""
        return self.state == "stopped"

    @property
    def finished(self) -> bool:
        """Whether nothing more will happen to this turn."""
        return self.state in ("done", "stopped", "failed")


# --------------------------------------------------------------------------- coalescing


class _Cancellable(Protocol):
    def cancel(self) -> None: ...


Schedule = Callable[[float, Callable[[], None]], _Cancellable]


def _thread_timer(delay: float, callback: Callable[[], None]) -> _Cancellable:
    timer = threading.Timer(delay, callback)
    timer.daemon = True
    timer.start()
    return timer


class _Coalescer:
    """Passes the latest text to ``show`` at most once per ``interval`` seconds.

    The first text is shown at once; a text arriving sooner is kept and shown when the interval
    ends (by a scheduled flush, so a pause in the stream does not leave it hidden); :meth:`close`
    drops whatever is pending, after which nothing more is shown.
    """

    def __init__(self, show: Callable[[str], None], interval: float, schedule: Schedule) -> None:
        self._show = show
        self._interval = interval
        self._schedule = schedule
        # show() runs under the lock so that a flush from a timer thread and the stream's own
        # updates reach the widget one at a time and in order.
        self._lock = threading.Lock()
        self._last_shown: float | None = None
        self._pending: str | None = None
        self._timer: _Cancellable | None = None
        self._closed = False
        self.shown = 0

    def push(self, text: str) -> None:
        """Offer the latest text; it is shown now or at the end of the current interval."""
        with self._lock:
            if self._closed:
                return
            now = time.monotonic()
            if self._last_shown is None or now - self._last_shown >= self._interval:
                self._show_locked(text, now)
            else:
                self._pending = text
                if self._timer is None:
                    delay = self._last_shown + self._interval - now
                    self._timer = self._schedule(delay, self._flush)

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            if not self._closed and self._pending is not None:
                self._show_locked(self._pending, time.monotonic())

    def _show_locked(self, text: str, now: float) -> None:
        self._pending = None
        self._last_shown = now
        self.shown += 1
        self._show(text)

    def close(self) -> None:
        """Stop showing: cancel the pending flush (the caller then renders the final state)."""
        with self._lock:
            self._closed = True
            self._pending = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None


# --------------------------------------------------------------------------- jobs


@dataclass(eq=False)
class _Job:
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


class _LoopThread:
    """A private event loop on a daemon thread, for an AsyncClient used with no loop running."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="estatebot-chat-loop", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()


def parse_file_ids(text: str) -> tuple[list[int] | None, list[str]]:
    """Comma-separated file IDs as integers (None when empty), and the parts that are not."""
    parts = [part.strip() for part in text.replace(";", ",").split(",") if part.strip()]
    ids: list[int] = []
    bad: list[str] = []
    for part in parts:
        try:
            ids.append(int(part))
        except ValueError:
            bad.append(part)
    return (ids or None), bad


def _done_future(turn: Turn) -> concurrent.futures.Future[Turn]:
    future: concurrent.futures.Future[Turn] = concurrent.futures.Future()
    future.set_result(turn)
    return future


def _descendants(box: Any) -> list[Any]:
    found: list[Any] = []
    for child in getattr(box, "children", ()):
        found.extend([*_descendants(child), child])
    return found


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# --------------------------------------------------------------------------- rendering

_CSS = """
<style>
.eb-chat { border: 1px solid #d0d7de; border-radius: 10px; padding: 8px 10px; max-width: 820px;
  background: #ffffff; font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; }
.eb-chat .eb-title { font-size: 15px; font-weight: 600; color: #1f2328; line-height: 1.6;
  padding: 0 2px 4px; border-bottom: 1px solid #eaeef2; }
.eb-chat .eb-transcript { padding: 4px 2px; }
.eb-chat .eb-turn-view, .eb-chat .eb-turn-view > .widget-html-content { width: 100%;
  line-height: 1.45; }
.eb-chat .eb-turn { box-sizing: border-box; margin: 4px 0; padding: 6px 10px; border-radius: 10px;
  width: fit-content; max-width: 88%; font-size: 13px; line-height: 1.45; white-space: normal;
  color: #1f2328; overflow-wrap: anywhere; }
.eb-chat .eb-turn p { margin: 0.25em 0; }
.eb-chat .eb-turn ul, .eb-chat .eb-turn ol { margin: 0.25em 0; padding-left: 1.4em; }
.eb-chat .eb-turn table { border-collapse: collapse; margin: 0.3em 0; }
.eb-chat .eb-turn th, .eb-chat .eb-turn td { border: 1px solid #d0d7de; padding: 2px 6px; }
.eb-chat .eb-who { font-size: 11px; font-weight: 600; color: #59636e; }
.eb-chat .eb-user { background: #dbeafe; margin-left: auto; }
.eb-chat .eb-bot { background: #f3f4f6; }
.eb-chat .eb-session { background: none; color: #59636e; font-size: 12px; width: 100%;
  max-width: 100%;
  text-align: center; border-top: 1px dashed #d0d7de; border-radius: 0; }
.eb-chat .eb-notice, .eb-chat .eb-failed { background: #fff1f0; border: 1px solid #ffccc7; }
.eb-chat .eb-no-answer { border: 1px dashed #d4a72c; background: #fff8e5; }
.eb-chat .eb-stopped { border: 1px dashed #8c959f; }
.eb-chat .eb-badge { display: inline-block; margin-left: 6px; padding: 0 6px; border-radius: 8px;
  font-size: 10px; font-weight: 600; text-transform: uppercase; background: #eaeef2; }
.eb-chat .eb-badge-no-answer { background: #d4a72c; color: #ffffff; }
.eb-chat .eb-badge-stopped { background: #6e7781; color: #ffffff; }
.eb-chat .eb-badge-error, .eb-chat .eb-badge-rate-limited { background: #cf222e; color: #fff; }
.eb-chat .eb-error-text { color: #a40e26; }
.eb-chat .eb-meta { font-size: 11px; color: #59636e; }
.eb-chat .eb-streaming .eb-body::after { content: '▍'; color: #8c959f; }
.eb-chat .eb-typing { color: #8c959f; letter-spacing: 2px; }
.eb-chat .eb-status { font-size: 12px; color: #59636e; line-height: 1.6; }
.eb-chat .eb-status b { color: #1f2328; }
</style>
"""


def _badge(kind: str, label: str) -> str:
    return f'<span class="eb-badge eb-badge-{kind}">{html.escape(label)}</span>'


def _clock(moment: datetime) -> str:
    return moment.strftime("%H:%M:%S")


# --------------------------------------------------------------------------- the panel


class ChatPanel(widgets.VBox):  # type: ignore[misc]  # ipywidgets ships no type information
    """A chat with one chatbot in a notebook: transcript, input, Send/Stop, new session, status.

    Args:
        client: a :class:`~estatebot.api.client.Client` or
            :class:`~estatebot.api.client.AsyncClient`.
        serial: the chatbot's ``serialNumber``.
        stream: stream answers fragment by fragment (else one request, one answer).
        title: the heading; defaults to the chatbot ID.
        update_interval: the shortest time, in seconds, between two re-renders of a streamed
            answer (the first fragment and the final text are never held back).
        height: the most the transcript grows before it scrolls (a CSS length).

    The first question starts a chat session; **New session** starts another. Nothing is sent
    when the question breaks the ClientAsk rules (the problems are shown instead).
    """

    def __init__(
        self,
        client: Client | AsyncClient,
        serial: str,
        *,
        stream: bool = True,
        title: str | None = None,
        update_interval: float = 0.05,
        height: str = "420px",
    ) -> None:
        self.title = title if title is not None else f"Chatbot {serial}"
        self.input = widgets.Text(
            placeholder="Ask about listings… (Enter sends)",
            layout=widgets.Layout(flex="1 1 auto", width="auto"),
        )
        self.send_button = widgets.Button(
            description="Send", button_style="primary", icon="paper-plane", tooltip="Send"
        )
        self.stop_button = widgets.Button(
            description="Stop", icon="stop", disabled=True, tooltip="Stop the answer"
        )
        self.new_session_button = widgets.Button(
            description="New session", icon="refresh", tooltip="Start a new chat session"
        )
        self.ask_type = widgets.Dropdown(
            options=list(ASK_TYPES),
            value=models.ChatAskType.TEXT.value,
            description="Type",
            layout=widgets.Layout(width="170px"),
        )
        self.file_ids = widgets.Text(
            placeholder="file IDs, e.g. 101, 102",
            description="Files",
            layout=widgets.Layout(flex="1 1 auto", width="auto"),
        )
        # column-reverse with the newest turn first keeps the view scrolled to the latest turn
        # as the transcript grows, with no script in the page.
        self.transcript = widgets.VBox(
            [],
            layout=widgets.Layout(max_height=height, overflow="auto", flex_flow="column-reverse"),
        )
        self.transcript.add_class("eb-transcript")
        self.status = widgets.HTML()
        self.status.add_class("eb-status-view")
        header = widgets.HTML(
            _CSS + f'<div class="eb-title">{html.escape(self.title)}</div>',
            layout=widgets.Layout(width="100%"),
        )
        super().__init__(
            [
                header,
                self.transcript,
                widgets.HBox([self.input, self.send_button, self.stop_button]),
                widgets.HBox([self.ask_type, self.file_ids, self.new_session_button]),
                self.status,
            ]
        )
        self.add_class("eb-chat")

        self._client = client
        self._serial = serial
        self._is_async = isinstance(client, AsyncClient)
        self._stream = stream
        self._interval = update_interval
        self._lock = threading.RLock()
        self._turns: list[Turn] = []
        self._views: list[Any] = []
        self._jobs: list[_Job] = []
        self._session_id: int | None = None
        self._last_answer: Turn | None = None
        self._total_tokens = 0
        self._retry_at: datetime | None = None
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._loop_thread: _LoopThread | None = None
        self._last_task: asyncio.Task[None] | None = None

        self.send_button.on_click(lambda _button: self.submit())
        self.stop_button.on_click(lambda _button: self.stop())
        self.new_session_button.on_click(lambda _button: self.new_session())
        # Enter in the input arrives as a "submit" message from the browser; handling it here
        # (rather than with the deprecated Text.on_submit) keeps the input's value synced as
        # typed, so leaving the box never sends a half-written question.
        self.input.on_msg(self._on_input_msg)
        self._refresh()

    # ------------------------------------------------------------------ public API

    @property
    def session_id(self) -> int | None:
        """The current chat session's ID (None until the first question or New session)."""
        return self._session_id

    @property
    def total_tokens(self) -> int:
        """Tokens of every answer since the panel was made (or cleared)."""
        return self._total_tokens

    @property
    def last_answer(self) -> Turn | None:
        """The latest answer that arrived in full."""
        return self._last_answer

    @property
    def turns(self) -> list[Turn]:
        """The transcript's turns, oldest first."""
        with self._lock:
            return list(self._turns)

    @property
    def busy(self) -> bool:
        """Whether an answer or a new session is on its way."""
        with self._lock:
            return bool(self._jobs)

    @property
    def transcript_html(self) -> str:
        """The transcript as HTML, oldest turn first (what the browser shows)."""
        with self._lock:
            return "\n".join(str(view.value) for view in self._views)

    @property
    def turn_views(self) -> list[Any]:
        """The transcript's ``widgets.HTML``, one per turn, oldest first."""
        with self._lock:
            return list(self._views)

    @property
    def history(self) -> pd.DataFrame:
        """The transcript as a frame, one row per turn (columns: :data:`HISTORY_COLUMNS`)."""
        rows = [
            {
                "turn": t.turn,
                "role": t.role,
                "text": t.text,
                "question_id": t.question_id,
                "answer_id": t.answer_id,
                "tokens": t.tokens,
                "latency_ms": t.latency_ms,
                "no_answer": t.no_answer,
                "error": t.error,
                "session_id": t.session_id,
                "state": t.state,
            }
            for t in self.turns
        ]
        frame = pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))
        return frame.astype(HISTORY_COLUMNS)

    def submit(self) -> concurrent.futures.Future[Turn] | None:
        """Send the input's question with the selected type and files (what Send and Enter do).

        Returns a future of the answer's turn, or None when there was nothing to send. The
        input is emptied once the question is accepted; on a problem it is kept for fixing.
        """
        content = str(self.input.value)
        ask_type = str(self.ask_type.value)
        files_text = str(self.file_ids.value)
        if not content.strip() and ask_type == "Text" and not files_text.strip():
            return None
        file_ids, bad = parse_file_ids(files_text)
        if bad:
            problems = [("fileIds", "must be whole numbers separated by commas", ", ".join(bad))]
            return _done_future(self._add_notice(problems))
        future = self._start_ask(content, ask_type, file_ids)
        if future.done() and future.result().role == "notice":
            return future
        self.input.value = ""
        self.file_ids.value = ""
        return future

    async def ask(
        self,
        content: str,
        *,
        ask_type: str | models.ChatAskType | None = None,
        file_ids: Iterable[int] | None = None,
    ) -> Turn:
        """Ask a question and return the answer's turn once it is complete.

        Failures do not raise: the returned turn has ``state`` ``failed`` and ``error`` set (or,
        when the question breaks the ClientAsk rules, it is a ``notice`` turn and nothing was
        sent), exactly as the transcript shows it.
        """
        future = self._start_ask(content, ask_type, file_ids)
        return await asyncio.wrap_future(future)

    def ask_sync(
        self,
        content: str,
        *,
        ask_type: str | models.ChatAskType | None = None,
        file_ids: Iterable[int] | None = None,
        timeout: float | None = None,
    ) -> Turn:
        """:meth:`ask`, blocking until the answer is complete (for scripts and plain threads)."""
        self._check_may_block("ask_sync", "await panel.ask(...)")
        return self._start_ask(content, ask_type, file_ids).result(timeout)

    def new_session(self) -> concurrent.futures.Future[Turn]:
        """Start a new chat session (after what is already queued) and mark it in the transcript."""
        turn, view = self._add_turn(Turn(role="session", text="Starting a new session…"))
        turn.state = "waiting"
        job = _Job("session", turn, view)
        self._schedule(job)
        return job.future

    def stop(self) -> None:
        """Stop every answer on its way; what has arrived stays, marked stopped."""
        with self._lock:
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
        return self._last_answer

    def wait_sync(self, timeout: float | None = None) -> Turn | None:
        """:meth:`wait`, blocking."""
        self._check_may_block("wait_sync", "await panel.wait()")
        deadline = None if timeout is None else time.monotonic() + timeout
        while pending := self._pending_futures():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            _, not_done = concurrent.futures.wait(pending, timeout=left)
            if not_done:
                raise TimeoutError("the chat panel is still busy")
        return self._last_answer

    def clear(self) -> None:
        """Stop what is on its way and empty the transcript, history and token total.

        The chat session stays; use :meth:`new_session` for a fresh one.
        """
        self.stop()
        with self._lock:
            views = self._views
            self._turns = []
            self._views = []
            self._last_answer = None
            self._total_tokens = 0
            self._retry_at = None
        self.transcript.children = ()
        for view in views:
            view.close()
        self._refresh()

    def close(self) -> None:
        """Stop, release the worker thread or private loop, and close the widgets."""
        self.stop()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        if self._loop_thread is not None:
            self._loop_thread.close()
        for child in _descendants(self):
            child.close()
        super().close()

    # ------------------------------------------------------------------ starting work

    def _check_may_block(self, name: str, instead: str) -> None:
        # With an AsyncClient the answer runs on the running loop: blocking that loop's thread
        # would wait forever for a task that can never run.
        if self._is_async and _running_loop() is not None:
            raise RuntimeError(f"{name} would block the event loop the answer needs; use {instead}")

    def _pending_futures(self) -> list[concurrent.futures.Future[Turn]]:
        with self._lock:
            return [job.future for job in self._jobs]

    def _on_input_msg(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("event") == "submit":
            self.submit()

    def _start_ask(
        self,
        content: str,
        ask_type: str | models.ChatAskType | None,
        file_ids: Iterable[int] | None,
    ) -> concurrent.futures.Future[Turn]:
        files = list(file_ids) if file_ids is not None else None
        kind = models.ChatAskType(ask_type) if ask_type else None
        # The same rules as the API layer, checked before anything is shown as sent.
        try:
            models.AskRequest.model_validate(
                {
                    "sessionID": self._session_id or 0,
                    "content": content,
                    "chatAskType": kind,
                    "stream": self._stream,
                    "fileIds": files,
                }
            )
        except ValidationError as exc:
            return _done_future(self._add_notice(models.field_problems(exc)))
        question, _ = self._add_turn(
            Turn(
                role="user",
                text=content,
                ask_type=kind.value if kind else None,
                file_ids=tuple(files or ()),
            )
        )
        turn, view = self._add_turn(Turn(role="bot", state="waiting"))
        job = _Job(
            "ask", turn, view, question=question, content=content, ask_type=kind, file_ids=files
        )
        self._schedule(job)
        return job.future

    def _schedule(self, job: _Job) -> None:
        with self._lock:
            self._jobs.append(job)
        self._refresh()
        if not self._is_async:
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="estatebot-chat"
                )
            self._executor.submit(self._run_sync, job)
            return
        loop = _running_loop()
        if loop is not None:
            self._spawn(loop, job)
        else:
            if self._loop_thread is None:
                self._loop_thread = _LoopThread()
            own = self._loop_thread.loop
            own.call_soon_threadsafe(self._spawn, own, job)

    def _spawn(self, loop: asyncio.AbstractEventLoop, job: _Job) -> None:
        previous = self._last_task
        job.loop = loop
        job.task = loop.create_task(self._run_async(job, previous))
        self._last_task = job.task

    # ------------------------------------------------------------------ the two send loops

    def _run_sync(self, job: _Job) -> None:
        try:
            if job.kind == "session":
                self._session_started(job, self._sync_client().chat.create_session(self._serial))
            else:
                self._ask_sync(job)
        except Exception as exc:
            self._fail(job, exc)
        finally:
            self._finish(job)

    def _ask_sync(self, job: _Job) -> None:
        if job.stop.is_set():
            self._stopped(job, None)
            return
        chat = self._sync_client().chat
        if self._session_id is None:
            self._set_session(chat.create_session(self._serial))
        session_id = self._require_session()
        self._begin(job, session_id)
        if not self._stream:
            answer = chat.ask(session_id, job.content, ask_type=job.ask_type, file_ids=job.file_ids)
            self._answered(job, None, answer)
            return
        coalescer = self._coalescer(job, _thread_timer)
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

    async def _run_async(self, job: _Job, previous: asyncio.Task[None] | None) -> None:
        coalescer: _Coalescer | None = None
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
            if self._session_id is None:
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
        assert isinstance(self._client, Client)
        return self._client

    def _async_client(self) -> AsyncClient:
        assert isinstance(self._client, AsyncClient)
        return self._client

    # ------------------------------------------------------------------ job steps (shared)

    def _set_session(self, session_id: int) -> None:
        self._session_id = session_id
        self._refresh()

    def _require_session(self) -> int:
        if self._session_id is None:  # only if another thread cleared it: say so plainly
            raise EstatebotError("no chat session")
        return self._session_id

    def _session_started(self, job: _Job, session_id: int) -> None:
        job.turn.session_id = session_id
        job.turn.text = f"New session {session_id}"
        job.turn.state = "done"
        self._show(job)
        self._set_session(session_id)

    def _begin(self, job: _Job, session_id: int) -> None:
        job.turn.session_id = session_id
        if job.question is not None:
            job.question.session_id = session_id
        job.started = time.perf_counter()

    def _coalescer(self, job: _Job, schedule: Schedule) -> _Coalescer:
        return _Coalescer(lambda text: self._show(job, text), self._interval, schedule)

    def _fragment(self, job: _Job, coalescer: _Coalescer, fragment: str) -> None:
        job.turn.text += fragment
        job.turn.state = "streaming"
        coalescer.push(job.turn.text)

    def _answered(
        self,
        job: _Job,
        coalescer: _Coalescer | None,
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
        self._show(job)
        with self._lock:
            self._last_answer = turn
            self._total_tokens += turn.tokens or 0

    def _stopped(self, job: _Job, coalescer: _Coalescer | None) -> None:
        if coalescer is not None:
            coalescer.close()
        if job.started:
            job.turn.latency_ms = self._elapsed_ms(job)
        job.turn.state = "stopped"
        self._show(job)

    def _fail(self, job: _Job, exc: Exception) -> None:
        turn = job.turn
        turn.state = "failed"
        if isinstance(exc, RateLimitError):
            turn.error = redact(exc.message or "Too many messages; try again later.")
            if exc.retry_after is not None:
                turn.retry_at = datetime.now() + timedelta(seconds=exc.retry_after)
                with self._lock:
                    self._retry_at = turn.retry_at
        elif isinstance(exc, RequestValidationError):
            turn.error = redact("; ".join(f"{p.field}: {p.message}" for p in exc.problems))
        elif isinstance(exc, EstatebotError):
            turn.error = redact(str(exc))
        else:
            # Never a traceback in the transcript: the kind of failure and its message.
            turn.error = redact(f"{type(exc).__name__}: {exc}")
        if job.started:
            turn.latency_ms = self._elapsed_ms(job)
        self._show(job)

    def _finish(self, job: _Job) -> None:
        with self._lock:
            if job in self._jobs:
                self._jobs.remove(job)
        self._refresh()
        job.future.set_result(job.turn)

    @staticmethod
    def _elapsed_ms(job: _Job) -> float:
        return round((time.perf_counter() - job.started) * 1000, 1)

    # ------------------------------------------------------------------ transcript

    def _add_turn(self, turn: Turn) -> tuple[Turn, Any]:
        view = widgets.HTML(layout=widgets.Layout(width="100%"))
        view.add_class("eb-turn-view")
        with self._lock:
            turn.turn = len(self._turns) + 1
            view.value = self._turn_html(turn)
            self._turns.append(turn)
            self._views.append(view)
            children = tuple(reversed(self._views))
        self.transcript.children = children
        return turn, view

    def _add_notice(self, problems: list[tuple[str, str, Any]]) -> Turn:
        lines = [f"{field_name}: {message}" for field_name, message, _value in problems]
        turn = Turn(role="notice", text="\n".join(lines), error=redact("; ".join(lines)))
        self._add_turn(turn)
        return turn

    def _show(self, job: _Job, text: str | None = None) -> None:
        job.view.value = self._turn_html(job.turn, text)

    def _turn_html(self, turn: Turn, text: str | None = None) -> str:
        body_text = turn.text if text is None else text
        classes = ["eb-turn", f"eb-{turn.role}", f"eb-{turn.state}"]
        badges: list[str] = []
        extra = ""
        if turn.role == "user":
            who = "You"
            body = render_plain(body_text)
            if turn.ask_type not in (None, "Text") or turn.file_ids:
                files = ", ".join(str(i) for i in turn.file_ids)
                meta = f"{turn.ask_type or 'Text'}" + (f" · files {files}" if files else "")
                extra = f'<div class="eb-meta">{html.escape(meta)}</div>'
        elif turn.role == "bot":
            who = "Bot"
            body = render_markdown(body_text) if body_text else ""
            if turn.state == "waiting":
                body = '<span class="eb-typing">…</span>'
            if turn.no_answer:
                classes.append("eb-no-answer")
                badges.append(_badge("no-answer", "no answer"))
            if turn.state == "stopped":
                badges.append(_badge("stopped", "stopped"))
                if not body_text:
                    body = '<span class="eb-meta">stopped before any text arrived</span>'
            if not turn.complete:
                badges.append(_badge("incomplete", "incomplete"))
            if turn.state == "failed":
                extra = self._error_html(turn)
                badges.append(
                    _badge("rate-limited", "rate limited")
                    if turn.retry_at is not None
                    else _badge("error", "error")
                )
        elif turn.role == "session":
            who = ""
            body = render_plain(body_text)
            if turn.state == "failed":
                extra = self._error_html(turn)
        else:
            who = "Not sent"
            items = "".join(f"<li>{html.escape(line)}</li>" for line in body_text.splitlines())
            body = f'<ul class="eb-error-text">{items}</ul>'
        if turn.role == "bot" and turn.no_answer is False and turn.state == "done":
            classes.append("eb-answered")
        who_html = f'<div class="eb-who">{html.escape(who)}{"".join(badges)}</div>' if who else ""
        return (
            f'<div class="{" ".join(classes)}" data-turn="{turn.turn}">{who_html}'
            f'<div class="eb-body">{body}</div>{extra}</div>'
        )

    @staticmethod
    def _error_html(turn: Turn) -> str:
        parts = [f'<div class="eb-error-text">{html.escape(turn.error or "")}</div>']
        if turn.retry_at is not None:
            wait = max(0, round((turn.retry_at - datetime.now()).total_seconds()))
            parts.append(
                f'<div class="eb-retry eb-meta">You can send again at {_clock(turn.retry_at)} '
                f"(in {wait} s).</div>"
            )
        return "".join(parts)

    # ------------------------------------------------------------------ controls and status

    def _refresh(self) -> None:
        with self._lock:
            busy = any(job.kind == "ask" for job in self._jobs)
            session_id = self._session_id
            last = self._last_answer
            total = self._total_tokens
            retry_at = self._retry_at
        self.stop_button.disabled = not busy
        parts = [f"Session <b>{session_id}</b>" if session_id is not None else "No session yet"]
        if last is not None:
            tokens = "?" if last.tokens is None else f"{last.tokens:,}"
            latency = "?" if last.latency_ms is None else f"{last.latency_ms:,.0f}"
            parts.append(f"Last answer: <b>{tokens}</b> tokens, <b>{latency}</b> ms")
        parts.append(f"Total: <b>{total:,}</b> tokens")
        if busy:
            parts.append("answering…")
        if retry_at is not None and retry_at > datetime.now():
            parts.append(f"rate limited until {_clock(retry_at)}")
        self.status.value = '<div class="eb-status">' + " · ".join(parts) + "</div>"
