"""The last values sent for the fields List never returns, kept per chatbot in a small SQLite file.

Update replaces the whole listing, and RealEstateList never returns ``AreaUnit`` or
``Location``: a plan cannot see them, so an update whose sheet leaves them out would wipe the
listing's Location and reset its AreaUnit, and a restore could not put them back. Every create
and update that succeeds records the values it sent for those fields here, under each identity
of the listing (MLS number, URL, ID); later updates whose sheet does not give them, and
restores, send the recorded values again.

The file is ``sent-values.sqlite`` in the folder ``ESTATEBOT_STATE_DIR`` names, else
``$XDG_STATE_HOME/estatebot``, else ``~/.local/state/estatebot``; ``apply_plan`` and ``restore``
take another path, or ``False`` to keep no record. Rows are keyed by the service's address and
the chatbot, so two services or chatbots never share a value.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from estatebot.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.sync.apply.send_tasks import Task
from estatebot.listings.sync.report.apply_report import DONE, REDONE, OpOutcome

__all__ = [
    "SentValues",
    "default_sent_values_path",
    "open_sent_values",
    "remember_done",
    "service_address",
    "with_sent_values",
]

#: The fields whose last sent value is recorded: those List never returns.
RECORDED_FIELDS: tuple[str, ...] = schema.UNLISTED_COLUMNS

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sent (
    service TEXT NOT NULL,
    serial TEXT NOT NULL,
    key_type TEXT NOT NULL,
    key TEXT NOT NULL,
    fields TEXT NOT NULL,
    sent_at TEXT NOT NULL,
    PRIMARY KEY (service, serial, key_type, key)
)
"""

# The identities a listing is recorded under: its key types and the body field each reads.
_IDENTITIES = (("MLSNumber", "MLSNumber"), ("URL", "Url"))


def default_sent_values_path() -> Path:
    """Where the record lives when no path is given (see the module's documentation)."""
    folder = os.environ.get("ESTATEBOT_STATE_DIR")
    if folder:
        return Path(folder).expanduser() / "sent-values.sqlite"
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state).expanduser() / "estatebot" / "sent-values.sqlite"


def _key(value: Any) -> str | None:
    text = str(value).strip() if value not in (None, "") else ""
    return text.casefold() or None


class SentValues:
    """The record of one chatbot on one service: recall what was sent, remember what is sent.

    Safe to use from the runner's threads. Writes are held in memory and written in one
    transaction by :meth:`flush` (called by :meth:`close`), so a large apply does not pay a
    disk sync per listing.
    """

    def __init__(self, path: str | Path, *, service: str | None, serial: str) -> None:
        self.path = Path(path)
        self.service = service or ""
        self.serial = serial
        self._lock = threading.Lock()
        self._pending: dict[tuple[str, str], str] = {}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False)
            self._db.execute(_SCHEMA)
            self._db.commit()
        except (OSError, sqlite3.Error) as error:
            raise PlanError(
                f"the record of values sent ({self.path}) cannot be opened: {error}; pass "
                "sent_values= another path, or sent_values=False to keep none"
            ) from error

    def recall(self, key_type: str, key: str) -> dict[str, Any]:
        """The values last sent for the listing known by ``key_type`` ``key`` ({} if none)."""
        name = _key(key)
        if name is None:
            return {}
        with self._lock:
            pending = self._pending.get((key_type, name))
            if pending is None:
                row = self._db.execute(
                    "SELECT fields FROM sent WHERE service=? AND serial=? AND key_type=? AND key=?",
                    (self.service, self.serial, key_type, name),
                ).fetchone()
                pending = row[0] if row is not None else None
        return dict(json.loads(pending)) if pending is not None else {}

    def remember(self, body: Mapping[str, Any], *, listing_id: int | None = None) -> None:
        """Record the recorded fields of a body that was sent and accepted."""
        values = {name: body.get(name) for name in RECORDED_FIELDS}
        text = json.dumps(values, ensure_ascii=False, sort_keys=True, default=str)
        keys = [(kind, _key(body.get(field))) for kind, field in _IDENTITIES]
        if listing_id is not None:
            keys.append(("NewOaks", str(listing_id)))
        with self._lock:
            for kind, name in keys:
                if name is not None:
                    self._pending[(kind, name)] = text

    def flush(self) -> None:
        """Write what was remembered since the last flush."""
        with self._lock:
            if not self._pending:
                return
            stamp = datetime.now(UTC).isoformat(timespec="seconds")
            rows = [
                (self.service, self.serial, kind, name, text, stamp)
                for (kind, name), text in self._pending.items()
            ]
            with self._db:
                self._db.executemany("INSERT OR REPLACE INTO sent VALUES (?, ?, ?, ?, ?, ?)", rows)
            self._pending.clear()

    def close(self) -> None:
        """Flush and close the file."""
        try:
            self.flush()
        finally:
            self._db.close()

    def fill(
        self, body: Mapping[str, Any], key_type: str, key: str, fields: Iterable[str]
    ) -> dict[str, Any]:
        """``body`` with each of ``fields`` set to its last sent value, where one is recorded."""
        recalled = self.recall(key_type, key)
        out = dict(body)
        for name in fields:
            if recalled.get(name) not in (None, ""):
                out[name] = recalled[name]
        return out


def service_address(client: object) -> str | None:
    """The service's address for a journal or this record: scheme, host, port and path, never
    the user information a URL may carry (no place for a credential)."""
    address = str(getattr(client, "base_url", "") or "")
    if not address:
        return None
    parts = urlsplit(address)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


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


def open_sent_values(
    where: str | Path | bool | None, *, service: str | None, serial: str
) -> SentValues | None:
    """The record at ``where`` (None or True: the default place; False: keep none)."""
    if where is False:
        return None
    path = default_sent_values_path() if where in (None, True) else Path(str(where))
    return SentValues(path, service=service, serial=serial)


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
