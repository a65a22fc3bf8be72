"""Undo a run: a plan that reverses exactly what a run did, from its plan, journal and backup.

The run's plan says what it meant to do, its journal what the service confirmed (an operation
left unconfirmed by a crash is judged by what the service shows), its backup how each listing it
updated or deleted was just before. From these and a fresh pull, :func:`plan_undo` plans:

* each listing the run **created** is deleted, by its ID (key type NewOaks);
* each listing the run **updated** gets back the fields it changed (``op.changes``, key by key for
  ExtensionColumn; ``AreaUnit`` and ``Location`` where their value before the run is known). The
  Update body is built by the sync's one rule (:mod:`~estatebot.listings.sync.plan.update_base`):
  the listing as the service holds it now, plus only those fields set back;
* each listing the run **deleted** is created again from its backup (its List record fills what
  the typed row lost, the record of values sent its unit); a unit nobody knows is never guessed:
  that create is invalid, naming ``AreaUnit``, unless ``defaults`` give it.

A listing changed on the service after the run is **not overwritten**: an updated listing whose
changed fields no longer hold the run's values, a created one that no longer holds what the run
created, a deleted one that exists again with other values. It is left out of the operations and
listed in ``plan.invalid`` (field, the run's value, the value now) with a refusal naming it. A
listing already as it was before the run is left alone (``unchanged``), so undoing twice does
nothing the second time.

The result is an ordinary plan: shown, sealed, applied by
:func:`~estatebot.listings.sync.apply.phases.apply_plan` with its stale check, journal and backup,
and resumed like any other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from estatebot.api.models import KeyType, ListingInput, field_problems, to_wire
from estatebot.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.remote.pull import PullResult, pull_result
from estatebot.listings.remote.sent_record import SentValues, open_known, service_address
from estatebot.listings.sync.apply.restore import body_of
from estatebot.listings.sync.apply.run_record import RunRecord, check_undo_defaults, read_run
from estatebot.listings.sync.apply.stale_check import ROUND_TRIP_FIELDS, Remote
from estatebot.listings.sync.plan.artifact import Confirmed, PlanArtifact
from estatebot.listings.sync.plan.classify import planned_at
from estatebot.listings.sync.plan.operations import (
    Change,
    HeldBack,
    InvalidRow,
    ListingRef,
    PlannedOp,
)
from estatebot.listings.sync.plan.update_base import complete_bases
from estatebot.listings.sync.values.compare import canonical_value, key_values
from estatebot.listings.sync.values.hashing import frame_fingerprint, frame_hashes
from estatebot.listings.sync.values.payloads import FIELDS, Columns, build_bodies, json_columns
from estatebot.listings.sync.values.tidy import clean_frame, clean_value

if TYPE_CHECKING:
    from estatebot.api.client import Client

__all__ = ["UNKNOWN_UNIT", "plan_undo", "undo_plan"]

NEW_OAKS = KeyType.NEW_OAKS.value
_UNLISTED = schema.UNLISTED_COLUMNS
#: Keys named in a refusal before "and N more".
_SHOWN = 20

#: Why a listing the run deleted, whose unit nobody knows, is not created again.
UNKNOWN_UNIT = (
    "AreaUnit: unknown (the service never shows it, and neither the backup nor the record of "
    "values sent has it); undo never guesses a unit: give it with "
    "defaults={'AreaUnit': 'Square Feet'} (or 'Square Meters')"
)


# --------------------------------------------------------------------------- planning


def plan_undo(
    client: Client,
    serial: str,
    run: str | PathLike[str] | PlanArtifact,
    *,
    journal: str | PathLike[str] | None = None,
    backup: str | PathLike[str] | None = None,
    defaults: Mapping[str, str] | None = None,
    sent_values: str | Path | bool | None = None,
    concurrency: int = 8,
    progress: bool | None = None,
) -> PlanArtifact:
    """The plan that reverses a run on the chatbot `serial`; apply it like any plan.

    `run` is a run folder of the command line (`estatebot-runs/sync-...`: its plan, journal
    and backup), or the plan the run applied (a saved file or the plan object) with the
    `journal` and `backup` it was applied with. The current listings are pulled; listings
    the run created are deleted, those it updated get back the fields it changed, those it
    deleted are created again from the backup (`defaults={"AreaUnit": ...}` gives a unit
    nobody knows; nothing is guessed). A listing changed on the service since the run is left
    as it is and listed in `plan.invalid` and `plan.refusals`. A listing already as it was
    before the run is left alone, so undoing twice does nothing the second time.

    Args:
        client: The `Client` that pulls the current listings.
        serial: The chatbot the run changed.
        run: A run folder of the command line, or the plan the run applied (a saved plan
            file or the plan object).
        journal: The journal the run was applied with (None: the one in the run folder).
        backup: The backup the run wrote (None: the one in the run folder, if any).
        defaults: The values of `AreaUnit` and `Location` for a listing created again whose
            own are unknown (`{"AreaUnit": "Square Feet"}`); only those two fields are taken.
        sent_values: The record of the values last sent: None its default place, a path, or
            False for none.
        concurrency: Threads fetching the pages of the pull (at least 1; default 8).
        progress: Show a progress bar of the pull (None: as `ESTATEBOT_PROGRESS` says, else
            on outside CI).

    Returns:
        The undo plan, to show, save and apply like any plan (`estatebot.plan_undo` hands it
            out as a `SyncPlan`).

    Raises:
        PlanError: When `run` is neither a run folder nor a saved plan, the journal is
            missing, or it belongs to another plan, chatbot or service; when the backup
            cannot be read, or the record of values sent cannot be opened.
        PullError: When the pull of the current listings fails.
        ValueError: When `defaults` names a field other than `AreaUnit` and `Location`, or a
            unit that is not one of the service's; when `concurrency` is below 1.
    """
    fallback = check_undo_defaults(defaults)
    done = read_run(run, journal=journal, backup=backup)
    service = service_address(client)
    _check_target(done, serial, service)
    pulled = pull_result(
        client, serial, concurrency=concurrency, progress=progress, sent_values=sent_values
    )
    record = open_known(sent_values, service=service, serial=serial)
    try:
        return undo_plan(done, pulled, defaults=fallback, sent=record)
    finally:
        if record is not None:
            record.close()


def _check_target(done: RunRecord, serial: str, service: str | None) -> None:
    header = done.header
    if header is None:
        return
    if header.serial != serial:
        raise PlanError(
            f"{done.name} changed chatbot {header.serial}, not {serial}: undo it there",
            column="serial",
            value=header.serial,
        )
    if service is not None and header.service is not None and header.service != service:
        raise PlanError(
            f"{done.name} changed the listings of the service at {header.service}, not "
            f"{service}: undo it there",
            column="service",
            value=header.service,
        )


def undo_plan(
    done: RunRecord,
    pulled: PullResult,
    *,
    defaults: Mapping[str, str] | None = None,
    sent: SentValues | None = None,
) -> PlanArtifact:
    """The undo of ``done`` against the listings ``pulled`` now (see the module's documentation).

    ``sent`` is the record of values sent, read for the unit of a listing created again.
    """
    undo = _Undo(done, Remote.of(pulled), pulled.frame.attrs.get("unreadable") or {})
    undo.defaults = dict(defaults or {})
    undo.sent = sent
    for op in done.plan.creates:
        undo.created(op)
    for op in done.plan.updates:
        undo.updated(op)
    for op in done.plan.deletes:
        undo.deleted(op)
    return undo.finish()


@dataclass(frozen=True)
class _Revert:
    """One value the run changed: a field (an ExtensionColumn ``key``), before and after."""

    field: str
    key: str | None
    before: Any
    after: Any

    @property
    def label(self) -> str:
        return f"{self.field} {self.key}" if self.key is not None else self.field

    def same(self, a: Any, b: Any) -> bool:
        if self.key is not None:
            return _text(a) == _text(b)
        return bool(canonical_value(self.field, a) == canonical_value(self.field, b))


class _Undo:
    """The undo plan as it is made: one method per kind of operation the run did."""

    def __init__(
        self, done: RunRecord, remote: Remote, unreadable: Mapping[int, Mapping[str, str]]
    ) -> None:
        self.done, self.remote, self.unreadable = done, remote, unreadable
        self.clean = clean_frame(remote.frame).reset_index(drop=True)
        self.values = json_columns(self.clean, schema.COLUMNS)
        self.defaults: dict[str, str] = {}
        self.sent: SentValues | None = None
        backup = done.backup
        self.backed_at = {k: i for i, k in enumerate(key_values(backup["ID"])) if k is not None}
        self.plan = PlanArtifact(
            key_type=NEW_OAKS,
            options={"undo": done.name, "defaults": {}},
            created_at=planned_at(),
            remote_count=len(self.clean),
        )
        self.updates: list[tuple[PlannedOp, int, list[_Revert]]] = []
        self.deletes: list[int] = []  # the positions now of the listings the run created
        self.changed_since: list[str] = []
        self.already = 0
        self.defaulted = 0

    # -- the listing as it is now, and as the backup holds it

    def now(self, position: int) -> dict[str, Any]:
        return {name: self.values[name][position] for name in schema.COLUMNS}

    def find(self, key_type: str, key: object) -> int | None:
        found = self.remote.positions(key_type, str(key)) if key not in (None, "") else []
        return found[0] if len(found) == 1 else None

    def backed_up(self, ident: int | None) -> tuple[dict[str, Any], Mapping[str, Any] | None]:
        """The backed-up row of listing ``ident`` and its List record ({} and None: none)."""
        at = self.backed_at.get(str(ident)) if ident is not None else None
        if at is None:
            return {}, None
        backup = self.done.backup
        raw = self.done.raws[at] if at < len(self.done.raws) else None
        return {name: backup[name].iat[at] for name in schema.COLUMNS}, raw

    def refuse(self, op: PlannedOp, ident: int | None, reasons: Sequence[str]) -> None:
        key = _named(op)
        self.plan.invalid.append(InvalidRow(None, key, ident, tuple(reasons)))
        self.changed_since.append(key)

    # -- the run's operations, one kind each

    def created(self, op: PlannedOp) -> None:
        """A listing the run created: deleted, unless it changed since (or is gone)."""
        record = self.done.record(op)
        if record is None:
            return
        if record.id is not None:
            at = self.find(NEW_OAKS, record.id)
        else:  # unconfirmed (or confirmed without an ID): made, if its key is there
            at = self.find(op.key_type, op.key)
        if at is None:
            self.already += 1
            self.plan.unchanged.append(ListingRef(_named(op), None, record.id))
            return
        now = self.now(at)
        differs = [
            f"{name}: changed on the service after the run (the run created it with "
            f"{_shown((op.body or {}).get(name))}, it is now {_shown(now.get(name))}); not "
            "deleted, so the later edit stays"
            for name in ROUND_TRIP_FIELDS
            if canonical_value(name, (op.body or {}).get(name)) != canonical_value(name, now[name])
        ]
        if differs:
            self.refuse(op, now["ID"], differs)
        else:
            self.deletes.append(at)

    def updated(self, op: PlannedOp) -> None:
        """A listing the run updated: the fields it changed set back, unless changed since."""
        if self.done.record(op) is None:
            return
        at = self.find(NEW_OAKS, op.id) if op.id is not None else self.find(op.key_type, op.key)
        if at is None:
            reason = (
                "no longer on the service (deleted after the run): its fields are not put back "
                "(a restore of the run's backup creates it again)"
            )
            self.refuse(op, op.id, [reason])
            return
        now = self.now(at)
        revert: list[_Revert] = []
        conflicts: list[str] = []
        for item in self._reverts(op):
            ext = now["ExtensionColumn"]
            current = ext.get(item.key) if item.key is not None else now[item.field]
            if item.field in _UNLISTED and current in (None, ""):
                revert.append(item)  # nobody knows its value now: set back what the run changed
            elif item.same(current, item.after):
                if not item.same(item.before, item.after):
                    revert.append(item)
            elif not item.same(current, item.before):
                conflicts.append(
                    f"{item.label}: changed on the service after the run (the run set "
                    f"{_shown(item.after)}, it is now {_shown(current)}); not undone, so the "
                    "later edit stays"
                )
        if conflicts:
            self.refuse(op, op.id, conflicts)
        elif not revert:
            self.already += 1
            self.plan.unchanged.append(ListingRef(_named(op), None, op.id))
        else:
            self.updates.append((op, at, revert))

    def _reverts(self, op: PlannedOp) -> list[_Revert]:
        """What ``op`` changed, each value with the one it replaced (from the backup, where it
        holds the listing: the truth at apply time; else from the plan)."""
        row, raw = self.backed_up(op.id)
        was = _clean_body(body_of(row, raw)[0]) if row else None
        items: list[_Revert] = []
        for change in op.changes:
            if change.field == "ExtensionColumn":
                before = was["ExtensionColumn"] if was is not None else dict(change.before)
                items += [
                    _Revert(change.field, k, before.get(k), change.after.get(k))
                    for k in sorted(set(change.before) | set(change.after))
                ]
            else:
                before = was[change.field] if was is not None else change.before
                items.append(_Revert(change.field, None, before, change.after))
        # The fields List never shows are no change in the plan (their value then was unknown
        # to it), but an update sends them: set back where the value before is known.
        for name in (n for n in _UNLISTED if n not in {c.field for c in op.changes}):
            before = (was or {}).get(name) or (op.before or {}).get(name)
            after = (op.body or {}).get(name)
            if before not in (None, "") and after not in (None, ""):
                item = _Revert(name, None, before, after)
                if not item.same(before, after):
                    items.append(item)
        return items

    def deleted(self, op: PlannedOp) -> None:
        """A listing the run deleted: created again from its backup, unless it is back."""
        record = self.done.record(op)
        if record is None:
            return
        row, raw = self.backed_up(op.id)
        if not row:
            row, raw = dict(op.before or {}), None
        mls, url = _key_of(row.get("MLSNumber")), _key_of(row.get("Url"))
        at = self.find(KeyType.MLS_NUMBER.value, mls)
        at = at if at is not None else self.find(KeyType.URL.value, url)
        if at is not None and not record.done and self.values["ID"][at] == op.id:
            return  # an unconfirmed delete that never happened: the listing is still there
        body, _ = body_of(row, raw, self._recalled(mls, url, op.id))
        if at is not None:
            self._back_again(op, body, at)
            return
        if "AreaUnit" not in body and "AreaUnit" in self.defaults:
            self.defaulted += 1
        for name, value in self.defaults.items():
            body.setdefault(name, value)
        key, key_type = (mls, KeyType.MLS_NUMBER.value) if mls else (url, KeyType.URL.value)
        key = key or op.key
        if "AreaUnit" not in body:
            self.plan.invalid.append(InvalidRow(None, key, None, (UNKNOWN_UNIT,)))
            return
        if any(planned.key == key for planned in self.plan.creates):
            return  # the backup holds the listing twice: created once
        try:
            valid = ListingInput.model_validate({**body, "SerialNumber": "serial"})
        except ValidationError as error:
            reasons = tuple(f"{f}: {message}" for f, message, _ in field_problems(error))
            self.plan.invalid.append(InvalidRow(None, key, None, reasons))
            return
        wire = to_wire(valid)
        wire.pop("SerialNumber", None)
        reason = "deleted by the run: created again from its backup"
        self.plan.creates.append(
            PlannedOp("create", key, key_type, None, None, wire, None, None, (), reason)
        )

    def _back_again(self, op: PlannedOp, body: Mapping[str, Any], at: int) -> None:
        """A listing the run deleted that exists again: left alone, listed when it differs."""
        now = self.now(at)
        differs = [
            f"{name}: it was {_shown(body.get(name))} when the run deleted it, it is now "
            f"{_shown(now[name])}"
            for name in ROUND_TRIP_FIELDS
            if canonical_value(name, body.get(name)) != canonical_value(name, now[name])
        ]
        if not differs:
            self.already += 1
            self.plan.unchanged.append(ListingRef(_named(op), None, now["ID"]))
            return
        first = (
            f"exists again on the service (ID {now['ID']}) since the run deleted it: not "
            "created again"
        )
        self.refuse(op, now["ID"], [first, *differs])

    def _recalled(self, mls: str | None, url: str | None, ident: int | None) -> dict[str, Any]:
        """The values last sent to a deleted listing (its unit), by any of its keys."""
        if self.sent is None:
            return {}
        keys = ((KeyType.MLS_NUMBER.value, mls), (KeyType.URL.value, url), (NEW_OAKS, ident))
        for kind, key in keys:
            found = self.sent.recall(kind, str(key)) if key is not None else {}
            if found:
                return found
        return {}

    # -- the plan

    def finish(self) -> PlanArtifact:
        plan = self.plan
        self._plan_updates()
        self._plan_deletes()
        plan.fingerprint = frame_fingerprint(self.clean, is_clean=True)
        plan.options["defaults"] = dict(self.defaults)
        if self.changed_since:
            count = len(self.changed_since)
            shown = ", ".join(self.changed_since[:_SHOWN])
            more = f" and {count - _SHOWN} more" if count > _SHOWN else ""
            plan.refusals.append(
                f"{_listings(count)} changed on the service after the "
                f"run {'is' if count == 1 else 'are'} not undone, so no later edit is "
                f"overwritten: {shown}{more} (its invalid row names each field, the run's value "
                "and the value now)"
            )
        if self.already:
            are = "is" if self.already == 1 else "are"
            plan.notes.append(
                f"{_listings(self.already)} the run touched {are} already as before it: left alone"
            )
        if self.defaulted:
            unit = {"AreaUnit": self.defaults["AreaUnit"]}
            plan.notes.append(
                f"{_listings(self.defaulted)} created again, whose unit nobody knew, take the "
                f"AreaUnit given by defaults={unit}"
            )
        # An undo deletes what the run created and puts back identities it changed, all of it
        # shown before it is applied: the run's own guards were the guards of these listings.
        plan.confirmed = Confirmed(max_delete_fraction=1.0)
        return plan

    def _plan_updates(self) -> None:
        """The Update bodies: the listings as they are now with the changed fields set back,
        by the sync's one rule (the base completed, held back where it cannot be sent)."""
        if not self.updates:
            return
        m = len(self.updates)
        rows = self.clean.take([at for _, at, _ in self.updates])
        now = json_columns(rows, schema.COLUMNS)
        hashes = frame_hashes(rows, is_clean=True)
        data: Columns = {name: list(now[name]) for name in FIELDS}
        stated = {name: [False] * m for name in FIELDS}
        changes = [_set_back(data, stated, i, r) for i, (_, _, r) in enumerate(self.updates)]
        for name, value in self.defaults.items():
            for i in range(m):
                if data[name][i] in (None, ""):
                    data[name][i], stated[name][i] = value, True
        ids: list[int | None] = now["ID"]
        data["Key"], data["KeyType"] = [str(i) for i in ids], [NEW_OAKS] * m
        withheld = complete_bases(data, ids, stated, self.unreadable)
        bodies = build_bodies(data, {}, m, update=True)
        for i, ((op, at, _), (body, reasons)) in enumerate(zip(self.updates, bodies, strict=True)):
            ident = ids[i]
            if i in withheld:
                self.plan.held_back.extend(
                    HeldBack(None, _named(op), ident, h.field, None, h.value, h.message, True)
                    for h in withheld[i]
                )
            elif body is None:
                self.plan.invalid.append(InvalidRow(None, _named(op), ident, tuple(reasons)))
            else:
                unknown = tuple(n for n in _UNLISTED if body.get(n) in (None, ""))
                count = len(changes[i])
                self.plan.updates.append(
                    PlannedOp(
                        "update", str(ident), NEW_OAKS, None, ident, body, self.now(at),
                        hashes[i], tuple(changes[i]),
                        f"updated by the run: {count} field{'s' if count != 1 else ''} set back",
                        unknown,
                    )
                )  # fmt: skip

    def _plan_deletes(self) -> None:
        if not self.deletes:
            return
        hashes = frame_hashes(self.clean.take(self.deletes), is_clean=True)
        for at, before_hash in zip(self.deletes, hashes, strict=True):
            before = self.now(at)
            ident = before["ID"]
            self.plan.deletes.append(
                PlannedOp(
                    "delete", str(ident), NEW_OAKS, None, ident, None, before, before_hash, (),
                    "created by the run",
                )
            )  # fmt: skip
        self.plan.deletes.sort(key=lambda op: op.id or 0)


def _set_back(
    data: Columns, stated: dict[str, list[bool]], i: int, reverts: Sequence[_Revert]
) -> list[Change]:
    """Lay the values before the run over update ``i`` of ``data``; the changes this makes."""
    changes: list[Change] = []
    now_ext: dict[str, str] = data["ExtensionColumn"][i]
    ext = dict(now_ext)
    for item in reverts:
        stated[item.field][i] = True
        if item.key is not None:
            if item.before is None:
                ext.pop(item.key, None)
            else:
                ext[item.key] = str(item.before)
            continue
        value = clean_value(item.field, item.before)
        changes.append(Change(item.field, data[item.field][i], value))
        data[item.field][i] = value
    if ext != now_ext:
        names = sorted(k for k in now_ext.keys() | ext.keys() if now_ext.get(k) != ext.get(k))
        changes.append(
            Change(
                "ExtensionColumn",
                {k: now_ext[k] for k in names if k in now_ext},
                {k: ext[k] for k in names if k in ext},
            )
        )
        data["ExtensionColumn"][i] = ext
    return changes


def _clean_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """A request body's listing fields as clean values (ExtensionColumn as a mapping)."""
    return {name: clean_value(name, body.get(name)) for name in FIELDS}


def _listings(count: int) -> str:
    return f"{count} listing{'s' if count != 1 else ''}"


def _named(op: PlannedOp) -> str:
    """How a listing of the run is named to a person: its key, or its MLS number when the run
    went by ID (a cleanup)."""
    if op.key_type != NEW_OAKS:
        return op.key
    return str((op.before or op.body or {}).get("MLSNumber") or op.key)


def _key_of(value: Any) -> str | None:
    text = clean_value("MLSNumber", value)
    return str(text) if text is not None else None


def _text(value: Any) -> str | None:
    return None if value is None else (str(value).strip() or None)


#: The longest text a message quotes whole (a description is cut, its start enough to know it).
_QUOTED = 60


def _shown(value: Any) -> str:
    """A value in a sentence: text quoted (a long one cut), whole numbers as whole numbers."""
    if value in (None, "", [], {}):
        return "empty"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        value = {item.get("Key"): item.get("value") for item in value}
    if isinstance(value, str) and len(value) > _QUOTED:
        return repr(value[: _QUOTED - 1].rstrip() + "…")
    return repr(value)
