"""The flags of ``read_sheet`` (every option has one), and reading a sheet with them.

``plan`` and ``sync`` both read a sheet, so its flags are declared once, as
:class:`SheetFlags` (a group of :func:`~estatebot.cli.flags.option_groups.with_flags`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from estatebot._progress import progress_enabled
from estatebot.cli.console import err_console
from estatebot.cli.flags.shared_options import check_encoding, parse_pairs, read_pairs_file
from estatebot.errors import SheetError, SheetNotFoundError

if TYPE_CHECKING:
    from estatebot.listings.sheet.result import Sheet

__all__ = ["SheetFlags", "read_with_flags"]


class LotUnit(StrEnum):
    """Units of a lot-size column whose header names none."""

    SQFT = "sqft"
    SQM = "sqm"
    ACRES = "acres"
    HECTARES = "hectares"


class ReadEngine(StrEnum):
    """What reads a workbook: calamine (fast), or openpyxl (the slower fallback, same cells)."""

    calamine = "calamine"
    openpyxl = "openpyxl"


class PendingStatus(StrEnum):
    """What a Pending listing becomes."""

    ACTIVE = "Active"
    SOLD = "Sold"
    OFF_MARKET = "off-market"


@dataclass(frozen=True)
class SheetFlags:
    """The read options as given on the command line (see :func:`read_with_flags`)."""

    sheet_name: Annotated[
        str | None,
        typer.Option(
            "--sheet",
            help="The worksheet of an xlsx: its name, or its number (1 is the first).",
            rich_help_panel="Reading the sheet",
        ),
    ] = None
    mapping: Annotated[
        Path | None,
        typer.Option(
            "--mapping",
            metavar="FILE",
            help="Header → field: a two-column csv (header,field) or a JSON object. A field "
            "may also be ExtensionColumn or ignore.",
            rich_help_panel="Reading the sheet",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ] = None
    lot_unit: Annotated[
        LotUnit | None,
        typer.Option(
            "--lot-unit",
            case_sensitive=False,
            help="The unit of a lot-size column whose header gives none (LOT SIZE).",
            rich_help_panel="Reading the sheet",
        ),
    ] = None
    default: Annotated[
        list[str] | None,
        typer.Option(
            "--default",
            metavar="FIELD=VALUE",
            help="A value for a field the sheet lacks or leaves blank, e.g. CurrencySymbol=$ "
            "(repeatable). It fills empty fields only: never a listing's own value.",
            rich_help_panel="Reading the sheet",
        ),
    ] = None
    overrides: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="FIELD=VALUE",
            help="A value written to every listing, over its own value (repeatable).",
            rich_help_panel="Reading the sheet",
        ),
    ] = None
    pending_status: Annotated[
        PendingStatus,
        typer.Option(
            "--pending-status",
            case_sensitive=False,
            help="What a Pending listing becomes: Active (the RESO status kept in "
            "ExtensionColumn), Sold, or off-market (not published).",
            rich_help_panel="Reading the sheet",
        ),
    ] = PendingStatus.ACTIVE
    clear_token: Annotated[
        str,
        typer.Option(
            "--clear-token",
            help="A cell holding this text empties its field (in an extra column: removes "
            "that ExtensionColumn key).",
            rich_help_panel="Reading the sheet",
        ),
    ] = "#CLEAR"
    statuses: Annotated[
        Path | None,
        typer.Option(
            "--statuses",
            metavar="FILE",
            help="The MLS's own status codes → a standard status: a two-column csv "
            "(code,status) or a JSON object, e.g. C,Closed.",
            rich_help_panel="Reading the sheet",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ] = None
    no_extensions: Annotated[
        bool,
        typer.Option(
            "--no-extensions",
            help="Ignore the headers no field takes (by default they go to ExtensionColumn).",
            rich_help_panel="Reading the sheet",
        ),
    ] = False
    decimal_baths: Annotated[
        bool,
        typer.Option(
            "--decimal-baths",
            help="Read 2.1 in a bathrooms column as 2 full + 1 half baths.",
            rich_help_panel="Reading the sheet",
        ),
    ] = False
    encoding: Annotated[
        str | None,
        typer.Option(
            "--encoding",
            metavar="NAME",
            help="The encoding of a csv saved in another than UTF-8, e.g. cp1252.",
            rich_help_panel="Reading the sheet",
        ),
    ] = None
    engine: Annotated[
        ReadEngine,
        typer.Option(
            "--engine",
            help="What reads an xlsx, xls or ods: calamine (fast) or openpyxl (the slower "
            "fallback; the same cells).",
            rich_help_panel="Reading the sheet",
        ),
    ] = ReadEngine.calamine
    max_memory: Annotated[
        str | None,
        typer.Option(
            "--max-memory",
            metavar="SIZE",
            help="The most memory reading the sheet may take, e.g. 8GiB (2 GiB by default): a "
            "file that would take more is refused before it is read.",
            rich_help_panel="Reading the sheet",
        ),
    ] = None

    def read_options(self, key: str) -> dict[str, Any]:
        """The keyword arguments of ``read_sheet`` (files read, pairs parsed)."""
        return {
            "mapping": (
                read_pairs_file(self.mapping, "--mapping", ("header", "field"))
                if self.mapping is not None
                else None
            ),
            "defaults": parse_pairs(self.default, "--default"),
            "overrides": parse_pairs(self.overrides, "--set"),
            "pending_status": self.pending_status.value,
            "clear_token": self.clear_token,
            "extensions": not self.no_extensions,
            "decimal_baths": self.decimal_baths,
            "lot_unit": self.lot_unit.value if self.lot_unit is not None else None,
            "key": key,
            "statuses": (
                read_pairs_file(self.statuses, "--statuses", ("code", "status"))
                if self.statuses is not None
                else None
            ),
            "encoding": check_encoding(self.encoding),
            "engine": self.engine.value,
            **({"max_memory": self.max_memory} if self.max_memory is not None else {}),
        }


def read_with_flags(path: Path, flags: SheetFlags, *, key: str, progress: bool | None) -> Sheet:
    """``read_sheet(path, ...)`` with the flags, its progress bar on stderr while it reads (on a
    terminal, when progress bars are on)."""
    from estatebot.listings.sheet.read import read_sheet

    options = flags.read_options(key)
    show = progress_enabled(progress) and err_console().is_terminal
    options["progress"] = show
    return _read(path, flags.sheet_name, options, read_sheet)


def _read(
    path: Path, sheet_name: str | None, options: dict[str, Any], read: Callable[..., Sheet]
) -> Sheet:
    try:
        return read(path, sheet_name=sheet_name, **options)
    except SheetNotFoundError:
        # ``--sheet 2``: the second worksheet, unless one is named "2" (tried first).
        if sheet_name is None or not sheet_name.isdigit():
            raise
    number = int(sheet_name)
    if number < 1:
        raise SheetError("--sheet numbers worksheets from 1", value=sheet_name)
    try:
        return read(path, sheet_name=number - 1, **options)
    except SheetNotFoundError:
        raise SheetError(
            f"{path.name} has no worksheet named {sheet_name!r} and fewer than {number} worksheets",
            value=sheet_name,
        ) from None
