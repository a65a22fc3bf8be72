"""What the store keeps about a chatbot's listings until they change, and the reads it serves.

Per chatbot, until its listings change: the IDs each RealEstateList filter matches, the fields
the answer engine reads, and whatever the app derives per listing (its encoded List records), so
paging and answering do no repeated work. Every write to a chatbot's listings calls
:meth:`ListingCache._changed`, which forgets all of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .database import Database


@dataclass(frozen=True)
class ListingFilter:
    """The filters of RealEstateList; None means "any"."""

    city: str | None = None
    sale_type: str | None = None
    mls_number: str | None = None


def fold_city(city: Any) -> str | None:
    """A city as it is stored and searched: trimmed and case-folded; None when blank."""
    text = str(city).strip().casefold() if city is not None else ""
    return text or None


class ListingCache(Database):
    """The database, with what it read about each chatbot's listings kept until they change."""

    def __init__(self, path: str = ":memory:") -> None:
        super().__init__(path)
        self._listing_cache: dict[str, tuple[tuple[str, ...], list[dict[str, Any]]]] = {}
        # Per chatbot, until its listings change: the IDs each filter matches, and whatever the
        # app derives per listing (its encoded List records), so paging does no repeated work.
        self._matches: dict[str, dict[ListingFilter, list[int]]] = {}
        self._derived: dict[str, dict[int, Any]] = {}

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
            params.append(fold_city(filters.city))
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
