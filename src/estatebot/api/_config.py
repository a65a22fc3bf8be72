"""A client's settings and the headers each operation sends.

:class:`ClientConfig` resolves the base URL, the keys (:mod:`._keys` checks them), the timeout and
the limits on a reply from arguments or the environment, and builds the request of a
:class:`~estatebot.api._base.Call`, with the key its operation is authorized by.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import SecretStr

from estatebot import errors
from estatebot.api._base import Call, Credential, Operation
from estatebot.api._keys import read_key

DEFAULT_BASE_URL = "https://usapi.hottask.com"
ENV_BASE_URL = "ESTATEBOT_BASE_URL"
ENV_API_KEY = "ESTATEBOT_API_KEY"
ENV_SESSION_KEY = "ESTATEBOT_SESSION_KEY"
USER_AGENT = "estatebot-python"


#: The largest reply body read, once decoded (a gzip bomb is stopped when it passes this).
DEFAULT_MAX_REPLY_BYTES = 64 * 2**20
#: The longest one attempt may take, from sending to the last byte of the reply.
DEFAULT_DEADLINE = 120.0


def _seconds(value: float | None, argument: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise errors.ConfigurationError(
            f"{argument} must be a number of seconds above 0, or None for no limit; got {value!r}"
        )
    return float(value)


def _byte_count(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise errors.ConfigurationError(
            f"max_reply_bytes must be a whole number of bytes above 0; got {value!r}"
        )
    return value


@dataclass(frozen=True)
class ClientConfig:
    """A client's settings: from arguments, else from the environment, else defaults."""

    base_url: str
    api_key: SecretStr | None = field(default=None, repr=False)
    session_key: SecretStr | None = field(default=None, repr=False)
    timeout: float | httpx.Timeout = 30.0
    deadline: float | None = DEFAULT_DEADLINE
    stream_deadline: float | None = None
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES

    @classmethod
    def from_args(
        cls,
        *,
        base_url: str | None,
        api_key: str | SecretStr | None,
        session_key: str | SecretStr | None,
        timeout: float | httpx.Timeout,
        deadline: float | None = DEFAULT_DEADLINE,
        stream_deadline: float | None = None,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> ClientConfig:
        """Resolve each setting: the argument, else its environment variable, else a default.

        A key is trimmed of the whitespace around it; one a header cannot carry, a base URL that
        is not http(s), or a limit that is not a positive number raises
        :class:`~errors.ConfigurationError` naming the argument or variable.
        """
        url = (base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL).rstrip("/")
        parsed = httpx.URL(url)
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise errors.ConfigurationError(
                f"base URL {url!r} is not an http(s) URL: pass base_url= or set {ENV_BASE_URL}"
            )
        return cls(
            base_url=url,
            api_key=read_key(api_key, label="API key", argument="api_key", env=ENV_API_KEY),
            session_key=read_key(
                session_key, label="session key", argument="session_key", env=ENV_SESSION_KEY
            ),
            timeout=timeout,
            deadline=_seconds(deadline, "deadline"),
            stream_deadline=_seconds(stream_deadline, "stream_deadline"),
            max_reply_bytes=_byte_count(max_reply_bytes),
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
