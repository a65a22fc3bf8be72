"""Writers of MLS export fixtures (xlsx with openpyxl, csv) for the sheet-reading tests.

Each ``write_*`` function writes one file into a directory (usually pytest's ``tmp_path``)
and returns its path. Three header styles, as real exports have them:

* :func:`write_reso_xlsx`: RESO Data Dictionary names (``ListingId``, ``BedroomsTotal``,
  ``LivingArea`` + ``LivingAreaUnits``, ``AssociationFee`` + ``AssociationFeeFrequency``).
* :func:`write_portal_csv`: a portal (Redfin-like) CSV with its disclaimer line under the
  header, a ``SALE TYPE`` column that is not a sale/rent flag, a ``URL (SEE …)`` header and a
  unitless ``LOT SIZE``.
* :func:`write_mls_xlsx`: an MLS-system (Flexmls/Matrix-like) xlsx with coded statuses
  (``A``, ``U``, ``P``, ``S``, ...), numeric ZIPs formatted ``00000`` and numeric MLS numbers.

:func:`write_pitfalls_xlsx` puts every pitfall of real exports into one sheet (see
:data:`PITFALL_ROWS` for what each row holds and whether it must be read or rejected), and
:func:`write_xlsx` / :func:`write_csv` write any table for a focused test. The module-level row
lists are the data each writer uses, so a test can compare what was read with what was written.
"""

from __future__ import annotations

import csv
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import openpyxl
from openpyxl.cell import WriteOnlyCell

Row = Mapping[str, Any]

#: The disclaimer line portal exports put right under their header.
DISCLAIMER = (
    "In accordance with local MLS rules, some MLS listings are not included in the download"
)


#: A complete listing by API field names (every field a create needs but a price and a city):
#: the row the sheet-reading tests start from and override.
SHEET_ROW: dict[str, Any] = {
    "MLSNumber": "M1",
    "Status": "Active",
    "SaleType": "for_sale",
    "PropertyType": "House",
    "Bedrooms": 3,
    "Bathrooms": 2,
    "Url": "https://example.com/1",
    "YearBuilt": 2001,
    "DaysOnMarket": 4,
    "LotArea": 5000,
    "BuildingArea": 1500,
    "AreaUnit": "Square Feet",
    "ParkingSpots": 1,
    "CurrencySymbol": "$",
}


def write_xlsx(
    path: Path,
    headers: Sequence[str],
    rows: Sequence[Row | Sequence[Any]],
    *,
    formats: Mapping[str, str] | None = None,
    disclaimer: str | None = None,
    sheet_title: str = "Sheet1",
    extra_sheets: Sequence[str] = (),
) -> Path:
    """Write ``rows`` (dicts by header, or value lists) under ``headers`` into an xlsx file.

    ``formats`` gives the number format of a column's data cells by header (``{"ZIP":
    "00000"}``). ``disclaimer`` adds a portal disclaimer line as the first data row.
    ``extra_sheets`` adds empty worksheets after the first, to test ``sheet_name``.
    """
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = sheet_title
    sheet.append(list(headers))
    if disclaimer is not None:
        sheet.append([disclaimer])
    for row in rows:
        sheet.append(_values(headers, row))
    for header, number_format in (formats or {}).items():
        column = list(headers).index(header) + 1
        for r in range(2, sheet.max_row + 1):
            sheet.cell(row=r, column=column).number_format = number_format
    for title in extra_sheets:
        workbook.create_sheet(title)
    workbook.save(path)
    return path


def write_csv(
    path: Path,
    headers: Sequence[str],
    rows: Sequence[Row | Sequence[Any]],
    *,
    disclaimer: str | None = None,
    encoding: str = "utf-8",
) -> Path:
    """Write ``rows`` under ``headers`` as a CSV file (``None`` → an empty field)."""
    with path.open("w", newline="", encoding=encoding) as handle:
        writer = csv.writer(handle)
        writer.writerow(headers)
        if disclaimer is not None:
            writer.writerow([disclaimer] + [""] * (len(headers) - 1))
        for row in rows:
            writer.writerow(["" if v is None else v for v in _values(headers, row)])
    return path


