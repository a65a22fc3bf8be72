"""The style of every figure estatebot draws (a plan's, a cleanup's, ``results.plot()``).

No background, so the page shows through in the light and the dark theme, and text, ticks and
frames in :data:`INK`, no smaller than 10 pt, on a figure 7 inches wide: 700 pixels at the
usual 100 dpi, which a 900-pixel JupyterLab window (an output area of 720 pixels) shows at its
own size, so its text is not scaled down. matplotlib is not imported here: the caller, who
has it, passes pyplot in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FIGURE_WIDTH", "INK", "themed"]

#: The colour of a figure's text, ticks and frames. A notebook shows a figure as a PNG image,
#: which cannot take the theme's colours (CSS variables), so one colour must read on JupyterLab's
#: light page (#ffffff) and its dark one (#111111): this grey is the one furthest from both,
#: 4.3:1 against each (no colour reaches 4.5:1 against both).
INK = "#797979"
#: The width of every figure, in inches (700 px at 100 dpi: a 900 px window shows it whole).
FIGURE_WIDTH = 7.0
_TEXT_PT = 10.5
#: What every figure is drawn with (matplotlib settings, inside ``rc_context``).
_STYLE: dict[str, Any] = {
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.facecolor": "none",
    "text.color": INK,
    "axes.labelcolor": INK,
    "axes.titlecolor": INK,
    "axes.edgecolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "legend.labelcolor": INK,
    "legend.frameon": False,
    "font.size": _TEXT_PT,
    "axes.titlesize": 12.0,
    "axes.titleweight": "bold",
    "axes.labelsize": _TEXT_PT,
    "xtick.labelsize": _TEXT_PT,
    "ytick.labelsize": _TEXT_PT,
    "legend.fontsize": _TEXT_PT,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def themed(plt: Any, draw: Callable[[], Figure]) -> Figure:
    """The figure ``draw`` makes with pyplot, in estatebot's figure style (see the module),
    closed in pyplot so that a notebook shows it once, as the cell's value."""
    with plt.rc_context(_STYLE):
        figure = draw()
    figure.patch.set_alpha(0.0)
    for ax in figure.axes:
        ax.patch.set_alpha(0.0)
        # Ticks made later, when the figure is drawn, no longer see the rc_context: keep these.
        ax.tick_params(colors=INK, labelcolor=INK, labelsize=_TEXT_PT)
    plt.close(figure)
    return figure
