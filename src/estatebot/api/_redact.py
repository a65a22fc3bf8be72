"""Keeping credentials out of log records and messages.

Two layers, because either alone can miss something:

* the values of the ``Authorization`` and ``chatrobot-sessionkey`` headers are masked wherever a
  header name is followed by its value (``name: value``, ``name=value``, ``(b'name', b'value')``);
* every secret a client was given is registered here and masked wherever it appears as a whole
  token (a server message quoting the key, an exception repr, a URL, a header dump), in its own
  spelling and in the escaped forms it takes in a ``repr``, a bytes ``repr``, a JSON string or a
  percent-encoded URL. A whole token only: a short key such as ``ab`` must not blank out the
  letters of every word holding them ("about", "cab"), so a match that runs on into a letter,
  digit, ``_`` or ``-`` is not the key and is left alone.

:func:`install` puts one :class:`RedactingFilter` on the ``httpx``, ``httpcore`` and ``estatebot``
loggers and on their existing children: a logger's filters only see records logged on that very
logger, not those propagated from its children, so each child needs the filter too.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import Final
from urllib.parse import quote, quote_plus

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

# A header name, its separator and then its value: ``name: value``, ``name=value``, a quoted
# ``'name': 'value'`` and the tuples of a raw header list, ``(b'name', b'value')`` (a comma only
# between quotes, so prose such as "Authorization, Content-Type" is left as it is). A scheme
# word before the value (``Bearer``) is kept and the value after it masked.
_HEADER_VALUE = re.compile(
    r"(?P<name>" + "|".join(SECRET_HEADERS) + r")"
    r"(?P<sep>['\"]?\s*[:=]\s*(?:b?['\"])?|['\"]\s*,\s*b?['\"])"
    r"(?P<scheme>(?:Bearer|Basic|Token)\s+)?"
    r"(?!" + re.escape(MASK) + r")(?P<value>[^'\"\s,)}\]]+)",
    re.IGNORECASE,
)

# What a secret must not run on into, on either side, to be a whole token.
_TOKEN_CHAR = r"[\w-]"
# Before a secret, an escape sequence ends a token even though it ends in a letter or digit:
# ``\nKEY`` in a repr, ``%3DKEY`` in a URL, ``\u0022KEY`` in JSON.
_ESCAPE_BEFORE = (
    r"(?<=\\[abfnrtv0])|(?<=\\x[0-9A-Fa-f]{2})|(?<=\\u[0-9A-Fa-f]{4})|(?<=%[0-9A-Fa-f]{2})"
)

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None  # every spelling of every secret, rebuilt on a change


def spellings(secret: str) -> set[str]:
    """The forms ``secret`` takes in text: itself, the inside of its ``repr`` and of its bytes'
    ``repr``, JSON-escaped (``/`` as ``\\/`` too), and percent-encoded."""
    forms = {
        secret,
        repr(secret)[1:-1],
        repr(secret.encode("utf-8"))[2:-1],
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json.dumps(secret)[1:-1].replace("/", "\\/"),
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
    }
    return {form for form in forms if form}


def _whole_token(form: str) -> str:
    # A boundary is asked for only on a side where the form itself starts or ends a token:
    # a form starting with a quote or a backslash cannot run on from the text before it.
    text = re.escape(form)
    if re.match(_TOKEN_CHAR, form[0]):
        text = rf"(?:(?<!{_TOKEN_CHAR})|{_ESCAPE_BEFORE}){text}"
    if re.match(_TOKEN_CHAR, form[-1]):
        text = rf"{text}(?!{_TOKEN_CHAR})"
    return text


def _compiled() -> re.Pattern[str] | None:
    global _pattern
    with _lock:
        if _pattern is None and _secrets:
            forms = {form for secret in _secrets for form in spellings(secret)}
            # Longest first, so a secret that contains another is masked whole.
            ordered = sorted(forms, key=lambda form: (-len(form), form))
            _pattern = re.compile("|".join(_whole_token(form) for form in ordered))
        return _pattern


def register_secret(value: str | None) -> None:
    """Mask this value from now on in every filtered log record and in :func:`redact`."""
    global _pattern
    if value:
        with _lock:
            if value not in _secrets:
                _secrets.add(value)
                _pattern = None


def redact(text: str) -> str:
    """The text with every registered secret and secret header values masked."""
    # Registered secrets first: the header pattern stops a value at a quote, which a key may
    # hold, and would leave the rest of it unmasked and no longer whole.
    pattern = _compiled()
    if pattern is not None:
        text = pattern.sub(MASK, text)
    return _HEADER_VALUE.sub(lambda m: f"{m['name']}{m['sep']}{m['scheme'] or ''}{MASK}", text)


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
