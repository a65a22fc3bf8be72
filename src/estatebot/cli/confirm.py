"""Asking before a plan is applied, as Terraform does: only ``yes`` approves.

With ``--yes`` nothing is asked (scheduled jobs). Without a terminal to ask on (standard input
is a pipe, a file or nothing) nothing is asked either, and nothing is applied: a job that forgot
``--yes`` must not hang waiting for an answer, nor apply what nobody approved.

Ctrl-C at the question (or the end of its input, Ctrl-D) is an interruption, not an answer:
the command exits 130 as any interrupted command does, so a script that ran it stops too.
"""

from __future__ import annotations

import sys
from enum import Enum

import typer

from estatebot.cli.console import err_console

__all__ = ["Answer", "ask_to_apply"]


class Answer(Enum):
    """What became of the question."""

    APPROVED = "approved"
    DECLINED = "declined"
    NO_TERMINAL = "no terminal"
    #: Ctrl-C (or the end of input) at the question: nobody answered.
    INTERRUPTED = "interrupted"


def ask_to_apply(question: str, *, yes: bool) -> Answer:
    """Ask ``question`` on the terminal; APPROVED only for ``yes`` (or with ``--yes``),
    INTERRUPTED for Ctrl-C or the end of input."""
    if yes:
        return Answer.APPROVED
    if not sys.stdin.isatty():
        return Answer.NO_TERMINAL
    console = err_console()
    console.print(question, style="bold")
    console.print("  Only 'yes' will be accepted to approve.")
    try:
        answer = typer.prompt("  Enter a value", default="", show_default=False, err=True)
    except (typer.Abort, EOFError, KeyboardInterrupt):
        # Click turns both Ctrl-C and the end of input into Abort: nobody answered. The cursor
        # is still on the question's line.
        console.print()
        return Answer.INTERRUPTED
    return Answer.APPROVED if str(answer).strip() == "yes" else Answer.DECLINED
