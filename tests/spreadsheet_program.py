"""A spreadsheet program in the loop: files re-saved through LibreOffice headless, as a person
saving an export in Calc (or Excel) would.

:func:`resave` opens a file in ``soffice --headless`` and saves it again as xlsx ("Calc MS Excel
2007 XML") or csv (comma, double quotes, UTF-8), into a folder of its own. Each call runs with a
profile folder of its own (``-env:UserInstallation=file:///tmp/...``), so parallel calls never
share LibreOffice's lock, and under a timeout that ends the whole process group.

Without ``soffice`` on the PATH the calling test is skipped, saying why and how to install it
(``.ci/run`` installs Debian's ``libreoffice-calc-nogui``, so in CI these tests run).
:data:`needs_soffice` marks a whole test the same way, before it starts a server.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Literal

import pytest

#: The program, when it is installed.
SOFFICE: str | None = shutil.which("soffice") or shutil.which("libreoffice")
#: Why the tests that need it are skipped without it.
MISSING = (
    "LibreOffice (soffice) is not installed: `apt-get install -y libreoffice-calc-nogui` "
    "(.ci/run installs it in CI)"
)
#: A mark for tests that re-save files through LibreOffice: skipped, with the reason, without it.
needs_soffice = pytest.mark.skipif(SOFFICE is None, reason=MISSING)

Format = Literal["xlsx", "csv"]
#: ``--convert-to`` targets: the filter names LibreOffice's own Save As dialog uses.
FILTERS: dict[str, str] = {
    "xlsx": "xlsx:Calc MS Excel 2007 XML",
    # comma, double quote, UTF-8 (76), from row 1: what Save As > Text CSV writes by default
    "csv": "csv:Text - txt - csv (StarCalc):44,34,76,1",
}


def soffice() -> str:
    """The path of ``soffice``; skips the calling test, with the reason, when it is missing."""
    if SOFFICE is None:
        pytest.skip(MISSING)
    return SOFFICE


def resave(source: Path, kind: Format, out_dir: Path, *, timeout: float = 120) -> Path:
    """``source`` opened in LibreOffice and saved as ``kind`` into ``out_dir``; returns the new
    file (``out_dir / (source.stem + "." + kind)``).

    Raises AssertionError, with what LibreOffice printed, when no file comes out or the program
    does not end within ``timeout`` seconds (its whole process group is then killed).
    """
    program = soffice()
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"{source.stem}.{kind}"
    if target.resolve() == source.resolve():
        raise ValueError(f"{source} would be overwritten: save into another folder")
    target.unlink(missing_ok=True)
    profile = Path(tempfile.mkdtemp(prefix="lo-profile-", dir="/tmp"))
    args = [
        program,
        "--headless",
        "--norestore",
        "--nolockcheck",
        f"-env:UserInstallation={profile.as_uri()}",
        "--convert-to",
        FILTERS[kind],
        "--outdir",
        str(out_dir),
        str(source),
    ]
    child = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group: a timeout ends soffice.bin too
        env={**os.environ, "HOME": str(profile)},
    )
    try:
        output, _ = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        output, _ = child.communicate()
        raise AssertionError(
            f"LibreOffice did not save {source.name} as {kind} within {timeout:g} s: {output}"
        ) from None
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    if child.returncode != 0 or not target.is_file():
        raise AssertionError(
            f"LibreOffice did not save {source.name} as {kind} (exit {child.returncode}): {output}"
        )
    return target


def resave_xlsx(source: Path, out_dir: Path, *, timeout: float = 120) -> Path:
    """``source`` re-saved by LibreOffice as xlsx (see :func:`resave`)."""
    return resave(source, "xlsx", out_dir, timeout=timeout)


def resave_csv(source: Path, out_dir: Path, *, timeout: float = 120) -> Path:
    """``source`` re-saved by LibreOffice as csv (see :func:`resave`)."""
    return resave(source, "csv", out_dir, timeout=timeout)
