"""SQLite persistence of the emulator: workspaces, chatbots, sessions, messages and listings.

One :class:`Store` wraps one SQLite connection, to a file or (by default) in memory.

Thread-safety: the connection is opened with ``check_same_thread=False`` and every public method
holds one re-entrant lock for its whole duration. Two threads use a store: the server thread,
whose async endpoints call it directly on the event loop (each call is short, so this never
stalls the loop noticeably, and no ``await`` falls between a check and the write that depends on
it), and the test or notebook thread, which seeds data through the server's helpers.

Listings are stored as their validated Create/Update body (less ``SerialNumber``) in a JSON
column, beside the few columns that are searched: MLS number, URL, city (case-folded) and sale
type. ``(chatbot, MLSNumber)`` and ``(chatbot, Url)`` are unique; an empty MLS number or URL is
stored as NULL and never conflicts. IDs come from AUTOINCREMENT sequences, so a deleted ID is
never reused; listing IDs start at 10001, session IDs at 100001, message IDs at 500001.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pydantic_core import to_json

#: The settings a new chatbot starts with (any of them can be overridden when adding it).
DEFAULT_CHATBOT_SETTINGS: dict[str, Any] = {
    "Name": "My chatbot",
    "Model": "3",
    "SystemMessage": "You are a helpful real estate assistant. Answer from the listings only.",
    "Temperature": 1,
    "TimeZone": "America/Chicago",
    "WelcomeMessage": "Hello! How can I help you find a home today?",
    "RateLimitCount": 0,
    "RateLimitTime": 60,
    "RateLimitMessage": "Too many messages in a short time. Please wait a moment and try again.",
    "MessageLimit": -1,
    "AIResponseLanguage": "English",
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS workspaces (
    id INTEGER PRIMARY KEY,
    api_key TEXT NOT NULL UNIQUE,
    session_key TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS chatbots (
    serial TEXT PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
    settings TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    serial TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id INTEGER NOT NULL,
    serial TEXT NOT NULL,
    month TEXT NOT NULL,
    at REAL NOT NULL,
    is_question INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages(session_id, at) WHERE is_question = 1;
CREATE INDEX IF NOT EXISTS messages_by_month ON messages(serial, month) WHERE is_question = 1;
CREATE TABLE IF NOT EXISTS listings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    serial TEXT NOT NULL,
    mls TEXT,
    url TEXT,
    city TEXT,
    sale_type TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS listings_by_chatbot ON listings(serial);
CREATE UNIQUE INDEX IF NOT EXISTS listings_by_mls ON listings(serial, mls);
CREATE UNIQUE INDEX IF NOT EXISTS listings_by_url ON listings(serial, url);
CREATE INDEX IF NOT EXISTS listings_by_city ON listings(serial, city);
CREATE INDEX IF NOT EXISTS listings_by_sale_type ON listings(serial, sale_type);
"""

# The last value of each sequence before its first row: the first ID is one more.
_SEQUENCE_STARTS = {"listings": 10000, "sessions": 100000, "messages": 500000}


@dataclass(frozen=True)
class Workspace:
    """A workspace: its credentials (an API key and a session key) own its chatbots."""

    api_key: str
    session_key: str
    id: int = 0

    def __repr__(self) -> str:
        # Credentials never appear in a repr (it ends up in logs and test reports).
        return f"Workspace(id={self.id}, api_key=***, session_key=***)"


@dataclass(frozen=True)
class Chatbot:
    """A chatbot and its settings (the Edit field names, without ``serialNumber``)."""

    serial: str
    workspace_id: int
    settings: dict[str, Any]


class ListingConflict(Exception):
    """A listing with the same MLS number or URL already exists on the chatbot."""

    def __init__(self, field: str, value: str) -> None:
        self.field = field
        self.value = value
        super().__init__(f"A listing with {field} {value!r} already exists on this chatbot")


@dataclass(frozen=True)
class ListingFilter:
    """The filters of RealEstateList; None means "any"."""

    city: str | None = None
    sale_type: str | None = None
    mls_number: str | None = None


def month_of(at: float) -> str:
    """The calendar month (UTC) of a timestamp, as ``YYYY-MM``."""
    return time.strftime("%Y-%m", time.gmtime(at))


def _fold_city(city: Any) -> str | None:
    text = str(city).strip().casefold() if city is not None else ""
    return text or None


