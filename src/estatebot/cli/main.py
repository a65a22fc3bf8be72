"""The ``estatebot`` application: its commands, global flags, exit codes and error boundary.

Every command is a plain function in :mod:`estatebot.cli.commands`; this module registers them
on one Typer app whose group class (:class:`EstatebotGroup`) owns what happens around them:

* a usage error (unknown flag, missing argument, bad value) exits 64, a code no command uses
  for a result (see :mod:`estatebot.cli.codes`);
* an error raised by a command is printed as one ``error:`` line in the command line's terms
  (:mod:`estatebot.cli.error_messages`), never as a traceback unless ``--debug``;
* Ctrl-C exits 130.

The run's settings (``--debug``, the command) live in Typer's context: the app's callback sets
``ctx.obj`` to a :class:`~estatebot.cli.error_messages.Settings`, and the group reports a
command's error while that context is still open, so nothing module-level changes at run time.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Sequence
from importlib import metadata
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from estatebot.cli.codes import TABLE, ExitCode
from estatebot.cli.commands import applying as apply_command
from estatebot.cli.commands import (
    chat,
    cleanup,
    fleet,
    planning,
    pulling,
    restoring,
    serving,
    syncing,
    undoing,
)
from estatebot.cli.commands import demo as demo_command
from estatebot.cli.console import err_console
from estatebot.cli.error_messages import (
    Settings,
    library_warnings_as_lines,
    report_error,
    settings_of,
)

__all__ = ["EstatebotGroup", "app", "main"]


def _base_named(name: str) -> type[Exception]:
    """A base class of Typer's BadParameter by name: Typer bundles its own copy of click's
    exceptions (older versions used click's), and only BadParameter is exported."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


#: Any mistake on the command line (unknown flag, missing or bad value); and any error Typer
#: shows itself.
UsageError = _base_named("UsageError")
ClickException = _base_named("ClickException")

#: What Typer handles itself once it leaves a command (shows, exits, or reads as an interrupt):
#: passed on by :meth:`EstatebotGroup.invoke` untouched, as before the boundary moved there.
_TYPERS_OWN: tuple[type[BaseException], ...] = (ClickException, typer.Abort, typer.Exit, EOFError)


class EstatebotGroup(TyperGroup):
    """The command group, with the project's exit codes and one-line errors."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command line; exit (or return, not standalone) with the code of the table."""
        code = self._run(args, prog_name, complete_var, **extra)
        if standalone_mode:
            sys.exit(code)
        return code

    def invoke(self, ctx: Any) -> Any:
        """Run the command; Ctrl-C outside an apply (which says more itself) is said too.

        An error the command raises is reported here, in one line (the boundary), while
        ``ctx`` still holds the run's settings: once the context closes they are gone.
        """
        try:
            with library_warnings_as_lines():  # each of the library's warnings as one line
                return super().invoke(ctx)
        except KeyboardInterrupt:
            err_console().print("\nInterrupted.", style="bold yellow")
            raise
        except _TYPERS_OWN:
            raise
        except Exception as error:
            if isinstance(error, OSError) and error.errno == errno.EPIPE:
                raise  # a closed pipe: Typer exits 1 quietly
            raise typer.Exit(int(report_error(error, settings_of(ctx)))) from None

    def _run(
        self,
        args: Sequence[str] | None,
        prog_name: str | None,
        complete_var: str | None,
        **extra: Any,
    ) -> int:
        try:
            result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except UsageError as error:
            error.show()  # type: ignore[attr-defined]
            return int(ExitCode.USAGE)
        except ClickException as error:
            error.show()  # type: ignore[attr-defined]
            return int(getattr(error, "exit_code", ExitCode.ERROR))
        except (typer.Abort, KeyboardInterrupt):
            typer.echo("interrupted", err=True)
            return int(ExitCode.INTERRUPTED)
        except Exception as error:  # the boundary: one line, a traceback only with --debug
            # Raised outside a command (its context is closed or never opened): the defaults.
            return int(report_error(error))
        return int(result) if isinstance(result, int) else int(ExitCode.OK)


def _exit_table() -> str:
    rows = "\n".join(f"  {code:>3}  {meaning} ({where})" for code, meaning, where in TABLE)
    return (
        "Exit codes, the same for every command (success is 0; --detailed-exitcode on plan, "
        f"sync, cleanup and apply adds 2 and 3):\n\n{rows}"
    )


app = typer.Typer(
    name="estatebot",
    cls=EstatebotGroup,
    help="Keep a real-estate chatbot's listings in step with a spreadsheet, and test its answers.",
    epilog=_exit_table(),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _version() -> str:
    try:
        return metadata.version("estatebot")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        from estatebot import __version__

        return __version__


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"estatebot {_version()}")
        raise typer.Exit(0)


@app.callback()
def _top(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug",
            envvar="ESTATEBOT_DEBUG",
            help="Show the traceback of an error (put it before the command).",
        ),
    ] = False,
) -> None:
    """Credentials come from ESTATEBOT_BASE_URL, ESTATEBOT_API_KEY and ESTATEBOT_SESSION_KEY."""
    ctx.obj = Settings(debug=debug, command=ctx.invoked_subcommand or "")


app.command("serve")(serving.serve)
app.command("pull")(pulling.pull)
app.command("plan")(planning.plan)
app.command("apply")(apply_command.apply)
app.command("sync")(syncing.sync)
app.command("cleanup")(cleanup.cleanup)
app.command("restore")(restoring.restore)
app.command("undo")(undoing.undo)
app.command("ask")(chat.ask)
app.command("test-chat")(chat.run_tests)
app.command("demo")(demo_command.demo)
app.add_typer(fleet.fleet_app)


def main() -> None:
    """Entry point of the console script."""
    app(prog_name="estatebot")
