"""Coalescing of a streamed answer's re-renders, and the timers that flush held text.

Every change of an HTML widget's ``value`` sends the whole value to the browser, so re-rendering
an answer at every fragment of a fast stream floods the page. A :class:`Coalescer` sits between
the stream and the widget and applies one rule (with the panel's default interval of ~50 ms):

* the **first** fragment is shown at once, so the answer visibly starts without delay;
* after that, at most **one update per interval**: text arriving sooner is held, and only the
  latest held text matters;
* a **timer** scheduled for the end of the interval flushes the held text, so a pause in the
  stream never leaves arrived text hidden;
* the **final** text is always shown: the caller closes the coalescer (which drops anything
  held and cancels the timer) and then renders the final state itself.

The timer comes from a :data:`Schedule`: :func:`thread_timer` for work on plain threads, or an
event loop's ``call_later`` for work on a loop.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Cancellable", "Coalescer", "Schedule", "thread_timer"]


class Cancellable(Protocol):
    """A scheduled call that can be called off (a ``threading.Timer``, an ``asyncio.Handle``)."""

    def cancel(self) -> None: ...


#: Runs a callback once after a delay in seconds; returns a handle that cancels it.
Schedule = Callable[[float, Callable[[], None]], Cancellable]


def thread_timer(delay: float, callback: Callable[[], None]) -> Cancellable:
    """A :data:`Schedule` on a daemon ``threading.Timer`` (for work not on an event loop)."""
    timer = threading.Timer(delay, callback)
    timer.daemon = True
    timer.start()
    return timer


class Coalescer:
    """Passes the latest text to ``show`` at most once per ``interval`` seconds.

    The first text is shown at once; a text arriving sooner than ``interval`` after the last one
    shown is kept (replacing any kept before it) and shown when the interval ends, by a flush
    scheduled with ``schedule``, so a pause in the stream does not leave it hidden. :meth:`close`
    drops whatever is pending and cancels the flush, after which nothing more is shown; the
    caller then renders the final text itself, so the final text is never held back.

    ``clock`` gives the time in seconds (``time.monotonic`` unless a test supplies its own).
    ``shown`` counts the texts passed to ``show``.
    """

    def __init__(
        self,
        show: Callable[[str], None],
        interval: float,
        schedule: Schedule,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._show = show
        self._interval = interval
        self._schedule = schedule
        self._clock = clock
        # show() runs under the lock so that a flush from a timer thread and the stream's own
        # updates reach the widget one at a time and in order.
        self._lock = threading.Lock()
        self._last_shown: float | None = None
        self._pending: str | None = None
        self._timer: Cancellable | None = None
        self._closed = False
        self.shown = 0

    def push(self, text: str) -> None:
        """Offer the latest text; it is shown now or at the end of the current interval."""
        with self._lock:
            if self._closed:
                return
            now = self._clock()
            if self._last_shown is None or now - self._last_shown >= self._interval:
                self._show_locked(text)
            else:
                self._pending = text
                if self._timer is None:
                    delay = self._last_shown + self._interval - now
                    self._timer = self._schedule(delay, self._flush)

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            if self._closed or self._pending is None or self._last_shown is None:
                return
            wait = self._last_shown + self._interval - self._clock()
            if wait > 0:  # a timer may fire a little early: never show sooner than the rule says
                self._timer = self._schedule(wait, self._flush)
                return
            self._show_locked(self._pending)

    def _show_locked(self, text: str) -> None:
        self._pending = None
        self.shown += 1
        self._show(text)
        # The interval counts from the end of a render: on a busy machine a render that was slow
        # to reach the widget must not bring the next one closer to it.
        self._last_shown = self._clock()

    def close(self) -> None:
        """Stop showing: cancel the pending flush (the caller then renders the final state)."""
        with self._lock:
            self._closed = True
            self._pending = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
