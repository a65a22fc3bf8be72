"""Fault decisions: throttle bursts, rates, the ``only`` filter and repeatable randomness."""

from __future__ import annotations

from estatebot.emulator import FaultDecision, Faults


def test_no_faults_by_default() -> None:
    decision = Faults().decide("RealEstateList")
    assert decision == FaultDecision()
    assert not decision.any


def test_a_throttle_burst_hits_the_next_requests_then_ends() -> None:
    faults = Faults(throttle_burst=2)
    assert [faults.decide("ClientAsk").throttle for _ in range(4)] == [True, True, False, False]
    assert faults.throttle_burst == 0


def test_rates_of_one_and_zero_are_certain() -> None:
    assert all(Faults(fail_rate=1.0).decide("Edit").fail for _ in range(20))
    assert all(Faults(drop_rate=1.0).decide("Edit").drop for _ in range(20))
    assert not any(Faults(fail_rate=0.0).decide("Edit").fail for _ in range(20))


def test_only_restricts_every_fault_to_the_named_operations() -> None:
    faults = Faults(latency_ms=50, fail_rate=1.0, throttle_burst=1, only={"RealEstateList"})
    assert faults.decide("ModelList") == FaultDecision()
    assert faults.throttle_burst == 1  # not consumed by an operation it does not apply to
    listed = faults.decide("RealEstateList")
    assert listed.throttle
    assert listed.latency_ms == 50


def test_the_same_seed_gives_the_same_failures() -> None:
    def pattern(faults: Faults) -> list[bool]:
        return [faults.decide("Edit").fail for _ in range(50)]

    first = pattern(Faults(fail_rate=0.5, seed=42))
    assert first == pattern(Faults(fail_rate=0.5, seed=42))
    assert 10 < sum(first) < 40
    faults = Faults(fail_rate=0.5, seed=42)
    pattern(faults)
    faults.reseed()
    assert pattern(faults) == first


def test_clear_turns_everything_off() -> None:
    faults = Faults(latency_ms=5, fail_rate=1, throttle_burst=3, drop_rate=1, only={"Edit"})
    faults.clear()
    assert not faults.decide("Edit").any


def test_hallucinations_are_off_by_default_and_drawn_per_question() -> None:
    assert Faults().hallucination("3 bed homes in Austin") is None
    always = Faults(hallucinate_rate=1.0, seed=5)
    assert always.hallucination("3 bed homes in Austin") is not None
    half = Faults(hallucinate_rate=0.5, seed=5)
    questions = [f"{n} bed homes in Austin" for n in range(40)]
    first = [half.hallucination(q) is not None for q in questions]
    # The same seed and question give the same decision, whatever was asked before.
    again = [half.hallucination(q) is not None for q in reversed(questions)][::-1]
    assert first == again
    assert 5 < sum(first) < 35
    half.only = {"Edit"}
    assert half.hallucination(questions[0]) is None
    half.clear()
    assert half.hallucinate_rate == 0.0


def test_spare_next_lets_the_next_requests_through_untouched() -> None:
    faults = Faults(fail_rate=1.0, spare_next=2, only={"RealEstateList"})
    assert not faults.decide("Edit").fail  # not an operation the faults apply to: not spared
    assert faults.spare_next == 2
    assert [faults.decide("RealEstateList").fail for _ in range(4)] == [False, False, True, True]


def test_the_faults_in_effect_are_said_in_words() -> None:
    assert Faults().in_effect() == []
    faults = Faults(latency_ms=40, fail_rate=0.25, rate_limit=(5, 10), only={"ClientAsk"})
    assert faults.in_effect() == [
        "latency 40 ms (only ClientAsk)",
        "25% of requests fail with 500 (only ClientAsk)",
        "at most 5 requests per 10 s per chatbot, then 429 (only ClientAsk)",
    ]
    faults.clear()
    assert faults.in_effect() == []
