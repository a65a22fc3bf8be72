"""One run at a time per chatbot and service: ``sync``, ``cleanup``, ``apply``, ``undo`` and
``restore`` hold a lock from before they plan (or resume) to the end of their apply.

Two runs of one sheet at once would both plan the same creates and both send them; two resumes
of one interrupted run would both read the same journal and send every operation left twice.
The lock is an OS file lock (:class:`~estatebot.listings.sync.apply.held_lock.HeldLock`) in the
per-user state folder (``ESTATEBOT_STATE_DIR``, else ``$XDG_STATE_HOME/estatebot`` or
``~/.local/state/estatebot``, where the record of values sent lives too), under
``locks/run-DIGEST.lock``: the digest of the service's address and the chatbot's serial, so two
runs from two folders, with two runs folders, collide too.

A second run waits ``--lock-wait`` seconds (``ESTATEBOT_LOCK_WAIT``; 5 by default), then stops
before it reads, plans or sends anything, with one line naming the run that holds the lock
from its note (``run-DIGEST.holder.json``): its command, PID, start time and run folder. It
exits 1, the code of "the command could not do its job" (:mod:`~estatebot.cli.codes`): nothing
was planned or sent, which 2, 3, 4 and 5 would each say otherwise.

The system lets go of the lock when its holder ends, however it ends. A run killed with SIGKILL
leaves its note behind; the next run takes the lock and says so: ``taken over from PID n, no
longer running``.
"""

from __future__ import annotations

import hashlib
import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from estatebot.api._redact import redact
from estatebot.cli.console import err_console, safe
from estatebot.cli.report_view import shown_path
from estatebot.errors import EstatebotError

if TYPE_CHECKING:
    from estatebot.api.client import Client
    from estatebot.listings.sync.apply.held_lock import HeldLock, Holder

__all__ = ["RunBusyError", "holding_chatbot", "lock_path", "state_folder"]


class RunBusyError(EstatebotError):
    """Another run holds the chatbot on this service; nothing was read, planned or sent."""

    def __init__(self, what: str, holder: Holder | None, waited: float) -> None:
        self.holder = holder
        who = (
            _described(holder)
            if holder is not None
            else "another estatebot run (it has not yet written who it is)"
        )
        super().__init__(
            f"{what} is busy: {who} holds it (waited {waited:g} s); nothing was done. Two runs "
            "at once would both send the same changes: run this again when that one has ended "
            "(--lock-wait SECONDS waits longer)"
        )


def state_folder() -> Path:
    """The per-user folder estatebot keeps its state in (the record of values sent is there)."""
    from estatebot.listings.remote.sent_record import default_sent_values_path

    return default_sent_values_path().parent


def lock_path(service: str, serial: str) -> Path:
    """The lock file of chatbot ``serial`` on ``service`` (an address, never a credential)."""
    digest = hashlib.sha256(f"{service}\n{serial}".encode()).hexdigest()[:32]
    return state_folder() / "locks" / f"run-{digest}.lock"


def _this_command() -> str:
    """This run's command line, as the holder note names it (keys masked, though none is ever
    passed on the command line)."""
    return redact(shlex.join(["estatebot", *sys.argv[1:]]))


def _described(holder: Holder) -> str:
    """The holder, its run folder shown as the output shows folders."""
    if holder.run_folder:
        holder = replace(holder, run_folder=shown_path(holder.run_folder))
    return safe(holder.describe(), one_line=True)


@contextmanager
def holding_chatbot(client: Client, serial: str, *, wait: float) -> Iterator[HeldLock]:
    """Hold the run lock of chatbot ``serial`` on ``client``'s service for the block.

    Waits ``wait`` seconds for another run, then raises :class:`RunBusyError` naming it. A lock
    left by a run that was killed is taken over, and that is said on stderr.
    """
    # Imported here: the command line starts without loading the listings package.
    from estatebot.listings.remote.sent_record import service_address
    from estatebot.listings.sync.apply.held_lock import HeldLock, LockHeldError

    service = service_address(client) or ""
    what = f"chatbot {serial} at {service}"
    lock = HeldLock(lock_path(service, serial), what=what, wait=wait, command=_this_command())
    try:
        left = lock.acquire()
    except LockHeldError as error:
        raise RunBusyError(what, error.holder, error.waited) from None
    try:
        if left is not None:
            state = "no longer running" if not left.running else "it no longer holds the lock"
            err_console().print(
                Text(
                    f"The lock of {what} was taken over from PID {left.pid}, {state} "
                    f"({_described(left)}).",
                    style="yellow",
                ),
                soft_wrap=True,
            )
        yield lock
    finally:
        lock.release()
