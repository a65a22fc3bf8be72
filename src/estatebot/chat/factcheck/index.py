"""The chatbot's listings made searchable by what an answer names: MLS number, address, URL.

:class:`ListingIndex` is built once from a listings frame (the canonical frame of
``pull_listings``, or any frame with some of its columns) and then answers, for a name found in
a text, which listing it is. Building it costs one pass over the frame; reuse it for many
answers while the listings stay the same.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pandas as pd

from estatebot.chat.factcheck.addresses import address_key, street_key
from estatebot.chat.factcheck.facts import city_pattern

__all__ = ["KEY_COLUMNS", "VALUE_COLUMNS", "ListingIndex", "url_key"]

#: The columns that name a listing; a listings frame needs at least one of them.
KEY_COLUMNS: tuple[str, ...] = ("MLSNumber", "Address", "Url")

#: The columns whose values are checked (a claim on a column the frame lacks is not read).
VALUE_COLUMNS: tuple[str, ...] = (
    "City", "SalePrice", "RentPrice", "Bedrooms", "Bathrooms", "BuildingArea", "AreaUnit",
    "Status", "SaleType", "CurrencySymbol",
)  # fmt: skip


def url_key(url: str) -> str:
    """A URL as compared: no scheme, no ``www.``, no trailing slash, query or fragment; lower
    case."""
    parts = urlsplit(url if "//" in url else f"//{url}")
    host = (parts.hostname or "").removeprefix("www.")
    return f"{host}{parts.path.rstrip('/')}".casefold()


def _value(raw: Any) -> Any:
    """A cell as a plain Python value; None for NA."""
    if raw is None or raw is pd.NA:
        return None
    if isinstance(raw, float) and math.isnan(raw):
        return None
    if hasattr(raw, "item"):  # numpy scalars
        raw = raw.item()
    if isinstance(raw, str):
        return raw.strip() or None
    return raw


@dataclass(frozen=True)
class Listing:
    """One listing as the fact-check sees it: its name for people and the values checked."""

    position: int
    id: int | None
    name: str
    values: Mapping[str, Any]


class ListingIndex:
    """A listings frame, searchable by MLS number, address (with or without its unit) and URL."""

    def __init__(self, frame: pd.DataFrame) -> None:
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(
                f"listings must be a DataFrame (as pull_listings gives), not {type(frame).__name__}"
            )
        if not any(column in frame.columns for column in KEY_COLUMNS):
            raise ValueError(
                "the listings frame has none of the columns that name a listing: "
                f"{', '.join(KEY_COLUMNS)} (columns given: {', '.join(map(str, frame.columns))})"
            )
        self.columns = frozenset(str(c) for c in frame.columns)
        self.listings: list[Listing] = []
        self.by_mls: dict[str, int] = {}
        self.by_address: dict[tuple[str, ...], int] = {}
        self.by_street: dict[tuple[str, ...], list[int]] = {}
        self.by_url: dict[str, int] = {}
        self.url_hosts: set[str] = set()
        self.cities: dict[str, str] = {}
        wanted = [c for c in (*KEY_COLUMNS, *VALUE_COLUMNS, "ID") if c in frame.columns]
        for position, record in enumerate(frame[wanted].to_dict(orient="records")):
            values = {str(key): _value(value) for key, value in record.items()}
            self._add(position, values)
        self.city_finder = city_pattern(self.cities)

    def _add(self, position: int, values: dict[str, Any]) -> None:
        mls = values.get("MLSNumber")
        address = values.get("Address")
        url = values.get("Url")
        raw_id = values.get("ID")
        name = str(mls or address or url or f"row {position}")
        self.listings.append(
            Listing(position, None if raw_id is None else int(raw_id), name, values)
        )
        if mls is not None:
            self.by_mls.setdefault(str(mls).casefold(), position)
        if address is not None:
            key = address_key(str(address))
            if key:
                self.by_address.setdefault(key, position)
                self.by_street.setdefault(street_key(key), []).append(position)
        if url is not None:
            link = url_key(str(url))
            if link:
                self.by_url.setdefault(link, position)
                self.url_hosts.add(link.split("/", 1)[0])
        city = values.get("City")
        if city is not None:
            self.cities.setdefault(str(city).casefold(), str(city))

    # ------------------------------------------------------------------ lookups

    def mls(self, number: str) -> Listing | None:
        """The listing with this MLS number (any case), or None."""
        position = self.by_mls.get(number.casefold())
        return None if position is None else self.listings[position]

    def url(self, url: str) -> tuple[Listing | None, bool]:
        """The listing at this URL, and whether the URL is on a host the listings' URLs use
        (an unknown URL there names a listing the chatbot does not have)."""
        key = url_key(url)
        position = self.by_url.get(key)
        if position is not None:
            return self.listings[position], True
        return None, key.split("/", 1)[0] in self.url_hosts

    def is_address_prefix(self, key: tuple[str, ...]) -> bool:
        """Whether some listing's address key starts with ``key`` (so reading on may match)."""
        return key in self._prefixes

    @property
    def _prefixes(self) -> frozenset[tuple[str, ...]]:
        cached = self.__dict__.get("_prefix_cache")
        if cached is None:
            cached = frozenset(key[:n] for key in self.by_address for n in range(1, len(key) + 1))
            self.__dict__["_prefix_cache"] = cached
        return cached
