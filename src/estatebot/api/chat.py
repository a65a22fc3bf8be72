"""Chat: ``client.chat.create_session``, ``ask`` and ``stream``.

A stream is a context manager that sends on entry and closes the HTTP response on exit::

    with client.chat.stream(session_id, "Any rentals?") as s:
        for text in s:          # fragment texts as they arrive
            print(text, end="")
    s.result                    # StreamResult

``s.result`` is known once the stream has ended: iterated to its end, or closed (leaving the
``with``, or breaking out of the loop). Before that it raises :class:`RuntimeError` rather than
returning something half-made; ``s.text`` gives the text so far at any time. A stream that was
closed before its final object has ``result.complete == False`` and the fragments seen as its
answer. Iterating consumes the stream: a second loop yields nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any

import httpx
from pydantic import ValidationError

from estatebot import errors
from estatebot.api._base import (
    CLIENT_ASK,
    GET_SESSION,
    AsyncResource,
    Call,
    Reply,
    SyncResource,
    TimeoutArg,
    validate,
)
from estatebot.api._responses import StreamBody, api_error
from estatebot.api.models import (
    Answer,
    AskRequest,
    ChatAskType,
    Envelope,
    SessionData,
    SessionRequest,
    StreamResult,
    to_wire,
)
from estatebot.api.stream import (
    AnswerAssembler,
    Fragment,
    StreamDecodeError,
    StreamDecoder,
    StreamFailure,
)


def _session_id(data: Any) -> int:
    return SessionData.model_validate(data).session_id


def session_call(serial: str, timeout: TimeoutArg) -> Call[int]:
    """The GetSession call for chatbot ``serial``."""
    body = validate(GET_SESSION, SessionRequest, {"serialNumber": serial})
    return Call(GET_SESSION, to_wire(body), _session_id, timeout, serial=serial)


def ask_call(
    session_id: int,
    content: str,
    ask_type: ChatAskType | str | None,
    file_ids: list[int] | None,
    timeout: TimeoutArg,
) -> Call[Answer]:
    """The ClientAsk call, its file rules checked by :class:`AskRequest`."""
    fields = {"sessionID": session_id, "content": content, "chatAskType": ask_type}
    body = validate(CLIENT_ASK, AskRequest, {**fields, "fileIds": file_ids})
    return Call(CLIENT_ASK, to_wire(body), Answer.model_validate, timeout)


class _StreamState:
    """What both stream classes share, without I/O: decoding, assembling, mapping failures."""

    def __init__(self) -> None:
        self.decoder = StreamDecoder()
        self.assembler = AnswerAssembler()
        self.result: StreamResult | None = None

    def feed(self, chunk: bytes) -> list[str]:
        """The fragment texts completed by a chunk of the body."""
        return self._texts(lambda: self.decoder.feed(chunk))

    def end(self) -> list[str]:
        """The texts left at the end of the body; the result is known from here on."""
        texts = self._texts(self.decoder.flush)
        rest = self.assembler.finish()  # half a character never completed: U+FFFD
        self.result = self.assembler.result()
        return [*texts, rest] if rest else texts

    def whole(self, data: Any) -> list[str]:
        """A plain JSON answer (a service that ignored ``stream: true``) as one fragment, or a
        stream's objects sent as one JSON body (:class:`StreamBody`)."""
        if isinstance(data, StreamBody):
            return [*self.feed(data.content), *self.end()]
        try:
            answer = Answer.model_validate(data)
        except ValidationError as exc:
            raise errors.APIError(
                f"unexpected Data in the reply: {exc}", operation=CLIENT_ASK.name, status_code=200
            ) from None
        text = self.assembler.add(Fragment(answer.content)) or ""
        text += self.assembler.finish() or ""
        self.result = StreamResult(
            AnswerID=answer.message_id,
            Answer=text,
            TotalToken=answer.total_tokens,
            noAnswer=answer.no_answer,
        )
        return [text] if text else []

    def stop(self) -> None:
        """The stream was closed: the result is what arrived (``complete=False`` if no final)."""
        if self.result is None:
            self.result = self.assembler.result()

    def _texts(self, decode: Callable[[], list[Any]]) -> list[str]:
        try:
            events = decode()
            texts = [self.assembler.add(event) for event in events]
        except StreamFailure as exc:
            envelope = Envelope.model_validate({"Code": exc.code, "Message": exc.message})
            raise api_error(CLIENT_ASK, 200, envelope) from None
        except StreamDecodeError as exc:
            raise errors.APIError(
                f"malformed stream: {exc}", operation=CLIENT_ASK.name, status_code=200
            ) from None
        return [text for text in texts if text]

    def finished_result(self) -> StreamResult:
        if self.result is None:
            raise RuntimeError(
                "the stream has not ended: iterate it to the end or close it before reading "
                "result (use .text for the text so far)"
            )
        return self.result


