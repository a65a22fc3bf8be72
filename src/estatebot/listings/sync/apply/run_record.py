"""What a run did, read back for its undo: its plan, its journal and its backup.

:func:`read_run` reads a run folder (``plan.json``, ``journal.jsonl``, ``backup.json`` or
``.xlsx``, as the command line keeps them) or a plan with its journal, into a :class:`RunRecord`;
:func:`~estatebot.listings.sync.apply.undo.plan_undo` plans its reverse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from estatebot.errors import PlanError
from estatebot.listings import schema
from estatebot.listings.sync.apply.backup import read_backup, read_backup_raw
from estatebot.listings.sync.apply.journal_records import (
    JournalHeader,
    OpRecord,
    op_id,
    read_journal,
)
from estatebot.listings.sync.apply.restore import check_restore_defaults
from estatebot.listings.sync.apply.send_tasks import plan_hash, tasks_from_plan
from estatebot.listings.sync.plan.artifact import PlanArtifact
from estatebot.listings.sync.plan.operations import (
    PlannedOp,
)

if TYPE_CHECKING:
    pass

__all__ = ["RunRecord", "check_undo_defaults", "read_run"]

#: The files of a run folder (see :mod:`estatebot.cli.runs`).
PLAN_FILE, JOURNAL_FILE, BACKUP_FILES = "plan.json", "journal.jsonl", ("backup.json", "backup.xlsx")


# --------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class RunRecord:
    """What a run left: its plan, what its journal says of each operation, and its backup."""

    #: How the run is named in messages: "the run in estatebot-runs/sync-...".
    name: str
    plan: PlanArtifact
    records: Mapping[str, OpRecord]
    header: JournalHeader | None
    #: The before-image of what it updated or deleted (empty without a backup), and the List
    #: records kept beside it, row for row.
    backup: pd.DataFrame = field(default_factory=schema.empty_frame)
    raws: Sequence[Mapping[str, Any] | None] = ()

    def record(self, op: PlannedOp) -> OpRecord | None:
        """The journal's record of ``op``, when the run did or may have done it (else None)."""
        found = self.records.get(op_id(op.action, str(op.key)))
        return found if found is not None and (found.done or found.maybe_applied) else None


def read_run(
    run: str | PathLike[str] | PlanArtifact,
    *,
    journal: str | PathLike[str] | None = None,
    backup: str | PathLike[str] | None = None,
) -> RunRecord:
    """The plan, journal and backup of a run: a run folder (``plan.json``, ``journal.jsonl``,
    ``backup.json``), or a plan (a saved file or a plan object) with its ``journal`` and
    ``backup``. Raises PlanError when the journal is missing or belongs to another plan."""
    folder: Path | None = None
    if isinstance(run, PlanArtifact):
        plan, name = run, "the run of the plan given"
    else:
        path = Path(run)
        if path.is_dir():
            folder = path
            if not (path / PLAN_FILE).is_file():
                raise PlanError(
                    f"{path} is not a run folder: it holds no {PLAN_FILE} (sync, cleanup and "
                    "apply keep each run's plan, journal and backup in a folder of their own)",
                    value=str(path),
                )
            plan = PlanArtifact.load(path / PLAN_FILE)
        elif path.is_file():
            plan = PlanArtifact.load(path)
        else:
            raise PlanError(
                f"no run at {path}: neither a run folder nor a saved plan", value=str(path)
            )
        name = f"the run in {path}"
    where = Path(journal) if journal is not None else folder / JOURNAL_FILE if folder else None
    if where is None:
        raise PlanError("undo needs the run's journal, which says what it did: pass journal=")
    if not where.is_file():
        raise PlanError(
            f"no journal at {where}: the run sent nothing, so there is nothing to undo",
            value=str(where),
        )
    contents = read_journal(where)
    _check_journal(where, contents.header, plan)
    found = Path(backup) if backup is not None else _backup_in(folder)
    if found is None:
        return RunRecord(name, plan, contents.records(), contents.header)
    frame = read_backup(found).reset_index(drop=True)
    return RunRecord(name, plan, contents.records(), contents.header, frame, read_backup_raw(found))


def _backup_in(folder: Path | None) -> Path | None:
    if folder is None:
        return None
    return next((folder / n for n in BACKUP_FILES if (folder / n).is_file()), None)


def _check_journal(path: Path, header: JournalHeader | None, plan: PlanArtifact) -> None:
    # A journal speaks for one plan: read against another, it would undo what never happened.
    if header is None:
        return
    same = header.fingerprint == plan.fingerprint and (
        header.plan is None or header.plan == plan_hash(tasks_from_plan(plan))
    )
    if not same:
        raise PlanError(
            f"the journal {path} belongs to another plan: undo a run with its own plan and journal",
            value=str(path),
        )


def check_undo_defaults(defaults: Mapping[str, str] | None) -> dict[str, str]:
    """The defaults an undo takes (as a restore: ``AreaUnit``, ``Location``), checked."""
    return check_restore_defaults(defaults, what="undo")
