"""The figures as a person sees them: JupyterLab 4 in headless Chromium, light and dark, 900 and
1400 px wide. A notebook shows ``results.plot()`` (chat tests), ``plan.plot()`` (a sync plan)
and a cleanup plan's ``plot()``. For each, in each theme and width:

* the image JupyterLab shows (the PNG in the ``<img>``'s data URL, decoded here) has no
  background of its own: its corners and most of it are see-through;
* on the page, the figure's corner is the page's own colour (the theme shows through);
* the image lies inside the output area and the area has nothing to scroll sideways; at 900 px
  it is shown at its own size or nearly (its 10 pt text is not scaled down to unreadable).

The pictures are saved with :func:`labpages.picture_path` as ``<plot>-<theme>-<width>.png``.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np
import pytest
from PIL import Image

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
WIDTHS = (900, 1400)

CELLS: dict[str, str] = {
    "connect": (
        "import contextlib\n"
        "from pathlib import Path\n"
        "import estatebot as eb\n"
        "\n"
        f"ROOT = Path({str(REPO)!r})\n"
        "resources = contextlib.ExitStack()\n"
        "\n"
        "def connect(server):\n"
        "    return resources.enter_context(eb.Client(base_url=server.base_url,"
        " api_key=server.api_key, session_key=server.session_key))\n"
        "\n"
        "chat = resources.enter_context(eb.emulator.running(seed='demo'))\n"
        "results = eb.run_chat_tests(connect(chat), chat.serial,"
        " ROOT / 'sample_data' / 'chat_tests.xlsx', concurrency=4, progress=False)\n"
        "server = resources.enter_context(eb.emulator.running())\n"
        "client, serial = connect(server), server.serial\n"
        "remote = eb.pull_listings(client, serial, progress=False)\n"
        "sheet = eb.read_sheet(ROOT / 'sample_data' / 'mls_export_week2.xlsx',"
        " defaults={'CurrencySymbol': '$'})\n"
        "plan = eb.plan_sync(sheet, remote, key='MLSNumber', delete_missing=True,"
        " blank_unknown_location=True)\n"
        "cleanup = eb.plan_cleanup(remote, status=('Sold',), min_days_on_market=120)"
    ),
    "chat-results-plot": "results.plot()",
    "plan-plot": "plan.plot()",
    "cleanup-plot": "cleanup.plot()",
    "end": "resources.close()\nprint('ALL-DONE')",
}
PLOTS = ("chat-results-plot", "plan-plot", "cleanup-plot")

# The figure as laid out: its box, its area's, what the area could scroll sideways, the page's
# colour behind it (the first ancestor with a background), and the PNG it shows.
MEASURE = """
(img) => {
  const area = img.closest(".jp-OutputArea-output");
  const box = img.getBoundingClientRect(), frame = area.getBoundingClientRect();
  let node = img.parentElement, bg = "rgba(0, 0, 0, 0)";
  while (node && (bg === "rgba(0, 0, 0, 0)" || bg === "transparent")) {
    bg = getComputedStyle(node).backgroundColor; node = node.parentElement;
  }
  return {left: box.left, right: box.right, width: box.width, natural: img.naturalWidth,
          areaLeft: frame.left, areaRight: frame.right,
          overflow: area.scrollWidth - area.clientWidth, bg, src: img.src};
}
"""


def output_of(page: Any, name: str) -> Any:
    """The output area of the cell ``name`` (cells are in the order of CELLS)."""
    index = list(CELLS).index(name)
    return page.locator(".jp-NotebookPanel .jp-Cell").nth(index).locator(".jp-OutputArea")


def close_left_bar(page: Any) -> None:
    """JupyterLab opens with its file browser: the issue's 900 px is the notebook without it."""
    if page.locator("#jp-left-stack").is_visible():
        use_menu(page, "View", "Appearance", "Show Left Sidebar")
        page.locator("#jp-left-stack").wait_for(state="hidden")
        page.wait_for_timeout(300)


def rgb(css: str) -> tuple[int, int, int]:
    numbers = [float(n) for n in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
    r, g, b = (round(n) for n in numbers)
    return r, g, b


def png_of(src: str) -> np.ndarray[Any, Any]:
    """The RGBA pixels of an ``<img>``'s ``data:image/png;base64,...`` source."""
    head, _, data = src.partition(",")
    assert head == "data:image/png;base64", head[:40]
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGBA"))


def check_plot(page: Any, name: str, theme: str, width: int, scratch: Any) -> None:
    where = f"{name} in {theme} at {width} px"
    output = output_of(page, name)
    image = output.locator(".jp-RenderedImage img")
    image.scroll_into_view_if_needed()
    measured = image.evaluate(MEASURE)

    pixels = png_of(measured["src"])
    alpha = pixels[..., 3]
    corners = alpha[0, 0], alpha[0, -1], alpha[-1, 0], alpha[-1, -1]
    assert corners == (0, 0, 0, 0), (where, corners)
    assert np.mean(alpha == 0) > 0.25, where

    assert measured["left"] >= measured["areaLeft"] - 0.5, (where, measured)
    assert measured["right"] <= measured["areaRight"] + 0.5, (where, measured)
    assert measured["overflow"] <= 1, (where, measured["overflow"])
    if width == 900:
        # Shown at (nearly) its own size: 10 pt text stays 10 pt, give or take a tenth.
        assert measured["width"] >= 0.9 * measured["natural"], (where, measured)

    target = picture_path(f"{name}-{theme}-{width}.png", scratch)
    image.screenshot(path=str(target))
    shot = np.asarray(Image.open(target).convert("RGB"))
    # The see-through corner shows the page: the theme's own background, light or dark.
    page_colour = np.array(rgb(measured["bg"]))
    corner = shot[1, 1].astype(int)
    assert np.abs(corner - page_colour).max() <= 2, (where, corner, measured["bg"])
    dark = page_colour.mean() < 128
    assert dark == (theme == "dark"), (where, measured["bg"])


def test_plots_show_the_page_through_and_fit_at_900_and_1400_px(browser: Any, lab: Any) -> None:
    from playwright.sync_api import expect

    name = write_code_notebook(lab.root / "plots.ipynb", CELLS)
    scratch = lab.root.parent / "shots"
    page = browser.new_page(viewport={"width": 1400, "height": HEIGHT})
    try:
        open_when_idle(page, lab.page(name))
        use_menu(page, "Run", "Run All Cells")
        expect(output_of(page, "end")).to_contain_text("ALL-DONE", timeout=180_000)
        for plot in PLOTS:
            expect(output_of(page, plot).locator(".jp-RenderedImage img")).to_have_count(1)
        expect(
            page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        ).to_have_count(0)
        close_left_bar(page)
        for theme in THEMES:
            set_theme(page, theme)
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": HEIGHT})
                page.wait_for_timeout(300)  # laid out again
                for plot in PLOTS:
                    check_plot(page, plot, theme, width, scratch)
    except Exception:
        page.screenshot(path=str(lab.root.parent / "failure.png"))
        raise
    finally:
        page.close()