def write_big_xlsx(path: Path, n_rows: int) -> Path:
    """A large RESO-style export (write-only mode), for timing the reader."""
    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("Export")
    headers = [
        "ListingId", "ListingKey", "StandardStatus", "PropertyType", "PropertySubType",
        "BedroomsTotal", "BathroomsFull", "BathroomsHalf", "LivingArea", "LotSizeAcres",
        "YearBuilt", "DaysOnMarket", "GarageSpaces", "ListPrice", "UnparsedAddress", "City",
        "StateOrProvince", "PostalCode", "Latitude", "Longitude", "ListingURL",
        "AssociationFee", "AssociationFeeFrequency", "PublicRemarks", "Heating",
    ]  # fmt: skip
    sheet.append(headers)
    statuses = ["Active", "Active Under Contract", "Pending", "Closed", "Coming Soon"]
    for i in range(n_rows):
        zip_cell = WriteOnlyCell(sheet, value=2108 + i % 500)
        zip_cell.number_format = "00000"
        sheet.append([
            f"ML{i:08d}", f"K{i:010d}", statuses[i % 5], "Residential", "Single Family Residence",
            1 + i % 5, 1 + i % 3, i % 2, 900 + i % 2000, 0.1 + (i % 10) / 100, 1950 + i % 70,
            i % 120, i % 3, 250_000 + 1000 * (i % 500), f"{i % 999 + 1} Main St", "Boston",
            "MA", zip_cell, 42.35 + (i % 100) / 1000, -71.06 - (i % 100) / 1000,
            f"https://example.com/listing/{i}", 100 + i % 50, "Monthly",
            "Bright corner unit close to the park and the shops.", "Forced Air",
        ])  # fmt: skip
    workbook.save(path)
    return path


def _values(headers: Sequence[str], row: Row | Sequence[Any]) -> list[Any]:
    if isinstance(row, Mapping):
        unknown = set(row) - set(headers)
        if unknown:
            raise KeyError(f"row has values for unknown headers {sorted(unknown)}")
        return [row.get(h) for h in headers]
    return list(row)


# --------------------------------------------------------------------------- RESO names

RESO_HEADERS: tuple[str, ...] = (
    "ListingId", "ListingKey", "StandardStatus", "PropertyType", "PropertySubType",
    "BedroomsTotal", "BathroomsFull", "BathroomsHalf", "BathroomsTotalInteger", "LivingArea",
    "LivingAreaUnits", "LotSizeSquareFeet", "LotSizeArea", "LotSizeUnits", "LotSizeAcres",
    "YearBuilt", "DaysOnMarket", "CumulativeDaysOnMarket", "ParkingTotal", "GarageSpaces",
    "CarportSpaces", "CoveredSpaces", "OpenParkingSpaces", "PublicRemarks", "PrivateRemarks",
    "UnparsedAddress", "City", "StateOrProvince", "PostalCode", "Latitude", "Longitude",
    "ListPrice", "ClosePrice", "AssociationFee", "AssociationFeeFrequency", "ListingURL",
    "VirtualTourURLUnbranded", "Heating",
)  # fmt: skip

_RESO_COMMON: dict[str, Any] = {
    "PropertyType": "Residential", "PropertySubType": "Single Family Residence",
    "BedroomsTotal": 3, "BathroomsFull": 2, "BathroomsHalf": 1, "BathroomsTotalInteger": 3,
    "LivingArea": 1850, "LivingAreaUnits": "Square Feet", "YearBuilt": 1995, "DaysOnMarket": 12,
    "CumulativeDaysOnMarket": 40, "City": "Austin", "StateOrProvince": "TX",
    "PostalCode": "78704", "Latitude": 30.25, "Longitude": -97.76, "ListPrice": 750_000,
    "PrivateRemarks": "Lockbox code 1234", "Heating": "Central",
}  # fmt: skip

