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

CountMode = Literal["exact", "missing", "null", "low", "high", "page", "zero"]
PastEnd = Literal["empty", "http404", "envelope404"]
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
    """Answer the first ``count`` requests of ``operations`` with 429 and ``Retry-After``.

    ``retry_after`` is the header's text as sent: seconds (``"120"``) or an HTTP date; the
    special value ``"date+120"`` is turned into the HTTP date 120 seconds from the reply.
    """

    operations: frozenset[str]
    retry_after: str = "120"
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

    # 5. A page past the last: an empty page, HTTP 404, or HTTP 200 with Success false/Code 404.
    past_end: PastEnd = "empty"

    # 6. The page-size cap, and whether a larger PageSize is clamped or refused with 400.
    page_cap: int = 100
    reject_large_pages: bool = False

    # 7. What ``VirtualCount`` says.
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

    # 10. Business failures with HTTP 200 and Success false, Code 4xx/5xx in the envelope.
    http200_failures: bool = False

    # 11. Faults, possibly after the write was committed.
    fault: Fault | None = None

    #: False: a second listing with a taken MLSNumber or Url is accepted (no 409), as a
    #: deployment may do; then only the client keeps a lost create from being sent twice.
    unique_keys: bool = True

    # 12. 429 with Retry-After.
    throttle: Throttle | None = None

    # 13. Other plausible .NET differences.
    code_text: bool = False
    content_type: str = "application/json; charset=utf-8"
    gzip: bool = False
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
