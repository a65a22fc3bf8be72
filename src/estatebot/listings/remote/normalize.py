"""List records → the canonical listing frame.

RealEstateList returns every listing field as text, in several serializations (see the addendum's
decisions table): numbers as plain digits or dressed with currency symbols, thousands separators
and units; ``SaleType`` as display text; ``Images`` and ``ExtensionColumn`` as JSON text or looser
forms; ``LATITUDE``/``LONGITUDE`` under wire names; and ``Price``/``Area`` derived from other
fields. :func:`normalize_records` reads them all into the frame of :mod:`.schema`.

The records are read into columns by pyarrow, block by block of rows in one C pass (see
:func:`_columns_by_struct`), and each field is then parsed as a whole column (see
:mod:`.parsers`): no Python loop per value except to build the ``Images`` lists. A value
that cannot be read becomes NA and is reported in :attr:`NormalizeResult.problems`; nothing
raises on bad data and nothing is guessed.

Duplicate ``ID`` values are kept as they come: pulling de-duplicates listings, not this module.
"""

from __future__ import annotations

import html
import os
import re
import warnings
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from os import PathLike
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd

from estatebot._safe_cells import warn_changes
from estatebot._summary import Figure, Summary
from estatebot._theme import styled
from estatebot.listings import schema
from estatebot.listings.remote.parsed import Parsed, gc_paused, no_problems
from estatebot.listings.remote.parsers import (
    parse_enum,
    parse_extensions,
    parse_images,
    parse_numbers,
    parse_text,
)
from estatebot.listings.remote.records import WIRE_NAMES, Found, Parser, Source

#: Columns of :attr:`NormalizeResult.problems`, one row per value that could not be read.
PROBLEM_COLUMNS: tuple[str, ...] = ("ID", "MLSNumber", "column", "value", "message")

#: Prefix of the columns that ``expand_extensions=True`` adds, one per extension key.
EXTENSION_PREFIX = "ext."

#: Spellings accepted for each enum column besides its values (matched ignoring case and
#: punctuation, so ``For-Rent`` and `` for  rent `` are ``for rent``).
ENUM_ALIASES: dict[str, dict[str, str]] = {
    "SaleType": {
        "for sale": "for_sale",
        "sale": "for_sale",
        "for rent": "for_rent",
        "rent": "for_rent",
        "rental": "for_rent",
        "for lease": "for_rent",
        "lease": "for_rent",
    },
    "AreaUnit": {
        "sqft": "Square Feet",
        "sq ft": "Square Feet",
        "square foot": "Square Feet",
        "ft2": "Square Feet",
        "ft²": "Square Feet",
        "feet": "Square Feet",
        "sqm": "Square Meters",
        "sq m": "Square Meters",
        "square metres": "Square Meters",
        "square meter": "Square Meters",
        "square metre": "Square Meters",
        "m2": "Square Meters",
        "m²": "Square Meters",
        "meters": "Square Meters",
    },
}

# List's derived fields: Price is the sale or rent price by SaleType, Area the building area.
_PRICE_TARGETS: dict[str, str] = {"for_sale": "SalePrice", "for_rent": "RentPrice"}


class NormalizeWarning(UserWarning):
    """Some values could not be read; they are NA and listed in ``NormalizeResult.problems``."""


