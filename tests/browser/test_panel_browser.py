"""ChatPanel end to end: JupyterLab in headless Chromium, the emulator behind a real kernel."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from labpages import open_when_idle, picture_path, write_code_notebook

pytestmark = pytest.mark.browser

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
    return write_code_notebook(root / "panel.ipynb", {"chat-panel": source})


def test_a_question_typed_in_the_browser_is_answered_in_the_panel(
    browser: Any, lab: Any, chat_emulator: Any
) -> None:
    from playwright.sync_api import expect

    name = write_notebook(lab.root, chat_emulator.serial)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    try:
        open_when_idle(page, lab.page(name))

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

        screenshot = picture_path("chat-panel.png", lab.root.parent)
        chat.screenshot(path=str(screenshot))
        assert screenshot.stat().st_size > 10_000
    except Exception:
        page.screenshot(path=str(lab.root.parent / "failure.png"))
        raise
    finally:
        page.close()
