"""``Client`` and ``AsyncClient``: configuration, resources and the send loop.

Everything but the send loop is shared and does no I/O (:mod:`estatebot.api._base`,
:mod:`._config`, :mod:`._responses`, :mod:`._retry`); the loop is written twice, once blocking
and once awaiting. The sync client never touches asyncio, so it works inside a notebook's
running event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import cached_property
from typing import Any, Generic, TypeVar

import httpx
import tenacity
from pydantic import SecretStr

from estatebot.api import _redact
from estatebot.api._base import Call, Operation, Reply
from estatebot.api._config import ClientConfig
from estatebot.api._responses import check_reply, is_live_stream, parse_data, transport_error
from estatebot.api._retry import RetryPolicy, log_attempt
from estatebot.api.chat import AsyncChat, Chat
from estatebot.api.chatbots import AsyncChatbots, Chatbots
from estatebot.api.listings import AsyncListings, Listings

T = TypeVar("T")


HttpT = TypeVar("HttpT", httpx.Client, httpx.AsyncClient)


class _ClientBase(Generic[HttpT]):
    """What both clients share: settings, retry policy, the HTTP client, repr."""

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | SecretStr | None = None,
        session_key: str | SecretStr | None = None,
        timeout: float | httpx.Timeout = 30.0,
        max_retries: int = 3,
        backoff_base: float = 0.5,
        backoff_max: float = 8.0,
        max_retry_after: float = 60.0,
        http_client: HttpT | None = None,
    ) -> None:
        _redact.install()
        self._config = ClientConfig.from_args(
            base_url=base_url, api_key=api_key, session_key=session_key, timeout=timeout
        )
        self._policy = RetryPolicy(max_retries, backoff_base, backoff_max, max_retry_after)
        self._owns_http = http_client is None
        self._http: HttpT = http_client if http_client is not None else self._new_http()

    def _new_http(self) -> HttpT:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        """The service's base address, without a trailing slash."""
        return self._config.base_url

    def __repr__(self) -> str:
        return self._config.describe(type(self).__name__)


class Client(_ClientBase[httpx.Client]):
    """The blocking client.

    Every setting comes from its argument, else its environment variable
    (``ESTATEBOT_BASE_URL``, ``ESTATEBOT_API_KEY``, ``ESTATEBOT_SESSION_KEY``), else a default.
    ``timeout`` is in seconds (each method also takes ``timeout=``); failed requests are retried
    up to ``max_retries`` times after the first attempt, with a jittered exponential backoff from
    ``backoff_base`` to ``backoff_max`` seconds, or the service's ``Retry-After`` (at most
    ``max_retry_after`` seconds). An ``http_client`` passed in is used as is and left open when
    the client is closed.

    ``client.chatbots``, ``client.chat`` and ``client.listings`` hold the operations. Use it as a
    context manager or call :meth:`close` to release its connections.
    """

    #: How the client waits between attempts (a test may swap it for a recorder).
    _sleep: Callable[[float], None] = staticmethod(time.sleep)

    def _new_http(self) -> httpx.Client:
        return httpx.Client()

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
        _, data = self._send(call, stream=False)
        return parse_data(call, data, 200)

    def _send(self, call: Call[Any], *, stream: bool) -> Reply:
        request = self._http.build_request(**self._config.request_args(call, stream=stream))
        retrying = tenacity.Retrying(
            sleep=self._sleep, **self._policy.tenacity_args(call.operation)
        )
        for attempt in retrying:
            with attempt:
                number = attempt.retry_state.attempt_number
                return self._attempt(call.operation, request, number, stream)
        raise AssertionError("unreachable: tenacity re-raises the last failure")

    def _attempt(
        self, operation: Operation, request: httpx.Request, number: int, stream: bool
    ) -> Reply:
        started = time.monotonic()
        try:
            response = self._http.send(request, stream=True)
            if not (stream and is_live_stream(response)):
                response.read()  # closes the response too
        except httpx.TransportError as exc:
            log_attempt(operation, number, time.monotonic() - started, type(exc).__name__)
            raise transport_error(operation, exc) from exc
        log_attempt(operation, number, time.monotonic() - started, response.status_code)
        return response, check_reply(operation, response, stream=stream)

    def close(self) -> None:
        """Close the connection pool (unless the HTTP client was passed in)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClient(_ClientBase[httpx.AsyncClient]):
    """The awaitable client: the same settings and operations as :class:`Client`.

    Use it with ``async with`` or await :meth:`aclose` to release its connections.
    """

    _sleep: Callable[[float], Awaitable[None]] = staticmethod(asyncio.sleep)

    def _new_http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient()

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
        _, data = await self._send(call, stream=False)
        return parse_data(call, data, 200)

    async def _send(self, call: Call[Any], *, stream: bool) -> Reply:
        request = self._http.build_request(**self._config.request_args(call, stream=stream))
        retrying = tenacity.AsyncRetrying(
            sleep=self._sleep, **self._policy.tenacity_args(call.operation)
        )
        async for attempt in retrying:
            with attempt:
                number = attempt.retry_state.attempt_number
                return await self._attempt(call.operation, request, number, stream)
        raise AssertionError("unreachable: tenacity re-raises the last failure")

    async def _attempt(
        self, operation: Operation, request: httpx.Request, number: int, stream: bool
    ) -> Reply:
        started = time.monotonic()
        try:
            response = await self._http.send(request, stream=True)
            if not (stream and is_live_stream(response)):
                await response.aread()
        except httpx.TransportError as exc:
            log_attempt(operation, number, time.monotonic() - started, type(exc).__name__)
            raise transport_error(operation, exc) from exc
        log_attempt(operation, number, time.monotonic() - started, response.status_code)
        return response, check_reply(operation, response, stream=stream)

    async def aclose(self) -> None:
        """Close the connection pool (unless the HTTP client was passed in)."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
