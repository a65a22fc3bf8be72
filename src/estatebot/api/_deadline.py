"""An overall deadline on what one attempt reads and writes.

httpx has no overall timeout: its read timeout bounds each wait for the next bytes, so a server
that trickles a byte a second holds a call for as long as it likes, in the reply's head as much
as in its body. A :class:`Deadline` is the moment an attempt (or a stream) must be done by.

* The async client runs an attempt inside ``asyncio.timeout``, which interrupts any await.
* A blocking read cannot be interrupted from outside, so the sync client gives each socket read
  and write at most the time left: :class:`DeadlineBackend` wraps httpcore's network backend (its
  documented extension point) and shortens each timeout to what remains of the deadline
  :meth:`Deadline.applied` set for the current context (a context variable, so threads sharing a
  client each keep their own).
* Both also check the deadline between chunks of the body (:meth:`Deadline.check`), which bounds
  an attempt on an ``http_client`` passed in, whose backend is left alone, to the deadline plus
  one read timeout.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpcore
import httpx

__all__ = ["Deadline", "DeadlineBackend", "DeadlinePassed", "install"]


class DeadlinePassed(Exception):
    """The deadline ran out while the reply was being read (mapped to ``APITimeoutError``)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"the {seconds:g} s deadline passed")


@dataclass
class Deadline:
    """The moment something must be done by: ``seconds`` from when it was started; ``None``
    seconds is no deadline at all. ``hit`` records that a read or write was cut short by it."""

    seconds: float | None
    at: float | None = None
    hit: bool = field(default=False, compare=False)

    @classmethod
    def start(cls, seconds: float | None) -> Deadline:
        """A deadline ``seconds`` from now (none if ``seconds`` is None)."""
        return cls(seconds, None if seconds is None else time.monotonic() + seconds)

    def remaining(self) -> float | None:
        """The seconds left (never below 0), or None without a deadline."""
        return None if self.at is None else max(self.at - time.monotonic(), 0.0)

    def passed(self) -> bool:
        """Whether it has run out (or cut a read or write short)."""
        return self.hit or (self.at is not None and time.monotonic() >= self.at)

    def check(self) -> None:
        """Raise :class:`DeadlinePassed` if it has run out."""
        if self.seconds is not None and self.passed():
            raise DeadlinePassed(self.seconds)

    @contextmanager
    def applied(self) -> Iterator[None]:
        """Bound every socket read and write of a :class:`DeadlineBackend` in this block."""
        token = _CURRENT.set(self if self.at is not None else None)
        try:
            yield
        finally:
            _CURRENT.reset(token)


_CURRENT: ContextVar[Deadline | None] = ContextVar("estatebot_api_deadline", default=None)

_Timeout = type[httpcore.TimeoutException]
R = TypeVar("R")


def _bounded(timeout: float | None, error: _Timeout) -> float | None:
    """``timeout`` shortened to the time left of the current deadline."""
    deadline = _CURRENT.get()
    left = deadline.remaining() if deadline is not None else None
    if deadline is None or left is None:
        return timeout
    if left <= 0:
        deadline.hit = True
        raise error("the overall deadline passed")
    return left if timeout is None else min(timeout, left)


def _timed(call: Callable[[float | None], R], timeout: float | None, error: _Timeout) -> R:
    """``call`` with ``timeout`` bounded by the deadline, noting whether the deadline cut it."""
    bounded = _bounded(timeout, error)
    try:
        return call(bounded)
    except httpcore.TimeoutException:
        deadline = _CURRENT.get()
        if deadline is not None and bounded != timeout:  # the deadline, not the timeout, ran out
            deadline.hit = True
        raise


class _Stream(httpcore.NetworkStream):
    """A network stream whose reads and writes end by the current deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return _timed(lambda left: self._inner.read(max_bytes, left), timeout, httpcore.ReadTimeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        _timed(lambda left: self._inner.write(buffer, left), timeout, httpcore.WriteTimeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        inner = _timed(
            lambda left: self._inner.start_tls(ssl_context, server_hostname, left),
            timeout,
            httpcore.ConnectTimeout,
        )
        return _Stream(inner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend with each connect, read and write ending by the deadline."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self.inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = _timed(
            lambda left: self.inner.connect_tcp(host, port, left, local_address, socket_options),
            timeout,
            httpcore.ConnectTimeout,
        )
        return _Stream(stream)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = _timed(
            lambda left: self.inner.connect_unix_socket(path, left, socket_options),
            timeout,
            httpcore.ConnectTimeout,
        )
        return _Stream(stream)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def install(http: httpx.Client) -> bool:
    """Put a :class:`DeadlineBackend` under the connection pools of ``http`` (its transport and
    those of the proxies it took from the environment); False if its layout is not the one
    known (the checks between chunks still hold then).

    httpx builds its pools without a way to pass a network backend, and a transport passed in
    would turn off its proxies from the environment; so each pool's backend is swapped once,
    before any connection is made (each connection takes it when created).
    """
    transports = [getattr(http, "_transport", None), *getattr(http, "_mounts", {}).values()]
    installed = [_install(transport) for transport in transports if transport is not None]
    return bool(installed) and all(installed)


def _install(transport: httpx.BaseTransport) -> bool:
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(backend, httpcore.NetworkBackend):
        return False
    if not isinstance(backend, DeadlineBackend):
        pool._network_backend = DeadlineBackend(backend)  # type: ignore[union-attr]
    return True
