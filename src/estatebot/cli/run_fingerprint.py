"""The fingerprint of a command: what shaped its plan, kept in ``run.json`` so that only the same
command resumes the run.

An interrupted ``sync`` resumes its saved plan, not the sheet as it is now; an interrupted
``cleanup --status Sold`` resumes its deletes of the Sold listings. That is right only when the
command run again asks for the same thing. The fingerprint is a table of what shaped the plan,
by the name a person knows it by: the sheet's content digest (``sheet``), and each flag that
changes what is planned (``--key``, ``--mapping`` and its file's digest, ``--default``,
``--delete-missing``, ``--status``, ...). Flags of how a plan is shown or sent (``--detail``,
``--concurrency``, ``--force``) and ``--engine`` (both engines read the same cells) are not part
of it: they change nothing that was planned.

:func:`differences` says, in words, what a new command asks differently from the one that made
the run: ``the sheet changed since the interrupted run``, ``--status was Sold, now Active``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from estatebot.cli.flags.shared_options import parse_pairs
from estatebot.cli.runs import file_digest

if TYPE_CHECKING:
    from estatebot.cli.flags.plan_options import GuardFlags, SyncFlags
    from estatebot.cli.flags.sheet_options import SheetFlags

__all__ = [
    "Fingerprint",
    "cleanup_fingerprint",
    "differences",
    "sync_fingerprint",
    "undo_fingerprint",
]

#: What shaped a plan, by name (a flag, or ``sheet``), each as text.
Fingerprint = dict[str, str]

#: The entry of the sheet's content: its SHA-256.
SHEET = "sheet"
#: The suffix of the entry holding the content digest of a flag's file (``--mapping content``).
CONTENT = " content"
NOT_GIVEN = "not given"
GIVEN = "given"


def _flag(value: object) -> str:
    """A flag's value as the fingerprint keeps it (None: not given)."""
    if value is None:
        return NOT_GIVEN
    if isinstance(value, bool):
        return GIVEN if value else NOT_GIVEN
    return str(getattr(value, "value", value))


def _pairs(pairs: Sequence[str] | None, option: str) -> str:
    """``FIELD=VALUE`` flags in a stable order: the order they were given in changes nothing."""
    parsed = parse_pairs(list(pairs or ()), option)
    return ", ".join(f"{field}={value}" for field, value in sorted(parsed.items())) or NOT_GIVEN


def _file(into: Fingerprint, option: str, path: Path | None) -> None:
    """A flag naming a file: its name, and the digest of what it holds."""
    into[option] = _flag(path.resolve() if path is not None else None)
    if path is not None:
        into[option + CONTENT] = file_digest(path)


def _guards(into: Fingerprint, guards: GuardFlags) -> None:
    into["--max-delete-fraction"] = _flag(guards.max_delete_fraction)
    into["--force-delete-count"] = _flag(guards.force_delete_count)


def sync_fingerprint(
    sheet: Path, planning: SyncFlags, guards: GuardFlags, flags: SheetFlags
) -> Fingerprint:
    """What shapes the plan of ``estatebot sync SHEET``: the sheet's content and every flag of
    reading and planning (the run's ``sheet`` is its path already)."""
    made: Fingerprint = {SHEET: file_digest(sheet)}
    made["--sheet"] = _flag(flags.sheet_name)
    _file(made, "--mapping", flags.mapping)
    _file(made, "--statuses", flags.statuses)
    made["--default"] = _pairs(flags.default, "--default")
    made["--set"] = _pairs(flags.overrides, "--set")
    made["--lot-unit"] = _flag(flags.lot_unit)
    made["--pending-status"] = _flag(flags.pending_status)
    made["--clear-token"] = _flag(flags.clear_token)
    made["--no-extensions"] = _flag(flags.no_extensions)
    made["--decimal-baths"] = _flag(flags.decimal_baths)
    made["--encoding"] = _flag(flags.encoding)
    made["--key"] = _flag(planning.key)
    made["--delete-missing"] = _flag(planning.delete_missing)
    made["--no-create"] = _flag(planning.no_create)
    made["--accept-flagged"] = _flag(planning.accept_flagged)
    made["--allow-incomplete"] = _flag(planning.allow_incomplete)
    _guards(made, guards)
    return made


def cleanup_fingerprint(
    status: Sequence[str] | None, min_days_on_market: int | None, key: object, guards: GuardFlags
) -> Fingerprint:
    """What shapes the plan of ``estatebot cleanup``: its rule and its key."""
    made: Fingerprint = {
        "--status": ", ".join(sorted(set(status or ()))) or NOT_GIVEN,
        "--min-days-on-market": _flag(min_days_on_market),
        "--key": _flag(key),
    }
    _guards(made, guards)
    return made


def undo_fingerprint(defaults: Sequence[str] | None) -> Fingerprint:
    """What shapes the plan of ``estatebot undo`` besides the run it undoes: ``--default``."""
    return {"--default": _pairs(defaults, "--default")}


def differences(old: Mapping[str, str] | None, new: Mapping[str, str]) -> list[str]:
    """What ``new`` asks differently from ``old``, in words; empty when they are the same.

    ``old`` None (a run made before fingerprints were kept) is one difference: nobody can say
    whether the commands agree.
    """
    if old is None:
        return ["the interrupted run kept no record of the command that made it"]
    said: list[str] = []
    for name in [*new, *(n for n in old if n not in new)]:
        before, now = old.get(name, NOT_GIVEN), new.get(name, NOT_GIVEN)
        if before == now:
            continue
        if name == SHEET:
            said.append("the sheet changed since the interrupted run")
        elif name.endswith(CONTENT):
            option = name.removesuffix(CONTENT)
            if old.get(option) == new.get(option):  # a new name is said once, by the flag
                said.append(f"the file of {option} changed since the interrupted run")
        else:
            said.append(f"{name} was {before}, now {now}")
    return said
