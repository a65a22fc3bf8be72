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
from typing import Literal

from estatebot.api.errors import SheetError
from estatebot.listings.schema import COLUMNS

#: How a cell of a source is typed (see :mod:`estatebot.listings.sheet.cells`).
Kind = Literal["text", "id", "zip", "number", "int", "bool"]

#: How a header was matched, as shown in ``Sheet.mapping``.
How = Literal["api name", "reso", "common export", "user mapping", "extension", "ignored"]


@dataclass(frozen=True)
class Source:
    """One thing a header can mean: its name, the listing field it feeds, and its cell kind."""

    name: str
    field: str | None
    kind: Kind
    #: Several headers may feed this source at once (e.g. every ``OpenHouse…`` column).
    multi: bool = False


_SOURCE_ROWS: tuple[tuple[str, str | None, Kind], ...] = (
    # ---- listing fields read as they are (the API names)
    ("ID", "ID", "int"),
    ("MLSNumber", "MLSNumber", "id"),
    ("Url", "Url", "text"),
    ("SaleType", "SaleType", "text"),
    ("Status", "Status", "text"),
    ("CurrencySymbol", "CurrencySymbol", "text"),
    ("PropertyType", "PropertyType", "text"),
    ("Bedrooms", "Bedrooms", "int"),
    ("Bathrooms", "Bathrooms", "number"),
    ("YearBuilt", "YearBuilt", "int"),
    ("DaysOnMarket", "DaysOnMarket", "int"),
    ("LotArea", "LotArea", "number"),
    ("BuildingArea", "BuildingArea", "number"),
    ("AreaUnit", "AreaUnit", "text"),
    ("Images", "Images", "text"),
    ("Tours", "Tours", "text"),
    ("ParkingSpots", "ParkingSpots", "number"),
    ("Description", "Description", "text"),
    ("ExtensionColumn", "ExtensionColumn", "text"),
    ("Location", "Location", "text"),
    ("Address", "Address", "text"),
    ("City", "City", "text"),
    ("State", "State", "text"),
    ("ZIP", "ZIP", "zip"),
    ("Latitude", "Latitude", "number"),
    ("Longitude", "Longitude", "number"),
    ("SalePrice", "SalePrice", "number"),
    ("UnitAreaPrice", "UnitAreaPrice", "number"),
    ("HOAMonth", "HOAMonth", "number"),
    ("ZestimatePrice", "ZestimatePrice", "number"),
    ("RentPrice", "RentPrice", "number"),
    ("SpaceType", "SpaceType", "text"),
    ("DepositFee", "DepositFee", "number"),
    # ---- sources combined by a rule into a listing field
    ("PropertySubType", "PropertyType", "text"),
    ("BathroomsFull", "Bathrooms", "int"),
    ("BathroomsHalf", "Bathrooms", "int"),
    ("LivingArea", "BuildingArea", "number"),
    ("LivingAreaUnits", "AreaUnit", "text"),
    ("BuildingAreaTotal", "BuildingArea", "number"),
    ("BuildingAreaUnits", "AreaUnit", "text"),
    ("BuildingAreaSquareFeet", "BuildingArea", "number"),
    ("LotSizeSquareFeet", "LotArea", "number"),
    ("LotSizeArea", "LotArea", "number"),
    ("LotSizeUnits", "LotArea", "text"),
    ("LotSizeAcres", "LotArea", "number"),
    ("LotSize", "LotArea", "number"),
    ("GarageSpaces", "ParkingSpots", "number"),
    ("CarportSpaces", "ParkingSpots", "number"),
    ("OpenParkingSpaces", "ParkingSpots", "number"),
    ("UnparsedAddress", "Address", "text"),
    ("StreetNumber", "Address", "text"),
    ("StreetDirPrefix", "Address", "text"),
    ("StreetName", "Address", "text"),
    ("StreetSuffix", "Address", "text"),
    ("StreetDirSuffix", "Address", "text"),
    ("UnitNumber", "Address", "text"),
    ("PhotoURL", "Images", "text"),
    ("PrimaryPhoto", "Images", "text"),
    ("AltPhotos", "Images", "text"),
    ("ListPrice", "SalePrice", "number"),
    ("ClosePrice", "SalePrice", "number"),
    ("AssociationFee", "HOAMonth", "number"),
    ("AssociationFeeFrequency", "HOAMonth", "text"),
    ("InternetAutomatedValuationDisplayYN", "ZestimatePrice", "bool"),
    # ---- kept in ExtensionColumn by rule, whatever ``extensions`` says
    ("ListingKey", "ExtensionColumn", "text"),
)

_MULTI: frozenset[str] = frozenset({"OpenHouse", "VirtualTour"})

#: Every source a header can feed, by name.
SOURCES: dict[str, Source] = {
    name: Source(name, field, kind) for name, field, kind in _SOURCE_ROWS
} | {
    "OpenHouse": Source("OpenHouse", "Tours", "text", multi=True),
    "VirtualTour": Source("VirtualTour", "Tours", "text", multi=True),
}

