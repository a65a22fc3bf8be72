"""The chat panel: :class:`ChatPanel` and the turn data it shows, importable from here.

:mod:`.widget` holds the widget, made of a :mod:`.jobs` runner (its background work), the controls
:mod:`.layout` builds and a :mod:`.transcript`; :mod:`.status` holds the rules that keep its status
current, :mod:`.arrival` how long a click waited for a busy kernel; the other modules render and
coalesce its turns.
"""

from __future__ import annotations

from estatebot.chat.panel.layout import ASK_TYPES as ASK_TYPES
from estatebot.chat.panel.widget import HISTORY_COLUMNS, ChatPanel, Turn

__all__ = ["HISTORY_COLUMNS", "ChatPanel", "Turn"]
