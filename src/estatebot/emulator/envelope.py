"""The reply envelope: the common reply object, its encoding, and business failures.

Every non-stream reply is the envelope ``{"Data", "Version", "Success", "Code", "Message"}`` with
the HTTP status equal to ``Code`` (unknown paths and methods too). An operation raises
:class:`Failure` to answer with an error envelope; a drop fault sends an envelope cut in the
middle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fastapi import Response
from starlette.types import Receive, Scope, Send

from estatebot.api.models import API_VERSION


class Failure(Exception):
    """A business failure, answered as an envelope with ``code`` as HTTP status and Code."""

    def __init__(self, code: int, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after


@dataclass(frozen=True)
class EncodedData:
    """A reply's ``Data`` already encoded as JSON.

    A List page is spliced from per-listing JSON texts that are encoded once and cached: the
    listings stay the same page after page, and encoding them anew was most of a page's cost.
    """

    json: bytes


def envelope(data: Any = None, code: int = 200, message: str = "") -> dict[str, Any]:
    """The common reply object."""
    return {
        "Data": data,
        "Version": API_VERSION,
        "Success": code == 200,
        "Code": code,
        "Message": message,
    }


def json_bytes(obj: Any) -> bytes:
    """``obj`` as JSON text in UTF-8 (non-ASCII characters written as they are).

    Text that UTF-8 cannot hold (an unpaired surrogate, say in a listing added through the
    server's helpers) is written as a ``\\u`` escape instead of failing the whole reply.
    """
    text = json.dumps(obj, ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj).encode("ascii")


def _envelope_bytes(data: Any, code: int, message: str) -> bytes:
    if not isinstance(data, EncodedData):
        return json_bytes(envelope(data, code, message))
    # The same text as encoding the whole envelope: "Data" first, then the other members.
    rest = envelope(None, code, message)
    del rest["Data"]
    return b'{"Data": ' + data.json + b", " + json_bytes(rest)[1:]


class _CutResponse(Response):
    """A reply that announces its full Content-Length, sends half its body and hangs up."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        half = self.body[: max(1, len(self.body) // 2)]
        await send({"type": "http.response.body", "body": half, "more_body": True})
        # Returning without the final body message makes the server close the connection.


def envelope_response(
    data: Any = None,
    code: int = 200,
    message: str = "",
    *,
    retry_after: int | None = None,
    cut: bool = False,
) -> Response:
    """``data`` in the envelope, as a JSON reply with ``code`` as its HTTP status.

    ``retry_after`` adds a ``Retry-After`` header; ``cut`` sends half the body and hangs up.
    """
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    cls = _CutResponse if cut else Response
    return cls(
        _envelope_bytes(data, code, message),
        status_code=code,
        headers=headers,
        media_type="application/json",
    )
