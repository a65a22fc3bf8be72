"""The sync notebook in a real browser: JupyterLab 4 in headless Chromium, a 1400 px window.

A notebook made from ``notebooks/01_sync_mls_spreadsheet.ipynb`` (its own 200-listing emulator,
this week's export, the plan, its figure, an apply with failed updates, a cleanup) runs in
JupyterLab. Then, in the light and the dark theme, the page is measured: the plan's "after"
column lies inside the output area (nothing cut off at the right), the marked values read against
the page, the report puts its failures first and its progress bar ends in the warning colour.

With ``ESTATEBOT_UPDATE_DOCS=1`` the outputs are saved as the README's pictures under ``docs/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from labpages import REPO, open_when_idle, picture_path, use_menu, write_code_notebook

pytestmark = pytest.mark.browser

ROOT = REPO
WIDTH, HEIGHT = 1400, 1000
THEMES = ("JupyterLab Light", "JupyterLab Dark")

CELLS: dict[str, str] = {
    "connect": (
        "import contextlib, tempfile\n"
        "from pathlib import Path\n"
        "import estatebot as eb\n"
        "\n"
        f"ROOT = Path({str(ROOT)!r})\n"
        "RUN = Path(tempfile.mkdtemp(prefix='sync-'))\n"
        "resources = contextlib.ExitStack()\n"
        "server = resources.enter_context(eb.emulator.running())\n"
        "client = resources.enter_context(\n"
        "    eb.Client(base_url=server.base_url, api_key=server.api_key,"
        " session_key=server.session_key)\n"
        ")\n"
        "serial = server.serial\n"
        "remote = eb.pull_listings(client, serial, progress=False)\n"
        "sheet = eb.read_sheet(ROOT / 'sample_data' / 'mls_export_week2.xlsx',"
        " defaults={'CurrencySymbol': '$'})\n"
        "plan = eb.plan_sync(sheet, remote, key='MLSNumber', delete_missing=True,"
        " blank_unknown_location=True)"
    ),
    "plan": "plan",
    "plan-plot": "plan.plot()",
    "apply": (
        "# Some updates fail on the service (and are not retried by this client), so the\n"
        "# report has failures to show.\n"
        "server.faults.only = {'RealEstateUpdate'}\n"
        "server.faults.fail_rate = 0.3\n"
        "flaky = resources.enter_context(eb.Client(base_url=server.base_url,"
        " api_key=server.api_key, session_key=server.session_key, max_retries=0))\n"
        "report = plan.apply(flaky, serial, journal=RUN / 'sync.journal',"
        " backup=RUN / 'backup.json', progress=True)\n"
        "server.faults.clear()\n"
        "report"
    ),
    "cleanup": (
        "cleanup = eb.plan_cleanup(eb.pull_listings(client, serial, progress=False),"
        " status=('Sold',), min_days_on_market=120)\n"
        "cleanup"
    ),
    "cleanup-plot": "cleanup.plot()",
    "end": "resources.close()\nprint('ALL-DONE')",
}


def write_notebook(root: Path) -> str:
    return write_code_notebook(root / "sync.ipynb", CELLS)


def output_of(page: Any, name: str) -> Any:
    """The output area of the cell ``name`` (cells are in the order of CELLS)."""
    index = list(CELLS).index(name)
    return page.locator(".jp-NotebookPanel .jp-Cell").nth(index).locator(".jp-OutputArea")


# Measured in the page: each box's right edge, and the contrast of the marked text.
MEASURE = """
(area) => {
  const right = area.getBoundingClientRect().right;
  const after = [...area.querySelectorAll("td.eb-after")].map(c => c.getBoundingClientRect().right);
  const boxes = [...area.querySelectorAll(".eb-scroll")].map(b => ({
    right: b.getBoundingClientRect().right, overflow: b.scrollWidth - b.clientWidth}));
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  let node = area, bg = "rgba(0, 0, 0, 0)";
  while (node && (bg === "rgba(0, 0, 0, 0)" || bg === "transparent")) {
    bg = getComputedStyle(node).backgroundColor; node = node.parentElement;
  }
  const ins = area.querySelector("td.eb-after ins");
  const fg = ins ? getComputedStyle(ins).color : "rgb(0, 0, 0)";
  const [a, b] = [lum(rgb(fg)), lum(rgb(bg))].sort((x, y) => y - x);
  return {right, after, boxes, contrast: (a + 0.05) / (b + 0.05)};
}
"""


def check_plan_fits(output: Any) -> None:
    output.scroll_into_view_if_needed()
    found = output.locator(".eb-view").evaluate("(v) => v.closest('.jp-OutputArea')")
    assert found is not None
    measured = output.element_handle().evaluate(MEASURE)
    assert measured["after"], "no after cells in the plan view"
    for right in measured["after"]:
        assert right <= measured["right"] + 1, (right, measured["right"])
    for box in measured["boxes"]:
        assert box["right"] <= measured["right"] + 1
        assert box["overflow"] <= 1, "a table wider than its box"
    assert measured["contrast"] >= 4.5, measured["contrast"]


def save(locator: Any, name: str, fallback: Path) -> None:
    target = picture_path(name, fallback)
    locator.scroll_into_view_if_needed()
    locator.screenshot(path=str(target))
    assert target.stat().st_size > 5_000


def test_the_sync_notebook_reads_well_in_both_themes(browser: Any, lab: Any) -> None:
    from playwright.sync_api import expect

    name = write_notebook(lab.root)
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    try:
        open_when_idle(page, lab.page(name))
        use_menu(page, "Run", "Run All Cells")
        expect(output_of(page, "end")).to_contain_text("ALL-DONE", timeout=180_000)

        plan = output_of(page, "plan")
        expect(plan.locator(".eb-title")).to_have_text("Sync plan")
        expect(plan.locator(".eb-chip.eb-update")).to_contain_text("21 update")
        expect(plan.locator("details[data-action='drift']")).not_to_have_attribute("open", "")
        report = output_of(page, "apply")
        expect(report.locator(".eb-retry-call")).to_contain_text("sync.journal")
        text = report.inner_text()
        assert text.index("Failed") < text.index("Done")
        expect(report.locator(".progress-bar-warning")).to_have_count(1)
        cleanup = output_of(page, "cleanup")
        expect(cleanup.locator(".eb-title")).to_have_text(
            "Cleanup: Sold, or on the market 120 days or more"
        )
        expect(output_of(page, "plan-plot").locator("img")).to_have_count(1)

        shots = lab.root.parent / "shots"
        for theme in THEMES:
            page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
            if theme != THEMES[0]:
                use_menu(page, "Settings", "Theme", theme)
            light = "true" if theme.endswith("Light") else "false"
            expect(page.locator("body")).to_have_attribute("data-jp-theme-light", light)
            page.wait_for_timeout(500)  # the theme's style sheet applied
            check_plan_fits(plan)
            # Taller, not wider, for the pictures: a long output whole, under no toolbar.
            page.set_viewport_size({"width": WIDTH, "height": 2400})
            suffix = "light" if light == "true" else "dark"
            save(plan, f"plan-{suffix}.png", shots)
            save(output_of(page, "plan-plot"), f"plan-plot-{suffix}.png", shots)
            save(report, f"apply-report-{suffix}.png", shots)
            save(cleanup, f"cleanup-{suffix}.png", shots)
            save(output_of(page, "cleanup-plot"), f"cleanup-plot-{suffix}.png", shots)
    except Exception:
        page.screenshot(path=str(lab.root.parent / "failure.png"))
        raise
    finally:
        page.close()
