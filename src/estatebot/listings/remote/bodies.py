"""Canonical frame rows → validated Update and Create bodies.

A row of the canonical frame (:mod:`.schema`) already uses the Update body's field names, so a
body is the row with its missing values left out and its values made plain Python: ``Int64``
values become ``int`` (never ``3.0``), ``Float64`` values ``float``, ``Images`` a ``list[str]``
(sent even when empty, so an update can clear it) and ``ExtensionColumn`` the wire's list of
``{"Key": ..., "value": ...}`` items. Each body is validated with the request models of
:mod:`estatebot.api.models`, so a bad row is caught here, named, before anything is sent.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, overload

import numpy as np
import pandas as pd
from pydantic import ValidationError

from estatebot.api.models import KeyType, ListingInput, ListingUpdate, field_problems
from estatebot.errors import PlanError
from estatebot.listings import schema

ErrorMode = Literal["raise", "collect"]

_Body = TypeVar("_Body", ListingInput, ListingUpdate)

# The listing fields a body carries: every canonical column but the service's own ID.
_BODY_COLUMNS: tuple[str, ...] = tuple(column for column in schema.COLUMNS if column != "ID")


@dataclass(frozen=True)
class BodyBatch(Generic[_Body]):
    """Bodies built in `errors="collect"` mode, and the rows that could not become one.

    `rows[i]` is the frame's index label of `bodies[i]`; each problem is a `PlanError` naming
    its row label, field and value.
    """

    bodies: list[_Body]
    rows: list[Hashable] = field(default_factory=list)
    problems: list[PlanError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every row became a body."""
        return not self.problems


@overload
def to_update_bodies(
    frame: pd.DataFrame,
    *,
    serial: str,
    key_type: str | KeyType = ...,
    defaults: Mapping[str, Any] | None = ...,
    errors: Literal["raise"] = ...,
) -> list[ListingUpdate]: ...
@overload
def to_update_bodies(
    frame: pd.DataFrame,
    *,
    serial: str,
    key_type: str | KeyType = ...,
    defaults: Mapping[str, Any] | None = ...,
    errors: Literal["collect"],
) -> BodyBatch[ListingUpdate]: ...
def to_update_bodies(
    frame: pd.DataFrame,
    *,
    serial: str,
    key_type: str | KeyType = KeyType.MLS_NUMBER,
    defaults: Mapping[str, Any] | None = None,
    errors: ErrorMode = "raise",
) -> list[ListingUpdate] | BodyBatch[ListingUpdate]:
    """One RealEstateUpdate body per row of a canonical frame, in row order.

    `Key` comes from the key column of `key_type` (`MLSNumber`, `Url`, or `ID` as text for
    `NewOaks`). `defaults` gives values for fields a row leaves empty: List never returns
    `AreaUnit` (a required field) nor `Location`, so a frame pulled from the service needs at
    least `defaults={"AreaUnit": ...}`. With `errors="raise"` the first row that fails
    validation raises a `PlanError` naming its index label, MLS number, field and value; with
    `errors="collect"` every row is tried and a `BodyBatch` is returned.

    Args:
        frame: The canonical listing frame, one body per row; its index labels name the rows
            in errors.
        serial: The chatbot's serial number, sent as `SerialNumber` in every body.
        key_type: How each body names its listing: `"MLSNumber"` (default), `"URL"` or
            `"NewOaks"` (the service's ID).
        defaults: Values for the fields a row leaves empty, by field name (None: none).
        errors: `"raise"` (default) stops at the first row that fails validation;
            `"collect"` tries every row.

    Returns:
        The validated `ListingUpdate` bodies, in row order; with `errors="collect"`, a
            `BodyBatch` of the bodies, their rows and the problems of the rows left out.

    Raises:
        PlanError: With `errors="raise"`, for the first row that cannot become a valid body,
            naming its index label, MLS number, field and value.
        ValueError: When `errors` is neither `"raise"` nor `"collect"`, `key_type` is no key
            type, or `defaults` names a field that is not a listing field.
    """
    kind = KeyType(key_type)
    key_column = schema.KEY_COLUMNS[kind.value]
    batch = _build(
        frame,
        ListingUpdate,
        serial=serial,
        key=(kind, key_column),
        defaults=defaults,
        errors=errors,
    )
    return batch if errors == "collect" else batch.bodies


@overload
def to_create_bodies(
    frame: pd.DataFrame,
    *,
    serial: str,
    defaults: Mapping[str, Any] | None = ...,
    errors: Literal["raise"] = ...,
) -> list[ListingInput]: ...
@overload
def to_create_bodies(
    frame: pd.DataFrame,
    *,
    serial: str,
    defaults: Mapping[str, Any] | None = ...,
    errors: Literal["collect"],
) -> BodyBatch[ListingInput]: ...
def to_create_bodies(
    frame: pd.DataFrame,
    *,
    serial: str,
    defaults: Mapping[str, Any] | None = None,
    errors: ErrorMode = "raise",
) -> list[ListingInput] | BodyBatch[ListingInput]:
    """One RealEstateCreate body per row of a canonical frame, in row order.

    `defaults` and errors are handled as in `to_update_bodies`.

    Args:
        frame: The canonical listing frame, one body per row; its index labels name the rows
            in errors.
        serial: The chatbot's serial number, sent as `SerialNumber` in every body.
        defaults: Values for the fields a row leaves empty, by field name (None: none).
        errors: `"raise"` (default) stops at the first row that fails validation;
            `"collect"` tries every row.

    Returns:
        The validated `ListingInput` bodies, in row order; with `errors="collect"`, a
            `BodyBatch` of the bodies, their rows and the problems of the rows left out.

    Raises:
        PlanError: With `errors="raise"`, for the first row that cannot become a valid body,
            naming its index label, MLS number, field and value.
        ValueError: When `errors` is neither `"raise"` nor `"collect"`, or `defaults` names a
            field that is not a listing field.
    """
    batch = _build(frame, ListingInput, serial=serial, key=None, defaults=defaults, errors=errors)
    return batch if errors == "collect" else batch.bodies


