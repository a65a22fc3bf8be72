"""A filter of a shared sheet's rows, such as ``ListAgentMlsId = A123``: :class:`RowFilter`.

A fleet often feeds many chatbots from one MLS export, each chatbot the rows of one agent or
office. A manifest row says which rows with a ``where`` text, read here by a small grammar::

    filter    := condition ("and" condition)*
    condition := column ("=" | "==" | "!=") value
               | column ("in" | "not in") "(" value ("," value)* ")"

Column names are the sheet's own headers, matched as the manifest's headers are: case, spaces,
underscores and dashes ignored (``list agent mls id`` finds ``ListAgentMlsId``). Words are
keywords in any case (``AND``, ``In``). A value or a column name holding spaces, a keyword, a
comma, a parenthesis, ``=`` or a quote is written in single or double quotes; a quote inside
is written twice (``'O''Brien'``). ``or`` is refused rather than guessed at: ``in (...)``
says "any of these".

Values are compared as text, exactly (case counts) once trimmed: an MLS's agent and office
ids are case-sensitive in some systems, so ``a123`` must not pick ``A123``'s listings. A cell
is compared as the spreadsheet shows it (``cell_types.value_text``): a number read as ``123.0``
is ``"123"``, a blank cell is ``""`` (so ``Office = ''`` picks the rows without an office).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, cast

import numpy as np

from estatebot.errors import FilterError
from estatebot.listings.sheet.fields.cell_types import value_text
from estatebot.listings.sheet.readers.table import read_table

__all__ = ["Condition", "FilterError", "RowFilter", "header_key", "select_sheet_rows"]

Operator = Literal["=", "!=", "in", "not in"]

#: Words that cannot be a bare column name or value (quote them).
_KEYWORDS = frozenset({"and", "or", "in", "not"})
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<quoted>"(?:[^"]|"")*"|'(?:[^']|'')*')
      | (?P<op>!=|==|=|\(|\)|,)
      | (?P<word>(?:[^\s=!(),'"]|!(?!=))+)
      | (?P<bad>\S)
    )""",
    re.VERBOSE | re.DOTALL,
)
_SEPARATORS = re.compile(r"[\s_\-]+")
#: Text that may stand bare: words of plain characters, one space apart, none a keyword.
_BARE = re.compile(r"(?:[^\s=!(),'\"]|!(?!=))+(?: (?:[^\s=!(),'\"]|!(?!=))+)*")


def header_key(header: str) -> str:
    """A header reduced for matching: case folded, spaces, underscores and dashes dropped.

    Args:
        header: A column header (or a manifest key, or a filter's column name).

    Returns:
        The reduced text: ``"Delete missing"`` and ``"delete_missing"`` both give
            ``"deletemissing"``.
    """
    return _SEPARATORS.sub("", header).casefold()


@dataclass(frozen=True)
class Condition:
    """One test of a row: a column, an operator and the values it is compared with.

    Attributes:
        column: The column's name as written in the filter.
        op: ``"="``, ``"!="``, ``"in"`` or ``"not in"``.
        values: The values, trimmed (one for ``=`` and ``!=``).
    """

    column: str
    op: Operator
    values: tuple[str, ...]

    def __str__(self) -> str:
        column = _shown(self.column)
        if self.op in ("=", "!="):
            return f"{column} {self.op} {_shown(self.values[0])}"
        return f"{column} {self.op} ({', '.join(_shown(v) for v in self.values)})"

    def matches(
        self, cells: Sequence[Any] | np.ndarray[Any, Any]
    ) -> np.ndarray[Any, np.dtype[np.bool_]]:
        """Which cells of a raw column pass this test.

        Args:
            cells: The column's raw cells, as :func:`read_table` gives them.

        Returns:
            One boolean per cell.
        """
        texts = np.array([_cell_text(cell) for cell in cells], dtype=object)
        found = np.isin(texts, np.array(self.values, dtype=object))
        return ~found if self.op in ("!=", "not in") else found


