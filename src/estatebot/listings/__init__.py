"""The listings layer: canonical frames, pulling, spreadsheet reading, planning and applying.

Everything here works on pandas DataFrames and reaches the service only through
:class:`~estatebot.api.client.Client` / :class:`~estatebot.api.client.AsyncClient`.
"""

from estatebot.listings import schema
from estatebot.listings.export import write_frame
from estatebot.listings.remote.bodies import to_create_bodies, to_update_bodies
from estatebot.listings.remote.normalize import NormalizeResult, NormalizeWarning, normalize_records
from estatebot.listings.remote.pull import PullWarning, apull_listings, pull_listings
from estatebot.listings.sheet.read import Sheet, read_sheet
from estatebot.listings.sync.apply import apply_plan
from estatebot.listings.sync.plan import PlannedOp, SyncPlan, plan_cleanup, plan_sync
from estatebot.listings.sync.report import ApplyReport
from estatebot.listings.sync.restore import restore

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
