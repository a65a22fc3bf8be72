"""Put a backup back: listings that exist (by MLSNumber, else Url) are updated to the
backed-up values, missing ones are created.

A restore leaves in place the listings the run created; when the backup sits beside its run's
journal (in a run folder of the command line, or next to the journal an apply wrote), the report
says how many are still there and names the undo that removes them
(:mod:`~estatebot.listings.sync.apply.undo`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import ValidationError

from estatebot._progress import finish_bar, progress_bar
from estatebot.api.models import KeyType, ListingInput, field_problems
from estatebot.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.remote.parsers import parse_numbers
from estatebot.listings.remote.records import WIRE_NAMES
from estatebot.listings.remote.sent_record import SentValues, open_sent_values, service_address
from estatebot.listings.sync.apply.apply_options import ApplyOptions, resolve_options
from estatebot.listings.sync.apply.backup import (
    read_backup,
    read_backup_raw,
)
from estatebot.listings.sync.apply.journal_records import MAGIC, read_journal
from estatebot.listings.sync.apply.send_tasks import Task
from estatebot.listings.sync.apply.sender import Runner, remember_done
from estatebot.listings.sync.apply.stale_check import Remote, shows_body
from estatebot.listings.sync.report.apply_report import (
    FAILED,
    NOT_DONE,
    UNCHANGED,
    ApplyReport,
    OpOutcome,
    outcomes_frame,
)
from estatebot.listings.sync.values.compare import key_values
from estatebot.listings.sync.values.tidy import clean_value

if TYPE_CHECKING:
    from estatebot.api.client import Client

#: Why a listing whose unit nobody knows is not put back (a restore never guesses one).
UNKNOWN_UNIT = (
    "not sent: its AreaUnit is unknown (the service never shows it, and neither the backup nor "
    "the record of values sent has it); a restore never guesses a unit: give it with "
    "defaults={'AreaUnit': 'Square Feet'} (or 'Square Meters')"
)


# --------------------------------------------------------------------------- restore


def _from_record(name: str, raw: Mapping[str, Any] | None) -> Any:
    """A field the typed row lost, read back from the List record as the service sent it.

    Numbers are read as the pull reads them (currency, separators, units), but as decimals:
    a value the typed column refused (1.5 parking spots) is exactly what is kept here.
    """
    if not raw or name in schema.LIST_COLUMNS or name in schema.DICT_COLUMNS:
        return None
    value = raw.get(WIRE_NAMES.get(name, name))
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if name in schema.INT_COLUMNS or name in schema.FLOAT_COLUMNS:
        parsed = parse_numbers(pd.Series([value], dtype=object)).values.iloc[0]
        if parsed is pd.NA:
            return None
        number = float(parsed)
        return int(number) if number.is_integer() else number
    return str(value).strip()


def body_of(
    row: Mapping[str, Any],
    raw: Mapping[str, Any] | None = None,
    sent: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """An Update/Create body (without SerialNumber) from a canonical row, and what was filled in.

    A field the row lacks is taken from ``raw``, the listing's List record as the service sent
    it, where that holds it (a value the typed frame could not keep, such as 1.5 parking spots),
    else from ``sent``, the values last sent to it for the fields List never returns (see
    :mod:`~estatebot.listings.remote.sent_record`).
    """
    body: dict[str, Any] = {}
    filled: list[str] = []
    for name in schema.COLUMNS:
        if name == "ID":
            continue
        value = clean_value(name, row.get(name))
        if name in schema.DICT_COLUMNS:
            value = [{"Key": k, "value": v} for k, v in value.items()] or None
        elif name in schema.LIST_COLUMNS:
            value = value or None
        if value is None:
            value = _from_record(name, raw)
        if value is None and sent is not None and sent.get(name) not in (None, ""):
            value = sent[name]
        if value is not None:
            body[name] = value
    return body, filled


def rebuild_problems(
    row: Mapping[str, Any], raw: Mapping[str, Any] | None, serial: str
) -> list[str]:
    """Why a backed-up listing could not be created again from its backup (empty: it could).

    A unit the backup lacks is not held against it: List never shows one, and a restore asks
    for it then (a delete is not refused for what no pull can know).
    """
    body, _ = body_of(row, raw)
    body.setdefault("AreaUnit", "Square Feet")  # a stand-in for the check only, never sent
    try:
        ListingInput.model_validate({**body, "SerialNumber": serial})
    except ValidationError as error:
        return [f"{field}: {message}" for field, message, _ in field_problems(error)]
    return []


def _restore_item(
    number: int,
    row: Mapping[str, Any],
    mls: str | None,
    url: str | None,
    remote: Remote,
    raw: Mapping[str, Any] | None = None,
    sent: Mapping[str, Any] | None = None,
    fallback: Mapping[str, str] | None = None,
) -> Task | OpOutcome:
    """What restoring one backed-up listing takes: a create, an update, or nothing.

    The body is the backed-up listing, with what it lacks of the fields List never returns
    taken from the values last sent, the listing as it is now, then ``fallback``.
    """
    body, filled = body_of(row, raw, sent)
    note = "; ".join(filled)
    for kind, key in ((KeyType.MLS_NUMBER.value, mls), (KeyType.URL.value, url)):
        found = remote.positions(kind, key) if key else []
        if not found or key is None:
            continue
        ident = remote.id_at(found[0])
        # The listing as it is now may know them (a unit in List's Area text, or the record).
        now = remote.row(found[0])
        for name in schema.UNLISTED_COLUMNS:
            if name not in body and clean_value(name, now.get(name)) is not None:
                body[name] = clean_value(name, now.get(name))
        _fill_defaults(body, fallback)
        if "AreaUnit" not in body:
            return OpOutcome("update", key, number, ident, FAILED, message=UNKNOWN_UNIT)
        if shows_body(body, remote.row(found[0])):
            message = "already holds the backed-up values"
            return OpOutcome("update", key, number, ident, UNCHANGED, message=message)
        update = {**body, "Key": key, "KeyType": kind}
        return Task("update", key, kind, number, ident, update, None, note)
    _fill_defaults(body, fallback)
    if "AreaUnit" not in body:
        return OpOutcome("create", mls or url, number, None, FAILED, message=UNKNOWN_UNIT)
    if mls:
        return Task("create", mls, KeyType.MLS_NUMBER.value, number, None, body, None, note)
    if url:
        return Task("create", url, KeyType.URL.value, number, None, body, None, note)
    message = "the backed-up listing has neither an MLSNumber nor a Url"
    return OpOutcome("create", None, number, None, FAILED, message=message)


def _fill_defaults(body: dict[str, Any], fallback: Mapping[str, str] | None) -> None:
    for name, value in (fallback or {}).items():
        body.setdefault(name, value)


def restore(
    backup: str | Path,
    client: Client,
    serial: str,
    *,
    concurrency: int = 8,
    progress: bool | None = None,
    sent_values: str | Path | bool | None = None,
    options: ApplyOptions | None = None,
    defaults: Mapping[str, str] | None = None,
) -> ApplyReport:
    """Put the listings of a backup (written by `apply_plan`) back on the chatbot.

    The current listings are pulled; a backed-up listing that exists now (matched by MLSNumber,
    else Url) is updated to its backed-up values, one that does not is created. Listings that
    already hold those values are reported `unchanged` and not sent, so the same call again
    sends only what is still missing or different. Fields the service never returns
    (`AreaUnit`, `Location`) cannot be in a backup: they are sent as last sent by estatebot
    (the record of `estatebot.listings.remote.sent_record`, at `sent_values`), else the unit
    the listing shows now, else `defaults`; a listing whose unit is still unknown is not sent
    and its row fails, saying so (a restore never guesses a unit). The listings the run
    created are left in place.

    Args:
        backup: The backup file an apply wrote (`.json` or `.xlsx`).
        client: The `Client` that pulls the listings and sends the writes.
        serial: The chatbot's serial number.
        concurrency: Threads running the creates and updates, one request each, and fetching
            the pages of the pull that checks them (default 8).
        progress: Show a progress bar (None: as `ESTATEBOT_PROGRESS` says, else on outside
            CI).
        sent_values: The record of the values last sent: None its default place, a path, or
            False for none.
        options: The options as one `ApplyOptions` instead of keywords, of which a restore
            reads `concurrency`, `progress` and `sent_values`.
        defaults: The values of `AreaUnit` and `Location` for a listing that has none of its
            own (`{"AreaUnit": "Square Feet"}`); only those two fields are taken.

    Returns:
        An `ApplyReport` titled "Restore", one row per backed-up listing; when the backup sits
            beside its run's journal and the run created listings still there, a note names
            the undo that removes them.

    Raises:
        PlanError: When there is no backup at `backup`, it is not an estatebot backup or its
            name ends in neither `.json` nor `.xlsx`, or the record of values sent cannot be
            opened.
        PullError: When the pull of the current listings fails.
        TypeError: When the options come both as `options=` and as keywords changed from
            their defaults.
        ValueError: When `defaults` names a field other than `AreaUnit` and `Location`, or a
            unit that is not one of the service's, or `concurrency` is below 1.
    """
    chosen = resolve_options(
        options, concurrency=concurrency, progress=progress, sent_values=sent_values
    )
    fallback = check_restore_defaults(defaults)
    service = service_address(client)
    record = open_sent_values(chosen.sent_values, service=service, serial=serial)
    try:
        return _restore(backup, client, serial, chosen, record, fallback)
    finally:
        if record is not None:
            record.close()


def check_restore_defaults(
    defaults: Mapping[str, str] | None, *, what: str = "restore"
) -> dict[str, str]:
    """The defaults a restore takes: values of the fields List never returns, checked."""
    given = dict(defaults or {})
    other = sorted(set(given) - set(schema.UNLISTED_COLUMNS))
    if other:
        raise ValueError(
            f"{what} takes defaults of {', '.join(schema.UNLISTED_COLUMNS)} only (the fields "
            f"the service never shows); got {', '.join(other)}"
        )
    unit = given.get("AreaUnit")
    if unit is not None and unit not in schema.ENUM_VALUES["AreaUnit"]:
        allowed = " or ".join(repr(u) for u in schema.ENUM_VALUES["AreaUnit"])
        raise ValueError(f"AreaUnit must be {allowed}, got {unit!r}")
    return given


def _restore(
    backup: str | Path,
    client: Client,
    serial: str,
    options: ApplyOptions,
    record: SentValues | None,
    fallback: Mapping[str, str],
) -> ApplyReport:
    frame = read_backup(backup).reset_index(drop=True)
    raws = read_backup_raw(backup)
    remote = Remote.pulled(
        client, serial, concurrency=options.concurrency, sent_values=options.sent_values
    )
    tasks: list[Task] = []
    settled: list[OpOutcome] = []  # rows decided without a request
    seen: set[str] = set()
    mls_keys = key_values(frame["MLSNumber"])
    url_keys = key_values(frame["Url"])
    for position in range(len(frame)):
        row = {column: frame[column].iat[position] for column in schema.COLUMNS}
        mls, url = mls_keys[position], url_keys[position]
        sent = _recalled(record, mls, url)
        item = _restore_item(position + 1, row, mls, url, remote, raws[position], sent, fallback)
        if isinstance(item, Task) and item.key in seen:
            message = f"{item.key_type} {item.key} is in the backup more than once"
            item = OpOutcome(item.action, item.key, item.row, item.id, FAILED, message=message)
        if isinstance(item, Task):
            seen.add(item.key)
            tasks.append(item)
        else:
            settled.append(item)
    progress = options.progress
    with progress_bar(len(tasks), "Restoring listings", progress=progress, unit="op") as bar:
        # Unjournaled: a restore sent again sends only what is still missing or different.
        runner = Runner(client, serial, options, journal=None, records={}, tick=bar.update)
        try:
            runner.run(tasks)
        finally:
            if record is not None:
                remember_done(record, tasks, runner.outcomes)
        failed = sum(1 for o in runner.outcomes.values() if o.outcome in NOT_DONE)
        finish_bar(bar, failed=failed, total=len(tasks))
    rows = [*settled, *(runner.outcomes[t.op] for t in tasks)]
    rows.sort(key=lambda o: o.row or 0)
    # A listing the backup already matches is left alone, so the same call again sends only
    # what is still missing or different.
    again = f"eb.restore({str(backup)!r}, client, {serial!r})"
    notes = _creates_left(backup, remote, serial)
    return ApplyReport(frame=outcomes_frame(rows), title="Restore", retry_call=again, notes=notes)


# --------------------------------------------------------------------------- what restore leaves


@dataclass(frozen=True)
class RunCreates:
    """The listings a run created (their IDs), as the journal beside its backup tells."""

    journal: Path
    ids: tuple[int, ...]
    #: The run's folder, when the backup is in one of the command line's (beside its plan).
    run: Path | None


def run_creates(backup: str | Path) -> RunCreates | None:
    """What the run of ``backup`` created, by the journal beside it (None: no journal there,
    or it created nothing). A folder with several journals names no run: None."""
    folder = Path(backup).parent
    journal = folder / "journal.jsonl"
    if not journal.is_file():
        beside = [
            p for p in _files(folder) if p.suffix in (".jsonl", ".journal") and _is_journal(p)
        ]
        if len(beside) != 1:
            return None
        journal = beside[0]
    try:
        records = read_journal(journal).records()
    except (PlanError, OSError):
        return None  # a damaged journal says nothing a note could rely on
    ids = tuple(
        record.id
        for name, record in records.items()
        if name.startswith("create:") and record.done and record.id is not None
    )
    if not ids:
        return None
    return RunCreates(journal, ids, folder if (folder / "plan.json").is_file() else None)


def _files(folder: Path) -> list[Path]:
    try:
        return [p for p in folder.iterdir() if p.is_file()]
    except OSError:
        return []


def _is_journal(path: Path) -> bool:
    """Whether ``path`` starts with an apply journal's header (only its first line is read)."""
    try:
        with path.open(encoding="utf-8") as handle:
            first = json.loads(handle.readline())
    except (OSError, ValueError):
        return False
    return isinstance(first, dict) and first.get("journal") == MAGIC


