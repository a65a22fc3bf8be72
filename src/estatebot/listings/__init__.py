"""The listings layer: canonical frames, pulling, spreadsheet reading, planning and applying.

Everything here works on pandas DataFrames and reaches the service only through
:class:`~estatebot.api.client.Client` / :class:`~estatebot.api.client.AsyncClient`.
"""

from estatebot.listings import schema
from estatebot.listings.apply import apply_plan, restore
from estatebot.listings.bodies import to_create_bodies, to_update_bodies
from estatebot.listings.export import write_frame
from estatebot.listings.normalize import NormalizeResult, NormalizeWarning, normalize_records
from estatebot.listings.plan import PlannedOp, SyncPlan, plan_cleanup, plan_sync
from estatebot.listings.pull import PullWarning, apull_listings, pull_listings
from estatebot.listings.report import ApplyReport
from estatebot.listings.sheets import Sheet, read_sheet

__all__ = [
    "ApplyReport",
    "NormalizeResult",
    "NormalizeWarning",
    "PlannedOp",
    "PullWarning",
    "Sheet",
    "SyncPlan",
    "apply_plan",
    "apull_listings",
    "normalize_records",
    "plan_cleanup",
    "plan_sync",
    "pull_listings",
    "read_sheet",
    "restore",
    "schema",
    "to_create_bodies",
    "to_update_bodies",
    "write_frame",
]
