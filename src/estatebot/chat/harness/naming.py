"""The name a case goes by in results: its own name or id, else its row (never blank).

An unnamed case is called ``row N``: the spreadsheet row for a cases file (the header is row 1,
as in the error messages), else its place in the list or frame counting from 1. Such a default
name stands for no name when two runs are compared (rows move when a case is added), so
:func:`is_default_name` lets the comparison pair those cases by their question instead.
"""

from __future__ import annotations

import re

import pandas as pd

from estatebot.chat.harness.cases import ChatCase

__all__ = ["case_label", "default_name", "fill_case_names", "is_default_name"]

_DEFAULT = re.compile(r"row \d+")


def default_name(number: int) -> str:
    """The name of the unnamed case on row ``number``."""
    return f"row {number}"


def is_default_name(name: object) -> bool:
    """Whether ``name`` is a default ``row N`` name rather than one the cases gave."""
    return isinstance(name, str) and _DEFAULT.fullmatch(name) is not None


def case_label(case: ChatCase) -> str:
    """The case's name or id, else ``row N`` (see the module's note for N)."""
    if case.name is not None:
        return case.name
    if isinstance(case.row, str):
        return f"row {case.row}"
    # A file's rows start at 2 and a frame may have its own index: that is the row a person
    # sees. A list (and a frame's default index) counts from 0 in code: from 1 for a person.
    number = case.row if case.row != case.position else case.position + 1
    return default_name(number)


def fill_case_names(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every blank ``case`` named by its place (``row 1`` …); the same frame
    when none is blank (a given frame is never changed in place)."""
    blank = frame["case"].isna() | (frame["case"].astype("string").str.strip() == "")
    if not bool(blank.any()):
        return frame
    names = pd.Series(
        [default_name(i + 1) for i in range(len(frame))], index=frame.index, dtype="string"
    )
    return frame.assign(case=frame["case"].mask(blank, names))
