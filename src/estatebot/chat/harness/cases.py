"""Reading chat test cases: from a DataFrame, an ``.xlsx``/``.csv`` file or a list, all checked.

:func:`load_cases` gives one :class:`ChatCase` per row, in order; the columns and expectation
types are described in :mod:`estatebot.chat.harness`. Problems are reported before anything
is sent, as :class:`~estatebot.errors.SheetError` (a ``ValueError``) naming the row, column and
value. The row is the spreadsheet row number for files (the header is row 1), the index label for
a DataFrame, and the position for a list.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd

from estatebot.chat.harness.case_cells import (
    compile_patterns,
    is_blank,
    parse_bool,
    parse_count,
    parse_number,
    parse_text,
    split_values,
)
from estatebot.errors import SheetError

#: Every expectation type, in the order their ``_pass`` columns appear in results.
EXPECTATIONS: tuple[str, ...] = (
    "expect_contains",
    "expect_not_contains",
    "expect_regex",
    "expect_no_answer",
    "max_latency_ms",
    "max_tokens",
    "expect_grounded",
)

#: Every column a cases table may have.
CASE_COLUMNS: tuple[str, ...] = ("question", "name", "id", "conversation", *EXPECTATIONS)

#: What ``run_chat_tests`` accepts as cases.
CasesInput: TypeAlias = pd.DataFrame | str | os.PathLike[str] | Sequence[Mapping[str, Any] | str]

_EXCEL_SUFFIXES = frozenset({".xlsx", ".xlsm"})
_CSV_SUFFIXES = frozenset({".csv"})


@dataclass(frozen=True)
class ChatCase:
    """One question and what its answer must satisfy (an empty tuple or None: no expectation)."""

    position: int
    row: int | str
    question: str
    name: str | None = None
    conversation: str | None = None
    expect_contains: tuple[str, ...] = ()
    expect_not_contains: tuple[str, ...] = ()
    expect_regex: tuple[re.Pattern[str], ...] = ()
    expect_no_answer: bool | None = None
    max_latency_ms: float | None = None
    max_tokens: int | None = None
    expect_grounded: bool | None = None

    def expectations(self) -> tuple[str, ...]:
        """The expectation types this case sets, in :data:`EXPECTATIONS` order."""
        return tuple(e for e in EXPECTATIONS if getattr(self, e) not in ((), None))


# --------------------------------------------------------------------------- loading cases


def load_cases(cases: CasesInput) -> list[ChatCase]:
    """Read and check every case; raise :class:`SheetError` on the first bad row or column.

    ``cases`` is a DataFrame, a path to an ``.xlsx``/``.csv`` file (read as text, first sheet),
    or a list of dicts (a plain string is a question with no expectations). The caller's frame
    is not modified.
    """
    if isinstance(cases, pd.DataFrame):
        records = _frame_records(cases, from_file=False)
    elif isinstance(cases, str | os.PathLike):
        records = _frame_records(read_cases_file(cases), from_file=True)
    elif isinstance(cases, Sequence):
        records = [(i, _record(item, i)) for i, item in enumerate(cases)]
    else:
        raise TypeError(
            f"cases must be a DataFrame, a path to an .xlsx/.csv file or a list of dicts, "
            f"not {type(cases).__name__}"
        )
    loaded = [_parse_case(position, row, record) for position, (row, record) in enumerate(records)]
    _check_unique_names(loaded)
    return loaded


def read_cases_file(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A cases file as a frame of text (blank cells are ``""``), first sheet of a workbook."""
    file = Path(path)
    suffix = file.suffix.lower()
    # Every cell as text so that "007" or "TRUE" reach the typed parsers as written.
    if suffix in _EXCEL_SUFFIXES:
        return pd.read_excel(file, dtype=str, keep_default_na=False, engine="openpyxl")
    if suffix in _CSV_SUFFIXES:
        return pd.read_csv(file, dtype=str, keep_default_na=False)
    raise ValueError(f"cannot read cases from {file.name!r}: expected an .xlsx or .csv file")


