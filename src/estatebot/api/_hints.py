"""What an error says to do, per cause: the hints that end the client's error messages.

The client knows what it asked (:class:`Asked`: the chatbot serial it named, which keys it sent,
which it had none of, where it sent the request), so a failure can name the fix:

* an unknown chatbot: ``(no chatbot '<serial>' for this key: check serial=)``;
* a missing key: ``no API key: pass api_key= or set ESTATEBOT_API_KEY``;
* a refused key: ``the service refused the API key (HTTP 401): pass api_key= or set
  ESTATEBOT_API_KEY with a valid key``;
* a host not reached: ``cannot reach <host>:<port> (<detail>): check the base URL (...)``, or,
  when no base URL was configured, that the default was used.

The command line rewrites the ``pass X= or set VAR`` parts into its own terms, so these texts are
kept exactly. None of them ever holds a key: only which key, by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import httpx

__all__ = [
    "API_KEY",
    "SESSION_KEY",
    "Asked",
    "KeySetting",
    "credential_hint",
    "missing_key",
    "not_found_hint",
    "unreachable",
]

ENV_BASE_URL = "ESTATEBOT_BASE_URL"


@dataclass(frozen=True)
class KeySetting:
    """A key as a person sets it: what it is called, its argument and its variable."""

    label: str
    argument: str
    env: str

    @property
    def fix(self) -> str:
        """How to set it: ``pass api_key= or set ESTATEBOT_API_KEY``."""
        return f"pass {self.argument}= or set {self.env}"


API_KEY = KeySetting("API key", "api_key", "ESTATEBOT_API_KEY")
SESSION_KEY = KeySetting("session key", "session_key", "ESTATEBOT_SESSION_KEY")


@dataclass(frozen=True)
class Asked:
    """What one call asked, as far as its errors need it (never a key's value).

    ``serial`` is the chatbot the call names (None when a 404 would not mean an unknown chatbot:
    no chatbot named, or a page past the first); ``sent`` the keys the request carried;
    ``unset`` the keys the operation takes that the client has none of; ``base_url`` where it
    went, and ``default_base_url`` whether that is the default because none was configured.
    """

    serial: str | None = None
    sent: tuple[KeySetting, ...] = ()
    unset: tuple[KeySetting, ...] = ()
    base_url: str = ""
    default_base_url: bool = False


def missing_key(key: KeySetting) -> str:
    """The client has no such key: how to give it one."""
    return f"no {key.label}: {key.fix}"


def missing_keys(keys: Sequence[KeySetting]) -> str:
    """The client has none of ``keys`` (an operation that takes either): how to give one."""
    if len(keys) == 1:
        return missing_key(keys[0])
    labels = " or ".join(key.label for key in keys)
    fixes = ", or ".join(key.fix for key in keys)
    return f"no {labels}: {fixes}"


def refused_key(key: KeySetting, status: int) -> str:
    """The service refused a key the request carried."""
    return f"the service refused the {key.label} (HTTP {status}): {key.fix} with a valid key"


def credential_hint(status: int, asked: Asked) -> str:
    """What to do about a 401 or 403: each key sent was refused; a key the operation also takes
    and the client lacks may be the one wanted."""
    parts = [refused_key(key, status) for key in asked.sent]
    if asked.unset:
        parts.append(missing_keys(asked.unset))
    return "; ".join(parts)


def not_found_hint(serial: str) -> str:
    """A 404 to a call naming chatbot ``serial``: no such chatbot is visible to the key."""
    return f"(no chatbot '{serial}' for this key: check serial=)"


def _host_and_port(base_url: str) -> str:
    url = httpx.URL(base_url)
    port = url.port or (443 if url.scheme == "https" else 80)
    host = f"[{url.host}]" if ":" in url.host else url.host  # an IPv6 address
    return f"{host}:{port}"


def unreachable(asked: Asked, detail: str) -> str:
    """The host could not be reached (a name that does not resolve, a refused connection)."""
    head = f"cannot reach {_host_and_port(asked.base_url)} ({detail})"
    if asked.default_base_url:
        return (
            f"{head}: {ENV_BASE_URL} is not set, so the default {asked.base_url} was used: "
            f"pass base_url= or set {ENV_BASE_URL}"
        )
    return f"{head}: check the base URL (pass base_url= or set {ENV_BASE_URL})"
