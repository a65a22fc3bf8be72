"""The last values sent for the fields List never returns, kept per chatbot in a small SQLite file.

Update replaces the whole listing, and RealEstateList never returns ``AreaUnit`` or
``Location``: a plan cannot see them, so an update whose sheet leaves them out would wipe the
listing's Location and reset its AreaUnit, and a restore could not put them back. Every create
and update that succeeds records the values it sent for those fields here, under each identity
of the listing (MLS number, URL, ID). A pull fills those fields in from here (:func:`fill_known`),
so a plan's base has them and a pulled file round-trips whole; an update that still lacks one,
and a restore, send the recorded values again.

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
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import pandas as pd

from estatebot.errors import PlanError
from estatebot.listings import schema

__all__ = [
    "LOCATION_UNKNOWN",
    "RECORDED_FIELDS",
    "SentValues",
    "default_sent_values_path",
    "fill_known",
    "mark_location_unknown",
    "open_known",
    "open_sent_values",
    "service_address",
]

#: The fields whose last sent value is recorded: those List never returns.
RECORDED_FIELDS: tuple[str, ...] = schema.UNLISTED_COLUMNS

#: The ``attrs`` entry naming the listings whose Location nobody here knows (see the schema).
LOCATION_UNKNOWN = schema.LOCATION_UNKNOWN_ATTR

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

    def known(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Every recorded listing's values, by (key type, key as recorded), in one query."""
        self.flush()
        with self._lock:
            rows = self._db.execute(
                "SELECT key_type, key, fields FROM sent WHERE service=? AND serial=?",
                (self.service, self.serial),
            ).fetchall()
        return {(kind, key): dict(json.loads(text)) for kind, key, text in rows}

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


def fill_known(frame: pd.DataFrame, record: SentValues) -> int:
    """Set each pulled listing's never-shown fields to the values last sent to it; the count set.

    A listing is found by its ID, else its MLS number, else its URL (the identities the record
    keeps). A recorded value replaces what the frame holds there (at most a unit read from
    List's ``Area`` text): what was sent is what the service stores. The listings the record
    knows nothing of are named in ``frame.attrs`` (see :func:`mark_location_unknown`).
    """
    known = record.known()
    if not known or not len(frame):
        mark_location_unknown(frame)
        return 0
    identities = (("NewOaks", "ID"), ("MLSNumber", "MLSNumber"), ("URL", "Url"))
    columns = {kind: frame[column].astype(object).tolist() for kind, column in identities}
    found: dict[str, list[Any]] = {name: [None] * len(frame) for name in RECORDED_FIELDS}
    filled = 0
    unknown: list[Any] = []
    for position in range(len(frame)):
        values: dict[str, Any] | None = None
        for kind, _ in identities:
            cell = columns[kind][position]
            name = _key(cell) if cell is not pd.NA else None
            values = known.get((kind, name)) if name is not None else None
            if values is not None:
                break
        if values is None:
            unknown.append(columns["NewOaks"][position])
            continue
        for field in RECORDED_FIELDS:
            if values.get(field) not in (None, ""):
                found[field][position] = values[field]
                filled += 1
    for field, recorded_values in found.items():
        recorded = pd.Series(recorded_values, index=frame.index, dtype=frame[field].dtype)
        frame[field] = recorded.fillna(frame[field])
    mark_location_unknown(frame, unknown)
    return filled


def mark_location_unknown(frame: pd.DataFrame, unknown: Iterable[Any] | None = None) -> None:
    """Name, in ``frame.attrs``, the pulled listings whose Location nobody here knows: the IDs in
    ``unknown`` (None: every listing of the frame, as when there is no record). List never
    returns Location, so an update would blank one another tool set; a plan holds such updates
    back unless told to blank it."""
    ids = frame["ID"] if unknown is None else pd.Series(list(unknown), dtype=object)
    numbers = pd.to_numeric(ids, errors="coerce").dropna().astype("int64")
    frame.attrs[LOCATION_UNKNOWN] = ",".join(map(str, np.sort(numbers.to_numpy(dtype=np.int64))))


def open_known(
    where: str | Path | bool | None, *, service: str | None, serial: str
) -> SentValues | None:
    """The record at ``where`` for reading, or None when there is none yet (nothing is made)."""
    if where is False:
        return None
    path = default_sent_values_path() if where in (None, True) else Path(str(where))
    return SentValues(path, service=service, serial=serial) if path.exists() else None


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


def open_sent_values(
    where: str | Path | bool | None, *, service: str | None, serial: str
) -> SentValues | None:
    """The record at ``where`` (None or True: the default place; False: keep none)."""
    if where is False:
        return None
    path = default_sent_values_path() if where in (None, True) else Path(str(where))
    return SentValues(path, service=service, serial=serial)
