"""The service side of the listings layer: paging, pulling, normalizing, request bodies.

Every page of a chatbot's listings is pulled (:mod:`.pull`, paged by :mod:`.paging`) and
normalized column by column (:mod:`.normalize`, with the parsers of :mod:`.parsers`) into the
canonical frame of :mod:`estatebot.listings.schema`; :mod:`.bodies` turns such a frame back into
validated Update and Create bodies. Nothing here reads a spreadsheet or plans a sync.
"""

from estatebot.errors import PullWarning
from estatebot.listings.remote.bodies import to_create_bodies, to_update_bodies
from estatebot.listings.remote.normalize import (
    NormalizeResult,
    NormalizeWarning,
    normalize_records,
)
from estatebot.listings.remote.pull import apull_listings, pull_listings

__all__ = [
    "NormalizeResult",
    "NormalizeWarning",
    "PullWarning",
    "apull_listings",
    "normalize_records",
    "pull_listings",
    "to_create_bodies",
    "to_update_bodies",
]
