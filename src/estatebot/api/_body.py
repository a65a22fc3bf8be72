"""A reply body, decoded as it arrives and never past a size cap: no I/O of its own.

httpx inflates gzip and deflate with no bound on the output: one 64 KiB chunk of a gzip bomb
becomes some 64 MB at once, and a whole reply is joined in memory before anyone can look at its
size (a 1 MB bomb took 2.2 GB). So the client reads the raw bytes (``iter_raw``) and
:class:`BodyReader` inflates them with zlib's ``max_length``, a piece of at most 1 MiB at a time,
counting what comes out: past the cap it raises :class:`ReplyTooLarge` and nothing more is
inflated. Only the encodings the client asks for (httpx's default ``Accept-Encoding: gzip,
deflate``) are decoded; others are passed through as they are, as httpx does with an encoding it
does not know.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator

__all__ = ["BodyDecodeError", "BodyReader", "ReplyTooLarge"]

#: The most one inflating step may produce, so a bomb never expands far past the cap.
PIECE = 2**20
#: How many first bytes of a "deflate" body are kept to read it again as raw deflate.
_HEAD = 64


class ReplyTooLarge(Exception):
    """The decoded body passed the cap (mapped to an ``APIError`` naming it)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        super().__init__(f"the reply is larger than {cap} bytes")


class BodyDecodeError(Exception):
    """The body's content encoding is corrupt (mapped to an ``APIError``)."""


class _Inflater:
    """One gzip or deflate layer, undone in pieces of at most :data:`PIECE` bytes."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        self._gzip = encoding in ("gzip", "x-gzip")
        # gzip has a header of its own; "deflate" is meant to be zlib-wrapped, but some servers
        # send it raw. The first bytes tell (as in httpx's own decoder); they are kept until
        # then, however they were split into chunks.
        self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)
        self._head: bytes | None = None if self._gzip else b""

    def _inflate(self, data: bytes) -> bytes:
        try:
            out = self._zlib.decompress(data, PIECE)
        except zlib.error as exc:
            if self._head is not None:  # not zlib-wrapped: read it again as raw deflate
                data, self._head = self._head + data, None
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                return self._inflate(data)
            raise BodyDecodeError(f"the {self.encoding} encoding is corrupt ({exc})") from None
        if self._head is not None:
            self._head = None if out or len(self._head) > _HEAD else self._head + data
        return out

    def pieces(self, data: bytes) -> Iterator[bytes]:
        """What ``data`` inflates to, a piece at a time."""
        while data:
            out = self._inflate(data)
            tail = self._zlib.unconsumed_tail
            if out:
                yield out
            if tail == data and not out:  # no progress: the stream has ended (or is stuck)
                return
            data = tail

    def end(self) -> Iterator[bytes]:
        """What is left once every byte has been given."""
        try:
            rest = self._zlib.flush()
        except zlib.error as exc:
            raise BodyDecodeError(f"the {self.encoding} encoding is corrupt ({exc})") from None
        if rest:
            yield rest


class BodyReader:
    """Decodes one body chunk by chunk and counts it against ``cap`` bytes.

    ``encodings`` are the reply's ``Content-Encoding`` values in the order they were applied
    (pass none for a body already decoded). :meth:`feed` each raw chunk and then :meth:`end`;
    both yield the decoded bytes and raise :class:`ReplyTooLarge` once more than ``cap`` bytes
    have come out, before anything past the cap is inflated further.
    """

    def __init__(self, cap: int, encodings: Iterable[str] = ()) -> None:
        self.cap = cap
        self.size = 0
        names = [name.strip().lower() for name in encodings]
        self._layers = [_Inflater(name) for name in names if name in _DECODED]

    def feed(self, raw: bytes) -> Iterator[bytes]:
        """The decoded bytes of one raw chunk."""
        return self._counted(self._through(0, [raw]))

    def end(self) -> Iterator[bytes]:
        """The decoded bytes left at the end of the body."""
        return self._counted(self._ending(0))

    def _through(self, index: int, chunks: Iterable[bytes]) -> Iterator[bytes]:
        # The encoding applied last is undone first.
        if index == len(self._layers):
            yield from chunks
            return
        layer = self._layers[-1 - index]
        for chunk in chunks:
            yield from self._through(index + 1, layer.pieces(chunk))

    def _ending(self, index: int) -> Iterator[bytes]:
        if index == len(self._layers):
            return
        layer = self._layers[-1 - index]
        yield from self._through(index + 1, layer.end())
        yield from self._ending(index + 1)

    def _counted(self, pieces: Iterator[bytes]) -> Iterator[bytes]:
        for piece in pieces:
            self.size += len(piece)
            if self.size > self.cap:
                raise ReplyTooLarge(self.cap)
            yield piece


_DECODED = frozenset({"gzip", "x-gzip", "deflate"})
