"""From raw cells to listing fields: headers matched, cells typed, fields derived and checked.

:mod:`.headers` (with :mod:`.sources`), :mod:`.cell_types`, :mod:`.derive` (with :mod:`.areas`,
:mod:`.prices`, :mod:`.lookups` and :mod:`.mls_values`), :mod:`.validate`, then :mod:`.assemble`
builds the canonical frame.
"""
