"""Comparing two chat test runs: the cases whose verdict or answer changed.

Either run may be a `ChatTestResults`, its frame, or a workbook it wrote.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Any

import pandas as pd
from openpyxl import Workbook
from openpyxl.styles import PatternFill

from estatebot._safe_cells import SheetWriter, frame_rows, warn_changes
from estatebot._summary import Figure, Summary
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


#: The kinds of change, by the name of their figure in :meth:`ChatRunChanges.summary`.
_CHANGE_FIGURES: dict[str, str] = {
    "now_failing": "now failing",
    "now_passing": "now passing",
    "answer_changed": "answer changed",
    "added": "added",
    "removed": "removed",
}
# A case that no longer passes, or is gone: its row is highlighted in a workbook.
_WORSE = frozenset({"now failing", "removed"})
_WORSE_FILL = PatternFill(start_color="FFF4CCCC", end_color="FFF4CCCC", fill_type="solid")


class ChatRunChanges(pd.DataFrame):
    """What `compare_chat_runs` returns: a DataFrame of the changed cases (use it as one),
    shown in a notebook as a diff: outcome changes coloured (pass → fail in red), the old and
    new answers compared word by word.

    Held and saved as every result is: `frame` / `to_frame` (a plain DataFrame),
    `summary` and `to_excel`, which returns the path written. It stays a DataFrame
    so code that used it as one goes on working; frames derived from it (`set_index`, a
    selection, ...) are plain DataFrames.
    """

    @property
    def frame(self) -> pd.DataFrame:
        """The changes as a plain DataFrame (a copy)."""
        return pd.DataFrame(self, copy=True)

    def to_frame(self) -> pd.DataFrame:
        """The changes as a plain DataFrame (a copy, as `frame`).

        Returns:
            A plain DataFrame copy of the changes.
        """
        return pd.DataFrame(self, copy=True)

    def summary(self) -> Summary:
        """One line, such as `"3 cases changed: 1 now failing, 2 answer changed"`; the
        figures in `.counts`: `changed`, then each kind of change (`now_failing`, ...).

        Returns:
            The line, with the figures `changed`, `now_failing`, `now_passing`,
            `answer_changed`, `added` and `removed`.
        """
        kinds = self._kinds()
        counts = {name: kinds.count(word) for name, word in _CHANGE_FIGURES.items()}
        figures: dict[str, Figure] = {"changed": len(self), **counts}
        if not len(self):
            return Summary("no case changed its outcome or answer", figures)
        noun = "case" if len(self) == 1 else "cases"
        parts = [f"{counts[name]} {word}" for name, word in _CHANGE_FIGURES.items() if counts[name]]
        text = f"{len(self)} {noun} changed" + (f": {', '.join(parts)}" if parts else "")
        return Summary(text, figures)

    # pandas marks to_excel final for its typing only: overriding it works, and is what makes this
    # result's to_excel safe with untrusted text and return the path, as every result's does.
    def to_excel(self, path: str | PathLike[str]) -> Path:  # type: ignore[override,misc]
        """Write a `changes` sheet (cases now failing or removed highlighted) and a `summary`
        sheet to an .xlsx workbook; returns the path written.

        Unlike DataFrame's `to_excel`, this takes only the path: questions and answers are
        untrusted text and go in by the rules of `estatebot._safe_cells` (never a formula;
        characters a cell cannot hold removed, text longer than a cell holds cut, each cell so
        changed named in a `CellWarning`).

        Args:
            path: where to write the workbook (`.xlsx`); missing folders are made, an existing
                file is replaced.

        Returns:
            The path written.
        """
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        book = Workbook(write_only=True)
        columns = [str(c) for c in self.columns]
        changes = SheetWriter(book, "changes", columns)
        worse = [change in _WORSE for change in self._kinds()]
        for values, is_worse in zip(frame_rows(self), worse, strict=True):
            changes.append(values, fill=_WORSE_FILL if is_worse else None)
        summary = SheetWriter(book, "summary", ["metric", "value"], widths={"metric": 18})
        for name, value in self.summary().counts.items():
            summary.append([name, value])
        book.save(target)
        warn_changes([*changes.changes, *summary.changes], target.name)
        return target

    def _kinds(self) -> list[Any]:
        """Each row's `change`; None for each when the column was dropped by hand."""
        if "change" not in self.columns:
            return [None] * len(self)
        kinds: list[Any] = self["change"].astype("object").tolist()
        return kinds

    def _repr_html_(self) -> str | None:
        if list(self.columns) != list(_CHANGE_COLUMNS):
            # Columns changed by hand: pandas' own table.
            plain: str | None = pd.DataFrame(self)._repr_html_()  # type: ignore[operator]
            return plain
        return changes_html(pd.DataFrame(self))


def compare_chat_runs(old: RunLike, new: RunLike) -> ChatRunChanges:
    """The cases whose verdict or answer changed between two runs.

    Cases are matched by name/id, else (unnamed cases, called `row N` in results) by question
    and conversation (a key used twice in one run
    is an error, never paired by order). `change` is `now failing`, `now passing`,
    `answer changed`, `added` or `removed`. Rows follow the new run's order; removed cases
    come last. Each run may be a `ChatTestResults`, its frame, or a workbook written by
    `ChatTestResults.to_excel`.

    Args:
        old: the earlier run: a `ChatTestResults`, its frame, or the path of its workbook.
        new: the later run, in any of the same forms.

    Returns:
        One row per changed case, with the columns `case`, `question`, `old_passed`,
        `new_passed`, `change`, `old_answer` and `new_answer`; no rows when nothing changed.

    Raises:
        ValueError: a run has two cases with the same key (name them to compare); a frame is
            not a results frame; or a workbook cannot be read back as results.
        FileNotFoundError: there is no workbook at a path given.
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
