"""The API and session keys: read, trimmed and checked once, when a client is made.

A key read from a file or a CRLF ``.env`` often ends in ``\\n``, ``\\r\\n`` or a tab, so the
whitespace around a key is dropped. What is left must be something an HTTP header can carry:
visible ASCII, with no whitespace or control character inside. A key that is not would fail
later, in httpcore or in the ASCII encoding of the headers, with an error (and a DEBUG log line)
holding the whole key. So it is refused here with a :class:`~errors.ConfigurationError` that
names the argument or the environment variable and where the bad character is, never the key.
"""

from __future__ import annotations

import os
import unicodedata

from pydantic import SecretStr

from estatebot import errors
from estatebot.api._redact import register_secret

__all__ = ["read_key"]


def _kind(char: str) -> str:
    if char in "\r\n":
        return "a line break"
    if char.isspace():
        return "a space" if char == " " else "a whitespace character"
    if unicodedata.category(char) == "Cc":
        return "a control character"
    if unicodedata.category(char) == "Cf":  # zero-width space, byte order mark, ...
        return "an invisible character"
    return "a non-ASCII character"


def _problem(key: str) -> str | None:
    """What makes ``key`` unfit for a header, without showing it; None if nothing does."""
    for position, char in enumerate(key, start=1):
        if "!" <= char <= "~":  # visible ASCII: what a header value may hold
            continue
        # The code point of a character no valid key holds tells nothing of the key itself.
        problem = f"holds {_kind(char)} (U+{ord(char):04X}) at position {position}"
        if char == " ":
            problem += " (the service takes the raw key, with no 'Bearer ' before it)"
        return problem
    return None


def read_key(
    value: str | SecretStr | None, *, label: str, argument: str, env: str
) -> SecretStr | None:
    """The ``label`` key given as ``argument`` (else read from ``env``), trimmed; None if unset.

    An empty or blank key counts as not set. A key a header cannot carry raises
    :class:`~errors.ConfigurationError`, which names where it came from but not its value.
    """
    raw: str | None
    if value is not None:
        raw = value.get_secret_value() if isinstance(value, SecretStr) else value
        source = f"passed as {argument}="
    else:
        raw = os.environ.get(env)
        source = f"read from {env}"
    if raw is None:
        return None
    key = raw.strip()
    if not key:
        return None
    problem = _problem(key)
    if problem is not None:
        raise errors.ConfigurationError(
            f"the {label} {source} {problem}: an HTTP header cannot carry it. Check that the "
            "key was copied whole, with no typographic quotes or invisible characters "
            "(the key itself is not shown)"
        )
    register_secret(key)
    return SecretStr(key)