@dataclass(frozen=True)
class NormalizeResult:
    """The canonical frame read from List records, and the values that could not be read.

    `frame` has the columns of `schema.COLUMNS` with their dtypes (then `ext.<Key>` columns
    when asked for). `problems` has the columns of `PROBLEM_COLUMNS`, one row per unreadable
    value, indexed by the row's label in `frame`; `column` names the field as it came in
    (`LATITUDE`, `Price`), `value` is the value as text.

    Held, shown and saved as every result is: `summary`, `to_frame`, `to_excel`, and a table
    of the problems in a notebook.
    """

    frame: pd.DataFrame
    problems: pd.DataFrame = field(repr=False)

    @property
    def counts(self) -> dict[str, int]:
        """The number of problems per input field, most first."""
        counts = self.problems["column"].value_counts()
        return {str(name): int(count) for name, count in counts.items()}

    def summary(self) -> Summary:
        """One line: rows read and problems by field; the figures in `.counts` (`listings`,
        `problems`, then the problems of each field by its name).

        Returns:
            The line, as a `Summary` that carries those figures.
        """
        figures: dict[str, Figure] = {"listings": len(self.frame), "problems": len(self.problems)}
        figures.update(self.counts)
        rows = f"{len(self.frame)} listings"
        if not len(self.problems):
            return Summary(f"{rows}, every value read", figures)
        by_column = ", ".join(f"{name} {count}" for name, count in self.counts.items())
        text = f"{rows}, {len(self.problems)} values unreadable or missing (now NA): {by_column}"
        return Summary(text, figures)

    def to_frame(self) -> pd.DataFrame:
        """A copy of `frame`, the canonical listing frame.

        Returns:
            A new DataFrame: changing it leaves the result as it was.
        """
        return self.frame.copy()

    def to_excel(self, path: str | PathLike[str]) -> Path:
        """Write sheets `Listings` (`row` is the frame's index; lists and mappings as JSON
        text) and `Problems` (indexed the same way) to an .xlsx workbook; returns the path.

        The values come from the service, so they go in by the rules of
        `estatebot._safe_cells`: never a formula; characters a cell cannot hold removed and
        text longer than a cell holds cut, each cell so changed named in a `CellWarning`.

        Args:
            path: The workbook to write; its folder is made when missing.

        Returns:
            The path written, as a `Path`.
        """
        # Imported here: reading records needs no workbook writer.
        from estatebot.listings.export import flatten_for_cells, write_workbook

        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        sheets = {
            "Listings": flatten_for_cells(self.frame).rename_axis("row").reset_index(),
            "Problems": self.problems.rename_axis("row").reset_index(),
        }
        warn_changes(write_workbook(target, sheets, too_long="cut"), target.name)
        return target

    def __repr__(self) -> str:
        return f"<NormalizeResult {self.summary()}>"

    def _repr_html_(self) -> str:
        # As a Sheet shows itself: the line to read, then the first problems. Values come from
        # the service, so pandas escapes every cell.
        head = f"<p class='eb-title'>{html.escape(self.summary())}</p>"
        if self.problems.empty:
            return styled(head)
        shown = self.problems.head(_HTML_ROWS).rename_axis("row").reset_index()
        table = shown.to_html(index=False, na_rep="", escape=True, border=0, classes="eb-table")
        more = len(self.problems) - _HTML_ROWS
        tail = f"<p class='eb-muted'>… {more} more in <code>.problems</code></p>"
        return styled(f"{head}<div class='eb-scroll'>{table}</div>{tail if more > 0 else ''}")


# The problems a notebook lists; the rest are counted (all are in .problems).
_HTML_ROWS = 20


def normalize_records(
    records: Iterable[Mapping[str, Any]] | pd.DataFrame,
    *,
    expand_extensions: bool = False,
) -> NormalizeResult:
    """Read List records (or a frame of them) into the canonical listing frame.

    Accepts every serialization the addendum lists: numbers as text with currency, thousands
    separators, units or absent markers; `SaleType` display text; `Images` as JSON, comma- or
    pipe-separated text; `ExtensionColumn` as JSON or `key: value` pairs; `LATITUDE` and
    `LONGITUDE`; `Price` (into `SalePrice` or `RentPrice` by `SaleType`) and `Area` (into
    `BuildingArea`), each only where the target is empty. Canonical field names are read too.
    Unknown fields are ignored. Rows keep their order (and a frame's index); duplicate IDs are
    kept. The input is never changed. A value that cannot be read becomes NA and is listed in
    the result's `problems`: nothing raises on bad data.

    Args:
        records: The List records, each a mapping of field name to value, or a DataFrame of
            them (its index is kept).
        expand_extensions: Also give each extension key a `string` column `ext.<Key>`, after
            the canonical ones.

    Returns:
        A `NormalizeResult`, the canonical frame and the values that could not be read.

    Warns:
        NormalizeWarning: Once, when some values could not be read.
    """
    with gc_paused():
        source = Source(records)
        columns = _parse_columns(source)
        frame = pd.DataFrame(columns, index=pd.RangeIndex(source.n), copy=False)
        problems = _problem_frame(source.found, frame)
        if expand_extensions:
            frame = pd.concat([frame, _extension_columns(frame["ExtensionColumn"])], axis=1)
    frame.index = source.index
    problems.index = pd.Index(source.index[problems.index.to_numpy(int)], name="row")
    result = NormalizeResult(frame, problems)
    if len(problems):
        warnings.warn(str(result.summary()), NormalizeWarning, stacklevel=2)
    return result


# --------------------------------------------------------------------------- reading columns


