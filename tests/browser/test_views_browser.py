"""Every table view and the chat panel as a person sees them: JupyterLab 4 in headless Chromium.

One notebook shows each view against the emulator: a sync plan (creates, updates, deletes and
values held back), its apply report with failed updates, a cleanup plan and its report with
failed deletes, chat test results on a misstating emulator (failing cases with ``why`` and
``facts``), the comparison of two chat runs, and a fact-checked chat panel with a fact-check badge
and a no-answer reply. Then, in the light and the dark theme, at 900 and 1400 px wide (and 1400
with the left side bar open):

* the cells that carry the decision (``eb-decide``: after, change, why, facts, outcome, Code and
  Message) lie inside the output's visible box, and no table is wider than its box;
* no word and no number is broken across lines, and no view breaks text anywhere
  (``overflow-wrap: anywhere`` / ``word-break: break-all``); number cells do not wrap;
* every text, in every view and in the panel, has the contrast WCAG AA asks (``tests/contrast.py``).

The pictures are saved with :func:`labpages.picture_path` (``docs/images`` with
``ESTATEBOT_UPDATE_DOCS=1``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from contrast import contrast_failures, contrast_ratio, contrast_report
from labpages import (
    REPO,
    THEMES,
    open_when_idle,
    picture_path,
    set_theme,
    use_menu,
    write_code_notebook,
)

pytestmark = pytest.mark.browser

HEIGHT = 1000
#: (width, left side bar open): the widths the issue names.
LAYOUTS = ((900, False), (1400, False), (1400, True))

CELLS: dict[str, str] = {
    "connect": (
        "import contextlib, tempfile\n"
        "from pathlib import Path\n"
        "import openpyxl\n"
        "import estatebot as eb\n"
        "\n"
        f"ROOT = Path({str(REPO)!r})\n"
        "RUN = Path(tempfile.mkdtemp(prefix='views-'))\n"
        "resources = contextlib.ExitStack()\n"
        "\n"
        "def connect(server, **options):\n"
        "    return resources.enter_context(eb.Client(base_url=server.base_url,"
        " api_key=server.api_key, session_key=server.session_key, **options))\n"
        "\n"
        "server = resources.enter_context(eb.emulator.running())\n"
        "client, serial = connect(server), server.serial\n"
        "# This week's export with two ZIP codes typed as numbers (their leading zero lost):\n"
        "# the reader flags them and the plan holds them back.\n"
        "book = openpyxl.load_workbook(ROOT / 'sample_data' / 'mls_export_week2.xlsx')\n"
        "rows = book.active\n"
        "at = [c.value for c in rows[1]].index('PostalCode')\n"
        "zips = [r[at] for r in rows.iter_rows(min_row=2) if str(r[at].value).startswith('0')]\n"
        "for cell in zips[:2]:\n"
        "    cell.value = int(cell.value)\n"
        "book.save(RUN / 'week2.xlsx')\n"
        "sheet = eb.read_sheet(RUN / 'week2.xlsx', defaults={'CurrencySymbol': '$'},"
        " progress=False)\n"
        "remote = eb.pull_listings(client, serial, progress=False)\n"
        "plan = eb.plan_sync(sheet, remote, key='MLSNumber', delete_missing=True,"
        " blank_unknown_location=True)"
    ),
    "plan": "plan",
    "apply": (
        "server.faults.only = {'RealEstateUpdate'}\n"
        "server.faults.fail_rate = 0.3\n"
        "flaky = connect(server, max_retries=0)\n"
        "report = plan.apply(flaky, serial, journal=RUN / 'sync.journal',"
        " backup=RUN / 'backup.json', progress=False)\n"
        "server.faults.clear()\n"
        "report"
    ),
    "cleanup": (
        "cleanup = eb.plan_cleanup(eb.pull_listings(client, serial, progress=False),"
        " status=('Sold',), min_days_on_market=120)\n"
        "cleanup"
    ),
    "cleanup-report": (
        "# The deletes go in one request: it fails, and the report lists them not done.\n"
        "server.faults.only = {'RealEstateDelete'}\n"
        "server.faults.fail_rate = 1.0\n"
        "cleaned = cleanup.apply(flaky, serial, journal=RUN / 'cleanup.journal',"
        " backup=RUN / 'cleanup-backup.json', progress=False)\n"
        "server.faults.clear()\n"
        "cleaned"
    ),
    "cleanup-named": (
        "# The same report with each listing's MLS number and address, from the plan's\n"
        "# operations (a cleanup goes by NewOaks ID, which tells a person nothing).\n"
        "from IPython.display import HTML\n"
        "from estatebot.listings.sync.report.report_html import listing_names, render_report\n"
        "HTML(render_report(title=cleaned.title, summary=str(cleaned.summary()),"
        " counts=cleaned.counts(), frame=cleaned.frame, where=[], notes=cleaned.notes,"
        " retry_call=cleaned.retry_call, names=listing_names(cleanup.operations())))"
    ),
    "chat-results": (
        "cases = ROOT / 'sample_data' / 'chat_tests.xlsx'\n"
        "liar = resources.enter_context(eb.emulator.running(hallucinate_rate=0.35,"
        " fault_seed=1))\n"
        "liar_client = connect(liar)\n"
        "grounded = eb.run_chat_tests(liar_client, liar.serial, cases, concurrency=4,"
        " progress=False)\n"
        "grounded"
    ),
    "compare": (
        "honest = resources.enter_context(eb.emulator.running())\n"
        "first = eb.run_chat_tests(connect(honest), honest.serial, cases, concurrency=4,"
        " progress=False)\n"
        "eb.compare_chat_runs(first, grounded)"
    ),
    "panel": (
        "chat = eb.ChatPanel(liar_client, liar.serial, fact_check=True,"
        " title='Fact-checked chat')\n"
        "for question in ('3 bedroom homes in Austin under $700k?', 'homes for sale in Denver',"
        " 'Do you have castles on the moon?'):\n"
        "    await chat.ask(question)\n"
        "chat"
    ),
    "prices": "plan.view(action='update', field='price')",
    "fleet": (
        "import os\n"
        "from estatebot.sample.fleet_sample import write_fleet_sample\n"
        "fleet_server = resources.enter_context(eb.emulator.running(chatbots=6))\n"
        "os.environ.update(ESTATEBOT_BASE_URL=fleet_server.base_url,"
        " ESTATEBOT_API_KEY=fleet_server.api_key, ESTATEBOT_SESSION_KEY=fleet_server.session_key)\n"
        "sample = write_fleet_sample(RUN / 'fleet', chatbots=6, changed=0.1)\n"
        "# One chatbot names a key variable nobody set: its row says why, the others are planned.\n"
        "lines = sample.manifest.read_text().splitlines()\n"
        "lines = [lines[0] + ',api_key_env'] + [line + (',OFFICE_7_API_KEY' if n == 3 else ',')"
        " for n, line in enumerate(lines[1:], 1)]\n"
        "sample.manifest.write_text('\\n'.join(lines) + '\\n')\n"
        "fleet_plan = eb.plan_fleet(sample.manifest, blank_unknown_location=True, progress=False)\n"
        "fleet_plan"
    ),
    "fleet-report": (
        "fleet_report = fleet_plan.apply(runs_dir=RUN / 'runs', progress=False)\nfleet_report"
    ),
    "fleet-chat": (
        "fleet_chat = eb.run_fleet_chat_tests(sample.manifest, sample.chat_tests, progress=False)\n"
        "fleet_chat"
    ),
    "end": "print('ALL-DONE')",
}

#: The views checked, by picture name: the cell that shows each, and its root element.
VIEWS: dict[str, tuple[str, str]] = {
    "plan": ("plan", ".eb-view"),
    "apply-report": ("apply", ".eb-view"),
    "cleanup": ("cleanup", ".eb-view"),
    "cleanup-report": ("cleanup-named", ".eb-view"),
    "chat-results": ("chat-results", ".eb-results"),
    "compare": ("compare", ".eb-compare"),
    "fleet-plan": ("fleet", ".eb-view"),
    "fleet-report": ("fleet-report", ".eb-view"),
    "fleet-chat": ("fleet-chat", ".eb-view"),
}
PICTURED = (
    "plan", "apply-report", "cleanup", "cleanup-report", "chat-results", "compare", "fleet-plan",
    "fleet-report",
    "fleet-chat",
)  # fmt: skip


def output_of(page: Any, name: str) -> Any:
    """The output area of the cell ``name`` (cells are in the order of CELLS)."""
    index = list(CELLS).index(name)
    return page.locator(".jp-NotebookPanel .jp-Cell").nth(index).locator(".jp-OutputArea")


# ---------------------------------------------------------------------------- measured in the page

#: Each decision cell's horizontal extent against the visible box it must lie in: the output
#: area, narrowed by every ancestor that clips (a table's own scrolling box) and by the window;
#: and each box that scrolls sideways, with how far.
FIT_JS = """
(root) => {
  const DECIDE = ".eb-decide, td.eb-after";
  const clipOf = (el) => {
    let left = 0, right = window.innerWidth;
    for (let e = el.parentElement; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.overflowX !== "visible") {
        const r = e.getBoundingClientRect();
        left = Math.max(left, r.left); right = Math.min(right, r.right);
      }
      if (e.classList.contains("jp-OutputArea")) {
        const r = e.getBoundingClientRect();
        left = Math.max(left, r.left); right = Math.min(right, r.right);
        break;
      }
    }
    return {left, right};
  };
  // What a closed <details> holds is not on the screen (a fleet's views fold each chatbot's
  // own plan or report, each checked as a view of its own).
  const seen = (e) => e.getClientRects().length
    && !e.closest("details:not([open]) > :not(summary)");
  const cells = [...root.querySelectorAll(DECIDE)].filter(seen);
  const outside = cells.map(c => {
    const r = c.getBoundingClientRect(), box = clipOf(c);
    return {text: c.innerText.slice(0, 60), left: r.left, right: r.right, box};
  }).filter(m => m.right > m.box.right + 1 || m.left < m.box.left - 1);
  const scrolled = [root, ...root.querySelectorAll("*")]
    .filter(e => seen(e) && e.scrollWidth > e.clientWidth + 1
                 && getComputedStyle(e).overflowX !== "visible")
    .map(e => ({cls: e.className, over: e.scrollWidth - e.clientWidth}));
  let area = root.closest(".jp-OutputArea-output");
  const areaOver = area ? area.scrollWidth - area.clientWidth : 0;
  return {cells: cells.length, outside, scrolled, areaOver};
}
"""

#: Words and numbers split across lines (each a range whose boxes lie on more than one line),
#: the elements whose style lets text break inside a word, and number cells that may wrap.
BREAKS_JS = r"""
(root) => {
  const split = [];
  const tokens = /(?<![\p{L}\p{N}])\p{L}{2,}(?![\p{L}\p{N}])|[$€£]?[−+-]?\d[\d,.]*\d%?|\d+/gu;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!el || el.closest("style, script") || !el.getClientRects().length) continue;
    // A link or code has no words: it may break at the edge of its column.
    if (el.closest(".eb-url, code, a")) continue;
    for (const m of node.nodeValue.matchAll(tokens)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].filter(r => r.width > 0)
                           .map(r => Math.round(r.top)));
      if (tops.size > 1) split.push({token: m[0], text: node.nodeValue.slice(0, 60)});
    }
  }
  const anywhere = [root, ...root.querySelectorAll("*")].filter(e => {
    const s = getComputedStyle(e);
    return s.overflowWrap === "anywhere" || s.wordBreak === "break-all";
  }).map(e => e.tagName + "." + [...e.classList].join("."));
  const wrapping = [...root.querySelectorAll("td.eb-num, .eb-num")].filter(e => {
    const s = getComputedStyle(e);
    return e.getClientRects().length && s.whiteSpace !== "nowrap" && s.whiteSpace !== "pre";
  }).map(e => e.innerText.slice(0, 40));
  return {split, anywhere: [...new Set(anywhere)], wrapping};
}
"""


def set_left_bar(page: Any, open_: bool) -> None:
    """Open or close JupyterLab's left side bar (its file browser)."""
    stack = page.locator("#jp-left-stack")
    if stack.is_visible() != open_:
        use_menu(page, "View", "Appearance", "Show Left Sidebar")
    if open_:
        page.locator("#jp-left-stack").wait_for(state="visible")
    else:
        page.locator("#jp-left-stack").wait_for(state="hidden")
    page.wait_for_timeout(300)  # the notebook laid out again


