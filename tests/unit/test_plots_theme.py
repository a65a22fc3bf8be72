"""Every figure follows the notebook's theme: no background of its own (the page shows through
in light and dark), text in a grey that reads on both, no text under 10 pt, 700 px wide at
100 dpi, and latencies in the units the other views use (``640 ms``, ``5.1 s``)."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from IPython.core.pylabtools import print_figure
from matplotlib.colors import to_hex, to_rgb
from matplotlib.figure import Figure
from matplotlib.image import imread
from matplotlib.text import Text

from estatebot._figures import FIGURE_WIDTH, INK
from estatebot.chat.harness.results import ChatTestResults
from estatebot.listings.sync.sync_plan import plan_cleanup, plan_sync
from factories import complete_listing as listing
from factories import remote_frame, sheet_frame

LIGHT, DARK = "#ffffff", "#111111"  # JupyterLab Light's and Dark's page


def luminance(colour: str) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in to_rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def results_figure(latencies: list[float | None]) -> Figure:
    n = len(latencies)
    frame = pd.DataFrame(
        {
            "case": [f"case {i}" for i in range(n)],
            "conversation": [None] * n,
            "question": ["q"] * n,
            "answer": [None if ms is None else "a" for ms in latencies],
            "no_answer": [False] * n,
            "tokens": [10] * n,
            "latency_ms": latencies,
            "session_id": [1] * n,
            "message_id": list(range(n)),
            "attempts": [1] * n,
            "error": [None if ms is not None else "timed out" for ms in latencies],
            "why": [""] * n,
            "passed": [ms is not None for ms in latencies],
        }
    )
    return ChatTestResults(frame).plot()


def plan_figure() -> Figure:
    before = [listing(1, SalePrice=480000.0), listing(2), listing(3)]
    after = [listing(1, SalePrice=465000.0), listing(2, SalePrice=500000.0), listing(3), listing(4)]
    return plan_sync(sheet_frame(*after), remote_frame(*before)).plot()


def cleanup_figure() -> Figure:
    remote = remote_frame(
        *(listing(n, DaysOnMarket=10 * n, Status="Sold" if n % 5 == 0 else "Active")
          for n in range(1, 21))
    )  # fmt: skip
    return plan_cleanup(
        remote, status=("Sold",), min_days_on_market=150, force_delete_count=8
    ).plot()


FIGURES: dict[str, Callable[[], Figure]] = {
    "chat results": lambda: results_figure([640.0, 5130.0, None, 980.0]),
    "sync plan": plan_figure,
    "cleanup": cleanup_figure,
}


def shown_texts(figure: Figure) -> list[Text]:
    figure.canvas.draw()  # ticks and their labels exist once drawn
    return [
        t
        for t in figure.findobj(Text)
        if t.get_visible() and t.get_text().strip() and t.get_window_extent().width > 0
    ]


def test_the_ink_is_the_grey_that_reads_best_on_both_pages() -> None:
    # A PNG cannot take the theme's colours: one grey serves both pages. None reaches 4.5:1 on
    # both; this one is the furthest from both, within a step of the grey scale.
    worst = min(contrast(INK, LIGHT), contrast(INK, DARK))
    best = max(
        min(contrast(f"#{g:02x}{g:02x}{g:02x}", p) for p in (LIGHT, DARK)) for g in range(256)
    )
    assert worst >= 4.3
    assert worst >= best - 0.05


@pytest.mark.parametrize("name", list(FIGURES))
def test_a_figure_has_no_background_of_its_own(name: str) -> None:
    figure = FIGURES[name]()
    assert figure.patch.get_alpha() == 0.0
    assert all(ax.patch.get_alpha() == 0.0 for ax in figure.axes)
    # As a notebook shows it: IPython's PNG of the figure, see-through but where drawn on (a
    # figure with a background of its own would have no see-through pixel).
    image = imread(io.BytesIO(print_figure(figure, "png")), format="png")
    alpha = image[..., 3]
    assert alpha[0, 0] == alpha[0, -1] == alpha[-1, 0] == alpha[-1, -1] == 0.0
    assert np.mean(alpha == 0.0) > 0.25


@pytest.mark.parametrize("name", list(FIGURES))
def test_a_figure_is_700_px_wide_and_its_text_readable_on_both_pages(name: str) -> None:
    figure = FIGURES[name]()
    assert figure.get_size_inches()[0] == FIGURE_WIDTH == 7.0
    image = imread(io.BytesIO(print_figure(figure, "png")), format="png")
    # 100 dpi, cut to what is drawn: within the 720 px output area of a 900 px window.
    assert image.shape[1] <= 720
    texts = shown_texts(figure)
    assert texts
    for text in texts:
        assert text.get_fontsize() >= 10, (text.get_text(), text.get_fontsize())
        colour = to_hex(text.get_color())
        # The ink on the page; white only on a coloured bar (the count inside it).
        assert colour in (INK, "#ffffff"), (text.get_text(), colour)
    for ax in figure.axes:
        for spine in ax.spines.values():
            if spine.get_visible():
                assert to_hex(spine.get_edgecolor()) == INK
        for label in (*ax.get_xticklabels(), *ax.get_yticklabels()):
            assert to_hex(label.get_color()) == INK


def axis_and_bar_labels(figure: Figure) -> tuple[str, list[str]]:
    latency = figure.axes[0]
    return latency.get_xlabel(), [t.get_text() for t in latency.texts]


def test_latency_reads_in_seconds_as_the_panel_says_it() -> None:
    label, bars = axis_and_bar_labels(results_figure([5130.0, 12800.0, 640.0]))
    assert label.startswith("latency (s)")
    assert "dashed: the median, 5.1 s" in label
    assert bars == ["5.1 s", "12.8 s", "640 ms"]
    ticks = [t.get_text() for t in results_figure([5130.0, 12800.0]).axes[0].get_xticklabels()]
    assert "0.000" not in ticks


def test_latency_under_a_second_reads_in_milliseconds() -> None:
    label, bars = axis_and_bar_labels(results_figure([5.0, 16.0, 9.0]))
    assert label.startswith("latency (ms)")
    assert bars == ["5 ms", "16 ms", "9 ms"]


@given(st.lists(st.floats(min_value=0, max_value=600_000), min_size=1, max_size=12))
def test_the_axis_unit_follows_the_slowest_answer(latencies: list[float]) -> None:
    figure = results_figure(list(latencies))
    label, _ = axis_and_bar_labels(figure)
    unit = "ms" if max(latencies) < 1000 else "s"
    assert label.startswith(f"latency ({unit})")
    scale = 1.0 if unit == "ms" else 1000.0
    widths = [p.get_width() for p in figure.axes[0].patches]
    assert widths == pytest.approx([ms / scale for ms in latencies])


def test_a_case_without_an_answer_says_so_in_ink() -> None:
    figure = results_figure([None, 700.0])
    notes = [t for t in figure.axes[0].texts if t.get_text() == "no answer"]
    assert len(notes) == 1
    assert to_hex(notes[0].get_color()) == INK


def test_style_does_not_leak_into_the_next_figure() -> None:
    import matplotlib.pyplot as plt

    before: Any = plt.rcParams["text.color"]
    plan_figure()
    after = plt.rcParams["text.color"]
    assert after == before
