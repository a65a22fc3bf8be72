"""The ``estatebot`` command: serve the emulator, pull, plan, apply, restore, ask, test-chat, demo.

Credentials come from the environment (``ESTATEBOT_BASE_URL``, ``ESTATEBOT_API_KEY``,
``ESTATEBOT_SESSION_KEY``), as for :class:`estatebot.Client`. Commands only compose the public
API; each imports what it needs when it runs, so ``estatebot --help`` stays fast.

Exit codes: 0 success; 1 an error (a clear message, no traceback); ``plan`` exits 2 when the plan
has changes; ``test-chat`` exits 1 when any case fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from estatebot.api._redact import redact
from estatebot.api.errors import EstatebotError

if TYPE_CHECKING:
    from estatebot.listings.sync.artifact import PlanArtifact

app = typer.Typer(
    name="estatebot",
    help="Keep a real-estate chatbot's listings in step with a spreadsheet, and test its answers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

SerialOption = Annotated[
    str,
    typer.Option("--serial", "-s", envvar="ESTATEBOT_SERIAL", help="The chatbot's serial number."),
]
ProgressOption = Annotated[
    bool, typer.Option("--progress/--no-progress", help="Show progress bars.")
]


def _defaults(pairs: list[str], option: str = "--default") -> dict[str, str]:
    """``FIELD=VALUE`` options as a dict; a malformed one is a usage error naming it."""
    out: dict[str, str] = {}
    for pair in pairs:
        field, sep, value = pair.partition("=")
        if not sep or not field.strip():
            raise typer.BadParameter(f"expected FIELD=VALUE, got {pair!r}", param_hint=option)
        out[field.strip()] = value.strip()
    return out


def _fail(error: Exception) -> typer.Exit:
    # Errors never hold a key; redacting the line again costs nothing and guards the terminal.
    typer.secho(f"error: {redact(str(error))}", fg=typer.colors.RED, err=True)
    return typer.Exit(code=1)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    db: Annotated[str, typer.Option(help="SQLite file, or :memory:.")] = ":memory:",
    seed: Annotated[
        str, typer.Option(help="'demo', 'none', or a JSON file of listings for the demo chatbot.")
    ] = "demo",
    latency_ms: Annotated[int, typer.Option(help="Latency added to every request.")] = 0,
    fail_rate: Annotated[float, typer.Option(help="Share of requests that fail with 500.")] = 0.0,
    framing: Annotated[
        str, typer.Option(help="Stream framing: sse, ndjson, concatenated.")
    ] = "sse",
) -> None:
    """Run the local emulator of the service until interrupted."""
    try:
        from estatebot.emulator import serve as run_server
    except ImportError as error:  # the optional extra is not installed
        raise _fail(error) from None

    run_server(
        host=host,
        port=port,
        db=db,
        seed=None if seed.lower() == "none" else seed,
        latency_ms=latency_ms,
        fail_rate=fail_rate,
        framing=framing,
    )


@app.command()
def pull(
    serial: SerialOption,
    out: Annotated[Path, typer.Option("--out", "-o", help="listings.xlsx, .csv or .parquet")],
    city: Annotated[str | None, typer.Option(help="Only listings in this city.")] = None,
    sale_type: Annotated[str | None, typer.Option(help="for_sale or for_rent.")] = None,
    concurrency: Annotated[int, typer.Option(help="Pages fetched at once.")] = 8,
    progress: ProgressOption = True,
) -> None:
    """Pull every listing of a chatbot into a spreadsheet."""
    from estatebot.api.client import Client
    from estatebot.listings.export import write_frame
    from estatebot.listings.remote.pull import pull_listings

    try:
        with Client() as client:
            frame = pull_listings(
                client,
                serial,
                city=city,
                sale_type=sale_type,
                concurrency=concurrency,
                progress=progress,
            )
        path = write_frame(frame, out)
    except (EstatebotError, ValueError, OSError) as error:
        raise _fail(error) from None
    typer.echo(f"{len(frame)} listings written to {path}")


@app.command()
def plan(
    sheet: Annotated[Path, typer.Argument(help="The MLS export: .xlsx or .csv.")],
    serial: SerialOption,
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to save the plan (JSON).")] = Path(
        "plan.json"
    ),
    key: Annotated[str, typer.Option(help="Match by MLSNumber, URL or NewOaks.")] = "MLSNumber",
    delete_missing: Annotated[
        bool, typer.Option("--delete-missing", help="Delete listings absent from the sheet.")
    ] = False,
    no_create: Annotated[
        bool, typer.Option("--no-create", help="Report new rows instead of creating them.")
    ] = False,
    force_delete_count: Annotated[
        int | None, typer.Option(help="Allow a large delete: give its exact count.")
    ] = None,
    default: Annotated[
        list[str] | None,
        typer.Option(
            "--default",
            help="FIELD=VALUE for a field the sheet lacks or leaves blank, e.g. CurrencySymbol=$ "
            "(repeatable). It fills empty fields only: never a listing's own value.",
        ),
    ] = None,
    overrides: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            help="FIELD=VALUE written to every listing, over its own value (repeatable).",
        ),
    ] = None,
    accept_flagged: Annotated[
        bool,
        typer.Option("--accept-flagged", help="Plan the values the reader warned about too."),
    ] = False,
    allow_incomplete: Annotated[
        bool,
        typer.Option(
            "--allow-incomplete",
            help="Create and delete even when the pull looks incomplete (listings moved while "
            "it ran).",
        ),
    ] = False,
    progress: ProgressOption = True,
) -> None:
    """Plan the sync of a spreadsheet: print the summary, save the plan and an xlsx preview.

    Exit 0 when the listings are in step with the sheet (every row valid, nothing to change),
    2 when the plan has changes, 3 when rows are invalid or held back (whatever else the plan
    does), 1 on an error.
    """
    from estatebot.api.client import Client
    from estatebot.listings.remote.pull import pull_listings
    from estatebot.listings.sheet.read import read_sheet
    from estatebot.listings.sync.plan import plan_sync

    try:
        read = read_sheet(
            sheet,
            key=key,
            defaults=_defaults(default or []),
            overrides=_defaults(overrides or [], option="--set"),
        )
        typer.echo(read.summary())
        with Client() as client:
            remote = pull_listings(client, serial, progress=progress)
        made = plan_sync(
            read,
            remote,
            key=key,
            delete_missing=delete_missing,
            create_missing=not no_create,
            force_delete_count=force_delete_count,
            accept_flagged=accept_flagged,
            allow_incomplete=allow_incomplete,
        )
        made.save(out)
        preview = made.to_excel(out.with_suffix(".xlsx"))
    except (EstatebotError, OSError) as error:
        raise _fail(error) from None
    typer.echo(str(made))
    typer.echo(f"plan saved to {out}; preview in {preview}")
    raise typer.Exit(code=_plan_exit_code(made))


def _plan_exit_code(made: PlanArtifact) -> int:
    """0 in step, 2 changes, 3 rows invalid or held back: a sheet not in step is never 0."""
    if made.invalid or made.held_back:
        return 3
    return 0 if made.is_empty else 2


@app.command()
def apply(
    plan_file: Annotated[Path, typer.Argument(help="A plan saved by `estatebot plan`.")],
    serial: SerialOption,
    journal: Annotated[
        Path | None, typer.Option(help="Journal file; re-run with it to resume.")
    ] = None,
    backup: Annotated[
        Path | None, typer.Option(help="Before-image of changed listings (.xlsx or .json).")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Requests at once.")] = 8,
    force: Annotated[
        bool, typer.Option("--force", help="Apply even if listings changed since the plan.")
    ] = False,
    report: Annotated[Path | None, typer.Option(help="Write the report as xlsx.")] = None,
    progress: ProgressOption = True,
) -> None:
    """Apply a saved plan exactly: journaled, backed up, refused when stale.

    Exit 0 when every operation succeeded, 1 otherwise.
    """
    from estatebot.api.client import Client
    from estatebot.listings.sync.apply import apply_plan
    from estatebot.listings.sync.plan import SyncPlan

    try:
        loaded = SyncPlan.load(plan_file)
        typer.echo(f"applying: {loaded}")
        with Client() as client:
            result = apply_plan(
                loaded,
                client,
                serial,
                concurrency=concurrency,
                journal=journal,
                backup=backup,
                progress=progress,
                force=force,
            )
        if report is not None:
            result.to_excel(report)
    except (EstatebotError, OSError) as error:
        raise _fail(error) from None
    typer.echo(str(result))
    raise typer.Exit(code=0 if result.ok else 1)


@app.command()
def restore(
    backup: Annotated[Path, typer.Argument(help="A backup written by `estatebot apply`.")],
    serial: SerialOption,
    progress: ProgressOption = True,
) -> None:
    """Put the listings of a backup back as they were."""
    from estatebot.api.client import Client
    from estatebot.listings.sync.restore import restore as restore_backup

    try:
        with Client() as client:
            result = restore_backup(backup, client, serial, progress=progress)
    except (EstatebotError, OSError) as error:
        raise _fail(error) from None
    typer.echo(str(result))
    raise typer.Exit(code=0 if result.ok else 1)


@app.command("test-chat")
def chat_tests(
    cases: Annotated[Path, typer.Argument(help="Test cases: .xlsx or .csv.")],
    serial: SerialOption,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Results as .xlsx.")] = None,
    concurrency: Annotated[int, typer.Option(help="Cases asked at once.")] = 4,
    progress: ProgressOption = True,
) -> None:
    """Run a batch of chat test cases; exit 1 when any case fails (a deployment gate)."""
    from estatebot.api.client import Client
    from estatebot.chat.testing import main_exit_code, run_chat_tests

    try:
        with Client() as client:
            results = run_chat_tests(
                client, serial, cases, concurrency=concurrency, progress=progress
            )
        if out is not None:
            results.to_excel(out)
    except (EstatebotError, OSError) as error:
        raise _fail(error) from None
    summary = results.summary()
    typer.echo(
        f"{summary['passed']} of {summary['cases']} cases passed "
        f"({summary['failed']} failed, {summary['errors']} errors)"
    )
    for case, failure, why in results.failures[["case", "error", "why"]].itertuples(index=False):
        typer.echo(f"  FAIL {case}: {failure if isinstance(failure, str) and failure else why}")
    raise typer.Exit(code=main_exit_code(results))


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The message to send.")],
    serial: SerialOption,
    stream: Annotated[bool, typer.Option("--stream/--no-stream")] = True,
) -> None:
    """Ask a chatbot one question in a new chat session and print the answer."""
    from estatebot.api.client import Client

    try:
        with Client() as client:
            session = client.chat.create_session(serial)
            if stream:
                with client.chat.stream(session, question) as answer:
                    for text in answer:
                        typer.echo(text, nl=False)
                typer.echo()
            else:
                typer.echo(client.chat.ask(session, question).content)
    except EstatebotError as error:
        raise _fail(error) from None


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Folder for the demo's outputs.")] = Path("out/demo"),
    sheet: Annotated[
        Path | None, typer.Option(help="The week-2 export (default: sample_data/).")
    ] = None,
) -> None:
    """Run the main job end to end against a local emulator (no account needed)."""
    try:
        from estatebot.demo import run_demo
    except ImportError as error:  # the emulator's optional extra is not installed
        raise _fail(error) from None

    try:
        run_demo(out, sheet)
    except (EstatebotError, OSError) as error:
        raise _fail(error) from None


def main() -> None:
    """Entry point of the console script."""
    app(prog_name="estatebot")


if __name__ == "__main__":  # pragma: no cover
    main()
