"""The contrast of rendered text, as WCAG 2 measures it: the formula, and a check run in a page.

:func:`contrast_ratio` is the WCAG relative-luminance formula over sRGB colours. :data:`CHECK_JS`
does the same in the browser, on the colours the page really draws: for every visible text node
inside a root element it takes the text's computed colour and the colour under it, found by
compositing the backgrounds of its ancestors (alpha, ``color-mix`` results and ``opacity``
included) down to the page, and it compares the ratio with what the text's size asks: 4.5:1, or
3:1 for large text (at least 24 px, or 18.66 px and bold). :func:`contrast_failures` runs it
through Playwright.

What it does not see: background images and gradients (reported as skipped, never passed),
filters and blend modes, and text drawn over boxes that are not its ancestors.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

#: The ratio normal text needs (WCAG 2 AA), and large text.
NORMAL_RATIO = 4.5
LARGE_RATIO = 3.0
#: Large text: this size in px, or :data:`LARGE_BOLD_PX` and bold (weight 700 or more).
LARGE_PX = 24.0
LARGE_BOLD_PX = 18.66

_HEX = re.compile(r"^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$")


def parse_hex(colour: str) -> tuple[int, int, int]:
    """``#rgb`` or ``#rrggbb`` as three 0–255 channels."""
    if not _HEX.match(colour):
        raise ValueError(f"colour {colour!r} is not #rgb or #rrggbb")
    digits = colour[1:]
    if len(digits) == 3:
        digits = "".join(d * 2 for d in digits)
    return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)


def _channel(value: float) -> float:
    """One sRGB channel (0–255) as linear light."""
    v = value / 255.0
    return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4


def relative_luminance(rgb: Sequence[float] | str) -> float:
    """WCAG relative luminance of an opaque sRGB colour (channels 0–255, or ``#hex``)."""
    r, g, b = parse_hex(rgb) if isinstance(rgb, str) else rgb
    return 0.2126 * _channel(r) + 0.7152 * _channel(g) + 0.0722 * _channel(b)


def contrast_ratio(first: Sequence[float] | str, second: Sequence[float] | str) -> float:
    """WCAG contrast ratio of two opaque colours, 1 to 21, whichever is lighter."""
    a, b = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def over(top: Sequence[float], alpha: float, under: Sequence[float]) -> tuple[float, ...]:
    """``top`` at ``alpha`` laid over the opaque ``under`` (as the browser composites)."""
    return tuple(alpha * t + (1.0 - alpha) * u for t, u in zip(top, under, strict=True))


def needed_ratio(font_px: float, weight: int) -> float:
    """The ratio text of this size and weight needs: 3 for large text, else 4.5."""
    large = font_px >= LARGE_PX or (font_px >= LARGE_BOLD_PX and weight >= 700)
    return LARGE_RATIO if large else NORMAL_RATIO