def _parse_columns(source: Source) -> dict[str, pd.Series]:
    """Every canonical column parsed, two columns at a time, then the derived fields applied.

    Much of a column's parsing runs in pyarrow kernels, which release the interpreter lock, and
    the two JSON columns spend their time building Python objects, which holds it: parsing them
    side by side keeps both cores busy. Problems are gathered in column order, as if sequential.
    """
    names = [*schema.COLUMNS, *_DERIVED]
    if source.n < _THREADED_ROWS or _PARSE_THREADS < 2:
        parsed = {name: _parse_column(source, name) for name in names}
    else:
        order = sorted(names, key=lambda name: name not in _SLOW_COLUMNS)
        with ThreadPoolExecutor(max_workers=_PARSE_THREADS) as pool:
            futures = {name: pool.submit(_parse_column, source, name) for name in order}
            parsed = {name: futures[name].result() for name in names}
    for _, found in parsed.values():
        source.found.extend(found)
    columns = {
        column: values if values is not None else _empty_column(column, source.n)
        for column, (values, _) in parsed.items()
        if column not in _DERIVED
    }
    _fill_derived(columns, price=parsed["Price"][0], area=parsed["Area"][0])
    unit, _ = source.read("Area", _area_unit)
    if unit is not None:
        # List never returns AreaUnit; an Area written with its unit ("120 m²") says it.
        columns["AreaUnit"] = columns["AreaUnit"].fillna(unit)
    return columns


def _parse_column(source: Source, column: str) -> tuple[pd.Series | None, list[Found]]:
    parser = _parser_for(column) if column not in _DERIVED else parse_numbers
    values, found = source.read(column, parser)
    if column in WIRE_NAMES:
        wire, wire_found = source.read(WIRE_NAMES[column], parser)
        found = found + wire_found
        values = wire if values is None else values if wire is None else values.fillna(wire)
    return values, found


# Parsed first, so the other columns' pyarrow work runs beside their Python work.
_SLOW_COLUMNS = frozenset({"Images", "ExtensionColumn"})
# List's derived fields, read as numbers beside the canonical columns (see _fill_derived).
_DERIVED = ("Price", "Area")


def _usable_cpus() -> int:
    # The CPUs this process may run on: a container may allow fewer than the machine has.
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


_PARSE_THREADS = min(2, _usable_cpus())
# Below this many rows, starting threads costs more than they save.
_THREADED_ROWS = 50_000


def _parser_for(column: str) -> Parser:
    if column in schema.INT_COLUMNS:
        return partial(parse_numbers, integer=True)
    if column in schema.FLOAT_COLUMNS:
        return parse_numbers
    if column in schema.ENUM_VALUES:
        return partial(
            parse_enum,
            allowed=schema.ENUM_VALUES[column],
            aliases=ENUM_ALIASES.get(column, {}),
        )
    if column in schema.LIST_COLUMNS:
        return parse_images
    if column in schema.DICT_COLUMNS:
        return parse_extensions
    return parse_text


def _empty_column(column: str, n: int) -> pd.Series:
    index = pd.RangeIndex(n)
    if column in schema.LIST_COLUMNS:
        return pd.Series([[] for _ in range(n)], index=index, dtype=object)
    if column in schema.DICT_COLUMNS:
        return pd.Series([{} for _ in range(n)], index=index, dtype=object)
    empty: pd.Series = pd.Series(pd.NA, index=index, dtype=schema.DTYPES[column])
    return empty


def _fill_derived(
    columns: dict[str, pd.Series], *, price: pd.Series | None, area: pd.Series | None
) -> None:
    """Fill SalePrice/RentPrice from Price and BuildingArea from Area, only where empty."""
    if price is not None:
        sale_type = columns["SaleType"]
        for kind, target in _PRICE_TARGETS.items():
            rows = (sale_type == kind).fillna(False).to_numpy(bool)
            fill = rows & columns[target].isna().to_numpy(bool)
            columns[target] = columns[target].mask(fill, price)
    if area is not None:
        columns["BuildingArea"] = columns["BuildingArea"].fillna(area)


# The unit at the end of an area written for people ("2,500 sqft", "120 m²"), by spelling.
_AREA_UNIT_SUFFIX = re.compile(
    r"(?i)(?P<unit>sq\.?\s*(?:ft|feet|foot|m|meters?|metres?)\.?|square\s+(?:feet|foot|meters?"
    r"|metres?)|sqft|sqm|sf|ft²|ft2|m²|m2)\s*$"
)


