"""Chatbot settings: `client.chatbots.edit` and `client.chatbots.models`."""

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
    """The Edit call; unknown setting names are reported by the model (it forbids extras).

    Args:
        serial: The chatbot's serial number.
        settings: The settings to change, by the names of `ChatbotSettings`.
        timeout: The call's timeout; None uses the client's.

    Returns:
        The call, ready to send; its result is the service's count (1).

    Raises:
        RequestValidationError: `serial` is empty, or a setting is unknown or breaks its rule.
    """
    body = validate(EDIT, ChatbotSettings, {"serialNumber": serial, **settings})
    return Call(EDIT, to_wire(body), parse_int, timeout, serial=serial)


def models_call(timeout: TimeoutArg) -> Call[list[AIModel]]:
    """The ModelList call (a GET without a body).

    Args:
        timeout: The call's timeout; None uses the client's.

    Returns:
        The call, ready to send; its result is the list of `AIModel`s.
    """
    return Call(MODEL_LIST, None, _MODEL_LIST.validate_python, timeout)


class _KnownNames:
    """The `Name` this client last set on each chatbot.

    The contract has no operation that reads a chatbot's settings back, so a chatbot's name is
    known only where it was set: a name accepted by Edit is kept (per client, in memory) for
    views that would rather show it than the serial (the chat panel's title).
    """

    def __init__(self) -> None:
        self._names: dict[str, str] = {}

    def known_name(self, serial: str) -> str | None:
        """The `Name` this client last set on chatbot `serial` with `edit`, else None.

        Args:
            serial: The chatbot's serial number.

        Returns:
            The name the service last accepted from this client, trimmed; None when this client
                has not set one.
        """
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
        """Change settings of chatbot `serial` (`Name=`, `Temperature=`, ... as in
        `ChatbotSettings`); omitted ones stay. Returns 1.

        A `Name` the service accepts is remembered: `known_name` gives it back.

        Args:
            serial: The chatbot's serial number.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.
            **settings: The settings to change, by the names of `ChatbotSettings` (`Name`,
                `Model`, `SystemMessage`, `Temperature`, ...); omitted ones stay.

        Returns:
            The service's answer, 1 when the settings were changed.

        Raises:
            RequestValidationError: `serial` is empty, a setting's name is not one of
                `ChatbotSettings`, or its value breaks the contract's rules (a colour not in
                `rgb(r,g,b)` form, an unknown time zone, a URL that is not http(s), an e-mail
                address that is not one, a negative rate limit); nothing was sent.
            ConfigurationError: The client has no API key, or `timeout` is not a positive,
                finite number; nothing was sent.
            NotFoundError: The service does not know chatbot `serial` (the error says to check
                the serial).
            AuthenticationError: The service refused the API key (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        result = self._client._request(edit_call(serial, settings, timeout))
        self._remember(serial, settings)
        return result

    def models(self, *, timeout: TimeoutArg = None) -> list[AIModel]:
        """The AI models on offer; `Model=` of `edit` takes an entry's `key`.

        Args:
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The models, each with its `key` (what `Model=` takes), `name` and whether it is
                `enabled`.

        Raises:
            ConfigurationError: The client has no API key, or `timeout` is not a positive,
                finite number; nothing was sent.
            AuthenticationError: The service refused the API key (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        return self._client._request(models_call(timeout))


class AsyncChatbots(AsyncResource, _KnownNames):
    """Chatbot settings and the AI models they can use (async)."""

    def __init__(self, client: Any) -> None:
        AsyncResource.__init__(self, client)
        _KnownNames.__init__(self)

    async def edit(self, serial: str, *, timeout: TimeoutArg = None, **settings: Any) -> int:  # noqa: ASYNC109
        """Change settings of chatbot `serial`; see `Chatbots.edit`.

        Args:
            serial: The chatbot's serial number.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.
            **settings: The settings to change, by the names of `ChatbotSettings`; omitted
                ones stay.

        Returns:
            The service's answer, 1 when the settings were changed.

        Raises:
            RequestValidationError: `serial` is empty, a setting's name is not one of
                `ChatbotSettings`, or its value breaks the contract's rules (a colour not in
                `rgb(r,g,b)` form, an unknown time zone, a URL that is not http(s), an e-mail
                address that is not one, a negative rate limit); nothing was sent.
            ConfigurationError: The client has no API key, or `timeout` is not a positive,
                finite number; nothing was sent.
            NotFoundError: The service does not know chatbot `serial`.
            AuthenticationError: The service refused the API key (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        result = await self._client._request(edit_call(serial, settings, timeout))
        self._remember(serial, settings)
        return result

    async def models(self, *, timeout: TimeoutArg = None) -> list[AIModel]:  # noqa: ASYNC109
        """The AI models on offer; see `Chatbots.models`.

        Args:
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The models, each with its `key` (what `Model=` takes), `name` and whether it is
                `enabled`.

        Raises:
            ConfigurationError: The client has no API key, or `timeout` is not a positive,
                finite number; nothing was sent.
            AuthenticationError: The service refused the API key (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        return await self._client._request(models_call(timeout))
