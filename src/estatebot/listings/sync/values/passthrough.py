"""Which request-body values a field's validator returns as they are: a fast path beside it.

Request bodies are validated a column at a time with pydantic (:mod:`.payloads`). Most columns
hold clean values of exactly the field's own type (text for a text field, a float within its
bounds for a price), which pydantic validates and dumps to themselves; checking that a whole
column is such costs a type check and a comparison or two, where pydantic calls Python for each
value of a field with a ``ge`` bound on a union (``int | float``).

:func:`passthrough_check` reads a field's core schema and returns a check of a column of values
(None left out): True only when every value is one pydantic would return unchanged. The check
knows a few plain shapes (text, bounded numbers, enums of text, lists of text, lists of plain
models of text); for any other shape it is None, and when it answers False the column goes to
pydantic as before, which also gives the reasons for a rejected value. So the bodies are the
same with or without it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np

__all__ = ["Check", "passthrough_check", "same_values"]

#: A check of a column's values (None left out) and the set of their types: True when all
#: validate and dump to themselves.
Check = Callable[[list[Any], set[type]], bool]

# Model settings under which the shapes below keep their plain meaning; any other (stripping
# text, strict mode, other handling of infinities, ...) turns the fast path off.
_PLAIN_CONFIG = frozenset(
    {
        "extra",
        "populate_by_name",
        "use_enum_values",
        "title",
        "validate_by_alias",
        "validate_by_name",
    }
)
_COMMON = frozenset({"type", "metadata", "ref"})
_BOUNDS = ("ge", "le", "gt", "lt")


def passthrough_check(schema: Mapping[str, Any], config: Mapping[str, Any]) -> Check | None:
    """A check of the values of a ``list[...]`` adapter's items (``schema`` is its core schema),
    or None when the items' shape is not one it knows."""
    if not set(config) <= _PLAIN_CONFIG:
        return None
    definitions: dict[str, Mapping[str, Any]] = {}
    if schema.get("type") == "definitions":
        definitions = {d["ref"]: d for d in schema.get("definitions", ()) if "ref" in d}
        schema = schema["schema"]
    if schema.get("type") != "list" or not set(schema) <= _COMMON | {"items_schema"}:
        return None
    return _item_check(schema["items_schema"], definitions, nullable_ok=True)


def same_values(values: list[Any], kinds: set[type]) -> list[Any]:
    """What pydantic's dump gives for values a check accepted (``kinds``: their types): the
    same values, lists and the mappings in them copied (a dump makes new ones)."""
    if list not in kinds:
        return list(values)
    if kinds == {list} and dict not in set(map(type, chain.from_iterable(values))):
        return list(map(list, values))
    return [_copied(value) for value in values]


def _copied(value: Any) -> Any:
    if type(value) is list:
        return [dict(item) if type(item) is dict else item for item in value]
    return value


def _item_check(
    schema: Mapping[str, Any], definitions: Mapping[str, Mapping[str, Any]], *, nullable_ok: bool
) -> Check | None:
    kind = schema.get("type")
    if kind == "definition-ref":
        found = definitions.get(schema.get("schema_ref", ""))
        return None if found is None else _item_check(found, definitions, nullable_ok=nullable_ok)
    if kind == "nullable" and nullable_ok and set(schema) <= _COMMON | {"schema"}:
        # None is never validated (a column's empty values are left out): the inner shape.
        return _item_check(schema["schema"], definitions, nullable_ok=False)
    if kind == "str":
        return _text_check(schema)
    if kind in ("int", "float"):
        return _number_check(schema, (int,) if kind == "int" else (float,))
    if kind == "union":
        return _union_check(schema)
    if kind == "function-after":
        return _after_check(schema, definitions)
    if kind == "list":
        return _list_check(schema, definitions)
    return None


def _text_check(schema: Mapping[str, Any]) -> Check | None:
    if not set(schema) <= _COMMON | {"min_length", "max_length"}:
        return None
    low, high = schema.get("min_length"), schema.get("max_length")

    def check(values: list[Any], kinds: set[type]) -> bool:
        if not kinds <= {str}:
            return False
        if low is None and high is None:
            return True
        lengths = set(map(len, values)) or {low or 0}
        return (low is None or min(lengths) >= low) and (high is None or max(lengths) <= high)

    return check


def _within(values: list[Any], bounds: Mapping[str, Any]) -> bool:
    """Whether every number is finite and within the bounds (NaN is within none).

    Checked on one float array (a bound far from the numbers' range of exact floats, as the
    fields' bounds are, compares alike on floats).
    """
    if not values:
        return True
    try:
        numbers = np.array(values, dtype=np.float64)
    except OverflowError:
        return False  # an integer too large for a float: left to the validator
    if not np.isfinite(numbers).all():
        return False
    # The validator reads each distinct value once, and -0.0 equals 0.0: a column holding a
    # negative zero is left to it (it dumps every zero as the first one it met).
    if (np.signbit(numbers) & (numbers == 0)).any():
        return False
    low, high = float(numbers.min()), float(numbers.max())
    checks = {
        "ge": lambda b: low >= b,
        "gt": lambda b: low > b,
        "le": lambda b: high <= b,
        "lt": lambda b: high < b,
    }
    return all(checks[name](bound) for name, bound in bounds.items())


