"""The chat transcript's data: turns, the history table, and the file-ID field's parsing.

One :class:`Turn` per transcript entry; nothing here touches widgets, threads or HTML.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import pandas as pd

__all__ = ["HISTORY_COLUMNS", "Role", "Turn", "TurnState", "history_frame", "parse_file_ids"]

Role = Literal["user", "bot", "session", "notice"]
TurnState = Literal["waiting", "streaming", "done", "stopped", "failed"]

#: Columns of the transcript history (:func:`history_frame`) and their dtypes.
HISTORY_COLUMNS: dict[str, str] = {
    "turn": "Int64",
    "role": "string",
    "text": "string",
    "question_id": "Int64",
    "answer_id": "Int64",
    "tokens": "Int64",
    "latency_ms": "Float64",
    "no_answer": "boolean",
    "error": "string",
    "session_id": "Int64",
    "state": "string",
}


@dataclass
class Turn:
    """One entry of the transcript: a question, an answer, a session marker or a notice.

    ``state`` is ``waiting`` or ``streaming`` while an answer is on its way, then ``done``,
    ``stopped`` (Stop was pressed; ``text`` holds what had arrived) or ``failed`` (``error``
    says why). ``complete`` is False when a stream ended without its final object.
    """

    role: Role
    text: str = ""
    turn: int = 0
    question_id: int | None = None
    answer_id: int | None = None
    tokens: int | None = None
    latency_ms: float | None = None
    no_answer: bool | None = None
    error: str | None = None
    session_id: int | None = None
    state: TurnState = "done"
    complete: bool = True
    ask_type: str | None = None
    file_ids: tuple[int, ...] = ()
    retry_at: datetime | None = None
    #: When the answer was complete (shown under it, with its tokens and latency).
    answered_at: datetime | None = None
    #: A failure in a person's words ("The service did not answer in time"); ``error`` keeps the
    #: service's own message.
    error_title: str | None = None
    #: HTML added under a complete answer by the panel's answer hooks (see ``ChatPanel.on_answer``).
    extra_html: str = ""
    #: A failure's technical details (the exception's kind and text, redacted): shown folded
    #: under the headline, never as it; ``error`` holds them too when the service said nothing.
    error_details: str | None = None
    #: When the answer failed.
    failed_at: datetime | None = None
    #: The failure is over: a later answer arrived (or, for a rate limit, a new session began),
    #: so its card is greyed, with no countdown and no Retry.
    past: bool = False
    #: A question sent from the browser while a cell kept the kernel busy: how long, in seconds,
    #: its message waited before the kernel read it (None when it did not wait).
    kernel_wait_s: float | None = None

    @property
    def stopped(self) -> bool:
        """Whether Stop cut this answer short."""
        return self.state == "stopped"

    @property
    def finished(self) -> bool:
        """Whether nothing more will happen to this turn."""
        return self.state in ("done", "stopped", "failed")


def history_frame(turns: Iterable[Turn]) -> pd.DataFrame:
    """``turns`` as a frame, one row per turn (columns and dtypes: :data:`HISTORY_COLUMNS`)."""
    rows = [{column: getattr(turn, column) for column in HISTORY_COLUMNS} for turn in turns]
    frame = pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))
    return frame.astype(HISTORY_COLUMNS)


def parse_file_ids(text: str) -> tuple[list[int] | None, list[str]]:
    """Comma-separated file IDs as integers (None when empty), and the parts that are not."""
    parts = [part.strip() for part in text.replace(";", ",").split(",") if part.strip()]
    ids: list[int] = []
    bad: list[str] = []
    for part in parts:
        try:
            ids.append(int(part))
        except ValueError:
            bad.append(part)
    return (ids or None), bad