#: The rows of :func:`write_reso_xlsx` (row 2 onward), each with what it exercises.
RESO_ROWS: tuple[dict[str, Any], ...] = (
    # Row 2: Active; 2 full + 1 half baths; garage 2 + carport 1 + open 1 (covered 3 ignored);
    # lot in square feet; annual HOA 1,200 → 100 a month.
    {**_RESO_COMMON, "ListingId": "ML81234567", "ListingKey": "K-1", "StandardStatus": "Active",
     "LotSizeSquareFeet": 6000, "LotSizeAcres": 0.1377, "GarageSpaces": 2, "CarportSpaces": 1,
     "CoveredSpaces": 3, "OpenParkingSpaces": 1, "AssociationFee": 1200,
     "AssociationFeeFrequency": "Annually", "UnparsedAddress": "12 Oak St",
     "ListingURL": "https://example.com/ML81234567", "PublicRemarks": "Sunny home."},
    # Row 3: a lease under contract, living area in square metres, lot 0.5 acres → m².
    {**_RESO_COMMON, "ListingId": "ML81234568", "ListingKey": "K-2",
     "StandardStatus": "Active Under Contract", "PropertyType": "Residential Lease",
     "PropertySubType": "Apartment", "LivingArea": 85, "LivingAreaUnits": "Square Meters",
     "LotSizeArea": 0.5, "LotSizeUnits": "Acres", "ParkingTotal": 1, "ListPrice": 2400,
     "AssociationFee": 50, "AssociationFeeFrequency": "Monthly", "UnparsedAddress": "3 Elm Ave",
     "ListingURL": "https://example.com/ML81234568"},
    # Row 4: Closed with a close price; lot 0.25 acres; quarterly HOA 300 → 100 a month.
    {**_RESO_COMMON, "ListingId": "ML81234569", "ListingKey": "K-3", "StandardStatus": "Closed",
     "ListPrice": 510_000, "ClosePrice": 505_000, "LotSizeAcres": 0.25, "ParkingTotal": 2,
     "AssociationFee": 300, "AssociationFeeFrequency": "Quarterly", "UnparsedAddress": "5 Pine Rd",
     "ListingURL": "https://example.com/ML81234569",
     "VirtualTourURLUnbranded": "https://tour.example.com/3"},
    # Row 5: Coming Soon → PreOnMarket.
    {**_RESO_COMMON, "ListingId": "ML81234570", "ListingKey": "K-4",
     "StandardStatus": "Coming Soon", "LotSizeSquareFeet": 4000, "ParkingTotal": 0,
     "UnparsedAddress": "8 Birch Ln", "ListingURL": "https://example.com/ML81234570"},
    # Row 6: Withdrawn → not published.
    {**_RESO_COMMON, "ListingId": "ML81234571", "ListingKey": "K-5",
     "StandardStatus": "Withdrawn", "LotSizeSquareFeet": 4000, "ParkingTotal": 0,
     "UnparsedAddress": "9 Cedar Ct", "ListingURL": "https://example.com/ML81234571"},
)  # fmt: skip


def write_reso_xlsx(
    directory: Path, rows: Sequence[Row] = RESO_ROWS, *, name: str = "reso_export.xlsx"
) -> Path:
    """An export with RESO Data Dictionary headers (:data:`RESO_ROWS` by default)."""
    return write_xlsx(directory / name, RESO_HEADERS, rows)


# --------------------------------------------------------------------------- portal CSV

PORTAL_URL_HEADER = (
    "URL (SEE https://www.redfin.com/buy-a-home/comparative-market-analysis FOR INFO ON PRICING)"
)
PORTAL_HEADERS: tuple[str, ...] = (
    "SALE TYPE", "SOLD DATE", "PROPERTY TYPE", "ADDRESS", "CITY", "STATE OR PROVINCE",
    "ZIP OR POSTAL CODE", "PRICE", "BEDS", "BATHS", "LOCATION", "SQUARE FEET", "LOT SIZE",
    "YEAR BUILT", "DAYS ON MARKET", "$/SQUARE FEET", "HOA/MONTH", "STATUS",
    "NEXT OPEN HOUSE START TIME", "NEXT OPEN HOUSE END TIME", PORTAL_URL_HEADER, "SOURCE",
    "MLS#", "FAVORITE", "INTERESTED", "LATITUDE", "LONGITUDE",
)  # fmt: skip

