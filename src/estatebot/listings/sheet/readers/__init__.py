"""Reading files into raw cells: which reader a file needs, and each reader.

:mod:`.table` picks one (:mod:`.file_kind`): delimited text (:mod:`.text`), xlsx by calamine
(:mod:`.calamine`, with :mod:`.xml_scan` and :mod:`.xlsx_parts` for what calamine loses) or by
openpyxl (:mod:`.xlsx_openpyxl`), xls and ods by calamine; each gives a :mod:`.grid` and notes.
"""
