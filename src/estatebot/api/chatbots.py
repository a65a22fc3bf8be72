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
    return Call(EDIT, to_wire(body), parse_int, timeout, serial=serial)


def models_call(timeout: TimeoutArg) -> Call[list[AIModel]]:
    """The ModelList call (a GET without a body)."""
    return Call(MODEL_LIST, None, _MODEL_LIST.validate_python, timeout)


class _KnownNames:
    """The ``Name`` this client last set on each chatbot.

    The contract has no operation that reads a chatbot's settings back, so a chatbot's name is
    known only where it was set: a name accepted by Edit is kept (per client, in memory) for
    views that would rather show it than the serial (the chat panel's title).
    """

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    def known_name(self, serial: str) -> str | None:
        """The ``Name`` this client last set on chatbot ``serial`` with ``edit``, else None."""
        return self._names.get(serial)

    def _remember(self, serial: str, settings: dict[str, Any]) -> None:
        for field, value in settings.items():
            if field.lower() == "name" and isinstance(value, str) and value.strip():
                self._names[serial] = value.strip()


class Chatbots(SyncResource, _KnownNames):
    """Chatbot settings and the AI models they can use."""

    def __init__(self, client: Any) -> None:
        SyncResource.__init__(self, client)
        _KnownNames.__init__(self)

    def edit(self, serial: str, *, timeout: TimeoutArg = None, **settings: Any) -> int:
        """Change settings of chatbot ``serial`` (``Name=``, ``Temperature=``, ... as in
        :class:`~estatebot.api.models.ChatbotSettings`); omitted ones stay. Returns 1.

        A ``Name`` the service accepts is remembered: :meth:`known_name` gives it back."""
        result = self._client._request(edit_call(serial, settings, timeout))
        self._remember(serial, settings)
        return result

    def models(self, *, timeout: TimeoutArg = None) -> list[AIModel]:
        """The AI models on offer; ``Model=`` of :meth:`edit` takes an entry's ``key``."""
        return self._client._request(models_call(timeout))


class AsyncChatbots(AsyncResource, _KnownNames):
    """Chatbot settings and the AI models they can use (async)."""

    def __init__(self, client: Any) -> None:
        AsyncResource.__init__(self, client)
        _KnownNames.__init__(self)

    async def edit(self, serial: str, *, timeout: TimeoutArg = None, **settings: Any) -> int:  # noqa: ASYNC109
        """Change settings of chatbot ``serial``; see :meth:`Chatbots.edit`."""
        result = await self._client._request(edit_call(serial, settings, timeout))
        self._remember(serial, settings)
        return result

    async def models(self, *, timeout: TimeoutArg = None) -> list[AIModel]:  # noqa: ASYNC109
        """The AI models on offer; see :meth:`Chatbots.models`."""
        return await self._client._request(models_call(timeout))
