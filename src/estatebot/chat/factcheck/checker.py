"""Checking a chat session's answers against the chatbot's listings, pulled once.

:class:`GroundingChecker` is what the chat panel uses with ``fact_check=True``: it pulls the
chatbot's listings on the first check (or on :meth:`~GroundingChecker.refresh`: the panel calls
it again on New session, when the listings may have changed) and checks each answer against
them, with no request per answer.
"""

from __future__ import annotations

import threading
from typing import Any

import pandas as pd

from estatebot.chat.factcheck.badge import badge_html
from estatebot.chat.factcheck.claims import ClaimChecker
from estatebot.listings.remote.pull import pull_listings

__all__ = ["GroundingChecker"]


class GroundingChecker:
    """A chatbot's listings, held to fact-check its answers.

    ``client`` and ``serial`` are the chatbot's (the client needs the session key, as
    ``pull_listings`` does). Thread-safe: the panel checks answers from its worker.
    """

    def __init__(self, client: Any, serial: str, *, progress: bool | None = False) -> None:
        self._client = client
        self._serial = serial
        self._progress = progress
        self._lock = threading.Lock()
        self._checker: ClaimChecker | None = None
        self._listings: pd.DataFrame | None = None

    def __repr__(self) -> str:
        held = "not pulled" if self._listings is None else f"{len(self._listings)} listings"
        return f"GroundingChecker(serial={self._serial!r}, {held})"

    @property
    def listings(self) -> pd.DataFrame:
        """The listings answers are checked against (pulled on first use); a copy."""
        return self._ready()[1].copy()

    def refresh(self) -> int:
        """Pull the chatbot's listings now (once); returns how many there are."""
        frame = pull_listings(self._client, self._serial, progress=self._progress)
        checker = ClaimChecker(frame)
        with self._lock:
            self._listings, self._checker = frame, checker
        return len(frame)

    def forget(self) -> None:
        """Drop the listings held, so the next check pulls them again (they may have changed)."""
        with self._lock:
            self._listings, self._checker = None, None

    def check(self, answer_text: str) -> pd.DataFrame:
        """The claims frame of one answer (as :func:`~estatebot.fact_check` gives)."""
        return self._ready()[0].check(answer_text)

    def badge(self, answer_text: str) -> str:
        """The badge HTML for one answer (``""`` when every claim holds)."""
        return badge_html(self.check(answer_text))

    def _ready(self) -> tuple[ClaimChecker, pd.DataFrame]:
        with self._lock:
            held = self._held
        if held is None:
            self.refresh()
            with self._lock:
                held = self._held
        if held is None:  # refresh() always sets it; this keeps the type exact
            raise RuntimeError("the listings could not be pulled")
        return held

    @property
    def _held(self) -> tuple[ClaimChecker, pd.DataFrame] | None:
        if self._checker is None or self._listings is None:
            return None
        return self._checker, self._listings
