"""A run folder read back whole before a command goes on with it, or one line naming the file.

A run that is resumed (``sync``, ``cleanup``, ``undo`` run again, ``apply`` of its plan) or
undone is read from its folder: ``plan.json``, ``journal.jsonl`` and ``backup.json``. Each
way one can be damaged (missing, cut short, not JSON, nested too deep, another file put in its
place, a journal of another plan) is found here, before anything is sent, and reported as a
:class:`~estatebot.cli.runs.DamagedRunError`: the file, what is wrong with it, and the ways on
the caller gives (``--no-resume``, removing the folder). Never a bare ``[Errno 2]``, a JSON
message without a file name, or a ``RecursionError``.

A journal's last line cut short by a kill is no damage (the apply skips it and writes on); a
line anywhere else that is not a journal event is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from estatebot.cli.runs import DamagedRunError, Run

# The listings package is imported inside the functions: the command line starts without it.

if TYPE_CHECKING:
    from estatebot.listings.sync.sync_plan import SyncPlan

__all__ = ["check_backup", "check_journal", "check_plan", "check_run"]

#: A journal line is one flat object; anything nested deeper is not one of ours.
_LINE_DEPTH = 4


def check_run(run: Run, ways: str) -> SyncPlan:
    """The plan of ``run``, its journal and backup checked; DamagedRunError naming the first
    file that cannot be read (``ways``: what the person can do then)."""
    plan = check_plan(run.plan_path, ways)
    check_journal(run.journal_path, ways, plan=plan, serial=run.serial)
    check_backup(run.backup_path, ways)
    return plan


def check_plan(path: Path, ways: str) -> SyncPlan:
    """The plan saved in ``path``; DamagedRunError when the file holds none."""
    from estatebot.listings.sync.plan.json_file import JsonFileError
    from estatebot.listings.sync.sync_plan import SyncPlan

    try:
        return SyncPlan.load(path)
    except JsonFileError as error:
        raise DamagedRunError(path, error.problem, ways) from None


def check_journal(
    path: Path, ways: str, *, plan: SyncPlan | None = None, serial: str | None = None
) -> None:
    """Check the journal at ``path`` (none at all is no damage: nothing was sent), and that it
    is the journal of ``plan`` on chatbot ``serial`` when they are given."""
    from estatebot.listings.sync.apply.journal_records import EVENTS, MAGIC

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as error:
        raise DamagedRunError(path, f"cannot be read ({error.strerror})", ways) from None
    lines = data.split(b"\n")
    header: dict[str, Any] | None = None
    for number, raw in enumerate(lines, start=1):
        last = number == len(lines)
        text = raw.decode("utf-8", errors="replace").strip()
        if not text:
            continue
        item = _line(text)
        if isinstance(item, str):
            if last:
                break  # cut short by a kill in the middle of its write: skipped, then cut off
            raise DamagedRunError(path, f"line {number} {item}", ways)
        if header is None:
            if item.get("journal") != MAGIC:
                raise DamagedRunError(path, f"line {number} is not a journal's header", ways)
            header = item
        elif item.get("event") not in EVENTS or not isinstance(item.get("op"), str):
            raise DamagedRunError(path, f"line {number} is not a journal event", ways)
    if header is not None and plan is not None:
        _check_header(path, header, plan, serial, ways)


def _line(text: str) -> dict[str, Any] | str:
    """One journal line as an object, or what it is instead (nesting checked first)."""
    from estatebot.listings.sync.plan.json_file import check_depth

    if check_depth(text, _LINE_DEPTH) is not None:
        return f"nests arrays or objects more than {_LINE_DEPTH} levels deep"
    try:
        item = json.loads(text)
    except ValueError:
        return "is not JSON"
    return item if isinstance(item, dict) else "is not a JSON object"


def _check_header(
    path: Path, header: dict[str, Any], plan: SyncPlan, serial: str | None, ways: str
) -> None:
    from estatebot.listings.sync.apply.send_tasks import plan_hash, tasks_from_plan

    if serial is not None and header.get("serial") != serial:
        raise DamagedRunError(path, f"it is the journal of chatbot {header.get('serial')}", ways)
    written = header.get("plan")
    if header.get("fingerprint") != plan.fingerprint or (
        written is not None and written != plan_hash(tasks_from_plan(plan))
    ):
        raise DamagedRunError(path, "it is the journal of another plan than plan.json", ways)


def check_backup(path: Path, ways: str) -> None:
    """Check the backup at ``path`` (none at all is no damage: nothing was backed up yet)."""
    from estatebot.listings.sync.apply.backup import FORMAT
    from estatebot.listings.sync.plan.json_file import MAX_DEPTH, JsonFileError, read_json_file

    if not path.exists():
        return
    try:
        document = read_json_file(path, limit=MAX_DEPTH)
    except JsonFileError as error:
        raise DamagedRunError(path, error.problem, ways) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise DamagedRunError(path, "not an estatebot backup", ways)
    if not isinstance(document.get("listings"), list):
        raise DamagedRunError(path, "a backup without its list of listings", ways)
