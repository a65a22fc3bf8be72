"""The sync plan as an artifact: its items, counts and summary, and its JSON form.

:class:`PlanArtifact` is everything a plan holds. Planning (:mod:`.sync_planner`,
:mod:`.cleanup_planner`) fills it in, :meth:`~PlanArtifact.save` / :meth:`~PlanArtifact.load`
keep it, the views (:mod:`estatebot.listings.sync.views`) draw it and the runner
(:mod:`estatebot.listings.sync.apply`) reads it. This module holds the data and its persistence
only: no planning rules, no views, no runner. The public
:class:`~estatebot.listings.sync.sync_plan.SyncPlan` adds the views and ``apply()`` on top.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from os import PathLike
from pathlib import Path
from typing import Any, Self

from estatebot._summary import Summary
from estatebot.errors import PlanError
from estatebot.listings.sync.plan.json_file import JsonFileError, read_json_file
from estatebot.listings.sync.plan.operations import (
    Change,
    HeldBack,
    InvalidRow,
    ListingRef,
    PlannedOp,
    RefColumns,
)

__all__ = ["PLAN_FORMAT", "PLAN_FORMAT_VERSION", "Confirmed", "PlanArtifact"]


PLAN_FORMAT = "estatebot-sync-plan"
#: Version 4: sealed (a digest over every operation, and one over the whole plan), with held-back
#: values; listing hashes and fingerprints of
#: :data:`estatebot.listings.sync.values.hashing.HASH_VERSION` 3 (without the fields List never
#: returns).
PLAN_FORMAT_VERSION = 4


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Confirmed:
    """What a planner was told to allow: the fraction of the remote listings a plan may delete or
    re-identify unconfirmed, and the exact counts confirmed beyond it (None: none)."""

    max_delete_fraction: float = 0.2
    deletes: int | None = None
    identities: int | None = None


@dataclass
class PlanArtifact:
    """What a plan holds: what would be done, and why (users hold it as a ``SyncPlan``).

    Print it for the summary, keep it with :meth:`save` / :meth:`load`. Equality compares
    content. :meth:`operations` lists what apply performs, in order.
    """

    key_type: str
    creates: list[PlannedOp] = field(default_factory=list)
    updates: list[PlannedOp] = field(default_factory=list)
    deletes: list[PlannedOp] = field(default_factory=list)
    unchanged: list[ListingRef] = field(default_factory=list)
    invalid: list[InvalidRow] = field(default_factory=list)
    kept: list[ListingRef] = field(default_factory=list)
    skipped_create: list[PlannedOp] = field(default_factory=list)
    held_back: list[HeldBack] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fingerprint: str = ""
    remote_count: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    #: A cleanup's kept listings' days on market, beside :attr:`kept`, for :meth:`plot`. Kept in
    #: memory only: a plan read back plots with ``remote=``.
    kept_days_on_market: list[int | None] = field(default_factory=list, compare=False, repr=False)
    #: The guards as the planner passed them (its fraction and the counts it was told to
    #: confirm), for an apply in the same process. Never saved: a plan read from a file proves
    #: nothing about how it was made, so its apply is guarded by the apply's own options.
    confirmed: Confirmed | None = field(default=None, compare=False, repr=False)

    # -- the listings left alone, held as columns

    def defer_unchanged(self, later: RefColumns) -> None:
        """Hold the unchanged listings as the planner's columns: :attr:`unchanged` makes them
        into its list on first read (the counts and the summary do not need it).

        Args:
            later: The unchanged listings, as columns.
        """
        self.__dict__["_unchanged"] = later

    def field_values(self) -> dict[str, Any]:
        """Every field's value by name, the unchanged listings as held (not made here).

        Returns:
            A new dict, by field name: what a copy of this plan is made from.
        """
        values = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "unchanged"}
        values["unchanged"] = self.__dict__["_unchanged"]
        return values

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
            "unchanged": len(self.__dict__["_unchanged"]),  # without making a held list
            "invalid": len(self.invalid),
            "kept": len(self.kept),
            "skipped_create": len(self.skipped_create),
            "held_back": len(self.held_back),
        }

    def summary(self) -> Summary:
        """One line: ``"12 create, 40 update, 3 delete, 900 unchanged, 2 invalid"``.

        Kept and skipped creates are added when there are any; the figures are in ``.counts``.
        """
        counts = self.counts()
        parts = [f"{counts[name]} {name}" for name in ("create", "update", "delete")]
        parts += [f"{counts['unchanged']} unchanged", f"{counts['invalid']} invalid"]
        if counts["kept"]:
            parts.append(f"{counts['kept']} kept")
        if counts["skipped_create"]:
            parts.append(f"{counts['skipped_create']} skipped create")
        if counts["held_back"]:
            parts.append(f"{counts['held_back']} held back")
        return Summary(", ".join(parts), counts)

    def __str__(self) -> str:
        lines = [f"{type(self).__name__} by {self.key_type}: {self.summary()}"]
        lines += [f"refused: {text}" for text in self.refusals]
        lines += [f"note: {text}" for text in self.notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.key_type}: {self.summary()}>"

    def to_json(self) -> dict[str, Any]:
        """The whole plan as a JSON-safe dict (the content of :meth:`save`), sealed.

        Every operation carries the digest of its own content, and ``digest`` seals the whole:
        :meth:`from_json` refuses a plan changed since, naming the first altered operation.
        A number JSON cannot hold (an infinite price) raises PlanError naming where it is.
        """
        content = self._content()
        try:
            digest = _digest(content)
        except ValueError:
            found = _non_finite(content)
            if found is None:
                raise
            where, number = found
            raise PlanError(
                f"cannot save the plan: {where} holds {number}, a number JSON cannot hold",
                value=number,
            ) from None
        return {**content, "digest": digest}

    def _content(self) -> dict[str, Any]:
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
            "held_back": [
                [h.row, h.key, h.id, h.field, h.column, h.value, h.message, h.whole]
                for h in self.held_back
            ],
        }

    def save(self, path: str | PathLike[str]) -> Path:
        """Write the plan as JSON (format version, fingerprint, options, every op).

        Raises PlanError, writing nothing, when the plan holds a number JSON cannot (an
        infinite price): it names the operation, its row, the field and the value.
        """
        target = Path(path)
        text = json.dumps(self.to_json(), ensure_ascii=False, indent=1, allow_nan=False)
        target.write_text(text, encoding="utf-8")
        return target

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        """A plan from :meth:`to_json`'s dict.

        Raises PlanError on another format or version, and on a plan changed since it was made
        (an operation, a body, an option: a plan is changed by planning again, never by hand).
        """
        if data.get("format") != PLAN_FORMAT:
            raise PlanError("not a saved sync plan", value=data.get("format"))
        if data.get("version") != PLAN_FORMAT_VERSION:
            raise PlanError(
                f"unsupported sync plan version (this library reads {PLAN_FORMAT_VERSION}); "
                "make the plan again",
                value=data.get("version"),
            )
        _check_seal(data)
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
            held_back=[HeldBack(*item) for item in data.get("held_back", [])],
            refusals=list(data["refusals"]),
            notes=list(data["notes"]),
            fingerprint=data["fingerprint"],
            remote_count=data["remote_count"],
            options=dict(data["options"]),
            created_at=data["created_at"],
        )

    @classmethod
    def load(cls, path: str | PathLike[str]) -> Self:
        """Read a plan written by :meth:`save`.

        A file that holds no plan raises :class:`~.json_file.JsonFileError` (a PlanError) naming
        the file and what is wrong: missing, not text, not JSON (with the line and column),
        nested deeper than any plan (refused before it is parsed), another format, a plan
        changed since it was made.
        """
        target = Path(path)
        try:
            data = read_json_file(target, what="a saved plan", parse_constant=_refuse_constant)
            if not isinstance(data, Mapping):
                raise JsonFileError(target, f"not a saved plan: a JSON {type(data).__name__}")
            return cls.from_json(data)
        except JsonFileError:
            raise
        except PlanError as error:
            # Sealed, another version, a constant JSON has not: the same words, and the file.
            named = JsonFileError(target, str(error))
            named.row, named.column, named.value = error.row, error.column, error.value
            raise named from None
        except (LookupError, TypeError, ValueError, AttributeError) as error:
            # A field missing or of another type: the file was written by something else.
            problem = f"not a saved plan ({type(error).__name__}: {error})"
            raise JsonFileError(target, problem) from None


class _MadeOnRead:
    """:attr:`PlanArtifact.unchanged`: its list, made on first read where the planner left
    :class:`~.operations.RefColumns` (see :meth:`PlanArtifact.defer_unchanged`)."""

    def __get__(self, obj: PlanArtifact | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__["_unchanged"]
        if isinstance(value, RefColumns):
            value = obj.__dict__["_unchanged"] = value.refs()
        return value

    def __set__(self, obj: PlanArtifact, value: Any) -> None:
        obj.__dict__["_unchanged"] = value


# Installed over the dataclass field (its __init__ sets it through this): reads and writes of
# ``unchanged`` keep their meaning, and a plan's hundred thousand unchanged listings become
# objects only when read.
setattr(PlanArtifact, "unchanged", _MadeOnRead())  # noqa: B010


def _refuse_constant(name: str) -> Any:
    # Python's json reads NaN and Infinity, which JSON has not and save never writes.
    raise PlanError(f"not a saved sync plan: it holds {name}, which JSON has not", value=name)


def _non_finite(value: Any) -> tuple[str, float] | None:
    """The first infinite or NaN number in ``value`` (a JSON-like tree), with where it is."""
    if isinstance(value, float) and not math.isfinite(value):
        return "", value
    items: list[tuple[str, Any]] = []
    if isinstance(value, Mapping):
        items = [(str(key), item) for key, item in value.items()]
    elif isinstance(value, list | tuple):
        items = [(str(position), item) for position, item in enumerate(value)]
    for where, item in items:
        found = _non_finite(item)
        if found is not None:
            inner, number = found
            return (f"{where}.{inner}" if inner else where), number
    return None


def _check_finite(op: PlannedOp) -> None:
    """Raise PlanError naming the operation and the field when it holds a number JSON cannot."""
    fields: list[tuple[str, Any]] = [*(op.body or {}).items(), *(op.before or {}).items()]
    fields += [(c.field, [c.before, c.after]) for c in op.changes]
    for name, value in fields:
        found = _non_finite(value)
        if found is not None:
            raise PlanError(
                f"cannot save the plan: the {op.action} of {op.key_type} {op.key} holds "
                f"{name} = {found[1]}, a number JSON cannot hold; a price, area or coordinate "
                "must be a finite number: correct it in the sheet and plan again",
                row=op.row,
                column=name,
                value=found[1],
            )


def _digest(content: Any) -> str:
    """SHA-256 of canonical JSON (sorted keys, no spaces): the same content, the same digest."""
    text = json.dumps(
        content, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_OP_LISTS = ("creates", "updates", "deletes", "skipped_create")


def _check_seal(data: Mapping[str, Any]) -> None:
    """Raise PlanError when a saved plan differs from what was sealed, naming where."""
    if not isinstance(data.get("digest"), str):
        raise PlanError("the plan has no seal: make the plan again (never by hand)")
    for name in _OP_LISTS:
        for position, op in enumerate(data.get(name) or []):
            unsealed = {k: v for k, v in op.items() if k != "digest"}
            if op.get("digest") != _digest(unsealed):
                where = f"row {op.get('row')}" if op.get("row") is not None else f"#{position + 1}"
                raise PlanError(
                    f"the plan was changed since it was made: the {op.get('action')} of "
                    f"{op.get('key_type')} {op.get('key')} ({where}) is not what was planned; "
                    "a plan is changed by planning again, never by hand",
                    row=op.get("row"),
                    value=op.get("key"),
                )
    content = {k: v for k, v in data.items() if k != "digest"}
    if data["digest"] != _digest(content):
        raise PlanError(
            "the plan was changed since it was made: its options, counts or listings left alone "
            "are not what was planned; a plan is changed by planning again, never by hand"
        )


def _op_json(op: PlannedOp) -> dict[str, Any]:
    item = _op_content(op)
    try:
        digest = _digest(item)
    except ValueError:
        _check_finite(op)  # names the field when a number is what JSON refused
        raise
    return {**item, "digest": digest}


def _op_content(op: PlannedOp) -> dict[str, Any]:
    item: dict[str, Any] = {
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
    if op.unknown:  # only when set, so plans saved before it keep their seal
        item["unknown"] = list(op.unknown)
    return item


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
        unknown=tuple(data.get("unknown", ())),
    )
