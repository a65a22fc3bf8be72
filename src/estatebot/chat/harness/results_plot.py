"""``results.plot()``: chat latency per case and the pass rate, as a matplotlib figure.

matplotlib is optional (the extra ``estatebot[plot]``), so it is imported here, when a plot is
asked for, and its absence is an ImportError saying what to install.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from estatebot._figures import FIGURE_WIDTH, INK, themed
from estatebot.chat.harness.checks import outcome
from estatebot.chat.textview import latency_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["OUTCOME_COLOURS", "plot_results"]

#: Bar colours by outcome (readable on light and dark figure backgrounds alike).
OUTCOME_COLOURS: dict[str, str] = {"pass": "#2e9d4f", "fail": "#d43d3d", "error": "#e08a1e"}
_KINDS = ("pass", "fail", "error")


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised where matplotlib is absent
        raise ImportError("results.plot() needs matplotlib: pip install 'estatebot[plot]'") from exc
    return plt


def plot_results(frame: pd.DataFrame, figures: Mapping[str, Any]) -> Figure:
    """Two panels: each case's latency (bars coloured pass/fail/error, each with its latency,
    the median dashed; a case with no answer has no bar and says so) and how many cases
    passed, failed and were in error. Latencies read as the rest of the views give them: in
    milliseconds while the slowest answer took under a second, else in seconds."""
    plt = _pyplot()
    kinds = [outcome(p, e) for p, e in zip(frame["passed"], frame["error"], strict=True)]

    def draw() -> Figure:
        height = max(3.2, 0.3 * len(frame) + 1.5)
        fig, (ax, rate) = plt.subplots(
            1, 2, figsize=(FIGURE_WIDTH, height), width_ratios=(4, 1), layout="constrained"
        )
        _latency_panel(ax, frame, kinds, figures)
        _outcome_panel(rate, kinds, figures)
        figure: Figure = fig
        return figure

    return themed(plt, draw)


def _latency_panel(
    ax: Axes, frame: pd.DataFrame, kinds: list[str], figures: Mapping[str, Any]
) -> None:
    names = [str(name) for name in frame["case"].astype("string").fillna("")]
    latencies = [None if pd.isna(ms) else float(ms) for ms in frame["latency_ms"].astype("Float64")]
    slowest = max((ms for ms in latencies if ms is not None), default=0.0)
    # One unit for the axis, as latency_text words a latency: ms under a second, else s.
    scale, unit = (1.0, "ms") if slowest < 1000 else (1000.0, "s")
    positions = list(range(len(frame)))
    bars = ax.barh(
        positions,
        [(ms or 0.0) / scale for ms in latencies],
        color=[OUTCOME_COLOURS[k] for k in kinds],
    )
    ax.bar_label(bars, labels=[latency_text(ms) if ms is not None else "" for ms in latencies],
                 padding=3)  # fmt: skip
    for y, ms in zip(positions, latencies, strict=True):
        if ms is None:
            ax.annotate("no answer", (0, y), xytext=(4, 0), textcoords="offset points", va="center")
    ax.set_yticks(positions, names)
    ax.invert_yaxis()
    ax.margins(x=0.15)
    ax.xaxis.set_major_formatter(lambda value, _: f"{value:g}")
    median = figures.get("latency_p50_ms")
    label = f"latency ({unit})"
    if median is not None:
        ax.axvline(median / scale, color=INK, linestyle="--", linewidth=1)
        # Said under the axis: a label at the line would sit on a bar.
        label += f"; dashed: the median, {latency_text(median)}"
    ax.set_xlabel(label)
    ax.set_title("Answer latency per case")


def _outcome_panel(rate: Axes, kinds: list[str], figures: Mapping[str, Any]) -> None:
    from matplotlib.ticker import MaxNLocator

    counts = [kinds.count(k) for k in _KINDS]
    bottom = 0
    for kind, count in zip(_KINDS, counts, strict=True):
        rate.bar([0], [count], bottom=bottom, color=OUTCOME_COLOURS[kind], label=kind)
        if count:
            rate.annotate(
                str(count),
                (0, bottom + count / 2),
                ha="center",
                va="center",
                color="white",
                fontweight="bold",
                fontsize=12,
            )
        bottom += count
    share = figures.get("pass_rate")
    rate.set_title("passed" if share is None else f"{share:.0%} passed")
    rate.set_xticks([])
    rate.set_ylabel("cases")
    rate.yaxis.set_major_locator(MaxNLocator(integer=True))
    rate.spines["bottom"].set_visible(False)
    # Under the bar, one outcome a line: the legend says what each colour is.
    rate.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), ncols=1)
