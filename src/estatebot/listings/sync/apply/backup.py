"""Before-images of listings: written before apply changes anything, read back by restore.

A backup holds canonical listing rows (see :mod:`estatebot.listings.schema`) as they were on the
service just before an apply. Two formats, chosen by the file's suffix:

* ``.json``: ``{"format": "estatebot-backup", "version": 1, "serial": ..., "created": ...,
  "listings": [{column: value, ..., "raw": {...}}, ...]}``, values JSON-safe (None for missing);
* ``.xlsx``: the rows as :func:`~estatebot.listings.export.write_frame` writes them (``Images``
  and ``ExtensionColumn`` as JSON text) and a ``raw`` column, readable by people and by
  :func:`read_backup`.

Either reads back exactly what was written. Listing text is untrusted, and an xlsx backup keeps it
whole and harmless (:mod:`estatebot._safe_cells`): text a spreadsheet would run as a formula
(``=SUM(A1)``) is a string cell marked as text, its value unchanged; characters a cell cannot hold
(``\\x0b``) are escaped as the xlsx format does (``_x000B_``, which Excel shows as the character)
and unescaped by :func:`read_backup`. A text longer than an xlsx cell holds (32,767
characters) is a :class:`PlanError` naming the row, the column and the length, and nothing is
written (a ``.json`` backup keeps it whole). An infinite number, which neither format has, is
written as text (``Infinity`` in JSON, ``inf`` in xlsx) and read back as the number.

Beside each typed row, ``raw`` keeps the List record exactly as the service returned it, so a
value the typed row cannot hold (``ParkingSpots`` 1.5 where the frame keeps whole numbers) is
never lost: a restore rebuilds the listing from both (:func:`read_backup_raw`).

The file is written to a temporary name, synced and then renamed, so a backup on disk is always
complete.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd
from openpyxl import load_workbook

from estatebot._safe_cells import XLSX_MAX_CHARS, CellTooLong, unescape_xlsx_text
from estatebot.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.export import flatten_for_cells, write_workbook
from estatebot.listings.sync.plan.json_file import read_json_file
from estatebot.listings.sync.values.compare import key_values
from estatebot.listings.sync.values.tidy import NONE, clean_extension, clean_images

FORMAT = "estatebot-backup"
VERSION = 1
SUFFIXES: tuple[str, ...] = (".json", ".xlsx")


def default_backup_path(folder: str | Path | None = None) -> Path:
    """A new timestamped backup file name (``.json``) in ``folder`` (the current folder if None)."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")
    # Absolute, so the report and the log say exactly where it went.
    base = Path(folder if folder is not None else ".").resolve()
    return base / f"estatebot-backup-{stamp}.json"


def check_backup_path(path: str | Path) -> Path:
    """``path`` as a Path, if it names a backup format (.json or .xlsx); PlanError otherwise."""
    target = Path(path)
    _check_suffix(target)
    return target


def _check_suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise PlanError(
            f"cannot use {path.name!r} as a backup: the name must end in .json or .xlsx",
            value=str(path),
        )
    return suffix


