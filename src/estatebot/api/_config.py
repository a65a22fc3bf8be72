"""A client's settings and the headers each operation sends.

:class:`ClientConfig` resolves the base URL, the keys and the timeout from arguments or the
environment, and builds the request of a :class:`~estatebot.api._base.Call`, with the key its
operation is authorized by.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import SecretStr

from estatebot.api import errors
from estatebot.api._base import Call, Credential, Operation
from estatebot.api._redact import register_secret

DEFAULT_BASE_URL = "https://usapi.hottask.com"
ENV_BASE_URL = "ESTATEBOT_BASE_URL"
ENV_API_KEY = "ESTATEBOT_API_KEY"
ENV_SESSION_KEY = "ESTATEBOT_SESSION_KEY"
USER_AGENT = "estatebot-python"


def _secret(value: str | SecretStr | None, env: str) -> SecretStr | None:
    raw = value.get_secret_value() if isinstance(value, SecretStr) else value
    raw = raw if raw is not None else os.environ.get(env)
    if not raw:
        return None
    register_secret(raw)
    return SecretStr(raw)


@dataclass(frozen=True)
class ClientConfig:
    """A client's settings: from arguments, else from the environment, else defaults."""

    base_url: str
    api_key: SecretStr | None = field(default=None, repr=False)
    session_key: SecretStr | None = field(default=None, repr=False)
    timeout: float | httpx.Timeout = 30.0

    @classmethod
    def from_args(
        cls,
        *,
        base_url: str | None,
        api_key: str | SecretStr | None,
        session_key: str | SecretStr | None,
        timeout: float | httpx.Timeout,
    ) -> ClientConfig:
        """Resolve each setting: the argument, else its environment variable, else a default."""
        url = (base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")
        parsed = httpx.URL(url)
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise errors.ConfigurationError(
                f"base URL {url!r} is not an http(s) URL: pass base_url= or set {ENV_BASE_URL}"
            )
        return cls(
            base_url=url,
            api_key=_secret(api_key, ENV_API_KEY),
            session_key=_secret(session_key, ENV_SESSION_KEY),
            timeout=timeout,
        )

    def describe(self, class_name: str) -> str:
        """The repr of a client: its base URL and which keys are set, never a key."""
        api = "set" if self.api_key else "not set"
        session = "set" if self.session_key else "not set"
        return f"{class_name}(base_url={self.base_url!r}, api_key={api}, session_key={session})"

    def headers_for(self, operation: Operation) -> dict[str, str]:
        """The headers of one operation; :class:`~errors.ConfigurationError` if its key is missing.

        Update, Delete and Create take either key and get every key that is set, as the
        contract's header list and its examples disagree on which one they need.
        """
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if operation.method != "GET":
            headers["Content-Type"] = "application/json"
        wants_api = operation.credential in (Credential.API_KEY, Credential.EITHER)
        wants_session = operation.credential in (Credential.SESSION_KEY, Credential.EITHER)
        if wants_api and self.api_key:
            headers["Authorization"] = self.api_key.get_secret_value()
        if wants_session and self.session_key:
            headers["chatrobot-sessionkey"] = self.session_key.get_secret_value()
        if "Authorization" not in headers and "chatrobot-sessionkey" not in headers:
            raise errors.ConfigurationError(_missing_key_message(operation))
        return headers

    def request_args(self, call: Call[Any], *, stream: bool = False) -> dict[str, Any]:
        """Keyword arguments of ``httpx.Client.build_request`` for ``call``."""
        body = call.body
        if stream and body is not None:
            body = {**body, "stream": True}
        return {
            "method": call.operation.method,
            "url": self.base_url + call.operation.path,
            "headers": self.headers_for(call.operation),
            "json": body,
            "timeout": call.timeout if call.timeout is not None else self.timeout,
        }


def _missing_key_message(operation: Operation) -> str:
    api = f"pass api_key= or set {ENV_API_KEY}"
    session = f"pass session_key= or set {ENV_SESSION_KEY}"
    if operation.credential is Credential.API_KEY:
        return f"{operation.name} needs the API key: {api}"
    if operation.credential is Credential.SESSION_KEY:
        return f"{operation.name} needs the session key: {session}"
    return f"{operation.name} needs the API key or the session key: {api}, or {session}"
