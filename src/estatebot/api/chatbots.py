"""Chatbot settings: ``client.chatbots.edit`` and ``client.chatbots.models``."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from estatebot.api._base import (
    EDIT,
    MODEL_LIST,
    AsyncResource,
    Call,
    SyncResource,
    TimeoutArg,
    parse_int,
    validate,
)
from estatebot.api.models import AIModel, ChatbotSettings, to_wire

_MODEL_LIST: TypeAdapter[list[AIModel]] = TypeAdapter(list[AIModel])


def edit_call(serial: str, settings: dict[str, Any], timeout: TimeoutArg) -> Call[int]:
    """The Edit call; unknown setting names are reported by the model (it forbids extras)."""
    body = validate(EDIT, ChatbotSettings, {"serialNumber": serial, **settings})
    return Call(EDIT, to_wire(body), parse_int, timeout)


def models_call(timeout: TimeoutArg) -> Call[list[AIModel]]:
    """The ModelList call (a GET without a body)."""
    return Call(MODEL_LIST, None, _MODEL_LIST.validate_python, timeout)


class Chatbots(SyncResource):
    """Chatbot settings and the AI models they can use."""

    def edit(self, serial: str, *, timeout: TimeoutArg = None, **settings: Any) -> int:
        """Change settings of chatbot ``serial`` (``Name=``, ``Temperature=``, ... as in
        :class:`~estatebot.api.models.ChatbotSettings`); omitted ones stay. Returns 1."""
        return self._client._request(edit_call(serial, settings, timeout))

    def models(self, *, timeout: TimeoutArg = None) -> list[AIModel]:
        """The AI models on offer; ``Model=`` of :meth:`edit` takes an entry's ``key``."""
        return self._client._request(models_call(timeout))


class AsyncChatbots(AsyncResource):
    """Chatbot settings and the AI models they can use (async)."""

    async def edit(self, serial: str, *, timeout: TimeoutArg = None, **settings: Any) -> int:  # noqa: ASYNC109
        """Change settings of chatbot ``serial``; see :meth:`Chatbots.edit`."""
        return await self._client._request(edit_call(serial, settings, timeout))

    async def models(self, *, timeout: TimeoutArg = None) -> list[AIModel]:  # noqa: ASYNC109
        """The AI models on offer; see :meth:`Chatbots.models`."""
        return await self._client._request(models_call(timeout))
