"""The panel's ties to its client: whether it was closed, a new one like it, the chatbot's name.

* :func:`client_closed`: a client closed by ``close()`` (or its ``with`` block, or a notebook's
  clean-up cell) can send nothing more; the panel says so and offers Reconnect.
* :func:`reopen`: a new client with the closed one's settings. The keys are handed over as the
  ``SecretStr`` they are held in, never as text, so nothing on the way can show them.
* :func:`chatbot_name`: the chatbot's ``Name`` for the panel's title, found once. The contract
  documents no operation that reads a chatbot's settings, so the name is the one this client
  set with ``client.chatbots.edit(serial, Name=...)`` (it remembers it); else, when the client
  offers a read (``client.chatbots.get(serial)`` returning the settings), that is asked; else
  the title falls back to the chatbot ID.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from estatebot.api.client import AsyncClient, Client
from estatebot.errors import EstatebotError

__all__ = ["blocking_twin", "chatbot_name", "client_closed", "reopen"]


def client_closed(client: Client | AsyncClient) -> bool:
    """Whether ``client``'s connection pool was closed (it can send nothing more)."""
    http = getattr(client, "_http", None)
    return bool(getattr(http, "is_closed", False))


def reopen(client: Client | AsyncClient) -> Client | AsyncClient:
    """A new client of the same kind and settings as ``client`` (address, keys, timeouts,
    retries, limits), with its own connection pool."""
    return type(client).like(client)


def blocking_twin(client: Client | AsyncClient) -> Client:
    """A blocking client with ``client``'s settings (for work done off the event loop, such as
    pulling the listings answers are fact-checked against); ``client`` itself when it blocks."""
    return client if isinstance(client, Client) else Client.like(client)


def _name_of(record: Any) -> str | None:
    name = record.get("Name") if isinstance(record, Mapping) else getattr(record, "name", None)
    if name is None and not isinstance(record, Mapping):
        name = getattr(record, "Name", None)
    return name.strip() or None if isinstance(name, str) else None


def chatbot_name(client: Client | AsyncClient, serial: str) -> str | None:
    """The chatbot's ``Name``: the one this client set, else asked of the service once.

    None when nothing tells: the client set no name and has no operation that reads one (an
    AsyncClient is not waited on here), the chatbot has no name, or the request failed (the
    title then shows the ID; the failure shows at the first question)."""
    known = client.chatbots.known_name(serial)
    if known is not None:
        return known
    if isinstance(client, AsyncClient):
        return None
    lookup = getattr(client.chatbots, "get", None)
    if not callable(lookup):
        return None
    try:
        return _name_of(lookup(serial))
    except (EstatebotError, RuntimeError):
        return None
