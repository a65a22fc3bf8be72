"""Running the ``estatebot`` command as a person or a job would: a child process.

:func:`run_cli` runs ``python -m estatebot.cli`` (the entry point of the ``estatebot`` console
script) in the current folder, with the emulator's address and keys in its environment,
progress bars off, colour off and a fixed width, so its output is stable; and returns what it
printed and its exit code.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

WIDTH = "100"


@dataclass(frozen=True)
class Done:
    """A finished command: exit code, standard output, standard error."""

    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        """Everything it printed, output then errors."""
        return self.out + self.err


def cli_env(server: Any | None = None, **extra: str) -> dict[str, str]:
    """The environment of a command run against ``server`` (an emulator), with ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "CI", "TERM")}
    env.update(ESTATEBOT_PROGRESS="0", NO_COLOR="1", COLUMNS=WIDTH, PYTHONUNBUFFERED="1")
    if server is not None:
        env.update(
            ESTATEBOT_BASE_URL=server.base_url,
            ESTATEBOT_API_KEY=server.api_key,
            ESTATEBOT_SESSION_KEY=server.session_key,
            ESTATEBOT_SERIAL=server.serial,
        )
    env.update(extra)
    return env


def command(*args: str) -> list[str]:
    """The argument list that runs ``estatebot ARGS``."""
    return [sys.executable, "-m", "estatebot.cli", *args]


def run_cli(
    server: Any | None,
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 180,
) -> Done:
    """Run ``estatebot ARGS`` to its end; standard input is empty (not a terminal) by default."""
    done = subprocess.run(
        command(*args),
        env=dict(env) if env is not None else cli_env(server),
        input=stdin or "",
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Done(done.returncode, done.stdout, done.stderr)


def start_cli(server: Any, *args: str) -> subprocess.Popen[str]:
    """Start ``estatebot ARGS`` against ``server`` without waiting for it (to interrupt or kill
    it, or to run two at once); its input is empty, its output captured."""
    return subprocess.Popen(
        command(*args),
        env=cli_env(server),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@contextmanager
def serving(*args: str) -> Iterator[str]:
    """``estatebot serve ARGS`` running for the block; yields what it printed up to the demo
    chatbot's serial (its address and the demo keys), and stops it at the end."""
    child = subprocess.Popen(
        command("serve", *args),
        env=cli_env(None),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert child.stdout is not None
        seen = ""
        while "demo chatbot serial" not in seen:
            line = child.stdout.readline()
            assert line, f"serve ended early: {seen}"
            seen += line
        yield seen
    finally:
        child.terminate()
        child.wait(timeout=10)
