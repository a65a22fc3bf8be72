"""ChatPanel: chat with a chatbot from a notebook, answers streamed into an ipywidgets transcript.

The panel is a `VBox`: `display(panel)` (or leaving it last in a cell) shows it. Questions are
sent from the input box (Enter or Send) or from code with `await panel.ask(...)` /
`panel.ask_sync(...)`.

How the work is done:

* **In the background.** With a sync `Client` every request runs on one worker thread (one,
  so that questions and new sessions happen in the order they were made); with an
  `AsyncClient` each runs as a task on the running event loop (or on a private loop thread
  when there is none), chained in order. The notebook stays free.
* **Stop** sets the job's stop event; the sync stream loop checks it at every fragment and breaks,
  which closes the HTTP response; an async task is also cancelled at once. The partial answer
  stays in the transcript, marked stopped.
* **Coalescing.** A streamed answer is re-rendered at most once per `update_interval`
  seconds (`estatebot.chat.panel.coalesce`): the first fragment at once, later ones at the end
  of the interval, and the final text always.
* **An honest status** (`estatebot.chat.panel.status`): Send is disabled while an answer is on
  its way and while a rate limit holds (counting down on the button); once an answer arrives,
  the failures before it are marked past (greyed, no countdown, no Retry).
* **A busy kernel.** A click in the browser reaches the kernel only when the running cell lets it
  (`estatebot.chat.panel.arrival`): the page itself says it is waiting, and a question that
  waited says so on its card.

This module holds the widget: its public API and the wiring of its parts. The panel is made of
a `JobRunner` (the background work: the jobs, the send loops, the chat's state), the controls
that `estatebot.chat.panel.layout` builds and arranges, and a `Transcript` (the turns' views
and Retry rows). The transcript's data is in `estatebot.chat.panel.turns`, and its HTML is
made by `estatebot.chat.panel.render` (answers as safe Markdown). Error texts pass through the API
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
from estatebot.chat.panel.arrival import message_wait_s
from estatebot.chat.panel.connection import chatbot_name, client_closed, reopen
from estatebot.chat.panel.grounding import PanelFactCheck
from estatebot.chat.panel.jobs import AnswerHook as AnswerHook
from estatebot.chat.panel.jobs import Job, JobRunner
from estatebot.chat.panel.layout import ASK_TYPES as ASK_TYPES
from estatebot.chat.panel.layout import PANEL_CLASSES, build_controls, descendants, retry_button
from estatebot.chat.panel.render import status_html, title_html, turn_html
from estatebot.chat.panel.status import KERNEL_WAIT_NOTE_S, Event, SendState, outdated, send_state
from estatebot.chat.panel.transcript import Transcript
from estatebot.chat.panel.turns import HISTORY_COLUMNS, Turn, history_frame, parse_file_ids

__all__ = ["HISTORY_COLUMNS", "ChatPanel", "Turn"]

#: How often a rate limit's countdown is redrawn, in seconds.
COUNTDOWN_STEP = 1.0


def _done_future(turn: Turn) -> concurrent.futures.Future[Turn]:
    future: concurrent.futures.Future[Turn] = concurrent.futures.Future()
    future.set_result(turn)
    return future


class ChatPanel(widgets.VBox):  # type: ignore[misc]  # ipywidgets ships no types
    """A chat with one chatbot in a notebook: transcript, input, Send/Stop, new session, status.

    The first question starts a chat session; **New session** starts another. Nothing is sent
    when the question breaks the ClientAsk rules (the problems are shown instead). A failed
    answer says what went wrong in a sentence and has a **Retry** button; a rate limit counts
    down until sending is possible again, on the card and on Send, which stays disabled
    meanwhile (and while an answer is on its way). Once an answer arrives, earlier failures are
    marked past: greyed, without countdown or Retry. The panel never closes its client: when
    the client was closed elsewhere (a clean-up cell, a `with` block), it says so and
    **Reconnect** makes a new client with the same settings.

    Args:
        client: a `Client` or `AsyncClient`.
        serial: the chatbot's `serialNumber`.
        stream: stream answers fragment by fragment (else one request, one answer).
        title: the heading; defaults to the chatbot's `Name` (the one the client set with
            `client.chatbots.edit`, or asked of the service once when the client offers an
            operation that reads it), else `Chatbot <serial>`.
        update_interval: the shortest time, in seconds, between two re-renders of a streamed
            answer (the first fragment and the final text are never held back).
        height: the most the transcript grows before it scrolls (a CSS length).
        fact_check: hold each answer against the chatbot's listings (pulled once, and again
            on New session): an answer stating a wrong price or room count, or a listing the
            chatbot does not have, gets a badge "2 facts not in your listings" with the details
            on click and on hover; `claims` holds every answer's claims.
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
        fact_check: bool = False,
    ) -> None:
        name = chatbot_name(client, serial) if title is None else None
        self.title = title if title is not None else (name or f"Chatbot {serial}")
        # The chatbot ID stays in sight, small, when the heading shows its name.
        controls = build_controls(title_html(self.title, serial if name else ""), height=height)
        self.input = controls.input
        self.send_button = controls.send_button
        self.stop_button = controls.stop_button
        self.new_session_button = controls.new_session_button
        self.reconnect_button = controls.reconnect_button
        self.ask_type = controls.ask_type
        self.file_ids = controls.file_ids
        self.transcript = controls.transcript
        self.status = controls.status
        self.header = controls.header
        super().__init__(controls.rows())
        for css_class in PANEL_CLASSES:
            self.add_class(css_class)

        # One lock for the runner's state, the transcript and the panel's own: clear() changes
        # all of them in one step.
        self._lock = threading.RLock()
        self._runner = JobRunner(
            client,
            serial,
            stream=stream,
            interval=update_interval,
            lock=self._lock,
            changed=self._refresh,
            settled=self._settled,
        )
        self._transcript = Transcript(self.transcript, self._lock)
        self._stream = stream
        self._failed: dict[int, Job] = {}  # failed answers by turn number, for Retry
        self._own_clients: list[Client | AsyncClient] = []  # made by Reconnect: closed by close()
        self._countdown: threading.Timer | None = None
        self._fact_check = PanelFactCheck(client, serial) if fact_check else None
        if self._fact_check is not None:
            self.on_answer(self._fact_check.badge)

        self.send_button.on_click(lambda _button: self._submit_from_page())
        # A click the kernel read while the question could not go out leaves its text in the box;
        # the page's waiting note (render.CSS) must not take that for a click still queued.
        self.input.observe(lambda _change: self.send_button.remove_class("eb-heard"), "value")
        self.reconnect_button.on_click(lambda _button: self.reconnect())
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
        return self._runner.session_id

    @property
    def total_tokens(self) -> int:
        """Tokens of every answer since the panel was made (or cleared)."""
        return self._runner.total_tokens

    @property
    def last_answer(self) -> Turn | None:
        """The latest answer that arrived in full."""
        return self._runner.last_answer

    @property
    def turns(self) -> list[Turn]:
        """The transcript's turns, oldest first."""
        return self._transcript.turns

    @property
    def busy(self) -> bool:
        """Whether an answer or a new session is on its way."""
        return self._runner.busy

    @property
    def transcript_html(self) -> str:
        """The transcript as HTML, oldest turn first (what the browser shows)."""
        return self._transcript.html

    @property
    def turn_views(self) -> list[Any]:
        """The transcript's `widgets.HTML`, one per turn, oldest first."""
        return self._transcript.views

    @property
    def history(self) -> pd.DataFrame:
        """The transcript as a frame, one row per turn (columns: `HISTORY_COLUMNS`)."""
        return history_frame(self.turns)

    @property
    def client(self) -> Client | AsyncClient:
        """The client the panel sends with (a new one after `reconnect`)."""
        return self._runner.client

    @property
    def client_closed(self) -> bool:
        """Whether the panel's client was closed, so nothing can be sent until `reconnect`."""
        return self._runner.closed or client_closed(self._runner.client)

    @property
    def rate_limited_for(self) -> float | None:
        """Seconds until the service accepts messages again, after a rate limit; None when no
        limit holds (it clears when the time is up or an answer arrives)."""
        with self._lock:
            retry_at = self._runner.retry_at
        if retry_at is None:
            return None
        left = (retry_at - datetime.now()).total_seconds()
        return left if left > 0 else None

    @property
    def failed_turns(self) -> list[Turn]:
        """The failed answers that `retry` can ask again, oldest first."""
        with self._lock:
            return [self._failed[number].turn for number in sorted(self._failed)]

    def retry_button(self, turn: Turn) -> Any | None:
        """The Retry button shown under the failed answer `turn` (None when there is none).

        Args:
            turn: an answer's turn, as `turns` or `failed_turns` give it.

        Returns:
            The button widget, or None when `turn` has no Retry button.
        """
        row = self._transcript.row(turn)
        return None if row is None else row.children[0]

    @property
    def claims(self) -> pd.DataFrame:
        """With `fact_check=True`: every checked answer's claims, with its `turn` number
        (as `fact_check` gives them); empty otherwise."""
        checked = self._fact_check.claims if self._fact_check is not None else {}
        frames = [claims.assign(turn=number) for number, claims in sorted(checked.items())]
        if not frames:
            return pd.DataFrame(columns=["turn"])
        frame = pd.concat(frames, ignore_index=True)
        return frame[["turn", *[c for c in frame.columns if c != "turn"]]]

    def on_answer(self, hook: AnswerHook) -> AnswerHook:
        """Run `hook(turn)` on every complete answer; the HTML it returns (its own, escaped by
        it) is shown under the answer, e.g. a badge. Usable as a decorator; returns `hook`.

        A hook that raises does not lose the answer: a line under it names the failed hook.

        Args:
            hook: called with the answer's `Turn`; returns HTML to show under it, or None.

        Returns:
            `hook` itself.
        """
        with self._lock:
            self._runner.answer_hooks.append(hook)
        return hook

    def stop(self) -> None:
        """Stop every answer on its way; what has arrived stays, marked stopped."""
        self._runner.stop()

    async def wait(self) -> Turn | None:
        """Wait until nothing is on its way; returns `last_answer`.

        Bound the wait with `asyncio.timeout` if needed.

        Returns:
            The latest answer that arrived in full (None when none has).
        """
        return await self._runner.wait()

    def wait_sync(self, timeout: float | None = None) -> Turn | None:
        """`wait`, blocking.

        Args:
            timeout: the longest wait, in seconds; None waits as long as it takes.

        Returns:
            The latest answer that arrived in full (None when none has).

        Raises:
            TimeoutError: something is still on its way after `timeout` seconds.
            RuntimeError: the panel has an `AsyncClient` and this thread runs an event loop
                (waiting would block the loop the answer needs; use `await panel.wait()`).
        """
        return self._runner.wait_sync(timeout)

    def retry(self, turn: Turn | None = None) -> concurrent.futures.Future[Turn] | None:
        """Ask a failed answer's question again, in the same place of the transcript (the last
        failed one by default). Returns a future of the answer's turn, or None when nothing
        failed.

        Args:
            turn: the failed answer's turn (one of `failed_turns`); None for the last one.

        Returns:
            A future of the answer's turn, or None when there is no such failed answer.
        """
        with self._lock:
            if turn is None and self._failed:
                turn = self._failed[max(self._failed)].turn
            failed = self._failed.pop(turn.turn, None) if turn is not None else None
        if failed is None:
            return None
        again = Job(
            "ask",
            failed.turn,
            failed.view,
            question=failed.question,
            content=failed.content,
            ask_type=failed.ask_type,
            file_ids=failed.file_ids,
        )
        answer = again.turn
        answer.state = "waiting"
        answer.text = ""
        answer.error = answer.error_title = None
        answer.retry_at = None
        answer.error_details = answer.failed_at = None
        answer.past = False
        answer.latency_ms = None
        self._transcript.set_actions(answer, [])
        again.view.value = turn_html(answer)
        self._runner.schedule(again)
        return again.future

    def reconnect(self) -> Client | AsyncClient:
        """Send with a new client made with the same settings as the closed one (its keys are
        passed on as secrets, never shown). The chat session is kept; the new client is closed
        with the panel. Returns the new client.

        Returns:
            The new client, now the panel's `client`.
        """
        fresh = reopen(self._runner.client)
        with self._lock:
            self._runner.use(fresh)
            self._own_clients.append(fresh)
        if self._fact_check is not None:
            self._fact_check.rebind(fresh)
        self._refresh()
        return fresh

    def submit(self) -> concurrent.futures.Future[Turn] | None:
        """Send the input's question with the selected type and files (what Send and Enter do).

        Returns a future of the answer's turn, or None when there was nothing to send or Send
        is disabled (an answer is on its way, a rate limit holds, the client was closed: the
        status line says which). The input is emptied once the question is accepted; else it
        is kept, for fixing or sending later.

        Returns:
            A future of the answer's turn (a `notice` turn, already done, when the question
            breaks the rules), or None when the input was empty or Send is disabled.
        """
        return self._submit(None)

    @property
    def sending(self) -> SendState:
        """What Send offers now: whether it can be pressed, its label (``Send (12 s)`` while a
        rate limit holds) and why not. (Not ``send_state``: that name is the widget's own.)"""
        with self._lock:
            asking = self._runner.asking
            retry_at = self._runner.retry_at
        return send_state(
            asking=asking, retry_at=retry_at, closed=self.client_closed, now=datetime.now()
        )

    def _submit_from_page(self) -> concurrent.futures.Future[Turn] | None:
        # Send or Enter in the browser: the kernel may have read the click long after it was
        # made (a cell was running); the question's card says so.
        waited = message_wait_s()
        future = self._submit(
            waited if waited is not None and waited >= KERNEL_WAIT_NOTE_S else None
        )
        if str(self.input.value):
            self.send_button.add_class("eb-heard")
        return future

    def _submit(self, kernel_wait_s: float | None) -> concurrent.futures.Future[Turn] | None:
        if not self.sending.enabled:
            self._refresh()  # the status line and Send tell why (a closed client is seen now)
            return None
        content = str(self.input.value)
        ask_type = str(self.ask_type.value)
        files_text = str(self.file_ids.value)
        if not content.strip() and ask_type == "Text" and not files_text.strip():
            return None
        file_ids, bad = parse_file_ids(files_text)
        if bad:
            problems = [("fileIds", "must be whole numbers separated by commas", ", ".join(bad))]
            return _done_future(self._add_notice(problems))
        future = self._start_ask(content, ask_type, file_ids, kernel_wait_s=kernel_wait_s)
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

        Failures do not raise: the returned turn has `state` `failed` and `error` set (or,
        when the question breaks the ClientAsk rules, it is a `notice` turn and nothing was
        sent), exactly as the transcript shows it.

        Args:
            content: the question.
            ask_type: the message's kind (`Text`, `Audio`, `Image` or `Video`, or a
                `ChatAskType`); None is a Text message.
            file_ids: IDs of the files the question is about (for an Image, Audio or Video
                message; one for Audio and Video); None for none.

        Returns:
            The answer's turn once it is final (done, stopped or failed), or a `notice` turn.

        Raises:
            ValueError: `ask_type` is not a kind of message.
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
        """`ask`, blocking until the answer is complete (for scripts and plain threads).

        Args:
            content: the question.
            ask_type: the message's kind (`Text`, `Audio`, `Image` or `Video`, or a
                `ChatAskType`); None is a Text message.
            file_ids: IDs of the files the question is about (for an Image, Audio or Video
                message; one for Audio and Video); None for none.
            timeout: the longest wait, in seconds; None waits as long as it takes.

        Returns:
            The answer's turn once it is final (done, stopped or failed), or a `notice` turn.

        Raises:
            ValueError: `ask_type` is not a kind of message.
            TimeoutError: the answer is not final after `timeout` seconds (it goes on).
            RuntimeError: the panel has an `AsyncClient` and this thread runs an event loop
                (waiting would block the loop the answer needs; use `await panel.ask(...)`).
        """
        self._runner.check_may_block("ask_sync", "await panel.ask(...)")
        return self._start_ask(content, ask_type, file_ids).result(timeout)

    def new_session(self) -> concurrent.futures.Future[Turn]:
        """Start a new chat session (after what is already queued) and mark it in the transcript.

        Returns:
            A future of the session marker's turn (its `session_id` set once started).
        """
        turn, view = self._transcript.add(Turn(role="session", text="Starting a new session…"))
        turn.state = "waiting"
        job = Job("session", turn, view)
        self._runner.schedule(job)
        if self._fact_check is not None:
            self._fact_check.prefetch()  # the listings may have changed since
        return job.future

    def clear(self) -> None:
        """Stop what is on its way and empty the transcript, history and token total.

        The chat session stays; use `new_session` for a fresh one.
        """
        self.stop()
        with self._lock:
            dropped = self._transcript.empty()
            self._runner.forget()
            self._failed = {}
        self.transcript.children = ()
        for widget in dropped:
            widget.close()
        self._refresh()

    def close(self) -> None:
        """Stop, release the worker thread or private loop, and close the widgets (and a client
        `reconnect` made; a client given to the panel is the caller's to close)."""
        self.stop()
        with self._lock:
            timer, self._countdown = self._countdown, None
            own, self._own_clients = self._own_clients, []
        if timer is not None:
            timer.cancel()
        for client in own:
            if isinstance(client, Client):
                client.close()
        if self._fact_check is not None:
            self._fact_check.close()
        self._runner.close()
        for child in descendants(self):
            child.close()
        super().close()

    # ------------------------------------------------------------------ taking a question

    def _on_input_msg(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        if content.get("event") == "submit":
            self._submit_from_page()

    def _start_ask(
        self,
        content: str,
        ask_type: str | models.ChatAskType | None,
        file_ids: Iterable[int] | None,
        *,
        kernel_wait_s: float | None = None,
    ) -> concurrent.futures.Future[Turn]:
        files = list(file_ids) if file_ids is not None else None
        kind = models.ChatAskType(ask_type) if ask_type else None
        # The same rules as the API layer, checked before anything is shown as sent.
        try:
            models.AskRequest.model_validate(
                {
                    "sessionID": self._runner.session_id or 0,
                    "content": content,
                    "chatAskType": kind,
                    "stream": self._stream,
                    "fileIds": files,
                }
            )
        except ValidationError as exc:
            return _done_future(self._add_notice(models.field_problems(exc)))
        question, _ = self._transcript.add(
            Turn(
                role="user",
                text=content,
                ask_type=kind.value if kind else None,
                file_ids=tuple(files or ()),
                kernel_wait_s=kernel_wait_s,
            )
        )
        turn, view = self._transcript.add(Turn(role="bot", state="waiting"))
        job = Job(
            "ask", turn, view, question=question, content=content, ask_type=kind, file_ids=files
        )
        self._runner.schedule(job)
        return job.future

    def _add_notice(self, problems: list[tuple[str, str, Any]]) -> Turn:
        lines = [f"{field_name}: {message}" for field_name, message, _value in problems]
        turn = Turn(role="notice", text="\n".join(lines), error=redact("; ".join(lines)))
        self._transcript.add(turn)
        return turn

    # ------------------------------------------------------------------ what the runner reports

    def _settled(self, job: Job) -> None:
        # Sending worked again: the failures it outdates are past. A failed answer gets a Retry
        # button under it; anything else has none.
        if job.turn.state == "done":
            self._outdate("answered" if job.kind == "ask" else "session")
        if job.kind != "ask":
            return
        if job.turn.state != "failed":
            self._transcript.set_actions(job.turn, [])
            return
        with self._lock:
            self._failed[job.turn.turn] = job
        button = retry_button()
        turn = job.turn
        button.on_click(lambda _button: self.retry(turn))
        self._transcript.set_actions(turn, [button])

    def _outdate(self, event: Event) -> None:
        """Mark the failed answers that ``event`` outdates as past: greyed, no countdown, no
        Retry (see `estatebot.chat.panel.status.outdated`)."""
        with self._lock:
            jobs = {job.turn.turn: job for job in self._failed.values()}
            over = outdated([job.turn for job in jobs.values()], event)
            for turn in over:
                turn.past = True
                self._failed.pop(turn.turn, None)
        for turn in over:
            jobs[turn.turn].view.value = turn_html(turn)
            self._transcript.set_actions(turn, [])

    def _refresh(self) -> None:
        # Redraw the controls and the status line from the runner's state.
        runner = self._runner
        with self._lock:
            busy = runner.asking
            session_id = runner.session_id
            last = runner.last_answer
            total = runner.total_tokens
            retry_at = runner.retry_at
        closed = self.client_closed
        self.stop_button.disabled = not busy
        sending = send_state(asking=busy, retry_at=retry_at, closed=closed, now=datetime.now())
        self.send_button.disabled = not sending.enabled
        self.send_button.description = sending.label
        self.send_button.tooltip = sending.tooltip
        self.reconnect_button.layout.display = None if closed else "none"
        self.status.value = status_html(
            session_id=session_id,
            last_answer=last,
            total_tokens=total,
            busy=busy,
            retry_at=retry_at,
            closed=closed,
        )
        if retry_at is not None and retry_at > datetime.now():
            self._start_countdown()

    # ------------------------------------------------------------------ the rate limit's countdown

    @property
    def _retry_at(self) -> datetime | None:
        # The runner's rate limit, under its old name here (a test sets it to end a countdown).
        return self._runner.retry_at

    @_retry_at.setter
    def _retry_at(self, when: datetime | None) -> None:
        with self._lock:
            self._runner.retry_at = when

    def _start_countdown(self) -> None:
        with self._lock:
            if self._countdown is not None:
                return
            timer = threading.Timer(COUNTDOWN_STEP, self._tick)
            timer.daemon = True
            self._countdown = timer
        timer.start()

    def _tick(self) -> None:
        """Redraw the countdown: the status line and each rate-limited answer; once the time is
        up the limit is cleared (its answers then say a retry is possible)."""
        runner = self._runner
        with self._lock:
            self._countdown = None
            if runner.retry_at is not None and runner.retry_at <= datetime.now():
                runner.retry_at = None
            limited = [
                job
                for job in self._failed.values()
                if job.turn.retry_at is not None and not job.turn.past
            ]
        for job in limited:
            job.view.value = turn_html(job.turn)
        self._refresh()
