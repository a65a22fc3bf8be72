"""Planning and applying a sync: the desired listings against the remote ones.

Four rooms, in the order data flows, over one of value helpers:

* :mod:`.plan`: a sheet and a pull → a plan (desired rows, pairing, differences, classes, guards,
  cleanup rules, the plan artifact and its JSON form). Pure: no I/O.
* :mod:`.apply`: a plan → requests (the runner, stale checks, re-checks, journal, backup,
  restore, the values sent).
* :mod:`.report`: what an apply did, one row per operation (:class:`ApplyReport`).
* :mod:`.views`: a plan's HTML, tables, workbook and plots (imported by no planning or applying
  code).
* :mod:`.values`: listing values tidied, compared, hashed and turned into request bodies.

:mod:`.sync_plan` joins them into the :class:`SyncPlan` users hold.
"""

from estatebot.listings.sync.apply.phases import apply_plan
from estatebot.listings.sync.apply.restore import restore
from estatebot.listings.sync.plan.operations import PlannedOp
from estatebot.listings.sync.report.apply_report import ApplyReport
from estatebot.listings.sync.sync_plan import SyncPlan, plan_cleanup, plan_sync

__all__ = [
    "ApplyReport",
    "PlannedOp",
    "SyncPlan",
    "apply_plan",
    "plan_cleanup",
    "plan_sync",
    "restore",
]
