"""The sync plan as an artifact: its items, counts and summary, and its JSON form.

A :class:`SyncPlan` is made by :func:`~estatebot.listings.plan.plan_sync` or
:func:`~estatebot.listings.plan.plan_cleanup`, shown by :mod:`~estatebot.listings.plan_view`,
kept with :meth:`SyncPlan.save` / :meth:`SyncPlan.load`, and carried out by
:meth:`SyncPlan.apply`. This module holds the data and its persistence only: no planning rules.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import pandas as pd

from estatebot.api.errors import PlanError
from estatebot.api.models import ListingInput, ListingUpdate
from estatebot.listings import plan_view

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.report import ApplyReport

__all__ = [
    "PLAN_FORMAT",
    "PLAN_FORMAT_VERSION",
    "Action",
    "Change",
    "InvalidRow",
    "ListingRef",
    "PlannedOp",
    "SyncPlan",
]

PLAN_FORMAT = "estatebot-sync-plan"
#: Version 2: listing hashes and fingerprints of :data:`estatebot.listings.compare.HASH_VERSION` 2.
PLAN_FORMAT_VERSION = 2

Action = Literal["create", "update", "delete", "skipped_create"]


# --------------------------------------------------------------------------- plan items


@dataclass(frozen=True)
class Change:
    """One field of an update: its remote value and the value the update sends (JSON-safe)."""

    field: str
    before: Any
    after: Any


@dataclass(frozen=True)
class PlannedOp:
    """One operation the apply step will perform, with everything it needs.

    ``body`` is the complete request body in wire form, without ``SerialNumber`` (added at
    apply time by :meth:`request`); None for deletes. ``before`` is the remote listing's clean
    values (JSON-safe) and ``before_hash`` its :func:`~estatebot.listings.compare.listing_hash`,
    for updates and deletes.
    """

    action: Action
    key: str
    key_type: str
    row: int | None
    id: int | None
    body: dict[str, Any] | None
    before: dict[str, Any] | None
    before_hash: str | None
    changes: tuple[Change, ...] = ()
    reason: str = ""

    def request(self, serial: str) -> ListingInput | ListingUpdate:
        """The validated request model of a create or update, for the chatbot ``serial``."""
        if self.body is None:
            raise ValueError(f"a {self.action} has no request body")
        data = {**self.body, "SerialNumber": serial}
        if self.action == "update":
            return ListingUpdate.model_validate(data)
        return ListingInput.model_validate(data)


class ListingRef(NamedTuple):
    """A listing the plan leaves alone (unchanged or kept): its key, sheet row and ID.

    A named tuple: a plan of 100,000 listings holds that many of them, made at C speed.
    """

    key: str | None
    row: int | None
    id: int | None


@dataclass(frozen=True)
class InvalidRow:
    """A sheet row that cannot be synced, with every reason."""

    row: int | None
    key: str | None
    id: int | None
    reasons: tuple[str, ...]


# --------------------------------------------------------------------------- the plan


@dataclass
class SyncPlan:
    """The outcome of ``plan_sync`` or ``plan_cleanup``: what would be done, and why.

    Display it in a notebook for a rich view, print it for the summary, export it with
    :meth:`to_frame` or :meth:`to_excel`, keep it with :meth:`save` / :meth:`load`, carry it out
    with :meth:`apply`. Equality compares content. :meth:`operations` lists what apply performs,
    in order.
    """

    key_type: str
    creates: list[PlannedOp] = field(default_factory=list)
    updates: list[PlannedOp] = field(default_factory=list)
    deletes: list[PlannedOp] = field(default_factory=list)
    unchanged: list[ListingRef] = field(default_factory=list)
    invalid: list[InvalidRow] = field(default_factory=list)
    kept: list[ListingRef] = field(default_factory=list)
    skipped_create: list[PlannedOp] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fingerprint: str = ""
    remote_count: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""

    # -- reading

    @property
    def is_empty(self) -> bool:
        """True when the plan creates, updates and deletes nothing."""
        return not (self.creates or self.updates or self.deletes)

    def operations(self) -> list[PlannedOp]:
        """Every operation apply performs, in a stable order: creates, updates, then deletes."""
        return [*self.creates, *self.updates, *self.deletes]

    def counts(self) -> dict[str, int]:
        """The number of listings in each class, by name."""
        return {
            "create": len(self.creates),
            "update": len(self.updates),
            "delete": len(self.deletes),
            "unchanged": len(self.unchanged),
            "invalid": len(self.invalid),
            "kept": len(self.kept),
            "skipped_create": len(self.skipped_create),
        }

    def summary(self) -> str:
        """One line: ``"12 create, 40 update, 3 delete, 900 unchanged, 2 invalid"``.

        Kept and skipped creates are added when there are any.
        """
        counts = self.counts()
        parts = [f"{counts[name]} {name}" for name in ("create", "update", "delete")]
        parts += [f"{counts['unchanged']} unchanged", f"{counts['invalid']} invalid"]
        if counts["kept"]:
            parts.append(f"{counts['kept']} kept")
        if counts["skipped_create"]:
            parts.append(f"{counts['skipped_create']} skipped create")
        return ", ".join(parts)

    def __str__(self) -> str:
        lines = [f"SyncPlan by {self.key_type}: {self.summary()}"]
        lines += [f"refused: {text}" for text in self.refusals]
        lines += [f"note: {text}" for text in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<SyncPlan {self.key_type}: {self.summary()}>"

    def _repr_html_(self) -> str:
        return plan_view.render_html(self)

    # -- doing

    def apply(self, client: Client, serial: str, **options: Any) -> ApplyReport:
        """Perform exactly this plan on the chatbot ``serial``; returns an ApplyReport.

        The same as :func:`estatebot.listings.apply.apply_plan` (``journal``, ``backup``,
        ``concurrency``, ``force``, ... are passed on as ``options``).
        """
        from estatebot.listings.apply import apply_plan  # apply imports this module

        return apply_plan(self, client, serial, **options)

    # -- exporting

    def to_frame(self, *, wide: bool = False, include_unchanged: bool = False) -> pd.DataFrame:
        """The plan as a table, one row per operation (see :func:`plan_view.to_frame`)."""
        return plan_view.to_frame(self, wide=wide, include_unchanged=include_unchanged)

    def to_excel(self, path: str | PathLike[str]) -> Path:
        """Write a workbook with a sheet per action, changed cells highlighted; returns the path."""
        return plan_view.to_excel(self, path)

    def to_json(self) -> dict[str, Any]:
        """The whole plan as a JSON-safe dict (the content of :meth:`save`)."""
        return {
            "format": PLAN_FORMAT,
            "version": PLAN_FORMAT_VERSION,
            "created_at": self.created_at,
            "fingerprint": self.fingerprint,
            "key_type": self.key_type,
            "remote_count": self.remote_count,
            "options": self.options,
            "refusals": self.refusals,
            "notes": self.notes,
            "creates": [_op_json(op) for op in self.creates],
            "updates": [_op_json(op) for op in self.updates],
            "deletes": [_op_json(op) for op in self.deletes],
            "skipped_create": [_op_json(op) for op in self.skipped_create],
            "unchanged": [[r.key, r.row, r.id] for r in self.unchanged],
            "kept": [[r.key, r.row, r.id] for r in self.kept],
            "invalid": [
                {"row": r.row, "key": r.key, "id": r.id, "reasons": list(r.reasons)}
                for r in self.invalid
            ],
        }

    def save(self, path: str | PathLike[str]) -> Path:
        """Write the plan as JSON (format version, fingerprint, options, every op)."""
        target = Path(path)
        text = json.dumps(self.to_json(), ensure_ascii=False, indent=1, allow_nan=False)
        target.write_text(text, encoding="utf-8")
        return target

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SyncPlan:
        """A plan from :meth:`to_json`'s dict; raises PlanError on another format or version."""
        if data.get("format") != PLAN_FORMAT:
            raise PlanError("not a saved sync plan", value=data.get("format"))
        if data.get("version") != PLAN_FORMAT_VERSION:
            raise PlanError(
                f"unsupported sync plan version (this library reads {PLAN_FORMAT_VERSION}); "
                "make the plan again",
                value=data.get("version"),
            )
        return cls(
            key_type=data["key_type"],
            creates=[_op_from_json(op) for op in data["creates"]],
            updates=[_op_from_json(op) for op in data["updates"]],
            deletes=[_op_from_json(op) for op in data["deletes"]],
            skipped_create=[_op_from_json(op) for op in data["skipped_create"]],
            unchanged=[ListingRef(*item) for item in data["unchanged"]],
            kept=[ListingRef(*item) for item in data["kept"]],
            invalid=[
                InvalidRow(r["row"], r["key"], r["id"], tuple(r["reasons"]))
                for r in data["invalid"]
            ],
            refusals=list(data["refusals"]),
            notes=list(data["notes"]),
            fingerprint=data["fingerprint"],
            remote_count=data["remote_count"],
            options=dict(data["options"]),
            created_at=data["created_at"],
        )

    @classmethod
    def load(cls, path: str | PathLike[str]) -> SyncPlan:
        """Read a plan written by :meth:`save`."""
        return cls.from_json(json.loads(Path(path).read_text(encoding="utf-8")))


def _op_json(op: PlannedOp) -> dict[str, Any]:
    return {
        "action": op.action,
        "key": op.key,
        "key_type": op.key_type,
        "row": op.row,
        "id": op.id,
        "body": op.body,
        "before": op.before,
        "before_hash": op.before_hash,
        "changes": [[c.field, c.before, c.after] for c in op.changes],
        "reason": op.reason,
    }


def _op_from_json(data: Mapping[str, Any]) -> PlannedOp:
    return PlannedOp(
        action=data["action"],
        key=data["key"],
        key_type=data["key_type"],
        row=data["row"],
        id=data["id"],
        body=data["body"],
        before=data["before"],
        before_hash=data["before_hash"],
        changes=tuple(Change(*item) for item in data["changes"]),
        reason=data["reason"],
    )
