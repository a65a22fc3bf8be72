"""``results.plot()``: chat latency per case and the pass rate, as a matplotlib figure.

matplotlib is optional (the extra ``estatebot[plot]``), so it is imported here, when a plot is
asked for, and its absence is an ImportError saying what to install.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from estatebot.chat.harness.results_html import outcome
from estatebot.chat.textview import latency_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["OUTCOME_COLOURS", "plot_results"]

#: Bar colours by outcome (readable on light and dark figure backgrounds alike).
OUTCOME_COLOURS: dict[str, str] = {"pass": "#2e9d4f", "fail": "#d43d3d", "error": "#e08a1e"}


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised where matplotlib is absent
        raise ImportError("results.plot() needs matplotlib: pip install 'estatebot[plot]'") from exc
    return plt


def plot_results(frame: pd.DataFrame, figures: Mapping[str, Any]) -> Figure:
    """Two panels: each case's latency (bars coloured pass/fail/error, the median dashed; a case
    with no answer has no bar and says so) and the share of cases passed, failed and in error."""
    plt = _pyplot()
    names = [str(name) for name in frame["case"].astype("string").fillna("")]
    kinds = [outcome(p, e) for p, e in zip(frame["passed"], frame["error"], strict=True)]
    seconds = [
        None if pd.isna(ms) else float(ms) / 1000 for ms in frame["latency_ms"].astype("Float64")
    ]
    height = max(3.0, 0.32 * len(frame) + 1.4)
    fig, (ax, rate) = plt.subplots(
        1, 2, figsize=(11, height), gridspec_kw={"width_ratios": [4, 1]}, layout="constrained"
    )
    positions = list(range(len(frame)))
    ax.barh(
        positions,
        [s or 0.0 for s in seconds],
        color=[OUTCOME_COLOURS[k] for k in kinds],
    )
    for y, value in zip(positions, seconds, strict=True):
        if value is None:
            ax.annotate("no answer", (0, y), xytext=(4, 0), textcoords="offset points", va="center")
    ax.set_yticks(positions, names)
    ax.invert_yaxis()
    median = figures.get("latency_p50_ms")
    if median is not None:
        ax.axvline(median / 1000, color="0.35", linestyle="--", linewidth=1)
        ax.annotate(
            f"median {latency_text(median)}",
            (median / 1000, 1),
            xycoords=("data", "axes fraction"),
            xytext=(4, -12),
            textcoords="offset points",
        )
    ax.set_xlabel("latency (s)")
    ax.set_title("Answer latency per case (green passed, red failed, orange error)")
    counts = [kinds.count(k) for k in ("pass", "fail", "error")]
    bottom = 0
    for kind, count in zip(("pass", "fail", "error"), counts, strict=True):
        rate.bar([0], [count], bottom=bottom, color=OUTCOME_COLOURS[kind], label=kind)
        if count:
            rate.annotate(
                str(count),
                (0, bottom + count / 2),
                ha="center",
                va="center",
                color="white",
                fontweight="bold",
            )
        bottom += count
    share = figures.get("pass_rate")
    rate.set_title("passed" if share is None else f"{share:.0%} passed")
    rate.set_xticks([])
    rate.set_ylabel("cases")
    rate.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), ncols=3, frameon=False)
    # Shown once by the notebook as the cell's value, not a second time by pyplot's own display.
    plt.close(fig)
    figure: Figure = fig
    return figure