@dataclass(frozen=True)
class RowFilter:
    """The rows of a sheet whose cells pass every condition (``and``).

    ``str(f)`` writes the filter back as text that :meth:`parse` reads as the same filter.

    Attributes:
        conditions: The tests, in the order written; a row must pass all of them.
    """

    conditions: tuple[Condition, ...]

    @classmethod
    def parse(cls, text: str) -> RowFilter:
        """Read a filter such as ``City = Austin and Status != Sold``.

        Args:
            text: The filter (see the module's grammar).

        Returns:
            The filter.

        Raises:
            FilterError: When the text is blank or breaks the grammar, saying what was expected
                and at which character.
        """
        return _Parser(text).parse()

    def __str__(self) -> str:
        return " and ".join(str(condition) for condition in self.conditions)

    @property
    def columns(self) -> tuple[str, ...]:
        """The column names the filter reads, as written, once each."""
        return tuple(dict.fromkeys(c.column for c in self.conditions))

    def rows(
        self,
        headers: Sequence[str],
        columns: Sequence[Sequence[Any] | np.ndarray[Any, Any]],
        rows: Sequence[int] | np.ndarray[Any, Any],
    ) -> np.ndarray[Any, np.dtype[np.int64]]:
        """The sheet row numbers of the rows that pass, in the sheet's order.

        Args:
            headers: The sheet's headers (a `Table`'s `headers`).
            columns: Its raw cell columns, one per header.
            rows: The sheet row number of each cell of a column.

        Returns:
            The row numbers that pass, as an int64 array.

        Raises:
            FilterError: When a column of the filter matches no header (naming the headers
                present and the closest one), or more than one.
        """
        numbers = np.asarray(rows, dtype=np.int64)
        keep = np.ones(len(numbers), dtype=bool)
        for condition in self.conditions:
            position = self._position(condition.column, headers)
            keep &= condition.matches(columns[position])
        return numbers[keep]

    def _position(self, column: str, headers: Sequence[str]) -> int:
        wanted = header_key(column)
        found = [j for j, header in enumerate(headers) if header_key(header) == wanted]
        if len(found) == 1:
            return found[0]
        if found:
            named = ", ".join(repr(headers[j]) for j in found)
            raise FilterError(
                f"filter {str(self)!r}: column {column!r} matches more than one header "
                f"({named}): rename one of them",
                value=str(self),
            )
        close = difflib.get_close_matches(column, list(headers), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        present = ", ".join(repr(h) for h in headers) or "none"
        raise FilterError(
            f"filter {str(self)!r} names column {column!r}, which the sheet does not have "
            f"(its headers: {present}){hint}",
            value=str(self),
        )


def select_sheet_rows(
    path: str | os.PathLike[str],
    where: str | RowFilter,
    sheet_name: str | int | None = None,
) -> np.ndarray[Any, np.dtype[np.int64]]:
    """The row numbers of a sheet file whose raw cells pass a filter.

    The file is read raw, as `read_sheet` reads it, so the numbers are those of
    `Sheet.frame.index` and `Sheet.issues["row"]`; pass them to `Sheet.only_rows`. Give the
    `sheet_name` the sheet is read with, so both name the same worksheet.

    Args:
        path: The sheet file (xlsx, xls, ods, csv, tsv, txt or parquet).
        where: The filter, as text or parsed.
        sheet_name: The worksheet, by name or 0-based number (None: the first visible one).

    Returns:
        The row numbers that pass, in the sheet's order, as an int64 array.

    Raises:
        FilterError: When the filter cannot be read or names a column the sheet lacks.
        SheetError: When the file cannot be read.
    """
    row_filter = where if isinstance(where, RowFilter) else RowFilter.parse(where)
    _, table = read_table(path, sheet_name)
    return row_filter.rows(table.headers, table.columns, table.rows)


# --------------------------------------------------------------------------- text


def _cell_text(cell: Any) -> str:
    return "" if cell is None else value_text(cell).strip()


def _shown(text: str) -> str:
    """``text`` bare when it reads back as itself, else in double quotes (inner ones doubled)."""
    words = text.split(" ")
    if _BARE.fullmatch(text) and not any(w.casefold() in _KEYWORDS for w in words):
        return text
    return '"' + text.replace('"', '""') + '"'


@dataclass(frozen=True)
class _Token:
    kind: Literal["quoted", "op", "word", "end"]
    text: str
    start: int

    @property
    def keyword(self) -> str | None:
        lowered = self.text.casefold()
        return lowered if self.kind == "word" and lowered in _KEYWORDS else None


class _Parser:
    """A recursive-descent reader of the grammar over the tokens of one filter text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = self._tokens(text)
        self.at = 0

    def parse(self) -> RowFilter:
        if self.tokens[0].kind == "end":
            self._fail("the filter is blank: write it as Column = value")
        conditions = [self._condition()]
        while self._peek().keyword == "and":
            self.at += 1
            conditions.append(self._condition())
        token = self._peek()
        if token.kind != "end":
            if token.keyword == "or":
                self._fail("'or' is not supported: write Column in (a, b) instead", token)
            self._fail(f"expected 'and' or the end, found {token.text!r}", token)
        return RowFilter(tuple(conditions))

    def _condition(self) -> Condition:
        column = self._text("a column name", naming=True)
        token = self._next()
        if token.kind == "op" and token.text in ("=", "==", "!="):
            op: Operator = "!=" if token.text == "!=" else "="
            return Condition(column, op, (self._text("a value after " + token.text),))
        if token.keyword == "in":
            return Condition(column, "in", self._list())
        if token.keyword == "not" and self._peek().keyword == "in":
            self.at += 1
            return Condition(column, "not in", self._list())
        found = "the end" if token.kind == "end" else repr(token.text)
        self._fail(f"expected =, !=, in or not in after {column!r}, found {found}", token)

    def _list(self) -> tuple[str, ...]:
        self._expect("(")
        values = [self._text("a value in the list")]
        while self._peek().text == "," and self._peek().kind == "op":
            self.at += 1
            values.append(self._text("a value after ','"))
        self._expect(")")
        return tuple(values)

    def _text(self, what: str, *, naming: bool = False) -> str:
        """A quoted text, or bare words up to an operator, a keyword or the end."""
        token = self._peek()
        if token.kind == "quoted":
            self.at += 1
            quote = token.text[0]
            text = token.text[1:-1].replace(quote * 2, quote).strip()
            if naming and not text:
                self._fail(f"expected {what}, found an empty name", token)
            return text
        words: list[str] = []
        while (token := self._peek()).kind == "word" and token.keyword is None:
            words.append(token.text)
            self.at += 1
        if not words:
            found = "the end" if token.kind == "end" else repr(token.text)
            self._fail(f"expected {what}, found {found}", token)
        return " ".join(words)

    def _expect(self, symbol: str) -> None:
        token = self._next()
        if token.kind != "op" or token.text != symbol:
            found = "the end" if token.kind == "end" else repr(token.text)
            self._fail(f"expected {symbol!r}, found {found}", token)

    def _peek(self) -> _Token:
        return self.tokens[self.at]

    def _next(self) -> _Token:
        token = self.tokens[self.at]
        if token.kind != "end":
            self.at += 1
        return token

    def _fail(self, message: str, token: _Token | None = None) -> NoReturn:
        where = f" (at character {token.start + 1})" if token is not None else ""
        raise FilterError(
            f"cannot read the filter: {message}{where}",
            value=self.text,
        )

    def _tokens(self, text: str) -> list[_Token]:
        tokens: list[_Token] = []
        for match in _TOKEN.finditer(text):
            kind = match.lastgroup
            if kind is None:  # trailing spaces only
                continue
            token = _Token("word", match.group(kind), match.start(kind))
            if kind == "bad":
                # Every other character starts a token: only a quote left open gets here.
                self._fail(f"found an unclosed quote {token.text}", token)
            tokens.append(_Token(cast(Any, kind), token.text, token.start))
        tokens.append(_Token("end", "", len(text)))
        return tokens
