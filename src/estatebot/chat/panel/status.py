"""The chat panel's status rules: what Send offers, and when a failure's card stops being current.

Pure functions of the panel's state and the time; nothing here touches a widget or a thread.

* **Send** (:func:`send_state`) can be pressed only when a question can go out now: not while an
  answer is on its way, not while a rate limit holds (its label counts down, ``Send (12 s)``),
  not when the client was closed (Reconnect first). So pressing it again and again never piles
  up failed answers.
* **A failure is current until sending works again** (:func:`outdated`): once a later answer
  arrives, every failed answer before it is past (greyed, no countdown, no Retry); a new session
  ends the rate limits of the one before (the service counts messages per session).
* **A countdown** is in whole seconds, rounded up (:func:`seconds_left`): the card, the status
  line and the Send button read the same number, and it reaches 0 exactly when the limit ends.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from estatebot.chat.panel.turns import Turn

__all__ = [
    "KERNEL_WAIT_NOTE_S",
    "SendState",
    "outdated",
    "seconds_left",
    "send_state",
    "waited_text",
]

#: A question whose message waited at least this long (seconds) for the kernel says so on its
#: card; an idle kernel reads a click within milliseconds.
KERNEL_WAIT_NOTE_S = 1.0

#: What ends failures: an answer that arrived, or a new session that started.
Event = Literal["answered", "session"]


@dataclass(frozen=True)
class SendState:
    """What the Send button shows: whether it can be pressed, its label and its tooltip."""

    enabled: bool
    label: str
    tooltip: str


def seconds_left(retry_at: datetime | None, now: datetime) -> int:
    """Whole seconds until ``retry_at``, rounded up; 0 when there is no limit or it is over."""
    if retry_at is None:
        return 0
    return max(0, math.ceil((retry_at - now).total_seconds()))


def send_state(
    *, asking: bool, retry_at: datetime | None, closed: bool, now: datetime
) -> SendState:
    """What Send offers: disabled while the client is closed, a rate limit holds (the label
    counting down) or an answer is on its way; else enabled."""
    if closed:
        return SendState(False, "Send", "This panel's client was closed: press Reconnect")
    left = seconds_left(retry_at, now)
    if left:
        return SendState(
            False, f"Send ({left} s)", f"Rate limited: sending is possible again in {left} s"
        )
    if asking:
        return SendState(False, "Send", "An answer is on its way: wait for it, or press Stop")
    return SendState(True, "Send", "Send")


def outdated(failed: Iterable[Turn], event: Event) -> list[Turn]:
    """The failed answers among ``failed`` that ``event`` makes past: every current one after
    an answer arrived; the rate-limited ones after a new session started."""
    current = [turn for turn in failed if turn.state == "failed" and not turn.past]
    if event == "answered":
        return current
    return [turn for turn in current if turn.retry_at is not None]


def waited_text(seconds: float) -> str:
    """The note on a question that waited for a busy kernel: ``sent while the kernel was busy;
    waited 7 s``."""
    return f"sent while the kernel was busy; waited {max(1, round(seconds))} s"