def lay_out(page: Any, width: int, left_bar: bool, height: int = HEIGHT) -> None:
    page.set_viewport_size({"width": width, "height": height})
    set_left_bar(page, left_bar)


def view_root(page: Any, name: str) -> Any:
    cell, selector = VIEWS[name]
    return output_of(page, cell).locator(selector).first


def show(page: Any, root: Any) -> None:
    """Scroll ``root`` into sight and let the page draw it: JupyterLab skips drawing the cells
    out of sight (``content-visibility``) until the frame after they come into it."""
    root.scroll_into_view_if_needed()
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def where(theme: str, width: int, left_bar: bool) -> str:
    return f"{theme} at {width} px{' with the side bar' if left_bar else ''}"


# ---------------------------------------------------------------------------- the notebook


@pytest.fixture(scope="module")
def views_page(browser: Any, lab: Any) -> Iterator[Any]:
    """The notebook of every view, run to its end, in an open page."""
    from playwright.sync_api import expect

    name = write_code_notebook(lab.root / "views.ipynb", CELLS)
    page = browser.new_page(viewport={"width": 1400, "height": HEIGHT})
    try:
        open_when_idle(page, lab.page(name))
        use_menu(page, "Run", "Run All Cells")
        expect(output_of(page, "end")).to_contain_text("ALL-DONE", timeout=300_000)
        yield page
    except Exception:
        page.screenshot(path=str(lab.root.parent / "views-failure.png"))
        raise
    finally:
        page.close()


