"""Read an MLS export (xlsx, csv or a DataFrame) into the canonical listing frame.

:func:`read_sheet` maps the headers (:mod:`headers`), types every cell faithfully
(:mod:`cells`), combines sources into listing fields and validates them (:mod:`sheet_fields`),
and returns a :class:`Sheet`: the valid rows as a canonical frame, every problem with its row,
column and value, how each header was read, the fields the user asked to clear, and the rows
whose status says they must not be published.

Row numbers are those a user sees in the file: with the header in row 1 the first listing is
row 2. A DataFrame is numbered as if written to a sheet with its header in row 1.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from estatebot.api.errors import SheetError
from estatebot.listings.schema import COLUMNS, KEY_COLUMNS, REQUIRED_COLUMNS, conform
from estatebot.listings.sheet import cells as cell_rules
from estatebot.listings.sheet import rules
from estatebot.listings.sheet.cells import Column, ObjectArray, objects, value_text
from estatebot.listings.sheet.fields import (
    LISTING_KEY,
    STATUS_KEY,
    Fields,
    Inputs,
    Issues,
    Options,
    derive,
    typed_default,
    validate,
)
from estatebot.listings.sheet.headers import (
    SOURCES,
    HeaderMatch,
    match_headers,
    unmatched_mapping_keys,
)
from estatebot.listings.sheet.xlsx import CellGrid, read_xlsx_cells

__all__ = ["Sheet", "read_sheet"]

IntArray = np.ndarray[Any, np.dtype[np.int64]]

#: Fields a default may fill (everything but the key of the service and the structured ones).
DEFAULTABLE: tuple[str, ...] = tuple(
    c for c in COLUMNS if c not in ("ID", "Images", "ExtensionColumn")
)
#: Besides their own columns, these sources can produce a required field.
_ALSO_PRODUCES: dict[str, tuple[str, ...]] = {
    "SaleType": ("PropertyType", "PropertySubType"),
    "AreaUnit": ("BuildingAreaSquareFeet",),
}
#: A disclaimer row (portal exports) has one long text in its first cell and nothing else.
_DISCLAIMER_MIN_LENGTH = 30

_ISSUE_COLUMNS = ("row", "column", "field", "value", "message", "severity")


@dataclass(repr=False)
class Sheet:
    """A spreadsheet read as listings.

    ``frame`` holds the valid rows only, as a canonical frame indexed by the row number a user
    sees in the file (index name ``row``). ``issues`` has one row per problem (``row``,
    ``column``, ``field``, ``value``, ``message``, ``severity``): an "error" rejects its row, a
    "warning" keeps it. ``mapping`` tells how each header was read. ``cleared`` marks, for the
    valid rows, the fields where the clear token asked to empty the field. ``unpublished`` lists
    the rows left out because their status (Withdrawn, Expired, ...) says the listing must not
    be published, with their key, so a plan can make the remote copy a delete candidate.
    """

    frame: pd.DataFrame
    issues: pd.DataFrame
    mapping: pd.DataFrame
    cleared: pd.DataFrame
    unpublished: pd.DataFrame
    source: str
    rows_read: int = 0

    @property
    def invalid_rows(self) -> list[int]:
        """The row numbers rejected by an error, sorted."""
        rows = self.errors["row"].dropna().unique()
        return sorted(int(r) for r in rows)

    @property
    def errors(self) -> pd.DataFrame:
        """The issues that reject their row (and sheet-level errors)."""
        return self.issues[self.issues["severity"] == "error"]

    @property
    def warnings(self) -> pd.DataFrame:
        """The issues that keep their row."""
        return self.issues[self.issues["severity"] == "warning"]

    def headline(self) -> str:
        """One line: rows read, valid, rejected, not published, warnings."""
        parts = [
            f"{self.rows_read} rows read",
            f"{len(self.frame)} valid",
            f"{len(self.invalid_rows)} rejected",
        ]
        if len(self.unpublished):
            parts.append(f"{len(self.unpublished)} not published")
        parts.append(f"{len(self.warnings)} warnings")
        return ", ".join(parts)

    def summary(self, limit: int = 10) -> str:
        """The headline and the first ``limit`` issues, one line each."""
        lines = [f"{self.source}: {self.headline()}"]
        for issue in self.issues.head(limit).itertuples(index=False):
            row, value_cell = issue.row, issue.value
            where = f"row {row}" if isinstance(row, int | np.integer) else "sheet"
            value = f" {value_cell!r}" if isinstance(value_cell, str) else ""
            lines.append(f"  {issue.severity}: {where}, {issue.column}:{value} {issue.message}")
        if len(self.issues) > limit:
            lines.append(f"  ... {len(self.issues) - limit} more in .issues")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Sheet {self.source}: {self.headline()}>"

    def _repr_html_(self) -> str:
        head = f"<p><b>{html.escape(self.source)}</b>: {html.escape(self.headline())}</p>"
        if self.issues.empty:
            return head
        table = self.issues.head(20).to_html(index=False, na_rep="", escape=True)
        more = f"<p>… {len(self.issues) - 20} more in <code>.issues</code></p>"
        return head + table + (more if len(self.issues) > 20 else "")


def read_sheet(
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    mapping: Mapping[str, str] | None = None,
    sheet_name: str | int | None = None,
    defaults: Mapping[str, Any] | None = None,
    pending_status: str = "Active",
    clear_token: str = "#CLEAR",
    extensions: bool = True,
    decimal_baths: bool = False,
    lot_unit: str | None = None,
    key: str = "MLSNumber",
    statuses: Mapping[str, str] | None = None,
) -> Sheet:
    """Read an MLS export into listings: the valid rows, and every problem by row and column.

    ``source`` is an xlsx or csv path, or a DataFrame (never changed). ``mapping``
    (``{header: field}``) overrides the header table; a field may also be a RESO source such as
    ``"BathroomsFull"``, ``"ExtensionColumn"`` (keep as an extra) or ``"ignore"``.
    ``sheet_name`` picks the worksheet (first by default). ``defaults`` fill fields the sheet
    lacks or leaves blank (``{"CurrencySymbol": "$", "AreaUnit": "Square Feet"}``).

    ``pending_status`` says what a Pending listing becomes: "Active" (the RESO status is kept
    in ExtensionColumn), "Sold", or "off-market" (not published). A cell holding
    ``clear_token`` empties its field (``Sheet.cleared``). Headers nothing maps go to
    ExtensionColumn when ``extensions`` is true. ``decimal_baths`` reads ``2.1`` in a bathrooms
    column as 2 full + 1 half baths. ``lot_unit`` ("sqft", "sqm", "acres", "hectares") is the
    unit of a lot column whose header gives none (``LOT SIZE``). ``key`` is the column whose
    duplicates are rejected ("MLSNumber", "Url" or "ID"). ``statuses`` maps raw statuses to a
    standard one where an MLS uses its own codes (``{"C": "Closed"}``).

    Raises :class:`SheetError` when the sheet cannot be read as listings at all: a required
    field with no column and no default, two headers for one field, an unknown field in
    ``mapping`` or ``defaults``, or a unitless lot column without ``lot_unit``.
    """
    key_column = _key_column(key)
    try:
        status_table = rules.status_table(pending_status, dict(statuses or {}))
        lot_factor = rules.parse_lot_unit(lot_unit)
    except ValueError as error:
        raise SheetError(str(error)) from None
    typed_defaults = _typed_defaults(defaults or {}, status_table)

    name, table = _read_table(source, sheet_name)
    issues = Issues()
    for row, column, value, message in table.notes:
        issues.add(
            [-1],
            column=column,
            field=None,
            values=value,
            message=message,
            severity="warning",
            row=row if row > 0 else None,
        )

    matches = match_headers(table.headers, mapping, extensions=extensions)
    for missing in unmatched_mapping_keys(table.headers, mapping or {}):
        issues.add(
            [-1],
            column=missing,
            field=None,
            values=None,
            severity="warning",
            message="is a header of the mapping that the sheet does not have",
        )
    _check_required(matches, typed_defaults, table.headers)

    columns = [cell_rules.prepare(raw, clear_token) for raw in table.columns]
    rows, columns = _drop_blank_rows(table.rows, columns)
    by_source: dict[str, list[tuple[str, Column]]] = {}
    for match in matches:
        if match.source is not None:
            by_source.setdefault(match.source, []).append((match.header, columns[match.position]))
    _check_lot_unit(by_source, lot_factor)

    inputs = _type_sources(len(rows), by_source, issues)
    options = Options(typed_defaults, status_table, decimal_baths, lot_factor)
    fields = derive(inputs, options, issues)
    fields.values["ExtensionColumn"] = _extensions(matches, columns, inputs, fields, issues)
    headers = _field_headers(matches)
    validate(fields, issues, headers, key_column, rows)
    return _assemble(name, rows, fields, issues, matches, key_column)


# --------------------------------------------------------------------------- arguments


def _key_column(key: str) -> str:
    if key in KEY_COLUMNS:
        return KEY_COLUMNS[key]
    if key in KEY_COLUMNS.values():
        return key
    choices = ", ".join(sorted(set(KEY_COLUMNS) | set(KEY_COLUMNS.values())))
    raise SheetError(f"key must be one of {choices}", value=key)


def _typed_defaults(
    defaults: Mapping[str, Any], status_table: Mapping[str, rules.StatusRule]
) -> dict[str, Any]:
    typed: dict[str, Any] = {}
    for name, value in defaults.items():
        if name not in DEFAULTABLE:
            raise SheetError(
                f"defaults names {name!r}, which is not a listing field that takes a default; "
                f"use one of {', '.join(DEFAULTABLE)}",
                column=name,
                value=value,
            )
        if value is None:
            continue
        if name == "Status":
            if rules.normalize_value(str(value)) not in status_table:
                raise SheetError("default Status is not a known status", column=name, value=value)
            typed[name] = str(value)
            continue
        try:
            typed[name] = typed_default(name, value)
        except (TypeError, ValueError) as error:
            raise SheetError(f"default {name} {error}", column=name, value=value) from None
    return typed


# --------------------------------------------------------------------------- reading


@dataclass
class _Table:
    """A sheet's header and raw cell columns, with reader notes (row, column, value, text)."""

    headers: list[str]
    columns: list[ObjectArray]
    rows: IntArray
    notes: list[tuple[int, str | None, str | None, str]]


