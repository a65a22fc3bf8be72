"""Typed sources and derived fields → the canonical listing frame: headers typed into
sources, extension columns gathered into ``ExtensionColumn``, rows with errors left out, and the
header mapping as a frame.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from estatebot.listings.schema import COLUMNS, conform
from estatebot.listings.sheet.fields import cell_types as cell_rules
from estatebot.listings.sheet.fields.cell_types import (
    IntArray,
    ObjectArray,
    objects,
    value_text,
)
from estatebot.listings.sheet.fields.derive import LISTING_KEY, STATUS_KEY
from estatebot.listings.sheet.fields.headers import HeaderMatch
from estatebot.listings.sheet.fields.inputs import Fields, Inputs
from estatebot.listings.sheet.fields.json_text import json_value
from estatebot.listings.sheet.fields.prepared import Column
from estatebot.listings.sheet.fields.sources import SOURCES
from estatebot.listings.sheet.issues import Issues
from estatebot.listings.sheet.result import ISSUE_COLUMNS, Sheet

#: Besides their own columns, these sources can produce a required field.
ALSO_PRODUCES: dict[str, tuple[str, ...]] = {
    "SaleType": ("PropertyType", "PropertySubType"),
    "AreaUnit": ("BuildingAreaSquareFeet",),
}


def type_sources(
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
                    values=[value_text(v) for v in column.cells.values(positions)],
                    message=problem.message,
                    severity=problem.severity,
                )
                if problem.severity == "error":
                    inputs.mark_bad(spec.field, problem.mask)
            combined = values if combined is None else combined.fillna(values)
        if combined is not None:
            inputs.values[source] = combined
    return inputs


def field_headers(matches: Sequence[HeaderMatch]) -> dict[str, str | None]:
    headers: dict[str, str | None] = {}
    for match in matches:
        if match.field is not None and match.how not in ("extension", "ignored"):
            headers.setdefault(match.field, match.header)
    return headers


# --------------------------------------------------------------------------- ExtensionColumn


def gather_extensions(
    matches: Sequence[HeaderMatch],
    columns: Sequence[Column],
    inputs: Inputs,
    fields: Fields,
    issues: Issues,
) -> tuple[pd.Series, dict[int, list[str]]]:
    """Each row's ExtensionColumn, and (by row position) the extension keys whose cell holds
    the clear token.

    The extras are the ExtensionColumn column (JSON or ``key: value`` text), every header nothing
    else maps, the listing key and the RESO status kept by rule. A cleared extension cell asks
    to remove that key from the listing (a plan merges the rest with the listing's own keys).
    """
    n = inputs.n
    names: list[str] = []
    texts: list[ObjectArray] = []
    removed: dict[int, list[str]] = {}
    for match in matches:
        if match.how == "extension" or match.source == "ListingKey":
            label = LISTING_KEY if match.source == "ListingKey" else match.header
            while label in names:
                label = f"{label} (2)"
            names.append(label)
            column = columns[match.position]
            values, _ = cell_rules.as_text(column)
            texts.append(objects(values))
            for i in np.flatnonzero(column.cleared).tolist():
                removed.setdefault(i, []).append(label)
    # A dict only for the rows that have extras: the others get theirs at the end.
    rows: list[dict[str, str] | None] = [None] * n
    given = inputs.get("ExtensionColumn")
    if given is not None:
        present = np.flatnonzero(given.notna().to_numpy(dtype=bool))
        for i, text in zip(present.tolist(), given.iloc[present].tolist(), strict=True):
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
                rows[i] = {**(rows[i] or {}), **extra}
    kept = np.asarray(fields.status_kept, dtype=object)
    for i in np.flatnonzero(kept != None).tolist():  # noqa: E711 (elementwise)
        rows[i] = {**(rows[i] or {}), STATUS_KEY: kept[i]}
    return pd.Series([row if row is not None else {} for row in rows], dtype=object), removed


def _parse_extension(text: str) -> dict[str, str] | None:
    """A serialized ExtensionColumn: JSON (list of Key/value objects, or an object) or
    ``key: value`` pairs separated by ``;`` or new lines."""
    text = text.strip()
    if text[:1] in ("[", "{"):
        try:
            parsed = json_value(text)
        except ValueError:
            return None
        if isinstance(parsed, dict):
            # A loop, not a generator: one object less per row for the garbage collector.
            for value in parsed.values():
                if type(value) is not str:
                    return {str(k): str(v) for k, v in parsed.items()}
            return parsed  # JSON's keys are text: nothing to convert
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


def assemble(
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
    frame = pd.DataFrame(data)
    # Every row valid (the usual case): no copy of every column to keep them all.
    frame = (frame if valid.all() else frame[valid]).set_axis(index, axis=0)
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
        columns=list(ISSUE_COLUMNS),
    )
    sort_row = row_numbers.to_numpy(dtype=np.int64, na_value=-1)
    order = np.lexsort((np.arange(len(issue_frame)), sort_row))
    issue_frame = issue_frame.iloc[order].reset_index(drop=True)

    cleared = pd.DataFrame(
        {f: mask[valid] for f, mask in fields.cleared.items() if mask.any()}, index=index
    ).astype(bool)
    derived = pd.DataFrame(
        {f: mask[valid] for f, mask in fields.derived.items() if mask[valid].any()}, index=index
    ).astype(bool)
    cleared_keys = pd.Series(
        {int(rows[p]): sorted(keys) for p, keys in sorted(fields.extension_cleared.items())
         if keys and valid[p]},
        dtype=object,
    )  # fmt: skip
    cleared_keys.index.name = "row"
    defaulted = pd.DataFrame(
        {f: mask[valid] for f, mask in fields.defaulted.items() if mask[valid].any()}, index=index
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
        defaulted=defaulted,
        cleared_keys=cleared_keys,
        derived=derived,
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
