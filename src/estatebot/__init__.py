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
    from estatebot._safe_cells import CellWarning
    from estatebot.api.client import AsyncClient, Client
    from estatebot.api.models import (
        AIModel,
        Answer,
        ChatbotSettings,
        KeyType,
        ListingInput,
        ListingUpdate,
        StreamResult,
    )
    from estatebot.chat.factcheck import fact_check
    from estatebot.chat.harness.comparison import compare_chat_runs
    from estatebot.chat.harness.results import ChatTestResults
    from estatebot.chat.harness.running import run_chat_tests
    from estatebot.chat.panel.widget import ChatPanel
    from estatebot.errors import (
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
        PullWarning,
        RateLimitError,
        RequestValidationError,
        ServerError,
        SheetError,
    )
    from estatebot.listings.export import ExportError
    from estatebot.listings.remote.normalize import NormalizeWarning, normalize_records
    from estatebot.listings.remote.pull import apull_listings, pull_listings
    from estatebot.listings.sheet.read import Sheet, read_sheet
    from estatebot.listings.sync.apply.phases import apply_plan
    from estatebot.listings.sync.apply.restore import restore
    from estatebot.listings.sync.report.apply_report import ApplyReport
    from estatebot.listings.sync.sync_plan import SyncPlan, plan_cleanup, plan_sync

__version__ = "0.1.0"

#: The one list of public names: each name and the module it comes from. Names load on first use
#: (PEP 562): ``import estatebot`` and the command line start without pandas, pyarrow, openpyxl
#: or ipywidgets, each loading once something needs it. ``__all__`` is derived from it, and the
#: imports for type checkers above are checked against it by the tests.
_HOMES: dict[str, str] = {
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
            "PullWarning",
            "RateLimitError",
            "RequestValidationError",
            "ServerError",
            "SheetError",
        ),
        "estatebot.errors",
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
    "CellWarning": "estatebot._safe_cells",
    "fact_check": "estatebot.chat.factcheck",
    "ChatPanel": "estatebot.chat.panel.widget",
    "ChatTestResults": "estatebot.chat.harness.results",
    "compare_chat_runs": "estatebot.chat.harness.comparison",
    "run_chat_tests": "estatebot.chat.harness.running",
    "ExportError": "estatebot.listings.export",
    **dict.fromkeys(
        ("NormalizeWarning", "normalize_records"), "estatebot.listings.remote.normalize"
    ),
    **dict.fromkeys(("apull_listings", "pull_listings"), "estatebot.listings.remote.pull"),
    **dict.fromkeys(("Sheet", "read_sheet"), "estatebot.listings.sheet.read"),
    **dict.fromkeys(("SyncPlan", "plan_cleanup", "plan_sync"), "estatebot.listings.sync.sync_plan"),
    "apply_plan": "estatebot.listings.sync.apply.phases",
    "restore": "estatebot.listings.sync.apply.restore",
    "ApplyReport": "estatebot.listings.sync.report.apply_report",
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


__all__ = sorted([*_HOMES, *_SUBPACKAGES, "__version__"])