#: Header spellings of each source: RESO Data Dictionary names, then common export headers.
#: The source's own name (the API field name, or the RESO name for combined sources) always
#: matches too.
ALIASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    #  source               (RESO names,                          common export headers)
    "ID": ((), ("NewOaks ID", "NewOaksID")),
    "MLSNumber": (("ListingId",), ("MLS#", "MLS #", "ML #", "MLS Number", "List Number", "mls_id")),
    "Url": (("ListingURL",), ("URL", "property_url")),
    "SaleType": ((), ("listing_type",)),
    "Status": (("StandardStatus",), ("STATUS",)),
    "PropertyType": (("PropertyType",), ("PROPERTY TYPE", "style")),
    "PropertySubType": (("PropertySubType",), ()),
    "Bedrooms": (("BedroomsTotal",), ("BEDS", "Tot BR", "# Bedrooms")),
    "Bathrooms": ((), ("BATHS", "Tot Baths", "Total Bathrooms")),
    "BathroomsFull": (("BathroomsFull",), ("full_baths",)),
    "BathroomsHalf": (("BathroomsHalf",), ("half_baths",)),
    "LivingArea": (("LivingArea",), ()),
    "LivingAreaUnits": (("LivingAreaUnits",), ()),
    "BuildingAreaTotal": (("BuildingAreaTotal",), ()),
    "BuildingAreaUnits": (("BuildingAreaUnits",), ()),
    "BuildingAreaSquareFeet": ((), ("SQUARE FEET", "SqFt", "Approx SQFT", "TotFlArea")),
    "LotSizeSquareFeet": (("LotSizeSquareFeet",), ("Approx Lot SqFt", "lot_sqft")),
    "LotSizeArea": (("LotSizeArea",), ()),
    "LotSizeUnits": (("LotSizeUnits",), ()),
    "LotSizeAcres": (("LotSizeAcres",), ("Approx Lot Acres",)),
    "LotSize": ((), ("LOT SIZE",)),
    "YearBuilt": (("YearBuilt",), ("YEAR BUILT", "Yr Blt")),
    "DaysOnMarket": (("DaysOnMarket",), ("DAYS ON MARKET", "DOM", "Days On MLS", "days_on_mls")),
    "ParkingSpots": (("ParkingTotal",), ()),
    "GarageSpaces": (("GarageSpaces",), ("parking_garage",)),
    "CarportSpaces": (("CarportSpaces",), ()),
    "OpenParkingSpaces": (("OpenParkingSpaces",), ()),
    "Description": (("PublicRemarks",), ("Public Remarks", "text")),
    "Address": ((), ("ADDRESS", "full_street_line")),
    "UnparsedAddress": (("UnparsedAddress",), ()),
    "StreetNumber": (("StreetNumber",), ()),
    "StreetDirPrefix": (("StreetDirPrefix",), ()),
    "StreetName": (("StreetName",), ()),
    "StreetSuffix": (("StreetSuffix",), ()),
    "StreetDirSuffix": (("StreetDirSuffix",), ()),
    "UnitNumber": (("UnitNumber",), ()),
    "City": (("City",), ("CITY",)),
    "State": (("StateOrProvince",), ("STATE OR PROVINCE",)),
    "ZIP": (("PostalCode",), ("ZIP OR POSTAL CODE", "Zip Code", "zip_code")),
    "Latitude": (("Latitude",), ("LATITUDE", "Geo Lat")),
    "Longitude": (("Longitude",), ("LONGITUDE", "Geo Lon")),
    "PhotoURL": ((), ("Photo URL",)),
    "PrimaryPhoto": ((), ("primary_photo",)),
    "AltPhotos": ((), ("alt_photos",)),
    "VirtualTour": (("VirtualTourURLUnbranded", "VirtualTourURLBranded"), ()),
    "ListPrice": (("ListPrice",), ("PRICE", "List Price", "list_price")),
    "ClosePrice": (("ClosePrice",), ("Sold Price", "sold_price")),
    "UnitAreaPrice": ((), ("$/SQUARE FEET", "Price/SqFt", "price_per_sqft")),
    "HOAMonth": ((), ("HOA/MONTH", "hoa_fee")),
    "AssociationFee": (("AssociationFee",), ()),
    "AssociationFeeFrequency": (("AssociationFeeFrequency",), ()),
    "ZestimatePrice": ((), ("estimated_value",)),
    "InternetAutomatedValuationDisplayYN": (("InternetAutomatedValuationDisplayYN",), ()),
    "ListingKey": (("ListingKey",), ()),
}

#: Header beginnings that feed a source (``URL (SEE https://…)`` in portal exports; every
#: ``OpenHouse…`` RESO field and the portal's ``NEXT OPEN HOUSE …`` columns).
PREFIXES: tuple[tuple[str, str, How], ...] = (
    ("URL (", "Url", "common export"),
    ("OpenHouse", "OpenHouse", "reso"),
    ("NEXT OPEN HOUSE", "OpenHouse", "common export"),
)

#: Headers matched literally (case and spacing aside) before any alias, because their
#: normalized form collides with a field they do not mean: a portal's ``SALE TYPE`` column says
#: "MLS Listing" or "Past Sale", not for_sale or for_rent.
LITERAL: dict[str, How] = {
    "SALE TYPE": "extension",
}

#: Agent-only fields that must never reach a public listing, not even in ExtensionColumn.
PRIVATE: tuple[str, ...] = (
    "PrivateRemarks", "PrivateOfficeRemarks", "ShowingInstructions", "ShowingContactPhone",
    "ShowingContactName", "LockBoxLocation", "LockBoxSerialNumber", "LockBoxType", "AccessCode",
    "OwnerName", "OwnerPhone",
)  # fmt: skip

#: Special targets of a user mapping besides fields and sources.
MAP_TO_EXTENSION = "ExtensionColumn"
MAP_TO_IGNORE = "ignore"

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
