"""Comparing two chat test runs: the cases whose verdict or answer changed.

Either run may be a :class:`~estatebot.chat.harness.results.ChatTestResults`, its frame, or a
workbook it wrote.
"""

from __future__ import annotations

from os import PathLike
from typing import Any

import pandas as pd

from estatebot.chat.harness.comparison_html import changes_html
from estatebot.chat.harness.naming import is_default_name
from estatebot.chat.harness.results import ChatTestResults

__all__ = ["ChatRunChanges", "RunLike", "compare_chat_runs"]

RunLike = ChatTestResults | pd.DataFrame | str | PathLike[str]

_CHANGE_COLUMNS: dict[str, str] = {
    "case": "string",
    "question": "string",
    "old_passed": "boolean",
    "new_passed": "boolean",
    "change": "string",
    "old_answer": "string",
    "new_answer": "string",
}


class ChatRunChanges(pd.DataFrame):
    """What :func:`compare_chat_runs` returns: a DataFrame of the changed cases (use it as one),
    shown in a notebook as a diff: outcome changes coloured (pass → fail in red), the old and
    new answers compared word by word.

    Frames derived from it (``set_index``, a selection, ...) are plain DataFrames.
    """

    def _repr_html_(self) -> str | None:
        if list(self.columns) != list(_CHANGE_COLUMNS):
            # Columns changed by hand: pandas' own table.
            plain: str | None = pd.DataFrame(self)._repr_html_()  # type: ignore[operator]
            return plain
        return changes_html(pd.DataFrame(self))


def compare_chat_runs(old: RunLike, new: RunLike) -> ChatRunChanges:
    """The cases whose verdict or answer changed between two runs.

    Cases are matched by name/id, else (unnamed cases, called ``row N`` in results) by question
    and conversation (a key used twice in one run
    is an error, never paired by order). ``change`` is ``now failing``, ``now passing``,
    ``answer changed``, ``added`` or ``removed``. Rows follow the new run's order; removed cases
    come last. Each run may be a :class:`ChatTestResults`, its frame, or a workbook written by
    :meth:`ChatTestResults.to_excel`.
    """
    before = _keyed(_as_frame(old), "old")
    after = _keyed(_as_frame(new), "new")
    rows: list[dict[str, Any]] = []
    for key, now in after.items():
        then = before.get(key)
        change = "added" if then is None else _change(then, now)
        if change is not None:
            rows.append(_change_row(then, now, change))
    for key, then in before.items():
        if key not in after:
            rows.append(_change_row(then, None, "removed"))
    frame = pd.DataFrame(rows, columns=list(_CHANGE_COLUMNS)).astype(_CHANGE_COLUMNS)
    return ChatRunChanges(frame)


def _as_frame(run: RunLike) -> pd.DataFrame:
    if isinstance(run, ChatTestResults):
        return run.frame
    if isinstance(run, pd.DataFrame):
        return ChatTestResults(run).frame
    return ChatTestResults.from_excel(run).frame


def _keyed(frame: pd.DataFrame, which: str) -> dict[tuple[str, ...], dict[str, Any]]:
    keyed: dict[tuple[str, ...], dict[str, Any]] = {}
    for record in frame.to_dict(orient="records"):
        row = {str(k): (None if _is_na(v) else v) for k, v in record.items()}
        # A default "row N" name is no name: rows move when cases are added or removed.
        if row["case"] is not None and not is_default_name(row["case"]):
            key: tuple[str, ...] = ("case", str(row["case"]))
        else:
            key = ("question", str(row["conversation"] or ""), str(row["question"]))
        if key in keyed:
            raise ValueError(
                f"the {which} run has two cases keyed {key[1:]!r}; name them to compare runs"
            )
        keyed[key] = row
    return keyed


def _is_na(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _change(then: dict[str, Any], now: dict[str, Any]) -> str | None:
    if bool(then["passed"]) and not bool(now["passed"]):
        return "now failing"
    if not bool(then["passed"]) and bool(now["passed"]):
        return "now passing"
    if then["answer"] != now["answer"]:
        return "answer changed"
    return None


def _change_row(
    then: dict[str, Any] | None, now: dict[str, Any] | None, change: str
) -> dict[str, Any]:
    either = now if now is not None else then
    assert either is not None  # one side always exists
    return {
        "case": either["case"],
        "question": either["question"],
        "old_passed": then["passed"] if then else None,
        "new_passed": now["passed"] if now else None,
        "change": change,
        "old_answer": then["answer"] if then else None,
        "new_answer": now["answer"] if now else None,
    }
