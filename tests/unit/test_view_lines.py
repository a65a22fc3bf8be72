"""The command line's views built whole, then printed: :func:`~estatebot.cli.plan_view.plan_lines`,
:func:`~estatebot.cli.report_view.report_lines` and :func:`~estatebot.cli.console.print_lines`.

Properties over any text from a sheet, the service or the library: nothing a terminal would obey
reaches it, the library's Python hints are said as flags, headings are never cut, and a wrapped
line hangs under its prefix with no trailing blanks.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from estatebot.cli.console import Block, print_lines
from estatebot.cli.plan_view import Detail, plan_lines, render_plan
from estatebot.cli.report_view import render_report, report_lines
from estatebot.listings.sync.plan.operations import HeldBack, InvalidRow
from estatebot.listings.sync.report.apply_report import ApplyReport, OpOutcome, outcomes_frame
from estatebot.listings.sync.sync_plan import SyncPlan

# What a terminal obeys: C0 controls but tab and line feed, DEL and C1 controls.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
hostile = st.text(
    alphabet=st.one_of(
        st.sampled_from(["\x1b", "[", "2", "J", "\x07", "\x9b", "\r", "\n", "\t", " ", "a"]),
        st.characters(codec="utf-8"),
    ),
    max_size=30,
)
# A hint the library gives Python callers, and the flag the command line says instead.
HINT, FLAG = "pass force=True", "pass --force"


@dataclass
class ReadSheet:
    """What the plan view reads of a sheet: where it came from, its headline and its issues."""

    source: str
    issues: pd.DataFrame = field(default_factory=pd.DataFrame)

    def headline(self) -> str:
        return "3 rows"


def console_of(width: int) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, highlight=False, emoji=False,
                      markup=False, soft_wrap=True)  # fmt: skip
    return console, out


def hostile_plan(text: str) -> SyncPlan:
    return SyncPlan(
        key_type="MLSNumber",
        invalid=[InvalidRow(3, text, None, (f"{text} {HINT}",))],
        held_back=[HeldBack(4, text, 4, "AreaUnit", text, text, f"{HINT} {text}")],
        refusals=[f"refused: {text} {HINT}"],
        notes=[f"{HINT}: {text}"],
    )


def sheet_with_a_warning(text: str) -> ReadSheet:
    issues = pd.DataFrame(
        [{"row": 5, "column": text, "field": "City", "value": text, "severity": "warning",
          "message": f"{text} {HINT}"}]
    )  # fmt: skip
    return ReadSheet(source=f"sheet{text}.csv", issues=issues)


@given(hostile, st.sampled_from(list(Detail)), st.integers(20, 120))
def test_no_text_from_outside_reaches_the_terminal_raw(
    text: str, detail: Detail, width: int
) -> None:
    plan = hostile_plan(text)
    console, out = console_of(width)
    render_plan(console, plan, sheet=sheet_with_a_warning(text), detail=detail, max_rows=0)
    shown = out.getvalue()
    assert not CONTROL.search(shown)
    # The sheet's warning, the held value, the invalid row, the refusal and the note: each
    # says the flag, never the Python keyword.
    unwrapped = re.sub(r"\s+", " ", shown)
    assert unwrapped.count(FLAG) == 5
    assert "force=True" not in unwrapped


@given(hostile, st.integers(20, 120))
def test_a_report_says_the_services_text_safely_and_in_flags(text: str, width: int) -> None:
    outcome = OpOutcome("update", text, 2, 1, "failed", 400, f"{text} {HINT}")
    report = ApplyReport(frame=outcomes_frame([outcome]), notes=[f"{HINT} {text}"])
    console, out = console_of(width)
    render_report(console, report)
    shown = out.getvalue()
    assert not CONTROL.search(shown)
    assert re.sub(r"\s+", " ", shown).count(FLAG) == 2


@given(hostile, st.integers(20, 120))
def test_the_views_print_exactly_the_lines_they_build(text: str, width: int) -> None:
    plan, sheet = hostile_plan(text), sheet_with_a_warning(text)
    built, _ = console_of(width)
    printed, _ = console_of(width)
    with built.capture() as lines_printed:
        print_lines(built, plan_lines(plan, sheet=sheet, max_rows=1, where="W"))
    with printed.capture() as rendered:
        render_plan(printed, plan, sheet=sheet, max_rows=1, where="W")
    assert lines_printed.get() == rendered.get()
    report = ApplyReport(frame=outcomes_frame([OpOutcome("create", text, 2, None, "failed")]))
    with built.capture() as lines_printed:
        print_lines(built, report_lines(report))
    with printed.capture() as rendered:
        render_report(printed, report)
    assert lines_printed.get() == rendered.get()


words = st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=12), min_size=1, max_size=30)


@given(words, words, st.integers(20, 100))
def test_a_heading_is_never_cut_and_a_block_hangs_under_its_prefix(
    heading: list[str], body: list[str], width: int
) -> None:
    console, out = console_of(width)
    said = " ".join(body)
    print_lines(console, [Text(" ".join(heading)), Block(Text("  note: "), Text(said)), Text()])
    first, *wrapped, blank = out.getvalue().split("\n")[:-1]
    assert first == " ".join(heading)  # one line, however wide
    assert blank == ""
    assert wrapped[0].startswith("  note: ")
    assert all(line.startswith(" " * len("  note: ")) for line in wrapped[1:])
    assert all(line == line.rstrip() for line in wrapped)
    assert " ".join(line.strip() for line in wrapped).removeprefix("note: ") == said
