"""estatebot: notebook-first toolkit for real-estate chatbots.

Typed API client, listings in pandas DataFrames, spreadsheet sync planned before it is applied,
a chat panel and test harness for Jupyter, and a local emulator of the service::

    import estatebot as eb

    client = eb.Client()                        # ESTATEBOT_BASE_URL, _API_KEY, _SESSION_KEY
    remote = eb.pull_listings(client, serial)
    plan = eb.plan_sync(eb.read_sheet("mls_export.xlsx"), remote)
    report = plan.apply(client, serial, journal="sync.journal", backup="backup.xlsx")
"""

import typing as _typing

from estatebot import listings
from estatebot._cells import CellWarning
from estatebot.api.client import AsyncClient, Client
from estatebot.api.errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ConfigurationError,
    ConflictError,
    EstatebotError,
    InvalidRequestError,
    NotFoundError,
    PlanError,
    PullError,
    RateLimitError,
    RequestValidationError,
    ServerError,
    SheetError,
)
from estatebot.api.models import (
    AIModel,
    Answer,
    ChatbotSettings,
    KeyType,
    ListingInput,
    ListingUpdate,
    StreamResult,
)
from estatebot.api.paging import PullWarning
from estatebot.chat.factcheck import fact_check
from estatebot.chat.panel import ChatPanel
from estatebot.chat.testing import ChatTestResults, compare_chat_runs, run_chat_tests
from estatebot.listings.export import ExportError
from estatebot.listings.remote.normalize import NormalizeWarning, normalize_records
from estatebot.listings.remote.pull import apull_listings, pull_listings
from estatebot.listings.sheet.read import Sheet, read_sheet
from estatebot.listings.sync.apply import apply_plan
from estatebot.listings.sync.plan import SyncPlan, plan_cleanup, plan_sync
from estatebot.listings.sync.report import ApplyReport
from estatebot.listings.sync.restore import restore

if _typing.TYPE_CHECKING:
    from estatebot import emulator

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # The emulator (FastAPI, uvicorn: the optional extra `estatebot[emulator]`) loads on first
    # use: work against the real service never pays for it, nor needs it installed.
    if name == "emulator":
        import estatebot.emulator as module

        return module
    raise AttributeError(f"module 'estatebot' has no attribute {name!r}")


def __dir__() -> list[str]:
    # The public names only: not the subpackages and helpers that importing binds here.
    return sorted(__all__)


__all__ = [
    "AIModel",
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "Answer",
    "ApplyReport",
    "AsyncClient",
    "AuthenticationError",
    "CellWarning",
    "ChatPanel",
    "ChatTestResults",
    "ChatbotSettings",
    "Client",
    "ConfigurationError",
    "ConflictError",
    "EstatebotError",
    "ExportError",
    "InvalidRequestError",
    "KeyType",
    "ListingInput",
    "ListingUpdate",
    "NormalizeWarning",
    "NotFoundError",
    "PlanError",
    "PullError",
    "PullWarning",
    "RateLimitError",
    "RequestValidationError",
    "ServerError",
    "Sheet",
    "SheetError",
    "StreamResult",
    "SyncPlan",
    "__version__",
    "apply_plan",
    "apull_listings",
    "compare_chat_runs",
    "emulator",
    "fact_check",
    "listings",
    "normalize_records",
    "plan_cleanup",
    "plan_sync",
    "pull_listings",
    "read_sheet",
    "restore",
    "run_chat_tests",
]