def test_the_notebook_shows_every_view(views_page: Any) -> None:
    from playwright.sync_api import expect

    page = views_page
    plan = view_root(page, "plan")
    for action in ("create", "update", "delete", "held back"):
        expect(plan.locator(f"details[data-action='{action}']")).to_have_count(1)
    expect(view_root(page, "apply-report").locator("[data-section='failed']")).to_have_count(1)
    # A cleanup goes by NewOaks ID: its listings are named by MLS number and address too, in
    # the plan and in the report.
    for name in ("cleanup", "cleanup-report"):
        view = view_root(page, name)
        expect(view.locator("th")).to_contain_text(["MLS#", "address"])
        expect(view.locator("td.eb-mls").first).to_have_text(re.compile(r"^[A-Z]{2}\d{7}$"))
        expect(view.locator("td.eb-address").first).to_have_text(re.compile(r"\w.*, \w"))
    expect(view_root(page, "cleanup-report").locator("[data-section='failed']")).to_have_count(1)
    results = view_root(page, "chat-results")
    expect(results.locator("tr.eb-fail td.eb-why").first).not_to_be_empty()
    expect(results.locator("td.eb-facts .eb-bad").first).to_contain_text("contradicted")
    expect(view_root(page, "compare").locator(".eb-change").first).to_be_visible()
    chat = output_of(page, "panel").locator(".eb-chat")
    expect(chat.locator(".estatebot-factcheck").first).to_be_visible()
    expect(chat.locator(".eb-badge-no-answer")).to_have_count(1)
    # field="price" is the listing's price: never UnitAreaPrice, which only contains the word.
    prices = output_of(page, "prices").locator("td.eb-field")
    expect(prices.first).to_be_visible()
    shown = set(prices.all_inner_texts())
    assert "SalePrice" in shown
    assert shown <= {"SalePrice", "RentPrice"}, shown
    # The fleet's table: a row per chatbot, each name a link to that chatbot's own plan.
    fleet = view_root(page, "fleet-plan")
    expect(fleet.locator("table.eb-table").first.locator("tbody > tr")).to_have_count(6)
    expect(fleet.locator("td.eb-decide").filter(has_text="OFFICE_7_API_KEY")).to_have_count(1)
    link = fleet.locator("a[href^='#eb-fleet-']").nth(1)
    target = fleet.locator(f"details{link.get_attribute('href')}")
    expect(target.locator("> summary")).to_contain_text(link.inner_text())


