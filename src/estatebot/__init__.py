"""estatebot: notebook-first toolkit for real-estate chatbots.

Typed API client, listings in pandas DataFrames, spreadsheet sync planned before it is applied,
a chat panel and test harness for Jupyter, and a local emulator of the service::

    import estatebot as eb

    client = eb.Client()                        # ESTATEBOT_BASE_URL, _API_KEY, _SESSION_KEY
    remote = eb.pull_listings(client, serial)
    plan = eb.plan_sync(eb.read_sheet("sample_data/mls_export_week2.xlsx"), remote)
    report = plan.apply(client, serial, journal="run-1/journal.jsonl", backup="run-1/backup.xlsx")
"""

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
    # Explicit re-exports (``X as X``) for type checkers; at run time names load on first use.
    from estatebot import emulator as emulator
    from estatebot import listings as listings
    from estatebot._safe_cells import CellWarning as CellWarning
    from estatebot.api.client import AsyncClient as AsyncClient
    from estatebot.api.client import Client as Client
    from estatebot.api.gate import ServiceGate as ServiceGate
    from estatebot.api.models import AIModel as AIModel
    from estatebot.api.models import Answer as Answer
    from estatebot.api.models import ChatbotSettings as ChatbotSettings
    from estatebot.api.models import KeyType as KeyType
    from estatebot.api.models import ListingInput as ListingInput
    from estatebot.api.models import ListingUpdate as ListingUpdate
    from estatebot.api.models import StreamResult as StreamResult
    from estatebot.chat.factcheck import fact_check as fact_check
    from estatebot.chat.harness.comparison import compare_chat_runs as compare_chat_runs
    from estatebot.chat.harness.results import ChatTestResults as ChatTestResults
    from estatebot.chat.harness.running import run_chat_tests as run_chat_tests
    from estatebot.chat.panel.widget import ChatPanel as ChatPanel
    from estatebot.errors import APIConnectionError as APIConnectionError
    from estatebot.errors import APIError as APIError
    from estatebot.errors import APITimeoutError as APITimeoutError
    from estatebot.errors import AuthenticationError as AuthenticationError
    from estatebot.errors import ConfigurationError as ConfigurationError
    from estatebot.errors import ConflictError as ConflictError
    from estatebot.errors import EstatebotError as EstatebotError
    from estatebot.errors import FilterError as FilterError
    from estatebot.errors import FleetRunError as FleetRunError
    from estatebot.errors import InvalidRequestError as InvalidRequestError
    from estatebot.errors import ManifestError as ManifestError
    from estatebot.errors import NotFoundError as NotFoundError
    from estatebot.errors import PlanError as PlanError
    from estatebot.errors import PullError as PullError
    from estatebot.errors import PullWarning as PullWarning
    from estatebot.errors import RateLimitError as RateLimitError
    from estatebot.errors import RequestValidationError as RequestValidationError
    from estatebot.errors import ServerError as ServerError
    from estatebot.errors import SheetError as SheetError
    from estatebot.errors import SheetNotFoundError as SheetNotFoundError
    from estatebot.fleet.fleet_chat import FleetChatResults as FleetChatResults
    from estatebot.fleet.fleet_chat import run_fleet_chat_tests as run_fleet_chat_tests
    from estatebot.fleet.fleet_plan import FleetPlan as FleetPlan
    from estatebot.fleet.fleet_plan import plan_fleet as plan_fleet
    from estatebot.fleet.fleet_plan import plan_fleet_cleanup as plan_fleet_cleanup
    from estatebot.fleet.fleet_plan import plan_fleet_undo as plan_fleet_undo
    from estatebot.fleet.fleet_plan import resume_fleet as resume_fleet
    from estatebot.fleet.fleet_report import FleetReport as FleetReport
    from estatebot.fleet.manifest import Manifest as Manifest
    from estatebot.fleet.manifest import read_manifest as read_manifest
    from estatebot.listings.export import ExportError as ExportError
    from estatebot.listings.remote.normalize import NormalizeWarning as NormalizeWarning
    from estatebot.listings.remote.normalize import normalize_records as normalize_records
    from estatebot.listings.remote.pull import apull_listings as apull_listings
    from estatebot.listings.remote.pull import pull_listings as pull_listings
    from estatebot.listings.sheet.read import Sheet as Sheet
    from estatebot.listings.sheet.read import read_sheet as read_sheet
    from estatebot.listings.sync.apply.phases import apply_plan as apply_plan
    from estatebot.listings.sync.apply.restore import restore as restore
    from estatebot.listings.sync.report.apply_report import ApplyReport as ApplyReport
    from estatebot.listings.sync.sync_plan import SyncPlan as SyncPlan
    from estatebot.listings.sync.sync_plan import plan_cleanup as plan_cleanup
    from estatebot.listings.sync.sync_plan import plan_sync as plan_sync
    from estatebot.listings.sync.sync_plan import plan_undo as plan_undo

__version__ = "0.1.0"

#: The one list of public names: each name and the module it comes from. Names load on first use
#: (PEP 562): ``import estatebot`` and the command line start without pandas, pyarrow, openpyxl
#: or ipywidgets, each loading once something needs it. ``__all__`` is derived from it, and the
#: imports for type checkers above are checked against it by the tests.
_HOMES: dict[str, str] = {
    "AsyncClient": "estatebot.api.client",
    "ServiceGate": "estatebot.api.gate",
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
            "FilterError",
            "FleetRunError",
            "InvalidRequestError",
            "ManifestError",
            "NotFoundError",
            "PlanError",
            "PullError",
            "PullWarning",
            "RateLimitError",
            "RequestValidationError",
            "ServerError",
            "SheetError",
            "SheetNotFoundError",
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
    **dict.fromkeys(
        ("SyncPlan", "plan_cleanup", "plan_sync", "plan_undo"), "estatebot.listings.sync.sync_plan"
    ),
    "apply_plan": "estatebot.listings.sync.apply.phases",
    **dict.fromkeys(("FleetChatResults", "run_fleet_chat_tests"), "estatebot.fleet.fleet_chat"),
    **dict.fromkeys(
        ("FleetPlan", "plan_fleet", "plan_fleet_cleanup", "plan_fleet_undo", "resume_fleet"),
        "estatebot.fleet.fleet_plan",
    ),
    "FleetReport": "estatebot.fleet.fleet_report",
    **dict.fromkeys(("Manifest", "read_manifest"), "estatebot.fleet.manifest"),
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
