"""The listings layer: canonical frames, pulling, spreadsheet reading, planning and applying.

Three rooms around one shape (:mod:`.schema`, the canonical listing frame):

* :mod:`.remote`, the service side: every page pulled and normalized, frames back into bodies;
* :mod:`.sheet`, the spreadsheet side: an MLS export read into the canonical frame;
* :mod:`.sync`, the two compared: a plan made, shown, saved, applied and reported.

``sheet`` and ``remote`` know nothing of each other; ``sync`` uses both. Everything here works
on pandas DataFrames and reaches the service only through
:class:`~estatebot.api.client.Client` / :class:`~estatebot.api.client.AsyncClient`.
"""

from estatebot.listings import remote, schema, sheet, sync
from estatebot.listings.export import write_frame
from estatebot.listings.remote import (
    NormalizeResult,
    NormalizeWarning,
    PullWarning,
    apull_listings,
    normalize_records,
    pull_listings,
    to_create_bodies,
    to_update_bodies,
)
from estatebot.listings.sheet import Sheet, read_sheet
from estatebot.listings.sync import (
    ApplyReport,
    PlannedOp,
    SyncPlan,
    apply_plan,
    plan_cleanup,
    plan_sync,
    restore,
)

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
    "remote",
    "restore",
    "schema",
    "sheet",
    "sync",
    "to_create_bodies",
    "to_update_bodies",
    "write_frame",
]


def __dir__() -> list[str]:
    # The public names only: not the helper modules that importing binds here.
    return sorted(__all__)
