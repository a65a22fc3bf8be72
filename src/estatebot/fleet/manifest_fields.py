"""The columns of a fleet manifest and the rule of each: a cell's text (or a TOML value) into
the value a :class:`~estatebot.fleet.entry.ChatbotEntry` holds, or a :class:`BadValue` saying
what is wrong with it.

Headers are matched as :func:`~estatebot.fleet.row_filter.header_key` reduces them: case,
spaces, underscores and dashes ignored, so ``Delete missing``, ``delete_missing`` and
``DELETE-MISSING`` are one column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from estatebot.fleet.entry import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_BASE_URL_ENV,
    DEFAULT_SESSION_KEY_ENV,
)
from estatebot.fleet.row_filter import FilterError, RowFilter, header_key
from estatebot.listings.sheet.fields.cell_types import value_text
from estatebot.listings.sheet.fields.validate import typed_default
from estatebot.listings.sheet.read import DEFAULTABLE

__all__ = [
    "COLUMNS",
    "ENV_COLUMNS",
    "BadValue",
    "canonical_column",
    "parse_defaults",
    "parse_env_name",
    "parse_flag",
    "parse_key",
    "parse_path",
    "parse_serial",
    "parse_where",
    "shown_value",
    "text_of",
]

#: Every manifest column, in the order reports list them.
COLUMNS: tuple[str, ...] = (
    "serial", "name", "sheet", "where", "key", "delete_missing", "defaults",
    "base_url_env", "api_key_env", "session_key_env", "tests",
)  # fmt: skip
#: The columns naming environment variables, with the variable used when a row names none.
ENV_COLUMNS: dict[str, str] = {
    "base_url_env": DEFAULT_BASE_URL_ENV,
    "api_key_env": DEFAULT_API_KEY_ENV,
    "session_key_env": DEFAULT_SESSION_KEY_ENV,
}
#: Other spellings analysts use for a column (reduced by ``header_key``).
_ALIASES = {"serialnumber": "serial", "chatbotid": "serial", "chattests": "tests"}
_BY_KEY = {header_key(c): c for c in COLUMNS} | _ALIASES

_YES = frozenset({"yes", "y", "true", "1"})
_NO = frozenset({"no", "n", "false", "0", ""})
_KEYS = {"mlsnumber": "MLSNumber", "url": "Url"}
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FIELDS_BY_KEY = {header_key(f): f for f in DEFAULTABLE}


class BadValue(ValueError):
    """A manifest value its column's rule refuses; the message says why and what to write."""


def canonical_column(header: str) -> str | None:
    """The manifest column a header names, or None for a header the manifest does not know.

    Args:
        header: The header as written.

    Returns:
        One of :data:`COLUMNS`, or None.
    """
    return _BY_KEY.get(header_key(header))


def shown_value(raw: Any) -> str | None:
    """A value as an issue shows it: a cell's text, a TOML table as ``Name=value; ...``.

    Args:
        raw: A cell's value or a TOML value.

    Returns:
        The text, or None for a blank.
    """
    if raw is None:
        return None
    if isinstance(raw, Mapping):
        return "; ".join(f"{k}={shown_value(v)}" for k, v in raw.items())
    if isinstance(raw, list):
        return ", ".join(str(shown_value(v)) for v in raw)
    return value_text(raw)


def text_of(raw: Any) -> str:
    """A value that must be text, trimmed ("" for a blank).

    Args:
        raw: The cell's value, or the TOML value (None for a blank).

    Returns:
        The text.

    Raises:
        BadValue: When a TOML value is a number, a date, a table or a list.
    """
    if raw is None:
        return ""
    if isinstance(raw, str):
        return raw.strip()
    raise BadValue("must be text: write it in quotes")


def parse_serial(raw: Any) -> str:
    """A chatbot's serial number: text, not blank, with no space inside.

    Args:
        raw: The cell's value, or the TOML value (None for a blank).

    Returns:
        The serial, trimmed.

    Raises:
        BadValue: When it is blank or holds a space (a serial never does: two pasted together?).
    """
    text = text_of(raw)
    if not text:
        raise BadValue(
            "is blank: every chatbot needs its serial number (the chatbot ID in its general "
            "settings)"
        )
    if any(c.isspace() for c in text):
        raise BadValue("holds a space, which no serial number does: give one serial per row")
    return text


