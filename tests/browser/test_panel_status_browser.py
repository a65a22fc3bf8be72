"""The chat panel's status as a person sees it in JupyterLab (headless Chromium), in the light
and the dark theme at 900 and 1400 px: Send is disabled while an answer streams and while a rate
limit holds (counting down on it); once sending works again no card keeps a countdown or a Retry;
a stream cut off midway is told in words; a click made while a cell runs shows at once as
waiting, and its question says how long it waited; the panel never scrolls sideways; and every
text in each of these states has the contrast WCAG AA asks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from contrast import contrast_failures
from estatebot.emulator import running
from labpages import THEMES, open_when_idle, picture_path, set_theme, write_code_notebook

pytestmark = pytest.mark.browser

LONG = "show me every home for sale under $5,000,000"
#: How long the busy cell keeps the kernel, in seconds.
BUSY_S = 5
#: The rate limit's window, in seconds: the countdown is seen, then waited out.
LIMIT_S = 6

# Every element of the panel that scrolls sideways (and the output area holding it).
SIDEWAYS = """root => {
  const found = [];
  const boxes = [root, ...root.querySelectorAll('*')];
  const output = root.closest('.jp-OutputArea-output');
  if (output) boxes.push(output);
  for (const box of boxes) {
    const overflow = getComputedStyle(box).overflowX;
    const scrolls = box === root || overflow === 'auto' || overflow === 'scroll';
    if (scrolls && box.scrollWidth > box.clientWidth) {
      found.push(`${box.className}: ${box.scrollWidth} > ${box.clientWidth}`);
    }
  }
  return found;
}"""


@pytest.fixture(scope="module")
def chat_emulator() -> Iterator[Any]:
    """The emulator, streaming slowly enough that Send is seen disabled while an answer arrives
    (the ``lab`` fixture's kernels reach it through ``ESTATEBOT_*``)."""
    with running(seed="small", stream_delay_ms=40) as server:
        yield server


def write_notebook(root: Any, serial: str, name: str) -> str:
    """A notebook with a panel cell and a cell that keeps the kernel busy."""
    panel = (
        "from estatebot.api.client import Client\n"
        "from estatebot.chat.panel import ChatPanel\n"
        "\n"
        f'panel = ChatPanel(Client(), "{serial}", title="Sunny Homes", height="640px")\n'
        "panel"
    )
    busy = f"import time\n\ntime.sleep({BUSY_S})  # a long cell: the kernel is busy"
    return write_code_notebook(root / name, {"chat-panel": panel, "busy": busy})


def no_sideways_scrolling(chat: Any, where: str) -> None:
    found = chat.evaluate(SIDEWAYS)
    assert not found, f"{where}: {found}"


def readable(chat: Any, where: str) -> None:
    """Every text of the panel, the disabled Send's countdown included, has the contrast WCAG AA
    asks (``tests/contrast.py``)."""
    failures = contrast_failures(chat)
    assert not failures, f"{where}: {failures[:5]}"


def countdown(send: Any) -> int:
    match = re.search(r"Send \((\d+) s\)", send.inner_text())
    assert match, send.inner_text()
    return int(match.group(1))


@pytest.mark.parametrize("width", [1400, 900])
@pytest.mark.parametrize("theme", list(THEMES))
def test_the_panel_status_is_always_current(
    browser: Any, lab: Any, chat_emulator: Any, theme: str, width: int
) -> None:
    from playwright.sync_api import expect

    faults = chat_emulator.faults
    name = write_notebook(lab.root, chat_emulator.serial, f"status-{theme}-{width}.ipynb")
    page = browser.new_page(viewport={"width": width, "height": 1000})
    scratch = lab.root.parent
    try:
        # A workspace of its own: only this notebook is open (not the ones of the runs before).
        workspace = name.removesuffix(".ipynb")
        open_when_idle(page, f"{lab.url}/lab/workspaces/{workspace}/tree/{name}?token={lab.token}")
        set_theme(page, THEMES[theme])
        page.locator(".jp-NotebookPanel .jp-Cell .cm-content").first.click()
        page.keyboard.press("Shift+Enter")  # shows the panel; the busy cell is selected next
        chat = page.locator(".eb-chat")
        expect(chat).to_be_visible(timeout=60_000)
        send = chat.locator("button.eb-send")
        question = chat.get_by_placeholder(re.compile("^Ask about listings"))
        answers = chat.locator(".eb-turn.eb-bot.eb-done")
        failed = chat.locator(".eb-turn.eb-bot.eb-failed")
        no_sideways_scrolling(chat, f"empty panel at {width} px")

        # A click made while a cell runs: the page says at once that it waits for the kernel;
        # once the cell ends the question goes out and its card says how long it waited. (The
        # panel's first click: the kernel reads it on the shell that runs cells. JupyterLab 4.4+
        # with ipykernel 7 may read later clicks on a subshell at once.)
        cells = page.locator(".jp-NotebookPanel .jp-Cell")
        cells.nth(1).locator(".cm-content").click()
        page.keyboard.press("Shift+Enter")
        expect(cells.nth(1).locator(".jp-InputPrompt")).to_contain_text("*")
        question.fill("Hello!")
        send.click()
        note = chat.locator(".eb-kernel-wait")
        expect(note).to_be_visible(timeout=3_000)
        expect(note).to_contain_text("Waiting for the kernel")
        expect(chat.locator(".eb-turn")).to_have_count(0)  # nothing reached the kernel yet
        readable(chat, f"waiting, {theme} at {width} px")
        if (theme, width) == ("light", 900):
            chat.screenshot(path=str(picture_path("chat-panel-waiting-light-900.png", scratch)))
        waited = chat.locator(".eb-turn.eb-user .eb-kernel-waited")
        expect(waited).to_have_text(
            re.compile(r"sent while the kernel was busy; waited \d+ s"), timeout=BUSY_S * 4_000
        )
        expect(note).to_be_hidden()
        expect(answers).to_have_count(1, timeout=30_000)
        if (theme, width) == ("light", 900):
            chat.screenshot(path=str(picture_path("chat-panel-waited-light-900.png", scratch)))

        # (a) Streaming: Send is disabled until the answer is complete, then enabled again.
        question.fill(LONG)
        send.click()
        expect(send).to_be_disabled(timeout=10_000)
        expect(chat.locator(".eb-turn.eb-bot.eb-streaming")).to_have_count(1, timeout=10_000)
        expect(send).to_be_disabled()
        expect(answers).to_have_count(2, timeout=30_000)
        expect(send).to_be_enabled()
        expect(send).to_have_text(re.compile(r"^\s*Send\s*$"))

        # (d) A stream cut off midway: plain words, how much had arrived, details folded.
        faults.drop_rate = 1.0
        faults.only = {"ClientAsk"}
        question.fill(LONG)
        send.click()
        expect(failed).to_have_count(1, timeout=30_000)
        # Pinned by its number: the transcript lists the newest turn first.
        dropped = chat.locator(f'.eb-turn[data-turn="{failed.first.get_attribute("data-turn")}"]')
        headline = dropped.locator(".eb-error-title")
        expect(headline).to_have_text(
            re.compile(
                r"^The connection to the service was lost while the answer was arriving; "
                r"[\d,]+ characters? had arrived$"
            )
        )
        details = dropped.locator("details.eb-error-details")
        expect(details).to_have_count(1)
        assert details.get_attribute("open") is None  # folded
        expect(details.locator("code")).to_be_hidden()
        assert "peer closed" not in dropped.inner_text()  # not in sight while folded
        assert "APIConnectionError" in (details.text_content() or "")
        expect(dropped.locator(".eb-badge-error")).to_have_count(1)
        expect(chat.locator(".eb-retry-button")).to_have_count(1)
        faults.clear()

        # (b) A rate limit: a new limit lets one more through, then refuses.
        faults.rate_limit = (1, LIMIT_S)
        question.fill("Hello!")
        send.click()
        expect(answers).to_have_count(3, timeout=30_000)
        # That answer made the dropped stream's card past: greyed, no Retry.
        expect(dropped).to_have_class(re.compile(r"\beb-past\b"))
        expect(dropped.locator(".eb-error-title")).to_have_text(
            re.compile(r"^Failed at \d\d:\d\d:\d\d: The connection to the service was lost")
        )
        expect(chat.locator(".eb-retry-button")).to_have_count(0)
        question.fill("Hello again!")
        send.click()
        limited = chat.locator(".eb-turn.eb-bot.eb-failed:not(.eb-past)")
        expect(limited).to_have_count(1, timeout=30_000)
        expect(limited.locator(".eb-error-title")).to_have_text(
            re.compile(r"^Rate limited: retry in \d+ s$")
        )
        expect(send).to_be_disabled()
        expect(send).to_have_text(re.compile(r"^\s*Send \(\d+ s\)\s*$"))
        first = countdown(send)
        limited_picture = picture_path(f"chat-panel-limited-{theme}-{width}.png", scratch)
        chat.screenshot(path=str(limited_picture))
        readable(chat, f"rate limited, {theme} at {width} px")
        page.wait_for_timeout(1_600)
        assert countdown(send) < first  # a live countdown, on the button
        cards = failed.count()
        question.fill("Still there?")
        question.press("Enter")  # Enter while limited adds nothing
        page.wait_for_timeout(800)
        expect(failed).to_have_count(cards)
        expect(question).to_have_value("Still there?")  # kept, for when sending works

        # The limit is lifted and its time is up: Send is back; an answer makes the card past.
        faults.rate_limit = None
        expect(send).to_be_enabled(timeout=(LIMIT_S + 5) * 1_000)
        expect(send).to_have_text(re.compile(r"^\s*Send\s*$"))
        question.fill("Hello!")
        send.click()
        expect(answers).to_have_count(4, timeout=30_000)
        expect(send).to_be_enabled()
        expect(chat.locator(".eb-status")).not_to_contain_text("answering")
        expect(chat.locator(".eb-turn.eb-bot.eb-failed:not(.eb-past)")).to_have_count(0)
        expect(chat.locator(".eb-turn.eb-failed.eb-past")).to_have_count(2)
        expect(chat.locator(".eb-retry-button")).to_have_count(0)
        past_limit = chat.locator(".eb-turn.eb-past").first
        expect(past_limit.locator(".eb-error-title")).to_have_text(
            re.compile(r"^Was rate limited at \d\d:\d\d:\d\d$")
        )
        shown = chat.inner_text()
        assert not re.search(r"retry in \d+ s|you can retry now", shown), shown
        assert "Rate limited" not in chat.locator(".eb-status").inner_text()
        page.wait_for_timeout(1_200)
        assert chat.inner_text() == shown  # nothing ticks any more

        details.evaluate("d => { d.open = true; d.scrollIntoView(); }")  # read, once opened
        expect(details.locator("code")).to_be_visible()
        readable(chat, f"past failures, {theme} at {width} px")
        details.evaluate("d => { d.open = false; }")

        # (c) No sideways scroll bar, now that the transcript is full, at every width.
        no_sideways_scrolling(chat, f"{theme} at {width} px")
        chat.scroll_into_view_if_needed()
        picture = picture_path(f"chat-panel-status-{theme}-{width}.png", scratch)
        chat.screenshot(path=str(picture))
        assert picture.stat().st_size > 10_000
        for narrower in (900, 600):
            if narrower < width:
                page.set_viewport_size({"width": narrower, "height": 1000})
                page.wait_for_timeout(400)
                no_sideways_scrolling(chat, f"{theme} at {narrower} px")
    except Exception:
        page.screenshot(path=str(scratch / f"panel-status-failure-{theme}-{width}.png"))
        raise
    finally:
        faults.clear()
        page.close()
