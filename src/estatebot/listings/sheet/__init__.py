"""The spreadsheet side of the listings layer: an MLS export read into the canonical frame.

:func:`read_sheet` reads an xlsx, csv or DataFrame (:mod:`.xlsx` for workbook cells), matches
its headers to listing fields (:mod:`.headers`), types its cells (:mod:`.cells`), derives and
validates each field under the export rules (:mod:`.fields`, :mod:`.rules`), and returns a
:class:`Sheet`: the frame, the row-level issues and the header mapping. Nothing here talks to
the service or plans a sync.
"""

from estatebot.listings.sheet.read import Sheet, read_sheet

__all__ = ["Sheet", "read_sheet"]
