"""When a click in the browser reached the kernel: how long its message waited behind a cell.

A widget's click (Send, Enter in the input) travels to the kernel as a comm message on the shell
channel. A cell that blocks the kernel (``time.sleep``, a long synchronous call) holds every such
message until it ends, so the panel cannot react to the click before then. What it can do is
say, once the message gets through, that it waited: the front end stamps each message's header
with the time it was sent (``date``), and the kernel's current parent message, while a widget's
handler runs, is that very message.

The wait is measured between the browser's clock and the kernel's; on one machine they agree.
A negative wait (clocks apart) counts as none.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = ["message_wait_s", "waited_s"]


def waited_s(sent: datetime | str | None, now: datetime) -> float | None:
    """Seconds from ``sent`` (a message header's ``date``: a datetime or ISO 8601 text, UTC when
    it names no zone) to ``now`` (aware); None when ``sent`` is missing or unreadable."""
    if isinstance(sent, str):
        try:
            sent = datetime.fromisoformat(sent)
        except ValueError:
            return None
    if not isinstance(sent, datetime):
        return None
    if sent.tzinfo is None:
        sent = sent.replace(tzinfo=UTC)
    return max(0.0, (now - sent).total_seconds())


def _current_message() -> Mapping[str, Any] | None:
    # IPython comes with ipywidgets; outside a kernel (a script, a test) there is no message.
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipywidgets requires IPython
        return None
    kernel = getattr(get_ipython(), "kernel", None)
    get_parent = getattr(kernel, "get_parent", None)
    if not callable(get_parent):
        return None
    try:
        parent = get_parent("shell")
    except Exception:  # an unknown kernel's API: no wait is known, the click still works
        return None
    return parent if isinstance(parent, Mapping) else None


def message_wait_s(now: datetime | None = None) -> float | None:
    """How long the widget message the kernel is handling now waited since the browser sent it,
    in seconds; None outside a kernel, when its header has no time, or when the kernel is
    running a cell rather than a widget's message (a click made from code)."""
    message = _current_message()
    header = message.get("header") if message is not None else None
    if not isinstance(header, Mapping) or header.get("msg_type") != "comm_msg":
        return None
    return waited_s(header.get("date"), now or datetime.now(UTC))
