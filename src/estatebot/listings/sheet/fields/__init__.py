"""From raw cells to listing fields: headers matched, cells typed, fields derived and checked.

:mod:`.headers` (with :mod:`.sources`), the raw cells as arrays by kind (:mod:`.cells`), the rules
every cell follows (:mod:`.prepared`), :mod:`.cell_types`, :mod:`.derive` (with :mod:`.areas`,
:mod:`.prices`, :mod:`.lookups`, :mod:`.mls_values` and :mod:`.json_text`), :mod:`.validate`,
then :mod:`.assemble` builds the canonical frame.
"""
