"""Flags several commands share, and the parsing of what they hold.

``FIELD=VALUE`` pairs (``--default``, ``--set``) and the two-column files of ``--mapping`` and
``--statuses`` are read here. A malformed pair is a usage error naming the flag (exit 64); a
file whose content cannot be read is an error naming the flag, the file and the row (exit 1).
"""

from __future__ import annotations

import codecs
import csv
import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from estatebot.errors import EstatebotError

__all__ = [
    "ConcurrencyOption",
    "KeyName",
    "ListingStatusName",
    "ProgressOption",
    "SerialOption",
    "check_encoding",
    "listing_statuses",
    "parse_pairs",
    "read_pairs_file",
]


class KeyName(StrEnum):
    """How sheet rows and listings are matched."""

    MLS = "MLSNumber"
    URL = "URL"
    NEWOAKS = "NewOaks"


class ListingStatusName(StrEnum):
    """A listing's Status as the service spells it (``api.models.ListingStatus``; kept here so
    the command line starts without loading the API models). Read in any case."""

    ACTIVE = "Active"
    PRE_ON_MARKET = "PreOnMarket"
    SOLD = "Sold"


SerialOption = Annotated[
    str,
    typer.Option(
        "--serial",
        "-s",
        envvar="ESTATEBOT_SERIAL",
        help="The chatbot's serial number (or set ESTATEBOT_SERIAL).",
    ),
]
ProgressOption = Annotated[
    bool | None,
    typer.Option(
        "--progress/--no-progress",
        help="Show progress bars (default: on, unless ESTATEBOT_PROGRESS=0 or CI is set).",
        show_default=False,
    ),
]
ConcurrencyOption = Annotated[
    int, typer.Option("--concurrency", min=1, max=64, help="Requests at once.")
]


def listing_statuses(values: list[str] | None) -> list[str] | None:
    """``--status`` values in the service's spelling; anything else is a usage error naming the
    statuses there are (a typo such as ``Sould`` must not select nothing, night after night)."""
    known = {name.value.lower(): name.value for name in ListingStatusName}
    out: list[str] = []
    for value in values or []:
        found = known.get(value.strip().lower())
        if found is None:
            allowed = ", ".join(name.value for name in ListingStatusName)
            raise typer.BadParameter(
                f"{value!r} is not a listing status; the service's statuses are {allowed} "
                "(any case)",
                param_hint="--status",
            )
        out.append(found)
    return out or None


def parse_pairs(pairs: list[str] | None, option: str) -> dict[str, str]:
    """``FIELD=VALUE`` options as a dict; a malformed one is a usage error naming the flag."""
    out: dict[str, str] = {}
    for pair in pairs or []:
        field, sep, value = pair.partition("=")
        if not sep or not field.strip():
            raise typer.BadParameter(f"expected FIELD=VALUE, got {pair!r}", param_hint=option)
        out[field.strip()] = value.strip()
    return out


def check_encoding(value: str | None) -> str | None:
    """The ``--encoding`` value, if Python knows it; a usage error naming the flag otherwise."""
    if value is None:
        return None
    try:
        codecs.lookup(value)
    except LookupError:
        raise typer.BadParameter(
            f"{value!r} is not a text encoding (try utf-8, cp1252, latin-1 or utf-16)",
            param_hint="--encoding",
        ) from None
    return value


class FlagFileError(EstatebotError, ValueError):
    """A file given to a flag cannot be read as what the flag takes."""


def read_pairs_file(path: Path, option: str, columns: tuple[str, str]) -> dict[str, str]:
    """A two-column file as a dict: a csv of ``first,second`` rows, or a JSON object.

    ``columns`` names the two columns (``("header", "field")``); a first csv row that names
    them is a header and skipped. Blank lines are skipped. Anything else that is not two
    non-empty cells raises :class:`FlagFileError` naming the flag, the file and the row.
    """
    where = f"{option} {path}"
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise FlagFileError(f"{where}: not UTF-8 text ({error.reason})") from None
    if path.suffix.lower() == ".json":
        return _json_pairs(text, where)
    out: dict[str, str] = {}
    for number, row in enumerate(csv.reader(text.splitlines()), start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells):
            continue
        if number == 1 and [c.lower() for c in cells] == [c.lower() for c in columns]:
            continue
        if len(cells) != 2 or not all(cells):
            raise FlagFileError(
                f"{where}, row {number}: expected two cells ({columns[0]},{columns[1]}), "
                f"got {row!r}"
            )
        out[cells[0]] = cells[1]
    if not out:
        raise FlagFileError(f"{where}: no {columns[0]},{columns[1]} rows in the file")
    return out


def _json_pairs(text: str, where: str) -> dict[str, str]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise FlagFileError(
            f"{where}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from None
    if not isinstance(data, dict):
        raise FlagFileError(f"{where}: expected a JSON object of names to names")
    for name, value in data.items():
        if not isinstance(value, str) or not value.strip():
            raise FlagFileError(f"{where}: the value of {name!r} must be a non-empty string")
    return {str(name).strip(): str(value).strip() for name, value in data.items()}
