"""Progress bars for long work: tqdm.auto, on by default, off when asked, in CI or by environment.

``ESTATEBOT_PROGRESS=0`` turns every bar off, including notebook bars (which ``TQDM_DISABLE`` does
not reach); ``CI=true`` does too, so logs stay readable. ``progress=True``/``False`` on a call wins
over both.
"""

from __future__ import annotations

import os
from typing import Any

from tqdm.auto import tqdm

_FALSE = {"0", "false", "no", "off", ""}


def progress_enabled(progress: bool | None = None) -> bool:
    """Whether to show a bar: the caller's choice, else ``ESTATEBOT_PROGRESS``, else not in CI."""
    if progress is not None:
        return progress
    setting = os.environ.get("ESTATEBOT_PROGRESS")
    if setting is not None:
        return setting.strip().lower() not in _FALSE
    return os.environ.get("CI", "").strip().lower() in _FALSE


def progress_bar(
    total: int | None, desc: str, *, progress: bool | None = None, unit: str = "it"
) -> tqdm[Any]:
    """A tqdm bar (a disabled one when progress is off, so callers never branch)."""
    return tqdm(total=total, desc=desc, unit=unit, disable=not progress_enabled(progress))


def set_total(bar: tqdm[Any], total: int) -> None:
    """Give ``bar`` its total once the work's size is known.

    A notebook bar (tqdm.notebook) draws its widget from the total it was made with: one made
    without a total is a 20-pixel block that is always full, and its widget's maximum does not
    follow ``bar.total``. Its widget is set to the new total here, at full width.
    """
    if bar.total == total:
        return
    container = getattr(bar, "container", None)
    children: Any = getattr(container, "children", ())
    if len(children) >= 2:  # [description, progress, figures]: tqdm.notebook's layout
        widget = children[1]
        widget.max = total
        if not bar.total and getattr(bar, "ncols", None) is None:
            widget.layout.width = None  # no longer the unknown total's block
            widget.bar_style = ""
    bar.total = total  # drawn at the next update


def settle_total(bar: tqdm[Any], done: int) -> None:
    """Make ``bar``'s total the work done (``done`` steps), once the work has ended.

    Work whose size was not known ahead (a filtered pull whose count says nothing of the pages
    left) would otherwise end as a stub, ``2/?`` in a notebook, a bare ``2page`` in a terminal;
    now it ends full, ``2/2``, as work counted ahead does. A total the work fell short of is
    not hidden: it is kept (``18/20``), and so is a bar that is off.
    """
    if getattr(bar, "disable", False) or (bar.total is not None and bar.total >= done):
        return
    set_total(bar, done)  # drawn when the bar closes


def finish_bar(bar: tqdm[Any], *, failed: int, total: int) -> None:
    """Close ``bar`` in a colour that tells how the work went.

    A bar full of work that failed must not end green: with any failure it ends in the warning
    colour (the danger colour when everything failed). A notebook bar (tqdm.notebook) turns green
    on close, so its widget's ``bar_style`` is set after; ipywidgets draws that style in the
    theme's own ``--jp-warn-color1``/``--jp-error-color1``. A terminal bar takes ``colour``
    before its last draw.
    """
    if failed <= 0 or getattr(bar, "disable", False):
        bar.close()
        return
    style = "danger" if total and failed >= total else "warning"
    container = getattr(bar, "container", None)
    if container is None:  # the terminal's bar
        bar.colour = "red" if style == "danger" else "yellow"
        bar.close()
        return
    bar.close()
    children: Any = getattr(container, "children", ())
    if len(children) >= 2:  # [description, progress, figures]: tqdm.notebook's layout
        children[1].bar_style = style
