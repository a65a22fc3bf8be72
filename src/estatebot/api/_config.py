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
from estatebot.api import _hints, _settings
from estatebot.api._base import Call, Credential, Operation
from estatebot.api._hints import API_KEY, SESSION_KEY, Asked, KeySetting
from estatebot.api._keys import read_key

DEFAULT_BASE_URL = "https://usapi.hottask.com"
ENV_BASE_URL = _hints.ENV_BASE_URL
ENV_API_KEY = API_KEY.env
ENV_SESSION_KEY = SESSION_KEY.env
USER_AGENT = "estatebot-python"


#: The largest reply body read, once decoded (a gzip bomb is stopped when it passes this).
DEFAULT_MAX_REPLY_BYTES = 64 * 2**20
#: The longest one attempt may take, from sending to the last byte of the reply.
DEFAULT_DEADLINE = 120.0
#: The longest a streamed answer may take as a whole: a server trickling a byte a second would
#: otherwise hold a stream for ever (each byte resets the wait for the next one).
DEFAULT_STREAM_DEADLINE = 600.0

# The header each key travels in.
_HEADERS = {API_KEY: "Authorization", SESSION_KEY: "chatrobot-sessionkey"}


@dataclass(frozen=True)
class ClientConfig:
    """A client's settings: from arguments, else from the environment, else defaults."""

    base_url: str
    api_key: SecretStr | None = field(default=None, repr=False)
    session_key: SecretStr | None = field(default=None, repr=False)
    timeout: float | httpx.Timeout | None = 30.0
    deadline: float | None = DEFAULT_DEADLINE
    stream_deadline: float | None = DEFAULT_STREAM_DEADLINE
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES
    #: True when neither base_url= nor ESTATEBOT_BASE_URL gave the address (a failure to reach
    #: it then says the default was used).
    default_base_url: bool = False

    @classmethod
    def from_args(
        cls,
        *,
        base_url: str | None,
        api_key: str | SecretStr | None,
        session_key: str | SecretStr | None,
        timeout: float | httpx.Timeout | None,
        deadline: float | None = DEFAULT_DEADLINE,
        stream_deadline: float | None = DEFAULT_STREAM_DEADLINE,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> ClientConfig:
        """Resolve each setting: the argument, else its environment variable, else a default.

        A key is trimmed of the whitespace around it; one a header cannot carry, a base URL that
        is not http(s), or a limit that is not a positive, finite number (NaN, infinite or
        negative) raises :class:`~errors.ConfigurationError` naming the argument or variable.
        """
        configured = base_url or os.environ.get(ENV_BASE_URL)
        url = (configured or DEFAULT_BASE_URL).rstrip("/")
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
            timeout=_settings.timeout(timeout),
            deadline=_settings.seconds(deadline, "deadline"),
            stream_deadline=_settings.seconds(stream_deadline, "stream_deadline"),
            max_reply_bytes=_settings.byte_count(max_reply_bytes, "max_reply_bytes"),
            default_base_url=not configured,
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
        sent = self._keys_sent(operation)
        if not sent:
            missing = _hints.missing_keys(_keys_taken(operation))
            raise errors.ConfigurationError(f"{operation.name}: {missing}")
        for key, value in sent.items():
            headers[_HEADERS[key]] = value.get_secret_value()
        return headers

    def _keys_sent(self, operation: Operation) -> dict[KeySetting, SecretStr]:
        held = {API_KEY: self.api_key, SESSION_KEY: self.session_key}
        return {key: value for key in _keys_taken(operation) if (value := held[key])}

    def asked(self, call: Call[Any]) -> Asked:
        """What ``call`` asks, for the hints of its errors: the chatbot it names, the keys it
        carries and those it takes but the client lacks, and where it goes."""
        sent = tuple(self._keys_sent(call.operation))
        unset = tuple(key for key in _keys_taken(call.operation) if key not in sent)
        return Asked(call.serial, sent, unset, self.base_url, self.default_base_url)

    def request_args(self, call: Call[Any], *, stream: bool = False) -> dict[str, Any]:
        """Keyword arguments of ``httpx.Client.build_request`` for ``call``; an impossible
        ``timeout=`` on the call is refused here, before anything is sent."""
        body = call.body
        if stream and body is not None:
            body = {**body, "stream": True}
        timeout = _settings.timeout(call.timeout) if call.timeout is not None else self.timeout
        return {
            "method": call.operation.method,
            "url": self.base_url + call.operation.path,
            "headers": self.headers_for(call.operation),
            "json": body,
            "timeout": timeout,
        }


def _keys_taken(operation: Operation) -> tuple[KeySetting, ...]:
    """The keys ``operation`` is authorized by, in the order they are named."""
    if operation.credential is Credential.API_KEY:
        return (API_KEY,)
    if operation.credential is Credential.SESSION_KEY:
        return (SESSION_KEY,)
    return (API_KEY, SESSION_KEY)
