"""Street addresses as comparable keys: the usual abbreviations and case made alike.

``"1208 South Lamar Boulevard"`` and ``"1208 s lamar blvd"`` give one key, as do ``"301 West Ave
#1204"``, ``"301 W Avenue, Apt 1204"`` and ``"301 w. ave unit 1204"``. A key is a tuple of
lower-case tokens: directions and street types abbreviated as the USPS does, every unit word
(``Apt``, ``Unit``, ``Suite``, ``#``) as ``"#"``.
"""

from __future__ import annotations

import re

__all__ = [
    "DIRECTIONS",
    "STREET_TYPES",
    "UNIT_WORDS",
    "address_key",
    "normalize_token",
    "street_key",
]

#: Street types, spelled out and abbreviated, to their USPS abbreviation.
STREET_TYPES: dict[str, str] = {
    "street": "st", "st": "st", "avenue": "ave", "ave": "ave", "av": "ave",
    "boulevard": "blvd", "blvd": "blvd", "road": "rd", "rd": "rd", "drive": "dr", "dr": "dr",
    "lane": "ln", "ln": "ln", "court": "ct", "ct": "ct", "place": "pl", "pl": "pl",
    "terrace": "ter", "ter": "ter", "parkway": "pkwy", "pkwy": "pkwy", "highway": "hwy",
    "hwy": "hwy", "circle": "cir", "cir": "cir", "way": "way", "trail": "trl", "trl": "trl",
    "square": "sq", "sq": "sq", "plaza": "plz", "plz": "plz", "loop": "loop", "pike": "pike",
    "expressway": "expy", "expy": "expy", "freeway": "fwy", "fwy": "fwy", "crossing": "xing",
    "xing": "xing", "alley": "aly", "aly": "aly", "row": "row", "run": "run", "path": "path",
    "cove": "cv", "cv": "cv", "point": "pt", "pt": "pt", "bend": "bnd", "bnd": "bnd",
}  # fmt: skip

#: Directions, spelled out and abbreviated, to their abbreviation.
DIRECTIONS: dict[str, str] = {
    "north": "n", "n": "n", "south": "s", "s": "s", "east": "e", "e": "e", "west": "w",
    "w": "w", "northeast": "ne", "ne": "ne", "northwest": "nw", "nw": "nw",
    "southeast": "se", "se": "se", "southwest": "sw", "sw": "sw",
}  # fmt: skip

#: Words that introduce a unit number; all become ``"#"``.
UNIT_WORDS = frozenset({"#", "apt", "apartment", "unit", "suite", "ste"})

_TOKEN = re.compile(r"#|[^\W_]+(?:['’][^\W_]+)?")


def normalize_token(token: str) -> str:
    """One address token as it is compared: lower case, abbreviations made alike."""
    folded = token.casefold().replace("’", "'")
    if folded in UNIT_WORDS:
        return "#"
    return STREET_TYPES.get(folded) or DIRECTIONS.get(folded) or folded


def address_key(address: str) -> tuple[str, ...]:
    """The comparable key of a written address (see the module docstring)."""
    tokens = [normalize_token(t) for t in _TOKEN.findall(address)]
    # "Apt #12" is one unit marker, not two.
    return tuple(t for i, t in enumerate(tokens) if not (t == "#" and i and tokens[i - 1] == "#"))


def street_key(key: tuple[str, ...]) -> tuple[str, ...]:
    """The key without its unit: the building, for an answer that leaves the unit out."""
    return key[: key.index("#")] if "#" in key else key
