"""Listing values as JSON and the validated request bodies of a plan.

Part of planning (:mod:`estatebot.listings.sync.plan.sync_planner`): turns clean listing values
into JSON-safe
values and into the request bodies that creates and updates carry, validated with the request
models (``ListingInput``, ``ListingUpdate``) a column at a time. A column whose values the field
returns as they are (:mod:`.passthrough`) skips the validator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Annotated, Any, cast

import numpy as np
import pandas as pd
from pydantic import TypeAdapter, ValidationError

from estatebot.api.models import ListingInput, ListingUpdate, field_problems
from estatebot.listings import schema
from estatebot.listings.sync.values.passthrough import Check, passthrough_check, same_values
from estatebot.listings.sync.values.tidy import NONE

__all__ = [
    "FIELDS",
    "Columns",
    "Outcome",
    "RequestBodies",
    "build_bodies",
    "empty_like",
    "json_columns",
    "json_rows",
    "update_accepts",
]

#: Listing fields, in the contract's order (the canonical columns less ``ID``).
FIELDS: tuple[str, ...] = tuple(c for c in schema.COLUMNS if c != "ID")
# Bodies are validated with the real models before the chatbot's serial is known; apply adds
# the real one. The placeholder never leaves a body.
SERIAL_PLACEHOLDER = "serial"

Mask = np.ndarray[Any, np.dtype[np.bool_]]
#: Values by field name, one per listing.
Columns = dict[str, list[Any]]
#: A validated wire body, or None and the reasons why not.
Outcome = tuple[dict[str, Any] | None, list[str]]


def json_columns(frame: pd.DataFrame, columns: Sequence[str]) -> Columns:
    """Columns of a clean frame as lists of JSON-safe values (NA → None; lists, dicts copied)."""
    out: Columns = {}
    for column in columns:
        values = frame[column].to_numpy(dtype=object, na_value=NONE).tolist()
        if column in schema.LIST_COLUMNS:
            values = list(map(list, values))
        elif column in schema.DICT_COLUMNS:
            values = list(map(dict, values))
        out[column] = values
    return out


def json_rows(columns: Columns, n: int) -> list[dict[str, Any]]:
    """The rows of :func:`json_columns`' result as dicts."""
    if not columns:
        return [{} for _ in range(n)]
    names = list(columns)
    # Built by map and zip (no Python frame per row): the columns are all n long.
    return list(map(dict, map(zip, repeat(names), zip(*columns.values(), strict=True))))


def empty_like(column: str) -> Any:
    """The empty value of a field: ``[]``, ``{}`` or None."""
    if column in schema.LIST_COLUMNS:
        return []
    if column in schema.DICT_COLUMNS:
        return {}
    return None


# --------------------------------------------------------------------------- bodies


def field_adapters(model: type[ListingInput]) -> dict[str, TypeAdapter[Any]] | None:
    """A validator of a list of values for every field of ``model``: its annotation, constraints
    and config; None when the model has rules beyond its fields (then bodies are validated whole).
    """
    decorators = model.__pydantic_decorators__
    if (
        decorators.validators
        or decorators.field_validators
        or decorators.root_validators
        or decorators.model_validators
        or decorators.field_serializers
        or decorators.model_serializers
        or decorators.computed_fields
    ):
        return None
    adapters: dict[str, TypeAdapter[Any]] = {}
    for name, info in model.model_fields.items():
        aliases = (info.alias, info.validation_alias, info.serialization_alias)
        if any(alias not in (None, name) for alias in aliases) or info.exclude:
            return None  # a field renamed or left out on the wire: validate bodies whole
        if not info.is_required() and info.default is not None:
            return None  # a default the model would fill in: validate bodies whole
        annotation: Any = info.annotation
        if info.metadata:
            annotation = Annotated[(annotation, *info.metadata)]
        adapters[name] = TypeAdapter(list[annotation], config=model.model_config)
    return adapters


