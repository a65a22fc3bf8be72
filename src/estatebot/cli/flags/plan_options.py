"""Flag groups of planning, showing and applying, shared by ``plan``, ``sync``, ``cleanup`` and
``apply`` (see :func:`~estatebot.cli.flags.option_groups.with_flags`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from estatebot.cli.flags.shared_options import KeyName
from estatebot.cli.plan_view import Detail

__all__ = ["ApplyFlags", "ForceIdentityOption", "GuardFlags", "ShowFlags", "SyncFlags"]

_PLANNING = "Planning"
_SHOWING = "Showing the plan"
_APPLYING = "Applying"


#: ``--force-identity-count`` (``plan``, ``sync``, and ``apply``, which checks it again).
#: ``--blank-unknown-location`` (``sync``, ``plan`` and the fleet's commands).
BlankLocationOption = Annotated[
    bool,
    typer.Option(
        "--blank-unknown-location",
        envvar="ESTATEBOT_BLANK_UNKNOWN_LOCATION",
        help="Send Location empty in updates of listings whose Location nobody here knows "
        "(the service never shows it; held back by default, so one set by another tool is "
        "not blanked).",
        rich_help_panel=_PLANNING,
    ),
]
ForceIdentityOption = Annotated[
    int | None,
    typer.Option(
        "--force-identity-count",
        min=0,
        metavar="N",
        help="Allow more changes of MLSNumber or Url than --max-delete-fraction: give their "
        "exact count (many of them usually mean a column mapped to the wrong field).",
        rich_help_panel=_PLANNING,
    ),
]


@dataclass(frozen=True)
class GuardFlags:
    """The guards of deletes, shared by a sync and a cleanup."""

    force_delete_count: Annotated[
        int | None,
        typer.Option(
            "--force-delete-count",
            min=0,
            metavar="N",
            help="Allow more deletes than --max-delete-fraction: give their exact count.",
            rich_help_panel=_PLANNING,
        ),
    ] = None
    max_delete_fraction: Annotated[
        float,
        typer.Option(
            "--max-delete-fraction",
            min=0.0,
            max=1.0,
            help="The share of the listings a plan may delete without --force-delete-count.",
            rich_help_panel=_PLANNING,
        ),
    ] = 0.2

    def options(self) -> dict[str, Any]:
        """Keyword arguments of ``plan_sync`` and ``plan_cleanup``."""
        return {
            "force_delete_count": self.force_delete_count,
            "max_delete_fraction": self.max_delete_fraction,
        }


@dataclass(frozen=True)
class SyncFlags:
    """How a sheet is planned against the listings."""

    key: Annotated[
        KeyName,
        typer.Option(
            "--key",
            case_sensitive=False,
            help="Match sheet rows and listings by this key.",
            rich_help_panel=_PLANNING,
        ),
    ] = KeyName.MLS
    delete_missing: Annotated[
        bool,
        typer.Option(
            "--delete-missing",
            help="Delete listings absent from the sheet (guarded: see --max-delete-fraction).",
            rich_help_panel=_PLANNING,
        ),
    ] = False
    no_create: Annotated[
        bool,
        typer.Option(
            "--no-create",
            help="List new rows instead of creating them.",
            rich_help_panel=_PLANNING,
        ),
    ] = False
    accept_flagged: Annotated[
        bool,
        typer.Option(
            "--accept-flagged",
            help="Plan the values the reader warned about too (held back by default).",
            rich_help_panel=_PLANNING,
        ),
    ] = False
    allow_incomplete: Annotated[
        bool,
        typer.Option(
            "--allow-incomplete",
            help="Create and delete even when the pull looks incomplete (listings moved "
            "while it ran).",
            rich_help_panel=_PLANNING,
        ),
    ] = False
    force_identity_count: ForceIdentityOption = None
    blank_unknown_location: BlankLocationOption = False

    def options(self) -> dict[str, Any]:
        """Keyword arguments of ``plan_sync`` (the guards of deletes apart)."""
        return {
            "key": self.key.value,
            "delete_missing": self.delete_missing,
            "create_missing": not self.no_create,
            "accept_flagged": self.accept_flagged,
            "allow_incomplete": self.allow_incomplete,
            "force_identity_count": self.force_identity_count,
            "blank_unknown_location": self.blank_unknown_location,
        }


@dataclass(frozen=True)
class ShowFlags:
    """How much of a plan the terminal shows."""

    detail: Annotated[
        Detail,
        typer.Option(
            "--detail",
            case_sensitive=False,
            help="summary: counts and notes; changes: each listing and its changed fields; "
            "full: also every field of a listing created or deleted.",
            rich_help_panel=_SHOWING,
        ),
    ] = Detail.CHANGES
    max_rows: Annotated[
        int,
        typer.Option(
            "--max-rows",
            min=0,
            metavar="N",
            help="Listings shown per section (0: all); the plan's workbook holds every one.",
            rich_help_panel=_SHOWING,
        ),
    ] = 50


@dataclass(frozen=True)
class ApplyFlags:
    """How a plan is carried out."""

    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency", min=1, max=64, help="Requests at once.", rich_help_panel=_APPLYING
        ),
    ] = 8
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Apply even if listings changed on the service since the plan was made.",
            rich_help_panel=_APPLYING,
        ),
    ] = False
    sent_values: Annotated[
        Path | None,
        typer.Option(
            "--sent-values",
            metavar="FILE",
            dir_okay=False,
            help="The record of AreaUnit and Location last sent (SQLite; default: in "
            "ESTATEBOT_STATE_DIR or ~/.local/state/estatebot).",
            rich_help_panel=_APPLYING,
        ),
    ] = None
    no_sent_values: Annotated[
        bool,
        typer.Option(
            "--no-sent-values",
            help="Keep no record of the values sent (an update then cannot restore them).",
            rich_help_panel=_APPLYING,
        ),
    ] = False

    def sent(self) -> Path | bool | None:
        """``sent_values=`` of ``apply_plan``."""
        return False if self.no_sent_values else self.sent_values
