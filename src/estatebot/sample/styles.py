"""Writers of the three MLS export header styles, from market records (:mod:`.market`).

* **RESO** (``write_reso_xlsx``): RESO Data Dictionary names (``ListingId``, ``StandardStatus``,
  ``BathroomsFull``...), an xlsx as an MLS's RESO feed export gives it. ``PostalCode`` is a
  number cell formatted ``00000`` in every other row (so ``02108`` shows with its zero) and
  text in the others; ``Pool`` and ``View`` are extra columns no listing field takes.
* **portal** (``write_portal_csv``): a listing portal's CSV download (``SALE TYPE``, ``PRICE``,
  ``BEDS``, ``URL (SEE ...)``, ``MLS#``...), whose first data row is a disclaimer line. Portals
  offer the download for homes for sale only, so rentals are left out; it has no parking, photo
  or description columns.
* **MLS system** (``write_mls_system_xlsx``): an MLS system's own export (``ML #``, ``Tot BR``,
  ``Approx SQFT``...), with one- or two-letter status codes and parking by kind.

Every writer is deterministic: the same records give the same cells (and the CSV the same
bytes). :data:`READ_OPTIONS` holds, per style, the ``read_sheet`` arguments that fill what the
style does not say (the currency, and for the portal the parking and a lot-size unit).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from openpyxl import Workbook
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from .market import AS_OF

__all__ = [
    "MLS_SYSTEM_HEADERS",
    "PORTAL_DISCLAIMER",
    "PORTAL_HEADERS",
    "READ_OPTIONS",
    "RESO_HEADERS",
    "STATUS_CODES",
    "Formatted",
    "Style",
    "mls_system_table",
    "portal_table",
    "reso_table",
    "write_csv",
    "write_mls_system_xlsx",
    "write_portal_csv",
    "write_reso_xlsx",
    "write_xlsx",
]

Style = Literal["reso", "portal", "mls_system"]
Row = list[Any]

#: ``read_sheet`` keyword arguments for each style: the values its headers do not carry.
READ_OPTIONS: dict[Style, dict[str, Any]] = {
    "reso": {"defaults": {"CurrencySymbol": "$"}},
    "mls_system": {"defaults": {"CurrencySymbol": "$"}},
    # A portal download has no parking column and leaves the lot of a condo blank.
    "portal": {
        "defaults": {"CurrencySymbol": "$", "ParkingSpots": 0, "LotArea": 0},
        "lot_unit": "sqft",
    },
}

#: A fixed time for the workbook properties, so regenerating does not change them.
_CREATED = datetime(AS_OF.year, AS_OF.month, AS_OF.day, 6, 0)


@dataclass(frozen=True)
class Formatted:
    """A cell value with an Excel number format (``00000`` for a ZIP stored as a number)."""

    value: Any
    number_format: str


# --------------------------------------------------------------------------- cell helpers


def _number(value: float | int | None) -> int | float | None:
    """A number as a spreadsheet holds it: whole values as int."""
    if value is None:
        return None
    return int(value) if float(value).is_integer() else float(value)


def _text_number(value: float | int | None) -> str:
    """A number as a CSV writes it: ``2``, ``2.5``, ``246.67``; blank for None."""
    shown = _number(value)
    return "" if shown is None else repr(shown)


def _reso_property_type(record: Mapping[str, Any]) -> str:
    return "Residential Lease" if record["SaleType"] == "for_rent" else "Residential"


def _photos(record: Mapping[str, Any]) -> str:
    return ",".join(record["Images"])


def _digits(mls: str) -> int:
    return int("".join(ch for ch in mls if ch.isdigit()) or "0")


# --------------------------------------------------------------------------- RESO


RESO_HEADERS: tuple[str, ...] = (
    "ListingKey", "ListingId", "StandardStatus", "PropertyType", "PropertySubType", "ListPrice",
    "ClosePrice", "BedroomsTotal", "BathroomsFull", "BathroomsHalf", "LivingArea",
    "LivingAreaUnits", "LotSizeSquareFeet", "LotSizeAcres", "YearBuilt", "DaysOnMarket",
    "ParkingTotal", "AssociationFee", "AssociationFeeFrequency", "UnparsedAddress", "City",
    "StateOrProvince", "PostalCode", "Latitude", "Longitude", "PublicRemarks", "ListingURL",
    "PhotoURL", "VirtualTourURLUnbranded", "OpenHouseStartTime", "Pool", "View",
)  # fmt: skip


def _reso_row(position: int, record: Mapping[str, Any]) -> Row:
    acres = record["LotSizeAcres"]
    # Half the rows hold the ZIP as a number shown through a 00000 format, as many exports do.
    postal: Any = record["ZIP"]
    if position % 2 == 0:
        postal = Formatted(int(record["ZIP"]), "00000")
    open_house: Any = None
    if record["OpenHouseStartTime"]:
        start = datetime.fromisoformat(record["OpenHouseStartTime"])
        open_house = Formatted(start, "yyyy-mm-dd hh:mm")
    return [
        record["ListingKey"],
        record["MLSNumber"],
        record["StandardStatus"],
        _reso_property_type(record),
        record["PropertyType"],
        record["ListPrice"],
        record["ClosePrice"],
        record["Bedrooms"],
        record["BathroomsFull"],
        record["BathroomsHalf"],
        _number(record["BuildingArea"]),
        "Square Feet",
        _number(record["LotArea"]) if acres is None else None,
        acres,
        record["YearBuilt"],
        record["DaysOnMarket"],
        record["ParkingSpots"],
        record["AssociationFee"],
        record["AssociationFeeFrequency"],
        record["Address"],
        record["City"],
        record["State"],
        postal,
        record["Latitude"],
        record["Longitude"],
        record["Description"],
        record["Url"],
        _photos(record),
        record["VirtualTourURL"],
        open_house,
        record["Pool"],
        record["View"],
    ]


def reso_table(records: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[Row]]:
    """The RESO-names export of ``records``: headers and rows of cell values."""
    return list(RESO_HEADERS), [_reso_row(i, r) for i, r in enumerate(records)]


def write_reso_xlsx(records: Sequence[Mapping[str, Any]], path: str | PathLike[str]) -> Path:
    """Write ``records`` as a RESO-names xlsx export; returns the path."""
    headers, rows = reso_table(records)
    return write_xlsx(path, headers, rows, title="Property")


# --------------------------------------------------------------------------- portal

#: The line a portal puts in the first data row of its downloads.
PORTAL_DISCLAIMER = (
    "In accordance with local MLS rules, some MLS listings are not included in the download"
)
_PORTAL_URL_HEADER = (
    "URL (SEE https://www.portal.example/buy-a-home/comparative-market-analysis FOR INFO ON "
    "PRICING)"
)
PORTAL_HEADERS: tuple[str, ...] = (
    "SALE TYPE", "SOLD DATE", "PROPERTY TYPE", "ADDRESS", "CITY", "STATE OR PROVINCE",
    "ZIP OR POSTAL CODE", "PRICE", "BEDS", "BATHS", "SQUARE FEET", "LOT SIZE", "YEAR BUILT",
    "DAYS ON MARKET", "$/SQUARE FEET", "HOA/MONTH", "STATUS", "NEXT OPEN HOUSE START TIME",
    "NEXT OPEN HOUSE END TIME", _PORTAL_URL_HEADER, "SOURCE", "MLS#", "FAVORITE", "INTERESTED",
    "LATITUDE", "LONGITUDE",
)  # fmt: skip
_PORTAL_TYPES = {
    "Single Family Residence": "Single Family Residential",
    "Condominium": "Condo/Co-op",
    "Townhouse": "Townhouse",
    "Duplex": "Multi-Family (2-4 Unit)",
}
_PORTAL_STATUS = {
    "Active": "Active",
    "Active Under Contract": "Contingent",
    "Pending": "Pending",
    "Coming Soon": "Coming Soon",
    "Closed": "Sold",
}


def _portal_time(moment: datetime) -> str:
    # Portals write "June-7-2025 01:00 PM".
    return f"{moment:%B}-{moment.day}-{moment.year} {moment:%I:%M %p}"


def _portal_row(record: Mapping[str, Any]) -> list[str]:
    closed = record["StandardStatus"] == "Closed"
    sold = sold_date(record)
    start = end = ""
    if record["OpenHouseStartTime"]:
        moment = datetime.fromisoformat(record["OpenHouseStartTime"])
        start, end = _portal_time(moment), _portal_time(moment + timedelta(hours=2))
    price = record["SalePrice"]
    area = record["BuildingArea"]
    return [
        "PAST SALE" if closed else "MLS Listing",
        f"{sold:%B}-{sold.day}-{sold.year}" if closed else "",
        _PORTAL_TYPES[record["PropertyType"]],
        record["Address"],
        record["City"],
        record["State"],
        record["ZIP"],
        _text_number(price),
        str(record["Bedrooms"]),
        _text_number(record["Bathrooms"]),
        _text_number(area),
        _text_number(record["LotArea"] or None),
        str(record["YearBuilt"]),
        str(record["DaysOnMarket"]),
        str(round(price / area)),
        _text_number(record["HOAMonth"]),
        _PORTAL_STATUS[record["StandardStatus"]],
        start,
        end,
        record["Url"],
        f"{record['City']} MLS",
        record["MLSNumber"],
        "N",
        "Y",
        repr(record["Latitude"]),
        repr(record["Longitude"]),
    ]


def portal_table(records: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The portal download of ``records``: headers, the disclaimer row, then one row per home
    for sale (rentals and listings that are not published are left out)."""
    rows = [[PORTAL_DISCLAIMER] + [""] * (len(PORTAL_HEADERS) - 1)]
    rows += [
        _portal_row(r)
        for r in records
        if r["SaleType"] == "for_sale" and r["StandardStatus"] in _PORTAL_STATUS
    ]
    return list(PORTAL_HEADERS), rows


