"""The tables behind header matching: every source a sheet column can feed (its kind, and the
listing field it goes to), the header spellings of each export style, prefixes, and the
literal and private headers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: How a cell of a source is typed (see :mod:`estatebot.listings.sheet.fields.cell_types`).
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