def _json_value(column: str, value: Any) -> Any:
    if column in schema.LIST_COLUMNS:
        return clean_images(value)
    if column in schema.DICT_COLUMNS:
        return clean_extension(value)
    if value is None or value is pd.NA:
        return None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        number = float(value)
        return None if math.isnan(number) else number
    return value


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of a canonical frame as JSON-safe dicts (canonical columns only)."""
    conformed = schema.conform(frame)
    columns = {
        column: conformed[column].to_numpy(dtype=object, na_value=NONE).tolist()
        for column in schema.COLUMNS
    }
    return [
        {column: json_safe(_json_value(column, columns[column][i])) for column in schema.COLUMNS}
        for i in range(len(conformed))
    ]


def json_safe(value: Any) -> Any:
    """``value`` with every infinite number as the text ``"Infinity"`` / ``"-Infinity"``.

    JSON has no such number; the text is what JavaScript and Python call it, and the backup's
    reader reads it back as the number (the typed columns go through ``pd.to_numeric``).
    """
    if isinstance(value, float):
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    return value


def _write_document(
    handle: TextIO, header: Mapping[str, Any], listings: Iterable[Mapping[str, Any]]
) -> None:
    """One JSON object: the header's fields one per line, then ``listings``, one per line.

    Each value is written by the json module's compiled encoder, which it uses only when no
    indent is asked for: an indented dump of the whole document ran in Python, at some 0.2 ms
    a listing. A listing per line still reads (and diffs) line by line.
    """

    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)

    handle.write("{\n")
    for name, value in header.items():
        handle.write(f" {dumps(name)}: {dumps(value)},\n")
    handle.write(' "listings": [')
    for position, listing in enumerate(listings):
        handle.write(",\n  " if position else "\n  ")
        handle.write(dumps(listing))
    handle.write("\n ]\n}\n")


def write_backup(
    frame: pd.DataFrame,
    path: str | Path,
    *,
    serial: str,
    note: str | None = None,
    raw: Sequence[Mapping[str, Any] | None] | None = None,
) -> Path:
    """Write the listings of ``frame`` to ``path`` (.json or .xlsx) atomically; returns the path.

    ``raw`` holds each row's List record as the service sent it (None where unknown).
    """
    raws = list(raw) if raw is not None else [None] * len(frame)
    if len(raws) != len(frame):
        raise ValueError(f"raw has {len(raws)} records for {len(frame)} listings")
    target = Path(path)
    suffix = _check_suffix(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.partial{suffix}")
    if suffix == ".json":
        header: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "serial": serial,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        if note:
            header["note"] = note
        listings = (
            {**record, "raw": json_safe(dict(source)) if source is not None else None}
            for record, source in zip(frame_records(frame), raws, strict=True)
        )
        with temporary.open("w", encoding="utf-8") as handle:
            _write_document(handle, header, listings)
            handle.flush()
            os.fsync(handle.fileno())
    else:
        texts = [
            json.dumps(json_safe(dict(r)), ensure_ascii=False) if r is not None else None
            for r in raws
        ]
        conformed = schema.conform(frame)
        cells = conformed.assign(raw=pd.Series(texts, index=conformed.index, dtype="string"))
        try:
            # Escaped, not cleaned: a restore must get every character back.
            write_workbook(temporary, {"Listings": flatten_for_cells(cells)}, characters="escape")
        except CellTooLong as error:
            key = _key_at(conformed, error.row - 2)
            raise PlanError(
                f"cannot back up to {target.name}: listing {key} has a text of "
                f"{error.length:,} characters, longer than an xlsx cell holds "
                f"({XLSX_MAX_CHARS:,}); "
                "use a .json backup, which keeps it whole",
                row=error.row,
                column=error.column,
            ) from None
        with temporary.open("rb") as handle:
            os.fsync(handle.fileno())
    os.replace(temporary, target)
    return target


def back_up_targets(
    frame: pd.DataFrame,
    records: Sequence[Mapping[str, Any] | None] | None,
    positions: Sequence[int],
    *,
    asked: Path | None,
    beside: Path | None,
    merge: bool,
    serial: str,
) -> Path | None:
    """The before-image of an apply: the pulled listings at ``positions`` (of ``frame``, with
    their List ``records`` as sent), saved before the first write; the file written, or None
    when there is nothing to save.

    It goes where ``asked``, else to a new timestamped file in the folder ``beside`` (the
    journal's) or the current one. With ``merge`` (a resumed run) the file may already hold the
    first run's images, the true before-state of what that run changed: they are kept, and only
    listings missing from the file are added.
    """
    if not positions:
        return None
    path = asked or default_backup_path(beside)
    chosen = sorted(set(positions))
    images = frame.iloc[chosen].reset_index(drop=True)
    raws = [records[p] for p in chosen] if records is not None else None
    if merge and path.exists():
        earlier = read_backup(path)
        earlier_raws = read_backup_raw(path)
        known = set(key_values(earlier["MLSNumber"])) | set(key_values(earlier["Url"]))
        known.discard(None)
        fresh = [
            i
            for i, (mls, url) in enumerate(
                zip(key_values(images["MLSNumber"]), key_values(images["Url"]), strict=True)
            )
            if not ({mls, url} - {None}) & known
        ]
        images = pd.concat([earlier, images.iloc[fresh]], ignore_index=True)
        kept = raws if raws is not None else [None] * len(chosen)
        raws = [*earlier_raws, *(kept[i] for i in fresh)]
    return write_backup(images, path, serial=serial, raw=raws)


def _key_at(frame: pd.DataFrame, position: int) -> str:
    """The MLS number (else the Url) of the listing at ``position``, for a message."""
    if not 0 <= position < len(frame):
        return "(header)"
    for column in ("MLSNumber", "Url"):
        value = frame[column].iat[position]
        if not _missing(value):
            return f"{column} {value}"
    return f"#{position + 1}"


def read_backup(path: str | Path) -> pd.DataFrame:
    """The listings of a backup as a canonical frame (the format follows the suffix)."""
    source = Path(path)
    suffix = _check_suffix(source)
    if not source.exists():
        raise PlanError(f"no backup at {source}", value=str(source))
    if suffix == ".json":
        document = read_json_file(source, what="an estatebot backup")
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise PlanError(f"{source.name} is not an estatebot backup", value=str(source))
        rows = document.get("listings") or []
        frame = pd.DataFrame(rows, columns=list(schema.COLUMNS))
        return schema.conform(_typed(frame))
    cells = _xlsx_cells(source)
    missing = [c for c in ("MLSNumber", "Url") if c not in cells.columns]
    if len(missing) == 2:
        raise PlanError(
            f"{source.name} is not a listings backup: it has neither an MLSNumber nor a Url column",
            value=str(source),
        )
    return schema.conform(_typed(_from_cells(cells)))


def read_backup_raw(path: str | Path) -> list[dict[str, Any] | None]:
    """The List records a backup kept beside its rows (None where it kept none), row for row
    with :func:`read_backup`."""
    source = Path(path)
    suffix = _check_suffix(source)
    if suffix == ".json":
        document = read_json_file(source, what="an estatebot backup")
        rows = document.get("listings") or [] if isinstance(document, dict) else []
        return [row.get("raw") if isinstance(row.get("raw"), dict) else None for row in rows]
    cells = _xlsx_cells(source)
    if "raw" not in cells.columns:
        return [None] * len(cells)
    out: list[dict[str, Any] | None] = []
    for text in cells["raw"].tolist():
        value = _json_or_text(text)
        out.append(value if isinstance(value, dict) else None)
    return out


def _xlsx_cells(source: Path) -> pd.DataFrame:
    """The first sheet of an xlsx backup as written: every cell's value as openpyxl reads it,
    text unescaped, empty cells None.

    Read with openpyxl rather than pandas, whose reader takes texts such as ``"NA"``, ``"None"``
    or ``"nan"`` for missing values: a backup gives back every text it holds.
    """
    book = load_workbook(source, read_only=True, data_only=True)
    try:
        sheet = book.worksheets[0]
        rows = [
            [unescape_xlsx_text(v) if isinstance(v, str) else v for v in row]
            for row in sheet.iter_rows(values_only=True)
        ]
    finally:
        book.close()
    if not rows:
        return pd.DataFrame()
    header = [str(name) if name is not None else "" for name in rows[0]]
    width = len(header)
    body = [[*row[:width], *([None] * (width - len(row)))] for row in rows[1:]]
    return pd.DataFrame(body, columns=header, dtype=object)


def _from_cells(cells: pd.DataFrame) -> pd.DataFrame:
    # Cells hold Images and ExtensionColumn as JSON text (see export.flatten_for_cells).
    out = cells.copy()
    for column in schema.LIST_COLUMNS:
        if column in out.columns:
            out[column] = out[column].map(lambda v: clean_images(_json_or_text(v)))
    for column in schema.DICT_COLUMNS:
        if column in out.columns:
            out[column] = out[column].map(lambda v: clean_extension(_json_or_text(v)))
    return out


def _json_or_text(value: Any) -> Any:
    if not isinstance(value, str):
        return None
    try:
        return json.loads(value)
    except ValueError:
        return value


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    # Cells and JSON give plain Python values (floats for whole numbers in a column with gaps,
    # numbers for text that looks numeric): bring each column to its canonical kind first.
    out = frame.copy()
    for column in out.columns:
        if column not in schema.DTYPES:
            continue
        values = out[column].tolist()
        if column in schema.INT_COLUMNS or column in schema.FLOAT_COLUMNS:
            out[column] = pd.to_numeric(pd.Series(values, dtype="object"), errors="coerce")
        elif schema.DTYPES[column] == "string":
            out[column] = pd.Series(
                [None if _missing(v) else str(v) for v in values], index=out.index, dtype="object"
            )
    return out


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)
