"""Reading files into raw cells: which reader a file needs, and each reader.

:mod:`.table` picks one (:mod:`.file_kind`): delimited text (:mod:`.text`), xlsx by calamine
(:mod:`.calamine`, with :mod:`.xml_scan` and :mod:`.xlsx_parts` for what calamine loses) or by
openpyxl (:mod:`.xlsx_openpyxl`, rows from :mod:`.openpyxl_rows`), xls and ods by calamine; each
gives a :mod:`.grid` and notes. Before an xlsx sheet is read, :mod:`.xlsx_guard` chooses it
(hidden sheets only when named), reads the structure of its XML (:mod:`.xml_shape`, noting
each cell's kind and what calamine reads other than openpyxl: :mod:`.xml_cells`), picks the
reader, and checks the read against its memory budget (:mod:`.budget`). For listings, an xlsx
sheet whose columns each hold one kind of value is read by columns into Arrow
(:mod:`.calamine_columns`).
"""