def _read_table(
    source: str | os.PathLike[str] | pd.DataFrame, sheet_name: str | int | None
) -> tuple[str, _Table]:
    if isinstance(source, pd.DataFrame):
        return "<DataFrame>", _table_from_frame(source)
    path = Path(source)
    if not path.exists():
        raise SheetError(f"no such file: {path}")
    suffix = path.suffix.lower()
    if suffix == ".xls":
        raise SheetError("old .xls workbooks cannot be read: save the file as .xlsx or .csv")
    if suffix in (".xlsx", ".xlsm") or (
        suffix not in (".csv", ".tsv", ".txt") and zipfile.is_zipfile(path)
    ):
        return path.name, _table_from_grid(read_xlsx_cells(path, sheet_name))
    return path.name, _table_from_csv(path, "\t" if suffix == ".tsv" else ",")


def _table_from_grid(cells: CellGrid) -> _Table:
    if not len(cells.rows):
        return _Table([], [], np.empty(0, np.int64), [])
    header_cells = cells.grid[0]
    data = cells.grid[1:]
    return _split_header(
        [value_text(v) if v is not None else "" for v in header_cells],
        [data[:, j] for j in range(data.shape[1])],
        cells.rows[1:],
    )


def _table_from_csv(path: Path, delimiter: str) -> _Table:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Exports saved by older desktop tools are often Windows-1252.
        text = raw.decode("cp1252", errors="replace")
    records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    first = next((i for i, r in enumerate(records) if any(c.strip() for c in r)), None)
    if first is None:
        return _Table([], [], np.empty(0, np.int64), [])
    header = [c.strip() for c in records[first]]
    body = records[first + 1 :]
    width = max([len(header), *(len(r) for r in body)]) if body else len(header)
    columns = []
    for j in range(width):
        column = np.empty(len(body), dtype=object)
        column[:] = [r[j] if j < len(r) else None for r in body]
        columns.append(column)
    header += [""] * (width - len(header))
    rows = np.arange(first + 2, first + 2 + len(body), dtype=np.int64)
    return _split_header(header, columns, rows)