_NOTE = re.compile(
    r"^(this run also created \d+ listings?, which a restore leaves in place: )(.+)( removes them)$"
)


def creates_note(count: int, undo: str) -> str:
    """The note of a restore that leaves ``count`` listings its run created: ``undo`` removes
    them."""
    made = f"{count} listing{'s' if count != 1 else ''}"
    return f"this run also created {made}, which a restore leaves in place: {undo} removes them"


def with_undo_command(notes: Sequence[str], undo: str) -> list[str]:
    """``notes`` with the undo that :func:`creates_note` names replaced by ``undo`` (the command
    line names its command, the library its function)."""
    return [_NOTE.sub(lambda m: f"{m[1]}{undo}{m[3]}", note) for note in notes]


def _creates_left(backup: str | Path, remote: Remote, serial: str) -> list[str]:
    """The note naming the undo, when the run of ``backup`` created listings still there."""
    made = run_creates(backup)
    if made is None:
        return []
    left = sum(1 for ident in made.ids if remote.positions(KeyType.NEW_OAKS.value, str(ident)))
    if not left:
        return []
    if made.run is not None:
        undo = f"eb.plan_undo(client, {serial!r}, {str(made.run)!r}).apply(client, {serial!r})"
    else:
        undo = (
            f"eb.plan_undo(client, {serial!r}, PLAN, journal={str(made.journal)!r}, "
            f"backup={str(backup)!r}).apply(client, {serial!r}) (PLAN: the plan the run applied)"
        )
    return [creates_note(left, undo)]


def _recalled(record: SentValues | None, mls: str | None, url: str | None) -> dict[str, Any]:
    if record is None:
        return {}
    found = record.recall(KeyType.MLS_NUMBER.value, mls) if mls else {}
    return found or (record.recall(KeyType.URL.value, url) if url else {})
