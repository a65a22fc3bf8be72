"""What a public docstring must carry, read by griffe as the reference reads it.

The public names are the package's own list (``estatebot._HOMES``), ``estatebot.listings``'
``to_update_bodies``/``to_create_bodies``, the client's resources and the emulator's entry
points. Each public function and method documents, in Google style: every parameter of its
signature under ``Args:``, its return value under ``Returns:`` (unless it returns None), and its
errors under ``Raises:`` where it raises one of estatebot's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import griffe

ROOT = Path(__file__).resolve().parents[1]

#: Public names beyond ``estatebot._HOMES``: objects a user reaches through another.
EXTRA_PUBLIC = (
    "estatebot.listings.remote.bodies.to_update_bodies",
    "estatebot.listings.remote.bodies.to_create_bodies",
    "estatebot.listings.remote.normalize.NormalizeResult",
    "estatebot.api.chatbots.Chatbots",
    "estatebot.api.chatbots.AsyncChatbots",
    "estatebot.api.chat.Chat",
    "estatebot.api.chat.AsyncChat",
    "estatebot.api.chat.ChatStream",
    "estatebot.api.chat.AsyncChatStream",
    "estatebot.api.listings.Listings",
    "estatebot.api.listings.AsyncListings",
    "estatebot.emulator.server.running",
    "estatebot.emulator.server.serve",
    "estatebot.emulator.server.EmulatorServer",
)


@dataclass(frozen=True)
class Lack:
    """One thing a docstring lacks."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def load() -> griffe.Module:
    """The package as griffe reads it, docstrings parsed as Google style."""
    return griffe.load(
        "estatebot",
        search_paths=[str(ROOT / "src")],
        docstring_parser=griffe.Parser.google,
        resolve_aliases=True,
        resolve_external=False,
    )


def public_paths() -> list[str]:
    """The dotted path of every public object the reference shows."""
    import estatebot

    homes: dict[str, str] = estatebot._HOMES
    return sorted({f"{home}.{name}" for name, home in homes.items()} | set(EXTRA_PUBLIC))


def _members(obj: griffe.Object) -> Iterator[griffe.Object]:
    """``obj`` and, for a class, its public methods and properties defined on it."""
    yield obj
    if obj.is_class:
        for name, member in obj.members.items():
            if name.startswith("_") or member.is_alias:
                continue
            if member.is_function:
                yield member


def _sections(obj: griffe.Object) -> dict[str, list[str]]:
    docstring = obj.docstring
    if docstring is None:
        return {}
    found: dict[str, list[str]] = {}
    for section in docstring.parse(griffe.Parser.google):
        kind = section.kind.value
        names = (
            [getattr(item, "name", "") for item in section.value]
            if kind
            in {
                "parameters",
                "other parameters",
                "raises",
            }
            else []
        )
        found.setdefault(kind, []).extend(names)
    return found


def lacks(obj: griffe.Object) -> list[Lack]:
    """What the docstrings of ``obj`` (and its public methods) leave out."""
    found: list[Lack] = []
    for member in _members(obj):
        where = member.path
        if member.docstring is None or not member.docstring.value.strip():
            found.append(Lack(where, "no docstring"))
            continue
        if not member.is_function:
            continue
        sections = _sections(member)
        documented = set(sections.get("parameters", [])) | set(sections.get("other parameters", []))
        for parameter in member.parameters:
            name = parameter.name
            if name in {"self", "cls"}:
                continue
            shown = {
                griffe.ParameterKind.var_positional: f"*{name}",
                griffe.ParameterKind.var_keyword: f"**{name}",
            }.get(parameter.kind, name)
            if name not in documented and shown not in documented:
                found.append(Lack(where, f"parameter {name!r} not under Args:"))
        returns = member.returns
        returns_text = str(returns) if returns is not None else "None"
        is_property = "property" in member.labels
        gives_back = returns_text not in {"None", "NoReturn"} and not is_property
        if gives_back and "returns" not in sections and "yields" not in sections:
            found.append(Lack(where, "no Returns: section"))
    return found