def _to_json(data: Mapping[str, Any]) -> str:
    # pydantic-core's serializer is several times faster than json.dumps on bulk loads.
    return to_json(dict(data)).decode("utf-8")


def _key_columns(data: Mapping[str, Any]) -> tuple[str | None, str | None, str | None, str]:
    return (
        data.get("MLSNumber") or None,
        data.get("Url") or None,
        _fold_city(data.get("City")),
        str(data["SaleType"]),
    )


class Store:
    """The emulator's state in SQLite (see the module docstring for the threading rules)."""

    def __init__(self, path: str = ":memory:") -> None:
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._listing_cache: dict[str, tuple[tuple[str, ...], list[dict[str, Any]]]] = {}
        # Per chatbot, until its listings change: the IDs each filter matches, and whatever the
        # app derives per listing (its encoded List records), so paging does no repeated work.
        self._matches: dict[str, dict[ListingFilter, list[int]]] = {}
        self._derived: dict[str, dict[int, Any]] = {}
        with self._lock:
            if path != ":memory:":
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            for name, start in _SEQUENCE_STARTS.items():
                self._db.execute(
                    "INSERT INTO sqlite_sequence(name, seq) SELECT ?, ? "
                    "WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?)",
                    (name, start, name),
                )

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # ------------------------------------------------------------------ workspaces

    def add_workspace(
        self, api_key: str | None = None, session_key: str | None = None
    ) -> Workspace:
        """Create a workspace (random credentials unless given); an existing one is returned."""
        api_key = api_key or secrets.token_hex(16)
        session_key = session_key or secrets.token_hex(16)
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO workspaces(api_key, session_key) VALUES (?, ?)",
                (api_key, session_key),
            )
            row = self._db.execute(
                "SELECT id, api_key, session_key FROM workspaces WHERE api_key = ?", (api_key,)
            ).fetchone()
        return Workspace(id=row[0], api_key=row[1], session_key=row[2])

    def workspace_by_api_key(self, api_key: str) -> int | None:
        """The ID of the workspace owning this API key, or None."""
        return self._workspace_by("api_key", api_key)

    def workspace_by_session_key(self, session_key: str) -> int | None:
        """The ID of the workspace owning this session key, or None."""
        return self._workspace_by("session_key", session_key)

    def _workspace_by(self, column: str, value: str) -> int | None:
        if not value:
            return None
        with self._lock:
            row = self._db.execute(
                f"SELECT id FROM workspaces WHERE {column} = ?", (value,)
            ).fetchone()
        return None if row is None else int(row[0])

    # ------------------------------------------------------------------ chatbots

    def add_chatbot(
        self, workspace_id: int, settings: Mapping[str, Any], serial: str | None = None
    ) -> str:
        """Create a chatbot with these settings (or keep an existing one); returns its serial."""
        serial = serial or secrets.token_hex(16)
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO chatbots(serial, workspace_id, settings) VALUES (?, ?, ?)",
                (serial, workspace_id, json.dumps(dict(settings))),
            )
        return serial

    def chatbot(self, serial: str) -> Chatbot | None:
        """The chatbot with this serial, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT serial, workspace_id, settings FROM chatbots WHERE serial = ?", (serial,)
            ).fetchone()
        if row is None:
            return None
        return Chatbot(serial=row[0], workspace_id=row[1], settings=json.loads(row[2]))

    def update_settings(self, serial: str, changes: Mapping[str, Any]) -> None:
        """Merge ``changes`` into a chatbot's settings; the other settings stay as they were."""
        with self._transaction() as db:
            row = db.execute("SELECT settings FROM chatbots WHERE serial = ?", (serial,)).fetchone()
            if row is None:
                raise KeyError(serial)
            settings = json.loads(row[0])
            settings.update(changes)
            db.execute(
                "UPDATE chatbots SET settings = ? WHERE serial = ?", (json.dumps(settings), serial)
            )

    # ------------------------------------------------------------------ sessions and messages

    def create_session(self, serial: str, at: float | None = None) -> int:
        """Open a chat session on a chatbot; returns its ID."""
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO sessions(serial, created) VALUES (?, ?)",
                (serial, time.time() if at is None else at),
            )
        return int(cursor.lastrowid or 0)

    def session_chatbot(self, session_id: int) -> str | None:
        """The serial of the chatbot a session belongs to, or None for an unknown session."""
        with self._lock:
            row = self._db.execute(
                "SELECT serial FROM sessions WHERE id = ?", (session_id,)
            ).fetchone()
        return None if row is None else str(row[0])

    def recent_questions(self, session_id: int, since: float) -> list[float]:
        """Times (ascending) of the accepted messages of a session after ``since``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT at FROM messages WHERE session_id = ? AND is_question = 1 AND at > ? "
                "ORDER BY at",
                (session_id, since),
            ).fetchall()
        return [float(row[0]) for row in rows]

    def questions_in_month(self, serial: str, month: str) -> int:
        """How many messages a chatbot accepted in a calendar month (``YYYY-MM``, UTC)."""
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*) FROM messages WHERE serial = ? AND month = ? AND is_question = 1",
                (serial, month),
            ).fetchone()
        return int(row[0])

    def record_exchange(self, session_id: int, serial: str, at: float) -> tuple[int, int]:
        """Record an accepted question and its answer; returns their message IDs."""
        month = month_of(at)
        with self._transaction() as db:
            ids = []
            for is_question in (1, 0):
                cursor = db.execute(
                    "INSERT INTO messages(session_id, serial, month, at, is_question) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (session_id, serial, month, at, is_question),
                )
                ids.append(int(cursor.lastrowid or 0))
        return ids[0], ids[1]

    # ------------------------------------------------------------------ listings

    def add_listings(self, serial: str, listings: Iterable[Mapping[str, Any]]) -> list[int]:
        """Insert listings (validated bodies without SerialNumber) in one transaction.

        Returns their new IDs in order. Raises :class:`ListingConflict` (and inserts nothing)
        when an MLS number or URL is already taken on the chatbot or repeats in the batch.
        """
        rows = [(serial, *_key_columns(item), _to_json(item)) for item in listings]
        if not rows:
            return []
        try:
            with self._transaction() as db:
                before = self._sequence(db)
                db.executemany(
                    "INSERT INTO listings(serial, mls, url, city, sale_type, data) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    rows,
                )
                after = self._sequence(db)
        except sqlite3.IntegrityError as error:
            raise self._conflict(error, serial, rows) from None
        finally:
            self._changed(serial)
        # One writer under the lock and AUTOINCREMENT: the batch took consecutive IDs.
        return list(range(before + 1, after + 1))

    def create_listing(self, serial: str, data: Mapping[str, Any]) -> int:
        """Insert one listing; returns its ID (raises :class:`ListingConflict`)."""
        return self.add_listings(serial, [data])[0]

    def find_listing_ids(self, serial: str, key_type: str, key: str) -> list[int]:
        """IDs of the listings a key addresses (KeyType NewOaks, MLSNumber or URL)."""
        with self._lock:
            if key_type == "NewOaks":
                if not key.strip().isdigit():
                    return []
                rows = self._db.execute(
                    "SELECT id FROM listings WHERE serial = ? AND id = ?", (serial, int(key))
                ).fetchall()
            else:
                column = "mls" if key_type == "MLSNumber" else "url"
                rows = self._db.execute(
                    f"SELECT id FROM listings WHERE serial = ? AND {column} = ?", (serial, key)
                ).fetchall()
        return [int(row[0]) for row in rows]

    def replace_listing(self, serial: str, listing_id: int, data: Mapping[str, Any]) -> int:
        """Replace a listing's fields with ``data``; returns 1, or 0 when it does not exist."""
        mls, url, city, sale_type = _key_columns(data)
        payload = _to_json(data)
        try:
            with self._transaction() as db:
                cursor = db.execute(
                    "UPDATE listings SET mls = ?, url = ?, city = ?, sale_type = ?, data = ? "
                    "WHERE serial = ? AND id = ?",
                    (mls, url, city, sale_type, payload, serial, listing_id),
                )
        except sqlite3.IntegrityError as error:
            raise self._conflict(
                error, serial, [(serial, mls, url, city, sale_type, payload)]
            ) from None
        finally:
            self._changed(serial)
        return cursor.rowcount

    def delete_listings(self, serial: str, key_type: str, keys: Iterable[str]) -> int:
        """Delete the listings these keys address; unknown keys are ignored. Returns the count."""
        ids = {i for key in keys for i in self.find_listing_ids(serial, key_type, key)}
        if not ids:
            return 0
        with self._transaction() as db:
            db.executemany(
                "DELETE FROM listings WHERE serial = ? AND id = ?", [(serial, i) for i in ids]
            )
        self._changed(serial)
        return len(ids)

    def _changed(self, serial: str) -> None:
        """Forget everything cached about a chatbot's listings (called on every write)."""
        with self._lock:
            self._listing_cache.pop(serial, None)
            self._matches.pop(serial, None)
            self._derived.pop(serial, None)

    def derived(self, serial: str) -> dict[int, Any]:
        """A per-listing cache for the caller, by listing ID, emptied when the listings change."""
        with self._lock:
            return self._derived.setdefault(serial, {})

    def listing_data(self, serial: str, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The stored fields of these listings (those that exist), by ID."""
        wanted = list(ids)
        with self._lock:
            rows = self._db.execute(
                f"SELECT id, data FROM listings WHERE serial = ? AND id IN "
                f"({','.join('?' * len(wanted))})",
                [serial, *wanted],
            ).fetchall()
        return {int(row[0]): json.loads(row[1]) for row in rows}

    def page_ids(
        self, serial: str, filters: ListingFilter, offset: int, limit: int
    ) -> tuple[list[int], int]:
        """The IDs on one page of a chatbot's listings (by ID order), and the total matching."""
        with self._lock:
            # Every matching ID, in order, is kept until the listings change: a pull reads the
            # same filter page after page, and slicing a list beats OFFSET scanning each time.
            matches = self._matches.setdefault(serial, {})
            ids = matches.get(filters)
            if ids is None:
                ids = matches[filters] = self._matching_ids(serial, filters)
        return ids[offset : offset + limit], len(ids)

    def _matching_ids(self, serial: str, filters: ListingFilter) -> list[int]:
        """Every ID of a chatbot's listings that ``filters`` match, in order (lock held)."""
        where = ["serial = ?"]
        params: list[Any] = [serial]
        if filters.city is not None:
            where.append("city = ?")
            params.append(_fold_city(filters.city))
        if filters.sale_type is not None:
            where.append("sale_type = ?")
            params.append(filters.sale_type)
        if filters.mls_number is not None:
            where.append("mls = ?")
            params.append(filters.mls_number)
        clause = " AND ".join(where)
        rows = self._db.execute(f"SELECT id FROM listings WHERE {clause} ORDER BY id", params)
        return [int(row[0]) for row in rows.fetchall()]

    def listings(self, serial: str, fields: tuple[str, ...]) -> list[dict[str, Any]]:
        """A chatbot's listings by ID, each with its ``ID`` and the present ``fields`` only.

        The answer engine reads these on every message: only the fields it needs are pulled
        (by SQLite, which is much faster than parsing whole documents in Python), and the
        result is cached until the chatbot's listings change. The same list object is returned
        while the cache holds, so a caller may key its own derived data on it; callers must not
        mutate it.
        """
        with self._lock:
            cached = self._listing_cache.get(serial)
            if cached is None or cached[0] != fields:
                columns = "".join(f", json_extract(data, '$.{name}')" for name in fields)
                rows = self._db.execute(
                    f"SELECT id{columns} FROM listings WHERE serial = ? ORDER BY id", (serial,)
                ).fetchall()
                listings = [
                    {
                        "ID": row[0],
                        **{k: v for k, v in zip(fields, row[1:], strict=True) if v is not None},
                    }
                    for row in rows
                ]
                cached = (fields, listings)
                self._listing_cache[serial] = cached
        return cached[1]

    def count_listings(self, serial: str) -> int:
        """How many listings a chatbot has."""
        with self._lock:
            row = self._db.execute(
                "SELECT COUNT(*) FROM listings WHERE serial = ?", (serial,)
            ).fetchone()
        return int(row[0])

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _sequence(db: sqlite3.Connection) -> int:
        row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'listings'").fetchone()
        return int(row[0])

    def _conflict(
        self, error: sqlite3.IntegrityError, serial: str, rows: list[tuple[Any, ...]]
    ) -> ListingConflict:
        # SQLite names the index columns ("listings.serial, listings.mls"); find the value that
        # clashes (with the table or within the batch) so the message can name it.
        column, field = ("mls", "MLSNumber") if "mls" in str(error) else ("url", "Url")
        position = 1 if column == "mls" else 2
        seen: set[str] = set()
        with self._lock:
            for row in rows:
                value = row[position]
                if value is None:
                    continue
                taken = self._db.execute(
                    f"SELECT 1 FROM listings WHERE serial = ? AND {column} = ?", (serial, value)
                ).fetchone()
                if value in seen or taken is not None:
                    return ListingConflict(field, value)
                seen.add(value)
        return ListingConflict(field, "?")
