"""The panel's fact-check: each complete answer held against the chatbot's listings.

With ``ChatPanel(..., fact_check=True)`` every answer is checked by a
:class:`~estatebot.chat.factcheck.checker.GroundingChecker`, and an answer stating facts the
listings do not hold gets the badge "2 facts not in your listings" (details on click, and on
hover). The listings are pulled once, in the background as the panel is made, and again after
**New session** (they may have changed); an answer that arrives first pulls them itself. The
pull needs a blocking client: an ``AsyncClient``'s settings make one, closed with the panel.
"""

from __future__ import annotations

import concurrent.futures
import threading

import pandas as pd

from estatebot.api.client import AsyncClient, Client
from estatebot.chat.factcheck.badge import badge_html
from estatebot.chat.factcheck.checker import GroundingChecker
from estatebot.chat.panel.connection import blocking_twin
from estatebot.chat.panel.turns import Turn

__all__ = ["PanelFactCheck"]


class PanelFactCheck:
    """The answer hook, the listings it checks against, and the client it pulls them with."""

    def __init__(self, client: Client | AsyncClient, serial: str) -> None:
        self._serial = serial
        self._lock = threading.Lock()
        self._own: Client | None = None
        self._pending: concurrent.futures.Future[int] | None = None  # the pull in flight
        self._checker = self._checker_for(client)
        self.claims: dict[int, pd.DataFrame] = {}  # turn number -> its claims
        self.prefetch()

    def _checker_for(self, client: Client | AsyncClient) -> GroundingChecker:
        puller = blocking_twin(client)
        with self._lock:
            old, self._own = self._own, (puller if puller is not client else None)
        if old is not None:
            old.close()
        return GroundingChecker(puller, self._serial)

    @property
    def checker(self) -> GroundingChecker:
        """What checks the answers (its ``listings`` are the ones held)."""
        return self._checker

    def badge(self, turn: Turn) -> str | None:
        """The answer hook: the badge for ``turn`` (None when every claim holds or it is not a
        complete answer with text)."""
        if turn.role != "bot" or not turn.text or turn.no_answer:
            return None
        pending = self._pending
        if pending is not None:
            # Wait for the pull in flight rather than start a second one; if it failed, the
            # check below pulls again and its failure shows under the answer.
            concurrent.futures.wait([pending])
        claims = self._checker.check(turn.text)
        self.claims[turn.turn] = claims
        return badge_html(claims) or None

    def prefetch(self) -> None:
        """Pull the listings again, in the background (a failed pull is retried by the next
        answer's check, whose failure the panel shows under that answer)."""
        checker = self._checker
        checker.forget()
        pending: concurrent.futures.Future[int] = concurrent.futures.Future()
        self._pending = pending

        def pull() -> None:
            try:
                pending.set_result(checker.refresh())
            except Exception as exc:  # the next check pulls again and shows the error
                checker.forget()
                pending.set_exception(exc)

        threading.Thread(target=pull, name="estatebot-factcheck-pull", daemon=True).start()

    def rebind(self, client: Client | AsyncClient) -> None:
        """Pull with ``client`` from now on (after Reconnect), listings pulled afresh."""
        self._checker = self._checker_for(client)
        self.prefetch()

    def close(self) -> None:
        """Close the blocking client made for an ``AsyncClient`` (a given client is the
        caller's)."""
        with self._lock:
            own, self._own = self._own, None
        if own is not None:
            own.close()
