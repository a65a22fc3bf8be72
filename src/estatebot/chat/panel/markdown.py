"""Safe Markdown rendering of chatbot answers for the chat panel.

An answer is text from the service, so it is treated as untrusted: raw HTML in it is shown as
text (never interpreted), links and images keep only ``http``/``https`` targets, and images are
rendered as links so that showing an answer never loads anything by itself.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt

_WEB_SCHEMES = ("http://", "https://")


def is_web_url(url: str) -> bool:
    """Whether ``url`` is an absolute http(s) URL, the only links an answer may carry."""
    return url.strip().lower().startswith(_WEB_SCHEMES)


def _render_link_open(
    renderer: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any
) -> str:
    # Links open outside the notebook and give the target no handle back to the page.
    token = tokens[idx]
    token.attrSet("target", "_blank")
    token.attrSet("rel", "noopener noreferrer nofollow")
    return str(renderer.renderToken(tokens, idx, options, env))


def _render_image(renderer: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
    # An image would be fetched as soon as the answer is shown (a tracking pixel, a broken
    # placeholder for a listing photo): show a link to it instead.
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = token.content or "image"
    label = html.escape(f"image: {alt}")
    return (
        f'<a href="{html.escape(src, quote=True)}" target="_blank" '
        f'rel="noopener noreferrer nofollow" class="eb-image-link">{label}</a>'
    )


def _make_renderer() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    # Replace the default link check (which blocks only a few schemes) with an allow-list.
    md.validateLink = is_web_url  # type: ignore[method-assign]
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("image", _render_image)
    return md


_MD = _make_renderer()


def render_markdown(text: str) -> str:
    """``text`` as HTML: CommonMark (plus tables) with raw HTML escaped and web links only."""
    return str(_MD.render(text))


def render_plain(text: str) -> str:
    """``text`` as HTML that shows it verbatim (escaped, line breaks kept)."""
    return html.escape(text).replace("\n", "<br>")
