"""The canonical listing frame: one row per listing, the same columns everywhere.

Pulled listings, spreadsheet rows and plans all use this frame, so a value is converted once, at
the edge where it enters. Columns are ``ID`` (the listing's NewOaks key, NA for rows not yet on
the service) followed by the Update body's listing fields in the contract's order, named exactly as
on the wire, so a row maps to an Update body with no renaming.

Dtypes are pandas' nullable ones: ``Int64`` for counts and years, ``Float64`` for prices, areas and
coordinates, ``string`` for text, and ``object`` for the two structured columns: ``Images`` holds a
``list[str]`` and ``ExtensionColumn`` a ``dict[str, str]`` in every row (empty, never NA).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from estatebot.api.models import (
    LIST_RECORD_FIELDS,
    LISTING_FIELDS,
    REQUIRED_LISTING_FIELDS,
    AreaUnit,
    KeyType,
    ListingStatus,
    SaleType,
    SpaceType,
    Tours,
)

INT_COLUMNS: tuple[str, ...] = ("ID", "Bedrooms", "YearBuilt", "DaysOnMarket", "ParkingSpots")
FLOAT_COLUMNS: tuple[str, ...] = (
    "Bathrooms", "LotArea", "BuildingArea", "Latitude", "Longitude", "SalePrice",
    "UnitAreaPrice", "HOAMonth", "ZestimatePrice", "RentPrice", "DepositFee",
)  # fmt: skip
LIST_COLUMNS: tuple[str, ...] = ("Images",)
DICT_COLUMNS: tuple[str, ...] = ("ExtensionColumn",)

#: Every column of the canonical frame, in order.
COLUMNS: tuple[str, ...] = ("ID", *LISTING_FIELDS)


def _dtype_of(column: str) -> Any:
    if column in INT_COLUMNS:
        return "Int64"
    if column in FLOAT_COLUMNS:
        return "Float64"
    if column in LIST_COLUMNS or column in DICT_COLUMNS:
        return "object"
    return "string"


#: The dtype of every column, by name.
DTYPES: dict[str, Any] = {column: _dtype_of(column) for column in COLUMNS}

#: Columns that must be present and non-empty for a listing to be sent (the contract's required).
REQUIRED_COLUMNS: tuple[str, ...] = REQUIRED_LISTING_FIELDS

#: Columns the List operation never returns (it has no such field, nor one they derive from):
#: a pulled frame always has them empty, so a plan cannot compare them with the sheet. The
#: service still stores them, and Update replaces the whole listing, so bodies carry the
#: sheet's values.
UNLISTED_COLUMNS: tuple[str, ...] = tuple(
    column
    for column in LISTING_FIELDS
    if column
    not in {*LIST_RECORD_FIELDS, "Latitude", "Longitude"}  # LATITUDE/LONGITUDE on the wire
)

#: The ``attrs`` entry of a pulled frame naming the listings whose ``Location`` nobody here knows
#: (no value was ever recorded as sent to them): their IDs in one text, comma-separated. A text,
#: because pandas copies ``attrs`` with every derived frame (a str at no cost) and writes them
#: into a parquet file as JSON. Set by the pull, read by the planner.
LOCATION_UNKNOWN_ATTR = "location_unknown"

#: Allowed values of the enum columns.
ENUM_VALUES: dict[str, tuple[str, ...]] = {
    "SaleType": tuple(member.value for member in SaleType),
    "Status": tuple(member.value for member in ListingStatus),
    "AreaUnit": tuple(member.value for member in AreaUnit),
    "Tours": tuple(member.value for member in Tours),
    "SpaceType": tuple(member.value for member in SpaceType),
}

#: The column that holds the key of each KeyType.
KEY_COLUMNS: dict[str, str] = {
    KeyType.MLS_NUMBER.value: "MLSNumber",
    KeyType.URL.value: "Url",
    KeyType.NEW_OAKS.value: "ID",
}


def empty_frame() -> pd.DataFrame:
    """A canonical frame with no rows: every column present with its dtype."""
    return pd.DataFrame({column: pd.Series(dtype=DTYPES[column]) for column in COLUMNS})


def conform(frame: pd.DataFrame, *, extra: Iterable[str] = ()) -> pd.DataFrame:
    """A copy of ``frame`` with the canonical columns in order and dtypes.

    Missing canonical columns are added as NA (``Images`` as empty lists, ``ExtensionColumn`` as
    empty dicts). Columns named in ``extra`` that exist are kept after the canonical ones; every
    other column is dropped. The caller's frame is never changed. Values must already be of the
    right kind: this casts dtypes, it does not parse text (that is :mod:`normalize`'s job).
    """
    n = len(frame)
    out: dict[str, Any] = {}
    for column in COLUMNS:
        dtype = DTYPES[column]
        if column in frame.columns:
            series = frame[column]
            if column in LIST_COLUMNS:
                out[column] = series.map(_as_list).astype("object")
            elif column in DICT_COLUMNS:
                out[column] = series.map(_as_dict).astype("object")
            else:
                out[column] = series.astype(dtype)
        elif column in LIST_COLUMNS:
            out[column] = pd.Series([[] for _ in range(n)], index=frame.index, dtype="object")
        elif column in DICT_COLUMNS:
            out[column] = pd.Series([{} for _ in range(n)], index=frame.index, dtype="object")
        else:
            out[column] = pd.Series(pd.NA, index=frame.index, dtype=dtype)
    for column in extra:
        if column in frame.columns and column not in out:
            out[column] = frame[column].copy()
    return pd.DataFrame(out, index=frame.index)


def _as_list(value: Any) -> list[str]:
    if isinstance(value, list):
        return value
    if value is None or (not isinstance(value, str | tuple) and pd.isna(value)):
        return []
    if isinstance(value, tuple):
        return list(value)
    return [value]


def _as_dict(value: Any) -> dict[str, str]:
    if isinstance(value, dict):
        return value
    return {}
