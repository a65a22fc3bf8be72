"""HTML of the chat panel: its style sheet, title, transcript turns and status line.

Each function takes data (a :class:`~estatebot.chat.panel.turns.Turn`, the status figures) and
returns HTML; none touches a widget. Answers are untrusted text, rendered by
:mod:`estatebot.chat.panel.markdown` (raw HTML escaped, web links only); questions, errors and
notices are escaped.
"""

from __future__ import annotations

import html
from datetime import datetime

from estatebot._theme import (
    BORDER,
    BORDER_SOFT,
    BRAND,
    ERROR,
    FONT,
    LAYER1,
    LAYER2,
    MONO,
    MUTED,
    SOFT,
    TEXT,
    UI_FONT,
    WARN,
    tint,
)
from estatebot.chat.panel.markdown import render_markdown, render_plain
from estatebot.chat.panel.status import seconds_left, waited_text
from estatebot.chat.panel.turns import Turn
from estatebot.chat.textview import NO_MATH, clock, latency_text, tokens_text

__all__ = [
    "CSS",
    "KERNEL_WAIT_NOTE",
    "badge",
    "clock",
    "error_html",
    "meta_html",
    "past_title",
    "retry_text",
    "status_html",
    "title_html",
    "turn_html",
]

#: The panel's style sheet; every rule is scoped to the panel's ``eb-chat`` class. Colours come
#: from the notebook's theme (:mod:`estatebot._theme`), so dark and high-contrast themes read.
CSS = f"""
<style>
.eb-chat {{ border: 1px solid {BORDER}; border-radius: 10px; padding: 8px 10px;
  box-sizing: border-box; width: 100%; max-width: 900px; background: {LAYER1}; color: {TEXT};
  font-family: {UI_FONT}; }}
.eb-chat .eb-title {{ font-size: 15px; font-weight: 600; color: {TEXT}; line-height: 1.6;
  overflow-wrap: anywhere;
  display: inline; }}
.eb-chat .eb-heading {{ padding: 0 2px 4px; border-bottom: 1px solid {BORDER_SOFT};
  display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 10px; }}
.eb-chat .eb-subtitle {{ font-size: 11px; color: {MUTED}; font-family: {MONO}; }}
.eb-chat .eb-transcript {{ padding: 4px 2px; overflow-anchor: none; }}
.eb-chat .eb-turn-view {{ line-height: 1.45; }}
.eb-chat .eb-turn-view > .widget-html-content {{ width: 100%; line-height: 1.45; }}
.eb-chat .eb-turn {{ box-sizing: border-box; margin: 4px 0; padding: 6px 10px;
  border-radius: 10px; width: fit-content; max-width: 88%; font-size: 13px; line-height: 1.45;
  white-space: normal; color: {TEXT}; overflow-wrap: anywhere; font-family: {FONT}; }}
.eb-chat .eb-turn p {{ margin: 0.25em 0; }}
.eb-chat .eb-turn a {{ color: {BRAND}; }}
.eb-chat .eb-turn code {{ font-family: {MONO}; background: {LAYER2}; padding: 0 3px;
  border-radius: 3px; }}
.eb-chat .eb-turn ul, .eb-chat .eb-turn ol {{ margin: 0.25em 0; padding-left: 1.4em; }}
.eb-chat .eb-turn table {{ border-collapse: collapse; margin: 0.3em 0; }}
.eb-chat .eb-turn th, .eb-chat .eb-turn td {{ border: 1px solid {BORDER}; padding: 2px 6px;
  color: {TEXT}; background: transparent; }}
.eb-chat .eb-who {{ font-size: 11px; font-weight: 600; color: {MUTED}; }}
.eb-chat .eb-user {{ background: {tint(BRAND, 18)}; margin-left: auto; }}
.eb-chat .eb-bot {{ background: {LAYER2}; }}
.eb-chat .eb-session {{ background: none; color: {MUTED}; font-size: 12px; width: 100%;
  max-width: 100%; text-align: center; border-top: 1px dashed {BORDER}; border-radius: 0; }}
.eb-chat .eb-notice, .eb-chat .eb-failed {{ background: {tint(ERROR, 10)};
  border: 1px solid {tint(ERROR, 45)}; }}
.eb-chat .eb-no-answer {{ border: 1px dashed {WARN}; background: {tint(WARN, 10)}; }}
.eb-chat .eb-stopped {{ border: 1px dashed {MUTED}; }}
.eb-chat .eb-badge {{ display: inline-block; margin-left: 6px; padding: 0 6px;
  border-radius: 8px; font-size: 10px; font-weight: 600; text-transform: uppercase;
  background: {LAYER2}; color: {SOFT}; border: 1px solid {BORDER_SOFT}; }}
/* A filled badge's text is the page's own colour, never a fixed white: white on the dark
   theme's light accents would not read. */
.eb-chat .eb-badge-no-answer {{ background: {WARN}; color: {LAYER1}; border-color: {WARN}; }}
.eb-chat .eb-badge-stopped {{ background: {MUTED}; color: {LAYER1}; border-color: {MUTED}; }}
.eb-chat .eb-badge-error, .eb-chat .eb-badge-rate-limited {{ background: {ERROR};
  color: {LAYER1}; border-color: {ERROR}; }}
.eb-chat .eb-error-title {{ color: {ERROR}; font-weight: 600; }}
.eb-chat .eb-error-text {{ color: {SOFT}; }}
.eb-chat .eb-meta {{ font-size: 11px; color: {MUTED}; margin-top: 2px; }}
.eb-chat .eb-streaming .eb-body::after {{ content: '▍'; color: {MUTED}; }}
.eb-chat .eb-typing {{ color: {MUTED}; letter-spacing: 2px; }}
.eb-chat .eb-status {{ font-size: 12px; color: {MUTED}; line-height: 1.6; }}
.eb-chat .eb-status b {{ color: {TEXT}; }}
.eb-chat .eb-status .eb-limit {{ color: {WARN}; font-weight: 600; }}
.eb-chat .eb-status .eb-closed {{ color: {ERROR}; font-weight: 600; }}
.eb-chat .eb-actions {{ margin: 0 0 4px 4px; }}
.eb-chat .eb-failed.eb-past {{ background: none; border: 1px dashed {BORDER}; }}
.eb-chat .eb-past .eb-error-title {{ color: {SOFT}; }}
.eb-chat .eb-badge-past {{ background: transparent; color: {SOFT}; border-color: {BORDER}; }}
.eb-chat .eb-error-details {{ font-size: 11px; color: {SOFT}; margin-top: 2px; }}
.eb-chat .eb-error-details summary {{ cursor: pointer; }}
.eb-chat .eb-error-details code {{ font-family: {MONO}; white-space: pre-wrap;
  overflow-wrap: anywhere; }}
.eb-chat .eb-kernel-waited {{ color: {SOFT}; font-style: italic; }}
/* Send pressed while a cell keeps the kernel busy: the click waits in the kernel's queue, so
   only the page can tell at once. The button keeps the focus and the box its text until the
   kernel reads the click (it then empties the box), so this note shows meanwhile; the delay
   keeps it from flashing when the kernel is idle. */
.eb-chat .eb-kernel-wait {{ display: none; }}
.eb-chat .eb-send-row:has(.eb-send:focus:not(:disabled):not(.eb-heard)):has(
  .eb-input input:not(:placeholder-shown)) .eb-kernel-wait {{ display: block;
  visibility: hidden; animation: eb-appear 0s linear 0.8s forwards; }}
@keyframes eb-appear {{ to {{ visibility: visible; }} }}
.eb-chat .eb-kernel-wait-text {{ font-size: 12px; color: {SOFT}; font-style: italic;
  line-height: 1.4; padding: 2px 4px; }}
</style>
"""

