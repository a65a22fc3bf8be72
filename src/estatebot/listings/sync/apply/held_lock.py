"""One holder at a time: an OS file lock, and a note of who holds it for whoever waits.

:class:`HeldLock` takes an operating-system lock on a file (``filelock``: ``flock`` on Unix,
``LockFileEx`` on Windows). The system lets go of it when its holder ends, however it ends, so
a process killed with SIGKILL never leaves it stuck. Beside the lock a small JSON file, the
*holder note* (``NAME.holder.json`` next to ``NAME.lock``), says who holds it: the command,
its PID, when it began and, once known, its run folder. A second holder waits up to ``wait``
seconds and then raises :class:`LockHeldError`, naming the first from its note.

The note is written after the lock is taken and removed before it is let go, so a note found
by the one who has just taken the lock was left by a holder that ended without letting go: a
killed process. :meth:`HeldLock.acquire` returns that holder, so the caller can say the lock
was taken over from it.

The journal of an apply is guarded by one (:mod:`.journal`), and so is each chatbot on each
service on the command line (``estatebot.cli.run_lock``).
"""

from __future__ import annotations

import json
import os
import shlex
import socket
import sys
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import filelock

from estatebot.api._redact import redact
from estatebot.errors import EstatebotError

__all__ = ["DEFAULT_WAIT", "HeldLock", "Holder", "LockHeldError", "holder_note_path"]

#: How long a second holder waits for the first by default, in seconds: long enough for a run
#: that is just ending, short enough that a scheduled job started twice fails at once.
DEFAULT_WAIT = 5.0


@dataclass(frozen=True)
class Holder:
    """Who holds (or held) a lock, as its note says."""

    pid: int
    command: str
    started: str
    host: str = ""
    run_folder: str | None = None

    @property
    def running(self) -> bool:
        """Whether the holder's process still runs (on another host, or on Windows, where
        ``os.kill(pid, 0)`` would send Ctrl-C rather than probe: assumed so)."""
        if (self.host and self.host != socket.gethostname()) or os.name == "nt":
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's process: it exists
            return True
        except OSError:
            return False
        return True

    def describe(self) -> str:
        """``"`estatebot sync week2.xlsx --yes` (PID 4242, started 2025-06-02T12:00:00+00:00,
        run folder /data/estatebot-runs/sync-20250602-120000)"``."""
        parts = [f"PID {self.pid}"]
        if self.host and self.host != socket.gethostname():
            parts[0] += f" on {self.host}"
        parts.append(f"started {self.started}")
        if self.run_folder:
            parts.append(f"run folder {self.run_folder}")
        return f"`{self.command}` ({', '.join(parts)})"


class LockHeldError(EstatebotError):
    """Another holder kept the lock for longer than this one would wait; nothing was done.

    ``what`` names what the lock guards, ``holder`` who holds it (None when its note could not
    be read: it may be being written), ``waited`` the seconds waited.
    """

    def __init__(self, what: str, holder: Holder | None, waited: float) -> None:
        self.what = what
        self.holder = holder
        self.waited = waited
        who = holder.describe() if holder is not None else "a run that has not yet said who it is"
        super().__init__(f"{what} is in use by {who}; waited {waited:g} s")


def holder_note_path(lock_path: Path) -> Path:
    """The holder note beside the lock file ``lock_path`` (``x.lock`` → ``x.holder.json``)."""
    return lock_path.with_name(f"{lock_path.stem}.holder.json")


def _this_command() -> str:
    """How this process was started, keys masked (a script may take one as an argument)."""
    return redact(shlex.join([Path(sys.argv[0]).name if sys.argv else "python", *sys.argv[1:]]))


class HeldLock:
    """An OS lock on ``path`` with a holder note; use as a context manager or acquire/release.

    ``what`` names what it guards in messages (``"the journal run/journal.jsonl"``); ``wait``
    is how long :meth:`acquire` waits for another holder (0: not at all); ``command`` how the
    holder is named in its note (default: this process's command line).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        what: str,
        wait: float = DEFAULT_WAIT,
        command: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.note_path = holder_note_path(self.path)
        self.what = what
        self.wait = max(float(wait), 0.0)
        self.command = command if command is not None else _this_command()
        # Shared by the threads of this process: an apply opens its journal on one thread and
        # may close it on another.
        self._lock = filelock.FileLock(str(self.path), thread_local=False)
        self._holder: Holder | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._holder is not None

    def acquire(self) -> Holder | None:
        """Take the lock, waiting up to ``wait`` seconds; :class:`LockHeldError` if still held.

        Returns the holder it was taken over from (one that ended without letting go, as a
        killed process does), or None.
        """
        if self._holder is not None:
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire(timeout=self.wait)
        except filelock.Timeout:
            raise LockHeldError(self.what, self.read_holder(), self.wait) from None
        try:
            left = self.read_holder()
            self._holder = Holder(
                pid=os.getpid(),
                command=self.command,
                started=datetime.now(UTC).isoformat(timespec="seconds"),
                host=socket.gethostname(),
            )
            self._write(self._holder)
        except BaseException:
            self._lock.release(force=True)
            self._holder = None
            raise
        if left is None or (left.pid == os.getpid() and left.host == self._holder.host):
            return None  # no note, or one this process left (a lock object never released)
        return left

    def note_run_folder(self, folder: str | os.PathLike[str]) -> None:
        """Add the run folder to the holder note, for whoever waits to be told."""
        if self._holder is None:
            return
        self._holder = replace(self._holder, run_folder=str(Path(folder).resolve()))
        self._write(self._holder)

    def release(self) -> None:
        """Let go of the lock (the note first: a note without its lock means a killed holder)."""
        if self._holder is None:
            return
        self._holder = None
        try:
            self.note_path.unlink(missing_ok=True)
        finally:
            self._lock.release(force=True)

    def read_holder(self) -> Holder | None:
        """The holder the note names, or None when there is no readable note."""
        try:
            data: Any = json.loads(self.note_path.read_text(encoding="utf-8"))
            return Holder(
                pid=int(data["pid"]),
                command=str(data["command"]),
                started=str(data["started"]),
                host=str(data.get("host") or ""),
                run_folder=None if data.get("run_folder") is None else str(data["run_folder"]),
            )
        except (OSError, ValueError, TypeError, KeyError, RecursionError):
            return None  # missing, half-written by hand, or not ours: nothing to say

    def _write(self, holder: Holder) -> None:
        # Written whole and renamed into place: a reader sees the old note or the new one.
        temporary = self.note_path.with_name(f".{self.note_path.name}.tmp")
        temporary.write_text(json.dumps(asdict(holder), indent=1), encoding="utf-8")
        os.replace(temporary, self.note_path)

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
