"""Read an MLS export (xlsx, csv or a DataFrame) into the canonical listing frame.

:func:`read_sheet` reads the raw table (:mod:`.table`), maps the headers (:mod:`.headers`),
types every cell faithfully (:mod:`.cells`), combines sources into listing fields
(:mod:`.derive`) and validates them (:mod:`.validate`), assembles the frame (:mod:`.assemble`)
and returns a :class:`~estatebot.listings.sheet.result.Sheet`: the valid rows as a canonical
frame, every problem with its row, column and value, how each header was read, the fields the
user asked to clear, and the rows whose status says they must not be published.

Row numbers are those a user sees in the file: with the header in row 1 the first listing is
row 2. A DataFrame is numbered as if written to a sheet with its header in row 1.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from estatebot._progress import progress_bar, set_total
from estatebot.errors import SheetError, SheetNotFoundError
from estatebot.listings.schema import COLUMNS, KEY_COLUMNS, REQUIRED_COLUMNS
from estatebot.listings.sheet.fields import mls_values as rules
from estatebot.listings.sheet.fields.assemble import (
    ALSO_PRODUCES,
    assemble,
    field_headers,
    gather_extensions,
    type_sources,
)
from estatebot.listings.sheet.fields.cell_types import IntArray
from estatebot.listings.sheet.fields.cells import Cells
from estatebot.listings.sheet.fields.derive import derive
from estatebot.listings.sheet.fields.headers import (
    HeaderMatch,
    match_headers,
    unmatched_mapping_keys,
)
from estatebot.listings.sheet.fields.inputs import Inputs, Options
from estatebot.listings.sheet.fields.prepared import Column, prepare
from estatebot.listings.sheet.fields.sources import SOURCES
from estatebot.listings.sheet.fields.validate import typed_default, validate
from estatebot.listings.sheet.issues import Issues
from estatebot.listings.sheet.readers.budget import (
    DEFAULT_MAX_MEMORY,
    Budget,
    budget_of,
    give_back,
)
from estatebot.listings.sheet.readers.notes import Note
from estatebot.listings.sheet.readers.table import (
    Table,
    drop_blank_rows,
    read_table,
    workbook_sheets_of,
)
from estatebot.listings.sheet.readers.xlsx_openpyxl import Engine
from estatebot.listings.sheet.result import Sheet

__all__ = ["Sheet", "read_sheet"]


#: Fields a default may fill (everything but the key of the service and the structured ones).
DEFAULTABLE: tuple[str, ...] = tuple(
    c for c in COLUMNS if c not in ("ID", "Images", "ExtensionColumn")
)


def read_sheet(
    source: str | os.PathLike[str] | pd.DataFrame,
    *,
    mapping: Mapping[str, str] | None = None,
    sheet_name: str | int | None = None,
    defaults: Mapping[str, Any] | None = None,
    overrides: Mapping[str, Any] | None = None,
    pending_status: str = "Active",
    clear_token: str = "#CLEAR",
    extensions: bool = True,
    decimal_baths: bool = False,
    lot_unit: str | None = None,
    key: str = "MLSNumber",
    statuses: Mapping[str, str] | None = None,
    encoding: str | None = None,
    engine: Engine = "calamine",
    progress: bool | None = None,
    max_memory: int | str = DEFAULT_MAX_MEMORY,
) -> Sheet:
    """Read an MLS export into listings: the valid rows, and every problem by row and column.

    A blank cell says nothing: a required field with no column, or a blank cell in its column,
    rejects nothing here. A plan keeps the listing's own value, and only a row that would be
    created needs the field (the plan says so, row by row). Areas in a sheet that names no unit
    (a pulled file: List never returns AreaUnit) are read as they are, in each listing's own
    unit; an area that would need converting into an unknown unit is not used, with a warning.

    A csv (or tsv, txt) file is read as UTF-8 (a byte-order mark may say UTF-8, UTF-16 or
    UTF-32) unless `encoding` names another; its delimiter (`,` `;` tab or `|`) is detected. A
    cell holding a byte its encoding cannot decode rejects its row, naming the byte; a file
    whose non-ASCII bytes are mostly not UTF-8 is refused, suggesting `encoding=`. In an xlsx
    file only the columns the header row names are read (values further right are reported,
    not read); a formula with no saved value, a cell hidden by a merged range and a formula
    error (`#REF!`) reject their row, naming the cell. An `.xls` (Excel 97-2003) or `.ods`
    (OpenDocument) workbook is read too, by calamine: its number formats (`00000`), formula
    errors and merged ranges are not seen there.

    Args:
        source: An xlsx, xls, ods, csv or parquet path, or a DataFrame (never changed).
        mapping: `{header: field}`, overriding the header table; a field may also be a RESO
            source such as `"BathroomsFull"`, `"ExtensionColumn"` (keep as an extra) or
            `"ignore"`.
        sheet_name: The worksheet, by name or 0-based number. By default the first one not
            hidden is read (a hidden sheet is read only when named, with a warning), and when
            it has no column for the key, the next visible one that has.
        defaults: Values for the fields the sheet lacks or leaves blank
            (`{"CurrencySymbol": "$", "AreaUnit": "Square Feet"}`). Such values are marked in
            `Sheet.defaulted`, and a plan uses them only where a listing has no value of its
            own.
        overrides: Values set on every row whatever the sheet says: a deliberate overwrite,
            written to every listing by a plan (`Sheet.overrides`).
        pending_status: What a Pending listing becomes: `"Active"` (default; the RESO status
            is kept in ExtensionColumn), `"Sold"`, or `"off-market"` (not published).
        clear_token: A cell holding it empties its field (`Sheet.cleared`).
        extensions: Whether headers nothing maps go to ExtensionColumn.
        decimal_baths: Read `2.1` in a bathrooms column as 2 full + 1 half baths.
        lot_unit: The unit (`"sqft"`, `"sqm"`, `"acres"`, `"hectares"`) of a lot column whose
            header gives none (`LOT SIZE`).
        key: The column whose duplicates are rejected: `"MLSNumber"` (default), `"Url"` or
            `"ID"`.
        statuses: Raw statuses mapped to a standard one, where an MLS uses its own codes
            (`{"C": "Closed"}`).
        encoding: The encoding of a csv file, such as `"cp1252"` (None: UTF-8, or what a
            byte-order mark says).
        engine: The reader of an xlsx file: `"calamine"` (default) or `"openpyxl"`, which
            reads the same cells many times slower.
        progress: Show a bar of the reading of a file as it goes (None: on by default, see
            `estatebot._progress.progress_enabled`; a DataFrame is read at once, without one).
        max_memory: The memory the read may take: bytes, or a size such as `"8 GiB"` (2 GiB
            by default). An xlsx file's cost is estimated from its structure before any cell
            is read (its rows and columns, the text of its cells, the shared strings its cells
            repeat, the grid of empty cells a far cell makes), any other source's once its
            cells are read.

    Returns:
        A `Sheet` holding the valid rows as a canonical frame, every problem with its row,
            column and value, how each header was read, the fields the user asked to clear,
            and the rows whose status says they must not be published.

    Raises:
        SheetNotFoundError: When the workbook has no worksheet by the `sheet_name` given.
        SheetError: When the sheet cannot be read as listings at all: two headers for one
            field, an unknown field in `mapping`, `defaults` or `overrides`, an unknown `key`,
            `engine`, `pending_status`, `statuses` or `lot_unit`, or a unitless lot column
            without `lot_unit`. When the file cannot be read (missing, empty, truncated, an
            `.xls` or `.ods` file that is damaged or asked of `engine="openpyxl"`, text in
            another encoding, a runaway quoted cell), naming the file and what to do. When
            the read is over the `max_memory` budget, naming the cause and the budget; so do
            XML padded far beyond what it holds, a cell beyond a worksheet's last row or
            column, and a read that runs out of memory all the same.
    """
    key_column = _key_column(key)
    budget = budget_of(max_memory)
    try:
        status_table = rules.status_table(pending_status, dict(statuses or {}))
        lot_factor = rules.parse_lot_unit(lot_unit)
    except ValueError as error:
        raise SheetError(str(error)) from None
    typed_defaults = _typed_defaults(defaults or {}, status_table)
    typed_overrides = _typed_defaults(overrides or {}, status_table, what="overrides")

    label = "DataFrame" if isinstance(source, pd.DataFrame) else Path(source).name
    # A frame is read at once: its bar would flash past; a file's says which step is running.
    shown = False if progress is None and isinstance(source, pd.DataFrame) else progress
    # One step for the cells, one per column cleaned, then typing, deriving and checking: the
    # number of columns is known once the cells are read.
    step = "reading the cells"
    try:
        with progress_bar(4, f"Reading {label}", progress=shown, unit="step") as bar:
            bar.set_postfix_str(step)
            name, table = read_table(source, sheet_name, encoding, engine, budget, columnar=True)
            if sheet_name is None and not _maps_key(table, mapping, extensions, key_column):
                name, table = _listings_sheet(
                    source, encoding, engine, budget, mapping, extensions, key_column, name,
                    table,
                )  # fmt: skip
            set_total(bar, 4 + len(table.columns))
            bar.update()
            step = "typing the cells"
            sheet = _read_table(
                name, table, mapping, typed_defaults, typed_overrides, status_table,
                clear_token, extensions, decimal_baths, lot_factor, key_column, bar,
            )  # fmt: skip
    except MemoryError as error:
        # The budget's estimate was passed, yet memory ran out (other programs hold it, or
        # the machine has less than the budget): still a SheetError, never a raw one.
        raise SheetError(
            f"{label}: the memory ran out while {step} ({type(error).__name__}): the machine "
            f"has less free memory than the read needs; close other programs, pass a smaller "
            f"max_memory= (now {budget.limit:,} bytes) to be stopped before reading, or split "
            "the sheet into smaller files"
        ) from None
    return sheet


def _maps_key(
    table: Table[Cells], mapping: Mapping[str, str] | None, extensions: bool, key_column: str
) -> bool:
    """Whether a header of ``table`` feeds the key field."""
    matches = match_headers(table.headers, mapping, extensions=extensions)
    return any(SOURCES[m.source].field == key_column for m in matches if m.source is not None)


def _listings_sheet(
    source: str | os.PathLike[str] | pd.DataFrame,
    encoding: str | None,
    engine: Engine,
    budget: Budget,
    mapping: Mapping[str, str] | None,
    extensions: bool,
    key_column: str,
    name: str,
    first: Table[Cells],
) -> tuple[str, Table[Cells]]:
    """The first visible worksheet that has a column for the key, when the first visible one
    has none (a notes or cover sheet placed before the listings); else the first, as it was.
    Only a workbook has other sheets to look at; the sheet read is named in a note. Hidden
    sheets are never looked at: one is read only when ``sheet_name`` names it."""
    sheets = workbook_sheets_of(source)
    visible = [position for position, (_, hidden) in enumerate(sheets) if not hidden]
    for position in visible[1:]:
        try:
            other_name, other = read_table(
                source, sheets[position][0], encoding, engine, budget, columnar=True
            )
        except SheetNotFoundError:
            return name, first
        if _maps_key(other, mapping, extensions, key_column):
            which = "first" if visible[0] == 0 else "first visible"
            note = Note(
                f"the {which} worksheet has no {key_column} column: read worksheet "
                f"{position + 1} instead (pass sheet_name= to choose one)",
            )
            return other_name, replace(other, notes=[note, *other.notes])
    return name, first


def _read_table(
    name: str,
    table: Table[Cells],
    mapping: Mapping[str, str] | None,
    typed_defaults: dict[str, Any],
    typed_overrides: dict[str, Any],
    status_table: Mapping[str, rules.StatusRule],
    clear_token: str,
    extensions: bool,
    decimal_baths: bool,
    lot_factor: float | None,
    key_column: str,
    bar: Any,
) -> Sheet:
    """The listings of a raw table: headers matched, cells typed, fields derived and checked;
    ``bar`` (a tqdm bar) moves a step per column cleaned and per stage."""
    issues = Issues()
    cell_notes = [note for note in table.notes if note.position is not None]
    for note in table.notes:
        if note.position is None:
            issues.add(
                [-1],
                column=note.column,
                field=None,
                values=note.value,
                message=note.message,
                severity=note.severity,
                row=note.row,
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
    absent = _missing_required(matches, {**typed_defaults, **typed_overrides})
    for missing in absent:
        issues.add(
            [-1],
            column=None,
            field=missing,
            values=None,
            severity="warning",
            message="has no column and no default: listings on the service keep their own "
            f"value, and a new listing cannot be created without it (add a {missing} column, "
            "mapping= or defaults=)",
        )

    bar.set_postfix_str("cleaning the columns")
    columns = []
    for raw in table.columns:
        columns.append(prepare(raw, clear_token))
        bar.update()
    # The prepared columns hold the raw cells from here on: the table lets go of them, so that
    # they go once the typing is done with them.
    table.columns = []
    rows, columns = drop_blank_rows(table.rows, columns)
    by_source: dict[str, list[tuple[str, Column]]] = {}
    for match in matches:
        if match.source is not None:
            by_source.setdefault(match.source, []).append((match.header, columns[match.position]))
    _check_lot_unit(by_source, lot_factor)

    bar.set_postfix_str("typing the values")
    inputs = type_sources(len(rows), by_source, issues)
    bar.update()
    _report_cells(cell_notes, rows, matches, issues, inputs)
    options = Options(typed_defaults, status_table, decimal_baths, lot_factor, typed_overrides)
    bar.set_postfix_str("deriving the fields")
    fields = derive(inputs, options, issues)
    bar.update()
    bar.set_postfix_str("checking the listings")
    fields.values["ExtensionColumn"], fields.extension_cleared = gather_extensions(
        matches, columns, inputs, fields, issues
    )
    # Nothing reads the cells after this: their memory goes back before the frame is built.
    del columns, by_source, inputs
    give_back()
    headers = field_headers(matches)
    validate(fields, issues, headers, key_column, rows)
    sheet = assemble(name, rows, fields, issues, matches, key_column)
    sheet.overrides = dict(typed_overrides)
    bar.update()
    return sheet


# --------------------------------------------------------------------------- arguments


def _key_column(key: str) -> str:
    if key in KEY_COLUMNS:
        return KEY_COLUMNS[key]
    if key in KEY_COLUMNS.values():
        return key
    choices = ", ".join(sorted(set(KEY_COLUMNS) | set(KEY_COLUMNS.values())))
    raise SheetError(f"key must be one of {choices}", value=key)


def _typed_defaults(
    defaults: Mapping[str, Any],
    status_table: Mapping[str, rules.StatusRule],
    *,
    what: str = "defaults",
) -> dict[str, Any]:
    typed: dict[str, Any] = {}
    for name, value in defaults.items():
        if name not in DEFAULTABLE:
            raise SheetError(
                f"{what} names {name!r}, which is not a listing field that takes a default; "
                f"use one of {', '.join(DEFAULTABLE)}",
                column=name,
                value=value,
            )
        if value is None:
            continue
        if name == "Status":
            if rules.normalize_value(str(value)) not in status_table:
                raise SheetError(f"{what} Status is not a known status", column=name, value=value)
            typed[name] = str(value)
            continue
        try:
            typed[name] = typed_default(name, value)
        except (TypeError, ValueError) as error:
            label = "default" if what == "defaults" else "override"
            raise SheetError(f"{label} {name} {error}", column=name, value=value) from None
    return typed


# --------------------------------------------------------------------------- sources


def _report_cells(
    notes: Sequence[Note],
    rows: IntArray,
    matches: Sequence[HeaderMatch],
    issues: Issues,
    inputs: Inputs,
) -> None:
    """The file readers' notes on data cells, as issues under the cell's header and field.

    An error rejects its row (and stands in for the "required but empty" its blank cell would
    bring). A note on a row read as blank (all its cells formulas with no saved value) keeps its
    row number, so that row is counted as rejected rather than skipped.
    """
    by_position = {match.position: match for match in matches}
    for note in notes:
        assert note.position is not None
        match = by_position.get(note.position)
        if match is None or match.how == "ignored":
            continue  # nothing from this column is read
        at = int(np.searchsorted(rows, note.row)) if note.row is not None else len(rows)
        found = at < len(rows) and rows[at] == note.row
        issues.add(
            [at] if found else [-1],
            column=match.header,
            field=match.field,
            values=note.value,
            message=note.message,
            severity=note.severity,
            row=None if found else note.row,
        )
        if found and note.severity == "error":
            mask = np.zeros(len(rows), dtype=bool)
            mask[at] = True
            inputs.mark_bad(match.field, mask)


def _missing_required(matches: Sequence[HeaderMatch], defaults: Mapping[str, Any]) -> list[str]:
    """The required fields no header and no default gives.

    Such a sheet still reads: the listings it updates keep their own value of those fields, and
    only the rows that would be created need them (a plan says so, row by row). Areas without a
    unit anywhere are read too: they are in each listing's own unit (a plan takes it from the
    listing, and holds back an update whose unit nobody knows).
    """
    sources = {m.source for m in matches if m.source is not None}
    produced = {SOURCES[s].field for s in sources}
    missing = []
    for name in REQUIRED_COLUMNS:
        if name in produced or name in defaults:
            continue
        if any(s in sources for s in ALSO_PRODUCES.get(name, ())):
            continue
        missing.append(name)
    return missing


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
