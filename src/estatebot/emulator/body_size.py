"""A request's body, read up to a size limit (→ 413 naming the limit).

The limit is the option ``max_body_bytes`` (:data:`DEFAULT_MAX_BODY_BYTES` unless set), counted
on the bytes received, whatever ``Content-Length`` says. An oversized body is still read to its
end but not kept: a client that is still sending then reads the 413 envelope, instead of a
connection closed under it.
"""

from __future__ import annotations

from fastapi import Request

from .envelope import Failure

#: The default limit on a request body: far above any real body (a listing with a long
#: description is a few kilobytes), far below what would tie the server up.
DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024


def check_limit(limit: int) -> int:
    """``limit`` if it is a usable body limit (a positive whole number), else ``ValueError``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"max_body_bytes must be a positive number of bytes, not {limit!r}")
    return limit


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, or a 413 :class:`Failure` naming the limit when it is larger."""
    kept: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= limit:
            kept.append(chunk)
    if size > limit:
        raise Failure(
            413,
            f"Request body too large: {size} bytes, more than the limit of {limit} bytes "
            "(max_body_bytes)",
        )
    return b"".join(kept)
