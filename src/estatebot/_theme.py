"""Colours of every notebook view (plans, reports, chat), taken from JupyterLab's theme.

Each colour is a JupyterLab CSS variable with a fallback for front ends that do not define it
(classic Notebook, VS Code, a saved HTML page), so light, dark and high-contrast themes read
alike. Views use these names in their style sheets instead of fixed colours.

:data:`STYLE` is the style sheet of the plan, cleanup and apply-report views (:func:`styled`
wraps a body in it). Marks of change are tints of the theme's own success, warning and error
colours laid over the background (``color-mix`` with ``transparent``; an ``rgba`` first for
browsers without it), never a fixed light fill: light text on pale yellow is what the dark theme
got before. Its rules are scoped under ``.eb-view`` and written one step more specific than
JupyterLab's own ``.jp-RenderedHTMLCommon td`` (which right-aligns every cell and stripes rows),
so they win.

Contrast (WCAG AA, 4.5:1 for small text): JupyterLab's own accent colours are too pale for text
in the light theme (its orange is 2.7:1 on white) and too bright behind white text in the dark
one (its green 2.8:1, its orange 2.2:1). So :data:`SUCCESS`, :data:`WARN`, :data:`ERROR` and
:data:`BRAND` are the theme's colours mixed with its strongest text colour (:func:`readable`):
darker on a light page, lighter on a dark one. They read as text on the page and on its grey
layer, and a badge filled with one reads with the page's own colour as its text
(:func:`solid`), never a fixed white. :data:`MUTED` is the text colour at two thirds strength,
not JupyterLab's ``--jp-ui-font-color2`` (4.4:1 on its grey layer).

Layout (a notebook is often 900 px wide, or narrower with a side bar open): no text breaks inside
a word (``overflow-wrap: anywhere`` squeezes a table's columns down to single letters: "Bost on");
number cells never wrap; the cells a decision rests on (``eb-after``, ``eb-decide``) keep their
width; a column of context (``eb-yield``: the value before, an answer) takes what is left and
wraps at words, breaking only a token longer than its whole width (a link).
"""

from __future__ import annotations

__all__ = [
    "BORDER",
    "BORDER_SOFT",
    "BRAND",
    "ERROR",
    "FONT",
    "INK",
    "LAYER0",
    "LAYER1",
    "LAYER2",
    "MONO",
    "MUTED",
    "SOFT",
    "STYLE",
    "SUCCESS",
    "TEXT",
    "UI_FONT",
    "WARN",
    "readable",
    "solid",
    "styled",
    "tint",
    "tint_background",
]

LAYER0 = "var(--jp-layout-color0, #ffffff)"
LAYER1 = "var(--jp-layout-color1, #ffffff)"
LAYER2 = "var(--jp-layout-color2, #eeeeee)"
TEXT = "var(--jp-content-font-color1, var(--jp-ui-font-color0, rgba(0, 0, 0, 0.87)))"
SOFT = "var(--jp-ui-font-color1, rgba(0, 0, 0, 0.87))"
#: The theme's strongest text colour: black on a light page, white on a dark one.
INK = "var(--jp-content-font-color0, #000000)"
# Two thirds of the text colour: 6.8:1 on the light theme's grey layer, 5.4:1 on the dark one's.
MUTED = f"color-mix(in srgb, {INK} 66%, transparent)"
BORDER = "var(--jp-border-color1, #bdbdbd)"
BORDER_SOFT = "var(--jp-border-color2, #e0e0e0)"


def readable(colour: str, percent: int = 55) -> str:
    """``colour`` mixed with the theme's text colour (:data:`INK`): the same hue, darker on a
    light page and lighter on a dark one, so it reads as text on either (4.7:1 or more on the
    grey layers for JupyterLab's accents at 55 %)."""
    return f"color-mix(in srgb, {colour} {percent}%, {INK})"


SUCCESS = readable("var(--jp-success-color1, #388e3c)")
WARN = readable("var(--jp-warn-color1, #f57c00)")
ERROR = readable("var(--jp-error-color1, #d32f2f)")
BRAND = readable("var(--jp-brand-color1, #1976d2)")
UI_FONT = "var(--jp-ui-font-family, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif)"
FONT = "var(--jp-content-font-family, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif)"
MONO = "var(--jp-code-font-family, monospace)"


def tint(colour: str, percent: int) -> str:
    """``colour`` mixed into the page background: a wash that suits light and dark themes."""
    return f"color-mix(in srgb, {colour} {percent}%, transparent)"


def solid(colour: str) -> str:
    """Declarations of a badge filled with ``colour`` (one of the readable accents): its text
    in the page's own colour (:data:`LAYER1`), white on a light theme's dark fill and near black
    on a dark theme's light fill."""
    return f"background:{colour};color:{LAYER1};border-color:{colour};"


def tint_background(colour: str, percent: int, rgba: str) -> str:
    """``background`` declarations: ``rgba`` first for a browser without ``color-mix``, then
    :func:`tint` of ``colour``."""
    return f"background:{rgba};background:{tint(colour, percent)};"


