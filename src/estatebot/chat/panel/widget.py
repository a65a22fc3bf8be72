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
* **Coalescing.** A streamed answer is re-rendered at most once per ``update_interval``
  seconds (:mod:`estatebot.chat.coalesce`): the first fragment at once, later ones at the end of
  the interval, and the final text always.

This module holds the widget: its layout, its public API, the transcript and the status line.
The background work (the jobs, the send loops) is in :mod:`estatebot.chat.panel.jobs`, the
transcript's data in :mod:`estatebot.chat.turns`, and its HTML is made by
:mod:`estatebot.chat.render` (answers as safe Markdown). Error texts pass through the API
layer's redaction, so no credential is ever shown.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import ipywidgets as widgets
import pandas as pd
from pydantic import ValidationError

from estatebot.api import models
from estatebot.api._redact import redact
from estatebot.api.client import AsyncClient, Client
from estatebot.chat.panel.jobs import Job, JobRunner, LoopThread
from estatebot.chat.render import status_html, title_html, turn_html
from estatebot.chat.turns import HISTORY_COLUMNS, Turn, history_frame, parse_file_ids

__all__ = ["HISTORY_COLUMNS", "ChatPanel", "Turn"]

ASK_TYPES: tuple[str, ...] = tuple(kind.value for kind in models.ChatAskType)


# --------------------------------------------------------------------------- helpers


def _done_future(turn: Turn) -> concurrent.futures.Future[Turn]:
    future: concurrent.futures.Future[Turn] = concurrent.futures.Future()
    future.set_result(turn)
    return future


def _descendants(box: Any) -> list[Any]:
    found: list[Any] = []
    for child in getattr(box, "children", ()):
        found.extend([*_descendants(child), child])
    return found


# --------------------------------------------------------------------------- the panel


# JobRunner before VBox: its methods (stop, wait, the job steps) must win over any name the widget
# classes define, as they did when they were written in this class.
class ChatPanel(JobRunner, widgets.VBox):  # type: ignore[misc]  # ipywidgets ships no types
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
        header = widgets.HTML(title_html(self.title), layout=widgets.Layout(width="100%"))
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
        self._jobs: list[Job] = []
        self._session_id: int | None = None
        self._last_answer: Turn | None = None
        self._total_tokens = 0
        self._retry_at: datetime | None = None
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._loop_thread: LoopThread | None = None
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
        return history_frame(self.turns)

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
        job = Job("session", turn, view)
        self._schedule(job)
        return job.future

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

    # ------------------------------------------------------------------ taking a question

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
        job = Job(
            "ask", turn, view, question=question, content=content, ask_type=kind, file_ids=files
        )
        self._schedule(job)
        return job.future

    # ------------------------------------------------------------------ transcript

    def _add_turn(self, turn: Turn) -> tuple[Turn, Any]:
        view = widgets.HTML(layout=widgets.Layout(width="100%"))
        view.add_class("eb-turn-view")
        with self._lock:
            turn.turn = len(self._turns) + 1
            view.value = turn_html(turn)
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

    # ------------------------------------------------------------------ controls and status

    def _refresh(self) -> None:
        with self._lock:
            busy = any(job.kind == "ask" for job in self._jobs)
            session_id = self._session_id
            last = self._last_answer
            total = self._total_tokens
            retry_at = self._retry_at
        self.stop_button.disabled = not busy
        self.status.value = status_html(
            session_id=session_id,
            last_answer=last,
            total_tokens=total,
            busy=busy,
            retry_at=retry_at,
        )
