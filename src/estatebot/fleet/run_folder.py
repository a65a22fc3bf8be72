"""A fleet run's folder: one ``fleet.json`` and a folder per chatbot.

``estatebot-runs/fleet-sync-20261126-101500/`` holds:

* ``fleet.json``: the kind of run, the manifest and its digest, a random token (which every
  worker reads back before the first write, proving it sees this folder), the status
  (``planned``, ``applying``, ``applied``, ``declined``) and each chatbot's folder;
* ``plan.xlsx``: the fleet's table as planned;
* ``NNN-SERIAL/`` per chatbot (NNN its place in the manifest): ``plan.json`` (sealed),
  ``journal.jsonl``, ``backup.json``, ``report.xlsx`` and, once its apply has
  ended, ``applied.json``;
* ``fleet.xlsx``: the fleet's table, one row per chatbot, when the run ends.

A run still ``applying`` was interrupted; resumed, each chatbot with no ``applied.json`` goes on
with its own journal, so nothing is sent twice. ``fleet.json`` is written by the process that
drives the run only, each time whole (a temporary file renamed over it).
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from estatebot.errors import FleetRunError

__all__ = ["FLEET_FILE", "FleetRun", "FleetRunError", "find_unfinished_fleet", "latest_fleet"]

FLEET_FILE = "fleet.json"

Status = Literal["planned", "applying", "applied", "declined", "abandoned"]


@dataclass
class FleetRun:
    """A fleet run's folder and its record."""

    folder: Path
    kind: str
    manifest: str
    manifest_digest: str
    token: str
    status: Status = "planned"
    started: str = ""
    #: Each chatbot's folder name, by its place in the manifest (as text, for JSON).
    chatbots: dict[str, str] = field(default_factory=dict)
    #: What shaped the plans beside the manifest (flags), for matching a resume.
    fingerprint: dict[str, Any] = field(default_factory=dict)
    #: ``undo``: the fleet run this one undoes.
    undoes: str | None = None

    @property
    def record_path(self) -> Path:
        """The run's ``fleet.json``."""
        return self.folder / FLEET_FILE

    def chatbot_folder(self, place: int, serial: str) -> Path:
        """The folder of the chatbot at ``place`` (made when missing, and recorded)."""
        name = f"{place:03d}-{serial}"
        self.chatbots[str(place)] = name
        path = self.folder / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def folder_of(self, place: int) -> Path | None:
        """The recorded folder of the chatbot at ``place``, if it has one."""
        name = self.chatbots.get(str(place))
        return self.folder / name if name else None

    def mark(self, status: Status) -> None:
        """Record ``status`` in ``fleet.json``."""
        self.status = status
        self.write()

    def write(self) -> None:
        """Write ``fleet.json`` whole (a temporary file renamed over it)."""
        record = {
            "kind": self.kind,
            "manifest": self.manifest,
            "manifest_digest": self.manifest_digest,
            "token": self.token,
            "status": self.status,
            "started": self.started,
            "chatbots": self.chatbots,
            "fingerprint": self.fingerprint,
            "undoes": self.undoes,
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = self.folder / f".{FLEET_FILE}.{os.getpid()}"
        temporary.write_text(json.dumps(record, indent=2, default=str), encoding="utf-8")
        temporary.replace(self.record_path)

    @classmethod
    def new(
        cls,
        runs_dir: str | os.PathLike[str],
        kind: str,
        manifest: Path,
        manifest_digest: str,
        *,
        fingerprint: dict[str, Any] | None = None,
        undoes: Path | None = None,
    ) -> FleetRun:
        """A new run folder under ``runs_dir``, named by kind and start time (never reused)."""
        now = datetime.now(UTC)
        base = Path(runs_dir) / f"fleet-{kind}-{now:%Y%m%d-%H%M%S}"
        folder, number = base, 1
        while folder.exists():
            number += 1
            folder = base.with_name(f"{base.name}-{number}")
        run = cls(
            folder=folder.resolve(),
            kind=kind,
            manifest=str(manifest),
            manifest_digest=manifest_digest,
            token=secrets.token_hex(16),
            started=now.isoformat(timespec="seconds"),
            fingerprint=dict(fingerprint or {}),
            undoes=str(undoes) if undoes is not None else None,
        )
        run.write()
        return run

    @classmethod
    def open(cls, folder: str | os.PathLike[str]) -> FleetRun:
        """The fleet run in ``folder``; a folder that is no fleet run raises `FleetRunError`."""
        path = Path(folder).resolve()
        try:
            data = json.loads((path / FLEET_FILE).read_text(encoding="utf-8"))
            return cls(
                folder=path,
                kind=str(data["kind"]),
                manifest=str(data["manifest"]),
                manifest_digest=str(data["manifest_digest"]),
                token=str(data["token"]),
                status=data["status"],
                started=str(data.get("started", "")),
                chatbots={str(k): str(v) for k, v in dict(data.get("chatbots", {})).items()},
                fingerprint=dict(data.get("fingerprint") or {}),
                undoes=data.get("undoes"),
            )
        except FileNotFoundError:
            raise FleetRunError(f"{path} is not a fleet run: it has no {FLEET_FILE}") from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise FleetRunError(
                f"the fleet run's record {path / FLEET_FILE} cannot be read ({error}); "
                "remove the folder or set it aside to plan afresh"
            ) from None


def _fleet_runs(runs_dir: Path) -> list[FleetRun]:
    found: list[FleetRun] = []
    if not runs_dir.is_dir():
        return found
    for record in sorted(runs_dir.glob(f"fleet-*/{FLEET_FILE}")):
        try:
            found.append(FleetRun.open(record.parent))
        except FleetRunError:
            continue  # a damaged record is named when that folder is asked for by name
    return sorted(found, key=lambda run: (run.started, run.folder.name))


def find_unfinished_fleet(
    runs_dir: str | os.PathLike[str], kind: str, manifest_digest: str
) -> FleetRun | None:
    """The latest fleet run of ``kind`` for this manifest (by content) left ``applying``."""
    runs = [
        run
        for run in _fleet_runs(Path(runs_dir))
        if run.kind == kind and run.status == "applying" and run.manifest_digest == manifest_digest
    ]
    return runs[-1] if runs else None


def latest_fleet(runs_dir: str | os.PathLike[str], kinds: tuple[str, ...]) -> FleetRun | None:
    """The latest fleet run of one of ``kinds`` that applied something, for ``fleet undo``."""
    runs = [
        run
        for run in _fleet_runs(Path(runs_dir))
        if run.kind in kinds and run.status in ("applying", "applied")
    ]
    return runs[-1] if runs else None
