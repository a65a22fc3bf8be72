"""What an apply journal holds, and reading it back: its header, each operation's events folded
into an :class:`OpRecord`, a torn last line skipped (see
:mod:`~estatebot.listings.sync.apply.journal`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from estatebot.errors import PlanError
from estatebot.listings.sync.plan.json_file import check_depth

MAGIC = "estatebot-apply"
VERSION = 1

Event = Literal["started", "done", "failed"]
EVENTS: tuple[str, ...] = ("started", "done", "failed")


def op_id(action: str, key: str) -> str:
    """The stable identity of an operation in a journal: ``"<action>:<key>"``."""
    return f"{action}:{key}"


def now_iso() -> str:
    """The current time, UTC, ISO 8601 with the offset."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class JournalHeader:
    """The first line of a journal: which plan and chatbot it belongs to."""

    fingerprint: str
    serial: str
    created: str
    plan: str | None = None
    service: str | None = None


@dataclass
class OpRecord:
    """What a journal says about one operation: its last event and what came with it."""

    op: str
    last: Event
    attempts: int = 0
    code: int | None = None
    message: str = ""
    id: int | None = None
    events: list[Event] = field(default_factory=list)

    @property
    def done(self) -> bool:
        """The service confirmed this operation."""
        return self.last == "done"

    @property
    def unconfirmed(self) -> bool:
        """Started and never answered: the request may or may not have reached the service."""
        return self.last == "started"

    @property
    def maybe_applied(self) -> bool:
        """The operation may have reached the service without us hearing that it did."""
        if self.unconfirmed:
            return True
        if self.last != "failed":
            return False
        # A rejection (4xx) is definite; a 5xx, a throttle or a transport error may hide a write.
        return self.code is None or self.code >= 500 or self.code in (408, 429)


@dataclass
class JournalContents:
    """A journal as read back: its header (None if the file was empty) and its events."""

    header: JournalHeader | None
    events: list[dict[str, Any]]
    torn: bool = False
    unterminated: bool = False

    def records(self) -> dict[str, OpRecord]:
        """Each operation's state, folded from its events in file order."""
        out: dict[str, OpRecord] = {}
        for event in self.events:
            name = event["op"]
            kind: Event = event["event"]
            record = out.get(name)
            if record is None:
                record = out[name] = OpRecord(op=name, last=kind)
            record.events.append(kind)
            # Once done, a later stray event (there should be none) must not undo it.
            if record.last == "done" and kind != "done":
                continue
            record.last = kind
            if kind == "started":
                record.attempts = max(record.attempts, int(event.get("attempts") or 0))
            else:
                record.code = event.get("code")
                record.message = str(event.get("message") or "")
                if event.get("id") is not None:
                    record.id = int(event["id"])
        return out


def _parse_line(line: str) -> dict[str, Any] | None:
    if check_depth(line) is not None:
        return None  # nested past any journal record: damage, never parsed (no RecursionError)
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def read_journal(path: str | Path) -> JournalContents:
    """Read a journal; a torn (incomplete) last line is skipped and reported as ``torn``.

    A malformed line anywhere else means the file is not a journal, or was damaged:
    :class:`PlanError` naming the line.
    """
    target = Path(path)
    if not target.exists():
        return JournalContents(header=None, events=[])
    data = target.read_bytes()
    lines = data.split(b"\n")
    # A file that ends without a newline was cut in the middle of its last write.
    torn = bool(lines) and lines[-1] != b""
    unterminated = False
    complete, tail = lines[:-1], lines[-1]
    if torn and _parse_line(tail.decode("utf-8", errors="replace")) is not None:
        # The whole object made it to disk, only the newline did not: keep it.
        complete, torn, unterminated = [*complete, tail], False, True
    header: JournalHeader | None = None
    events: list[dict[str, Any]] = []
    for number, raw in enumerate(complete, start=1):
        text = raw.decode("utf-8", errors="replace").strip()
        if not text:
            continue
        item = _parse_line(text)
        if item is None:
            raise PlanError(
                f"{target.name} is not a readable apply journal: line {number} is not JSON",
                row=number,
            )
        if header is None:
            if item.get("journal") != MAGIC:
                raise PlanError(
                    f"{target.name} is not an apply journal (its first line has no "
                    f"'journal': {MAGIC!r} header)",
                    row=number,
                )
            header = JournalHeader(
                fingerprint=str(item.get("fingerprint")),
                serial=str(item.get("serial")),
                created=str(item.get("created")),
                plan=None if item.get("plan") is None else str(item.get("plan")),
                service=None if item.get("service") is None else str(item.get("service")),
            )
            continue
        if item.get("event") not in EVENTS or not isinstance(item.get("op"), str):
            raise PlanError(
                f"{target.name}: line {number} is not a journal event", row=number, value=text
            )
        events.append(item)
    return JournalContents(header=header, events=events, torn=torn, unterminated=unterminated)
