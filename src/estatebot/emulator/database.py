"""The emulator's SQLite database: one connection, the schema, and the lock around them.

One :class:`Database` wraps one SQLite connection, to a file or (by default) in memory.

Thread-safety: the connection is opened with ``check_same_thread=False`` and every public method
holds one re-entrant lock for its whole duration. Two threads use a store: the server thread,
whose async endpoints call it directly on the event loop (each call is short, so this never
stalls the loop noticeably, and no ``await`` falls between a check and the write that depends on
it), and the test or notebook thread, which seeds data through the server's helpers. The
worker threads that parse large bodies and work out answers never touch the store.

IDs come from AUTOINCREMENT sequences, so a deleted ID is never reused; listing IDs start at
10001, session IDs at 100001, message IDs at 500001.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

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


class Database:
    """One SQLite connection with the emulator's schema (see the module docstring for the lock)."""

    def __init__(self, path: str = ":memory:") -> None:
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
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
