"""Errors in the terms of the command line: which flag to pass, which file and row.

The library's messages speak to Python callers (``pass lot_unit='sqft'``, ``force=True``,
``190 more in .issues``). :func:`in_cli_terms` rewrites those hints into the flags that do the
same here, so a person who never opens Python reads ``pass --lot-unit sqft``. Every text the
command line shows from the library (errors, plan notes, invalid rows' reasons, sheet issues)
goes through it.

:func:`report_error` prints an error as one line (no traceback unless ``--debug``), masks any
key, and gives the exit code. :func:`library_warnings_as_lines` does the same for the library's
warnings (a cell made safe in a spreadsheet, pages a pull skipped): one ``warning: ...`` line
each, instead of Python's two lines naming the warning's class and a line of our source.

Both depend on the run's :class:`Settings` (``--debug``, the command), which the app's callback
puts in Typer's context (``ctx.obj``): no module-level state changes while a command runs. Called
outside a command (a usage error, an error before the callback ran, a test calling a helper),
they use the default settings.
"""

from __future__ import annotations

import importlib
import re
import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import typer

from estatebot.api._redact import redact
from estatebot.cli.codes import ExitCode
from estatebot.cli.console import err_console, safe
from estatebot.errors import EstatebotError

__all__ = [
    "Settings",
    "current_settings",
    "in_cli_terms",
    "library_warnings_as_lines",
    "report_error",
    "settings_of",
    "warning_line",
]


@dataclass(frozen=True)
class Settings:
    """What the top of the command line decided for this run (``--debug``, the command).

    The app's callback stores one as the context's ``obj``; :func:`settings_of` and
    :func:`current_settings` find it.
    """

    debug: bool = False
    command: str = ""


def _context_lookup() -> Callable[..., Any]:
    # Typer runs on its own copy of click (typer._click) or, in older versions, on click itself,
    # and only that copy's context stack holds the running command: ask the package that
    # typer.Context is built on, whichever it is, for its get_current_context.
    base = next(c for c in typer.Context.__mro__[1:] if c.__name__ == "Context")
    package = base.__module__.rpartition(".")[0]
    lookup: Callable[..., Any] = importlib.import_module(f"{package}.globals").get_current_context
    return lookup


_get_current_context = _context_lookup()


def settings_of(ctx: Any) -> Settings:
    """The settings in ``ctx`` or a parent of it (a Typer context); the defaults if none."""
    found = ctx.find_object(Settings) if ctx is not None else None
    return found if isinstance(found, Settings) else Settings()


def current_settings() -> Settings:
    """The running command's settings; the defaults outside a command (see the module)."""
    return settings_of(_get_current_context(silent=True))


def _default(run: Settings, match: re.Match[str]) -> str:
    field, value = match.group(1), match.group(2)
    pair = f"{field}={value}"
    return f'--default "{pair}"' if " " in pair else f"--default {pair}"


def _skip_pages(run: Settings, match: re.Match[str]) -> str:
    # Only pull has the flag; sync and cleanup pull too, but can only be run again.
    if run.command == "pull":
        return "(pass --skip-failed-pages to keep the pages that did arrive)"
    return "(try again when the service answers)"


def _pages_missing(run: Settings, match: re.Match[str]) -> str:
    # The library speaks of its data frame; pull writes a file of it, other commands a plan.
    if run.command == "pull":
        return "; their listings are not in the file"
    return "; their listings are missing"


#: A rule's replacement: a template, or a function of the run's settings and the match.
_Replacement = str | Callable[[Settings, re.Match[str]], str]