#: The note shown under Send, by the page alone, while a busy kernel has not read the click yet.
KERNEL_WAIT_NOTE = (
    f'<div class="eb-kernel-wait-text {NO_MATH}">Waiting for the kernel: a cell is running. '
    "The question is sent when it ends.</div>"
)


def badge(kind: str, label: str) -> str:
    """A small label next to the speaker's name (``kind`` picks its colour)."""
    return f'<span class="eb-badge eb-badge-{kind}">{html.escape(label)}</span>'


def title_html(title: str, subtitle: str = "") -> str:
    """The panel's heading (and a muted ``subtitle``, the chatbot ID), with the style sheet."""
    sub = f'<span class="eb-subtitle">{html.escape(subtitle)}</span>' if subtitle else ""
    return (
        CSS + f'<div class="eb-heading {NO_MATH}">'
        f'<span class="eb-title">{html.escape(title)}</span>{sub}</div>'
    )


def meta_html(turn: Turn) -> str:
    """The small line under a complete answer: its latency, tokens (when the service reported
    them) and the time it arrived."""
    parts = [
        latency_text(turn.latency_ms),
        tokens_text(turn.tokens),
        clock(turn.answered_at) if turn.answered_at is not None else "",
    ]
    shown = " · ".join(html.escape(p) for p in parts if p)
    return f'<div class="eb-meta eb-answer-meta">{shown}</div>' if shown else ""


def retry_text(retry_at: datetime, now: datetime | None = None) -> str:
    """``Rate limited: retry in 12 s`` (whole seconds, rounded up, as the Send button counts),
    or that sending is possible again."""
    wait = seconds_left(retry_at, now or datetime.now())
    if wait > 0:
        return f"Rate limited: retry in {wait} s"
    return "Rate limited: you can retry now"


