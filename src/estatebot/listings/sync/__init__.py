"""Planning and applying a sync: the desired listings against the remote ones.

:func:`plan_sync` and :func:`plan_cleanup` compare (:mod:`.compare`) and classify listings
into a :class:`SyncPlan`, an inspectable artifact (:mod:`.artifact`, shown by :mod:`.view`);
:func:`apply_plan` carries out exactly that plan with a journal (:mod:`.journal`) and a backup
(:mod:`.backup`) and reports row by row (:mod:`.report`); :func:`restore` puts a backup back.
"""

from estatebot.listings.sync.apply import apply_plan
from estatebot.listings.sync.plan import PlannedOp, SyncPlan, plan_cleanup, plan_sync
from estatebot.listings.sync.report import ApplyReport
from estatebot.listings.sync.restore import restore

__all__ = [
    "ApplyReport",
    "PlannedOp",
    "SyncPlan",
    "apply_plan",
    "plan_cleanup",
    "plan_sync",
    "restore",
]