def _table_from_frame(frame: pd.DataFrame) -> _Table:
    columns = []
    for j in range(frame.shape[1]):
        values = frame.iloc[:, j].to_numpy(dtype=object, copy=True)
        values[pd.isna(values)] = None
        columns.append(_python_scalars(values))
    rows = np.arange(2, 2 + len(frame), dtype=np.int64)
    return _split_header([str(c).strip() for c in frame.columns], columns, rows)


def _python_scalars(values: ObjectArray) -> ObjectArray:
    """NumPy scalars (from a typed DataFrame column) as plain Python values."""
    if all(type(v) in (str, int, float, bool, type(None)) for v in values[:1000]):
        kinds = {type(v) for v in values}
        if kinds <= {str, int, float, bool, type(None)}:
            return values
    out = np.empty(len(values), dtype=object)
    out[:] = [v.item() if isinstance(v, np.generic) else v for v in values]
    return out


def _split_header(headers: list[str], columns: list[ObjectArray], rows: IntArray) -> _Table:
    """Drop columns without a header (noting any values they held) and trim the headers."""
    notes: list[tuple[int, str | None, str | None, str]] = []
    keep_headers, keep_columns = [], []
    for j, (header, column) in enumerate(zip(headers, columns, strict=True)):
        header = " ".join(header.split())
        if header:
            keep_headers.append(header)
            keep_columns.append(column)
            continue
        filled = [i for i, v in enumerate(column) if v is not None and str(v).strip()]
        if filled:
            notes.append(
                (
                    -1,
                    f"column {j + 1}",
                    None,
                    f"has {len(filled)} value(s) under a blank header: ignored",
                )
            )
    table = _Table(keep_headers, keep_columns, rows, notes)
    return _skip_disclaimer(table)


