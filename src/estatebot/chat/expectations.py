"""Chat test cases: reading them, checking them, and judging an answer against their expectations.

A case is one ``question`` with optional expectations about its answer:

``expect_contains``
    Text that must appear in the answer, case-insensitively. Several values (separated by ``|`` or
    given as a list) must ALL appear.
``expect_not_contains``
    Text that must not appear, case-insensitively; none of several values may appear.
``expect_regex``
    Python regular expressions (``re.IGNORECASE``) that must all match somewhere in the answer. A
    ``|`` at the top level separates patterns; a ``|`` inside a group ``(a|b)`` or a character class
    stays the regex's alternation, and ``\\|`` is a literal pipe.
``expect_no_answer``
    Whether the service must flag the answer as ``noAnswer`` (``true``/``false``, ``yes``/``no``,
    ``1``/``0``, ``on``/``off``, any case).
``max_latency_ms``
    The slowest acceptable answer, in milliseconds.
``max_tokens``
    The most tokens the exchange may use.

Other columns: ``name`` or ``id`` (the case's name, unique; ``name`` wins when both are given) and
``conversation`` (cases sharing one run in order in one chat session). In ``expect_contains`` and
``expect_not_contains``, ``\\|`` is a literal pipe too.

Problems are reported before anything is sent, as :class:`~estatebot.api.errors.SheetError` (a
``ValueError``) naming the row, column and value. The row is the spreadsheet row number for files
(the header is row 1), the index label for a DataFrame, and the position for a list.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import pandas as pd

from estatebot.api.errors import SheetError

#: Every expectation type, in the order their ``_pass`` columns appear in results.
EXPECTATIONS: tuple[str, ...] = (
    "expect_contains",
    "expect_not_contains",
    "expect_regex",
    "expect_no_answer",
    "max_latency_ms",
    "max_tokens",
)

#: Every column a cases table may have.
CASE_COLUMNS: tuple[str, ...] = ("question", "name", "id", "conversation", *EXPECTATIONS)

#: What ``run_chat_tests`` accepts as cases.
CasesInput: TypeAlias = pd.DataFrame | str | os.PathLike[str] | Sequence[Mapping[str, Any] | str]

_TRUE = frozenset({"true", "t", "yes", "y", "1", "1.0", "on"})
_FALSE = frozenset({"false", "f", "no", "n", "0", "0.0", "off"})
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

    def expectations(self) -> tuple[str, ...]:
        """The expectation types this case sets, in :data:`EXPECTATIONS` order."""
        return tuple(e for e in EXPECTATIONS if getattr(self, e) not in ((), None))


@dataclass(frozen=True)
class Observed:
    """What came back for one question."""

    answer: str
    no_answer: bool
    tokens: int
    latency_ms: float


@dataclass(frozen=True)
class Verdict:
    """The outcome of every expectation a case sets: ``checks`` maps each to passed or not."""

    checks: dict[str, bool]
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """True when every expectation passed (and vacuously when there were none)."""
        return not self.failures


# --------------------------------------------------------------------------- checks


def check_contains(answer: str, needles: Sequence[str]) -> str | None:
    """None when every needle appears in the answer (case-insensitively), else why not."""
    text = answer.casefold()
    missing = [n for n in needles if n.casefold() not in text]
    if not missing:
        return None
    return f"expect_contains: {_quoted(missing)} not found"


def check_not_contains(answer: str, needles: Sequence[str]) -> str | None:
    """None when no needle appears in the answer (case-insensitively), else which did."""
    text = answer.casefold()
    found = [n for n in needles if n.casefold() in text]
    if not found:
        return None
    return f"expect_not_contains: {_quoted(found)} found"


def check_regex(answer: str, patterns: Sequence[re.Pattern[str]]) -> str | None:
    """None when every pattern matches somewhere in the answer, else which did not."""
    unmatched = [p.pattern for p in patterns if p.search(answer) is None]
    if not unmatched:
        return None
    return f"expect_regex: {_quoted(unmatched)} did not match"


def check_no_answer(no_answer: bool, expected: bool) -> str | None:
    """None when the service's ``noAnswer`` flag is the expected one."""
    if no_answer == expected:
        return None
    return f"expect_no_answer: expected {str(expected).lower()}, got {str(no_answer).lower()}"


def check_latency(latency_ms: float, limit_ms: float) -> str | None:
    """None when the answer came within the limit."""
    if latency_ms <= limit_ms:
        return None
    return f"max_latency_ms: took {latency_ms:.0f} ms, limit {limit_ms:g} ms"


