"""Where the command line writes: rich consoles for stdout and stderr, and text made safe.

Colour follows the terminal: none when the output is not a terminal (a pipe, a log file, a
scheduled job) or when ``NO_COLOR`` is set (rich reads both, and ``FORCE_COLOR``, ``TERM=dumb``
and ``COLUMNS`` too). Consoles are made when a command runs, never at import, so they write to
whatever ``sys.stdout`` is then (a test runner's capture included).

Listing text comes from spreadsheets and the service, so it is untrusted: a description holding
``ESC [2J`` would clear the user's screen, and rich passes escape sequences through. Every such
text goes through :func:`safe` before it is shown, and into a :class:`rich.text.Text` (never
parsed as markup).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

from rich.console import Console
from rich.text import Text

__all__ = ["Block", "Line", "err_console", "out_console", "print_block", "print_lines", "safe"]

# C0 controls but tab and newline, DEL, and C1 controls (ESC, CSI, OSC, ... can all drive a
# terminal).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def safe(text: object, *, one_line: bool = False) -> str:
    """``text`` with every terminal control character shown as ``\\xNN``.

    ``one_line`` also shows tabs and line breaks escaped, for a value inside a table cell.
    """
    shown = _CONTROL.sub(_escaped, str(text))
    if one_line:
        shown = shown.replace("\t", "\\t").replace("\n", "\\n")
    return shown


def out_console() -> Console:
    """A console on the current standard output.

    Lines are not wrapped by rich (a command or a path cut in two cannot be copied); the
    views wrap what should wrap with :func:`print_block`, under its own indent.
    """
    return Console(file=sys.stdout, highlight=False, emoji=False, markup=False, soft_wrap=True)


def err_console() -> Console:
    """A console on the current standard error (errors, prompts, the interruption notice)."""
    return Console(file=sys.stderr, highlight=False, emoji=False, markup=False, soft_wrap=True)


@dataclass(frozen=True)
class Block:
    """One line to print: ``prefix`` then ``body``, the body wrapped under itself."""

    prefix: Text
    body: Text = field(default_factory=Text)

    @classmethod
    def indented(cls, body: Text, indent: int) -> Block:
        """``body`` under the listing's line."""
        return cls(Text(" " * indent), body)


def print_block(console: Console, block: Block) -> None:
    """Print ``block``, wrapping its body at the console's width, with no trailing spaces.

    Rich pads tables and padded renderables to the full width; these lines are wrapped here
    instead, so a log or a golden file holds no trailing blanks.
    """
    hang = block.prefix.cell_len
    width = max(20, console.width - hang)
    lines = block.body.wrap(console, width, justify="default", overflow="fold") or [Text()]
    for number, line in enumerate(lines):
        shown = (block.prefix.copy() if number == 0 else Text(" " * hang)) + line
        shown.rstrip()
        console.print(shown, soft_wrap=True)


#: One line of a view, as a view hands it to :func:`print_lines`: a :class:`Block` (wrapped
#: under its prefix) or a ``Text`` printed as it is (a heading, a blank line).
Line = Block | Text


def print_lines(console: Console, lines: Iterable[Line]) -> None:
    """Print a view's ``lines`` in order: a :class:`Block` by :func:`print_block`, a ``Text`` as
    it is (never wrapped, so a command or a path can be copied whole)."""
    for line in lines:
        if isinstance(line, Block):
            print_block(console, line)
        else:
            console.print(line)
