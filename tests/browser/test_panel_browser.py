"""ChatPanel end to end: JupyterLab in headless Chromium, the emulator behind a real kernel."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

# The README's picture; refreshed only when asked, so a test run leaves the work tree as it was.
DOCS_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "chat-panel.png"
UPDATE_DOCS = os.environ.get("ESTATEBOT_UPDATE_DOCS") == "1"
QUESTION = "3 bedroom homes in Austin under $600k"
OFF_TOPIC = "what is the capital of France"


def write_notebook(root: Path, serial: str) -> str:
    """A notebook whose one cell builds and shows a panel on the environment's client."""
    source = (
        "from estatebot.api.client import Client\n"
        "from estatebot.chat.panel import ChatPanel\n"
        "\n"
        f'panel = ChatPanel(Client(), "{serial}", title="Sunny Homes")\n'
        "panel"
    )
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
                "id": "chat-panel",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source,
            }
        ],
    }
    (root / "panel.ipynb").write_text(json.dumps(notebook, indent=1))
    return "panel.ipynb"


def test_a_question_typed_in_the_browser_is_answered_in_the_panel(
    browser: Any, lab: Any, chat_emulator: Any
) -> None:
    from playwright.sync_api import expect

    name = write_notebook(lab.root, chat_emulator.serial)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    try:
        page.set_default_timeout(60_000)
        page.goto(lab.page(name))
        page.wait_for_selector(".jp-NotebookPanel .jp-Cell .cm-content")
        # A cell run before the kernel is connected is dropped: wait for the status bar to
        # show the kernel idle.
        expect(page.locator(".jp-StatusBar-Widget").get_by_text("| Idle")).to_be_visible(
            timeout=60_000
        )

        page.locator(".jp-NotebookPanel .jp-Cell .cm-content").first.click()
        page.keyboard.press("Shift+Enter")
        chat = page.locator(".eb-chat")
        expect(chat).to_be_visible(timeout=60_000)  # kernel start-up and imports
        expect(chat.locator(".eb-title")).to_have_text("Sunny Homes")

        question = chat.get_by_placeholder(re.compile("^Ask about listings"))
        question.fill(QUESTION)
        chat.get_by_role("button", name="Send").click()

        answer = chat.locator(".eb-turn.eb-bot").first
        expect(answer).to_contain_text("MLS# ATX1001", timeout=30_000)
        expect(answer).to_have_class(re.compile(r"\beb-done\b"))
        expect(chat.locator(".eb-turn.eb-user .eb-body").first).to_have_text(QUESTION)
        # Markdown arrived as HTML: the matches are a numbered list.
        expect(answer.locator("ol > li")).to_have_count(2)
        expect(question).to_have_value("")
        status = chat.locator(".eb-status")
        expect(status).to_contain_text(re.compile(r"Session \d+"))
        expect(status).to_contain_text(re.compile(r"Last answer: \d+ tokens, \d+ ms"))

        # Enter in the input sends too; an off-topic question is marked as unanswered.
        question.fill(OFF_TOPIC)
        question.press("Enter")
        expect(chat.locator(".eb-turn.eb-bot.eb-no-answer")).to_contain_text("no answer")
        expect(chat.locator(".eb-turn.eb-bot.eb-done")).to_have_count(2)

        # New session: marked in the transcript, and the status line follows.
        first_session = re.search(r"Session (\d+)", status.inner_text()).group(1)  # type: ignore[union-attr]
        chat.get_by_role("button", name="New session").click()
        marker = chat.locator(".eb-turn.eb-session")
        expect(marker).to_contain_text(re.compile(r"New session \d+"))
        new_session = re.search(r"\d+", marker.inner_text()).group(0)  # type: ignore[union-attr]
        assert new_session != first_session
        expect(status).to_contain_text(f"Session {new_session}")

        screenshot = DOCS_SCREENSHOT if UPDATE_DOCS else lab.root.parent / "chat-panel.png"
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        chat.screenshot(path=str(screenshot))
        assert screenshot.stat().st_size > 10_000
    except Exception:
        page.screenshot(path=str(lab.root.parent / "failure.png"))
        raise
    finally:
        page.close()