def parse_path(raw: Any, folder: Path, what: str) -> Path | None:
    """A file the manifest names, relative to the manifest's folder; None for a blank.

    Args:
        raw: The value.
        folder: The manifest's folder.
        what: What the file is, for the message (``"sheet"``).

    Returns:
        The file's absolute path, or None.

    Raises:
        BadValue: When no file is there, naming the path looked for.
    """
    text = text_of(raw)
    if not text:
        return None
    path = Path(text).expanduser()
    path = (path if path.is_absolute() else folder / path).resolve()
    if not path.is_file():
        raise BadValue(
            f"names no {what} file (looked for {path}): paths are read from the manifest's folder"
        )
    return path


def parse_where(raw: Any) -> RowFilter | None:
    """A filter of a shared sheet's rows (:class:`RowFilter`); None for a blank.

    Args:
        raw: The cell's value, or the TOML value (None for a blank).

    Returns:
        The filter, or None.

    Raises:
        BadValue: When the filter cannot be read, saying where it fails.
    """
    text = text_of(raw)
    if not text:
        return None
    try:
        return RowFilter.parse(text)
    except FilterError as error:
        raise BadValue(error.reason) from None


def parse_key(raw: Any) -> str:
    """The matching field, ``"MLSNumber"`` (for a blank too) or ``"Url"``.

    Args:
        raw: The cell's value, or the TOML value (None for a blank).

    Returns:
        ``"MLSNumber"`` or ``"Url"``, as `read_sheet` and `plan_sync` take `key=`.

    Raises:
        BadValue: For anything else.
    """
    text = text_of(raw)
    if not text:
        return "MLSNumber"
    found = _KEYS.get(header_key(text))
    if found is None:
        raise BadValue("must be MLSNumber or Url")
    return found


def parse_flag(raw: Any) -> bool:
    """A yes/no value: yes, y, true, 1 or no, n, false, 0, blank (any case).

    Args:
        raw: The cell's value, or the TOML value (None for a blank).

    Returns:
        True for yes, False for no.

    Raises:
        BadValue: For anything else.
    """
    if isinstance(raw, bool):
        return raw
    text = "" if raw is None else value_text(raw).strip().casefold()
    if text in _YES:
        return True
    if text in _NO:
        return False
    raise BadValue("must be yes or no (or true/false, 1/0; blank is no)")


def parse_defaults(raw: Any) -> dict[str, str]:
    """Values for the fields a sheet leaves blank: ``CurrencySymbol=$; AreaUnit=SqFt`` (``;``
    or a line break between them), or a TOML table. Field names are matched like headers.

    Args:
        raw: The cell's value, or the TOML value (None for a blank).

    Returns:
        The values by listing field, as text (what `read_sheet(defaults=...)` takes).

    Raises:
        BadValue: For a part without ``=``, a field named twice, a field that takes no
            default (naming those that do), or a value the field refuses.
    """
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        pairs = [(str(k), shown_value(v) or "") for k, v in raw.items()]
    else:
        pairs = []
        for part in re.split(r"[;\n]", text_of(raw)):
            if not part.strip():
                continue
            name, equals, value = part.partition("=")
            if not equals or not name.strip():
                raise BadValue(f"part {part.strip()!r} is not Field=value")
            pairs.append((name.strip(), value.strip()))
    found: dict[str, str] = {}
    for name, value in pairs:
        field = _FIELDS_BY_KEY.get(header_key(name))
        if field is None:
            raise BadValue(
                f"names {name!r}, which is not a listing field that takes a default; use one "
                f"of {', '.join(DEFAULTABLE)}"
            )
        if field in found:
            raise BadValue(f"names {field} twice")
        # Status is checked by read_sheet, against the status table its options make.
        if field != "Status" and value:
            try:
                typed_default(field, value)
            except (TypeError, ValueError) as error:
                raise BadValue(f"{field} {error}") from None
        found[field] = value
    return found


def parse_env_name(raw: Any, default: str) -> str:
    """The name of an environment variable (``default`` for a blank); never its value.

    Args:
        raw: The cell's value, or the TOML value (None for a blank).
        default: The variable a client reads when the manifest names none.

    Returns:
        The variable's name.

    Raises:
        BadValue: When it is not a variable name (letters, digits and _, not starting with a
            digit): a key pasted in place of its variable's name is refused, not stored.
    """
    text = text_of(raw)
    if not text:
        return default
    if not _ENV_NAME.fullmatch(text):
        raise BadValue(
            "is not the name of an environment variable (letters, digits and _, not starting "
            "with a digit): the manifest names the variable that holds the value, never the "
            "value"
        )
    return text
