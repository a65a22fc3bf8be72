"""Keeping credentials out of log records and messages.

Two layers, because either alone can miss something:

* the values of the ``Authorization`` and ``chatrobot-sessionkey`` headers are masked wherever a
  header name is followed by its value (``name: value``, ``name=value``, ``(b'name', b'value')``);
* every secret a client was given is registered here and masked wherever it appears, whatever
  the text around it (a server message quoting the key, an exception repr, a URL).

:func:`install` puts one :class:`RedactingFilter` on the ``httpx``, ``httpcore`` and ``estatebot``
loggers and on their existing children: a logger's filters only see records logged on that very
logger, not those propagated from its children, so each child needs the filter too.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Final

MASK: Final = "[redacted]"
SECRET_HEADERS: Final = ("authorization", "chatrobot-sessionkey")
_LOGGER_ROOTS: Final = ("httpx", "httpcore", "estatebot")
# Children that exist in the libraries but may not have been created yet at install time.
_KNOWN_CHILDREN: Final = (
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
    "httpcore.socks",
    "estatebot.api",
)

# A header name, its separator (quotes, colon, equals sign, comma) and then its value.
_HEADER_VALUE = re.compile(
    r"(?P<name>" + "|".join(SECRET_HEADERS) + r")(?P<sep>['\"]?\s*[:=,]\s*b?['\"]?)"
    r"(?P<value>[^'\"\s,)}\]]+)",
    re.IGNORECASE,
)

_lock = threading.Lock()
_secrets: set[str] = set()


def register_secret(value: str | None) -> None:
    """Mask this value from now on in every filtered log record and in :func:`redact`."""
    if value:
        with _lock:
            _secrets.add(value)


def redact(text: str) -> str:
    """The text with secret header values and every registered secret masked."""
    text = _HEADER_VALUE.sub(lambda m: f"{m['name']}{m['sep']}{MASK}", text)
    with _lock:
        # Longest first, so a secret that contains another is masked whole.
        secrets = sorted(_secrets, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


class RedactingFilter(logging.Filter):
    """A logging filter that rewrites each record's message with :func:`redact`.

    It never drops a record. The message is formatted once here and the arguments cleared, so
    handlers further down see only the redacted text.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a broken format string: leave it to the handler
            return True
        cleaned = redact(message)
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        return True


_FILTER: Final = RedactingFilter()


def install() -> None:
    """Put the redacting filter on the httpx, httpcore and estatebot loggers (idempotent)."""
    names = set(_LOGGER_ROOTS) | set(_KNOWN_CHILDREN)
    names.update(
        name
        for name in list(logging.root.manager.loggerDict)
        if name.split(".")[0] in _LOGGER_ROOTS
    )
    for name in names:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
