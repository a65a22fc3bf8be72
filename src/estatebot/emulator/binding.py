"""Request bodies: bind a JSON body's keys to a model's wire names, then validate it (→ 400).

The body is decoded by :mod:`.json_body`, which names the member at fault when it cannot be
read. Field names are bound case-insensitively (ASP.NET style: keys are mapped to the model's
wire names ignoring case, unknown keys are dropped); the bound values get the checks no model
makes (nesting depth, finite numbers, 64-bit whole numbers, valid Unicode), then are validated
in strict JSON mode with the models of :mod:`estatebot.api.models`. The message of the 400
names every bad field and quotes values shortened (:mod:`.quoting`): it lists the first problem
of each field, then further ones up to :data:`MAX_LISTED_PROBLEMS` in all, and counts the rest.
"""

from __future__ import annotations

import json
import typing
from collections import Counter
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from estatebot.api.models import field_problems

from .envelope import Failure
from .json_body import UnreadableBody, decode, label, value_problems
from .quoting import quoted

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


#: The most problems one message lists; every bad field is named even beyond it.
MAX_LISTED_PROBLEMS = 20


def _describe_problems(model: type[BaseModel], problems: list[Problem], unlisted: int = 0) -> str:
    # Every field's first problem, then further ones (a list's items) while there is room: a
    # list of a hundred thousand bad items must not make a message of megabytes.
    firsts: dict[str, Problem] = {}
    for problem in problems:
        firsts.setdefault(_top(problem[0]), problem)
    listed = list(firsts.values())
    first_ids = {id(p) for p in listed}
    room = max(0, MAX_LISTED_PROBLEMS - len(listed))
    listed += [p for p in problems if id(p) not in first_ids][:room]
    parts = []
    for field, message, value in listed:
        if message == "Input should be a valid integer" and _accepts_float(model, field):
            # Strict int | float unions report their first member; a fraction is fine here.
            message = "Input should be a valid number"
        parts.append(f"{field}: {message}" + ("" if value is None else f" (got {quoted(value)})"))
    more = len(problems) - len(listed) + unlisted
    if more:
        parts.append(f"and {more} more problem{'s' if more > 1 else ''}")
    return "Invalid request: " + "; ".join(parts)


def _top(path: str) -> str:
    """The top-level field of a problem's path (``ExtensionColumn.0.value`` → ExtensionColumn)."""
    return path.split(".", 1)[0]


def _field_name(key: str, model: type[BaseModel]) -> str:
    entry = _wire_names(model).get(key.casefold())
    return entry[0] if entry is not None else label(key)


def _describe_kind(payload: Any) -> str:
    kinds = {list: "an array", str: "a string", bool: "true or false", type(None): "null"}
    return kinds.get(type(payload), "a number")


def parse_body(
    raw: bytes,
    model: type[M],
    extra_checks: Callable[[dict[str, Any]], list[Problem]] | None = None,
) -> M:
    """Bind and validate a request body, or raise a 400 :class:`Failure` naming every bad field.

    Pure and thread-safe: the app parses a large body in a worker thread.
    """
    try:
        payload = decode(raw)
    except UnreadableBody as error:
        field = "body" if error.member is None else _field_name(error.member, model)
        raise Failure(400, f"Invalid request: {field}: {error.problem}") from None
    if not isinstance(payload, dict):
        raise Failure(
            400, f"Invalid request: body: must be a JSON object, not {_describe_kind(payload)}"
        )
    bound = bind_names(payload, model)
    # Values no model rule catches (nesting, infinity, 64 bits, surrogates) first; their fields
    # are left out of validation, which would only add a second problem (or choke on them).
    problems: list[Problem] = value_problems(bound, raw)
    bad = {_top(field) for field, _, _ in problems}
    clean = {name: value for name, value in bound.items() if name not in bad}
    result: M | None = None
    unlisted = 0
    try:
        result = model.model_validate_json(json.dumps(clean), strict=True)
    except ValidationError as error:
        found, unlisted = _validation_problems(model, clean, error)
        problems.extend(p for p in found if _top(p[0]) not in bad)
    if extra_checks is not None:
        known = {_top(field) for field, _, _ in problems}
        problems.extend(p for p in extra_checks(clean) if _top(p[0]) not in known)
    if problems or result is None:
        raise Failure(400, _describe_problems(model, problems, unlisted))
    return result


#: Beyond this many errors in one list field, its later items are left out of the problems.
MANY_ERRORS = 100


def _validation_problems(
    model: type[BaseModel], fields: dict[str, Any], error: ValidationError
) -> tuple[list[Problem], int]:
    """The problems of a validation error, and how many errors were left out of them.

    A list of a hundred thousand bad items makes as many errors, and turning them into problems
    takes time that grows with their square: such a body is validated again with each list cut
    after its first :data:`MANY_ERRORS` bad items, which gives the same first problems.
    """
    total = error.error_count()
    if total <= MANY_ERRORS:
        return field_problems(error), 0
    seen: Counter[str] = Counter()
    cut_after: dict[str, int] = {}
    for item in error.errors(include_url=False, include_context=False, include_input=False):
        loc = item["loc"]
        if len(loc) > 1 and isinstance(loc[1], int):
            seen[str(loc[0])] += 1
            if seen[str(loc[0])] <= MANY_ERRORS:
                cut_after[str(loc[0])] = loc[1]
    cut = {
        name: value[: cut_after[name] + 1]
        if name in cut_after and isinstance(value, list)
        else value
        for name, value in fields.items()
    }
    try:
        model.model_validate_json(json.dumps(cut), strict=True)
    except ValidationError as fewer:
        error = fewer
    return field_problems(error), total - error.error_count()