def test_decisions_stay_in_view_and_words_stay_whole(views_page: Any) -> None:
    page = views_page
    problems: list[str] = []
    for theme in THEMES:
        set_theme(page, theme)
        for width, left_bar in LAYOUTS:
            lay_out(page, width, left_bar)
            at = where(theme, width, left_bar)
            for name in VIEWS:
                root = view_root(page, name)
                show(page, root)
                fit = root.element_handle().evaluate(FIT_JS)
                if not fit["cells"]:
                    problems.append(f"{name}, {at}: no decision cells found")
                problems += [f"{name}, {at}: out of view {m}" for m in fit["outside"]]
                problems += [f"{name}, {at}: scrolls sideways {m}" for m in fit["scrolled"]]
                if fit["areaOver"] > 1:
                    problems.append(f"{name}, {at}: the output scrolls by {fit['areaOver']} px")
                breaks = root.element_handle().evaluate(BREAKS_JS)
                problems += [f"{name}, {at}: split {m}" for m in breaks["split"]]
                problems += [f"{name}, {at}: breaks anywhere in {m}" for m in breaks["anywhere"]]
                problems += [f"{name}, {at}: number wraps {m}" for m in breaks["wrapping"]]
    assert not problems, "\n".join(problems[:40])


def test_every_text_in_the_views_has_the_contrast_it_needs(views_page: Any) -> None:
    page = views_page
    # The page's formula is the one the unit tests hold (tests/unit/test_contrast_formula.py).
    pairs = [("#000000", "#ffffff"), ("#777777", "#ffffff"), ("rgb(245, 124, 0)", "#ffffff")]
    show(page, output_of(page, "plan"))
    measured = contrast_report(output_of(page, "plan"), pairs)["pairs"]
    expected = [contrast_ratio("#000000", "#ffffff"), contrast_ratio("#777777", "#ffffff")]
    expected.append(contrast_ratio("#f57c00", "#ffffff"))
    assert measured == pytest.approx(expected, abs=0.01)
    failures: list[str] = []
    for theme in THEMES:
        set_theme(page, theme)
        for width, left_bar in LAYOUTS:
            lay_out(page, width, left_bar)
            for name in VIEWS:
                root = view_root(page, name)
                show(page, root)
                report = contrast_report(root)
                assert report["checked"] > 10, (name, report["checked"])
                failures += [
                    f"{name}, {where(theme, width, left_bar)}: {f}" for f in contrast_failures(root)
                ]
    assert not failures, "\n".join(failures[:40])