class _StreamBase:
    """The properties both stream classes share."""

    def __init__(self) -> None:
        self._state = _StreamState()
        self._response: httpx.Response | None = None
        self._data: Any = None

    @property
    def result(self) -> StreamResult:
        """The outcome, once the stream has ended; :class:`RuntimeError` before that."""
        return self._state.finished_result()

    @property
    def text(self) -> str:
        """The answer text received so far."""
        return self._state.assembler.text

    @property
    def response(self) -> httpx.Response | None:
        """The HTTP response, once sent (closed when the stream is)."""
        return self._response


class ChatStream(_StreamBase):
    """A streamed answer; see the module docstring."""

    def __init__(
        self, send: Callable[[], Reply], body: Callable[[httpx.Response], Iterator[bytes]]
    ) -> None:
        super().__init__()
        self._send = send
        self._body = body

    def __enter__(self) -> ChatStream:
        self._open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _open(self) -> httpx.Response:
        if self._response is None:
            self._response, self._data = self._send()
        return self._response

    def __iter__(self) -> Iterator[str]:
        if self._state.result is not None:  # consumed or closed
            return
        response = self._open()
        try:
            if self._data is not None:
                yield from self._state.whole(self._data)
                return
            # The client's body: decoded, within its size cap and stream deadline, and each
            # failure already the project's error.
            for chunk in self._body(response):
                yield from self._state.feed(chunk)
            yield from self._state.end()
        finally:
            self.close()

    def close(self) -> None:
        """Stop receiving and close the HTTP response (safe to call more than once)."""
        self._state.stop()
        if self._response is not None:
            self._response.close()


class AsyncChatStream(_StreamBase):
    """A streamed answer (async); ``async with`` it and ``async for`` over it."""

    def __init__(
        self,
        send: Callable[[], Coroutine[Any, Any, Reply]],
        body: Callable[[httpx.Response], AsyncIterator[bytes]],
    ) -> None:
        super().__init__()
        self._send = send
        self._body = body

    async def __aenter__(self) -> AsyncChatStream:
        await self._open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _open(self) -> httpx.Response:
        if self._response is None:
            self._response, self._data = await self._send()
        return self._response

    async def __aiter__(self) -> AsyncIterator[str]:
        if self._state.result is not None:
            return
        response = await self._open()
        try:
            if self._data is not None:
                for text in self._state.whole(self._data):
                    yield text
                return
            async for chunk in self._body(response):
                for text in self._state.feed(chunk):
                    yield text
            for text in self._state.end():
                yield text
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Stop receiving and close the HTTP response (safe to call more than once)."""
        self._state.stop()
        if self._response is not None:
            await self._response.aclose()


class Chat(SyncResource):
    """Chat sessions and questions."""

    def create_session(self, serial: str, *, timeout: TimeoutArg = None) -> int:
        """A new chat session with chatbot ``serial``; returns its ID."""
        return self._client._request(session_call(serial, timeout))

    def ask(
        self,
        session_id: int,
        content: str,
        *,
        ask_type: ChatAskType | str | None = None,
        file_ids: list[int] | None = None,
        timeout: TimeoutArg = None,
    ) -> Answer:
        """Ask a question and wait for the whole answer. Never retried once sent."""
        return self._client._request(ask_call(session_id, content, ask_type, file_ids, timeout))

    def stream(
        self,
        session_id: int,
        content: str,
        *,
        ask_type: ChatAskType | str | None = None,
        file_ids: list[int] | None = None,
        timeout: TimeoutArg = None,
    ) -> ChatStream:
        """Ask a question and receive the answer as it is written; see :class:`ChatStream`.

        The arguments are checked now; the request is sent on entering the ``with`` (or on
        the first iteration). ``timeout`` also bounds the wait for each next fragment, and the
        client's ``stream_deadline`` (if set) the whole answer.
        """
        call = ask_call(session_id, content, ask_type, file_ids, timeout)
        return ChatStream(
            lambda: self._client._send(call, stream=True),
            lambda response: self._client._live_body(CLIENT_ASK, response),
        )


class AsyncChat(AsyncResource):
    """Chat sessions and questions (async)."""

    async def create_session(self, serial: str, *, timeout: TimeoutArg = None) -> int:  # noqa: ASYNC109
        """A new chat session with chatbot ``serial``; see :meth:`Chat.create_session`."""
        return await self._client._request(session_call(serial, timeout))

    async def ask(
        self,
        session_id: int,
        content: str,
        *,
        ask_type: ChatAskType | str | None = None,
        file_ids: list[int] | None = None,
        timeout: TimeoutArg = None,  # noqa: ASYNC109
    ) -> Answer:
        """Ask a question and wait for the whole answer; see :meth:`Chat.ask`."""
        call = ask_call(session_id, content, ask_type, file_ids, timeout)
        return await self._client._request(call)

    def stream(
        self,
        session_id: int,
        content: str,
        *,
        ask_type: ChatAskType | str | None = None,
        file_ids: list[int] | None = None,
        timeout: TimeoutArg = None,
    ) -> AsyncChatStream:
        """Ask and receive the answer as it is written; ``async with`` the result."""
        call = ask_call(session_id, content, ask_type, file_ids, timeout)
        return AsyncChatStream(
            lambda: self._client._send(call, stream=True),
            lambda response: self._client._live_body(CLIENT_ASK, response),
        )
