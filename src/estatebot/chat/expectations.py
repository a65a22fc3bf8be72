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

This module is where these names are imported from; the code is in :mod:`estatebot.chat.harness`:
reading cases in :mod:`~estatebot.chat.harness.cases` (one cell at a time in
:mod:`~estatebot.chat.harness.cells`) and judging answers in :mod:`~estatebot.chat.harness.checks`.
"""

from __future__ import annotations

from estatebot.chat.harness.cases import (
    CASE_COLUMNS,
    EXPECTATIONS,
    CasesInput,
    ChatCase,
    load_cases,
    read_cases_file,
)
from estatebot.chat.harness.cells import (
    compile_patterns,
    is_blank,
    parse_bool,
    parse_count,
    parse_number,
    parse_text,
    split_values,
)
from estatebot.chat.harness.checks import (
    Observed,
    Verdict,
    check_contains,
    check_latency,
    check_no_answer,
    check_not_contains,
    check_regex,
    check_tokens,
    judge,
)

__all__ = [
    "CASE_COLUMNS",
    "EXPECTATIONS",
    "CasesInput",
    "ChatCase",
    "Observed",
    "Verdict",
    "check_contains",
    "check_latency",
    "check_no_answer",
    "check_not_contains",
    "check_regex",
    "check_tokens",
    "compile_patterns",
    "is_blank",
    "judge",
    "load_cases",
    "parse_bool",
    "parse_count",
    "parse_number",
    "parse_text",
    "read_cases_file",
    "split_values",
]
