"""`Client` and `AsyncClient`: configuration, resources and the send loop.

Everything but the send loop is shared and does no I/O (`estatebot.api._base`,
`estatebot.api._config`, `estatebot.api._responses`, `estatebot.api._retry`); the loop is
written twice, once blocking and once awaiting. The sync client never touches asyncio, so it
works inside a notebook's running event loop.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from functools import cached_property
from typing import Any, Generic, Self, TypeVar

import httpx
import tenacity
from pydantic import SecretStr

from estatebot.api import _deadline, _redact
from estatebot.api._base import Call, Operation, Reply
from estatebot.api._body import BodyDecodeError, BodyReader, ReplyTooLarge
from estatebot.api._config import (
    DEFAULT_DEADLINE,
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_STREAM_DEADLINE,
    ClientConfig,
)
from estatebot.api._deadline import Deadline, DeadlinePassed
from estatebot.api._hints import Asked
from estatebot.api._responses import (
    attempt_error,
    is_live_stream,
    parse_data,
    parse_response,
    settled,
)
from estatebot.api._retry import NOT_HANDLED, RetryPolicy, log_attempt
from estatebot.api.chat import AsyncChat, Chat
from estatebot.api.chatbots import AsyncChatbots, Chatbots
from estatebot.api.gate import RequestGate, aturn, turn
from estatebot.api.listings import AsyncListings, Listings
from estatebot.errors import APIError, ConfigurationError, EstatebotError

T = TypeVar("T")


HttpT = TypeVar("HttpT", httpx.Client, httpx.AsyncClient)

#: What can go wrong while a reply is sent and read, before it is parsed.
_READ_FAILURES = (httpx.TransportError, DeadlinePassed, ReplyTooLarge, BodyDecodeError)


class _ClientBase(Generic[HttpT]):
    """What both clients share: settings, retry policy, the HTTP client, repr."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | SecretStr | None = None,
        session_key: str | SecretStr | None = None,
        timeout: float | httpx.Timeout | None = 30.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        max_retry_after: float = 60.0,
        deadline: float | None = DEFAULT_DEADLINE,
        stream_deadline: float | None = DEFAULT_STREAM_DEADLINE,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        http_client: HttpT | None = None,
        gate: RequestGate | None = None,
    ) -> None:
        _redact.install()
        if gate is not None and not isinstance(gate, RequestGate):
            raise ConfigurationError(
                f"gate must be a ServiceGate (or another RequestGate) or None; got {gate!r}"
            )
        self._gate = gate
        self._config = ClientConfig.from_args(
            base_url=base_url,
            api_key=api_key,
            session_key=session_key,
            timeout=timeout,
            deadline=deadline,
            stream_deadline=stream_deadline,
            max_reply_bytes=max_reply_bytes,
        )
        self._policy = RetryPolicy(max_retries, backoff_base, backoff_max, max_retry_after)
        self._owns_http = http_client is None
        self._http: HttpT = http_client if http_client is not None else self._new_http()

    def _new_http(self) -> HttpT:
        raise NotImplementedError

    @classmethod
    def like(cls, other: _ClientBase[Any]) -> Self:
        """A new client of this kind with `other`'s settings (address, keys, timeouts,
        retries, limits) and connections of its own: `Client.like(async_client)` blocks,
        `type(client).like(client)` replaces a closed one. The keys pass as the secrets
        they are held in, never as text.

        Args:
            other: The client whose settings to copy, sync or async (open or closed).

        Returns:
            A new client of this class, with `other`'s settings and its own connections.
        """
        config, policy = other._config, other._policy
        made = cls(
            base_url=config.base_url,
            api_key=config.api_key,
            session_key=config.session_key,
            timeout=config.timeout,
            deadline=config.deadline,
            stream_deadline=config.stream_deadline,
            max_reply_bytes=config.max_reply_bytes,
            max_retries=policy.max_retries,
            backoff_base=policy.backoff_base,
            backoff_max=policy.backoff_max,
            max_retry_after=policy.max_retry_after,
            gate=other._gate,
        )
        # The address is copied as is; whether it was the default, for the errors, goes along.
        made._config = dataclasses.replace(made._config, default_base_url=config.default_base_url)
        return made

    @property
    def base_url(self) -> str:
        """The service's base address, without a trailing slash."""
        return self._config.base_url

    @property
    def gate(self) -> RequestGate | None:
        """The request gate this client shares with others of its service, or None."""
        return self._gate

    def __repr__(self) -> str:
        return self._config.describe(type(self).__name__)

    def _throttle_wait(self, exc: EstatebotError) -> tuple[bool, float | None]:
        """Whether `exc` says the service is overloaded (a 429 or 503) and should be held off
        by the gate, and for how long (the wait it asked for, within `max_retry_after`; None for
        the gate's default)."""
        if self._gate is None or not isinstance(exc, APIError) or exc.kind not in NOT_HANDLED:
            return False, None
        if exc.retry_after is None:
            return True, None
        return True, min(exc.retry_after, self._policy.max_retry_after)

    def _reader(self, response: httpx.Response) -> BodyReader:
        # A transport that handed over the body whole has had httpx decode it already.
        encodings = response.headers.get_list("content-encoding", split_commas=True)
        return BodyReader(
            self._config.max_reply_bytes, [] if response.is_stream_consumed else encodings
        )

    def _failure(
        self,
        operation: Operation,
        exc: Exception,
        deadline: Deadline,
        response: httpx.Response | None,
        *,
        mid_stream: bool = False,
        asked: Asked | None = None,
    ) -> EstatebotError:
        """`exc`, raised while a reply was sent or read, as the project's error."""
        status = response.status_code if response is not None else None
        return attempt_error(
            operation,
            exc,
            deadline,
            cap=self._config.max_reply_bytes,
            mid_stream=mid_stream,
            status=status,
            asked=asked,
        )


