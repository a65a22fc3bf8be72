"""Planning: a read sheet and pulled listings → a plan artifact, with no I/O.

:mod:`.sync_planner` (``plan_sync``) and :mod:`.cleanup_planner` (``plan_cleanup``) drive the steps:
:mod:`.desired`, :mod:`.pairing`, :mod:`.differences`, :mod:`.classify`, :mod:`.guards`; the plan
is :mod:`.artifact`, its items :mod:`.operations`.
"""
