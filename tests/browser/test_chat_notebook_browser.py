"""The chat notebook (02) as a person runs it: JupyterLab in headless Chromium, Run All, then a
look at the page: the results table is never typeset by MathJax, the chat panel is still live
and answers, its controls fit from 600 px up, in the light and the dark theme."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from estatebot.emulator import running
from labpages import REPO, THEMES, idle_status, open_when_idle, picture_path, set_theme, use_menu

pytestmark = pytest.mark.browser

NOTEBOOK = REPO / "notebooks" / "02_chatbot_testing.ipynb"
QUESTION = "3 bedroom homes in Austin under $600k"


@pytest.fixture(scope="module")
def chat_emulator() -> Iterator[Any]:
    """The demo chatbot the notebook's test cases are written for (the ``lab`` fixture's kernel
    reaches it through ``ESTATEBOT_*``)."""
    with running(seed="demo") as server:
        yield server


def copy_notebook(root: Path) -> str:
    """Notebook 02 with its outputs cleared, next to the sample data it reads."""
    notebook = json.loads(NOTEBOOK.read_text())
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    (root / "02_chatbot_testing.ipynb").write_text(json.dumps(notebook))
    link = root / "sample_data"
    if not link.exists():
        link.symlink_to(REPO / "sample_data", target_is_directory=True)
    return "02_chatbot_testing.ipynb"


def fits(page: Any, inner: Any, outer: Any) -> bool:
    box, frame = inner.bounding_box(), outer.bounding_box()
    return bool(box and frame and box["x"] + box["width"] <= frame["x"] + frame["width"] + 0.5)


def test_run_all_leaves_a_live_panel_and_an_untypeset_results_table(
    browser: Any, lab: Any, chat_emulator: Any
) -> None:
    from playwright.sync_api import expect

    name = copy_notebook(lab.root)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    scratch = lab.root.parent
    try:
        open_when_idle(page, lab.page(name))
        status = idle_status(page)

        use_menu(page, "Run", "Run All Cells")
        results = page.locator(".eb-results")
        expect(results).to_be_visible(timeout=120_000)
        plot = page.locator(".jp-OutputArea-output img").last
        expect(plot).to_be_visible(timeout=120_000)
        # The last cells: a fact-checked panel on a misstating emulator, whose badges show.
        badge = page.locator(".eb-chat .estatebot-factcheck")
        expect(badge.first).to_be_visible(timeout=120_000)
        expect(status).to_be_visible(timeout=120_000)  # every cell has run

        # The answers quote prices: MathJax would typeset them, and must not have. (The text
        # itself, not its layout: a cell out of sight may not be laid out.)
        shown = results.text_content() or ""
        assert shown.count("$") >= 2
        assert "&#" not in shown  # escaped once: an apostrophe shows as itself
        expect(results).to_contain_text("PASS")
        expect(page.locator(".eb-results mjx-container, .eb-results .MathJax")).to_have_count(0)
        expect(page.locator(".eb-chat mjx-container, .eb-chat .MathJax")).to_have_count(0)
        expect(
            page.locator(".jp-OutputArea-output .jp-RenderedText[data-mime-type*=error]")
        ).to_have_count(0)

        # After Run All the panel is still there, and a question typed in it is answered.
        panels = page.locator(".eb-chat")
        expect(panels).to_have_count(2)  # the main panel, and the fact-checked one
        chat = panels.first
        checked = panels.last
        expect(checked.locator(".estatebot-factcheck").first).to_contain_text(
            re.compile(r"\d+ facts? not in your listings")
        )
        chat.scroll_into_view_if_needed()
        answered = chat.locator(".eb-turn.eb-bot.eb-done")
        before = answered.count()
        assert before >= 3  # the scripted conversation
        chat.get_by_placeholder(re.compile("^Ask about listings")).fill(QUESTION)
        chat.get_by_role("button", name="Send").click()
        expect(answered).to_have_count(before + 1, timeout=30_000)
        expect(answered.first).to_contain_text(re.compile(r"MLS# \w+"))
        expect(answered.first.locator(".eb-answer-meta")).to_contain_text(re.compile(r"\d+ ms|s"))

        for theme, label in THEMES.items():
            set_theme(page, label)
            # Theme colours reach the panel: its card is the theme's layout colour, not white.
            card = chat.evaluate("e => getComputedStyle(e).backgroundColor")
            page_bg = page.evaluate(
                "() => getComputedStyle(document.body)"
                ".getPropertyValue('--jp-layout-color1').trim()"
            )
            if theme == "dark":
                assert card not in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"), card
                assert page_bg.lower() not in ("white", "#ffffff", "#fff")
            chat.scroll_into_view_if_needed()
            chat.screenshot(path=str(picture_path(f"chat-panel-{theme}.png", scratch)))
            checked.scroll_into_view_if_needed()
            checked.locator(".estatebot-factcheck summary").first.click()  # open the details
            checked.screenshot(path=str(picture_path(f"chat-factcheck-{theme}.png", scratch)))
            checked.locator(".estatebot-factcheck summary").first.click()
            # The table is taller than the window: its top, headline and first cases.
            results.evaluate("e => e.scrollIntoView({block: 'start'})")
            box = results.bounding_box()
            assert box is not None
            page.screenshot(
                path=str(picture_path(f"chat-results-{theme}.png", scratch)),
                clip={
                    "x": box["x"],
                    "y": box["y"],
                    "width": box["width"],
                    "height": min(box["height"], 760.0),
                },
            )

        # The controls wrap rather than clip, from a narrow window up.
        for width in (1400, 900, 600):
            page.set_viewport_size({"width": width, "height": 1000})
            page.wait_for_timeout(300)
            chat.scroll_into_view_if_needed()
            for button in ("New session", "Send", "Stop"):
                control = chat.get_by_role("button", name=button)
                assert fits(page, control, chat), f"{button} clipped at {width} px"
    except Exception:
        page.screenshot(path=str(scratch / "chat-notebook-failure.png"))
        raise
    finally:
        page.close()
