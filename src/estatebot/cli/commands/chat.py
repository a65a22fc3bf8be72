"""``estatebot ask`` and ``estatebot test-chat``: one question, or a batch of test cases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from estatebot.cli.codes import ExitCode
from estatebot.cli.console import out_console, safe
from estatebot.cli.flags.shared_options import ProgressOption, SerialOption
from estatebot.cli.report_view import shown_path
from estatebot.errors import EstatebotError

__all__ = ["ask", "run_tests"]


class NoCasesError(EstatebotError):
    """A cases file without a case: an empty gate must not pass unnoticed."""


def run_tests(
    cases: Annotated[
        Path,
        typer.Argument(
            help="Test cases: .xlsx or .csv (question, expect_contains, ...).",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ],
    serial: SerialOption,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", dir_okay=False, help="Results as .xlsx.")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Cases asked at once.")] = 4,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=0, help="Failed cases listed (0: all).")
    ] = 50,
    progress: ProgressOption = None,
) -> None:
    """Run a batch of chat test cases: a deployment gate.

    Exit 0 when every case passed, 4 when any failed, 1 on an error (no cases in the file
    included).
    """
    from estatebot.api.client import Client
    from estatebot.chat.harness.running import run_chat_tests

    with Client() as client:
        results = run_chat_tests(client, serial, cases, concurrency=concurrency, progress=progress)
    if not len(results):
        raise NoCasesError(f"{cases} holds no test case (a row with a question)")
    if out is not None:
        results.to_excel(out)
    summary = results.summary()
    console = out_console()
    passed = results.ok
    console.print(
        Text(
            f"{summary['passed']} of {summary['cases']} cases passed "
            f"({summary['failed']} failed, {summary['errors']} errors)",
            style="bold green" if passed else "bold red",
        )
    )
    failures = results.failures[["case", "error", "why"]].itertuples(index=False)
    for shown, (case, failure, why) in enumerate(failures):
        if max_rows and shown >= max_rows:
            console.print(Text("  ... and more (--max-rows 0 lists all; --out FILE keeps them)"))
            break
        reason = failure if isinstance(failure, str) and failure else why
        console.print(Text(f"  FAIL {safe(case, one_line=True)}: {safe(reason, one_line=True)}"))
    if out is not None:
        console.print(f"Results: {shown_path(out)}")
    raise typer.Exit(ExitCode.OK if passed else ExitCode.FAILED)


def ask(
    question: Annotated[str, typer.Argument(help="The message to send.")],
    serial: SerialOption,
    stream: Annotated[bool, typer.Option("--stream/--no-stream", help="Print as it comes.")] = True,
) -> None:
    """Ask a chatbot one question in a new chat session and print the answer."""
    from estatebot.api.client import Client

    with Client() as client:
        session = client.chat.create_session(serial)
        if stream:
            with client.chat.stream(session, question) as answer:
                for text in answer:
                    typer.echo(safe(text), nl=False)
            typer.echo()
        else:
            typer.echo(safe(client.chat.ask(session, question).content))
