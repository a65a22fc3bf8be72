"""A local stand-in for the service: FastAPI over SQLite, with fault injection.

Start it for a block of code with :func:`running` (tests, notebooks, benchmarks) or in the
foreground with :func:`serve`::

    from estatebot import emulator

    with emulator.running() as server:       # demo data; server.base_url, .api_key, ...
        server.faults.latency_ms = 50        # faults and options can change while it runs
        server.faults.rate_limit = (5, 10)   # 5 requests per chatbot in any 10 s, then 429
        ...

    with emulator.running(chatbots=20, listings_per_chatbot=50) as server:
        server.serials                       # == emulator.fleet_serials(20), besides .serial
        server.faults.only_chatbots = {server.serials[0]}   # faults for that chatbot only
        server.emulator.peak_in_flight       # the most requests handled at once

It shares only :mod:`estatebot.api.models` with the client and never imports the client. Its
server (FastAPI, uvicorn) is the optional extra ``estatebot[emulator]``: work against the real
service never installs a web server.
"""

# First: without the optional extra this raises one clear ImportError naming it.
from . import _extra  # noqa: F401
from .app import AI_MODELS, Emulator, Framing, Options, create_app
from .faults import FaultDecision, Faults, RateLimit
from .fleet_seed import FleetSeed, agent_id, fleet_listings, fleet_serials
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
    "FleetSeed",
    "Framing",
    "ListingConflict",
    "Options",
    "RateLimit",
    "Store",
    "Workspace",
    "agent_id",
    "create_app",
    "fleet_listings",
    "fleet_serials",
    "running",
    "serve",
]