def _build(
    frame: pd.DataFrame,
    model: type[_Body],
    *,
    serial: str,
    key: tuple[KeyType, str] | None,
    defaults: Mapping[str, Any] | None,
    errors: ErrorMode,
) -> BodyBatch[_Body]:
    if errors not in ("raise", "collect"):
        raise ValueError(f"errors must be 'raise' or 'collect', not {errors!r}")
    fallback = {name: _plain(name, value) for name, value in (defaults or {}).items()}
    unknown = sorted(set(fallback) - set(_BODY_COLUMNS))
    if unknown:
        raise ValueError(f"defaults name fields that are not listing fields: {unknown}")
    batch: BodyBatch[_Body] = BodyBatch(bodies=[])
    for label, row in _rows(frame):
        body: dict[str, Any] = {"SerialNumber": serial}
        body.update((name, _plain(name, value)) for name, value in row.items())
        for name, value in fallback.items():
            if body.get(name) is None:
                body[name] = value
        body = {name: value for name, value in body.items() if value is not None}
        problems: list[tuple[str, str, Any]] = []
        if key is not None:
            kind, key_column = key
            body["KeyType"] = kind.value
            key_value = _key_text(row.get(key_column))
            if key_value is None:
                problems.append(("Key", f"is empty: the {key_column} column holds the key", None))
            else:
                body["Key"] = key_value
        try:
            built = model.model_validate(body)
        except ValidationError as error:
            named = {name for name, _, _ in problems}  # ours say more than "Field required"
            problems.extend(p for p in field_problems(error) if p[0] not in named)
        if problems:
            located = _located(label, row.get("MLSNumber"), problems)
            if errors == "raise":
                raise located[0]
            batch.problems.extend(located)
            continue
        batch.bodies.append(built)
        batch.rows.append(label)
    return batch


def _rows(frame: pd.DataFrame) -> Iterator[tuple[Hashable, dict[str, Any]]]:
    """Each row as ``{column: value}`` over the body columns present, values as Python objects."""
    present = [column for column in (*_BODY_COLUMNS, "ID") if column in frame.columns]
    # Column-wise tolist() turns Int64/Float64 values into Python int/float in one pass each.
    columns = {column: frame[column].tolist() for column in present}
    for position, label in enumerate(frame.index):
        yield label, {column: values[position] for column, values in columns.items()}


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float | np.floating) and bool(np.isnan(value))


def _plain(name: str, value: Any) -> Any:
    """A frame value as the JSON-ready Python value of body field ``name`` (None: leave out)."""
    if name == "ID" or _is_missing(value):
        return None
    if name in schema.LIST_COLUMNS:
        return [_scalar(item) for item in value] if _is_sequence(value) else value
    if name in schema.DICT_COLUMNS:
        if isinstance(value, Mapping):
            return [{"Key": str(k), "value": _text(v)} for k, v in value.items()]
        return value
    return _scalar(value)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, list | tuple | np.ndarray)


def _scalar(value: Any) -> Any:
    """numpy scalars as Python ones: ints stay ints, floats floats."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def _text(value: Any) -> str:
    """An extension value as the text the wire carries."""
    return value if isinstance(value, str) else "" if _is_missing(value) else str(_scalar(value))


def _key_text(value: Any) -> str | None:
    """A key value as the text the service expects (``12`` for an ID, never ``12.0``)."""
    if _is_missing(value):
        return None
    value = _scalar(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text or None


def _row_label(label: Hashable) -> int | str:
    """An index label as PlanError takes it: ints and text as they are, others as text."""
    if isinstance(label, np.integer):
        return int(label)
    return label if isinstance(label, int | str) else str(label)


#: What to do about a field List never returns, when a pulled row lacks it: no unit is guessed.
_UNSEEN_HINTS = {
    "AreaUnit": (
        " (List never returns AreaUnit: give it with defaults={'AreaUnit': 'Square Feet'}"
        " or 'Square Meters')"
    ),
}


def _located(
    label: Hashable, mls_number: Any, problems: list[tuple[str, str, Any]]
) -> list[PlanError]:
    """One PlanError per bad field, each naming the row and every problem of that row."""
    row = _row_label(label)
    listing = f"row {row!r}" if _is_missing(mls_number) else f"row {row!r} (MLS {mls_number})"
    summary = "; ".join(f"{name}: {message}" for name, message, _ in problems)
    return [
        PlanError(
            f"{listing} cannot be sent: {name}: {message}"
            + (_UNSEEN_HINTS.get(name, "") if _is_missing(value) else "")
            + (f" [all problems of the row: {summary}]" if len(problems) > 1 else ""),
            row=row,
            column=name,
            value=value,
        )
        for name, message, value in problems
    ]