class Client(_ClientBase[httpx.Client]):
    """The blocking client.

    Every setting comes from its argument, else its environment variable
    (`ESTATEBOT_BASE_URL`, `ESTATEBOT_API_KEY`, `ESTATEBOT_SESSION_KEY`), else a default.
    The keys are trimmed of surrounding whitespace; a key a header cannot carry (whitespace or a
    control character inside, non-ASCII) is refused at once with a `ConfigurationError` naming
    the argument or variable.

    `timeout` is in seconds (each method also takes `timeout=`): the longest wait to connect
    and for each next piece of the reply; for a stream, for each next fragment. `deadline`
    bounds one whole attempt, from sending to the last byte of the reply (and to the start of a
    streamed answer), however the bytes trickle in; a reply that misses it raises
    `APITimeoutError` naming it, and is not retried. `stream_deadline` bounds a whole streamed
    answer (10 minutes by default; None for no bound). Every timeout, deadline and wait must be
    a finite number above 0 (a backoff or `max_retry_after` may be 0): NaN, a negative or an
    infinite one is refused at once with a `ConfigurationError` naming it. A reply whose body,
    once decoded, passes `max_reply_bytes` (64 MiB by default) is an `APIError` naming the
    cap, read no further (a gzip bomb included).

    Failed requests are retried up to `max_retries` times after the first attempt, with a
    jittered exponential backoff from `backoff_base` to `backoff_max` seconds, or the wait
    the service asks for (`Retry-After`, `RateLimit-Reset` or `X-RateLimit-Reset`; at most
    `max_retry_after` seconds). A request the service says it did not handle (429, 503) is
    retried for every operation (a chat message's 429 excepted: it is raised for the chat to
    show); one that may have been carried out unanswered is sent again only where that is safe
    (never a create or a chat message). A redirect is never followed (it could carry the keys
    to another host): it is an error saying where it points.
    An `http_client` passed in is used as is and left open when the client is closed (its
    reads are then checked against the deadline between chunks only).

    Many clients of one service (one per chatbot, say) can share a `gate`: each attempt then
    waits for one of the gate's slots (released once the reply is read, or a live stream's
    headers arrive), and a 429 or 503 to any of them holds off every one of them for the wait
    the service asked for (at most `max_retry_after`), so a fleet slows down as one.

    `client.chatbots`, `client.chat` and `client.listings` hold the operations. Use it as a
    context manager or call `close` to release its connections.

    Args:
        base_url: The service's address; None reads `ESTATEBOT_BASE_URL`, else
            `https://usapi.hottask.com`. It must be an http(s) URL.
        api_key: The API key (text or a `SecretStr`), sent as `Authorization`; None reads
            `ESTATEBOT_API_KEY`. Chatbot settings and chat need it; listing changes take
            either key.
        session_key: The session key (text or a `SecretStr`), sent as `chatrobot-sessionkey`;
            None reads `ESTATEBOT_SESSION_KEY`. Listing pages need it; listing changes take
            either key.
        timeout: The longest wait in seconds (or an `httpx.Timeout`) to connect and for each
            next piece of the reply; None for no limit.
        max_retries: How many times a failed request is retried after the first attempt.
        backoff_base: The first backoff between attempts, in seconds.
        backoff_max: The longest backoff between attempts, in seconds.
        max_retry_after: The longest wait the service may ask for that is waited out, in
            seconds; a longer one raises the error at once, with its `retry_after`.
        deadline: The longest one attempt may take, in seconds, from sending to the last byte
            of the reply (2 minutes by default); None for no bound.
        stream_deadline: The longest a whole streamed answer may take, in seconds (10 minutes
            by default); None for no bound.
        max_reply_bytes: The largest reply body read, in bytes once decoded (64 MiB by
            default).
        http_client: An `httpx.Client` to send with instead of one of its own; used as is and
            left open when the client is closed.
        gate: A `ServiceGate` (or another `RequestGate`) shared with the other clients of the
            service: at most its `max_in_flight` attempts in flight across all of them, and a
            429 or 503 to any holds off all. None (the default) for no shared limit.

    Raises:
        ConfigurationError: A setting is impossible: a key a header cannot carry, a base URL
            that is not http(s), or a timeout, deadline, wait, retry count or size that is not
            a finite number in range (each named with the value given), or a `gate` that is
            not a `RequestGate`.
    """

    #: How the client waits between attempts (a test may swap it for a recorder).
    _sleep: Callable[[float], None] = staticmethod(time.sleep)

    def _new_http(self) -> httpx.Client:
        http = httpx.Client()
        _deadline.install(http)  # each socket read and write ends by the deadline
        return http

    @cached_property
    def chatbots(self) -> Chatbots:
        """Chatbot settings and AI models."""
        return Chatbots(self)

    @cached_property
    def chat(self) -> Chat:
        """Chat sessions, questions and streamed answers."""
        return Chat(self)

    @cached_property
    def listings(self) -> Listings:
        """A chatbot's real estate listings."""
        return Listings(self)

    def _request(self, call: Call[T]) -> T:
        failures: list[EstatebotError] = []
        _, data = self._send(call, stream=False, failures=failures)
        return settled(call, parse_data(call, data, 200), failures)

    def _send(
        self, call: Call[Any], *, stream: bool, failures: list[EstatebotError] | None = None
    ) -> Reply:
        """One call, attempted as the retry policy says; each failed attempt's error is added
        to `failures` (when given) before the next."""
        request = self._http.build_request(**self._config.request_args(call, stream=stream))
        asked = self._config.asked(call)
        retrying = tenacity.Retrying(
            sleep=self._sleep, **self._policy.tenacity_args(call.operation)
        )
        for attempt in retrying:
            with attempt:
                number = attempt.retry_state.attempt_number
                try:
                    # The gate's turn ends once the reply is read, or a live stream has begun.
                    with turn(self._gate):
                        return self._attempt(call.operation, request, number, stream, asked)
                except EstatebotError as exc:
                    throttled, seconds = self._throttle_wait(exc)
                    if throttled and self._gate is not None:
                        self._gate.hold_off(seconds)
                    if failures is not None:
                        failures.append(exc)
                    raise
        raise AssertionError("unreachable: tenacity re-raises the last failure")

    def _attempt(
        self,
        operation: Operation,
        request: httpx.Request,
        number: int,
        stream: bool,
        asked: Asked | None = None,
    ) -> Reply:
        started = time.monotonic()
        deadline = Deadline.start(self._config.deadline)
        response: httpx.Response | None = None
        body: bytes | None = None
        try:
            with deadline.applied():
                # Never follow a redirect, even on an http_client set to: see redirect_error.
                response = self._http.send(request, stream=True, follow_redirects=False)
                if not (stream and is_live_stream(response)):
                    body = self._read(response, deadline)
        except _READ_FAILURES as exc:
            if response is not None:
                response.close()
            log_attempt(operation, number, time.monotonic() - started, type(exc).__name__)
            raise self._failure(operation, exc, deadline, response, asked=asked) from exc
        log_attempt(operation, number, time.monotonic() - started, response.status_code)
        if body is None:
            return response, None
        url = str(request.url)
        return response, parse_response(
            operation, response.status_code, response.headers, body, url, stream=stream, asked=asked
        )

    def _read(self, response: httpx.Response, deadline: Deadline) -> bytes:
        """The whole decoded body, within the size cap and the deadline; closes the response."""
        reader = self._reader(response)
        try:
            if response.is_stream_consumed:
                return b"".join(reader.feed(response.content))
            parts: list[bytes] = []
            for raw in response.iter_raw():
                parts.extend(reader.feed(raw))
                deadline.check()
            parts.extend(reader.end())
            return b"".join(parts)
        finally:
            response.close()

    def _live_body(self, operation: Operation, response: httpx.Response) -> Iterator[bytes]:
        """A live stream's body, decoded, within the size cap and the stream deadline; each
        failure as the project's error. The response is closed when it ends or is dropped."""
        reader = self._reader(response)
        deadline = Deadline.start(self._config.stream_deadline)
        try:
            if response.is_stream_consumed:
                yield from reader.feed(response.content)
                return
            chunks = response.iter_raw()
            while True:
                with deadline.applied():
                    raw = next(chunks, None)
                if raw is None:
                    break
                deadline.check()
                yield from reader.feed(raw)
            yield from reader.end()
        except _READ_FAILURES as exc:
            raise self._failure(operation, exc, deadline, response, mid_stream=True) from exc
        finally:
            response.close()

    def close(self) -> None:
        """Close the connection pool (unless the HTTP client was passed in)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClient(_ClientBase[httpx.AsyncClient]):
    """The awaitable client: the same settings and operations as `Client`.

    Use it with `async with` or await `aclose` to release its connections.

    Args:
        base_url: The service's address; None reads `ESTATEBOT_BASE_URL`, else
            `https://usapi.hottask.com`. It must be an http(s) URL.
        api_key: The API key (text or a `SecretStr`), sent as `Authorization`; None reads
            `ESTATEBOT_API_KEY`. Chatbot settings and chat need it; listing changes take
            either key.
        session_key: The session key (text or a `SecretStr`), sent as `chatrobot-sessionkey`;
            None reads `ESTATEBOT_SESSION_KEY`. Listing pages need it; listing changes take
            either key.
        timeout: The longest wait in seconds (or an `httpx.Timeout`) to connect and for each
            next piece of the reply; None for no limit.
        max_retries: How many times a failed request is retried after the first attempt.
        backoff_base: The first backoff between attempts, in seconds.
        backoff_max: The longest backoff between attempts, in seconds.
        max_retry_after: The longest wait the service may ask for that is waited out, in
            seconds; a longer one raises the error at once, with its `retry_after`.
        deadline: The longest one attempt may take, in seconds, from sending to the last byte
            of the reply (2 minutes by default); None for no bound.
        stream_deadline: The longest a whole streamed answer may take, in seconds (10 minutes
            by default); None for no bound.
        max_reply_bytes: The largest reply body read, in bytes once decoded (64 MiB by
            default).
        http_client: An `httpx.AsyncClient` to send with instead of one of its own; used as is and
            left open when the client is closed.
        gate: A `ServiceGate` (or another `RequestGate`) shared with the other clients of the
            service, awaited without blocking the event loop; None (the default) for none.

    Raises:
        ConfigurationError: A setting is impossible: a key a header cannot carry, a base URL
            that is not http(s), or a timeout, deadline, wait, retry count or size that is not
            a finite number in range (each named with the value given), or a `gate` that is
            not a `RequestGate`.
    """

    _sleep: Callable[[float], Awaitable[None]] = staticmethod(asyncio.sleep)

    def _new_http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient()  # asyncio.timeout bounds its attempts: no backend to wrap

    @cached_property
    def chatbots(self) -> AsyncChatbots:
        """Chatbot settings and AI models."""
        return AsyncChatbots(self)

    @cached_property
    def chat(self) -> AsyncChat:
        """Chat sessions, questions and streamed answers."""
        return AsyncChat(self)

    @cached_property
    def listings(self) -> AsyncListings:
        """A chatbot's real estate listings."""
        return AsyncListings(self)

    async def _request(self, call: Call[T]) -> T:
        failures: list[EstatebotError] = []
        _, data = await self._send(call, stream=False, failures=failures)
        return settled(call, parse_data(call, data, 200), failures)

    async def _send(
        self, call: Call[Any], *, stream: bool, failures: list[EstatebotError] | None = None
    ) -> Reply:
        """One call, attempted as the retry policy says; see `Client._send`."""
        request = self._http.build_request(**self._config.request_args(call, stream=stream))
        asked = self._config.asked(call)
        retrying = tenacity.AsyncRetrying(
            sleep=self._sleep, **self._policy.tenacity_args(call.operation)
        )
        async for attempt in retrying:
            with attempt:
                number = attempt.retry_state.attempt_number
                try:
                    async with aturn(self._gate):
                        return await self._attempt(call.operation, request, number, stream, asked)
                except EstatebotError as exc:
                    throttled, seconds = self._throttle_wait(exc)
                    if throttled and self._gate is not None:
                        await self._gate.ahold_off(seconds)
                    if failures is not None:
                        failures.append(exc)
                    raise
        raise AssertionError("unreachable: tenacity re-raises the last failure")

    async def _attempt(
        self,
        operation: Operation,
        request: httpx.Request,
        number: int,
        stream: bool,
        asked: Asked | None = None,
    ) -> Reply:
        started = time.monotonic()
        deadline = Deadline.start(self._config.deadline)
        response: httpx.Response | None = None
        body: bytes | None = None
        try:
            try:
                async with asyncio.timeout(deadline.remaining()):
                    response = await self._http.send(request, stream=True, follow_redirects=False)
                    if not (stream and is_live_stream(response)):
                        body = await self._read(response, deadline)
            except TimeoutError:  # asyncio.timeout's own: the deadline ran out
                deadline.hit = True
                raise DeadlinePassed(deadline.seconds or 0.0) from None
        except _READ_FAILURES as exc:
            if response is not None:
                await response.aclose()
            log_attempt(operation, number, time.monotonic() - started, type(exc).__name__)
            raise self._failure(operation, exc, deadline, response, asked=asked) from exc
        log_attempt(operation, number, time.monotonic() - started, response.status_code)
        if body is None:
            return response, None
        url = str(request.url)
        return response, parse_response(
            operation, response.status_code, response.headers, body, url, stream=stream, asked=asked
        )

    async def _read(self, response: httpx.Response, deadline: Deadline) -> bytes:
        """The whole decoded body, within the size cap and the deadline; closes the response."""
        reader = self._reader(response)
        try:
            if response.is_stream_consumed:
                return b"".join(reader.feed(response.content))
            parts: list[bytes] = []
            async for raw in response.aiter_raw():
                parts.extend(reader.feed(raw))
                deadline.check()
            parts.extend(reader.end())
            return b"".join(parts)
        finally:
            await response.aclose()

    async def _live_body(
        self, operation: Operation, response: httpx.Response
    ) -> AsyncIterator[bytes]:
        """A live stream's body; see `Client._live_body`."""
        reader = self._reader(response)
        deadline = Deadline.start(self._config.stream_deadline)
        try:
            if response.is_stream_consumed:
                for piece in reader.feed(response.content):
                    yield piece
                return
            chunks = response.aiter_raw()
            while True:
                try:
                    async with asyncio.timeout(deadline.remaining()):
                        raw = await anext(chunks, None)
                except TimeoutError:  # asyncio.timeout's own: the stream deadline ran out
                    deadline.hit = True
                    raise DeadlinePassed(deadline.seconds or 0.0) from None
                if raw is None:
                    break
                deadline.check()
                for piece in reader.feed(raw):
                    yield piece
            for piece in reader.end():
                yield piece
        except _READ_FAILURES as exc:
            raise self._failure(operation, exc, deadline, response, mid_stream=True) from exc
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """Close the connection pool (unless the HTTP client was passed in)."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