def turn_html(turn: Turn, text: str | None = None) -> str:
    """One transcript entry; ``text`` stands in for ``turn.text`` (a streamed answer so far)."""
    body_text = turn.text if text is None else text
    classes = ["eb-turn", f"eb-{turn.role}", f"eb-{turn.state}"]
    badges: list[str] = []
    extra = ""
    if turn.role == "user":
        who = "You"
        body = render_plain(body_text)
        if turn.ask_type not in (None, "Text") or turn.file_ids:
            files = ", ".join(str(i) for i in turn.file_ids)
            meta = f"{turn.ask_type or 'Text'}" + (f" · files {files}" if files else "")
            extra = f'<div class="eb-meta">{html.escape(meta)}</div>'
        if turn.kernel_wait_s is not None:
            waited = html.escape(waited_text(turn.kernel_wait_s))
            extra += f'<div class="eb-meta eb-kernel-waited">{waited}</div>'
    elif turn.role == "bot":
        who = "Bot"
        body = render_markdown(body_text) if body_text else ""
        if turn.state == "waiting":
            body = '<span class="eb-typing">…</span>'
        if turn.no_answer:
            classes.append("eb-no-answer")
            badges.append(badge("no-answer", "no answer"))
        if turn.state == "stopped":
            badges.append(badge("stopped", "stopped"))
            if not body_text:
                body = '<span class="eb-meta">stopped before any text arrived</span>'
        if not turn.complete:
            badges.append(badge("incomplete", "incomplete"))
        if turn.state in ("done", "stopped") and turn.latency_ms is not None:
            extra = meta_html(turn)
        if turn.state == "failed":
            extra = error_html(turn)
            if turn.past:
                classes.append("eb-past")
                label = "was rate limited" if turn.retry_at is not None else "earlier error"
                badges.append(badge("past", label))
            elif turn.retry_at is not None:
                badges.append(badge("rate-limited", "rate limited"))
            else:
                badges.append(badge("error", "error"))
    elif turn.role == "session":
        who = ""
        body = render_plain(body_text)
        if turn.state == "failed":
            extra = error_html(turn)
    else:
        who = "Not sent"
        items = "".join(f"<li>{html.escape(line)}</li>" for line in body_text.splitlines())
        body = f'<ul class="eb-error-text">{items}</ul>'
    answered = turn.no_answer is not None and not turn.no_answer  # a numpy False counts too
    if turn.role == "bot" and answered and turn.state == "done":
        classes.append("eb-answered")
    if turn.role == "bot" and turn.finished and turn.extra_html:
        # Added by the panel's answer hooks (a fact-check badge, ...): their own, trusted HTML.
        extra += f'<div class="eb-extra">{turn.extra_html}</div>'
    who_html = f'<div class="eb-who">{html.escape(who)}{"".join(badges)}</div>' if who else ""
    classes.append(NO_MATH)
    return (
        f'<div class="{" ".join(classes)}" data-turn="{turn.turn}">{who_html}'
        f'<div class="eb-body">{body}</div>{extra}</div>'
    )


def past_title(turn: Turn) -> str:
    """The headline of a failure that is over: ``Was rate limited at 12:03:15``, ``Failed at
    12:03:15: The service failed (HTTP 500)``."""
    at = f" at {clock(turn.failed_at)}" if turn.failed_at is not None else " earlier"
    if turn.retry_at is not None:
        return f"Was rate limited{at}"
    return f"Failed{at}: {turn.error_title or 'the request failed'}"


def error_html(turn: Turn, now: datetime | None = None) -> str:
    """A failed turn in a person's words: the headline (a live countdown while rate limited;
    when it is past, when it failed), the service's own message, muted, and the technical
    details folded under "Details"."""
    if turn.past:
        title = past_title(turn)
    elif turn.retry_at is not None:
        title = retry_text(turn.retry_at, now)
    else:
        title = turn.error_title or "The request failed"
    parts = [f'<div class="eb-error-title">{html.escape(title)}</div>']
    if turn.error and turn.error not in (title, turn.error_title, turn.error_details):
        parts.append(f'<div class="eb-error-text">{html.escape(turn.error)}</div>')
    if turn.error_details:
        parts.append(
            '<details class="eb-error-details"><summary>Details</summary>'
            f"<code>{html.escape(turn.error_details)}</code></details>"
        )
    return "".join(parts)


def status_html(
    *,
    session_id: int | None,
    last_answer: Turn | None,
    total_tokens: int,
    busy: bool,
    retry_at: datetime | None,
    closed: bool = False,
    now: datetime | None = None,
) -> str:
    """The status line: session, the last answer's tokens and latency, totals, activity, a
    rate limit's countdown, and whether the client was closed."""
    parts = [f"Session <b>{session_id}</b>" if session_id is not None else "No session yet"]
    if last_answer is not None:
        tokens = "?" if last_answer.tokens is None else f"{last_answer.tokens:,}"
        latency = "?" if last_answer.latency_ms is None else f"{last_answer.latency_ms:,.0f}"
        parts.append(f"Last answer: <b>{tokens}</b> tokens, <b>{latency}</b> ms")
    parts.append(f"Total: <b>{total_tokens:,}</b> tokens")
    if busy:
        parts.append("answering…")
    if retry_at is not None and retry_at > (now or datetime.now()):
        parts.append(f'<span class="eb-limit">{html.escape(retry_text(retry_at, now))}</span>')
    if closed:
        parts.append(
            '<span class="eb-closed">This panel\'s client was closed: press Reconnect</span>'
        )
    return f'<div class="eb-status {NO_MATH}">' + " · ".join(parts) + "</div>"
