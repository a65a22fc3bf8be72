"""The listings table: inserting, replacing, deleting and looking up a chatbot's listings.

Listings are stored as their validated Create/Update body (less ``SerialNumber``) in a JSON
column, beside the few columns that are searched: MLS number, URL, city (case-folded) and sale
type. ``(chatbot, MLSNumber)`` and ``(chatbot, Url)`` are unique; an empty MLS number or URL is
stored as NULL and never conflicts. Every write empties the chatbot's cache
(:mod:`.listing_cache`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic_core import to_json

from .listing_cache import ListingCache, fold_city
from .quoting import quoted

# A NewOaks key is a listing ID: ASCII digits only. str.isdigit() also takes "²" and "٣",
# which int() refuses or reads as another number.
_LISTING_ID = re.compile(r"[0-9]+")
# The largest ID SQLite's INTEGER holds; a longer key cannot be a listing's.
_MAX_ID = 2**63 - 1
# Keys looked up per query (well under SQLite's limit on parameters).
_LOOKUP_BATCH = 500


class ListingConflict(Exception):
    """A listing with the same MLS number or URL already exists on the chatbot."""

    def __init__(self, field: str, value: str) -> None:
        self.field = field
        self.value = value
        super().__init__(f"A listing with {field} {quoted(value)} already exists on this chatbot")


def _to_json(data: Mapping[str, Any]) -> str:
    # pydantic-core's serializer is several times faster than json.dumps on bulk loads.
    return to_json(dict(data)).decode("utf-8")


def _key_columns(data: Mapping[str, Any]) -> tuple[str | None, str | None, str | None, str]:
    return (
        data.get("MLSNumber") or None,
        data.get("Url") or None,
        fold_city(data.get("City")),
        str(data["SaleType"]),
    )


def _listing_id(key: str) -> int | None:
    """The listing ID a NewOaks key names, or None when it can name none."""
    digits = key.strip()
    if not _LISTING_ID.fullmatch(digits):
        return None
    # Leading zeros stripped first: int() of a long run of digits is slow, and refused beyond
    # 4300 digits, and no ID has more than 19.
    digits = digits.lstrip("0") or "0"
    if len(digits) > len(str(_MAX_ID)) or int(digits) > _MAX_ID:
        return None
    return int(digits)


class ListingTable(ListingCache):
    """The database with its listings: writes (each one empties the cache) and lookups."""

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

    def allow_duplicate_keys(self) -> None:
        """Behave like a deployment that does not refuse a second listing with the same MLS
        number or URL (no 409): for tests of what a client must never do twice."""
        with self._transaction() as db:
            db.execute("DROP INDEX IF EXISTS listings_by_mls")
            db.execute("DROP INDEX IF EXISTS listings_by_url")
            db.execute("CREATE INDEX IF NOT EXISTS listings_by_mls_any ON listings(serial, mls)")
            db.execute("CREATE INDEX IF NOT EXISTS listings_by_url_any ON listings(serial, url)")

    def create_listing(self, serial: str, data: Mapping[str, Any]) -> int:
        """Insert one listing; returns its ID (raises :class:`ListingConflict`)."""
        return self.add_listings(serial, [data])[0]

    def find_listing_ids(self, serial: str, key_type: str, key: str) -> list[int]:
        """IDs of the listings a key addresses (KeyType NewOaks, MLSNumber or URL)."""
        return self.find_many_listing_ids(serial, key_type, [key])

    def find_many_listing_ids(self, serial: str, key_type: str, keys: Iterable[str]) -> list[int]:
        """IDs (ascending, each once) of the listings any of these keys addresses.

        Keys are looked up in batches, not one query each: a Delete may carry a hundred
        thousand keys, and the lookups run on the server's event loop.
        """
        if key_type == "NewOaks":
            column = "id"
            wanted: set[Any] = {i for i in map(_listing_id, keys) if i is not None}
        else:
            column = "mls" if key_type == "MLSNumber" else "url"
            wanted = set(keys)
        values = list(wanted)
        found: set[int] = set()
        with self._lock:
            for start in range(0, len(values), _LOOKUP_BATCH):
                batch = values[start : start + _LOOKUP_BATCH]
                rows = self._db.execute(
                    f"SELECT id FROM listings WHERE serial = ? AND {column} IN "
                    f"({','.join('?' * len(batch))})",
                    [serial, *batch],
                )
                found.update(int(row[0]) for row in rows)
        return sorted(found)

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
        ids = self.find_many_listing_ids(serial, key_type, keys)
        if not ids:
            return 0
        with self._transaction() as db:
            db.executemany(
                "DELETE FROM listings WHERE serial = ? AND id = ?", [(serial, i) for i in ids]
            )
        self._changed(serial)
        return len(ids)

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
