"""Before-images of listings: written before apply changes anything, read back by restore.

A backup holds canonical listing rows (see :mod:`estatebot.listings.schema`) as they were on the
service just before an apply. Two formats, chosen by the file's suffix:

* ``.json``: ``{"format": "estatebot-backup", "version": 1, "serial": ..., "created": ...,
  "listings": [{column: value, ..., "raw": {...}}, ...]}``, values JSON-safe (None for missing);
* ``.xlsx``: the rows written by :func:`~estatebot.listings.export.write_frame` (``Images`` and
  ``ExtensionColumn`` as JSON text) and a ``raw`` column, readable by people and by
  :func:`read_backup`.

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
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from estatebot.api.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.export import write_frame
from estatebot.listings.sync.clean import NONE, clean_extension, clean_images

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
        {column: _json_value(column, columns[column][i]) for column in schema.COLUMNS}
        for i in range(len(conformed))
    ]


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
        document: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "serial": serial,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "listings": [
                {**record, "raw": dict(source) if source is not None else None}
                for record, source in zip(frame_records(frame), raws, strict=True)
            ],
        }
        if note:
            document["note"] = note
        with temporary.open("w", encoding="utf-8") as handle:
            json.dump(document, handle, ensure_ascii=False, indent=1, allow_nan=False)
            handle.flush()
            os.fsync(handle.fileno())
    else:
        texts = [json.dumps(dict(r), ensure_ascii=False) if r is not None else None for r in raws]
        conformed = schema.conform(frame)
        cells = conformed.assign(raw=pd.Series(texts, index=conformed.index, dtype="string"))
        write_frame(cells, temporary)
        with temporary.open("rb") as handle:
            os.fsync(handle.fileno())
    os.replace(temporary, target)
    return target


def read_backup(path: str | Path) -> pd.DataFrame:
    """The listings of a backup as a canonical frame (the format follows the suffix)."""
    source = Path(path)
    suffix = _check_suffix(source)
    if not source.exists():
        raise PlanError(f"no backup at {source}", value=str(source))
    if suffix == ".json":
        document = json.loads(source.read_text(encoding="utf-8"))
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise PlanError(f"{source.name} is not an estatebot backup", value=str(source))
        rows = document.get("listings") or []
        frame = pd.DataFrame(rows, columns=list(schema.COLUMNS))
        return schema.conform(_typed(frame))
    cells = pd.read_excel(source, dtype=object)
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
        document = json.loads(source.read_text(encoding="utf-8"))
        rows = document.get("listings") or [] if isinstance(document, dict) else []
        return [row.get("raw") if isinstance(row.get("raw"), dict) else None for row in rows]
    cells = pd.read_excel(source, dtype=object)
    if "raw" not in cells.columns:
        return [None] * len(cells)
    out: list[dict[str, Any] | None] = []
    for text in cells["raw"].tolist():
        value = _json_or_text(text)
        out.append(value if isinstance(value, dict) else None)
    return out


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
