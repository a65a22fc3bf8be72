"""Judging an answer against a case's expectations: one check per expectation type.

Each ``check_*`` returns None when the expectation holds, else why not (the text that goes to the
results' ``why`` column); :func:`judge` runs those a case sets and gives a :class:`Verdict`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from estatebot.chat.factcheck.claims import (
    CONTRADICTED,
    describe_claim,
    doubtful_lines,
    unknown_listings,
)
from estatebot.chat.harness.case_cells import is_true
from estatebot.chat.harness.cases import ChatCase

#: An answer's claims: a claims frame, or its records (``ClaimChecker.records``).
Claims = pd.DataFrame | Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class Observed:
    """What came back for one question."""

    answer: str
    no_answer: bool
    tokens: int
    latency_ms: float
    claims: Claims | None = None


@dataclass(frozen=True)
class Verdict:
    """The outcome of every expectation a case sets: ``checks`` maps each to passed or not."""

    checks: dict[str, bool]
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """True when every expectation passed (and vacuously when there were none)."""
        return not self.failures


def check_contains(answer: str, needles: Sequence[str]) -> str | None:
    """None when every needle appears in the answer (case-insensitively), else why not."""
    text = answer.casefold()
    missing = [n for n in needles if n.casefold() not in text]
    if not missing:
        return None
    return f"expect_contains: {_quoted(missing)} not found"


def check_not_contains(answer: str, needles: Sequence[str]) -> str | None:
    """None when no needle appears in the answer (case-insensitively), else which did."""
    text = answer.casefold()
    found = [n for n in needles if n.casefold() in text]
    if not found:
        return None
    return f"expect_not_contains: {_quoted(found)} found"


def check_regex(answer: str, patterns: Sequence[re.Pattern[str]]) -> str | None:
    """None when every pattern matches somewhere in the answer, else which did not."""
    unmatched = [p.pattern for p in patterns if p.search(answer) is None]
    if not unmatched:
        return None
    return f"expect_regex: {_quoted(unmatched)} did not match"


def check_no_answer(no_answer: bool, expected: bool) -> str | None:
    """None when the service's ``noAnswer`` flag is the expected one."""
    if no_answer == expected:
        return None
    return f"expect_no_answer: expected {str(expected).lower()}, got {str(no_answer).lower()}"


def check_latency(latency_ms: float, limit_ms: float) -> str | None:
    """None when the answer came within the limit."""
    if latency_ms <= limit_ms:
        return None
    return f"max_latency_ms: took {latency_ms:.0f} ms, limit {limit_ms:g} ms"


def check_tokens(tokens: int, limit: int) -> str | None:
    """None when the exchange used no more tokens than the limit."""
    if tokens <= limit:
        return None
    return f"max_tokens: used {tokens} tokens, limit {limit}"


def check_grounded(claims: Claims | None) -> str | None:
    """None when no claim of the answer is contradicted or about an unknown listing, else how
    many and each: the listing with the claimed versus the real value, or the listing the
    answer names that you do not have (once, however many claims are about it)."""
    if claims is None:
        return "expect_grounded: the answer was not checked against the listings"
    lines = doubtful_lines(claims)
    if not lines:
        return None
    records = claims.to_dict(orient="records") if isinstance(claims, pd.DataFrame) else claims
    contradicted = len({describe_claim(r) for r in records if r["verdict"] == CONTRADICTED})
    unknown = len(unknown_listings(claims))
    counts = []
    if contradicted:
        counts.append(f"{contradicted} contradicted")
    if unknown:
        counts.append(f"{unknown} unknown listing{'' if unknown == 1 else 's'}")
    return f"expect_grounded: {', '.join(counts)}: {'; '.join(lines)}"


def outcome(passed: Any, error: Any) -> str:
    """``pass``, ``fail`` or ``error`` for one result row: an error wins; a pass is a true
    boolean of any kind (a numpy or pandas one from a frame as well as Python's)."""
    if error is not None and not pd.isna(error):
        return "error"
    return "pass" if is_true(passed) else "fail"


def judge(case: ChatCase, observed: Observed) -> Verdict:
    """Check every expectation the case sets against what came back."""
    outcomes: dict[str, str | None] = {}
    if case.expect_contains:
        outcomes["expect_contains"] = check_contains(observed.answer, case.expect_contains)
    if case.expect_not_contains:
        outcomes["expect_not_contains"] = check_not_contains(
            observed.answer, case.expect_not_contains
        )
    if case.expect_regex:
        outcomes["expect_regex"] = check_regex(observed.answer, case.expect_regex)
    if case.expect_no_answer is not None:
        outcomes["expect_no_answer"] = check_no_answer(observed.no_answer, case.expect_no_answer)
    if case.max_latency_ms is not None:
        outcomes["max_latency_ms"] = check_latency(observed.latency_ms, case.max_latency_ms)
    if case.max_tokens is not None:
        outcomes["max_tokens"] = check_tokens(observed.tokens, case.max_tokens)
    if case.expect_grounded:
        outcomes["expect_grounded"] = check_grounded(observed.claims)
    checks = {name: why is None for name, why in outcomes.items()}
    failures = tuple(why for why in outcomes.values() if why is not None)
    return Verdict(checks=checks, failures=failures)


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(repr(v) for v in values)
