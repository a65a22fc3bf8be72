"""Figures of a plan, for where a person would rather look than read.

A sync plan: the listings by action and every price change in percent, side by side. A cleanup
plan: the days on market of the listings, the part it deletes coloured, with the rule's threshold.

matplotlib is optional (the ``plot`` extra) and imported only when a figure is asked for. The
colours are the Okabe-Ito palette, told apart with colour blindness, of a middle lightness that
reads on a light and a dark page alike. Each figure is closed in pyplot before it is returned, so
a notebook shows it once, as the cell's value, and a loop of plots holds no figures open.

Every figure is drawn in estatebot's figure style (`estatebot._figures`): no background, text
that reads on a light and a dark page, 7 inches wide.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from estatebot._figures import FIGURE_WIDTH, INK, themed
from estatebot.listings.money import MINUS, format_money, is_number
from estatebot.listings.sync.plan.cleanup_rule import cleanup_rule
from estatebot.listings.sync.views.shown_plan import ShownPlan

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["COLORS", "plot_plan"]

#: The colour of each action in the figures.
COLORS: dict[str, str] = {
    "create": "#009E73",
    "update": "#0072B2",
    "delete": "#D55E00",
    "unchanged": "#8C8C8C",
    "invalid": "#E69F00",
    "held back": "#CC79A7",
    "kept": "#8C8C8C",
    "skipped create": "#56B4E9",
}
_UP, _DOWN = "#0072B2", "#D55E00"
_PRICES = ("SalePrice", "RentPrice")
# Up to this many price changes get a bar each, with their key; more make a histogram.
_BARS = 30


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as error:  # the optional extra is not installed
        raise ImportError(
            "plotting a plan needs matplotlib: pip install 'estatebot[plot]'"
        ) from error
    return plt


def plot_plan(plan: ShownPlan, *, remote: pd.DataFrame | None = None) -> Figure:
    """The figure of ``plan``: a cleanup's days on market, else a sync's actions and prices."""
    plt = _pyplot()
    if plan.options.get("cleanup"):
        return themed(plt, lambda: _cleanup_figure(plt, plan, remote))
    return themed(plt, lambda: _sync_figure(plt, plan))


# --------------------------------------------------------------------------- a sync


def _sync_figure(plt: Any, plan: ShownPlan) -> Figure:
    # One above the other, each the figure's width: side by side, at 7 inches, the money beside
    # the price bars ran into the listings' keys.
    counts, prices = _panel_heights(plan)
    figure, (top, bottom) = plt.subplots(
        2, 1, figsize=(FIGURE_WIDTH, counts + prices), layout="constrained",
        height_ratios=(counts, prices),
    )  # fmt: skip
    _counts_panel(top, plan)
    _prices_panel(bottom, plan)
    return figure  # type: ignore[no-any-return]


def _whole_numbers() -> Any:
    """Ticks at whole numbers only (there is no half a listing), few enough to read."""
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(nbins=6, integer=True)


def _panel_heights(plan: ShownPlan) -> tuple[float, float]:
    """The heights of the counts and the prices panels, in inches: a bar each, with room for
    the title and the axis."""
    counts = plan.counts()
    shown = 5 + sum(1 for n in ("held_back", "kept", "skipped_create") if counts.get(n))
    changes = len(price_changes(plan))
    if not changes:
        return 0.28 * shown + 1.0, 1.0
    return 0.28 * shown + 1.0, 0.28 * changes + 1.1 if changes <= _BARS else 3.0


def _counts_panel(ax: Axes, plan: ShownPlan) -> None:
    counts = plan.counts()
    names = ["create", "update", "delete", "unchanged", "invalid"]
    names += [n for n in ("held_back", "kept", "skipped_create") if counts.get(n)]
    labels = [n.replace("_", " ") for n in names]
    values = [counts.get(n, 0) for n in names]
    bars = ax.barh(labels, values, color=[COLORS[label] for label in labels])
    ax.bar_label(bars, labels=[f"{v:,}" for v in values], padding=3)
    ax.invert_yaxis()
    ax.set_xlabel("listings")
    ax.xaxis.set_major_locator(_whole_numbers())
    ax.set_title("The plan by action")
    ax.margins(x=0.2)


def price_changes(plan: ShownPlan) -> list[tuple[str, str, float, float, Any]]:
    """Every price change of the updates: key, field, before, after and currency."""
    found: list[tuple[str, str, float, float, Any]] = []
    for op in plan.updates:
        currency = (op.body or {}).get("CurrencySymbol") or (op.before or {}).get("CurrencySymbol")
        for change in op.changes:
            before, after = change.before, change.after
            if change.field in _PRICES and is_number(before) and is_number(after) and before:
                found.append((op.key, change.field, float(before), float(after), currency))
    return found


def _prices_panel(ax: Axes, plan: ShownPlan) -> None:
    changes = price_changes(plan)
    ax.set_title("Price changes")
    if not changes:
        ax.text(0.5, 0.5, "no price changes", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    percents = np.array([(after - before) / before * 100 for _, _, before, after, _ in changes])
    if len(changes) > _BARS:
        ax.hist(percents, bins="auto", color=_UP)
        ax.set_xlabel("price change (%)")
        ax.set_ylabel("listings")
        ax.yaxis.set_major_locator(_whole_numbers())
        ax.axvline(0, color=INK, linewidth=1)
        return
    order = np.argsort(percents)
    labels = [
        f"{changes[i][0]} ({'rent' if changes[i][1] == 'RentPrice' else 'sale'})" for i in order
    ]
    shown = percents[order]
    bars = ax.barh(labels, shown, color=[_UP if p > 0 else _DOWN for p in shown])
    texts = []
    for i in order:
        _, _, before, after, currency = changes[i]
        delta = format_money(after - before, currency)
        texts.append(("+" + delta) if after > before else delta)
    ax.bar_label(bars, labels=texts, padding=3)
    ax.axvline(0, color=INK, linewidth=1)
    ax.set_xlabel("price change (%)")
    ax.margins(x=0.45)
    ax.xaxis.set_major_formatter(
        lambda value, _: "0%" if round(value) == 0 else f"{value:+.0f}%".replace("-", MINUS)
    )


# --------------------------------------------------------------------------- a cleanup


def _days(values: Sequence[Any]) -> tuple[list[float], int]:
    """The numbers among ``values`` and how many had none."""
    numbers = [float(v) for v in values if is_number(v)]
    return numbers, len(values) - len(numbers)


def _cleanup_days(plan: ShownPlan, remote: pd.DataFrame | None) -> tuple[list[Any], list[Any]]:
    """The days on market of the listings kept and of those deleted."""
    deleted = [(op.before or {}).get("DaysOnMarket") for op in plan.deletes]
    if remote is not None:
        ids = {op.id for op in plan.deletes}
        frame = remote.reset_index(drop=True)
        keep = ~frame["ID"].isin([i for i in ids if i is not None]).fillna(False)
        kept = [None if v is pd.NA else v for v in frame.loc[keep, "DaysOnMarket"].tolist()]
        return kept, deleted
    kept_days = list(getattr(plan, "kept_days_on_market", []))
    if len(kept_days) != len(plan.kept):
        raise ValueError(
            "this cleanup plan does not hold the days on market of the listings it keeps (it was "
            "read back from a file): pass the pulled listings, plan.plot(remote=listings)"
        )
    return kept_days, deleted


def _cleanup_figure(plt: Any, plan: ShownPlan, remote: pd.DataFrame | None) -> Figure:
    kept_values, deleted_values = _cleanup_days(plan, remote)
    kept, kept_missing = _days(kept_values)
    deleted, deleted_missing = _days(deleted_values)
    figure, ax = plt.subplots(figsize=(FIGURE_WIDTH, 4.2), layout="constrained")
    every = np.array(kept + deleted)
    bins: Any = (
        np.histogram_bin_edges(every, bins=min(40, max(5, len(every) // 5))) if len(every) else 10
    )
    ax.hist(
        [kept, deleted],
        bins=bins,
        stacked=True,
        color=[COLORS["kept"], COLORS["delete"]],
        label=[f"kept ({len(kept_values):,})", f"deleted ({len(deleted_values):,})"],
    )
    threshold = plan.options.get("min_days_on_market")
    if threshold is not None:
        ax.axvline(
            float(threshold),
            color=COLORS["invalid"],
            linestyle="--",
            linewidth=2,
            label=f"{threshold} days",
        )
    missing = kept_missing + deleted_missing
    if missing:
        ax.text(
            0.99, 0.02, f"{missing:,} listings without days on market not shown",
            transform=ax.transAxes, ha="right", va="bottom",
        )  # fmt: skip
    ax.set_xlabel("days on market")
    ax.set_ylabel("listings")
    ax.yaxis.set_major_locator(_whole_numbers())
    ax.set_title(f"Cleanup: {cleanup_rule(plan.options)}", wrap=True)
    ax.legend()
    return figure  # type: ignore[no-any-return]