# Most specific first: each rule rewrites a hint the library gives, as the flag that does it.
_RULES: tuple[tuple[re.Pattern[str], _Replacement], ...] = (
    (re.compile(r"add a (\w+) column, mapping= or defaults="),
     r"add a \1 column, --mapping FILE or --default \1=VALUE"),
    (re.compile(r"add a (\w+) column or defaults="), r"add a \1 column or --default \1=VALUE"),
    (re.compile(r"defaults=\{'(\w+)': '([^']*)'\}"), _default),
    (re.compile(r"\(e\.g\. \{header: 'ExtensionColumn'\} or \{header: 'ignore'\}\)"),
     "(a row 'HEADER,ExtensionColumn' or 'HEADER,ignore' in the file)"),
    (re.compile(r"\bmapping= or defaults="), "--mapping FILE or --default FIELD=VALUE"),
    (re.compile(r"\bplan by another key\b"), "plan by another key (--key)"),
    (re.compile(r"\bpass a new journal= path"), "pass a new --journal FILE"),
    (re.compile(r"\bmapping="), "--mapping FILE"),
    (re.compile(r"\bdefaults="), "--default FIELD=VALUE"),
    (re.compile(r"\boverrides="), "--set FIELD=VALUE"),
    (re.compile(r"lot_unit='sqft', 'sqm' or 'acres'"), "--lot-unit sqft, sqm or acres"),
    (re.compile(r"\blot_unit="), "--lot-unit UNIT"),
    (re.compile(r"encoding='([\w-]+)' or '([\w-]+)'"), r"--encoding \1 or --encoding \2"),
    (re.compile(r"encoding='([\w-]+)'"), r"--encoding \1"),
    (re.compile(r"\(encoding=\.\.\.\)"), "(--encoding NAME)"),
    (re.compile(r"\bencoding=(?=[\s,;)]|$)"), "--encoding NAME"),
    (re.compile(r"\bstatuses="), "--statuses FILE"),
    (re.compile(r"\bforce_delete_count=(\d+)"), r"--force-delete-count \1"),
    (re.compile(r"\bforce_identity_count=(\d+)"), r"--force-identity-count \1"),
    (re.compile(r"\bmax_memory='([^']*)'"), r'--max-memory "\1"'),
    (re.compile(r"\bmax_memory=(?= \(now)"), "--max-memory"),
    (re.compile(r"\bmax_memory="), "--max-memory SIZE"),
    (re.compile(r"\bpass blank_unknown_location=True"), "pass --blank-unknown-location"),
    (re.compile(r"\bmax_delete_fraction=([\d.]+)"), r"--max-delete-fraction \1"),
    (re.compile(r"\bforce=True"), "--force"),
    (re.compile(r"\ballow_incomplete=True"), "--allow-incomplete"),
    (re.compile(r"\baccept_flagged=True"), "--accept-flagged"),
    (re.compile(r"\bcreate_missing=False"), "--no-create"),
    (re.compile(r"\bdelete_missing=True"), "--delete-missing"),
    (re.compile(r"\(pass on_error='skip' to keep the pages that did arrive\)"), _skip_pages),
    (re.compile(r"; the frame is incomplete\b"), _pages_missing),
    (re.compile(r"\bcheck serial="), "check --serial / ESTATEBOT_SERIAL"),
    (re.compile(r"\bsent_values= another path, or sent_values=False"),
     "--sent-values FILE for another file, or --no-sent-values"),
    (re.compile(r"pass (?:base_url|api_key|session_key)= or set "), "set "),
    (re.compile(r"\((?:base_url|api_key|session_key)= or (ESTATEBOT_\w+)\)"), r"(\1)"),
    (re.compile(r" \(see the sheet's issues\)"), " (listed above)"),
    (re.compile(r"\(see \.failures\)"), "(see the report: --report FILE)"),
)  # fmt: skip


def in_cli_terms(text: str, settings: Settings | None = None) -> str:
    """``text`` with the library's Python hints rewritten as this command line's flags.

    Some hints depend on the command (only ``pull`` has ``--skip-failed-pages``): ``settings``
    says which, by default the running command's (:func:`current_settings`).
    """
    run = settings if settings is not None else current_settings()
    for pattern, replacement in _RULES:
        if isinstance(replacement, str):
            text = pattern.sub(replacement, text)
        else:
            text = pattern.sub(partial(replacement, run), text)
    return text


#: Errors that come from the input, the files or the service: reported in one line.
EXPECTED: tuple[type[BaseException], ...] = (
    EstatebotError, OSError, ValueError, LookupError, ImportError,
)  # fmt: skip


def report_error(error: BaseException, settings: Settings | None = None) -> ExitCode:
    """Print ``error`` on stderr as ``error: ...`` in the command line's terms; its exit code.

    Only ``--debug`` adds the traceback. An error nobody expected (a bug) says so and how to
    see the traceback. Keys are masked in every line, the traceback's included. ``settings``
    are the run's (``--debug``, the command), by default the running command's
    (:func:`current_settings`).
    """
    run = settings if settings is not None else current_settings()
    console = err_console()
    if run.debug:
        lines = traceback.format_exception(error)
        console.print(safe(redact("".join(lines)).rstrip()), style="dim", soft_wrap=True)
    message = str(error) or type(error).__name__
    if isinstance(error, EXPECTED):
        text = in_cli_terms(message, run)
    else:
        text = (
            f"unexpected {type(error).__name__}: {message} (a bug: "
            "`estatebot --debug ...` shows where)"
        )
    console.print(f"error: {safe(redact(text))}", style="bold red", soft_wrap=True)
    return ExitCode.ERROR


def warning_line(message: str, settings: Settings | None = None) -> str:
    """A warning of the library as the command line shows it: ``warning: ...`` in its terms,
    keys masked, control characters escaped. ``settings`` as for :func:`report_error`."""
    run = settings if settings is not None else current_settings()
    return f"warning: {safe(redact(in_cli_terms(message, run)))}"


def _ours(category: type[Warning]) -> bool:
    return category.__module__.split(".")[0] == "estatebot"


@contextmanager
def library_warnings_as_lines(settings: Settings | None = None) -> Iterator[None]:
    """For the block, print each warning of estatebot's own classes as one line
    (:func:`warning_line`); other libraries' warnings are printed as Python prints them.

    Only the text changes (the block swaps :func:`warnings.formatwarning`): which warnings are
    shown still follows Python's filters (``-W``, ``PYTHONWARNINGS``), and whoever records
    warnings instead of printing them (``pytest.warns``, ``catch_warnings(record=True)``) still
    gets them. ``settings`` as for :func:`report_error`; without them, each warning is said in
    the terms of the command running when it is issued, so the block may start before the
    command's settings exist (around the whole app).
    """
    formatted_by_python = warnings.formatwarning

    def formatted(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        line: str | None = None,
    ) -> str:
        if _ours(category):
            return warning_line(str(message), settings) + "\n"
        return formatted_by_python(message, category, filename, lineno, line)

    # Put back by hand: catch_warnings restores the filters and showwarning, not this.
    warnings.formatwarning = formatted
    try:
        yield
    finally:
        warnings.formatwarning = formatted_by_python
