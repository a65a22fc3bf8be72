"""Colours of every notebook view (plans, reports, chat), taken from JupyterLab's theme.

Each colour is a JupyterLab CSS variable with a fallback for front ends that do not define it
(classic Notebook, VS Code, a saved HTML page), so light, dark and high-contrast themes read
alike. Views use these names in their style sheets instead of fixed colours.
"""

from __future__ import annotations

__all__ = [
    "BORDER",
    "BORDER_SOFT",
    "BRAND",
    "ERROR",
    "FONT",
    "LAYER0",
    "LAYER1",
    "LAYER2",
    "MONO",
    "MUTED",
    "SOFT",
    "SUCCESS",
    "TEXT",
    "UI_FONT",
    "WARN",
    "tint",
    "tint_background",
]

LAYER0 = "var(--jp-layout-color0, #ffffff)"
LAYER1 = "var(--jp-layout-color1, #ffffff)"
LAYER2 = "var(--jp-layout-color2, #eeeeee)"
TEXT = "var(--jp-content-font-color1, var(--jp-ui-font-color0, rgba(0, 0, 0, 0.87)))"
SOFT = "var(--jp-ui-font-color1, rgba(0, 0, 0, 0.87))"
MUTED = "var(--jp-ui-font-color2, rgba(0, 0, 0, 0.54))"
BORDER = "var(--jp-border-color1, #bdbdbd)"
BORDER_SOFT = "var(--jp-border-color2, #e0e0e0)"
SUCCESS = "var(--jp-success-color1, #388e3c)"
WARN = "var(--jp-warn-color1, #f57c00)"
ERROR = "var(--jp-error-color1, #d32f2f)"
BRAND = "var(--jp-brand-color1, #1976d2)"
UI_FONT = "var(--jp-ui-font-family, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif)"
FONT = "var(--jp-content-font-family, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif)"
MONO = "var(--jp-code-font-family, monospace)"


def tint(colour: str, percent: int) -> str:
    """``colour`` mixed into the page background: a wash that suits light and dark themes."""
    return f"color-mix(in srgb, {colour} {percent}%, transparent)"


def tint_background(colour: str, percent: int, rgba: str) -> str:
    """``background`` declarations: ``rgba`` first for a browser without ``color-mix``, then
    :func:`tint` of ``colour``."""
    return f"background:{rgba};background:{tint(colour, percent)};"
