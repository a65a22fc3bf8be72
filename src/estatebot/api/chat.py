"""Chat: `client.chat.create_session`, `ask` and `stream`.

A stream is a context manager that sends on entry and closes the HTTP response on exit:

```python
with client.chat.stream(session_id, "Any rentals?") as s:
    for text in s:          # fragment texts as they arrive
        print(text, end="")
s.result                    # StreamResult
```

`s.result` is known once the stream has ended: iterated to its end, or closed (leaving the
`with`, or breaking out of the loop). Before that it raises `RuntimeError` rather than
returning something half-made; `s.text` gives the text so far at any time. A stream that was
closed before its final object has `result.complete == False` and the fragments seen as its
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
    """The GetSession call for chatbot `serial`.

    Args:
        serial: The chatbot's serial number.
        timeout: The call's timeout; None uses the client's.

    Returns:
        The call, ready to send; its result is the new session's ID.

    Raises:
        RequestValidationError: `serial` is empty.
    """
    body = validate(GET_SESSION, SessionRequest, {"serialNumber": serial})
    return Call(GET_SESSION, to_wire(body), _session_id, timeout, serial=serial)


def ask_call(
    session_id: int,
    content: str,
    ask_type: ChatAskType | str | None,
    file_ids: list[int] | None,
    timeout: TimeoutArg,
) -> Call[Answer]:
    """The ClientAsk call, its file rules checked by `AskRequest`.

    Args:
        session_id: The chat session's ID.
        content: The message.
        ask_type: The kind of message; None means Text.
        file_ids: The IDs of the files the message carries, if any.
        timeout: The call's timeout; None uses the client's.

    Returns:
        The call, ready to send; its result is the whole `Answer`.

    Raises:
        RequestValidationError: The message breaks the contract's rules (see `Chat.ask`).
    """
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
        """A plain JSON answer (a service that ignored `stream: true`) as one fragment, or a
        stream's objects sent as one JSON body (`StreamBody`)."""
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
        """The stream was closed: the result is what arrived (`complete=False` if no final)."""
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
        """The outcome, once the stream has ended; `RuntimeError` before that."""
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
    """A streamed answer; see the module docstring.

    `Chat.stream` makes it, unsent: entering the `with` (or the first iteration) sends the
    question, and leaving it (or `close`) closes the HTTP response. Iterating yields the
    answer's text fragments as they arrive, once: a second loop yields nothing. `result` is
    the outcome once the stream has ended, `text` the text so far.

    Entering or iterating raises what `Chat.ask` raises once sent; while the answer arrives,
    a failure object in the stream or a malformed stream is an `APIError`, a stream that broke
    off an `APIConnectionError`, and a wait for the next fragment past `timeout` (or the whole
    answer past the client's `stream_deadline`) an `APITimeoutError`.
    """

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
    """A streamed answer (async); `async with` it and `async for` over it.

    `AsyncChat.stream` makes it, unsent; it sends, yields, ends and fails as `ChatStream` does,
    and `aclose` closes it.
    """

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
        """A new chat session with chatbot `serial`; returns its ID.

        Args:
            serial: The chatbot's serial number.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The new session's ID, for `ask` and `stream`.

        Raises:
            RequestValidationError: `serial` is empty; nothing was sent.
            ConfigurationError: The client has no API key, or `timeout` is not a positive,
                finite number; nothing was sent.
            NotFoundError: The service does not know chatbot `serial` (the error says to check
                the serial).
            AuthenticationError: The service refused the API key (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
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
        """Ask a question and wait for the whole answer. Never retried once sent.

        Only a request that certainly never left, or that the service says it did not handle
        (503), is sent again: a second question would be answered, and charged, twice.

        Args:
            session_id: The chat session's ID, from `create_session`.
            content: The message; it may be empty for an Image, Audio or Video message.
            ask_type: The kind of message (a `ChatAskType` or its name: Text, Audio, Image or
                Video); None means Text.
            file_ids: The IDs of the files the message carries: one or more for Image, exactly
                one for Audio or Video, none for Text.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The whole answer, with its `message_id`, `content`, `total_tokens` and `no_answer`.

        Raises:
            RequestValidationError: The message breaks the contract's rules (an empty Text
                message, `file_ids` on a Text message, none on another kind, more than one on
                Audio or Video, an unknown `ask_type`); nothing was sent.
            ConfigurationError: The client has no API key, or `timeout` is not a positive,
                finite number; nothing was sent.
            RateLimitError: The chatbot's rate limit (429), raised at once for the chat to show;
                `retry_after` is the wait the service asked for, if it said.
            NotFoundError: The service does not know the session.
            AuthenticationError: The service refused the API key (401 or 403).
            APIError: Any other failure the service reported (its subclass by status), or a
                reply the client cannot use (a redirect, no JSON envelope, an unexpected
                `Data`, a body past the client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped).
            APITimeoutError: A wait passed `timeout`, or the attempt ran past the client's
                `deadline`.
        """
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
        """Ask a question and receive the answer as it is written; see `ChatStream`.

        The arguments are checked now; the request is sent on entering the `with` (or on
        the first iteration). `timeout` also bounds the wait for each next fragment, and the
        client's `stream_deadline` (if set) the whole answer.

        Args:
            session_id: The chat session's ID, from `create_session`.
            content: The message; it may be empty for an Image, Audio or Video message.
            ask_type: The kind of message (a `ChatAskType` or its name: Text, Audio, Image or
                Video); None means Text.
            file_ids: The IDs of the files the message carries: one or more for Image, exactly
                one for Audio or Video, none for Text.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.
                It also bounds the wait for each next fragment.

        Returns:
            The stream, not yet sent: enter it with `with` and iterate it for the answer's
                text fragments; its `result` once it has ended.

        Raises:
            RequestValidationError: The message breaks the contract's rules (an empty Text
                message, `file_ids` on a Text message, none on another kind, more than one on
                Audio or Video, an unknown `ask_type`); nothing was sent.
        """
        call = ask_call(session_id, content, ask_type, file_ids, timeout)
        return ChatStream(
            lambda: self._client._send(call, stream=True),
            lambda response: self._client._live_body(CLIENT_ASK, response),
        )


class AsyncChat(AsyncResource):
    """Chat sessions and questions (async)."""

    async def create_session(self, serial: str, *, timeout: TimeoutArg = None) -> int:  # noqa: ASYNC109
        """A new chat session with chatbot `serial`; see `Chat.create_session`.

        Args:
            serial: The chatbot's serial number.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The new session's ID, for `ask` and `stream`.

        Raises:
            RequestValidationError: `serial` is empty; nothing was sent.
            ConfigurationError: The client has no API key, or `timeout` is impossible.
            NotFoundError: The service does not know chatbot `serial`.
            AuthenticationError: The service refused the API key (401 or 403).
            APIError: Any other failure the service reported once the retries were spent, or a
                reply the client cannot use; as for `Chat.create_session`.
            APIConnectionError: The transport failed once the retries were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline`.
        """
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
        """Ask a question and wait for the whole answer; see `Chat.ask`.

        Args:
            session_id: The chat session's ID, from `create_session`.
            content: The message; it may be empty for an Image, Audio or Video message.
            ask_type: The kind of message (a `ChatAskType` or its name: Text, Audio, Image or
                Video); None means Text.
            file_ids: The IDs of the files the message carries: one or more for Image, exactly
                one for Audio or Video, none for Text.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The whole answer, with its `message_id`, `content`, `total_tokens` and `no_answer`.

        Raises:
            RequestValidationError: The message breaks the contract's rules (an empty Text
                message, `file_ids` on a Text message, none on another kind, more than one on
                Audio or Video, an unknown `ask_type`); nothing was sent.
            ConfigurationError: The client has no API key, or `timeout` is impossible.
            RateLimitError: The chatbot's rate limit (429), raised at once.
            NotFoundError: The service does not know the session.
            AuthenticationError: The service refused the API key (401 or 403).
            APIError: Any other failure the service reported, or a reply the client cannot use.
            APIConnectionError: The transport failed (refused, reset, dropped).
            APITimeoutError: A wait passed `timeout`, or the attempt ran past the client's
                `deadline`.
        """
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
        """Ask and receive the answer as it is written; `async with` the result.

        The arguments are checked now; the request is sent on entering the `async with` (or on
        the first iteration); see `Chat.stream`.

        Args:
            session_id: The chat session's ID, from `create_session`.
            content: The message; it may be empty for an Image, Audio or Video message.
            ask_type: The kind of message (a `ChatAskType` or its name: Text, Audio, Image or
                Video); None means Text.
            file_ids: The IDs of the files the message carries: one or more for Image, exactly
                one for Audio or Video, none for Text.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.
                It also bounds the wait for each next fragment.

        Returns:
            The stream, not yet sent: `async with` it and `async for` over it for the answer's
                text fragments; its `result` once it has ended.

        Raises:
            RequestValidationError: The message breaks the contract's rules (an empty Text
                message, `file_ids` on a Text message, none on another kind, more than one on
                Audio or Video, an unknown `ask_type`); nothing was sent.
        """
        call = ask_call(session_id, content, ask_type, file_ids, timeout)
        return AsyncChatStream(
            lambda: self._client._send(call, stream=True),
            lambda response: self._client._live_body(CLIENT_ASK, response),
        )
