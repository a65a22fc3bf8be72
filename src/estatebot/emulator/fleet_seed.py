"""A fleet of chatbots in the demo workspace: deterministic serials, names and listings.

``running(chatbots=N)`` (and ``estatebot serve --chatbots N``) adds N chatbots to the demo
workspace, besides the demo chatbot, which stays as it is. Fleet chatbot ``k`` (1 to N) has

* the serial ``fleet_serials(N)[k - 1]``: a UUID 5 of its number, 32 hex digits like the demo
  serial, so the same number always gets the same serial and ``fleet_serials(n)`` is a prefix
  of ``fleet_serials(n + 1)``;
* the name ``Agent 007 Homes`` and the agent ID ``A007`` (:func:`agent_id`), the value of
  ``ListAgentMlsId`` in the fleet sample's shared MLS export (``estatebot.sample.fleet_sample``);
* ``listings_per_chatbot`` listings of its own (:func:`fleet_listings`), drawn from a generator
  seeded by the fleet seed and ``k`` alone: chatbot ``k``'s listings do not depend on how many
  chatbots the fleet has.

Listings are variations of the demo market's (:func:`~.seed.demo_listings`: real ZIP codes and
places in eight metro areas): a new MLS number holding the chatbot's number (unique across the
whole fleet), a new house number, URL, photos, price and position. They are stored as the reader
reads the fleet sample's RESO export: ``ExtensionColumn`` holds the ``ListingKey``, the
template's ``Pool`` and ``View``, the ``ListAgentMlsId`` and, for a Pending or Under Contract
listing, the RESO ``StandardStatus`` the reader keeps. Bodies are built already in their stored
form (checked by the tests against :func:`~.seed.validated_listings`), so 100 chatbots of 2,000
listings load in a few seconds.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from .seed import SeedSpec, demo_listings, validated_listings
from .store import DEFAULT_CHATBOT_SETTINGS, Store

__all__ = [
    "AGENT_COLUMN",
    "MAX_CHATBOTS",
    "MAX_LISTINGS_PER_CHATBOT",
    "FleetSeed",
    "agent_id",
    "check_fleet_size",
    "fleet_chatbot_settings",
    "fleet_listings",
    "fleet_serials",
    "load_fleet",
]

#: The shared export's column naming a listing's agent (the RESO field of the agent's MLS ID).
AGENT_COLUMN = "ListAgentMlsId"
#: The most chatbots a fleet has: the chatbot's number takes four digits of an MLS number.
MAX_CHATBOTS = 9999
#: The most listings a fleet chatbot has: the listing's number takes five digits.
MAX_LISTINGS_PER_CHATBOT = 99_999

# Fixed for ever: changing it changes every fleet serial.
_NAMESPACE = uuid.UUID("5f1c3a52-8e0b-4d7e-9a43-6b2f0c9d1e77")
_HOUSE_NUMBER = re.compile(r"^\d+")


def fleet_serials(n: int) -> list[str]:
    """The serials of fleet chatbots 1 to ``n``, as the emulator creates them.

    Args:
        n: how many chatbots (0 to :data:`MAX_CHATBOTS`).

    Returns:
        ``n`` distinct serials, 32 hex digits each; the same ``n`` always gives the same list,
        and each list is a prefix of the next one's.

    Raises:
        ValueError: ``n`` is not a whole number from 0 to :data:`MAX_CHATBOTS`.
    """
    check_fleet_size(n, 0)
    return [uuid.uuid5(_NAMESPACE, f"estatebot-fleet-chatbot-{k}").hex for k in range(1, n + 1)]


def agent_id(number: int) -> str:
    """The agent ID of fleet chatbot ``number`` (1-based): ``A001``, ``A002``, ..."""
    return f"A{number:03d}"


def check_fleet_size(chatbots: int, listings_per_chatbot: int) -> None:
    """Refuse a fleet size out of range, naming the parameter and the value given.

    Raises:
        ValueError: either count is not a whole number in its range.
    """
    for name, value, most in (
        ("chatbots", chatbots, MAX_CHATBOTS),
        ("listings_per_chatbot", listings_per_chatbot, MAX_LISTINGS_PER_CHATBOT),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
            raise ValueError(f"{name} must be a whole number from 0 to {most}, not {value!r}")


def fleet_chatbot_settings(number: int) -> dict[str, Any]:
    """The settings of fleet chatbot ``number``: the defaults with its own name and greeting."""
    name = f"Agent {number:03d} Homes"
    return {
        **DEFAULT_CHATBOT_SETTINGS,
        "Name": name,
        "SystemMessage": f"You are {name}' assistant. Answer from the listings only.",
        "WelcomeMessage": f"Hi, welcome to {name}! Looking to buy or rent?",
    }


@cache
def _templates() -> tuple[Mapping[str, Any], ...]:
    # The demo market as stored (validated once): every variation keeps its stored form.
    return tuple(validated_listings(demo_listings()))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _price(rng: random.Random, template: Mapping[str, Any]) -> tuple[str, float]:
    """The price field of a variation and its new value (rounded as asking prices are)."""
    factor = rng.uniform(0.85, 1.15)
    if template["SaleType"] == "for_rent":
        return "RentPrice", float(max(850, round(template["RentPrice"] * factor / 25) * 25))
    return "SalePrice", float(max(50_000, round(template["SalePrice"] * factor, -3) - 100))


def _listing(rng: random.Random, number: int, position: int) -> dict[str, Any]:
    template = rng.choice(_templates())
    old_mls = str(template["MLSNumber"])
    mls = f"{old_mls[:2]}{number:04d}{position:05d}"
    address = _HOUSE_NUMBER.sub(str(rng.randint(100, 9999)), str(template["Address"]), count=1)
    item = dict(template)
    price_field, price = _price(rng, template)
    # In the reader's order: the listing key, the extra columns, then the status it keeps.
    given = template.get("ExtensionColumn", [])
    extras = [e for e in given if e["Key"] not in ("ListingKey", "StandardStatus")]
    kept = [e for e in given if e["Key"] == "StandardStatus"]
    key = {"Key": "ListingKey", "value": f"{rng.getrandbits(128):032x}"}
    place = f"{template['City']}-{template['State']}-{template['ZIP']}"
    item.update(
        MLSNumber=mls,
        Address=address,
        Url=f"https://listings.example.com/{_slug(f'{address}-{place}')}/{mls.lower()}",
        Images=[image.replace(old_mls.lower(), mls.lower()) for image in template["Images"]],
        ExtensionColumn=[key, *extras, {"Key": AGENT_COLUMN, "value": agent_id(number)}, *kept],
        Latitude=round(template["Latitude"] + rng.uniform(-0.004, 0.004), 6),
        Longitude=round(template["Longitude"] + rng.uniform(-0.005, 0.005), 6),
        UnitAreaPrice=round(price / template["BuildingArea"], 2),
        **{price_field: price},
    )
    return item


def fleet_listings(number: int, count: int, seed: int = 0) -> list[dict[str, Any]]:
    """The listings of fleet chatbot ``number`` as stored (Create bodies, no SerialNumber).

    Args:
        number: the chatbot's number, 1 to :data:`MAX_CHATBOTS`.
        count: how many listings, 0 to :data:`MAX_LISTINGS_PER_CHATBOT`.
        seed: the fleet seed; the same seed and number always give the same listings.

    Returns:
        ``count`` listings whose MLS numbers (and URLs) no other fleet chatbot has.

    Raises:
        ValueError: ``number`` or ``count`` is out of range.
    """
    check_fleet_size(number, count)
    if number < 1:
        raise ValueError(f"number must be a fleet chatbot's number from 1, not {number!r}")
    # A string seed is hashed with SHA-512: stable across runs and processes.
    rng = random.Random(f"estatebot-fleet:{seed}:{number}")
    return [_listing(rng, number, position) for position in range(1, count + 1)]


def load_fleet(
    store: Store, workspace_id: int, chatbots: int, listings_per_chatbot: int, seed: int = 0
) -> list[str]:
    """Create fleet chatbots 1 to ``chatbots`` in a workspace with their listings.

    A chatbot that exists already is kept, and gets listings only when it has none (so a
    restart on a database file neither duplicates them nor fails on a conflict).

    Returns:
        The fleet's serials (:func:`fleet_serials`).

    Raises:
        ValueError: either count is out of range.
    """
    check_fleet_size(chatbots, listings_per_chatbot)
    serials = fleet_serials(chatbots)
    for number, serial in enumerate(serials, start=1):
        store.add_chatbot(workspace_id, fleet_chatbot_settings(number), serial=serial)
        if listings_per_chatbot and store.count_listings(serial) == 0:
            store.add_listings(serial, fleet_listings(number, listings_per_chatbot, seed))
    return serials


@dataclass(frozen=True)
class FleetSeed:
    """A seed that hosts a fleet: `running(seed=FleetSeed(20))` is `running(chatbots=20)`.

    Attributes:
        chatbots: How many fleet chatbots to add to the demo workspace.
        listings_per_chatbot: The listings of each.
        fleet_seed: The seed of their listings: the same seed, the same listings.
        demo: The demo chatbot's own listings, as `seed=` names them (`"demo"`, `"small"`,
            None, or a path).
    """

    chatbots: int
    listings_per_chatbot: int = 20
    fleet_seed: int = 0
    demo: SeedSpec = "demo"

    def __post_init__(self) -> None:
        check_fleet_size(self.chatbots, self.listings_per_chatbot)
