"""The chatbot operations: Edit, ModelList and GetSession.

Decisions where the contract is silent (beyond the addendum):

* Edit: a setting sent as ``null`` is left unchanged, like an omitted one; ``Model`` must be a
  ``Key`` of ModelList (enabled or not).
* ModelList answers GET (with or without a body) and POST.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from estatebot.api.models import ChatbotSettings, SessionRequest

from ..binding import Problem
from .base import RouteBase

#: The ModelList reply (the addendum's four models); Edit's ``Model`` takes a ``Key``.
AI_MODELS: tuple[dict[str, Any], ...] = (
    {"Key": "2", "Value": "gpt-4o", "Status": True},
    {"Key": "3", "Value": "gpt-4o-mini", "Status": True},
    {"Key": "22", "Value": "claude-3.5-sonnet", "Status": False},
    {"Key": "23", "Value": "claude-3.5-haiku", "Status": False},
)


def _check_model_key(bound: dict[str, Any]) -> list[Problem]:
    value = bound.get("Model")
    keys = [str(m["Key"]) for m in AI_MODELS]
    if isinstance(value, str) and value not in keys:
        return [("Model", f"must be a Key from ModelList ({', '.join(keys)})", value)]
    return []


class ChatbotRoutes(RouteBase):
    """Edit, ModelList and GetSession."""

    async def edit(self, request: Request, workspace: int) -> int:
        """Edit: change only the settings sent; Data = 1."""
        body = await self._body(request, ChatbotSettings, _check_model_key)
        self._chatbot(body.serial_number, workspace)
        changes = body.model_dump(mode="json", exclude_none=True, exclude={"serial_number"})
        self.store.update_settings(body.serial_number, changes)
        return 1

    async def model_list(self, request: Request, workspace: int) -> list[dict[str, Any]]:
        """ModelList: the available AI models (any body is ignored)."""
        return [dict(m) for m in AI_MODELS]

    async def get_session(self, request: Request, workspace: int) -> dict[str, int]:
        """GetSession: open a chat session; Data = {"SessionID": n}."""
        body = await self._body(request, SessionRequest)
        self._chatbot(body.serial_number, workspace)
        return {"SessionID": self.store.create_session(body.serial_number, self.clock())}