STYLE = (
    "<style>"
    ".eb-view{color:var(--jp-content-font-color1,inherit);"
    "font-family:var(--jp-ui-font-family,inherit);font-size:var(--jp-ui-font-size1,13px);"
    "max-width:100%;box-sizing:border-box;line-height:1.45}"
    ".eb-view .eb-title{font-size:var(--jp-ui-font-size2,15px);font-weight:600;margin:0 0 .4em}"
    f".eb-view .eb-muted{{color:{MUTED}}}"
    ".eb-view .eb-bar{display:flex;flex-wrap:wrap;gap:.4em;margin:.3em 0 .6em}"
    ".eb-view .eb-chip{padding:.1em .6em;border-radius:1em;white-space:nowrap;"
    "border:1px solid var(--jp-border-color1,rgba(128,128,128,.5))}"
    ".eb-view .eb-chip b{font-variant-numeric:tabular-nums}"
    f".eb-view .eb-chip.eb-create{{border-color:{SUCCESS};"
    f"{tint_background(SUCCESS, 14, 'rgba(56,142,60,.14)')}}}"
    f".eb-view .eb-chip.eb-update{{border-color:{BRAND};"
    f"{tint_background(BRAND, 14, 'rgba(25,118,210,.14)')}}}"
    f".eb-view .eb-chip.eb-delete,.eb-view .eb-chip.eb-failed{{border-color:{ERROR};"
    f"{tint_background(ERROR, 14, 'rgba(211,47,47,.14)')}}}"
    f".eb-view .eb-chip.eb-invalid,.eb-view .eb-chip.eb-held_back{{border-color:{WARN};"
    f"{tint_background(WARN, 14, 'rgba(245,124,0,.14)')}}}"
    # A zero is quieter by its dashed outline and muted text, never by opacity (which takes the
    # text's contrast down with it).
    f".eb-view .eb-chip.eb-zero{{border-style:dashed;background:transparent;color:{MUTED}}}"
    ".eb-view details{margin:.5em 0}"
    ".eb-view summary{cursor:pointer;font-weight:600}"
    ".eb-view summary .eb-muted{font-weight:normal}"
    # Its own box: as wide as the output area, scrolling inside it with the header kept in view.
    ".eb-view .eb-scroll{max-width:100%;max-height:36em;overflow:auto;margin:.3em 0;"
    "border:1px solid var(--jp-border-color2,rgba(128,128,128,.35))}"
    ".eb-view table.eb-table{border-collapse:collapse;width:100%;table-layout:auto;margin:0;"
    "border:none;color:inherit;font-size:inherit}"
    ".eb-view table.eb-table th{position:sticky;top:0;z-index:1;text-align:left;"
    "background:var(--jp-layout-color2,Canvas);color:var(--jp-ui-font-color1,CanvasText);"
    "font-weight:600;padding:.25em .6em;white-space:nowrap;"
    "border-bottom:1px solid var(--jp-border-color1,rgba(128,128,128,.5))}"
    ".eb-view table.eb-table td{text-align:left;vertical-align:top;padding:.25em .6em;"
    "background:transparent;color:inherit;max-width:none;overflow-wrap:normal;word-break:normal;"
    "border-bottom:1px solid var(--jp-border-color2,rgba(128,128,128,.25))}"
    ".eb-view table.eb-table tbody tr:nth-child(odd),.eb-view table.eb-table tbody tr:hover"
    "{background:transparent}"
    ".eb-view table.eb-table th.eb-num,.eb-view table.eb-table td.eb-num{text-align:right;"
    "white-space:nowrap;font-variant-numeric:tabular-nums}"
    ".eb-view table.eb-table td.eb-key{white-space:nowrap;font-family:var(--jp-code-font-family,"
    "monospace);font-size:var(--jp-code-font-size,12px)}"
    ".eb-view table.eb-table td.eb-field{white-space:nowrap;font-weight:600}"
    f".eb-view table.eb-table td.eb-before{{color:{MUTED};width:30%;min-width:7em}}"
    ".eb-view table.eb-table td.eb-after.eb-text,.eb-view table.eb-table td.eb-after.eb-links"
    "{min-width:14em}"
    ".eb-view table.eb-table td.eb-why{min-width:9em}"
    # A column that yields: its content adds nothing to the table's width (so the columns a
    # decision rests on keep theirs) and fills whatever its column gets, wrapping at words.
    ".eb-view .eb-yield{display:block;width:0;min-width:100%;overflow-wrap:break-word}"
    ".eb-view .eb-nowrap{white-space:nowrap}"
    f".eb-view del{{text-decoration:line-through;color:inherit;"
    f"{tint_background(ERROR, 18, 'rgba(211,47,47,.18)')}}}"
    f".eb-view ins{{text-decoration:none;color:inherit;font-weight:600;"
    f"{tint_background(SUCCESS, 22, 'rgba(56,142,60,.22)')}}}"
    f".eb-view .eb-delta{{color:{MUTED};white-space:nowrap}}"
    f".eb-view .eb-empty{{font-style:italic;color:{MUTED}}}"
    ".eb-view ul.eb-list{margin:0;padding-left:1.1em}"
    f".eb-view .eb-elided{{color:{MUTED}}}"
    f".eb-view .eb-refusal{{border-left:3px solid {ERROR};padding:.2em .6em;"
    f"{tint_background(ERROR, 10, 'rgba(211,47,47,.10)')}}}"
    f".eb-view .eb-retry{{border-left:3px solid {WARN};padding:.3em .6em;margin:.5em 0;"
    f"{tint_background(WARN, 10, 'rgba(245,124,0,.10)')}}}"
    # A call or a path wraps at its spaces; only a token wider than the line is broken.
    ".eb-view code{font-family:var(--jp-code-font-family,monospace);overflow-wrap:break-word;"
    "background:var(--jp-layout-color2,transparent);color:inherit;padding:0 .25em}"
    f".eb-view tr.eb-failed td:first-child{{box-shadow:inset 3px 0 0 {ERROR}}}"
    "</style>"
)


def styled(body: str) -> str:
    """``body`` (HTML) in the themed box, with the style sheet it reads."""
    return f"{STYLE}<div class='eb-view'>{body}</div>"
