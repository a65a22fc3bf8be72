"""The chat operation, ClientAsk: the session, the message limits, then the answer.

Decisions where the contract is silent (beyond the addendum): the rate limit is on when both
``RateLimitCount`` and ``RateLimitTime`` are above 0 (a sliding window per session); the monthly
limit is checked first (it outlasts any wait) and its 429 carries no ``Retry-After``. Only
accepted messages count. A stream's final object carries ``noAnswer`` besides ``QuestionID``,
``AnswerID``, ``Answer`` and ``TotalToken`` (an emulator extension). Streams use the framing of
:class:`~.base.Options` (``sse``, ``ndjson`` or ``concatenated``, always sent as
``text/event-stream``), with ``stream_delay_ms`` between objects (sent by
:mod:`~estatebot.emulator.streaming`).

With the hallucination fault on (``Faults.hallucinate_rate``), some answers listing homes
misstate one listing (:mod:`~estatebot.emulator.hallucinate`); each one is recorded in
``falsified`` under its message ID, never in the reply.

The answer is worked out in a worker thread, never on the event loop: however long a message,
other clients' requests go on being served meanwhile. The limits are checked before that work
(a refused message costs nothing) and again just before the exchange is recorded, with no
``await`` between: another message of the session may have been accepted meanwhile.
"""

from __future__ import annotations

import math
from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool

from estatebot.api.models import AskRequest

from .. import answers
from ..envelope import Failure
from ..hallucinate import Falsification, falsify
from ..questions import Catalog
from ..store import Chatbot, month_of
from ..streaming import StreamReply
from .base import RouteBase

DEFAULT_RATE_LIMIT_MESSAGE = "Too many messages. Please wait a moment and try again."


class ChatRoutes(RouteBase):
    """ClientAsk."""

    async def client_ask(self, request: Request, workspace: int) -> Any:
        """ClientAsk: check the session and limits, answer, plain or streamed."""
        body = await self._body(request, AskRequest)
        serial = self.store.session_chatbot(body.session_id)
        chatbot = self.store.chatbot(serial) if serial is not None else None
        if chatbot is None or chatbot.workspace_id != workspace:
            raise Failure(404, f"Session {body.session_id} not found")
        self._check_limits(chatbot, body.session_id, self.clock())
        catalog = self._catalog(chatbot.serial)
        reply = await run_in_threadpool(
            answers.answer,
            body.content,
            chatbot.settings,
            catalog,
            attachments=len(body.file_ids or []),
        )
        falsified: Falsification | None = None
        rng = self.faults.hallucination(body.content)
        if rng is not None:
            changed = falsify(
                reply,
                catalog,
                rng,
                question=body.content,
                system_message=chatbot.settings.get("SystemMessage"),
            )
            if changed is not None:
                reply, falsified = changed
        now = self.clock()
        self._check_limits(chatbot, body.session_id, now)
        question_id, answer_id = self.store.record_exchange(body.session_id, chatbot.serial, now)
        if falsified is not None:
            self.falsified[answer_id] = falsified
        if body.stream:
            return StreamReply(
                fragments=answers.fragments(reply.text),
                final={
                    "QuestionID": question_id,
                    "AnswerID": answer_id,
                    "Answer": reply.text,
                    "TotalToken": reply.total_tokens,
                    "noAnswer": reply.no_answer,
                },
            )
        return {
            "messageid": answer_id,
            "content": reply.text,
            "totalToken": reply.total_tokens,
            "noAnswer": reply.no_answer,
        }

    def _catalog(self, serial: str) -> Catalog:
        # The store returns the same list object until the listings change: reuse the catalog
        # built on it, so a question costs a scan of the listings, not a rebuild.
        listings = self.store.listings(serial, answers.LISTING_FIELDS_USED)
        catalog = self._catalogs.get(serial)
        if catalog is None or catalog.listings is not listings:
            catalog = self._catalogs[serial] = Catalog(listings)
        return catalog

    def _check_limits(self, chatbot: Chatbot, session_id: int, now: float) -> None:
        settings = chatbot.settings
        limit = settings.get("MessageLimit")
        if isinstance(limit, int) and limit >= 0:
            used = self.store.questions_in_month(chatbot.serial, month_of(now))
            if used >= limit:
                raise Failure(
                    429,
                    f"Monthly message limit reached: this chatbot accepts {limit} messages per "
                    "calendar month (UTC).",
                )
        count = settings.get("RateLimitCount") or 0
        window = settings.get("RateLimitTime") or 0
        if count > 0 and window > 0:
            times = self.store.recent_questions(session_id, now - window)
            if len(times) >= count:
                # The slot frees when the oldest of the last `count` messages leaves the window.
                wait = times[len(times) - count] + window - now
                raise Failure(
                    429,
                    str(settings.get("RateLimitMessage") or DEFAULT_RATE_LIMIT_MESSAGE),
                    retry_after=max(1, math.ceil(wait)),
                )