#: The rows of :func:`write_portal_csv` (after the disclaimer line, so from row 3).
PORTAL_ROWS: tuple[dict[str, Any], ...] = (
    # Row 3: a Boston ZIP with its leading zero (text in a CSV), an open house, $/sqft right.
    {"SALE TYPE": "MLS Listing", "PROPERTY TYPE": "Single Family Residential",
     "ADDRESS": "1 Beacon St", "CITY": "Boston", "STATE OR PROVINCE": "MA",
     "ZIP OR POSTAL CODE": "02108", "PRICE": "450000", "BEDS": "3", "BATHS": "2.5",
     "LOCATION": "Beacon Hill", "SQUARE FEET": "1600", "LOT SIZE": "5000", "YEAR BUILT": "1920",
     "DAYS ON MARKET": "7", "$/SQUARE FEET": "281", "HOA/MONTH": "", "STATUS": "Active",
     "NEXT OPEN HOUSE START TIME": "March-02-2025 11:00 AM",
     "NEXT OPEN HOUSE END TIME": "March-02-2025 01:00 PM",
     PORTAL_URL_HEADER: "https://www.redfin.com/MA/Boston/1-Beacon-St/home/1",
     "SOURCE": "MLS PIN", "MLS#": "73100001", "FAVORITE": "N", "INTERESTED": "Y",
     "LATITUDE": "42.3576", "LONGITUDE": "-71.0621"},
    # Row 4: a condo whose $/SQUARE FEET disagrees with PRICE ÷ SQUARE FEET (a warning).
    {"SALE TYPE": "MLS Listing", "PROPERTY TYPE": "Condo/Co-op", "ADDRESS": "2 Main St #4",
     "CITY": "Cambridge", "STATE OR PROVINCE": "MA", "ZIP OR POSTAL CODE": "02139",
     "PRICE": "600000", "BEDS": "2", "BATHS": "1", "SQUARE FEET": "1000", "LOT SIZE": "",
     "YEAR BUILT": "2005", "DAYS ON MARKET": "30", "$/SQUARE FEET": "700", "HOA/MONTH": "350",
     "STATUS": "Active", PORTAL_URL_HEADER: "https://www.redfin.com/MA/Cambridge/2-Main/home/2",
     "SOURCE": "MLS PIN", "MLS#": "73100002", "LATITUDE": "42.37", "LONGITUDE": "-71.11"},
)  # fmt: skip


def write_portal_csv(
    directory: Path,
    rows: Sequence[Row] = PORTAL_ROWS,
    *,
    name: str = "redfin_export.csv",
    disclaimer: bool = True,
) -> Path:
    """A portal-style CSV (:data:`PORTAL_ROWS` by default) with its disclaimer line."""
    return write_csv(
        directory / name, PORTAL_HEADERS, rows, disclaimer=DISCLAIMER if disclaimer else None
    )


# --------------------------------------------------------------------------- MLS-system xlsx

MLS_HEADERS: tuple[str, ...] = (
    "ML #", "Status", "PROPERTY TYPE", "Tot BR", "Tot Baths", "Approx SQFT", "Approx Lot Acres",
    "Yr Blt", "DOM", "List Price", "Sold Price", "Public Remarks", "ADDRESS", "CITY",
    "Zip Code", "Geo Lat", "Geo Lon", "Photo URL", "URL", "Garage Type",
)  # fmt: skip

#: Every status code of the MLS-system fixture and what it must become.
MLS_STATUS_CODES: dict[str, str] = {
    "A": "Active",
    "U": "Active",  # Active Under Contract
    "CS": "PreOnMarket",  # Coming Soon
    "P": "Active",  # Pending, with the default pending_status
    "S": "Sold",  # Closed
    "C": "unpublished",  # Canceled
    "X": "unpublished",  # Expired
    "W": "unpublished",  # Withdrawn
    "E": "unpublished",  # Expired
    "H": "unpublished",  # Hold
    "I": "error",  # Incomplete
}


def _mls_row(i: int, code: str) -> dict[str, Any]:
    return {
        "ML #": 24_000_000 + i, "Status": code, "PROPERTY TYPE": "Residential",
        "Tot BR": 2 + i % 3, "Tot Baths": 2, "Approx SQFT": 1200 + 10 * i,
        "Approx Lot Acres": 0.5, "Yr Blt": 1980 + i, "DOM": i, "List Price": 300_000 + i,
        "Sold Price": 290_000 + i if code == "S" else None, "Public Remarks": f"Listing {i}",
        "ADDRESS": f"{i} Main St", "CITY": "Providence", "Zip Code": 2903,
        "Geo Lat": 41.82, "Geo Lon": -71.41, "Photo URL": f"https://img.example.com/{i}.jpg",
        "URL": f"https://example.com/{i}", "Garage Type": "Attached",
    }  # fmt: skip


#: The rows of :func:`write_mls_xlsx`: one per status code, in :data:`MLS_STATUS_CODES` order.
MLS_ROWS: tuple[dict[str, Any], ...] = tuple(
    _mls_row(i, code) for i, code in enumerate(MLS_STATUS_CODES)
)