class RequestBodies:
    """Request bodies of one model, validated a column at a time.

    Each field's values are validated (distinct values once) with a validator built from the
    model's own field (annotation, constraints, config) and dumped in JSON mode; a body is its
    row of dumped values without the empty ones, exactly what ``to_wire`` of the validated model
    gives. A listing with a rejected value is validated again alone with the model, for its
    reasons. A model with validators beyond its fields is validated body by body, in one batch.
    """

    def __init__(self, model: type[ListingInput]) -> None:
        self.model = model
        self.update = issubclass(model, ListingUpdate)
        self.names = [name for name in model.model_fields if name != "SerialNumber"]
        self._adapters: dict[str, TypeAdapter[Any]] | None = None
        self._checks: dict[str, Check] = {}
        self._whole: TypeAdapter[list[Any]] | None = None
        self._ready = False

    def _prepare(self) -> None:
        # Built on first use: import stays fast.
        if not self._ready:
            self._adapters = field_adapters(self.model)
            for name, adapter in (self._adapters or {}).items():
                check = passthrough_check(adapter.core_schema, self.model.model_config)
                if check is not None:
                    self._checks[name] = check
            self._whole = TypeAdapter(list[self.model])  # type: ignore[name-defined]
            self._ready = True

    def _column(self, name: str, values: list[Any]) -> tuple[list[Any], set[int]]:
        """A field's values validated and dumped, and the positions of the rejected ones.

        A column whose values the field returns as they are (:mod:`.passthrough`) is not sent
        through the validator one value at a time.
        """
        assert self._adapters is not None
        check = self._checks.get(name)
        kinds = set(map(type, values))  # by type: no value is compared with None
        present = [v for v in values if v is not None] if type(None) in kinds else values
        if check is not None and check(present, kinds - {type(None)}):
            # The wire form of a mapping is made afresh for this call: nothing to copy.
            fresh = name in schema.DICT_COLUMNS
            return (list(values) if fresh else same_values(values, kinds)), set()
        return _validate_column(self._adapters[name], values)

    def build(self, data: Columns, cleared: Mapping[str, Mask], n: int) -> list[Outcome]:
        """A body or the reasons against it for each of ``n`` listings given by columns.

        ``data`` holds each field's clean values (``ExtensionColumn`` as dicts; ``Key`` and
        ``KeyType`` for updates); ``cleared`` says which fields the sheet cleared, for the
        reasons of a required field left empty.
        """
        self._prepare()
        wire = {name: data.get(name) or [None] * n for name in self.names}
        for name in schema.DICT_COLUMNS:
            wire[name] = [
                [{"Key": k, "value": v} for k, v in (d or {}).items()] for d in wire[name]
            ]
        results: list[Outcome | None] = [None] * n
        for i, reasons in _missing_required(wire, cleared, n, update=self.update).items():
            results[i] = (None, reasons)
        if self._adapters is None:
            return self._build_whole(wire, results)
        failed: set[int] = set()
        dumped: list[list[Any]] = []
        for name in self.names:
            values, bad = self._column(name, wire[name])
            dumped.append(values)
            failed |= bad
        names = self.names
        bodies = list(map(dict, map(zip, repeat(names), zip(*dumped, strict=True))))
        for name, values in zip(names, dumped, strict=True):
            if None in values:  # an empty field is left out of the body
                for body, value in zip(bodies, values, strict=True):
                    if value is None:
                        del body[name]
        for i, body in enumerate(bodies):
            if results[i] is None:
                if i in failed:
                    results[i] = (None, self._problems(_request(wire, names, i)))
                else:
                    results[i] = (body, [])
        return cast(list[Outcome], results)

    def _build_whole(self, wire: Columns, results: list[Outcome | None]) -> list[Outcome]:
        assert self._whole is not None
        pending = [i for i, outcome in enumerate(results) if outcome is None]
        requests = [_request(wire, self.names, i) for i in pending]
        outputs, bad = _validate_list(self._whole, requests)
        for at, i in enumerate(pending):
            if at in bad:
                results[i] = (None, self._problems(requests[at]))
            else:
                body = dict(outputs[at])
                body.pop("SerialNumber", None)
                results[i] = (body, [])
        return cast(list[Outcome], results)

    def _problems(self, data: Mapping[str, Any]) -> list[str]:
        """The reasons the request model rejects one listing's body."""
        try:
            self.model.model_validate(data)
        except ValidationError as error:
            return [
                f"{f}: {message} (got {value!r})" for f, message, value in field_problems(error)
            ]
        return ["rejected by the request model"]  # pragma: no cover - a field was rejected


_BODIES: dict[bool, RequestBodies] = {
    True: RequestBodies(ListingUpdate),
    False: RequestBodies(ListingInput),
}


def _request(wire: Columns, names: Sequence[str], i: int) -> dict[str, Any]:
    """One listing's request data, as the request model reads it (empty fields left out)."""
    data: dict[str, Any] = {"SerialNumber": SERIAL_PLACEHOLDER}
    for name in names:
        value = wire[name][i]
        if value is not None:
            data[name] = value
    return data