def _frame_records(
    frame: pd.DataFrame, *, from_file: bool
) -> list[tuple[int | str, dict[str, Any]]]:
    names = _normalized_columns(frame)
    records: list[tuple[int | str, dict[str, Any]]] = []
    for offset, (label, values) in enumerate(
        zip(frame.index, frame.itertuples(index=False, name=None), strict=True)
    ):
        row: int | str = offset + 2 if from_file else _row_label(label)
        record = {
            name: value for name, value in zip(names, values, strict=True) if name is not None
        }
        records.append((row, record))
    return records


def _normalized_columns(frame: pd.DataFrame) -> list[str | None]:
    """Each column's canonical name; None for a blank, unnamed column that can be ignored."""
    names: list[str | None] = []
    seen: dict[str, Hashable] = {}
    for column in frame.columns:
        header = str(column)
        unnamed = header.startswith("Unnamed:") or not header.strip()
        if unnamed and all(is_blank(v) for v in frame[column]):
            names.append(None)
            continue
        name = _canonical(header)
        _check_known(name, header)
        if name in seen:
            raise SheetError(
                f"column {name!r} is given twice", column=header, value=str(seen[name])
            )
        seen[name] = column
        names.append(name)
    if "question" not in seen:
        raise SheetError("the cases have no 'question' column", column="question")
    return names


def _record(item: Mapping[str, Any] | str, position: int) -> dict[str, Any]:
    if isinstance(item, str):
        return {"question": item}
    if not isinstance(item, Mapping):
        raise SheetError(
            "each case must be a dict (or a question string)",
            row=position,
            value=type(item).__name__,
        )
    record: dict[str, Any] = {}
    for key, value in item.items():
        name = _canonical(str(key))
        _check_known(name, str(key), row=position)
        record[name] = value
    return record


def _canonical(header: str) -> str:
    return re.sub(r"[\s\-]+", "_", header.strip().lower())


def _check_known(name: str, header: str, *, row: int | None = None) -> None:
    if name in CASE_COLUMNS:
        return
    close = difflib.get_close_matches(name, CASE_COLUMNS, n=1)
    hint = (
        f"; did you mean {close[0]!r}?" if close else f"; known columns: {', '.join(CASE_COLUMNS)}"
    )
    raise SheetError(f"unknown column{hint}", row=row, column=header)


def _row_label(label: Hashable) -> int | str:
    if isinstance(label, int) and not isinstance(label, bool):
        return label
    return str(label)


def _parse_case(position: int, row: int | str, record: Mapping[str, Any]) -> ChatCase:
    def cell(column: str, parse: Any) -> Any:
        value = record.get(column)
        try:
            return parse(value)
        except (ValueError, re.error) as exc:
            raise SheetError(
                f"invalid {column}: {exc}", row=row, column=column, value=value
            ) from exc

    question = parse_text(record.get("question"))
    if question is None:
        raise SheetError("the question is missing", row=row, column="question")
    name = parse_text(record.get("name"))
    if name is None:
        name = parse_text(record.get("id"))
    return ChatCase(
        position=position,
        row=row,
        question=question,
        name=name,
        conversation=parse_text(record.get("conversation")),
        expect_contains=cell("expect_contains", split_values),
        expect_not_contains=cell("expect_not_contains", split_values),
        expect_regex=cell("expect_regex", lambda v: compile_patterns(split_values(v, regex=True))),
        expect_no_answer=cell("expect_no_answer", parse_bool),
        max_latency_ms=cell("max_latency_ms", parse_number),
        max_tokens=cell("max_tokens", parse_count),
        expect_grounded=cell("expect_grounded", parse_bool),
    )


def _check_unique_names(cases: Sequence[ChatCase]) -> None:
    # Names key the comparison of two runs, so two cases with one name would be ambiguous.
    first: dict[str, ChatCase] = {}
    for case in cases:
        if case.name is None:
            continue
        if case.name in first:
            raise SheetError(
                f"case name is not unique (also used on row {first[case.name].row})",
                row=case.row,
                column="name/id",
                value=case.name,
            )
        first[case.name] = case