def write_mls_xlsx(
    directory: Path, rows: Sequence[Row] = MLS_ROWS, *, name: str = "mls_export.xlsx"
) -> Path:
    """An MLS-system export with coded statuses and ``00000``-formatted numeric ZIPs."""
    return write_xlsx(directory / name, MLS_HEADERS, rows, formats={"Zip Code": "00000"})


# --------------------------------------------------------------------------- every pitfall

PITFALL_HEADERS: tuple[str, ...] = (
    "MLSNumber", "Status", "SaleType", "PropertyType", "Bedrooms", "Bathrooms", "Url",
    "YearBuilt", "DaysOnMarket", "LotArea", "BuildingArea", "AreaUnit", "ParkingSpots",
    "CurrencySymbol", "City", "ZIP", "Description",
)  # fmt: skip

_GOOD: dict[str, Any] = {
    "Status": "Active", "SaleType": "for_sale", "PropertyType": "House", "Bedrooms": 3,
    "Bathrooms": 2, "Url": "https://example.com/x", "YearBuilt": 2001, "DaysOnMarket": 4,
    "LotArea": 5000, "BuildingArea": 1500, "AreaUnit": "Square Feet", "ParkingSpots": 1,
    "CurrencySymbol": "$", "City": "Boston", "ZIP": "02108",
}  # fmt: skip

#: Row number → (cells, expected outcome, what the row exercises). Row 2 is the disclaimer.
PITFALL_ROWS: dict[int, tuple[dict[str, Any], str, str]] = {
    3: ({**_GOOD, "MLSNumber": "00123", "ZIP": 2108, "City": "Boston\u00a0 "}, "valid",
        "text ID with leading zeros; numeric ZIP formatted 00000; nbsp and trailing spaces"),
    4: ({**_GOOD, "MLSNumber": 1.2345678901234567e17}, "rejected",
        "ID that Excel turned into a float (stored as 1.2345678901234568e+17)"),
    5: ({**_GOOD, "MLSNumber": "1.23E+11"}, "rejected", "ID as scientific-notation text"),
    6: ({**_GOOD, "MLSNumber": 12345678901234567}, "rejected",
        "numeric ID of 17 digits (openpyxl, like Excel, stores it with 16 significant digits)"),
    7: ({**_GOOD, "MLSNumber": "DUP1"}, "rejected", "duplicate key (first)"),
    8: ({**_GOOD, "MLSNumber": "DUP1 "}, "rejected", "duplicate key after trimming"),
    9: ({**_GOOD, "MLSNumber": "B3-int", "Bedrooms": 3}, "valid", "3 as a number"),
    10: ({**_GOOD, "MLSNumber": "B3-float", "Bedrooms": 3.0}, "valid", "3.0 as a float"),
    11: ({**_GOOD, "MLSNumber": "B3-text", "Bedrooms": "3"}, "valid", "3 as text"),
    12: ({**_GOOD, "MLSNumber": "NA-1", "Bathrooms": "#N/A"}, "valid",
         "#N/A in a required field is empty: it says nothing (only a create needs the field)"),
    13: ({**_GOOD, "MLSNumber": "NA-2", "Bathrooms": None}, "valid",
         "blank required field: says nothing (only a create needs the field)"),
    14: ({**_GOOD, "MLSNumber": "NA-3", "City": "#N/A", "Description": "N/A"}, "valid",
         "#N/A and N/A in optional fields are empty"),
    15: ({**_GOOD, "MLSNumber": 1234567}, "valid", "whole-number ID of 7 digits"),
    17: ({**_GOOD, "MLSNumber": 123456789012}, "valid",
         "whole-number ID of 12 digits (Excel shows 1.23457E+11 but stores every digit)"),
    16: ({**_GOOD, "MLSNumber": "CLR-1", "Description": "#CLEAR"}, "valid", "clear token"),
}  # fmt: skip


def write_pitfalls_xlsx(directory: Path, *, name: str = "pitfalls.xlsx") -> Path:
    """One sheet with every pitfall of real exports, under a disclaimer line (row 2).

    Row by row contents and expected outcomes are in :data:`PITFALL_ROWS`. The ZIP column is
    formatted ``00000``, so row 3's numeric ZIP 2108 must read as ``02108``.
    """
    rows = [PITFALL_ROWS[r][0] for r in sorted(PITFALL_ROWS)]
    return write_xlsx(
        directory / name, PITFALL_HEADERS, rows, formats={"ZIP": "00000"}, disclaimer=DISCLAIMER
    )


