"""A plan's operations in the form the runner sends them: one :class:`Task` each, with the
identity it shares with other operations, and a hash that tells two plans apart.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from estatebot.errors import (
    PlanError,
)
from estatebot.listings.sync.apply.journal_records import op_id
from estatebot.listings.sync.plan.operations import Change
from estatebot.listings.sync.values.compare import match_keys

if TYPE_CHECKING:
    from estatebot.listings.sync.plan.artifact import PlanArtifact


# --------------------------------------------------------------------------- operations


@dataclass(frozen=True)
class Task:
    """One operation to perform: what the plan says, in the form the runner needs."""

    action: str
    key: str
    key_type: str
    row: int | None
    id: int | None
    body: dict[str, Any] | None
    before_hash: str | None
    note: str = ""
    #: The listing's identities as matched: ("MLSNumber", ...) and ("Url", ...).
    identity: frozenset[tuple[str, str]] = frozenset()
    #: An update's planned changes, field by field (laid over the listing as it is now when it
    #: changed since the plan and the apply is forced).
    changes: tuple[Change, ...] = ()
    #: An update's fields whose value on the service is unknown (see PlannedOp.unknown).
    unknown: tuple[str, ...] = ()

    @property
    def op(self) -> str:
        return op_id(self.action, self.key)


def _identity(values: Mapping[str, Any] | None) -> frozenset[tuple[str, str]]:
    """A listing's MLSNumber and Url, as keys are matched."""
    if not values:
        return frozenset()
    names = ("MLSNumber", "Url")
    texts = [str(values[n]).strip() if values.get(n) not in (None, "") else None for n in names]
    return frozenset((name, key) for name, key in zip(names, match_keys(texts), strict=True) if key)


def tasks_from_plan(plan: PlanArtifact) -> list[Task]:
    tasks = [
        Task(
            action=str(op.action),
            key=str(op.key),
            key_type=str(op.key_type),
            row=op.row,
            id=op.id,
            body=dict(op.body) if op.body is not None else None,
            before_hash=op.before_hash,
            identity=_identity(op.body if op.body is not None else op.before),
            changes=tuple(op.changes),
            unknown=tuple(op.unknown),
        )
        for op in plan.operations()
    ]
    seen: set[str] = set()
    for task in tasks:
        if task.action not in ("create", "update", "delete"):
            raise PlanError(f"unknown action {task.action!r} in the plan", value=task.key)
        if task.op in seen:
            raise PlanError(
                f"the plan has two {task.action} operations for {task.key_type} {task.key}",
                row=task.row,
                value=task.key,
            )
        seen.add(task.op)
    return tasks


def plan_hash(tasks: Sequence[Task]) -> str:
    """A hash of the plan's operations: tells apart two plans made from the same listings."""
    items = [[t.op, t.key_type, t.before_hash, t.body] for t in tasks]
    text = json.dumps(items, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