def _skip_disclaimer(table: _Table) -> _Table:
    """Drop a portal's disclaimer line, the first data row with long text in its first cell."""
    if not len(table.rows) or not table.columns:
        return table
    first = table.columns[0][0]
    others = [c[0] for c in table.columns[1:]]
    is_disclaimer = (
        isinstance(first, str)
        and len(first.strip()) >= _DISCLAIMER_MIN_LENGTH
        and " " in first.strip()
        and all(v is None or (isinstance(v, str) and not v.strip()) for v in others)
    )
    if not is_disclaimer:
        return table
    assert isinstance(first, str)
    note = (
        int(table.rows[0]),
        table.headers[0],
        first.strip()[:80],
        "is a disclaimer line, not a listing: skipped",
    )
    return _Table(
        table.headers, [c[1:] for c in table.columns], table.rows[1:], [*table.notes, note]
    )


def _drop_blank_rows(rows: IntArray, columns: list[Column]) -> tuple[IntArray, list[Column]]:
    """Leave out rows with nothing in them (blank cells, blank tokens and spaces only)."""
    if not columns:
        return np.empty(0, np.int64), columns
    filled = np.zeros(len(rows), dtype=bool)
    for column in columns:
        filled |= column.present | column.cleared
    if filled.all():
        return rows, columns
    kept = [
        Column(c.raw[filled], c.kind[filled], c.text[filled], c.cleared[filled]) for c in columns
    ]
    return rows[filled], kept


# --------------------------------------------------------------------------- sources


def _check_required(
    matches: Sequence[HeaderMatch], defaults: Mapping[str, Any], headers: Sequence[str]
) -> None:
    sources = {m.source for m in matches if m.source is not None}
    produced = {SOURCES[s].field for s in sources}
    missing = []
    for name in REQUIRED_COLUMNS:
        if name in produced or name in defaults:
            continue
        if any(s in sources for s in _ALSO_PRODUCES.get(name, ())):
            continue
        missing.append(name)
    if missing:
        listed = ", ".join(missing)
        seen = ", ".join(repr(h) for h in headers) or "none"
        raise SheetError(
            f"required field(s) {listed} missing: no header maps to them and no default is "
            f"given (pass mapping= or defaults=). Headers seen: {seen}",
            column=missing[0],
        )


