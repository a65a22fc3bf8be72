"""How replies are read: tolerant of a deployment's spelling, strict about meaning.

One place decides it for every reply model (:class:`TolerantResponse`): field names match without
case (``Data``/``data``, ``SessionID``/``sessionId``, ``VirtualCount``/``virtualCount``), an exact
spelling winning over another; a model may also take its ``Data`` as a bare value
(:meth:`TolerantResponse.from_bare`, e.g. a session ID sent as a plain number). What cannot be
read that way still fails validation: an unknown shape is an error, never an empty result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator

__all__ = ["TolerantResponse", "keys_without_case", "without_references"]


def keys_without_case(data: Mapping[Any, Any], names: Mapping[str, str]) -> dict[Any, Any]:
    """``data`` with each key that matches one of ``names`` (lower case → wire name) without case
    spelled as the wire name; a key spelled exactly so wins over one spelled otherwise."""
    out: dict[Any, Any] = {}
    for key, value in data.items():
        if key in names.values():
            out[key] = value
    for key, value in data.items():
        canonical = names.get(str(key).lower())
        if canonical is None:
            out.setdefault(key, value)
        elif canonical not in out:
            out[canonical] = value
    return out


def without_references(value: Any) -> Any:
    """``value`` with .NET's reference-preserving wrappers taken off.

    A service serializing with ``ReferenceHandler.Preserve`` (System.Text.Json) or
    ``PreserveReferencesHandling`` (Newtonsoft) writes a list as ``{"$id": "1", "$values": [...]}``,
    marks each object with ``"$id"``, and writes a repeated object as ``{"$ref": "3"}``. Read as is,
    a List page would hold no list of records; unwrapped, it is the plain JSON the contract shows.
    """
    seen: dict[str, Any] = {}

    def unwrap(item: Any) -> Any:
        if isinstance(item, list):
            return [unwrap(element) for element in item]
        if not isinstance(item, dict):
            return item
        if set(item) == {"$ref"}:
            return seen.get(str(item["$ref"]), item)
        if "$values" in item and set(item) <= {"$id", "$values"}:
            out: Any = unwrap(item["$values"])
        else:
            out = {key: unwrap(element) for key, element in item.items() if key != "$id"}
        if "$id" in item:
            seen[str(item["$id"])] = out
        return out

    return unwrap(value)


class TolerantResponse(BaseModel):
    """A reply model whose field names match without case, and that may come as a bare value."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, coerce_numbers_to_str=True)

    @classmethod
    def _wire_names(cls) -> dict[str, str]:
        # Built once per model: lower-case spelling → the name the model validates by.
        names = cls.__dict__.get("_wire_names_cache")
        if names is None:
            names = {}
            for name, info in cls.model_fields.items():
                wire = info.alias or name
                names[name.lower()] = wire
                names[wire.lower()] = wire
            cls._wire_names_cache = names  # type: ignore[attr-defined]
        return names

    @classmethod
    def from_bare(cls, value: Any) -> dict[str, Any] | None:
        """The fields of a reply that came as a bare value (None: not a shape this model takes)."""
        return None

    @model_validator(mode="before")
    @classmethod
    def _read_tolerantly(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            return keys_without_case(data, cls._wire_names())
        bare = cls.from_bare(data)
        return data if bare is None else bare
