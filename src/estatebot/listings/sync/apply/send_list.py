"""What an apply sends, made from the stale check's result just before the first write.

The checked operations, less the deletes whose backup could not create their listing again; a
forced update laid over its listing as it is now; and the fields List never returns (AreaUnit,
Location) filled from the values last sent (:mod:`estatebot.listings.remote.sent_record`), where
the bodies of what the service already shows done are remembered first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from estatebot.listings import schema
from estatebot.listings.remote.sent_record import SentValues
from estatebot.listings.sync.apply.restore import body_of, rebuild_problems
from estatebot.listings.sync.apply.send_tasks import Task
from estatebot.listings.sync.apply.sender import not_sent
from estatebot.listings.sync.report.apply_report import OpOutcome

if TYPE_CHECKING:
    from estatebot.listings.sync.apply.stale_check import Checked, Remote

__all__ = ["to_send"]


def to_send(
    checked: Checked,
    remote: Remote | None,
    serial: str,
    sent: SentValues | None,
    outcomes: dict[str, OpOutcome],
    notes: list[str],
) -> list[Task]:
    """The operations to send, from what the check found (``remote``: the pull it judged).

    A delete held back for its backup gets its outcome in ``outcomes``; what the list means
    for the report goes to ``notes``.
    """
    send = checked.send
    if remote is not None:
        changed = {t.op for t, _ in checked.stale if t.action == "update"}
        send = [
            _rebased(t, checked.found[t.op], remote) if t.op in changed else t
            for t in _keep_restorable(send, checked.found, remote, serial, outcomes)
        ]
    if sent is not None:
        shown = [(task, record.id) for task, record in checked.skipped]
        _remember_shown(sent, [*shown, *checked.applied])
        send = _with_sent_values(send, sent, notes)
    return send


def _keep_restorable(
    send: Sequence[Task],
    found: Mapping[str, Sequence[int]],
    remote: Remote,
    serial: str,
    outcomes: dict[str, OpOutcome],
) -> list[Task]:
    """The tasks to send, less the deletes whose listing its backup could not create again.

    Checked before the first delete: what a backup holds, a restore must be able to put back.
    A listing it could not is not deleted, and its row says why, field by field.
    """
    kept: list[Task] = []
    for task in send:
        where = found[task.op] if task.action == "delete" else []
        if len(where) == 1:
            position = where[0]
            problems = rebuild_problems(remote.row(position), remote.raw(position), serial)
            if problems:
                why = "; ".join(problems)
                outcomes[task.op] = not_sent(
                    task, f"not deleted: its backup could not create it again ({why})"
                )
                continue
        kept.append(task)
    return kept


def _rebased(task: Task, found: Sequence[int], remote: Remote) -> Task:
    """An update of a listing changed since the plan (sent only when forced): the plan's own
    changes laid over the listing as it is now, so nobody else's edit is undone."""
    if len(found) != 1 or task.body is None:
        return task
    position = found[0]
    current, _ = body_of(remote.row(position), remote.raw(position))
    body = {**current, "Key": task.body["Key"], "KeyType": task.body["KeyType"]}
    for name in schema.UNLISTED_COLUMNS:  # the service never shows them: as planned
        body.pop(name, None)
        if task.body.get(name) is not None:
            body[name] = task.body[name]
    for change in task.changes:
        if change.field == "ExtensionColumn":
            now = {item["Key"]: item["value"] for item in body.get("ExtensionColumn") or []}
            for key in change.before:
                now.pop(key, None)
            now.update(change.after)
            merged = [{"Key": k, "value": v} for k, v in now.items()]
            body["ExtensionColumn"] = merged or None
        elif task.body.get(change.field) is None:
            body.pop(change.field, None)  # cleared by the plan
        else:
            body[change.field] = task.body[change.field]
    body = {name: value for name, value in body.items() if value is not None}
    return replace(task, body=body, note="changed since the plan: its changes sent over it")


def _remember_shown(record: SentValues, shown: Sequence[tuple[Task, int | None]]) -> None:
    """Record the bodies of operations the service shows done, though this run did not send
    them: an interrupted run may have died before recording what the service accepted."""
    for task, listing_id in shown:
        if task.body is not None:
            record.remember(task.body, listing_id=listing_id)


def _with_sent_values(send: Sequence[Task], record: SentValues, notes: list[str]) -> list[Task]:
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