def write_portal_csv(records: Sequence[Mapping[str, Any]], path: str | PathLike[str]) -> Path:
    """Write ``records`` as a portal-style CSV download; returns the path."""
    headers, rows = portal_table(records)
    return write_csv(path, headers, rows)


# --------------------------------------------------------------------------- MLS system

#: The status codes of the MLS-system export (as its reader's code table reads them).
STATUS_CODES: dict[str, str] = {
    "Active": "A",
    "Active Under Contract": "U",
    "Pending": "P",
    "Coming Soon": "CS",
    "Closed": "S",
    "Withdrawn": "W",
    "Expired": "X",
    "Canceled": "C",
    "Hold": "H",
}
MLS_SYSTEM_HEADERS: tuple[str, ...] = (
    "ML #", "Status", "Property Type", "Property Sub Type", "Address", "City", "State",
    "Zip Code", "List Price", "Sold Price", "Tot BR", "Tot Baths", "Approx SQFT",
    "Approx Lot SqFt", "Yr Blt", "DOM", "Garage Spaces", "Carport Spaces", "Open Parking Spaces",
    "HOA Fee", "Geo Lat", "Geo Lon", "Public Remarks", "Photo URL", "URL",
)  # fmt: skip


def _mls_system_row(record: Mapping[str, Any]) -> Row:
    return [
        record["MLSNumber"],
        STATUS_CODES[record["StandardStatus"]],
        _reso_property_type(record),
        record["PropertyType"],
        record["Address"],
        record["City"],
        record["State"],
        Formatted(int(record["ZIP"]), "00000"),
        record["ListPrice"],
        record["ClosePrice"],
        record["Bedrooms"],
        _number(record["Bathrooms"]),
        _number(record["BuildingArea"]),
        _number(record["LotArea"]),
        record["YearBuilt"],
        record["DaysOnMarket"],
        record["GarageSpaces"],
        record["CarportSpaces"],
        record["OpenParkingSpaces"],
        record["HOAMonth"],
        record["Latitude"],
        record["Longitude"],
        record["Description"],
        _photos(record),
        record["Url"],
    ]


