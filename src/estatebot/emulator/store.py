"""The emulator's state in SQLite: workspaces, chatbots, chat sessions and messages, listings.

:class:`Store` is the one object the app and the server's helpers use. It is built in layers:
the connection and schema (:mod:`.database`, which states the threading rules), the cache of
listing reads (:mod:`.listing_cache`), the listings table (:mod:`.listing_table`), and here the
workspaces, their chatbots, and the chat sessions and messages that the limits count.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .listing_table import ListingConflict, ListingTable

# ListingConflict lives with the listings table; the package imports it from here.
__all__ = [
    "DEFAULT_CHATBOT_SETTINGS",
    "Chatbot",
    "ListingConflict",
    "Store",
    "Workspace",
    "month_of",
]

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


def month_of(at: float) -> str:
    """The calendar month (UTC) of a timestamp, as ``YYYY-MM``."""
    return time.strftime("%Y-%m", time.gmtime(at))


class Store(ListingTable):
    """The emulator's state in SQLite (see :mod:`.database` for the threading rules)."""

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
