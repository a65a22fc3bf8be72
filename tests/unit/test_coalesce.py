"""The coalescing rule of streamed answers, on a fake clock and a fake timer."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from estatebot.chat.panel.coalesce import Coalescer, thread_timer

INTERVAL = 0.05


@dataclass
class FakeTimer:
    due: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeTime:
    """A clock that moves only when told to, and a schedule whose timers fire when it passes."""

    def __init__(self) -> None:
        self.now = 0.0
        self.timers: list[FakeTimer] = []

    def clock(self) -> float:
        return self.now

    def schedule(self, delay: float, callback: Callable[[], None]) -> FakeTimer:
        timer = FakeTimer(self.now + delay, callback)
        self.timers.append(timer)
        return timer

    def advance_to(self, moment: float) -> None:
        """Move the clock to ``moment``, firing every live timer due by then at its due time."""
        while due := sorted(
            (t for t in self.timers if not t.cancelled and t.due <= moment), key=lambda t: t.due
        ):
            timer = due[0]
            self.timers.remove(timer)
            self.now = max(self.now, timer.due)
            timer.callback()
        self.now = moment


def make() -> tuple[Coalescer, FakeTime, list[tuple[float, str]]]:
    fake = FakeTime()
    shown: list[tuple[float, str]] = []
    coalescer = Coalescer(
        lambda text: shown.append((fake.now, text)), INTERVAL, fake.schedule, clock=fake.clock
    )
    return coalescer, fake, shown


def test_first_fragment_is_shown_at_once() -> None:
    coalescer, fake, shown = make()
    coalescer.push("Hel")
    assert shown == [(0.0, "Hel")]
    assert fake.timers == []
    assert coalescer.shown == 1


def test_fragments_within_the_interval_are_held_and_only_the_latest_is_flushed() -> None:
    coalescer, fake, shown = make()
    coalescer.push("a")
    fake.advance_to(0.01)
    coalescer.push("ab")
    fake.advance_to(0.02)
    coalescer.push("abc")
    assert shown == [(0.0, "a")]
    assert len(fake.timers) == 1  # one flush for the interval, however many fragments
    assert fake.timers[0].due == pytest.approx(INTERVAL)
    fake.advance_to(INTERVAL)
    assert shown == [(0.0, "a"), (INTERVAL, "abc")]
    assert coalescer.shown == 2


def test_a_fragment_after_a_quiet_interval_is_shown_at_once() -> None:
    coalescer, fake, shown = make()
    coalescer.push("a")
    fake.advance_to(INTERVAL * 3)
    coalescer.push("ab")
    assert shown == [(0.0, "a"), (INTERVAL * 3, "ab")]
    assert fake.timers == []


def test_the_timer_flushes_held_text_when_the_stream_pauses() -> None:
    coalescer, fake, shown = make()
    coalescer.push("a")
    fake.advance_to(0.01)
    coalescer.push("ab")  # held; no fragment follows
    fake.advance_to(1.0)
    assert shown[-1] == (INTERVAL, "ab")


@given(gaps=st.lists(st.floats(min_value=0.0, max_value=0.2), min_size=1, max_size=40))
def test_at_most_one_update_per_interval_and_the_last_text_is_always_shown(
    gaps: list[float],
) -> None:
    coalescer, fake, shown = make()
    moment = 0.0
    texts = []
    for number, gap in enumerate(gaps):
        moment += gap
        fake.advance_to(moment)
        texts.append(f"text {number}")
        coalescer.push(texts[-1])
    fake.advance_to(moment + 1.0)
    times = [when for when, _text in shown]
    assert shown[0] == (gaps[0], texts[0])
    assert all(b - a >= INTERVAL - 1e-9 for a, b in pairwise(times))
    assert shown[-1][1] == texts[-1]
    assert [text for _when, text in shown] == sorted(
        {text for _when, text in shown}, key=texts.index
    )  # in order, none twice


def test_close_cancels_the_timer_and_drops_held_text() -> None:
    coalescer, fake, shown = make()
    coalescer.push("a")
    fake.advance_to(0.01)
    coalescer.push("ab")
    timer = fake.timers[0]
    coalescer.close()
    assert timer.cancelled
    timer.callback()  # a timer that fires anyway (it was already running) shows nothing
    fake.advance_to(1.0)
    assert shown == [(0.0, "a")]


def test_nothing_is_shown_after_close_so_the_final_render_is_the_last() -> None:
    coalescer, fake, shown = make()
    coalescer.push("a")
    coalescer.close()  # the caller now renders the final text itself
    fake.advance_to(1.0)
    coalescer.push("a b")  # a late fragment cannot overwrite the final text
    fake.advance_to(2.0)
    assert shown == [(0.0, "a")]
    assert coalescer.shown == 1
    assert fake.timers == []


def test_thread_timer_runs_the_callback_after_the_delay() -> None:
    fired = threading.Event()
    timer = thread_timer(0.01, fired.set)
    assert fired.wait(5)
    assert isinstance(timer, threading.Timer)
    assert timer.daemon


def test_thread_timer_cancel_prevents_the_callback() -> None:
    fired = threading.Event()
    timer = thread_timer(0.2, fired.set)
    timer.cancel()
    assert not fired.wait(0.4)


def test_a_slow_render_does_not_bring_the_next_one_closer() -> None:
    # On a busy machine a render may reach the widget well after the clock was read.
    fake = FakeTime()
    shown: list[tuple[float, str]] = []

    def slow_show(text: str) -> None:
        fake.now += 0.04  # the render itself takes 40 ms
        shown.append((fake.now, text))

    coalescer = Coalescer(slow_show, INTERVAL, fake.schedule, clock=fake.clock)
    coalescer.push("a")  # rendered at 0.04
    fake.advance_to(0.06)
    coalescer.push("ab")  # 0.06 is within the interval after the render ended: held
    assert [text for _, text in shown] == ["a"]
    fake.advance_to(0.2)
    assert [text for _, text in shown] == ["a", "ab"]
    assert shown[1][0] - shown[0][0] >= INTERVAL


def test_a_timer_firing_early_waits_out_the_interval() -> None:
    coalescer, fake, shown = make()
    coalescer.push("a")
    fake.advance_to(0.01)
    coalescer.push("ab")
    (timer,) = fake.timers
    fake.timers.remove(timer)
    fake.now = 0.045  # the timer fires 5 ms before the interval ends
    timer.callback()
    assert shown == [(0.0, "a")]
    fake.advance_to(0.1)
    assert shown == [(0.0, "a"), (INTERVAL, "ab")]
