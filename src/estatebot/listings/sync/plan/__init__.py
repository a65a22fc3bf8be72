"""Planning: a read sheet and pulled listings → a plan artifact, with no I/O.

:mod:`.sync_planner` (``plan_sync``) and :mod:`.cleanup_planner` (``plan_cleanup``) drive the steps:
:mod:`.remote_side`, :mod:`.desired`, :mod:`.pairing` (keys matched in Arrow by
:mod:`~estatebot.listings.sync.values.key_arrays`), :mod:`.columns`, :mod:`.differences`,
:mod:`.classify`, :mod:`.updates`, :mod:`.guards`; the plan is :mod:`.artifact`, its items
:mod:`.operations`.
"""
