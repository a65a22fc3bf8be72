"""The chat panel: :class:`ChatPanel` and the turn data it shows, importable from here.

:mod:`estatebot.chat.panel.widget` holds the widget and :mod:`estatebot.chat.panel.jobs` its
background work.
"""

from __future__ import annotations

from estatebot.chat.panel.widget import ASK_TYPES as ASK_TYPES
from estatebot.chat.panel.widget import HISTORY_COLUMNS, ChatPanel, Turn

__all__ = ["HISTORY_COLUMNS", "ChatPanel", "Turn"]
