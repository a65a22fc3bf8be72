"""A fleet manifest, one row per chatbot, read and checked: :func:`read_manifest`.

Analysts write it as a spreadsheet (xlsx, xls, ods) or a delimited text file (csv, tsv, txt),
one row per chatbot, or as TOML::

    [defaults]                      # applies to every chatbot that does not set its own
    sheet = "mls_export.xlsx"
    delete_missing = true
    defaults = { CurrencySymbol = "$" }

    [[chatbot]]
    serial = "3254a9d0424c4806b9ea3d0763ccf1bf"
    name = "Agent A123"
    where = "ListAgentMlsId = A123"

A spreadsheet is read by the listings' own raw reader, so encodings, byte-order marks, hidden
sheets and the rest are handled as for a listings sheet, and a manifest row is named by the
row number the spreadsheet shows. A TOML chatbot is named by its position ("chatbot 3").

Bad rows are reported as bad sheet rows are: one issue per bad value in
:attr:`Manifest.issues` (the columns of `Sheet.issues`), the row left out of
:attr:`Manifest.entries`, never dropped silently. A manifest that cannot be used at all (no
file, an empty one, no serial column, no valid row) raises :class:`ManifestError`.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from estatebot._summary import Summary
from estatebot.errors import ManifestError, SheetError
from estatebot.fleet import manifest_fields as rules
from estatebot.fleet.entry import ChatbotEntry, FrozenFields
from estatebot.fleet.manifest_fields import COLUMNS, ENV_COLUMNS, BadValue
from estatebot.listings.sheet.fields.cell_types import value_text
from estatebot.listings.sheet.issues import issue_lines, issues_html
from estatebot.listings.sheet.readers.table import read_table
from estatebot.listings.sheet.result import ISSUE_COLUMNS

__all__ = ["ChatbotEntry", "Manifest", "ManifestError", "read_manifest"]

#: The file kinds a manifest may be, by suffix.
SPREADSHEET_SUFFIXES = (".csv", ".tsv", ".txt", ".xlsx", ".xls", ".ods")
TOML_SUFFIXES = (".toml",)
#: Keys that name one chatbot: a default for all of them makes no sense.
_OWN_KEYS = ("serial", "name")


def _refused(message: str, *, issues: pd.DataFrame | None = None, **where: Any) -> ManifestError:
    """A `ManifestError` whose `issues` is always a frame (empty when none were found)."""
    return ManifestError(
        message, issues=issues if issues is not None else _issue_frame([]), **where
    )


@dataclass(frozen=True, eq=False, repr=False)
class Manifest:
    """A read fleet manifest: its valid chatbots and every problem found.

    Attributes:
        path: The manifest file, absolute.
        entries: The valid rows, in the file's order.
        issues: One row per problem (`row`, `column`, `field`, `value`, `message`, `severity`,
            as in `Sheet.issues`): an "error" leaves its row out of `entries`, a "warning"
            (an unknown column) does not. `row` is the spreadsheet row, or the chatbot's
            position in a TOML manifest; NA for the file as a whole.
        digest: The sha256 of the file's bytes, hex: a plan made from it can tell it changed.
        rows_read: How many chatbot rows the file holds (blank rows not counted).
        unit: How a row is named: ``"row"`` (a spreadsheet) or ``"chatbot"`` (TOML).
    """

    path: Path
    entries: tuple[ChatbotEntry, ...]
    issues: pd.DataFrame
    digest: str
    rows_read: int = 0
    unit: str = "row"

    @property
    def errors(self) -> pd.DataFrame:
        """The issues that reject their row."""
        return self.issues[self.issues["severity"] == "error"]

    @property
    def warnings(self) -> pd.DataFrame:
        """The issues that keep their row."""
        return self.issues[self.issues["severity"] == "warning"]

    @property
    def invalid_rows(self) -> list[int]:
        """The rows (or TOML positions) rejected by an error, sorted."""
        return sorted(int(r) for r in self.errors["row"].dropna().unique())

    def counts(self) -> dict[str, int]:
        """Rows read, chatbots valid and rejected; warnings and errors found.

        Returns:
            The figures by name: `rows_read`, `valid`, `rejected`, `warnings`, `errors`.
        """
        return {
            "rows_read": self.rows_read,
            "valid": len(self.entries),
            "rejected": len(self.invalid_rows),
            "warnings": len(self.warnings),
            "errors": len(self.errors),
        }

    def headline(self) -> str:
        """One line: chatbots read, valid, rejected, warnings.

        Returns:
            The line, such as ``"12 chatbots read, 11 valid, 1 rejected, 0 warnings"``.
        """
        return (
            f"{self.rows_read} chatbots read, {len(self.entries)} valid, "
            f"{len(self.invalid_rows)} rejected, {len(self.warnings)} warnings"
        )

    def to_frame(self) -> pd.DataFrame:
        """The valid chatbots as a table, one row each, indexed by their manifest row.

        Environment variables appear by name; nothing here holds a key.

        Returns:
            A new DataFrame with the columns of the manifest.
        """
        records = [
            {
                "row": e.row,
                "serial": e.serial,
                "name": e.name,
                "sheet": str(e.sheet),
                "where": None if e.where is None else str(e.where),
                "key": e.key,
                "delete_missing": e.delete_missing,
                "defaults": "; ".join(f"{k}={v}" for k, v in e.defaults.items()) or None,
                "base_url_env": e.base_url_env,
                "api_key_env": e.api_key_env,
                "session_key_env": e.session_key_env,
                "tests": None if e.tests is None else str(e.tests),
            }
            for e in self.entries
        ]
        frame = pd.DataFrame.from_records(records, columns=["row", *COLUMNS])
        types = {c: "string" for c in COLUMNS if c != "delete_missing"}
        return frame.astype({**types, "delete_missing": "boolean"}).set_index("row")

    def summary(self, limit: int = 10) -> Summary:
        """The headline and the first `limit` issues, one line each; figures in `.counts`.

        Args:
            limit: How many issues to list (default 10); a last line counts the others.

        Returns:
            The lines, as a `Summary` whose figures are those of `counts`.
        """
        lines = [f"{self.path.name}: {self.headline()}"]
        lines += issue_lines(self.issues, unit=self.unit, whole="manifest", limit=limit)
        return Summary("\n".join(lines), self.counts())

    def __repr__(self) -> str:
        return f"<Manifest {self.path.name}: {self.headline()}>"

    def _repr_html_(self) -> str:
        return issues_html(self.path.name, self.headline(), self.issues)


def read_manifest(path: str | os.PathLike[str]) -> Manifest:
    """Read a fleet manifest: a spreadsheet or csv with one row per chatbot, or TOML.

    Columns (headers matched ignoring case, spaces, underscores and dashes): `serial`
    (required), `name`, `sheet` (a path from the manifest's folder), `where` (a filter of a
    shared sheet, such as `ListAgentMlsId = A123`), `key` (`MLSNumber` or `Url`),
    `delete_missing` (yes/no), `defaults` (`CurrencySymbol=$; AreaUnit=SqFt`), `base_url_env`,
    `api_key_env`, `session_key_env` (names of environment variables; by default those a
    client reads) and `tests` (a chat test cases file). An unknown column is a warning. A TOML
    manifest has `[[chatbot]]` tables with the same keys, and may give any of them but
    `serial` and `name` for all chatbots in a `[defaults]` table (or at its top level); a
    chatbot's own `defaults` table adds to the shared one field by field.

    A serial may appear twice only for different services (different `base_url_env`): else
    every row of it is rejected.

    Args:
        path: The manifest: `.csv`, `.tsv`, `.txt`, `.xlsx`, `.xls`, `.ods` or `.toml`.

    Returns:
        The `Manifest`: the valid chatbots, and every bad value by row, column and value.

    Raises:
        ManifestError: When the file is missing, of another kind, unreadable or empty, has
            no serial column or names one column twice, when a TOML `[defaults]` value is
            bad, or when no row is valid (its `issues` say why).
    """
    file = Path(path).expanduser().resolve()
    suffix = file.suffix.lower()
    if suffix not in (*SPREADSHEET_SUFFIXES, *TOML_SUFFIXES):
        kinds = ", ".join((*SPREADSHEET_SUFFIXES, *TOML_SUFFIXES))
        raise _refused(f"{file.name}: a fleet manifest is one of {kinds}", value=suffix)
    try:
        data = file.read_bytes()
    except OSError as error:
        raise _refused(f"{file}: cannot read the fleet manifest: {error.strerror}") from None
    if not data.strip():
        raise _refused(f"{file.name}: the fleet manifest is empty: write one row per chatbot")
    reader = _Reader(file)
    rows = reader.toml_rows(data) if suffix in TOML_SUFFIXES else reader.sheet_rows()
    entries = reader.entries(rows)
    issues = _issue_frame(reader.records)
    manifest = Manifest(
        path=file,
        entries=tuple(entries),
        issues=issues,
        digest=hashlib.sha256(data).hexdigest(),
        rows_read=len(rows),
        unit=reader.unit,
    )
    if not manifest.entries:
        first = manifest.summary(limit=5)
        raise _refused(
            f"{file.name}: no valid chatbot in the fleet manifest ({manifest.headline()}); "
            f"fix the rows it names:\n{first}",
            issues=issues,
        )
    return manifest


# --------------------------------------------------------------------------- rows

#: One manifest row before it is checked: its number and, by column, the label to report
#: (the header or key as written) and the raw value.
_Row = tuple[int, dict[str, tuple[str, Any]]]
#: A row that passed every rule: its number, its values by column, and its serial's header.
_Checked = tuple[int, dict[str, Any], str]


class _Reader:
    """Reads one manifest's rows, gathering the issues as records of `Sheet.issues`' columns."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.unit = "chatbot" if file.suffix.lower() in TOML_SUFFIXES else "row"
        self.records: list[dict[str, Any]] = []
        self.shared: dict[str, tuple[str, Any]] = {}

    def issue(
        self,
        row: int | None,
        column: str | None,
        field: str | None,
        value: Any,
        message: str,
        severity: str = "error",
    ) -> None:
        # A value that should name an environment variable may be a key pasted in its place.
        shown = None if field in ENV_COLUMNS else rules.shown_value(value)
        self.records.append(
            {"row": row, "column": column, "field": field, "value": shown,
             "message": message, "severity": severity}
        )  # fmt: skip

    # ------------------------------------------------------------------ spreadsheets

    def sheet_rows(self) -> list[_Row]:
        try:
            _, table = read_table(self.file, sheet_name=None)
        except SheetError as error:
            raise _refused(f"{self.file.name}: cannot read the fleet manifest: {error}") from None
        if not table.headers:
            raise _refused(
                f"{self.file.name}: the fleet manifest has no header row: its first row names "
                f"the columns ({', '.join(COLUMNS)})"
            )
        for note in table.notes:
            column = table.headers[note.position] if note.position is not None else note.column
            self.issue(note.row, column, None, note.value, note.message, note.severity)
        known = self._columns(table.headers, row=None)
        rows: list[_Row] = []
        for i, number in enumerate(table.rows):
            cells = [column[i] for column in table.columns]
            if all(c is None or (isinstance(c, str) and not c.strip()) for c in cells):
                continue
            values = {name: (table.headers[j], _cell(cells[j])) for name, j in known.items()}
            rows.append((int(number), values))
        return rows

    def _columns(self, headers: list[str], row: int | None) -> dict[str, int]:
        """The position of each known column; unknown ones warned about, doubles refused."""
        known: dict[str, int] = {}
        for j, header in enumerate(headers):
            name = rules.canonical_column(header)
            if name is None:
                self.issue(
                    row, header, None, None,
                    f"is not a column of a fleet manifest: ignored (the columns are "
                    f"{', '.join(COLUMNS)})",
                    "warning",
                )  # fmt: skip
                continue
            if name in known:
                raise _refused(
                    f"{self.file.name}: headers {headers[known[name]]!r} and {header!r} both "
                    f"name the {name} column: keep one",
                    column=header,
                )
            known[name] = j
        if row is None and "serial" not in known:
            raise _refused(
                f"{self.file.name}: the fleet manifest has no serial column (its headers: "
                f"{', '.join(headers)}): add one, with each chatbot's serial number",
            )
        return known

    # ------------------------------------------------------------------ TOML

    def toml_rows(self, data: bytes) -> list[_Row]:
        try:
            document = tomllib.loads(data.decode("utf-8-sig"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise _refused(
                f"{self.file.name}: cannot read the fleet manifest as TOML: {error}"
            ) from None
        chatbots = document.pop("chatbot", None)
        if not isinstance(chatbots, list) or not chatbots:
            raise _refused(
                f"{self.file.name}: the fleet manifest has no [[chatbot]] table: write one per "
                "chatbot, each with its serial"
            )
        shared = document.pop("defaults", {})
        if not isinstance(shared, dict):
            raise _refused(f"{self.file.name}: [defaults] must be a table", column="defaults")
        self.shared = self._shared([*document.items(), *shared.items()])
        rows: list[_Row] = []
        for position, chatbot in enumerate(chatbots, start=1):
            values: dict[str, tuple[str, Any]] = {}
            if not isinstance(chatbot, dict):
                # Only a TOML array of tables gets here as tables: `chatbot = [...]` does not.
                self.issue(position, "chatbot", None, None, "must be a [[chatbot]] table")
                values["serial"] = ("chatbot", _Twice)
            for key, value in chatbot.items():
                name = rules.canonical_column(key)
                if name is None:
                    self.issue(
                        position, key, None, None,
                        f"is not a key of a fleet manifest chatbot: ignored (the keys are "
                        f"{', '.join(COLUMNS)})",
                        "warning",
                    )  # fmt: skip
                elif name in values:
                    self.issue(position, key, name, value, f"gives {name} twice: keep one")
                    values[name] = (key, _Twice)
                else:
                    values[name] = (key, value)
            rows.append((position, values))
        return rows

    def _shared(self, given: list[tuple[str, Any]]) -> dict[str, tuple[str, Any]]:
        """The values for all chatbots (top level and [defaults]), each checked now: a bad one
        would reject every chatbot."""
        shared: dict[str, tuple[str, Any]] = {}
        for key, value in given:
            name = rules.canonical_column(key)
            if name is None:
                self.issue(
                    None, key, None, None,
                    f"is not a key of a fleet manifest: ignored (the keys are "
                    f"{', '.join(COLUMNS)})",
                    "warning",
                )  # fmt: skip
                continue
            if name in _OWN_KEYS:
                raise _refused(
                    f"{self.file.name}: {name} names one chatbot: give it in each [[chatbot]], "
                    f"not for all of them",
                    column=key,
                )
            if name in shared:
                raise _refused(
                    f"{self.file.name}: {name} is given twice for all chatbots (at the top "
                    "level or in [defaults]): keep one",
                    column=key,
                )
            try:
                self._parsers()[name](value)
            except BadValue as error:
                shown = None if name in ENV_COLUMNS else rules.shown_value(value)
                raise _refused(
                    f"{self.file.name}: [defaults] {name} {error}", column=key, value=shown
                ) from None
            shared[name] = (key, value)
        return shared

    # ------------------------------------------------------------------ checking

    def _parsers(self) -> dict[str, Callable[[Any], Any]]:
        folder = self.file.parent
        return {
            "serial": rules.parse_serial,
            "name": rules.text_of,
            "sheet": lambda raw: rules.parse_path(raw, folder, "sheet"),
            "where": rules.parse_where,
            "key": rules.parse_key,
            "delete_missing": rules.parse_flag,
            "defaults": rules.parse_defaults,
            "tests": lambda raw: rules.parse_path(raw, folder, "chat tests"),
            **{name: partial(_env_name, default=default) for name, default in ENV_COLUMNS.items()},
        }

    def entries(self, rows: list[_Row]) -> list[ChatbotEntry]:
        parsers = self._parsers()
        checked: list[_Checked] = []
        for number, values in rows:
            row_values: dict[str, Any] = {}
            bad = False
            for name in COLUMNS:
                label, raw = values.get(name) or self.shared.get(name) or (name, None)
                if raw is _Twice:
                    bad = True
                    continue
                try:
                    row_values[name] = parsers[name](raw)
                except BadValue as error:
                    self.issue(number, label, name, raw, str(error))
                    bad = True
            if no_sheet := (not bad and row_values["sheet"] is None):
                self.issue(
                    number, "sheet", "sheet", None,
                    "is blank: give the listings sheet this chatbot syncs from",
                )  # fmt: skip
            if "defaults" in values and "defaults" in self.shared and not bad:
                # A chatbot's own defaults add to the shared ones, field by field.
                shared = rules.parse_defaults(self.shared["defaults"][1])
                row_values["defaults"] = {**shared, **row_values["defaults"]}
            if not bad and not no_sheet:
                checked.append((number, row_values, values["serial"][0]))
        return [self._entry(number, values) for number, values, _ in self._unique(checked)]

    def _unique(self, checked: list[_Checked]) -> list[_Checked]:
        """``checked`` less every row of a serial given twice for one service."""
        groups: dict[tuple[str, str], list[_Checked]] = {}
        for row in checked:
            values = row[1]
            groups.setdefault((values["serial"], values["base_url_env"]), []).append(row)
        doubled = {r[0] for members in groups.values() if len(members) > 1 for r in members}
        for (serial, _), members in groups.items():
            if len(members) < 2:
                continue
            listed = ", ".join(str(r[0]) for r in members)
            for number, _, label in members:
                self.issue(
                    number, label, "serial", serial,
                    f"is a duplicate serial ({self.unit}s {listed}) on one service: every row of a "
                    "duplicated serial is rejected (give a different base_url_env where they "
                    "are on different services)",
                )  # fmt: skip
        return [row for row in checked if row[0] not in doubled]

    def _entry(self, number: int, values: dict[str, Any]) -> ChatbotEntry:
        return ChatbotEntry(
            row=number,
            serial=values["serial"],
            name=values["name"] or values["serial"],
            sheet=values["sheet"],
            where=values["where"],
            key=values["key"],
            delete_missing=values["delete_missing"],
            defaults=FrozenFields(values["defaults"]),
            base_url_env=values["base_url_env"],
            api_key_env=values["api_key_env"],
            session_key_env=values["session_key_env"],
            tests=values["tests"],
            origin=f"{self.file.name} {self.unit} {number}",
        )


def _env_name(raw: Any, *, default: str) -> str:
    return rules.parse_env_name(raw, default)


class _TwiceType:
    """Marks a TOML key given twice in one chatbot (two spellings of one column)."""


_Twice = _TwiceType()


def _cell(value: Any) -> Any:
    """A raw cell as the rules read it: text as it stands, other values as the sheet shows
    them (a serial typed as a number is ``"123"``, not ``"123.0"``), a blank as None."""
    if value is None or isinstance(value, bool):
        return value
    return value if isinstance(value, str) else value_text(value)


def _issue_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Issue records as `Sheet.issues` holds them: its columns and dtypes, by row (the
    file's own issues first)."""
    frame = pd.DataFrame(
        {
            "row": pd.array([r["row"] for r in records], dtype="Int64"),
            **{
                column: pd.array([r[column] for r in records], dtype="string")
                for column in ISSUE_COLUMNS
                if column != "row"
            },
        },
        columns=list(ISSUE_COLUMNS),
    )
    order = np.lexsort((np.arange(len(frame)), frame["row"].to_numpy(dtype=np.int64, na_value=-1)))
    return frame.iloc[order].reset_index(drop=True)
