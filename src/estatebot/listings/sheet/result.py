"""What :func:`~estatebot.listings.sheet.read.read_sheet` returns: a :class:`Sheet` holding the
listing frame, the issues, the header mapping, the cleared cells and the unpublished rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from os import PathLike
from pathlib import Path

import pandas as pd

from estatebot._safe_cells import warn_changes
from estatebot._summary import Summary
from estatebot.listings.export import flatten_for_cells, write_workbook
from estatebot.listings.sheet.issues import issue_lines, issues_html

ISSUE_COLUMNS = ("row", "column", "field", "value", "message", "severity")


@dataclass(repr=False)
class Sheet:
    """A spreadsheet read as listings.

    `frame` holds the valid rows only, as a canonical frame indexed by the row number a user
    sees in the file (index name `row`). `issues` has one row per problem (`row`, `column`,
    `field`, `value`, `message`, `severity`): an "error" rejects its row, a "warning" keeps
    it. `mapping` tells how each header was read. `cleared` marks, for the valid rows, the
    fields where the clear token asked to empty the field; `defaulted` marks those whose value
    came from `defaults` rather than the sheet (a plan fills a listing's empty field with such
    a value, and never overwrites one); `overrides` holds the values set on every row on
    purpose (a plan writes them everywhere); `cleared_keys` lists, by row, the ExtensionColumn
    keys whose cell holds the clear token (a plan removes just those keys and keeps the
    listing's others); `derived` marks the values the reader computed where the sheet gives
    none (`UnitAreaPrice` from price and area: a plan writes one only together with a change
    of what it comes from). `unpublished` lists the rows left out because their status
    (Withdrawn, Expired, ...) says the listing must not be published, with their key, so a
    plan can make the remote copy a delete candidate.
    """

    frame: pd.DataFrame
    issues: pd.DataFrame
    mapping: pd.DataFrame
    cleared: pd.DataFrame
    unpublished: pd.DataFrame
    source: str
    rows_read: int = 0
    defaulted: pd.DataFrame = field(default_factory=pd.DataFrame)
    cleared_keys: pd.Series = field(default_factory=lambda: pd.Series(dtype=object))
    derived: pd.DataFrame = field(default_factory=pd.DataFrame)
    overrides: dict[str, object] = field(default_factory=dict)

    @property
    def invalid_rows(self) -> list[int]:
        """The row numbers rejected by an error, sorted."""
        rows = self.errors["row"].dropna().unique()
        return sorted(int(r) for r in rows)

    @property
    def errors(self) -> pd.DataFrame:
        """The issues that reject their row (and sheet-level errors)."""
        return self.issues[self.issues["severity"] == "error"]

    @property
    def warnings(self) -> pd.DataFrame:
        """The issues that keep their row."""
        return self.issues[self.issues["severity"] == "warning"]

    def counts(self) -> dict[str, int]:
        """Rows read, valid, rejected and not published; warnings and errors found.

        Returns:
            The figures by name: `rows_read`, `valid`, `rejected`, `not_published`,
                `warnings` and `errors`.
        """
        return {
            "rows_read": self.rows_read,
            "valid": len(self.frame),
            "rejected": len(self.invalid_rows),
            "not_published": len(self.unpublished),
            "warnings": len(self.warnings),
            "errors": len(self.errors),
        }

    def headline(self) -> str:
        """One line: rows read, valid, rejected, not published, warnings.

        Returns:
            The line, such as `"120 rows read, 118 valid, 2 rejected, 3 warnings"` (the
                count not published only when there is one).
        """
        parts = [
            f"{self.rows_read} rows read",
            f"{len(self.frame)} valid",
            f"{len(self.invalid_rows)} rejected",
        ]
        if len(self.unpublished):
            parts.append(f"{len(self.unpublished)} not published")
        parts.append(f"{len(self.warnings)} warnings")
        return ", ".join(parts)

    def only_rows(self, rows: Iterable[int]) -> Sheet:
        """The same sheet restricted to some of its rows, as if those were all it held.

        Used to give each chatbot of a fleet its own rows of a shared export (a `where`
        filter). Everything kept by row is restricted alike: `frame`, `issues` (the issues of
        the sheet as a whole, with no row, are kept), `cleared`, `defaulted`, `derived`,
        `cleared_keys` and `unpublished`; `rows_read` counts the rows kept that were read.
        `mapping`, `source` and `overrides` are the sheet's own.

        Args:
            rows: Row numbers as the file shows them (those of `frame.index` and
                `issues["row"]`); numbers the sheet does not hold are passed over.

        Returns:
            A new `Sheet`; this one is left as it was.
        """
        kept = pd.Index(sorted({int(r) for r in rows}), dtype="int64")

        def by_index(table: pd.DataFrame) -> pd.DataFrame:
            return table[table.index.isin(kept)].copy()

        in_rows = self.issues["row"].isin(kept).fillna(False).to_numpy(dtype=bool)
        no_row = self.issues["row"].isna().to_numpy(dtype=bool)
        unpublished = self.unpublished
        if "row" in unpublished.columns:
            mask = unpublished["row"].isin(kept).fillna(False).to_numpy(dtype=bool)
            unpublished = unpublished[mask].reset_index(drop=True)
        read = set(self.frame.index) | set(self.invalid_rows)
        if "row" in self.unpublished.columns:
            read |= {int(r) for r in self.unpublished["row"].dropna()}
        return replace(
            self,
            frame=by_index(self.frame),
            issues=self.issues[in_rows | no_row].reset_index(drop=True),
            cleared=by_index(self.cleared),
            unpublished=unpublished,
            rows_read=len(read.intersection(kept)),
            defaulted=by_index(self.defaulted),
            cleared_keys=self.cleared_keys[self.cleared_keys.index.isin(kept)].copy(),
            derived=by_index(self.derived),
            overrides=dict(self.overrides),
        )

    def to_frame(self) -> pd.DataFrame:
        """A copy of `frame`, the valid rows as a canonical listing frame.

        Returns:
            A new DataFrame, indexed by the row number in the file: changing it leaves the
                sheet as it was.
        """
        return self.frame.copy()

    def to_excel(self, path: str | PathLike[str]) -> Path:
        """Write the valid listings, the issues and the header mapping to an .xlsx workbook.

        Sheets `Listings` (indexed by the row number in the file; lists and mappings as JSON
        text, readable back by `read_sheet`), `Issues` and `Mapping`. Sheet text goes in by the
        rules of `estatebot._safe_cells` (formula-like text stays text, characters a cell
        refuses removed, over-long text cut), each cell so changed named in a `CellWarning`.

        Args:
            path: The workbook to write; its folder is made when missing.

        Returns:
            The path written, as a `Path`.
        """
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        # Sheet text is untrusted: written by the cell rules (formula-like text stays text,
        # characters a cell refuses removed, over-long text cut), changed cells named.
        sheets = {
            "Listings": flatten_for_cells(self.frame).reset_index(),
            "Issues": self.issues,
            "Mapping": self.mapping,
        }
        changes = write_workbook(target, sheets, too_long="cut")
        warn_changes(changes, target.name)
        return target

    def summary(self, limit: int = 10) -> Summary:
        """The headline and the first `limit` issues, one line each; figures in `.counts`.

        Args:
            limit: How many issues to list (default 10); a last line counts the others.

        Returns:
            The lines, as a `Summary` whose figures are those of `counts`.
        """
        lines = [f"{self.source}: {self.headline()}"]
        lines += issue_lines(self.issues, unit="row", whole="sheet", limit=limit)
        return Summary("\n".join(lines), self.counts())

    def __repr__(self) -> str:
        return f"<Sheet {self.source}: {self.headline()}>"

    def _repr_html_(self) -> str:
        return issues_html(self.source, self.headline(), self.issues)