def mls_system_table(records: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[Row]]:
    """The MLS-system export of ``records``: headers and rows of cell values."""
    return list(MLS_SYSTEM_HEADERS), [_mls_system_row(r) for r in records]


def write_mls_system_xlsx(records: Sequence[Mapping[str, Any]], path: str | PathLike[str]) -> Path:
    """Write ``records`` as an MLS-system xlsx export with coded statuses; returns the path."""
    headers, rows = mls_system_table(records)
    return write_xlsx(path, headers, rows, title="Export")


# --------------------------------------------------------------------------- files


def write_xlsx(
    path: str | PathLike[str],
    headers: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    title: str = "Sheet1",
    widths: Callable[[str], float] | None = None,
) -> Path:
    """Write one worksheet: a bold header row, then the rows (``Formatted`` cells keep their
    number format). The workbook's timestamps are fixed, so the same rows give the same file
    contents."""
    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None  # a new workbook always has one sheet
    sheet.title = title
    sheet.append(list(headers))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for r, row in enumerate(rows, start=2):
        for c, value in enumerate(row, start=1):
            if isinstance(value, Formatted):
                cell = sheet.cell(r, c, value.value)
                cell.number_format = value.number_format
            elif value is not None:
                sheet.cell(r, c, value)
    sheet.freeze_panes = "A2"
    for c, header in enumerate(headers, start=1):
        width = widths(header) if widths else min(max(len(header) + 2, 10), 40)
        sheet.column_dimensions[get_column_letter(c)].width = width
    workbook.properties.creator = "estatebot sample generator"
    workbook.properties.created = _CREATED
    workbook.properties.modified = _CREATED
    target = Path(path)
    workbook.save(target)
    return target


def write_csv(
    path: str | PathLike[str], headers: Sequence[str], rows: Iterable[Sequence[str]]
) -> Path:
    """Write a CSV file (UTF-8, ``\\n`` line ends, quoting only where needed)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(rows)
    target = Path(path)
    target.write_bytes(buffer.getvalue().encode("utf-8"))
    return target


def sold_date(record: Mapping[str, Any]) -> date:
    """The sold date the portal export gives a Closed listing: a few weeks before
    :data:`AS_OF`, fixed by the MLS number (writers draw nothing at random)."""
    return AS_OF - timedelta(days=_digits(record["MLSNumber"]) % 28 + 1)
