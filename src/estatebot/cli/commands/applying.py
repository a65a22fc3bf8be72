"""``estatebot apply``: carry out a saved plan exactly, journaled and backed up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from estatebot.cli.codes import ExitCode
from estatebot.cli.console import out_console
from estatebot.cli.execution import Files, carry_out, tracked
from estatebot.cli.flags.option_groups import with_flags
from estatebot.cli.flags.plan_options import ApplyFlags
from estatebot.cli.flags.shared_options import ProgressOption, SerialOption
from estatebot.cli.report_view import render_report, shown_path
from estatebot.cli.runs import run_of_plan
from estatebot.errors import PlanError

if TYPE_CHECKING:
    from estatebot.listings.sync.sync_plan import SyncPlan

__all__ = ["apply"]


@with_flags(applying=ApplyFlags)
def apply(
    plan_file: Annotated[
        Path,
        typer.Argument(
            metavar="PLAN",
            help="A plan saved by `estatebot plan` (or by `sync` in its run folder).",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ],
    serial: SerialOption,
    journal: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="The journal (default: PLAN's name with .journal). Run the same command "
            "again to resume: what is done is not done again.",
        ),
    ] = None,
    backup: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="Before-image of the listings changed, .json or .xlsx (default: PLAN's name "
            "with .backup.json); `estatebot restore` puts it back.",
        ),
    ] = None,
    report: Annotated[
        Path | None, typer.Option(dir_okay=False, help="Write the report as xlsx.")
    ] = None,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=0, help="Operations not done listed (0: all).")
    ] = 50,
    progress: ProgressOption = None,
    *,
    applying: ApplyFlags,
) -> None:
    """Apply a saved plan exactly: journaled, backed up, refused when stale.

    Exit 0 when every operation is done, 4 when any failed (the report lists them), 1 on an
    error (nothing written: a stale or altered plan, the service unreachable), 130 when
    interrupted (it prints the command that resumes).
    """
    from estatebot.api.client import Client

    loaded = _load(plan_file)
    files = Files(
        plan=plan_file,
        journal=journal or plan_file.with_suffix(".journal"),
        backup=backup or plan_file.with_suffix(".backup.json"),
    )
    console = out_console()
    console.print(f"Applying {shown_path(plan_file)}: {loaded.summary()}")
    # A plan in a run folder of `sync` or `cleanup`: resuming it here finishes that run too.
    with Client() as client, tracked(run_of_plan(plan_file), files):
        result = carry_out(loaded, client, serial, files, applying, progress=progress)
    if report is not None:
        result.to_excel(report)
    render_report(console, result, max_rows=max_rows)
    raise typer.Exit(ExitCode.OK if result.ok else ExitCode.FAILED)


def _load(path: Path) -> SyncPlan:
    """The plan saved in ``path``; an error naming the file when it holds none."""
    from estatebot.listings.sync.sync_plan import SyncPlan

    try:
        return SyncPlan.load(path)
    except UnicodeDecodeError:
        raise PlanError(f"{path} is not a saved plan: it is not text") from None
    except json.JSONDecodeError as error:
        raise PlanError(
            f"{path} is not a saved plan: not JSON (line {error.lineno}, column {error.colno}: "
            f"{error.msg}); make it with `estatebot plan ... --out {path}`"
        ) from None
    except PlanError as error:
        raise PlanError(f"{path}: {error}") from None
    except (LookupError, TypeError, ValueError, AttributeError) as error:
        raise PlanError(
            f"{path} is not a saved plan: {type(error).__name__} {error}; make the plan again"
        ) from None
