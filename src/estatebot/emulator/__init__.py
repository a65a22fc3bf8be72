"""A local stand-in for the service: FastAPI over SQLite, with fault injection.

Start it for a block of code with :func:`running` (tests, notebooks, benchmarks) or in the
foreground with :func:`serve`::

    from estatebot import emulator

    with emulator.running() as server:       # demo data; server.base_url, .api_key, ...
        server.faults.latency_ms = 50        # faults and options can change while it runs
        server.faults.rate_limit = (5, 10)   # 5 requests per chatbot in any 10 s, then 429
        ...

It shares only :mod:`estatebot.api.models` with the client and never imports the client. Its
server (FastAPI, uvicorn) is the optional extra ``estatebot[emulator]``: work against the real
service never installs a web server.
"""

# First: without the optional extra this raises one clear ImportError naming it.
from . import _extra  # noqa: F401
from .app import AI_MODELS, Emulator, Framing, Options, create_app
from .faults import FaultDecision, Faults, RateLimit
from .hallucinate import Falsification
from .seed import DEMO_API_KEY, DEMO_SERIAL, DEMO_SESSION_KEY, SAMPLE_LISTINGS
from .server import EmulatorServer, running, serve
from .store import ListingConflict, Store, Workspace

__all__ = [
    "AI_MODELS",
    "DEMO_API_KEY",
    "DEMO_SERIAL",
    "DEMO_SESSION_KEY",
    "SAMPLE_LISTINGS",
    "Emulator",
    "EmulatorServer",
    "Falsification",
    "FaultDecision",
    "Faults",
    "Framing",
    "ListingConflict",
    "Options",
    "RateLimit",
    "Store",
    "Workspace",
    "create_app",
    "running",
    "serve",
]
