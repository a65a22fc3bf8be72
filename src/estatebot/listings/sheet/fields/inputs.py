"""The typed sources of a sheet (:class:`Inputs`), the reading choices (:class:`Options`), the
derived fields (:class:`Fields`), and the column helpers the field rules share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from estatebot.listings.sheet.fields import mls_values as rules
from estatebot.listings.sheet.fields.cell_types import (
    BoolArray,
    IntArray,
    value_text,
)
from estatebot.listings.sheet.fields.prepared import Column

STRING = pd.StringDtype("pyarrow")


@dataclass
class Inputs:
    """The typed sources of a sheet, with the prepared columns they came from."""

    n: int
    values: dict[str, pd.Series] = field(default_factory=dict)
    columns: dict[str, list[tuple[str, Column]]] = field(default_factory=dict)
    #: Per listing field, the rows where a cell feeding it had an error.
    bad: dict[str, BoolArray] = field(default_factory=dict)

    def mark_bad(self, field_name: str | None, mask: BoolArray) -> None:
        """Remember that a cell feeding ``field_name`` was rejected at ``mask``."""
        if field_name is not None:
            self.bad[field_name] = self.bad.get(field_name, np.zeros(self.n, dtype=bool)) | mask

    def get(self, source: str) -> pd.Series | None:
        """The typed values of ``source``, or None when no header feeds it."""
        return self.values.get(source)

    def header(self, *sources: str) -> str | None:
        """The header feeding the first of ``sources`` the sheet has."""
        for source in sources:
            if source in self.columns:
                return self.columns[source][0][0]
        return None

    def texts(self, source: str, positions: IntArray) -> list[str | None]:
        """The cell texts of ``source`` at ``positions``, for issue reports."""
        if source not in self.columns:
            return [None] * len(positions)
        cells = self.columns[source][0][1].cells
        return [None if v is None else value_text(v) for v in cells.values(positions)]

    def cleared(self, *sources: str) -> BoolArray:
        """Where the clear token appeared in any column feeding ``sources``."""
        mask = np.zeros(self.n, dtype=bool)
        for source in sources:
            for _, column in self.columns.get(source, []):
                mask |= column.cleared
        return mask


@dataclass(frozen=True)
class Options:
    """The reading choices that shape the rules."""

    defaults: Mapping[str, Any]
    status_table: Mapping[str, rules.StatusRule]
    decimal_baths: bool = False
    lot_unit: float | None = None  # square feet per unit of a unitless lot column
    #: Values set on every row, over what the sheet says: a deliberate overwrite.
    overrides: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class Fields:
    """The listing fields of every row, before row filtering."""

    values: dict[str, pd.Series]
    cleared: dict[str, BoolArray]
    unpublished: BoolArray
    #: RESO status name to keep in ExtensionColumn, or None.
    status_kept: list[str | None]
    #: Where a cell problem already explains an empty field (no second "required" message).
    bad: dict[str, BoolArray]
    #: The status text as written (or its default), for the rows left unpublished.
    status_text: pd.Series
    #: Per field, the rows whose value came from ``defaults``, not from the sheet: a plan uses
    #: such a value only where the listing has none.
    defaulted: dict[str, BoolArray] = field(default_factory=dict)
    #: Per field, the rows whose value the reader computed from others (UnitAreaPrice from
    #: price and area): a plan writes it with the values it comes from, never alone.
    derived: dict[str, BoolArray] = field(default_factory=dict)
    #: By row position, the ExtensionColumn keys whose cell holds the clear token (to be
    #: removed); rows with none are left out.
    extension_cleared: dict[int, list[str]] = field(default_factory=dict)


# --------------------------------------------------------------------------- helpers


def na(n: int, dtype: Any) -> pd.Series:
    series: pd.Series = pd.Series(pd.NA, index=pd.RangeIndex(n), dtype=dtype)
    return series


def present_mask(series: pd.Series | None, n: int) -> BoolArray:
    if series is None:
        return np.zeros(n, dtype=bool)
    return np.asarray(series.notna().to_numpy(dtype=bool))


def floats(series: pd.Series | None, n: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    if series is None:
        return np.full(n, np.nan)
    return np.asarray(series.to_numpy(dtype=float, na_value=np.nan), dtype=float)


def typed_series(values: Sequence[Any], dtype: Any) -> pd.Series:
    return pd.Series(pd.array(list(values), dtype=dtype))


def coalesce(n: int, dtype: Any, *sources: pd.Series | None) -> pd.Series:
    out = na(n, dtype)
    for series in sources:
        if series is not None:
            out = out.fillna(series.astype(dtype))
    return out


def text_of(inputs: Inputs, source: str) -> pd.Series:
    series = inputs.get(source)
    return series if series is not None else na(inputs.n, "string")