# --------------------------------------------------------------------------- hand-made XML

_MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006"
_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml"

#: Cell styles of :func:`write_raw_xlsx`: s="1" is ``00000``, s="2" a date, s="3" ``00000-0000``.
RAW_STYLES = {"zip": 1, "date": 2, "zip4": 3}


def write_raw_xlsx(
    path: Path, sheet_data: str, shared_strings: Sequence[str] = (), *, date1904: bool = False
) -> Path:
    """Write an xlsx whose worksheet XML is given verbatim (``<row>…</row>`` elements).

    For testing the cell reader on what real files contain and openpyxl never writes: shared
    strings with rich text and phonetic runs (``shared_strings`` are raw ``<si>`` contents),
    formulas with cached values, attributes in any order, cells without coordinates. Styles
    are in :data:`RAW_STYLES`.
    """
    sst = "".join(f"<si>{s}</si>" for s in shared_strings)
    parts = {
        "[Content_Types].xml": (
            f'<Types xmlns="{_PKG}/content-types">'
            f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            f'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/xl/workbook.xml" ContentType="{_TYPE}.sheet.main+xml"/>'
            f'<Override PartName="/xl/worksheets/sheet1.xml" '
            f'ContentType="{_TYPE}.worksheet+xml"/>'
            f'<Override PartName="/xl/styles.xml" ContentType="{_TYPE}.styles+xml"/>'
            f'<Override PartName="/xl/sharedStrings.xml" '
            f'ContentType="{_TYPE}.sharedStrings+xml"/></Types>'
        ),
        "_rels/.rels": (
            f'<Relationships xmlns="{_PKG}/relationships"><Relationship Id="rId1" '
            f'Type="{_REL_NS}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ),
        "xl/workbook.xml": (
            f'<workbook xmlns="{_MAIN_NS}" xmlns:r="{_REL_NS}">'
            f'<workbookPr date1904="{int(date1904)}"/>'
            f'<sheets><sheet name="Export" sheetId="1" r:id="rId1"/></sheets></workbook>'
        ),
        "xl/_rels/workbook.xml.rels": (
            f'<Relationships xmlns="{_PKG}/relationships">'
            f'<Relationship Id="rId1" Type="{_REL_NS}/worksheet" Target="worksheets/sheet1.xml"/>'
            f'<Relationship Id="rId2" Type="{_REL_NS}/styles" Target="styles.xml"/>'
            f'<Relationship Id="rId3" Type="{_REL_NS}/sharedStrings" '
            f'Target="sharedStrings.xml"/></Relationships>'
        ),
        "xl/styles.xml": (
            f'<styleSheet xmlns="{_MAIN_NS}"><numFmts count="3">'
            '<numFmt numFmtId="164" formatCode="00000"/>'
            '<numFmt numFmtId="165" formatCode="yyyy\\-mm\\-dd"/>'
            '<numFmt numFmtId="166" formatCode="00000\\-0000"/></numFmts>'
            '<fonts count="1"><font/></fonts>'
            '<fills count="1"><fill><patternFill patternType="none"/></fill></fills>'
            '<borders count="1"><border/></borders>'
            '<cellStyleXfs count="1"><xf numFmtId="0"/></cellStyleXfs><cellXfs count="4">'
            '<xf numFmtId="0"/><xf numFmtId="164" applyNumberFormat="1"/>'
            '<xf numFmtId="165" applyNumberFormat="1"/><xf numFmtId="166" applyNumberFormat="1"/>'
            '</cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/>'
            "</cellStyles></styleSheet>"
        ),
        "xl/sharedStrings.xml": (
            f'<sst xmlns="{_MAIN_NS}" count="{len(shared_strings)}" '
            f'uniqueCount="{len(shared_strings)}">{sst}</sst>'
        ),
        "xl/worksheets/sheet1.xml": (
            f'<worksheet xmlns="{_MAIN_NS}"><sheetData>{sheet_data}</sheetData></worksheet>'
        ),
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, '<?xml version="1.0" encoding="UTF-8"?>\n' + text)
    return path
