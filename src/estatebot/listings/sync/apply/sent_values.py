"""The apply's side of the record of values sent (:mod:`estatebot.listings.remote.sent_record`):
what the service accepted is remembered, and updates that still lack such a value get it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from estatebot.listings.remote.sent_record import SentValues
from estatebot.listings.sync.apply.send_tasks import Task
from estatebot.listings.sync.report.apply_report import DONE, REDONE, OpOutcome

__all__ = ["remember_done", "with_sent_values"]


def remember_done(
    record: SentValues, tasks: Iterable[Task], outcomes: Mapping[str, OpOutcome]
) -> None:
    """Remember the bodies of the creates and updates that the service accepted."""
    for task in tasks:
        outcome = outcomes.get(task.op)
        if task.body is None or outcome is None or outcome.outcome not in (DONE, REDONE):
            continue
        record.remember(task.body, listing_id=outcome.id)
    record.flush()


def with_sent_values(send: Sequence[Task], record: SentValues, notes: list[str]) -> list[Task]:
    """Updates whose remote value of a never-shown field is unknown carry the value last sent."""
    out: list[Task] = []
    filled = 0
    for task in send:
        if task.action == "update" and task.unknown and task.body is not None:
            body = record.fill(task.body, task.key_type, task.key, task.unknown)
            if body != task.body:
                filled += 1
                task = replace(task, body=body)
        out.append(task)
    if filled:
        notes.append(
            f"{filled} updates sent the AreaUnit or Location last sent to their listing "
            f"(the sheet does not give them, and the service never shows them): {record.path}"
        )
    return out