def test_every_text_in_the_chat_panel_has_the_contrast_it_needs(views_page: Any) -> None:
    page = views_page
    lay_out(page, 1400, False)
    failures: list[str] = []
    for theme in THEMES:
        set_theme(page, theme)
        chat = output_of(page, "panel").locator(".eb-chat")
        show(page, chat)
        chat.locator(".estatebot-factcheck summary").first.click()  # its list open, checked too
        assert contrast_report(chat)["checked"] > 20
        failures += [f"panel, {theme}: {f}" for f in contrast_failures(chat)]
        chat.locator(".estatebot-factcheck summary").first.click()
    assert not failures, "\n".join(failures)


def test_pictures_of_each_view(views_page: Any, lab: Any) -> None:
    page = views_page
    scratch = lab.root.parent / "pictures"
    for theme in THEMES:
        set_theme(page, theme)
        for width in (900, 1400):
            # Taller, not wider: a long output whole, under no toolbar.
            lay_out(page, width, False, height=2400)
            for name in PICTURED:
                output = output_of(page, VIEWS[name][0])
                show(page, output)
                target = picture_path(f"{name}-{theme}-{width}.png", scratch)
                output.screenshot(path=str(target))
                assert target.stat().st_size > 5_000
                box = output.bounding_box()
                assert box is not None
                assert box["x"] + box["width"] <= width
            chat = output_of(page, "panel").locator(".eb-chat")
            show(page, chat)
            target = picture_path(f"chat-panel-{theme}-{width}.png", scratch)
            chat.screenshot(path=str(target))
            assert target.stat().st_size > 5_000
    lay_out(page, 1400, False)
