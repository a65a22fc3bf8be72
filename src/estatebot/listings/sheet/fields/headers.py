"""Which listing field each spreadsheet header feeds.

MLS exports come in three header styles: the listing API's own field names, RESO Data Dictionary
names (``ListingId``, ``BedroomsTotal``) and the headers of common exports (``MLS#``, ``BEDS``,
``full_baths``). A header is compared with every alias after :func:`normalize_header`, which
ignores case, spaces and punctuation but keeps the few symbols that carry meaning (``$``, ``/``,
``#``, ``%``): ``$/SQUARE FEET`` (a price per area) must not match ``SQUARE FEET`` (an area).

Headers do not map straight to listing fields: many feed a *source* that a rule combines with
others (``BathroomsFull`` + ``BathroomsHalf`` → ``Bathrooms``). :data:`SOURCES` lists every
source with the field it feeds and how its cells are typed; :data:`ALIASES` lists the headers of
each source. Both are plain data: adding a header spelling is a one-line change.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from estatebot.errors import SheetError
from estatebot.listings.schema import COLUMNS
from estatebot.listings.sheet.fields.sources import (
    ALIASES,
    LITERAL,
    MAP_TO_EXTENSION,
    MAP_TO_IGNORE,
    PREFIXES,
    PRIVATE,
    SOURCES,
    How,
)

_SYMBOLS = {"$": " dollar ", "/": " per ", "#": " number ", "%": " percent ", "&": " and "}
_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def normalize_header(header: str) -> str:
    """A header reduced for comparison: case, spaces and punctuation dropped, symbols spelled.

    >>> normalize_header(" MLS # ") == normalize_header("mls_number")
    True
    >>> normalize_header("$/SQUARE FEET") == normalize_header("SQUARE FEET")
    False
    """
    text = unicodedata.normalize("NFKC", header).lower()
    for symbol, word in _SYMBOLS.items():
        text = text.replace(symbol, word)
    return _NON_ALNUM.sub("", text)


def _literal_key(header: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", header).upper().split())


def _build_index() -> dict[str, list[tuple[str, str, How]]]:
    """Normalized spelling → every (alias, source, how) with that spelling."""
    index: dict[str, list[tuple[str, str, How]]] = {}

    def add(alias: str, source: str, how: How) -> None:
        entries = index.setdefault(normalize_header(alias), [])
        if entries and entries[0][1] != source:
            # The table itself must be unambiguous: one spelling, one meaning.
            raise AssertionError(f"header alias {alias!r} means both {entries[0][1]} and {source}")
        entries.append((alias, source, how))

    # API names first, so a header that is both an API name and a RESO name reports "api name".
    for column in COLUMNS:
        if column in SOURCES:
            add(column, column, "api name")
    for source, (reso, _) in ALIASES.items():
        for alias in reso:
            add(alias, source, "reso")
    for source, (_, common) in ALIASES.items():
        for alias in common:
            add(alias, source, "common export")
    for source in SOURCES:
        add(source, source, "reso")
    for name in PRIVATE:
        add(name, "", "ignored")
    return index


_INDEX: dict[str, list[tuple[str, str, How]]] = _build_index()


def _lookup(header: str) -> tuple[str, How] | None:
    entries = _INDEX.get(normalize_header(header))
    if not entries:
        return None
    # Report how the header is spelled: "MLS#" is a common export header even though it
    # normalizes like the API name MLSNumber.
    folded = _literal_key(header)
    for alias, source, how in entries:
        if _literal_key(alias) == folded:
            return source, how
    _, source, how = entries[0]
    return source, how


@dataclass(frozen=True)
class HeaderMatch:
    """What one source header means: its position, the source it feeds, and how it matched.

    ``source`` is None for headers that feed no listing field (``how`` "extension" or
    "ignored").
    """

    position: int
    header: str
    source: str | None
    how: How

    @property
    def field(self) -> str | None:
        """The listing field this header feeds, or None."""
        return SOURCES[self.source].field if self.source is not None else None


def match_header(header: str) -> tuple[str | None, How] | None:
    """The source and how-it-matched of one header by the alias table, or None if unknown."""
    literal = LITERAL.get(_literal_key(header))
    if literal is not None:
        return None, literal
    found = _lookup(header)
    if found is not None:
        source, how = found
        return (source or None), how
    folded = _literal_key(header)
    for prefix, source, how in PREFIXES:
        if folded.startswith(prefix.upper()):
            return source, how
    return None


def resolve_target(target: str) -> str | None:
    """The source a user mapping target names, or None when it names nothing known.

    A target may be a listing field (``Bedrooms``), a source (``BathroomsFull``), any alias of
    the table (``BedroomsTotal``), or ``"ExtensionColumn"`` / ``"ignore"`` (returned as is).
    """
    if target in (MAP_TO_EXTENSION, MAP_TO_IGNORE) or target in SOURCES:
        return target
    found = _lookup(target)
    if found is None or not found[0]:
        return None
    return found[0]


def match_headers(
    headers: Sequence[str],
    mapping: Mapping[str, str] | None = None,
    *,
    extensions: bool = True,
) -> list[HeaderMatch]:
    """Match every header of a sheet, raising :class:`SheetError` on a conflict.

    ``mapping`` (``{header: field}``) always wins over the table; its keys match a header
    exactly or, failing that, after normalization. A target that names no field or source, or
    two headers feeding one field, raise :class:`SheetError` naming them. Headers the table does
    not know go to ExtensionColumn ("extension") when ``extensions`` is true, else "ignored".
    """
    user = _user_targets(headers, mapping or {})
    matches: list[HeaderMatch] = []
    for position, header in enumerate(headers):
        if position in user:
            target = user[position]
            if target == MAP_TO_IGNORE:
                matches.append(HeaderMatch(position, header, None, "ignored"))
            elif target == MAP_TO_EXTENSION:
                matches.append(HeaderMatch(position, header, None, "extension"))
            else:
                matches.append(HeaderMatch(position, header, target, "user mapping"))
            continue
        found = match_header(header)
        if found is None:
            how: How = "extension" if extensions else "ignored"
            matches.append(HeaderMatch(position, header, None, how))
            continue
        source, how = found
        if how == "extension" and not extensions:
            how = "ignored"
        matches.append(HeaderMatch(position, header, source, how))
    _check_conflicts(matches)
    return matches


def _user_targets(headers: Sequence[str], mapping: Mapping[str, str]) -> dict[int, str]:
    targets: dict[int, str] = {}
    exact = {header: i for i, header in reversed(list(enumerate(headers)))}
    loose = {normalize_header(h): i for i, h in reversed(list(enumerate(headers)))}
    for key, target in mapping.items():
        source = resolve_target(target)
        if source is None:
            known = ", ".join(sorted(SOURCES))
            raise SheetError(
                f"mapping names an unknown field {target!r} for header {key!r}; use a listing "
                f"field, one of {known}, 'ExtensionColumn' or 'ignore'",
                column=key,
                value=target,
            )
        position = exact.get(key)
        if position is None:
            position = loose.get(normalize_header(key))
        if position is not None:
            targets[position] = source
    return targets


def _check_conflicts(matches: Iterable[HeaderMatch]) -> None:
    by_source: dict[str, list[str]] = {}
    for match in matches:
        if match.source is not None and not SOURCES[match.source].multi:
            by_source.setdefault(match.source, []).append(match.header)
    for source, headers in by_source.items():
        if len(headers) > 1:
            names = " and ".join(repr(h) for h in headers)
            raise SheetError(
                f"two headers map to {source}: {names}; keep one, or pass mapping= to send the "
                "other elsewhere (e.g. {header: 'ExtensionColumn'} or {header: 'ignore'})",
                column=headers[1],
            )


def unmatched_mapping_keys(headers: Sequence[str], mapping: Mapping[str, str]) -> list[str]:
    """The keys of a user mapping that match no header of the sheet."""
    exact = set(headers)
    loose = {normalize_header(h) for h in headers}
    return [k for k in mapping if k not in exact and normalize_header(k) not in loose]