#: ``(root, options) => {failures, checked, skipped, pairs}``, for ``ElementHandle.evaluate``.
#: ``options.pairs`` (optional): colour pairs, each ``[css, css]``, whose ratio is returned in
#: ``pairs``, so a test can hold the page's formula against :func:`contrast_ratio`.
CHECK_JS = r"""
(root, options) => {
  options = options || {};
  const NORMAL = 4.5, LARGE = 3.0, LARGE_PX = 24, LARGE_BOLD_PX = 18.66;
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext("2d", {willReadFrequently: true});
  const cache = new Map();
  // Any CSS colour as [r, g, b, a] (0-255, alpha 0-1). The computed forms are parsed; anything
  // else is painted on a canvas and read back.
  const parse = (css) => {
    if (cache.has(css)) return cache.get(css);
    let out = null;
    const RGB = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/;
    const SRGB = /^color\(srgb\s+([-\d.e]+)\s+([-\d.e]+)\s+([-\d.e]+)(?:\s*\/\s*([\d.]+%?))?\s*\)$/;
    let m = css.match(RGB);
    if (m) {
      let a = m[4] === undefined ? 1 : m[4].endsWith("%") ? parseFloat(m[4]) / 100 : +m[4];
      out = [+m[1], +m[2], +m[3], a];
    }
    m = out ? null : css.match(SRGB);
    if (m) {
      let a = m[4] === undefined ? 1 : m[4].endsWith("%") ? parseFloat(m[4]) / 100 : +m[4];
      const c = v => Math.min(255, Math.max(0, +v * 255));
      out = [c(m[1]), c(m[2]), c(m[3]), a];
    }
    if (!out) {
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = "rgba(0, 0, 0, 0)";
      ctx.fillStyle = css;
      ctx.fillRect(0, 0, 1, 1);
      const d = ctx.getImageData(0, 0, 1, 1).data;
      out = [d[0], d[1], d[2], d[3] / 255];
    }
    cache.set(css, out);
    return out;
  };
  const channel = v => {
    v /= 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  const lum = c => 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2]);
  const ratio = (x, y) => { const [a, b] = [lum(x), lum(y)].sort((p, q) => q - p);
                            return (a + 0.05) / (b + 0.05); };
  // Premultiplied layers: [r*a, g*a, b*a, a].
  const pre = c => [c[0] * c[3], c[1] * c[3], c[2] * c[3], c[3]];
  const overP = (s, d) => [0, 1, 2, 3].map(i => s[i] + d[i] * (1 - s[3]));
  const scale = (p, k) => p.map(v => v * k);
  const opaque = p => p[3] > 0 ? [p[0] / p[3], p[1] / p[3], p[2] / p[3]] : [255, 255, 255];
  // The page under everything: the JupyterLab page background (the canvas is white).
  const pageVar = getComputedStyle(document.body).getPropertyValue("--jp-layout-color0").trim();
  const base = pageVar ? parse(pageVar) : [255, 255, 255, 1];
  const baseP = overP(pre(base), [255, 255, 255, 1]);

  // The pixel under a text node, with and without the text: each ancestor is a group (its
  // background, then what is inside it), scaled by its opacity, composited bottom to top.
  const pixel = (chain, text) => {
    let inner = text ? pre(text) : [0, 0, 0, 0];
    for (let i = chain.length - 1; i >= 0; i--) {
      const s = chain[i];
      inner = overP(inner, pre(s.bg));
      if (s.opacity < 1) inner = scale(inner, s.opacity);
    }
    return opaque(overP(inner, baseP));
  };
  const path = (el) => {
    const parts = [];
    for (let e = el; e && e !== root.parentElement; e = e.parentElement) {
      let part = e.tagName.toLowerCase();
      const cls = [...e.classList].filter(c => !c.startsWith("lm-") && !c.startsWith("p-"));
      if (cls.length) part += "." + cls.slice(0, 2).join(".");
      parts.unshift(part);
    }
    return parts.join(" > ");
  };

  const failures = [], skipped = [];
  let checked = 0;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue.replace(/\s+/g, " ").trim();
    if (!text) continue;
    const el = node.parentElement;
    if (!el || el.closest("style, script, template, noscript")) continue;
    // WCAG asks nothing of an inactive control's text (a disabled Stop button).
    if (el.closest("button:disabled, [aria-disabled='true'], input:disabled")) continue;
    const shown = {visibilityProperty: true, contentVisibilityAuto: true};
    if (el.checkVisibility && !el.checkVisibility(shown)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const rects = [...range.getClientRects()].filter(r => r.width > 0 && r.height > 0);
    if (!rects.length) continue;
    const style = getComputedStyle(el);
    const chain = [];
    let image = null, covered = false;
    for (let e = el; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      // An image under an opaque box is hidden by it; one above none of them is not known.
      if (!covered && s.backgroundImage && s.backgroundImage !== "none") image = image || e;
      const layer = {bg: parse(s.backgroundColor), opacity: parseFloat(s.opacity)};
      if (layer.bg[3] >= 1) covered = true;
      chain.unshift(layer);
    }
    const fg = parse(style.color);
    if (image) {
      skipped.push({text: text.slice(0, 80), why: "background image", selector: path(image)});
      continue;
    }
    const front = pixel(chain, fg), back = pixel(chain, null);
    const size = parseFloat(style.fontSize), weight = parseInt(style.fontWeight, 10) || 400;
    const needed = (size >= LARGE_PX || (size >= LARGE_BOLD_PX && weight >= 700)) ? LARGE : NORMAL;
    const r = ratio(front, back);
    checked += 1;
    if (r + 1e-9 < needed) {
      failures.push({
        text: text.slice(0, 80), ratio: Math.round(r * 100) / 100, needed, size, weight,
        color: style.color, fg: front.map(Math.round), bg: back.map(Math.round),
        selector: path(el),
      });
    }
  }
  const pairs = (options.pairs || []).map(([a, b]) => {
    const pa = overP(pre(parse(a)), baseP), pb = overP(pre(parse(b)), baseP);
    return ratio(opaque(pa), opaque(pb));
  });
  return {failures, checked, skipped, pairs};
}
"""


def contrast_report(root: Any, pairs: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """:data:`CHECK_JS` run on ``root`` (a Playwright ``Locator`` or ``ElementHandle``)."""
    handle = root.element_handle() if hasattr(root, "element_handle") else root
    result: dict[str, Any] = handle.evaluate(CHECK_JS, {"pairs": [list(p) for p in pairs]})
    return result


def contrast_failures(root: Any) -> list[dict[str, Any]]:
    """The texts under ``root`` below the ratio they need, each with its ratio, the ratio
    needed, its colours and where it is; the skipped ones (over an image) count as failures."""
    report = contrast_report(root)
    skipped = [{**s, "ratio": None, "needed": NORMAL_RATIO} for s in report["skipped"]]
    return [*report["failures"], *skipped]
