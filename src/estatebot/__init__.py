"""estatebot: notebook-first toolkit for real-estate chatbots.

Typed API client, listings in pandas DataFrames, spreadsheet sync planned before it is applied,
a chat panel and test harness for Jupyter, and a local emulator of the service::

    import estatebot as eb

    client = eb.Client()                        # ESTATEBOT_BASE_URL, _API_KEY, _SESSION_KEY
    remote = eb.pull_listings(client, serial)
    plan = eb.plan_sync(eb.read_sheet("mls_export.xlsx"), remote)
    report = plan.apply(client, serial, journal="sync.journal", backup="backup.xlsx")
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    from estatebot import emulator, listings
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

__version__ = "0.1.0"

#: The module each public name comes from. Names load on first use (PEP 562): ``import
#: estatebot`` and the command line start without pandas, pyarrow, openpyxl or ipywidgets
#: (a second of the command line's start-up), each loading once something needs it.
_HOMES: dict[str, str] = {
    "CellWarning": "estatebot._cells",
    "AsyncClient": "estatebot.api.client",
    "Client": "estatebot.api.client",
    **dict.fromkeys(
        (
            "APIConnectionError",
            "APIError",
            "APITimeoutError",
            "AuthenticationError",
            "ConfigurationError",
            "ConflictError",
            "EstatebotError",
            "InvalidRequestError",
            "NotFoundError",
            "PlanError",
            "PullError",
            "RateLimitError",
            "RequestValidationError",
            "ServerError",
            "SheetError",
        ),
        "estatebot.api.errors",
    ),
    **dict.fromkeys(
        (
            "AIModel",
            "Answer",
            "ChatbotSettings",
            "KeyType",
            "ListingInput",
            "ListingUpdate",
            "StreamResult",
        ),
        "estatebot.api.models",
    ),
    "PullWarning": "estatebot.api.paging",
    "fact_check": "estatebot.chat.factcheck",
    "ChatPanel": "estatebot.chat.panel",
    **dict.fromkeys(
        ("ChatTestResults", "compare_chat_runs", "run_chat_tests"), "estatebot.chat.testing"
    ),
    "ExportError": "estatebot.listings.export",
    **dict.fromkeys(
        ("NormalizeWarning", "normalize_records"), "estatebot.listings.remote.normalize"
    ),
    **dict.fromkeys(("apull_listings", "pull_listings"), "estatebot.listings.remote.pull"),
    **dict.fromkeys(("Sheet", "read_sheet"), "estatebot.listings.sheet.read"),
    "apply_plan": "estatebot.listings.sync.apply",
    **dict.fromkeys(("SyncPlan", "plan_cleanup", "plan_sync"), "estatebot.listings.sync.plan"),
    "ApplyReport": "estatebot.listings.sync.report",
    "restore": "estatebot.listings.sync.restore",
}
# The emulator (FastAPI, uvicorn: the optional extra `estatebot[emulator]`) is a subpackage
# loaded the same way: work against the real service never pays for it, nor needs it installed.
_SUBPACKAGES = frozenset({"emulator", "listings"})


def __getattr__(name: str) -> object:
    if name in _SUBPACKAGES:
        value: object = _importlib.import_module(f"estatebot.{name}")
    elif name in _HOMES:
        value = getattr(_importlib.import_module(_HOMES[name]), name)
    else:
        raise AttributeError(f"module 'estatebot' has no attribute {name!r}")
    globals()[name] = value  # once loaded, a plain attribute
    return value


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