def check_tokens(tokens: int, limit: int) -> str | None:
    """None when the exchange used no more tokens than the limit."""
    if tokens <= limit:
        return None
    return f"max_tokens: used {tokens} tokens, limit {limit}"


def judge(case: ChatCase, observed: Observed) -> Verdict:
    """Check every expectation the case sets against what came back."""
    outcomes: dict[str, str | None] = {}
    if case.expect_contains:
        outcomes["expect_contains"] = check_contains(observed.answer, case.expect_contains)
    if case.expect_not_contains:
        outcomes["expect_not_contains"] = check_not_contains(
            observed.answer, case.expect_not_contains
        )
    if case.expect_regex:
        outcomes["expect_regex"] = check_regex(observed.answer, case.expect_regex)
    if case.expect_no_answer is not None:
        outcomes["expect_no_answer"] = check_no_answer(observed.no_answer, case.expect_no_answer)
    if case.max_latency_ms is not None:
        outcomes["max_latency_ms"] = check_latency(observed.latency_ms, case.max_latency_ms)
    if case.max_tokens is not None:
        outcomes["max_tokens"] = check_tokens(observed.tokens, case.max_tokens)
    checks = {name: why is None for name, why in outcomes.items()}
    failures = tuple(why for why in outcomes.values() if why is not None)
    return Verdict(checks=checks, failures=failures)


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(repr(v) for v in values)


# --------------------------------------------------------------------------- cell parsing


def is_blank(value: Any) -> bool:
    """True for None, NaN/NA and text that is empty once stripped."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | tuple):
        return len(value) == 0
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # an array-like cell: not a scalar NA
        return False


def parse_text(value: Any) -> str | None:
    """A cell as stripped text, None when blank; a whole float (Excel's ``7.0``) reads as ``7``."""
    if is_blank(value):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def parse_bool(value: Any) -> bool | None:
    """``true``/``false`` and their usual spellings (any case); None when blank."""
    if is_blank(value):
        return None
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("expected true or false (also yes/no, 1/0, on/off)")


def parse_number(value: Any) -> float | None:
    """A positive finite number; thousands separators are allowed. None when blank."""
    if is_blank(value):
        return None
    if isinstance(value, bool):  # bool is an int: True must not read as 1 ms
        raise ValueError("expected a number")
    text = str(value).strip().replace(",", "").replace("_", "")
    try:
        number = float(text)
    except ValueError:
        raise ValueError("expected a number") from None
    if not math.isfinite(number) or number <= 0:
        raise ValueError("expected a positive number")
    return number


def parse_count(value: Any) -> int | None:
    """A positive whole number (``100.0`` from a spreadsheet is fine). None when blank."""
    number = parse_number(value)
    if number is None:
        return None
    if not number.is_integer():
        raise ValueError("expected a whole number")
    return int(number)


def split_values(value: Any, *, regex: bool = False) -> tuple[str, ...]:
    """Several values from one cell: a list as given, or text split on ``|``.

    ``\\|`` never splits. For regexes, a ``|`` inside ``(...)`` or ``[...]`` does not split either,
    so alternation still works; elsewhere ``\\|`` is unescaped to ``|``.
    """
    if is_blank(value):
        return ()
    if isinstance(value, list | tuple):
        items = [parse_text(v) for v in value]
        return tuple(v for v in items if v is not None)
    parts = _split_regex(str(value)) if regex else _split_plain(str(value))
    return tuple(p.strip() for p in parts if p.strip())


def _split_plain(text: str) -> list[str]:
    parts, current, i = [], [], 0
    while i < len(text):
        if text.startswith("\\|", i):
            current.append("|")
            i += 2
            continue
        if text[i] == "|":
            parts.append("".join(current))
            current = []
        else:
            current.append(text[i])
        i += 1
    parts.append("".join(current))
    return parts


def _split_regex(text: str) -> list[str]:
    # A small scanner, not a parser: enough to keep escapes, groups and classes whole.
    parts, current = [], []
    depth, in_class, i = 0, False, 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth = max(depth - 1, 0)
        elif char == "|" and depth == 0:
            parts.append("".join(current))
            current = []
            i += 1
            continue
        current.append(char)
        i += 1
    parts.append("".join(current))
    return parts


def compile_patterns(patterns: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    """Compile each pattern with ``re.IGNORECASE``; ``re.error`` tells which one is bad."""
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


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
