"""The outcomes of an operation of an apply (or a restore), as its report names them."""

from __future__ import annotations

#: Outcomes of an operation.
DONE = "done"
FAILED = "failed"
SKIPPED = "skipped (already done)"
#: Done again: the journal called it done, and the service did not show it.
REDONE = "redone"
UNCHANGED = "unchanged"
#: Held back by the runner: a delete whose listing a failed create was meant to replace.
NOT_SENT = "not sent"
#: Not sent: the listing changed on the service after the apply's check, before its write.
CHANGED = "changed during apply"
OUTCOMES: tuple[str, ...] = (DONE, REDONE, FAILED, NOT_SENT, CHANGED, SKIPPED, UNCHANGED)
#: Outcomes of an operation that was meant to be done and is not.
NOT_DONE: frozenset[str] = frozenset({FAILED, NOT_SENT, CHANGED})
