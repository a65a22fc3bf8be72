"""HTML of the chat panel: its style sheet, title, transcript turns and status line.

Each function takes data (a :class:`~estatebot.chat.turns.Turn`, the status figures) and returns
HTML; none touches a widget. Answers are untrusted text, rendered by
:mod:`estatebot.chat.markdown` (raw HTML escaped, web links only); questions, errors and notices
are escaped.
"""

from __future__ import annotations

import html
from datetime import datetime

from estatebot.chat.markdown import render_markdown, render_plain
from estatebot.chat.turns import Turn

__all__ = ["CSS", "badge", "clock", "error_html", "status_html", "title_html", "turn_html"]

#: The panel's style sheet; every rule is scoped to the panel's ``eb-chat`` class.
CSS = """
<style>
.eb-chat { border: 1px solid #d0d7de; border-radius: 10px; padding: 8px 10px; max-width: 820px;
  background: #ffffff; font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; }
.eb-chat .eb-title { font-size: 15px; font-weight: 600; color: #1f2328; line-height: 1.6;
  padding: 0 2px 4px; border-bottom: 1px solid #eaeef2; }
.eb-chat .eb-transcript { padding: 4px 2px; }
.eb-chat .eb-turn-view, .eb-chat .eb-turn-view > .widget-html-content { width: 100%;
  line-height: 1.45; }
.eb-chat .eb-turn { box-sizing: border-box; margin: 4px 0; padding: 6px 10px; border-radius: 10px;
  width: fit-content; max-width: 88%; font-size: 13px; line-height: 1.45; white-space: normal;
  color: #1f2328; overflow-wrap: anywhere; }
.eb-chat .eb-turn p { margin: 0.25em 0; }
.eb-chat .eb-turn ul, .eb-chat .eb-turn ol { margin: 0.25em 0; padding-left: 1.4em; }
.eb-chat .eb-turn table { border-collapse: collapse; margin: 0.3em 0; }
.eb-chat .eb-turn th, .eb-chat .eb-turn td { border: 1px solid #d0d7de; padding: 2px 6px; }
.eb-chat .eb-who { font-size: 11px; font-weight: 600; color: #59636e; }
.eb-chat .eb-user { background: #dbeafe; margin-left: auto; }
.eb-chat .eb-bot { background: #f3f4f6; }
.eb-chat .eb-session { background: none; color: #59636e; font-size: 12px; width: 100%;
  max-width: 100%;
  text-align: center; border-top: 1px dashed #d0d7de; border-radius: 0; }
.eb-chat .eb-notice, .eb-chat .eb-failed { background: #fff1f0; border: 1px solid #ffccc7; }
.eb-chat .eb-no-answer { border: 1px dashed #d4a72c; background: #fff8e5; }
.eb-chat .eb-stopped { border: 1px dashed #8c959f; }
.eb-chat .eb-badge { display: inline-block; margin-left: 6px; padding: 0 6px; border-radius: 8px;
  font-size: 10px; font-weight: 600; text-transform: uppercase; background: #eaeef2; }
.eb-chat .eb-badge-no-answer { background: #d4a72c; color: #ffffff; }
.eb-chat .eb-badge-stopped { background: #6e7781; color: #ffffff; }
.eb-chat .eb-badge-error, .eb-chat .eb-badge-rate-limited { background: #cf222e; color: #fff; }
.eb-chat .eb-error-text { color: #a40e26; }
.eb-chat .eb-meta { font-size: 11px; color: #59636e; }
.eb-chat .eb-streaming .eb-body::after { content: '▍'; color: #8c959f; }
.eb-chat .eb-typing { color: #8c959f; letter-spacing: 2px; }
.eb-chat .eb-status { font-size: 12px; color: #59636e; line-height: 1.6; }
.eb-chat .eb-status b { color: #1f2328; }
</style>
"""


def badge(kind: str, label: str) -> str:
    """A small label next to the speaker's name (``kind`` picks its colour)."""
    return f'<span class="eb-badge eb-badge-{kind}">{html.escape(label)}</span>'


def clock(moment: datetime) -> str:
    """``moment``'s time of day, as shown to the user."""
    return moment.strftime("%H:%M:%S")


def title_html(title: str) -> str:
    """The panel's heading, with the style sheet."""
    return CSS + f'<div class="eb-title">{html.escape(title)}</div>'


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
        if turn.state == "failed":
            extra = error_html(turn)
            badges.append(
                badge("rate-limited", "rate limited")
                if turn.retry_at is not None
                else badge("error", "error")
            )
    elif turn.role == "session":
        who = ""
        body = render_plain(body_text)
        if turn.state == "failed":
            extra = error_html(turn)
    else:
        who = "Not sent"
        items = "".join(f"<li>{html.escape(line)}</li>" for line in body_text.splitlines())
        body = f'<ul class="eb-error-text">{items}</ul>'
    if turn.role == "bot" and turn.no_answer is False and turn.state == "done":
        classes.append("eb-answered")
    who_html = f'<div class="eb-who">{html.escape(who)}{"".join(badges)}</div>' if who else ""
    return (
        f'<div class="{" ".join(classes)}" data-turn="{turn.turn}">{who_html}'
        f'<div class="eb-body">{body}</div>{extra}</div>'
    )


def error_html(turn: Turn) -> str:
    """A failed turn's error text and, when rate limited, when sending is possible again."""
    parts = [f'<div class="eb-error-text">{html.escape(turn.error or "")}</div>']
    if turn.retry_at is not None:
        wait = max(0, round((turn.retry_at - datetime.now()).total_seconds()))
        parts.append(
            f'<div class="eb-retry eb-meta">You can send again at {clock(turn.retry_at)} '
            f"(in {wait} s).</div>"
        )
    return "".join(parts)


def status_html(
    *,
    session_id: int | None,
    last_answer: Turn | None,
    total_tokens: int,
    busy: bool,
    retry_at: datetime | None,
) -> str:
    """The status line: session, the last answer's tokens and latency, totals, activity."""
    parts = [f"Session <b>{session_id}</b>" if session_id is not None else "No session yet"]
    if last_answer is not None:
        tokens = "?" if last_answer.tokens is None else f"{last_answer.tokens:,}"
        latency = "?" if last_answer.latency_ms is None else f"{last_answer.latency_ms:,.0f}"
        parts.append(f"Last answer: <b>{tokens}</b> tokens, <b>{latency}</b> ms")
    parts.append(f"Total: <b>{total_tokens:,}</b> tokens")
    if busy:
        parts.append("answering…")
    if retry_at is not None and retry_at > datetime.now():
        parts.append(f"rate limited until {clock(retry_at)}")
    return '<div class="eb-status">' + " · ".join(parts) + "</div>"
