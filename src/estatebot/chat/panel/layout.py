"""The chat panel's widgets: its controls, built and arranged in rows, and the small pieces its
transcript adds (a turn's view, a Retry button, the row under a turn that holds such buttons).

Only ipywidgets and their layout live here: what the controls do is wired in
:mod:`estatebot.chat.panel.widget`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import ipywidgets as widgets

from estatebot.api import models
from estatebot.chat.panel.render import KERNEL_WAIT_NOTE

__all__ = [
    "ASK_TYPES",
    "PANEL_CLASSES",
    "Controls",
    "actions_row",
    "build_controls",
    "descendants",
    "retry_button",
    "turn_view",
]

#: The question types the Type dropdown offers (the service's ``chatAskType`` values).
ASK_TYPES: tuple[str, ...] = tuple(kind.value for kind in models.ChatAskType)

#: The panel box's CSS classes: its style sheet's hook, and the two that tell a notebook's
#: MathJax to leave the box alone (prices written with "$" would otherwise be read as TeX).
PANEL_CLASSES: tuple[str, ...] = ("eb-chat", "tex2jax_ignore", "mathjax_ignore")

# Rows wrap rather than clip: on a narrow page a control moves to the next line. A row is a box
# (no margin), so 100% is its column's width exactly.
_ROW = {"flex_flow": "row wrap", "align_items": "center", "width": "100%"}

# A leaf widget (HTML, Text, Button) has ipywidgets' 2 px margin on each side: at width 100% it
# would stick out 4 px and give its box a horizontal scroll bar. "auto" lets the column stretch
# it to the width that is left.
_FILL = "auto"


def _fixed(**extra: Any) -> widgets.Layout:
    # A control that keeps its natural width: a wrapping row moves it down, never clips it.
    return widgets.Layout(width="auto", flex="0 0 auto", **extra)


@dataclass(eq=False)
class Controls:
    """The chat panel's widgets, made by :func:`build_controls`; :meth:`rows` arranges them."""

    input: widgets.Text
    send_button: widgets.Button
    stop_button: widgets.Button
    new_session_button: widgets.Button
    reconnect_button: widgets.Button
    ask_type: widgets.Dropdown
    file_ids: widgets.Text
    transcript: widgets.VBox
    status: widgets.HTML
    header: widgets.HTML
    kernel_wait: widgets.HTML

    def rows(self) -> list[Any]:
        """The panel's children, top to bottom: the heading, the transcript, the input with
        Send and Stop (and the note the page shows while a busy kernel has not read a click on
        Send), the type and files with New session, and the status line with Reconnect."""
        send_row = widgets.HBox(
            [self.input, self.send_button, self.stop_button, self.kernel_wait],
            layout=widgets.Layout(**_ROW),
        )
        send_row.add_class("eb-send-row")
        return [
            self.header,
            self.transcript,
            send_row,
            widgets.HBox(
                [self.ask_type, self.file_ids, self.new_session_button],
                layout=widgets.Layout(**_ROW),
            ),
            widgets.HBox([self.status, self.reconnect_button], layout=widgets.Layout(**_ROW)),
        ]


def build_controls(header_html: str, *, height: str) -> Controls:
    """Make the panel's widgets: ``header_html`` is the heading, ``height`` the most the
    transcript grows before it scrolls (a CSS length). Stop starts disabled and Reconnect
    hidden; the panel shows them when they apply."""
    input_box = widgets.Text(
        placeholder="Ask about listings… (Enter sends)",
        layout=widgets.Layout(flex="1 1 260px", width="auto", min_width="120px"),
    )
    input_box.add_class("eb-input")
    send_button = widgets.Button(
        description="Send",
        button_style="primary",
        icon="paper-plane",
        tooltip="Send",
        layout=_fixed(),
    )
    send_button.add_class("eb-send")
    # Hidden by the style sheet except while the page waits for a busy kernel (see render.CSS).
    kernel_wait = widgets.HTML(KERNEL_WAIT_NOTE, layout=widgets.Layout(flex="1 1 100%"))
    kernel_wait.add_class("eb-kernel-wait")
    stop_button = widgets.Button(
        description="Stop",
        icon="stop",
        disabled=True,
        tooltip="Stop the answer",
        layout=_fixed(),
    )
    new_session_button = widgets.Button(
        description="New session",
        icon="refresh",
        tooltip="Start a new chat session",
        layout=_fixed(),
    )
    reconnect_button = widgets.Button(
        description="Reconnect",
        icon="plug",
        button_style="warning",
        tooltip="Make a new client with the same settings",
        layout=_fixed(display="none"),
    )
    ask_type = widgets.Dropdown(
        options=list(ASK_TYPES),
        value=models.ChatAskType.TEXT.value,
        description="Type",
        style={"description_width": "initial"},
        layout=widgets.Layout(width="150px", flex="0 0 auto"),
    )
    file_ids = widgets.Text(
        placeholder="file IDs, e.g. 101, 102",
        description="Files",
        style={"description_width": "initial"},
        layout=widgets.Layout(flex="1 1 220px", width="auto", min_width="120px"),
    )
    # column-reverse with the newest turn first keeps the view scrolled to the latest turn
    # as the transcript grows, with no script in the page.
    transcript = widgets.VBox(
        [],
        layout=widgets.Layout(max_height=height, overflow="auto", flex_flow="column-reverse"),
    )
    transcript.add_class("eb-transcript")
    status = widgets.HTML(layout=widgets.Layout(flex="1 1 300px", width="auto"))
    status.add_class("eb-status-view")
    header = widgets.HTML(header_html, layout=widgets.Layout(width=_FILL))
    return Controls(
        input=input_box,
        send_button=send_button,
        stop_button=stop_button,
        new_session_button=new_session_button,
        reconnect_button=reconnect_button,
        ask_type=ask_type,
        file_ids=file_ids,
        transcript=transcript,
        status=status,
        header=header,
        kernel_wait=kernel_wait,
    )


def turn_view() -> widgets.HTML:
    """An empty view for one turn of the transcript."""
    view = widgets.HTML(layout=widgets.Layout(width=_FILL))
    view.add_class("eb-turn-view")
    return view


def retry_button() -> widgets.Button:
    """A Retry button, for under a failed answer."""
    button = widgets.Button(
        description="Retry", icon="redo", tooltip="Ask this question again", layout=_fixed()
    )
    button.add_class("eb-retry-button")
    return button


def actions_row(buttons: Iterable[Any]) -> widgets.HBox:
    """The row of ``buttons`` shown under a turn."""
    # No shrinking: in the transcript's scrolling column a box would shrink to nothing.
    row = widgets.HBox(list(buttons), layout=widgets.Layout(flex="0 0 auto"))
    row.add_class("eb-actions")
    return row


def descendants(box: Any) -> list[Any]:
    """Every widget inside ``box``, deepest first (so each is closed before its container)."""
    found: list[Any] = []
    for child in getattr(box, "children", ()):
        found.extend([*descendants(child), child])
    return found