def _missing_required(
    wire: Columns, cleared: Mapping[str, Mask], n: int, *, update: bool
) -> dict[int, list[str]]:
    """The listings missing a required field, with a reason per field (in the contract's order)."""
    found: dict[int, list[str]] = {}
    for name in schema.REQUIRED_COLUMNS:
        values = wire[name]
        if None not in values:
            continue
        mask = cleared.get(name)
        for i in (i for i, value in enumerate(values) if value is None):
            if mask is not None and mask[i]:
                found.setdefault(i, []).append(f"{name}: cleared, but the field is required")
            elif update:
                # Only a field List never returns can be empty on both sides.
                found.setdefault(i, []).append(
                    f"{name}: the service does not return it and the sheet gives none "
                    f"(add a {name} column or defaults=): required, but empty"
                )
            else:
                found.setdefault(i, []).append(
                    f"{name}: required, but empty (a new listing needs it: fill the cell, or "
                    f"add a {name} column or defaults=)"
                )
    return dict(sorted(found.items()))


def _validate_list(adapter: TypeAdapter[Any], values: list[Any]) -> tuple[list[Any], set[int]]:
    """Validate and dump (JSON mode) a list of values; the positions of the rejected ones."""
    out: list[Any] = [None] * len(values)
    failed: set[int] = set()
    pending = list(range(len(values)))
    while pending:
        try:
            models = adapter.validate_python([values[i] for i in pending])
        except ValidationError as error:
            rejected = {
                int(problem["loc"][0])
                for problem in error.errors(include_url=False)
                if problem["loc"] and isinstance(problem["loc"][0], int)
            }
            if not rejected:  # not about one value: report it as it is
                raise
            failed.update(pending[at] for at in rejected)
            pending = [i for at, i in enumerate(pending) if at not in rejected]
            continue
        dumped = adapter.dump_python(models, mode="json", by_alias=True, exclude_none=True)
        for i, value in zip(pending, dumped, strict=True):
            out[i] = value
        break
    return out, failed


def _validate_column(adapter: TypeAdapter[Any], values: list[Any]) -> tuple[list[Any], set[int]]:
    """A field's values validated and dumped, each distinct value once; None stays None.

    Values of different types are told apart (``1`` and ``1.0`` dump differently). Returns the
    dumped values and the positions of the rejected ones.
    """
    types_all = set(map(type, values))
    types = types_all - {type(None)}
    keys: list[Any] = (
        values if len(types) < 2 else list(zip(map(type, values), values, strict=True))
    )
    try:
        unique = dict.fromkeys(keys)
    except TypeError:  # unhashable values (lists): validate them all
        present = [i for i, value in enumerate(values) if value is not None]
        dumped, bad = _validate_list(adapter, [values[i] for i in present])
        out: list[Any] = [None] * len(values)
        for at, i in enumerate(present):
            out[i] = dumped[at]
        return out, {present[at] for at in bad}
    if len(unique) == len(values) and type(None) not in types_all:
        return _validate_list(adapter, values)  # every value differs: no lookup needed
    empty = (type(None), None) if len(types) > 1 else None
    unique.pop(empty, None)  # an empty field is left out, not validated
    distinct = list(unique)
    inputs = distinct if len(types) < 2 else [value for _, value in distinct]
    dumped, bad = _validate_list(adapter, inputs)
    lookup = dict(zip(distinct, dumped, strict=True))
    lookup[empty] = None
    out = list(map(lookup.__getitem__, keys))
    if not bad:
        return out, set()
    rejected = {distinct[at] for at in bad}
    return out, {i for i, key in enumerate(keys) if key in rejected}


def update_accepts(name: str, value: Any) -> bool:
    """Whether an Update body takes ``value`` for field ``name`` as it is (e.g. a raw List text
    the pull could not read: ``"1001,6"`` is no number, a JSON object is no image URL)."""
    try:
        empty = cast(Any, ListingUpdate).model_construct()
        ListingUpdate.__pydantic_validator__.validate_assignment(empty, name, value)
    except ValidationError:
        return False
    return True


def build_bodies(
    data: Columns, cleared: Mapping[str, Mask], n: int, *, update: bool
) -> list[Outcome]:
    """A validated wire body (without ``SerialNumber``) for each of ``n`` listings, or None and
    the reasons why not (see :class:`RequestBodies`)."""
    return _BODIES[update].build(data, cleared, n)
