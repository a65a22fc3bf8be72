"""The switches of the foreign server: how one plausible .NET deployment differs from another.

Every field of :class:`Variant` defaults to the contract's and the addendum's decided behaviour
(PascalCase envelope, SSE stream, ``VirtualCount`` exact, page size capped at 100, failures with
their HTTP status). A test turns on the differences it wants, either by parametrizing the
``server`` fixture with a ``Variant`` or by replacing ``server.variant`` in the test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: The operation names the server uses (the same names the client reports in its errors).
EDIT = "Edit"
MODEL_LIST = "ModelList"
GET_SESSION = "GetSession"
CLIENT_ASK = "ClientAsk"
CREATE = "RealEstateCreate"
UPDATE = "RealEstateUpdate"
LIST = "RealEstateList"
DELETE = "RealEstateDelete"
WRITES = frozenset({CREATE, UPDATE, DELETE})

CountMode = Literal["exact", "missing", "null", "low", "high", "page", "zero", "minus_one"]
PastEnd = Literal["empty", "http404", "envelope404", "html404", "repeat_last"]
Framing = Literal["sse", "ndjson", "concatenated", "json_array"]
FinalStyle = Literal["standard", "task_completed", "lower", "none"]
StreamFailure = Literal["none", "before", "after"]
SessionShape = Literal["object", "sessionId", "bare", "bare_text", "unknown"]
AskKeys = Literal["contract", "pascal", "camel"]
Numbers = Literal["plain", "decimal", "money", "money_everywhere"]
SaleText = Literal["display", "input", "upper"]
ImagesText = Literal["json", "comma", "pipe", "objects"]
ExtensionsText = Literal["json", "pairs", "capital_value"]
ListShape = Literal["standard", "references", "unknown"]
FaultKind = Literal["drop", "500", "502"]
#: How a throttled reply says when to come back (see :class:`Throttle`).
Hint = Literal["retry_after", "ratelimit_reset", "x_ratelimit_reset"]
Deflate = Literal["zlib", "raw"]


@dataclass
class Fault:
    """Answer the first ``count`` requests of ``operations`` badly.

    With ``commit`` the operation is carried out first (the write happened, the reply is lost:
    the hard case for a client); without it nothing is done. ``drop`` closes the connection
    with no reply at all, ``500`` is an envelope failure, ``502`` an HTML page from a proxy.
    """

    operations: frozenset[str]
    kind: FaultKind = "drop"
    count: int = 1
    commit: bool = True


@dataclass
class Throttle:
    """Answer the first ``count`` requests of ``operations`` with 429 (or ``status``) and a hint
    of when to come back; nothing is done.

    ``retry_after`` is the wait: seconds (``"120"``) or an HTTP date; the special value
    ``"date+120"`` is turned into the HTTP date at least 120 seconds from the reply (the next
    whole second, as a date has no fractions): ``"date+1"`` is a date a second or two ahead,
    short enough to be waited out in a test.

    ``hint`` is the header that carries the wait: ``Retry-After`` (the standard), the IETF
    draft's ``RateLimit-Reset: <seconds>``, or GitHub's and many gateways'
    ``X-RateLimit-Reset: <epoch seconds>`` (then ``Retry-After`` is not sent at all).
    ``status`` 503 is a service restarting or overloaded (``Retry-After: 0`` is common).

    With ``hold`` the wait is enforced, as a real limiter does: every request of
    ``operations`` until it has passed is refused too (with the wait left), and not counted;
    a client that comes back early is refused again. Without it only the count matters.
    """

    operations: frozenset[str]
    retry_after: str = "120"
    count: int = 1
    hint: Hint = "retry_after"
    status: int = 429
    hold: bool = False


@dataclass
class HtmlPage:
    """Answer the first ``count`` requests of ``operations`` with an HTML error page (text/html,
    no envelope), as IIS or a proxy in front of the service sends: ``403 - Forbidden: Access
    is denied.`` or ``404 - File or directory not found.``. Nothing is done."""

    operations: frozenset[str]
    status: int = 404
    count: int = 1


@dataclass
class Variant:
    """One deployment's way of answering (see the module docstring)."""

    # 1. ASP.NET Core's default serializer: camelCase names everywhere (or in some operations).
    camel_case: bool = False
    #: When set with ``camel_case``, only these operations are camelCase (mixed deployments).
    camel_operations: frozenset[str] | None = None
    #: ClientAsk ``Data`` keys: the contract's (``messageid``), PascalCase or camelCase.
    ask_keys: AskKeys = "contract"

    # 2. Envelope fields: ``Message: null`` on success; fields left out.
    null_message: bool = False
    omit_fields: frozenset[str] = frozenset()

    # 3. Bare ``Data`` values.
    session_shape: SessionShape = "object"
    delete_bare: bool = False
    create_text: bool = False
    numeric_model_keys: bool = False

    # 4. Validation failures as ``application/problem+json`` (ValidationProblemDetails).
    problem_details: bool = False

    # 5. A page past the last: an empty page, HTTP 404, HTTP 200 with Success false/Code 404,
    #    IIS's HTML 404 page, or the last page again (``repeat_last``: an offset past the end
    #    clamped to the last page, as some hand-written paging does).
    past_end: PastEnd = "empty"
    #: ``PageNumber`` 0 is the first page (so 1 answers the second); absent means 0.
    zero_based: bool = False

    # 6. The page-size cap, and whether a larger PageSize is clamped or refused with 400.
    page_cap: int = 100
    reject_large_pages: bool = False
    #: > 0: ``PageSize`` is ignored and every page holds this many rows (fewer or more than
    #: asked, past the cap too), as a deployment with a fixed page size does.
    own_page_size: int = 0

    # 7. What ``VirtualCount`` says (``minus_one``: -1, "not counted", as some .NET paging does).
    virtual_count: CountMode = "exact"

    # 8. A UTF-8 byte-order mark before JSON bodies (and before a stream).
    bom: bool = False
    stream_bom: bool = False

    # 9. Stream framing.
    framing: Framing = "sse"
    final: FinalStyle = "standard"
    stream_failure: StreamFailure = "none"
    stream_failure_code: int = 500
    sse_crlf: bool = False
    #: SSE ``event:``/``id:`` lines, ``:`` comments and a ``data: [DONE]`` terminator.
    sse_extras: bool = False
    #: > 0: the stream body is written in pieces of this many bytes (splitting objects and
    #: multi-byte characters); 0: one piece per object.
    stream_chunk: int = 0
    #: None: ``text/event-stream`` (``application/json; charset=utf-8`` for ``json_array``).
    stream_content_type: str | None = None
    #: Drop the connection after half of the fragments.
    stream_cut: bool = False
    #: The stream's JSON with every non-ASCII character as ``\uXXXX`` escapes, as .NET's
    #: encoders write it (a character outside the BMP as two escapes, a surrogate pair).
    stream_ascii: bool = False
    #: > 0: the answer cut into fragments of this many UTF-16 code units (as a .NET string is
    #: indexed), so a cut may fall between the two halves of a surrogate pair: each half then
    #: goes out alone as a ``\uXXXX`` escape (a lone half has no UTF-8 form). 1 cuts at every
    #: position. 0: fragments of about three words.
    fragment_units: int = 0

    # 10. Business failures with HTTP 200 and Success false, Code 4xx/5xx in the envelope.
    http200_failures: bool = False

    # 11. Faults, possibly after the write was committed.
    fault: Fault | None = None

    #: False: a second listing with a taken MLSNumber or Url is accepted (no 409), as a
    #: deployment may do; then only the client keeps a lost create from being sent twice.
    unique_keys: bool = True

    # 12. 429 (or 503) with a hint of when to come back.
    throttle: Throttle | None = None
    #: HTML error pages for chosen operations (IIS or a proxy).
    html_page: HtmlPage | None = None

    # 13. Other plausible .NET differences.
    code_text: bool = False
    content_type: str = "application/json; charset=utf-8"
    gzip: bool = False
    #: ``Content-Encoding: deflate``: zlib-wrapped (RFC 9110), or raw deflate as IIS and some
    #: other servers send it under that name. Applied after gzip when both are on.
    deflate: Deflate | None = None
    #: Bodies as an HTTP/1.0 server (or proxy) sends them: ``HTTP/1.0`` status line,
    #: ``Connection: close``, no Content-Length and no chunking; the body ends with the
    #: connection (streams too).
    close_delimited: bool = False
    #: > 0: a kept-alive connection is closed by the server after every this many replies, as a
    #: server or balancer with a per-connection request limit does: the last reply says
    #: ``Connection: close`` (nginx's ``keepalive_requests``, Kestrel, IIS), or, with
    #: ``close_silently``, says nothing of it (as an idle timeout does, racing the next request).
    close_every: int = 0
    close_silently: bool = False
    #: The envelope as the ABP framework wraps it: ``{"result": ..., "targetUrl": null,
    #: "success": true, "error": null, "unAuthorizedRequest": false, "__abp": true}``, camelCase
    #: throughout; a failure has ``result`` null, ``success`` false and ``error: {"code": 0,
    #: "message", "details", "validationErrors"}``, its kind told by the HTTP status alone.
    abp_envelope: bool = False
    #: ``traceId`` and ``errors: null`` beside the envelope's fields.
    extra_fields: bool = False
    #: List number texts: plain, decimals (``"450000.00"``), ``Price`` as money
    #: (``"$450,000.00"``) and ``Area`` with a unit, or every money field as money.
    numbers: Numbers = "plain"
    #: Number fields List writes with a decimal comma (``"1001,6"``), as a deployment running in
    #: a German or French culture writes them; an Update still takes only JSON numbers.
    decimal_comma: frozenset[str] = frozenset()
    #: The text of an absent number in List records (``""``, ``"null"``, ``"N/A"``, ...).
    absent: str = ""
    #: Absent text values (Tours, SpaceType, ...) as JSON null instead of ``""``.
    null_texts: bool = False
    sale_type_text: SaleText = "display"
    #: ``Images`` as a JSON array of URL texts (the decided form), comma- or pipe-separated URLs,
    #: or a JSON array of objects (``[{"Url": "https://...", "Order": 1}]``), which a client
    #: cannot read as URLs and an Update does not take back.
    images_text: ImagesText = "json"
    extensions_text: ExtensionsText = "json"
    #: List ``Data``: the contract's, Newtonsoft's ``$id``/``$values`` wrappers, or unknown names.
    list_shape: ListShape = "standard"

    def camel_for(self, operation: str) -> bool:
        """Whether ``operation``'s reply is written in camelCase."""
        if not self.camel_case:
            return False
        return self.camel_operations is None or operation in self.camel_operations
