"""One chatbot of a fleet manifest: :class:`ChatbotEntry`, what it syncs from and how.

An entry holds the NAMES of the environment variables that carry its workspace's address and
keys, never a key: a manifest is a file analysts share and review, and an entry travels to
worker processes (it pickles). :meth:`ChatbotEntry.client_settings` reads the variables when a
client is made, where the process runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from estatebot.errors import ConfigurationError
from estatebot.fleet.row_filter import RowFilter

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_BASE_URL_ENV",
    "DEFAULT_SESSION_KEY_ENV",
    "ChatbotEntry",
    "FrozenFields",
]

#: The variables a client reads by default: an entry that names none uses them.
DEFAULT_BASE_URL_ENV = "ESTATEBOT_BASE_URL"
DEFAULT_API_KEY_ENV = "ESTATEBOT_API_KEY"
DEFAULT_SESSION_KEY_ENV = "ESTATEBOT_SESSION_KEY"


class FrozenFields(Mapping[str, str]):
    """A read-only mapping of listing field to default value, which pickles and hashes.

    ``types.MappingProxyType`` would be read-only too, but cannot be pickled, and an entry
    must reach worker processes.
    """

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, str] | None = None) -> None:
        self._items: dict[str, str] = dict(items or {})

    def __getitem__(self, key: str) -> str:
        return self._items[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self._items) == dict(other)

    def __repr__(self) -> str:
        return repr(self._items)

    def __reduce__(self) -> tuple[type[FrozenFields], tuple[dict[str, str]]]:
        return (type(self), (dict(self._items),))


@dataclass(frozen=True)
class ChatbotEntry:
    """One valid row of a fleet manifest: a chatbot, its sheet and how to sync it.

    Attributes:
        row: The row number in the manifest spreadsheet, or the chatbot's position (1-based)
            in a TOML manifest.
        serial: The chatbot's serial number.
        name: Its label in reports (the serial when the manifest gives none).
        sheet: The listings sheet, as an absolute path.
        where: The filter picking this chatbot's rows of a shared sheet, or None for all.
        key: The matching field: ``"MLSNumber"`` or ``"Url"`` (what `read_sheet` and
            `plan_sync` take as `key=`).
        delete_missing: Whether listings absent from the sheet are deleted.
        defaults: Values for fields the sheet leaves blank (`read_sheet`'s `defaults=`).
        base_url_env: The environment variable holding the service's address.
        api_key_env: The environment variable holding the API key.
        session_key_env: The environment variable holding the session key.
        tests: A chat test cases file for `fleet test-chat`, as an absolute path, or None.
        origin: Where the entry was read, for messages: ``"fleet.csv row 3"``.
    """

    row: int
    serial: str
    name: str
    sheet: Path
    where: RowFilter | None = None
    key: str = "MLSNumber"
    delete_missing: bool = False
    defaults: Mapping[str, str] = field(default_factory=FrozenFields)
    base_url_env: str = DEFAULT_BASE_URL_ENV
    api_key_env: str = DEFAULT_API_KEY_ENV
    session_key_env: str = DEFAULT_SESSION_KEY_ENV
    tests: Path | None = None
    origin: str = ""

    def __post_init__(self) -> None:
        # A caller's dict would stay changeable through the entry: hold a frozen copy.
        if not isinstance(self.defaults, FrozenFields):
            object.__setattr__(self, "defaults", FrozenFields(self.defaults))

    @property
    def label(self) -> str:
        """How reports name the chatbot: its name, else its serial."""
        return self.name or self.serial

    @property
    def heading(self) -> str:
        """The chatbot's name with its serial and manifest row, for the heading of its details."""
        where = self.origin or f"row {self.row}"
        if self.name and self.name != self.serial:
            return f"{self.name} (serial {self.serial}, {where})"
        return f"{self.serial} ({where})"

    def client_settings(self) -> dict[str, Any]:
        """The address and keys of this chatbot's workspace, read from the environment now.

        Returns:
            ``{"base_url": str, "api_key": SecretStr, "session_key": SecretStr}``, to pass as
                ``estatebot.Client(**entry.client_settings())``.

        Raises:
            ConfigurationError: When a variable is unset or blank, naming it and the manifest
                row (never a value).
        """
        values: dict[str, str] = {}
        for setting, variable in (
            ("base_url", self.base_url_env),
            ("api_key", self.api_key_env),
            ("session_key", self.session_key_env),
        ):
            value = os.environ.get(variable, "").strip()
            if not value:
                where = self.origin or f"row {self.row}"
                raise ConfigurationError(
                    f"environment variable {variable} is not set: chatbot {self.label!r} "
                    f"({where} of the fleet manifest) reads its {setting.replace('_', ' ')} "
                    f"from it; set it, or name another variable in the manifest's "
                    f"{setting}_env column"
                )
            values[setting] = value
        return {
            "base_url": values["base_url"],
            "api_key": SecretStr(values["api_key"]),
            "session_key": SecretStr(values["session_key"]),
        }
