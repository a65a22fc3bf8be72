"""The code blocks of the README and the docs, as a reader meets them.

Python blocks are found by pytest-examples (which runs them too); shell blocks by markdown-it
(the Markdown parser the package already uses), since pytest-examples reads only Python. A block
the text says cannot run here is preceded by ``<!-- not run: why -->``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from pytest_examples import CodeExample, find_examples

ROOT = Path(__file__).resolve().parents[1]
NOT_RUN = re.compile(r"<!--\s*not run:\s*(?P<why>.+?)\s*-->")
#: A command's claimed exit code: ``# exits 5: why`` at the end of its line; none claims 0.
CLAIMED_EXIT = re.compile(r"#.*?\bexits? (?P<code>\d+)\b")


def pages() -> list[Path]:
    """The README and every page of the docs, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def page_id(page: Path) -> str:
    """A test id for ``page``: its path from the project's root."""
    return page.relative_to(ROOT).as_posix()


def _marked_not_run(lines: list[str], fence_index: int) -> str | None:
    """The reason given just above the fence at ``fence_index`` (0-based), if any."""
    above = fence_index - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    if above < 0:
        return None
    found = NOT_RUN.search(lines[above])
    return found.group("why") if found else None


def python_blocks(page: Path) -> list[CodeExample]:
    """The page's Python blocks that run, in order (those marked not run are left out)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks = []
    for example in find_examples(page):
        # start_line is the 1-based line of the fence; the line above it may say "not run".
        if _marked_not_run(lines, example.start_line - 1) is None:
            blocks.append(example)
    return blocks


@dataclass(frozen=True)
class ShellCommand:
    """One ``estatebot`` command of a shell block, with the exit code its line claims."""

    page: Path
    line: int
    command: str
    claimed_exit: int

    def __str__(self) -> str:
        return f"{page_id(self.page)}:{self.line}: {self.command}"


def shell_commands(page: Path) -> list[ShellCommand]:
    """Every ``estatebot`` command of the page's bash blocks that run, in order."""
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []
    for token in MarkdownIt().parse(text):
        if token.type != "fence" or token.info.strip() not in {"bash", "sh", "shell"}:
            continue
        assert token.map is not None
        if _marked_not_run(lines, token.map[0]) is not None:
            continue
        for offset, line in enumerate(token.content.splitlines()):
            if not line.startswith("estatebot "):
                continue
            claimed = CLAIMED_EXIT.search(line)
            found.append(
                ShellCommand(
                    page=page,
                    line=token.map[0] + 2 + offset,
                    command=line,
                    claimed_exit=int(claimed.group("code")) if claimed else 0,
                )
            )
    return found


def blocks_not_run(page: Path) -> list[tuple[int, str]]:
    """Each block marked not run: its fence's line (1-based) and the reason."""
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines()
    marked = []
    for token in MarkdownIt().parse(text):
        if token.type == "fence" and token.map is not None:
            why = _marked_not_run(lines, token.map[0])
            if why is not None:
                marked.append((token.map[0] + 1, why))
    return marked
