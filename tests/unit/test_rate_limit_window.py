"""The emulator's rate-limit fault: a sliding window per chatbot, on a clock the test moves."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from estatebot.emulator import Faults
from estatebot.emulator.faults import RateLimit


class FakeClock:
    """A clock that stands still until the test moves it."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def limited(count: int, seconds: float, clock: FakeClock) -> Faults:
    return Faults(rate_limit=RateLimit(count, seconds), clock=clock)


def test_the_request_past_the_limit_waits_for_the_oldest_to_leave_the_window() -> None:
    clock = FakeClock()
    faults = limited(3, 10, clock)
    for step in (0.0, 2.5, 4.0):
        clock.now = 1000 + step
        assert not faults.decide("RealEstateList", "bot").throttle
    clock.now = 1006.2
    refused = faults.decide("RealEstateList", "bot")
    assert refused.throttle
    assert refused.rate_limited
    assert not refused.fail
    assert refused.retry_after_s == 4  # the slot of t=1000 frees at 1010: 3.8 s, rounded up
    clock.now = 1010.0  # the first request has left the window
    assert not faults.decide("RealEstateList", "bot").throttle
    clock.now = 1011.0
    # Now the oldest is the one of t=1002.5: its slot frees at 1012.5.
    assert faults.decide("RealEstateList", "bot").retry_after_s == 2


def test_refused_requests_do_not_count() -> None:
    clock = FakeClock()
    faults = limited(1, 5, clock)
    assert not faults.decide("ClientAsk", "bot").throttle
    for _ in range(10):
        clock.now += 0.4
        assert faults.decide("ClientAsk", "bot").throttle
    clock.now = 1005.0
    assert not faults.decide("ClientAsk", "bot").throttle


def test_each_chatbot_has_its_own_window_and_requests_naming_none_are_not_counted() -> None:
    clock = FakeClock()
    faults = limited(1, 60, clock)
    assert not faults.decide("RealEstateList", "one").throttle
    assert not faults.decide("RealEstateList", "two").throttle
    assert faults.decide("RealEstateList", "one").retry_after_s == 60
    assert all(not faults.decide("ModelList").throttle for _ in range(5))


def test_only_spare_and_burst_come_before_the_limit() -> None:
    clock = FakeClock()
    faults = Faults(rate_limit=(1, 60), clock=clock, only={"RealEstateList"}, spare_next=1)
    assert not faults.decide("Edit", "bot").throttle  # not an operation the faults apply to
    assert not faults.decide("RealEstateList", "bot").throttle  # spared: not counted either
    assert faults.spare_next == 0
    assert not faults.decide("RealEstateList", "bot").throttle  # the one slot
    faults.throttle_burst = 1
    burst = faults.decide("RealEstateList", "bot")
    assert burst.throttle
    assert not burst.rate_limited
    assert burst.retry_after_s == faults.retry_after_s
    assert faults.decide("RealEstateList", "bot").rate_limited


def test_a_new_limit_starts_afresh_and_clear_turns_it_off() -> None:
    clock = FakeClock()
    faults = limited(1, 60, clock)
    faults.decide("ClientAsk", "bot")
    assert faults.decide("ClientAsk", "bot").throttle
    faults.rate_limit = (2, 60)  # type: ignore[assignment]  # a pair is taken too
    assert faults.rate_limit == RateLimit(2, 60)
    assert not faults.decide("ClientAsk", "bot").throttle
    faults.clear()
    assert faults.rate_limit is None
    assert all(not faults.decide("ClientAsk", "bot").throttle for _ in range(5))


@pytest.mark.parametrize(
    "value",
    [(0, 10), (-1, 10), (1.5, 10), (True, 10), (5, 0), (5, -1), (5, math.nan), (5, math.inf),
     (5, "10"), (5,), "5/10"],
)  # fmt: skip
def test_a_bad_limit_is_refused_when_set_and_the_old_one_stays(value: object) -> None:
    faults = Faults(rate_limit=(3, 10))
    with pytest.raises(ValueError, match="rate_limit"):
        faults.rate_limit = value  # type: ignore[assignment]
    assert faults.rate_limit == RateLimit(3, 10)
    with pytest.raises(ValueError, match="rate_limit"):
        Faults(rate_limit=value)  # type: ignore[arg-type]


@given(
    count=st.integers(1, 5),
    seconds=st.floats(0.5, 30, allow_nan=False),
    gaps=st.lists(st.floats(0, 10, allow_nan=False), min_size=1, max_size=40),
)
def test_no_window_ever_admits_more_than_the_limit_and_retry_after_is_honest(
    count: int, seconds: float, gaps: list[float]
) -> None:
    clock = FakeClock(0.0)
    faults = limited(count, seconds, clock)
    admitted: list[float] = []
    for gap in gaps:
        clock.now += gap
        decision = faults.decide("ClientAsk", "bot")
        in_window = [t for t in admitted if t > clock.now - seconds]
        # Admitted exactly when fewer than `count` admitted requests are in the last `seconds`.
        assert decision.throttle == (len(in_window) >= count)
        if not decision.throttle:
            admitted.append(clock.now)
            continue
        wait = decision.retry_after_s
        assert wait is not None
        assert wait >= 1
        # Waiting Retry-After frees a slot; a whole second less would not have (Retry-After
        # is whole seconds, at least 1).
        frees_at = in_window[-count] + seconds
        assert clock.now + wait >= frees_at
        assert wait == 1 or clock.now + wait - 1 < frees_at
