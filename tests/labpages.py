"""What the browser tests do alike in JupyterLab: write a notebook, open it once the kernel is
idle, click through the menu bar, and save a picture under ``docs/`` only when asked."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "images"
# The README's pictures are refreshed only when asked, so a test run leaves the work tree as it was.
UPDATE_DOCS = os.environ.get("ESTATEBOT_UPDATE_DOCS") == "1"


def write_code_notebook(path: Path, cells: Mapping[str, str]) -> str:
    """A notebook at ``path`` of code cells, each ``id: source`` in order; returns its name."""
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {
                "name": "python3",
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
            }
        },
        "cells": [
            {
                "cell_type": "code",
                "id": name,
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source,
            }
            for name, source in cells.items()
        ],
    }
    path.write_text(json.dumps(notebook, indent=1))
    return path.name


def open_when_idle(page: Any, url: str) -> None:
    """Open the notebook at ``url`` and wait for its kernel: a cell run before the kernel is
    connected is dropped."""
    from playwright.sync_api import expect

    page.set_default_timeout(60_000)
    page.goto(url)
    # The first cell may be Markdown (rendered, its editor hidden): wait for any cell.
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell")
    expect(idle_status(page)).to_be_visible(timeout=60_000)


def idle_status(page: Any) -> Any:
    """The status bar's "Idle" of the kernel."""
    return page.locator(".jp-StatusBar-Widget").get_by_text("| Idle")


def use_menu(page: Any, *items: str) -> None:
    """Click through the menu bar: ``use_menu(page, "Run", "Run All Cells")``."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{items[0]}$")).click()
    for item in items[1:-1]:
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{item}$")).hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{items[-1]}$")).click()


def picture_path(name: str, scratch: Path) -> Path:
    """Where a picture goes: ``docs/`` with ``ESTATEBOT_UPDATE_DOCS=1``, else ``scratch``."""
    path = DOCS / name if UPDATE_DOCS else scratch / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


#: JupyterLab's two themes, by the short name the tests use.
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}


def set_theme(page: Any, theme: str) -> None:
    """Switch JupyterLab to ``theme`` ("light", "dark" or a theme's full name) by its menu, and
    wait until its style sheet is applied."""
    from playwright.sync_api import expect

    label = THEMES.get(theme, theme)
    if page.locator("body").get_attribute("data-jp-theme-name") != label:
        use_menu(page, "Settings", "Theme", label)
    expect(page.locator("body")).to_have_attribute("data-jp-theme-name", label, timeout=30_000)
    page.wait_for_timeout(500)  # the new theme's style sheet is applied after the attribute
