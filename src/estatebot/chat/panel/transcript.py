"""The chat panel's transcript: its turns, one HTML view each, and the rows of buttons (Retry)
under some of them, arranged newest first in the transcript's box."""

from __future__ import annotations

import threading
from typing import Any

from estatebot.chat.panel.layout import actions_row, turn_view
from estatebot.chat.panel.render import turn_html
from estatebot.chat.panel.turns import Turn

__all__ = ["Transcript"]


class Transcript:
    """The turns of a chat panel and their views, oldest first, and the row of buttons under
    some turns, shown in ``box``.

    Args:
        box: the transcript's ``widgets.VBox``, a ``column-reverse`` box (see
            :func:`~estatebot.chat.panel.layout.build_controls`), so its children go newest
            first.
        lock: the panel's lock: it guards the turns, the views and the rows, so that the panel
            can change them together with its own state in one step.
    """

    def __init__(self, box: Any, lock: threading.RLock) -> None:
        self.box = box
        self._lock = lock
        self._turns: list[Turn] = []
        self._views: list[Any] = []
        self._rows: dict[int, Any] = {}  # turn number -> the row of buttons under it

    @property
    def turns(self) -> list[Turn]:
        """The turns, oldest first."""
        with self._lock:
            return list(self._turns)

    @property
    def views(self) -> list[Any]:
        """The turns' ``widgets.HTML``, oldest first."""
        with self._lock:
            return list(self._views)

    @property
    def html(self) -> str:
        """The transcript as HTML, oldest turn first."""
        with self._lock:
            return "\n".join(str(view.value) for view in self._views)

    def row(self, turn: Turn) -> Any | None:
        """The row of buttons under ``turn`` (None when it has none)."""
        with self._lock:
            return self._rows.get(turn.turn)

    def add(self, turn: Turn) -> tuple[Turn, Any]:
        """Number ``turn``, show it in a new view at the end, and return both."""
        view = turn_view()
        with self._lock:
            turn.turn = len(self._turns) + 1
            view.value = turn_html(turn)
            self._turns.append(turn)
            self._views.append(view)
        self._arrange()
        return turn, view

    def set_actions(self, turn: Turn, buttons: list[Any]) -> None:
        """Show ``buttons`` in a row under ``turn``, in place of the row it had (none: no row)."""
        with self._lock:
            if not 0 < turn.turn <= len(self._views):
                return  # cleared meanwhile
            old = self._rows.pop(turn.turn, None)
            if buttons:
                self._rows[turn.turn] = actions_row(buttons)
        if old is None and not buttons:
            return
        self._arrange()
        if old is not None:
            for child in old.children:
                child.close()
            old.close()

    def empty(self) -> list[Any]:
        """Forget every turn, view and row; returns the widgets dropped (views, then rows) for
        the caller to empty the box and close them once it lets go of the lock."""
        with self._lock:
            dropped = [*self._views, *self._rows.values()]
            self._turns = []
            self._views = []
            self._rows = {}
        return dropped

    def _arrange(self) -> None:
        # Newest first (the box is column-reverse); a turn's row comes just before its view in
        # this order, so it shows just under it.
        with self._lock:
            children: list[Any] = []
            for number, view in reversed(list(enumerate(self._views, start=1))):
                if number in self._rows:
                    children.append(self._rows[number])
                children.append(view)
        self.box.children = tuple(children)
