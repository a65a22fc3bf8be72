"""The foreign server's state, in memory: workspaces, chatbots, sessions and listings.

The operations here carry the contract's and the addendum's meaning (uniqueness of MLSNumber and
Url, Update by Key/KeyType returning 0 when nothing matches, Delete ignoring unknown keys, List
filters and paging) and know nothing of HTTP or of reply shapes (``server.py`` does those).
"""

from __future__ import annotations

import math
import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The models ModelList offers (from the addendum).
MODELS: tuple[tuple[str, str, bool], ...] = (
    ("2", "gpt-4o", True),
    ("3", "gpt-4o-mini", True),
    ("22", "claude-3.5-sonnet", False),
    ("23", "claude-3.5-haiku", False),
)


class Failure(Exception):
    """A business failure: its Code, message, the field errors of a validation failure, a
    ``Retry-After`` text (or other ``headers`` of the reply), and the HTTP status when it is not
    the Code (a 404 sent as HTTP 200)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        fields: Mapping[str, list[str]] | None = None,
        retry_after: str | None = None,
        http_status: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.status = status
        self.message = message
        self.fields = dict(fields or {})
        self.retry_after = retry_after
        self.http_status = http_status
        self.headers = dict(headers or {})
        super().__init__(f"{status}: {message}")


@dataclass
class Workspace:
    """The owner of chatbots; its two credentials (the keys are random per server)."""

    api_key: str
    session_key: str


@dataclass
class Chatbot:
    """A chatbot: its settings and its listings by ID."""

    serial: str
    workspace: Workspace
    settings: dict[str, Any] = field(default_factory=dict)
    listings: dict[int, dict[str, Any]] = field(default_factory=dict)
    messages: int = 0


@dataclass
class Session:
    """A chat session and the times of its messages (for the per-session rate limit)."""

    serial: str
    sent: list[float] = field(default_factory=list)


def new_key() -> str:
    """A long random credential (never a short string: the client's redaction is global)."""
    return "fk-" + secrets.token_hex(20)


def _same(a: Any, b: Any) -> bool:
    return isinstance(a, str) and isinstance(b, str) and a.strip().lower() == b.strip().lower()


class Store:
    """Every chatbot, session and listing of one server; safe to use from several threads."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.workspaces: list[Workspace] = []
        self.chatbots: dict[str, Chatbot] = {}
        self.sessions: dict[int, Session] = {}
        # Numbered apart from the project's emulator, so a mix-up would show.
        self._next_listing = 70001
        self._next_session = 900001
        self._next_message = 3000001

    # ------------------------------------------------------------------ set-up

    def add_workspace(self) -> Workspace:
        """A new workspace with fresh keys."""
        workspace = Workspace(new_key(), new_key())
        with self.lock:
            self.workspaces.append(workspace)
        return workspace

    def add_chatbot(self, workspace: Workspace, **settings: Any) -> Chatbot:
        """A new chatbot (serial: 32 lower-case hex characters) of ``workspace``."""
        chatbot = Chatbot(secrets.token_hex(16), workspace, {"Name": "Foreign Homes", **settings})
        with self.lock:
            self.chatbots[chatbot.serial] = chatbot
        return chatbot

    # ------------------------------------------------------------------ look-ups

    def workspace_of(self, api_key: str | None, session_key: str | None) -> Workspace | None:
        """The workspace one of the keys belongs to (None when neither is valid)."""
        for workspace in self.workspaces:
            if api_key is not None and secrets.compare_digest(api_key, workspace.api_key):
                return workspace
            if session_key is not None and secrets.compare_digest(
                session_key, workspace.session_key
            ):
                return workspace
        return None

    def chatbot(self, serial: str, workspace: Workspace) -> Chatbot:
        """The chatbot, if ``workspace`` may see it; 404 otherwise (never saying it exists)."""
        chatbot = self.chatbots.get(serial.strip().lower())
        if chatbot is None or chatbot.workspace is not workspace:
            raise Failure(404, f"Chatbot {serial} not found")
        return chatbot

    def session(self, session_id: int, workspace: Workspace) -> tuple[Session, Chatbot]:
        """The session and its chatbot; 404 for an unknown or foreign session."""
        session = self.sessions.get(session_id)
        if session is None or self.chatbots[session.serial].workspace is not workspace:
            raise Failure(404, f"Session {session_id} not found")
        return session, self.chatbots[session.serial]

    # ------------------------------------------------------------------ chat

    def new_session(self, chatbot: Chatbot) -> int:
        """A new session ID."""
        with self.lock:
            session_id = self._next_session
            self._next_session += 1
            self.sessions[session_id] = Session(chatbot.serial)
        return session_id

    def new_message_ids(self) -> tuple[int, int]:
        """The IDs of a question and its answer."""
        with self.lock:
            first = self._next_message
            self._next_message += 2
        return first, first + 1

    def admit(self, session: Session, chatbot: Chatbot) -> None:
        """Count a message against the limits: 429 with Retry-After when one is reached."""
        settings = chatbot.settings
        now = time.monotonic()
        with self.lock:
            limit = settings.get("MessageLimit", -1)
            if limit is not None and limit >= 0 and chatbot.messages >= limit:
                raise Failure(429, "The monthly message limit of this chatbot is reached")
            count, window = settings.get("RateLimitCount"), settings.get("RateLimitTime")
            if count and window:
                recent = [t for t in session.sent if now - t < window]
                if len(recent) >= count:
                    wait = math.ceil(window - (now - recent[0]))
                    message = settings.get("RateLimitMessage") or "Too many messages"
                    raise Failure(429, message, retry_after=str(max(wait, 1)))
                session.sent = recent
            session.sent.append(now)
            chatbot.messages += 1

    # ------------------------------------------------------------------ listings

    def _clash(self, chatbot: Chatbot, fields: Mapping[str, Any], skip: int | None) -> str | None:
        for listing_id, listing in chatbot.listings.items():
            if listing_id == skip:
                continue
            if _same(listing["MLSNumber"], fields["MLSNumber"]):
                return f"A listing with MLSNumber {fields['MLSNumber']} already exists"
            if _same(listing["Url"], fields["Url"]):
                return f"A listing with Url {fields['Url']} already exists"
        return None

    def create(self, chatbot: Chatbot, fields: Mapping[str, Any], *, unique: bool = True) -> int:
        """Add a listing; 409 when its MLSNumber or Url is taken on this chatbot (if ``unique``)."""
        with self.lock:
            clash = self._clash(chatbot, fields, None)
            if clash is not None and unique:
                raise Failure(409, clash)
            listing_id = self._next_listing
            self._next_listing += 1
            chatbot.listings[listing_id] = dict(fields)
        return listing_id

    def find(self, chatbot: Chatbot, key: str, key_type: str) -> list[int]:
        """IDs of the listings ``key`` names under ``key_type`` (NewOaks = the listing ID)."""
        if key_type == "NewOaks":
            text = key.strip()
            found = int(text) if text.isdigit() else None
            return [found] if found in chatbot.listings else []
        name = "MLSNumber" if key_type == "MLSNumber" else "Url"
        return [i for i, listing in chatbot.listings.items() if _same(listing[name], key)]

    def update(
        self,
        chatbot: Chatbot,
        key: str,
        key_type: str,
        fields: Mapping[str, Any],
        *,
        unique: bool = True,
    ) -> int:
        """Replace the listing found by key with ``fields``; 0 when none matches."""
        with self.lock:
            found = self.find(chatbot, key, key_type)
            if not found:
                return 0
            clash = self._clash(chatbot, fields, found[0])
            if clash is not None and unique:
                raise Failure(409, clash)
            chatbot.listings[found[0]] = dict(fields)
        return 1

    def delete(self, chatbot: Chatbot, keys: list[str], key_type: str) -> int:
        """Delete the listings the keys name; unknown keys are ignored. Returns how many."""
        with self.lock:
            ids = {i for key in keys for i in self.find(chatbot, key, key_type)}
            for listing_id in ids:
                del chatbot.listings[listing_id]
        return len(ids)

    def matching(
        self, chatbot: Chatbot, city: str | None, sale_type: str | None, mls: str | None
    ) -> list[tuple[int, dict[str, Any]]]:
        """The listings the filters match, by ID (a stable order for paging)."""
        with self.lock:
            items = sorted(chatbot.listings.items())
        return [
            (i, listing)
            for i, listing in items
            if (not city or _same(listing.get("City"), city))
            and (not sale_type or listing["SaleType"] == sale_type)
            and (not mls or _same(listing["MLSNumber"], mls))
        ]


# --------------------------------------------------------------------------- answers

_WORD = re.compile(r"\w+|[^\w\s]")


def tokens(*texts: str) -> int:
    """A token count: the word and punctuation pieces of the texts."""
    return sum(len(_WORD.findall(text)) for text in texts)


def describe(listing: Mapping[str, Any]) -> str:
    """One listing in a sentence: MLS number, address, city, bedrooms and price."""
    price = listing.get("SalePrice") if listing["SaleType"] == "for_sale" else None
    price = price if price is not None else listing.get("RentPrice")
    money = f"{listing.get('CurrencySymbol', '$')}{price:,.0f}" if price is not None else "a price"
    per = "" if listing["SaleType"] == "for_sale" else " a month"
    return (
        f"MLS {listing['MLSNumber']} at {listing.get('Address') or 'an undisclosed address'}, "
        f"{listing.get('City') or 'the area'} — {listing['Bedrooms']:g} bedrooms for {money}{per}"
    )


def answer(chatbot: Chatbot, question: str) -> tuple[str, bool]:
    """A grounded canned answer and whether it is a no-answer."""
    text = question.lower()
    listings = [chatbot.listings[i] for i in sorted(chatbot.listings)]
    by_mls = [item for item in listings if item["MLSNumber"].lower() in text]
    by_city = [item for item in listings if item.get("City") and item["City"].lower() in text]
    if by_mls:
        reply, no_answer = f"Here is the listing you asked about: {describe(by_mls[0])}.", False
    elif by_city:
        city = by_city[0]["City"]
        reply = (
            f"I found {len(by_city)} listing{'s' if len(by_city) != 1 else ''} in {city}. "
            f"For example {describe(by_city[0])}."
        )
        no_answer = False
    else:
        reply = "I'm sorry, I could not find any listing that matches your question."
        no_answer = True
    suffix = chatbot.settings.get("AnswerSuffix")
    return (f"{reply} {suffix}" if suffix else reply), no_answer