def _check_lot_unit(
    by_source: Mapping[str, list[tuple[str, Column]]], lot_unit: float | None
) -> None:
    if lot_unit is not None or "LotSize" not in by_source:
        return
    header, column = by_source["LotSize"][0]
    if column.present.any():
        raise SheetError(
            f"column {header!r} gives lot sizes without a unit: pass lot_unit='sqft', 'sqm' "
            "or 'acres'",
            column=header,
        )


def _type_sources(
    n: int, by_source: Mapping[str, list[tuple[str, Column]]], issues: Issues
) -> Inputs:
    inputs = Inputs(n)
    for source, feeds in by_source.items():
        spec = SOURCES[source]
        inputs.columns[source] = list(feeds)
        combined: pd.Series | None = None
        for header, column in feeds:
            values, problems = cell_rules.typed(column, spec.kind)
            for problem in problems:
                positions = np.flatnonzero(problem.mask)
                issues.add(
                    positions,
                    column=header,
                    field=spec.field,
                    values=[value_text(column.raw[p]) for p in positions],
                    message=problem.message,
                    severity=problem.severity,
                )
                if problem.severity == "error":
                    inputs.mark_bad(spec.field, problem.mask)
            combined = values if combined is None else combined.fillna(values)
        if combined is not None:
            inputs.values[source] = combined
    return inputs


def _field_headers(matches: Sequence[HeaderMatch]) -> dict[str, str | None]:
    headers: dict[str, str | None] = {}
    for match in matches:
        if match.field is not None and match.how not in ("extension", "ignored"):
            headers.setdefault(match.field, match.header)
    return headers


# --------------------------------------------------------------------------- ExtensionColumn


def _extensions(
    matches: Sequence[HeaderMatch],
    columns: Sequence[Column],
    inputs: Inputs,
    fields: Fields,
    issues: Issues,
) -> pd.Series:
    n = inputs.n
    names: list[str] = []
    texts: list[ObjectArray] = []
    for match in matches:
        if match.how == "extension" or match.source == "ListingKey":
            label = LISTING_KEY if match.source == "ListingKey" else match.header
            while label in names:
                label = f"{label} (2)"
            names.append(label)
            values, _ = cell_rules.as_text(columns[match.position])
            texts.append(objects(values))
    rows: list[dict[str, str]] = [{} for _ in range(n)]
    given = inputs.get("ExtensionColumn")
    if given is not None:
        for i, text in enumerate(objects(given)):
            if text is None:
                continue
            parsed = _parse_extension(text)
            if parsed is None:
                issues.add(
                    [i],
                    column=inputs.header("ExtensionColumn"),
                    field="ExtensionColumn",
                    values=text[:80],
                    message="cannot be read as key: value pairs",
                )
            else:
                rows[i] = parsed
    if texts:
        for i, cells in enumerate(zip(*texts, strict=True)):
            extra = {k: v for k, v in zip(names, cells, strict=True) if v is not None}
            if extra:
                rows[i] = {**rows[i], **extra}
    for i, status in enumerate(fields.status_kept):
        if status is not None:
            rows[i] = {**rows[i], STATUS_KEY: status}
    return pd.Series(rows, dtype=object)


