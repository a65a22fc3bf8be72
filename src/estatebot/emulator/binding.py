"""Request bodies: bind a JSON body's keys to a model's wire names, then validate it (→ 400).

Field names are bound case-insensitively (ASP.NET style: keys are mapped to the model's wire
names ignoring case, unknown keys are dropped), then validated in strict JSON mode with the
models of :mod:`estatebot.api.models`; the message of the 400 names every bad field.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from estatebot.api.models import field_problems

from .envelope import Failure

M = TypeVar("M", bound=BaseModel)
Problem = tuple[str, str, Any]


def _model_types(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models nested in a field's annotation (``list[X] | None`` → ``[X]``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [found for arg in typing.get_args(annotation) for found in _model_types(arg)]


@cache
def _wire_names(model: type[BaseModel]) -> dict[str, tuple[str, type[BaseModel] | None]]:
    """Case-folded wire name → (wire name, nested model of its list items or None)."""
    names: dict[str, tuple[str, type[BaseModel] | None]] = {}
    for name, info in model.model_fields.items():
        wire = info.alias or name
        nested = _model_types(info.annotation)
        names[wire.casefold()] = (wire, nested[0] if nested else None)
    return names


def bind_names(payload: Mapping[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """Map a body's keys onto the model's wire names ignoring case; drop unknown keys."""
    names = _wire_names(model)
    bound: dict[str, Any] = {}
    for key, value in payload.items():
        entry = names.get(str(key).casefold())
        if entry is None:
            continue
        wire, nested = entry
        if nested is not None and isinstance(value, list):
            value = [bind_names(v, nested) if isinstance(v, dict) else v for v in value]
        elif nested is not None and isinstance(value, dict):
            value = bind_names(value, nested)
        bound[wire] = value
    return bound


def _accepts_float(model: type[BaseModel], field: str) -> bool:
    info = model.model_fields.get(field)
    return info is not None and float in _flat_types(info.annotation)


def _flat_types(annotation: Any) -> set[Any]:
    args = typing.get_args(annotation)
    if not args:
        return {annotation}
    return {t for arg in args for t in _flat_types(arg)}


def _describe_problems(model: type[BaseModel], problems: list[Problem]) -> str:
    parts = []
    for field, message, value in problems:
        if message == "Input should be a valid integer" and _accepts_float(model, field):
            # Strict int | float unions report their first member; a fraction is fine here.
            message = "Input should be a valid number"
        parts.append(f"{field}: {message}" + ("" if value is None else f" (got {value!r})"))
    return "Invalid request: " + "; ".join(parts)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_body(
    raw: bytes,
    model: type[M],
    extra_checks: Callable[[dict[str, Any]], list[Problem]] | None = None,
) -> M:
    """Bind and validate a request body, or raise a 400 :class:`Failure` naming every bad field."""
    try:
        payload = json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError):
        raise Failure(400, "Invalid request: the body is not valid JSON") from None
    if not isinstance(payload, dict):
        raise Failure(400, "Invalid request: the body must be a JSON object")
    bound = bind_names(payload, model)
    problems: list[Problem] = []
    result: M | None = None
    try:
        result = model.model_validate_json(json.dumps(bound), strict=True)
    except ValidationError as error:
        problems.extend(field_problems(error))
    if extra_checks is not None:
        known = {field for field, _, _ in problems}
        problems.extend(p for p in extra_checks(bound) if p[0] not in known)
    if problems or result is None:
        raise Failure(400, _describe_problems(model, problems))
    return result