def _area_unit(raw: pd.Series) -> Parsed:
    """The ``AreaUnit`` an ``Area`` text names by its suffix, else NA (never a problem)."""

    def unit_of(value: Any) -> Any:
        found = _AREA_UNIT_SUFFIX.search(value) if isinstance(value, str) else None
        if found is None:
            return pd.NA
        # Every spelling of feet above has an "f" (ft, feet, foot, sf), none of metres has.
        return "Square Feet" if "f" in found["unit"].casefold() else "Square Meters"

    values = pd.Series(raw.map(unit_of), index=raw.index, dtype=schema.DTYPES["AreaUnit"])
    return Parsed(values, no_problems())


# --------------------------------------------------------------------------- problems


def unreadable_values(frame: pd.DataFrame, problems: pd.DataFrame) -> dict[int, dict[str, str]]:
    """The text of each value that could not be read, by listing ID and field (where the field
    stayed empty: a value read from another input, such as ``Price`` for ``SalePrice``, is not
    lost). ``problems`` is :attr:`NormalizeResult.problems` of ``frame``."""
    fields_of = {wire: name for name, wire in WIRE_NAMES.items()}
    out: dict[int, dict[str, str]] = {}
    sale_types = frame["SaleType"]
    for label, column, value in zip(
        problems.index, problems["column"], problems["value"], strict=True
    ):
        ident = frame["ID"].iat[label] if label < len(frame) else pd.NA
        if ident is pd.NA or value is None or value is pd.NA:
            continue
        ident = int(cast(int, ident))
        name = fields_of.get(column, column)
        if name == "Price":
            sale = sale_types.iat[label]
            name = _PRICE_TARGETS.get(sale) if isinstance(sale, str) else None
        elif name == "Area":
            name = "BuildingArea"
        if name not in schema.DTYPES or name == "ID":
            continue
        if frame[name].iat[label] is pd.NA or _is_empty(frame[name].iat[label]):
            out.setdefault(ident, {}).setdefault(name, str(value))
    return out


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, (list, dict)) and not value)


def _problem_frame(found: list[Found], frame: pd.DataFrame) -> pd.DataFrame:
    """One row per unreadable value, by row position then field, plus rows that lack an ID."""
    parts: list[pd.DataFrame] = []
    for item in found:
        positions = item.parsed.problems.index.to_numpy(int)
        parts.append(
            pd.DataFrame(
                {
                    "column": item.name,
                    "value": _as_text(item.raw.iloc[positions]),
                    "message": item.parsed.problems.to_numpy(object),
                },
                index=positions,
            )
        )
    # An ID that is NA without a problem of its own was not given at all.
    unreadable_ids = [item.parsed.problems.index for item in found if item.name == "ID"]
    no_id = frame["ID"].isna().to_numpy(bool, copy=True)
    if unreadable_ids:
        no_id[unreadable_ids[0].to_numpy(int)] = False
    missing = np.flatnonzero(no_id)
    if len(missing):
        parts.append(
            pd.DataFrame({"column": "ID", "value": None, "message": "missing ID"}, index=missing)
        )
    if not parts:
        positions = np.array([], dtype=int)
        body = pd.DataFrame({"column": [], "value": [], "message": []}, index=positions)
    else:
        body = pd.concat(parts)
        body = body.iloc[np.argsort(body.index.to_numpy(int), kind="stable")]
    rows = body.index.to_numpy(int)
    return pd.DataFrame(
        {
            "ID": frame["ID"].array.take(rows),
            "MLSNumber": frame["MLSNumber"].array.take(rows),
            "column": body["column"].to_numpy(object),
            "value": body["value"].to_numpy(object),
            "message": body["message"].to_numpy(object),
        },
        index=rows,
    ).astype(
        {
            "ID": schema.DTYPES["ID"],
            "MLSNumber": schema.DTYPES["MLSNumber"],
            "column": "string",
            "value": "string",
            "message": "string",
        }
    )


def _as_text(values: pd.Series) -> np.ndarray[Any, np.dtype[np.object_]]:
    """Raw values as text for the report; missing ones stay missing."""
    return np.array([None if _missing(value) else str(value) for value in values], dtype=object)


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


# --------------------------------------------------------------------------- extensions


def _extension_columns(extensions: pd.Series) -> pd.DataFrame:
    """One ``string`` column ``ext.<Key>`` per extension key, in order of first appearance."""
    expanded = pd.DataFrame.from_records(extensions.tolist(), index=extensions.index)
    expanded.columns = [f"{EXTENSION_PREFIX}{key}" for key in expanded.columns]
    return expanded.astype(pd.StringDtype())