def _parse_extension(text: str) -> dict[str, str] | None:
    """A serialized ExtensionColumn: JSON (list of Key/value objects, or an object) or
    ``key: value`` pairs separated by ``;`` or new lines."""
    text = text.strip()
    if text[:1] in ("[", "{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            return None
        if isinstance(parsed, dict):
            return {str(k): str(v) for k, v in parsed.items()}
        if isinstance(parsed, list):
            out = {}
            for item in parsed:
                if not isinstance(item, dict) or "Key" not in item:
                    return None
                out[str(item["Key"])] = str(item.get("value", item.get("Value", "")))
            return out
        return None
    out = {}
    for part in text.replace("\n", ";").split(";"):
        if not part.strip():
            continue
        name, sep, value = part.partition(":")
        if not sep:
            return None
        out[name.strip()] = value.strip()
    return out


# --------------------------------------------------------------------------- the result


def _assemble(
    name: str,
    rows: IntArray,
    fields: Fields,
    issues: Issues,
    matches: Sequence[HeaderMatch],
    key: str,
) -> Sheet:
    n = len(rows)
    table = issues.table()
    positions = table["position"].to_numpy(dtype=np.int64)
    in_rows = positions >= 0
    # Rows that are not published are checked for their key and status only.
    unpublished = fields.unpublished
    keys = fields.values[key]
    no_key = unpublished & keys.isna().to_numpy(dtype=bool)
    extra = Issues()
    extra.add(
        no_key,
        column=key,
        field=key,
        values=None,
        message="is empty on a row that is not published: its remote copy cannot be found",
    )
    table = pd.concat([table, extra.table()], ignore_index=True) if no_key.any() else table
    positions = table["position"].to_numpy(dtype=np.int64)
    in_rows = positions >= 0
    on_unpublished = np.zeros(len(table), dtype=bool)
    on_unpublished[in_rows] = unpublished[positions[in_rows]]
    relevant = table["field"].isin([key, "Status"]).to_numpy(dtype=bool)
    table = table[~on_unpublished | relevant].reset_index(drop=True)
    positions = table["position"].to_numpy(dtype=np.int64)
    in_rows = positions >= 0

    rejected = np.zeros(n, dtype=bool)
    errors = in_rows & (table["severity"] == "error").to_numpy(dtype=bool)
    rejected[positions[errors]] = True
    valid = ~rejected & ~unpublished
    index = pd.Index(rows[valid], name="row")

    data = {c: fields.values[c] for c in COLUMNS if c in fields.values}
    frame = pd.DataFrame(data)[valid].set_axis(index, axis=0)
    frame = conform(frame)

    explicit = table["row"].tolist()
    row_numbers = pd.array(
        [
            int(rows[p]) if p >= 0 else (None if pd.isna(r) else int(r))
            for p, r in zip(positions, explicit, strict=True)
        ],
        dtype="Int64",
    )
    issue_frame = pd.DataFrame(
        {
            "row": row_numbers,
            "column": pd.array(table["column"].tolist(), dtype="string"),
            "field": pd.array(table["field"].tolist(), dtype="string"),
            "value": pd.array(table["value"].tolist(), dtype="string"),
            "message": pd.array(table["message"].tolist(), dtype="string"),
            "severity": pd.array(table["severity"].tolist(), dtype="string"),
        },
        columns=list(_ISSUE_COLUMNS),
    )
    sort_row = row_numbers.to_numpy(dtype=np.int64, na_value=-1)
    order = np.lexsort((np.arange(len(issue_frame)), sort_row))
    issue_frame = issue_frame.iloc[order].reset_index(drop=True)

    cleared = pd.DataFrame(
        {f: mask[valid] for f, mask in fields.cleared.items() if mask.any()}, index=index
    ).astype(bool)
    off = unpublished & ~rejected
    raw_status = objects(fields.status_text)
    unpublished_frame = pd.DataFrame(
        {
            "row": pd.array(rows[off], dtype="Int64"),
            "key": pd.array(keys[off].tolist(), dtype="string"),
            "status": pd.array([raw_status[i] for i in np.flatnonzero(off)], dtype="string"),
        }
    )
    return Sheet(
        frame=frame,
        issues=issue_frame,
        mapping=_mapping_frame(matches),
        cleared=cleared,
        unpublished=unpublished_frame,
        source=name,
        rows_read=n,
    )


def _mapping_frame(matches: Sequence[HeaderMatch]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "header": pd.array([m.header for m in matches], dtype="string"),
            "field": pd.array(
                [m.field if m.how not in ("extension", "ignored") else None for m in matches],
                dtype="string",
            ),
            "how": pd.array([m.how for m in matches], dtype="string"),
            "source": pd.array([m.source for m in matches], dtype="string"),
        }
    )