@dataclass(frozen=True)
class _Numbers:
    """Numbers of exactly these types, finite and within these bounds."""

    types: frozenset[type]
    bounds: Mapping[str, Any]

    def __call__(self, values: list[Any], kinds: set[type]) -> bool:
        return kinds <= self.types and _within(values, self.bounds)

    def bounded(self, name: str, limit: Any) -> _Numbers | None:
        """The same numbers within one more bound (None: that bound is given already)."""
        if name in self.bounds:
            return None
        return _Numbers(self.types, {**self.bounds, name: limit})


def _number_check(schema: Mapping[str, Any], types: tuple[type, ...]) -> Check | None:
    if not set(schema) <= _COMMON | set(_BOUNDS):
        return None
    return _Numbers(frozenset(types), {name: schema[name] for name in _BOUNDS if name in schema})


def _union_check(schema: Mapping[str, Any]) -> Check | None:
    # The smart union of int and float returns an int or a float as it is.
    if not set(schema) <= _COMMON | {"choices"}:
        return None
    choices = schema["choices"]
    if sorted(repr(choice) for choice in choices) != ["{'type': 'float'}", "{'type': 'int'}"]:
        return None
    return _Numbers(frozenset({int, float}), {})


def _after_check(
    schema: Mapping[str, Any], definitions: Mapping[str, Mapping[str, Any]]
) -> Check | None:
    """A validator after the inner one: a ``ge``/``le`` bound, or an enum's value."""
    serialization = schema.get("serialization")
    if not set(schema) <= _COMMON | {"function", "schema", "serialization"}:
        return None
    function = schema.get("function", {})
    if function.get("type") != "no-info":
        return None
    call = function.get("function")
    inner = schema["schema"]
    if inner.get("type") == "definition-ref":
        inner = definitions.get(inner.get("schema_ref", ""), {})
    if isinstance(call, attrgetter) and repr(call) == "operator.attrgetter('value')":
        if serialization not in (None, {"type": "str"}):
            return None
        return _enum_value_check(inner)
    bound = _bound_of(call)
    if bound is None or serialization is not None:
        return None
    inner_check = _item_check(inner, definitions, nullable_ok=False)
    if not isinstance(inner_check, _Numbers):
        return None
    return inner_check.bounded(*bound)


def _bound_of(call: Any) -> tuple[str, Any] | None:
    """The bound of pydantic's own bound validators (``ge=0`` on a union), else None."""
    if not isinstance(call, functools.partial) or call.args or len(call.keywords) != 1:
        return None
    names = {
        "greater_than_or_equal_validator": "ge",
        "greater_than_validator": "gt",
        "less_than_or_equal_validator": "le",
        "less_than_validator": "lt",
    }
    name = names.get(getattr(call.func, "__name__", ""))
    if name is None or name not in call.keywords:
        return None
    return name, call.keywords[name]


def _enum_value_check(schema: Mapping[str, Any]) -> Check | None:
    """An enum of text validated to its member's value (``use_enum_values``)."""
    allowed = _COMMON | {"cls", "members", "sub_type"}
    if schema.get("type") != "enum" or schema.get("sub_type") != "str":
        return None
    if not set(schema) <= allowed:
        return None
    texts = frozenset(member.value for member in schema["members"])
    if not all(type(text) is str for text in texts):
        return None

    def check(values: list[Any], kinds: set[type]) -> bool:
        return kinds <= {str} and set(values) <= texts

    return check


def _list_check(
    schema: Mapping[str, Any], definitions: Mapping[str, Mapping[str, Any]]
) -> Check | None:
    """A list of text, or of plain models of text fields (given as dicts)."""
    if not set(schema) <= _COMMON | {"items_schema"}:
        return None
    items = schema["items_schema"]
    if items.get("type") == "definition-ref":
        items = definitions.get(items.get("schema_ref", ""), {})
    if items.get("type") == "str" and set(items) <= _COMMON:

        def texts(values: list[Any], kinds: set[type]) -> bool:
            if not kinds <= {list}:
                return False
            return set(map(type, chain.from_iterable(values))) <= {str}

        return texts
    names = _plain_model_fields(items)
    if names is None:
        return None

    def models(values: list[Any], kinds: set[type]) -> bool:
        if not kinds <= {list}:
            return False
        flat = list(chain.from_iterable(values))
        if not set(map(type, flat)) <= {dict} or not set(map(tuple, flat)) <= {names}:
            return False
        return set(map(type, chain.from_iterable(map(dict.values, flat)))) <= {str}

    return models


def _plain_model_fields(schema: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The field names of a model of plain text fields (no validators, aliases, defaults or
    extras: it validates a dict of exactly those fields and dumps it back), else None."""
    if schema.get("type") != "model" or schema.get("custom_init") or schema.get("post_init"):
        return None
    if schema.get("root_model"):
        return None
    cls = schema.get("cls")
    decorators = getattr(cls, "__pydantic_decorators__", None)
    if decorators is None or any(
        getattr(decorators, kind)
        for kind in (
            "validators",
            "field_validators",
            "root_validators",
            "model_validators",
            "field_serializers",
            "model_serializers",
            "computed_fields",
        )
    ):
        return None
    inner = schema.get("schema", {})
    if inner.get("type") != "model-fields" or inner.get("computed_fields"):
        return None
    if not set(inner) <= _COMMON | {"fields", "model_name", "computed_fields"}:
        return None
    names: list[str] = []
    for name, spec in inner.get("fields", {}).items():
        allowed = {"type", "schema", "metadata"}
        if not set(spec) <= allowed or spec.get("schema") != {"type": "str"}:
            return None
        names.append(name)
    model_config = getattr(cls, "model_config", {})
    if not set(model_config) <= _PLAIN_CONFIG:
        return None
    return tuple(names)
