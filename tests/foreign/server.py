"""A second, independent server of the chatbot service, on the standard library only.

Written from ``/work/shared/spec/service-interface.md`` and ``addendum.md`` alone (nothing of
``estatebot.emulator`` is used or imitated): ``http.server.ThreadingHTTPServer`` on 127.0.0.1
and a free port, in a daemon thread, state in memory (:mod:`foreign.store`). Its replies follow
the contract by default and differ as ``server.variant`` (:class:`~foreign.variant.Variant`) says,
the way real ASP.NET deployments differ. Every request is logged in ``server.seen``.

    with ForeignServer(Variant(camel_case=True)) as server:
        server.seed(137)
        client = estatebot.Client(base_url=server.base_url, api_key=server.api_key, ...)
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import socket
import threading
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from time import time
from typing import Any, cast
from urllib.parse import urlsplit

from foreign import data
from foreign.store import MODELS, Chatbot, Failure, Store, Workspace, answer, tokens
from foreign.variant import (
    CLIENT_ASK,
    CREATE,
    DELETE,
    EDIT,
    GET_SESSION,
    LIST,
    MODEL_LIST,
    UPDATE,
    Throttle,
    Variant,
)
from foreign.wire import (
    ASK_RULES,
    DELETE_RULES,
    EDIT_RULES,
    LIST_RULES,
    LISTING_RULES,
    SESSION_RULES,
    UPDATE_RULES,
    ZERO_BASED_LIST_RULES,
    Problems,
    bind,
    dotnet_camel,
    list_record,
    recase,
)

BOM = b"\xef\xbb\xbf"
VERSION = "1.0.0"

# ASP.NET routes are case-insensitive: paths are matched in lower case.
ROUTES: dict[str, tuple[str, str]] = {
    "/chat/chatbot/edit": ("POST", EDIT),
    "/chat/chatbot/modellist": ("GET", MODEL_LIST),
    "/chat/chatbot/getsession": ("POST", GET_SESSION),
    "/chat/chat/clientask": ("POST", CLIENT_ASK),
    "/chat/chatbot/realestatecreate": ("POST", CREATE),
    "/chat/chatbot/realestateupdate": ("POST", UPDATE),
    "/chat/chatbot/realestatelist": ("POST", LIST),
    "/chat/chatbot/realestatedelete": ("POST", DELETE),
}
# Which credential each operation takes (the contract's Authentication section and addendum):
# "api" = Authorization, "session" = chatrobot-sessionkey, "either" = Update/Delete/Create.
CREDENTIALS: dict[str, str] = {
    EDIT: "api",
    MODEL_LIST: "api",
    GET_SESSION: "api",
    CLIENT_ASK: "api",
    CREATE: "either",
    UPDATE: "either",
    DELETE: "either",
    LIST: "session",
}


@dataclass
class Seen:
    """One request as the server saw it: operation, JSON body, and the HTTP status sent (0 when
    the connection was dropped without a reply)."""

    operation: str
    body: Any
    status: int


@dataclass
class StreamReply:
    """A streamed answer to write: its fragments and final object's values."""

    pieces: list[str]
    question_id: int
    answer_id: int
    answer: str
    total_tokens: int


class _Dropped(Exception):
    """A fault ended the request: no reply (the connection closed), or a proxy's page."""


class _HtmlPage(Exception):
    """Answer with the HTML error page of this status instead of the application's reply."""

    def __init__(self, status: int) -> None:
        self.status = status
        super().__init__(status)


# IIS's own error pages (a request that never reached the application behind it), shortened.
_IIS_PAGE = """<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" \
"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"/>
<title>{title}</title>
<style type="text/css">
<!--
body{{margin:0;font-size:.7em;font-family:Verdana, Arial, Helvetica, sans-serif;}}
-->
</style>
</head>
<body>
<div id="header"><h1>Server Error</h1></div>
<div id="content">
 <div class="content-container"><fieldset>
  <h2>{title}</h2>
  <h3>{detail}</h3>
 </fieldset></div>
</div>
</body>
</html>
"""
HTML_PAGES: dict[int, bytes] = {
    403: _IIS_PAGE.format(
        title="403 - Forbidden: Access is denied.",
        detail="You do not have permission to view this directory or page using the "
        "credentials that you supplied.",
    ).encode("latin-1"),
    404: _IIS_PAGE.format(
        title="404 - File or directory not found.",
        detail="The resource you are looking for might have been removed, had its name "
        "changed, or is temporarily unavailable.",
    ).encode("latin-1"),
}


def _throttle_wait(throttle: Throttle) -> tuple[float | None, bool]:
    """The wait a throttle asks for in seconds (None for a literal date) and whether it is sent
    as an HTTP date."""
    text = throttle.retry_after
    if text.startswith("date+"):
        return float(text[5:]), True
    try:
        return float(text), False
    except ValueError:
        return None, True


def _throttle_headers(throttle: Throttle, until: float, now: float, held: bool) -> dict[str, str]:
    """The headers of a throttled reply telling the client to come back at ``until`` (epoch)."""
    wait, as_date = _throttle_wait(throttle)
    left = str(max(math.ceil(until - now - 1e-6), 0))
    if throttle.hint == "x_ratelimit_reset":
        reset = str(math.ceil(until))
        return {"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset}
    if throttle.hint == "ratelimit_reset":
        return {"RateLimit-Limit": "60", "RateLimit-Remaining": "0", "RateLimit-Reset": left}
    if wait is None:
        return {"Retry-After": throttle.retry_after}  # a literal date, sent as given
    if as_date:
        return {"Retry-After": formatdate(until, usegmt=True)}
    return {"Retry-After": left if held else throttle.retry_after}


def _validation(problems: Problems) -> Failure:
    # The addendum: HTTP 400, Code 400, and a Message naming every bad field.
    detail = "; ".join(f"{name}: {' '.join(texts)}" for name, texts in problems.errors.items())
    return Failure(400, f"Validation failed: {detail}", fields=problems.errors)


def _pieces(text: str, units: int = 0) -> list[str]:
    """The answer in fragments of about three words (spaces kept, so they join back), or of
    ``units`` UTF-16 code units each (halves of a surrogate pair may part)."""
    if units > 0:
        raw = text.encode("utf-16-le", "surrogatepass")
        step = 2 * units
        return [
            raw[i : i + step].decode("utf-16-le", "surrogatepass") for i in range(0, len(raw), step)
        ]
    words = text.split(" ")
    return [
        " ".join(words[i : i + 3]) + (" " if i + 3 < len(words) else "")
        for i in range(0, len(words), 3)
    ]


class ForeignServer:
    """The server: start with ``with`` (or :meth:`start`/:meth:`stop`); see the module doc."""

    def __init__(self, variant: Variant | None = None) -> None:
        self.store = Store()
        self.workspace: Workspace = self.store.add_workspace()
        self.chatbot: Chatbot = self.store.add_chatbot(self.workspace)
        # A second workspace: its chatbot must stay invisible (404) to the first one's keys.
        self.other_workspace: Workspace = self.store.add_workspace()
        self.other_chatbot: Chatbot = self.store.add_chatbot(self.other_workspace)
        self.seen: list[Seen] = []
        #: Each streamed or whole answer's text as the server wrote it, in order.
        self.answers: list[str] = []
        #: Connections accepted so far.
        self.connections = 0
        #: At most this many requests are answered after the variant was last set (None: no
        #: bound); every one after is refused with HTTP 418, so a client asking for ever fails
        #: its test instead of hanging it.
        self.budget: int | None = None
        self._lock = threading.Lock()
        self._variant = variant or Variant()
        self._faults_used = 0
        self._throttles_used = 0
        self._pages_used = 0
        self._held_until = 0.0
        self._answered = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ what tests use

    @property
    def variant(self) -> Variant:
        """The deployment's behaviour; assigning a new one restarts its fault counters and the
        request :attr:`budget`."""
        return self._variant

    @variant.setter
    def variant(self, value: Variant) -> None:
        with self._lock:
            self._variant = value
            self._faults_used = 0
            self._throttles_used = 0
            self._pages_used = 0
            self._held_until = 0.0
            self._answered = 0

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        assert self._httpd is not None, "the server is not running"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def api_key(self) -> str:
        """The API key of the main workspace (Authorization)."""
        return self.workspace.api_key

    @property
    def session_key(self) -> str:
        """The session key of the main workspace (chatrobot-sessionkey)."""
        return self.workspace.session_key

    @property
    def serial(self) -> str:
        """The main chatbot's serial number."""
        return self.chatbot.serial

    def seed(self, count: int, *, prefix: str = "F", start: int = 1) -> list[dict[str, Any]]:
        """Add ``count`` generated listings to the main chatbot; returns their Create bodies."""
        bodies = data.make_listings(count, prefix=prefix, start=start)
        for body in bodies:
            self.store.create(self.chatbot, body)
        return bodies

    def listings(self, chatbot: Chatbot | None = None) -> list[dict[str, Any]]:
        """The chatbot's listings as stored (typed input fields plus ``ID``), by ID."""
        bot = chatbot or self.chatbot
        with self.store.lock:
            return [{"ID": i, **bot.listings[i]} for i in sorted(bot.listings)]

    def requests(self, operation: str) -> list[Seen]:
        """The requests of one operation seen so far, in order."""
        with self._lock:
            return [seen for seen in self.seen if seen.operation == operation]

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> ForeignServer:
        """Listen on 127.0.0.1, a free port, in a daemon thread."""
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.app = self  # type: ignore[attr-defined]
        self._httpd = httpd
        # A short poll interval: shutdown() waits for the loop to notice.
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> ForeignServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ the rules

    def authorize(self, operation: str, headers: Any) -> Workspace:
        """The workspace of the request's credential, or 401."""
        kind = CREDENTIALS[operation]
        api = headers.get("Authorization") if kind in ("api", "either") else None
        session = headers.get("chatrobot-sessionkey") if kind in ("session", "either") else None
        workspace = self.store.workspace_of(api, session)
        if workspace is None:
            raise Failure(401, "Unauthorized: the credential is missing or invalid")
        return workspace

    def spend(self) -> None:
        """Count one request against :attr:`budget`; refuse it (418) once that is spent."""
        with self._lock:
            self._answered += 1
            over = self.budget is not None and self._answered > self.budget
        if over:
            message = f"The test server's budget of {self.budget} requests is spent"
            raise Failure(418, message)

    def take_throttle(self, operation: str, variant: Variant) -> None:
        """Raise the variant's 429 (or 503) for the first requests it names, and, when it holds,
        for every request of them until the wait it asked for has passed."""
        throttle = variant.throttle
        if throttle is None or operation not in throttle.operations:
            return
        now = time()
        with self._lock:
            held = throttle.hold and now < self._held_until
            if not held:
                if self._throttles_used >= throttle.count:
                    return
                self._throttles_used += 1
                wait, as_date = _throttle_wait(throttle)
                until = now + (wait or 0.0)
                # A date or an epoch has whole seconds: the next one at or after the wait.
                if as_date or throttle.hint == "x_ratelimit_reset":
                    until = math.ceil(until)
                self._held_until = until
            until = self._held_until
        headers = _throttle_headers(throttle, until, now, held)
        if throttle.status == 429:
            raise Failure(429, "Too many requests, slow down", headers=headers)
        message = "The service is temporarily unavailable, try again later"
        raise Failure(throttle.status, message, headers=headers)

    def take_html_page(self, operation: str, variant: Variant) -> int | None:
        """The status of the HTML error page to answer with now, if any."""
        page = variant.html_page
        if page is None or operation not in page.operations:
            return None
        with self._lock:
            if self._pages_used >= page.count:
                return None
            self._pages_used += 1
        return page.status

    def take_fault(self, operation: str, variant: Variant, *, committed: bool) -> str | None:
        """The fault kind to inflict now (before or after the write), if any."""
        fault = variant.fault
        if fault is None or operation not in fault.operations or fault.commit != committed:
            return None
        with self._lock:
            if self._faults_used >= fault.count:
                return None
            self._faults_used += 1
        return fault.kind

    def handle(self, operation: str, body: dict[str, Any], workspace: Workspace) -> Any:
        """Carry out one operation; its ``Data`` (before shaping), or a :class:`StreamReply`."""
        handler = getattr(self, "_op_" + operation)
        return handler(body, workspace)

    def _op_Edit(self, body: dict[str, Any], workspace: Workspace) -> int:
        problems = Problems()
        fields = bind(body, EDIT_RULES, problems)
        model = fields.get("Model")
        if model is not None and model not in {key for key, _, _ in MODELS}:
            problems.add("Model", "Model must be a Key from ModelList.")
        if problems:
            raise _validation(problems)
        chatbot = self.store.chatbot(fields.pop("serialNumber"), workspace)
        with self.store.lock:
            chatbot.settings.update(fields)  # the addendum: omitted fields stay unchanged
        return 1

    def _op_ModelList(self, body: dict[str, Any], workspace: Workspace) -> list[dict[str, Any]]:
        numeric = self.variant.numeric_model_keys
        return [
            {"Key": int(key) if numeric else key, "Value": name, "Status": enabled}
            for key, name, enabled in MODELS
        ]

    def _op_GetSession(self, body: dict[str, Any], workspace: Workspace) -> int:
        problems = Problems()
        fields = bind(body, SESSION_RULES, problems)
        if problems:
            raise _validation(problems)
        return self.store.new_session(self.store.chatbot(fields["serialNumber"], workspace))

    def _op_ClientAsk(self, body: dict[str, Any], workspace: Workspace) -> Any:
        problems = Problems()
        fields = bind(body, ASK_RULES, problems)
        kind = fields.get("chatAskType") or "Text"
        files = fields.get("fileIds") or []
        if kind == "Text" and files:
            problems.add("fileIds", "fileIds are only valid with Image, Audio or Video.")
        if kind == "Text" and "content" in fields and not fields["content"].strip():
            problems.add("content", "content must not be empty for a Text message.")
        if kind != "Text" and not files:
            problems.add("fileIds", f"{kind} messages need a file.")
        if kind in ("Audio", "Video") and len(files) > 1:
            problems.add("fileIds", f"{kind} messages take exactly one file.")
        if problems:
            raise _validation(problems)
        session, chatbot = self.store.session(fields["sessionID"], workspace)
        self.store.admit(session, chatbot)
        content = fields["content"]
        # A file message may come without text: it still gets an answer.
        text, no_answer = answer(chatbot, content) if content.strip() else ("Nice photo.", False)
        question_id, answer_id = self.store.new_message_ids()
        total = tokens(str(chatbot.settings.get("SystemMessage") or ""), content, text)
        with self._lock:
            self.answers.append(text)
        if fields.get("stream"):
            pieces = _pieces(text, self.variant.fragment_units)
            return StreamReply(pieces, question_id, answer_id, text, total)
        keys = {
            "contract": ("messageid", "content", "totalToken", "noAnswer"),
            "pascal": ("MessageId", "Content", "TotalToken", "NoAnswer"),
            "camel": ("messageId", "content", "totalToken", "noAnswer"),
        }[self.variant.ask_keys]
        return dict(zip(keys, (answer_id, text, total, no_answer), strict=True))

    def _listing_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in fields.items() if k not in ("SerialNumber", "Key", "KeyType")}

    def _op_RealEstateCreate(self, body: dict[str, Any], workspace: Workspace) -> int:
        problems = Problems()
        fields = bind(body, LISTING_RULES, problems)
        if problems:
            raise _validation(problems)
        chatbot = self.store.chatbot(fields["SerialNumber"], workspace)
        unique = self.variant.unique_keys
        return self.store.create(chatbot, self._listing_fields(fields), unique=unique)

    def _op_RealEstateUpdate(self, body: dict[str, Any], workspace: Workspace) -> int:
        problems = Problems()
        fields = bind(body, UPDATE_RULES, problems)
        if problems:
            raise _validation(problems)
        chatbot = self.store.chatbot(fields["SerialNumber"], workspace)
        listing = self._listing_fields(fields)
        unique = self.variant.unique_keys
        return self.store.update(chatbot, fields["Key"], fields["KeyType"], listing, unique=unique)

    def _op_RealEstateDelete(self, body: dict[str, Any], workspace: Workspace) -> int:
        problems = Problems()
        fields = bind(body, DELETE_RULES, problems)
        if "Keys" in fields and not fields["Keys"]:
            problems.add("Keys", "Keys must name at least one listing.")
        if problems:
            raise _validation(problems)
        chatbot = self.store.chatbot(fields["SerialNumber"], workspace)
        return self.store.delete(chatbot, fields["Keys"], fields["KeyType"])

    def _op_RealEstateList(self, body: dict[str, Any], workspace: Workspace) -> dict[str, Any]:
        variant = self.variant
        problems = Problems()
        fields = bind(body, ZERO_BASED_LIST_RULES if variant.zero_based else LIST_RULES, problems)
        size = fields.get("PageSize", 20)
        if variant.reject_large_pages and size > variant.page_cap:
            limit = f"The field PageSize must be between 1 and {variant.page_cap}."
            problems.add("PageSize", limit)
        if problems:
            raise _validation(problems)
        chatbot = self.store.chatbot(fields["SerialNumber"], workspace)
        size = variant.own_page_size or min(size, variant.page_cap)  # a cap, silently
        first = 0 if variant.zero_based else 1
        page = fields.get("PageNumber", first)
        rows = self.store.matching(
            chatbot, fields.get("CityName"), fields.get("SaleType"), fields.get("MLSNumber")
        )
        total, start = len(rows), (page - first) * size
        if start > 0 and start >= total and variant.past_end != "empty":
            if variant.past_end == "repeat_last":
                start = max(total - 1, 0) // size * size
            elif variant.past_end == "html404":
                raise _HtmlPage(404)
            else:
                http = 200 if variant.past_end == "envelope404" else 404
                raise Failure(404, "No more data", http_status=http)
        records = [list_record(i, listing, variant) for i, listing in rows[start : start + size]]
        count: int | None = {
            "exact": total,
            "missing": None,
            "null": None,
            "low": total * 2 // 3,
            "high": total + 40,
            "page": len(records),
            "zero": 0,
            "minus_one": -1,
        }[variant.virtual_count]
        if variant.list_shape == "unknown":
            return {"Items": records, "TotalCount": count}
        listed: Any = records
        if variant.list_shape == "references":
            # Newtonsoft's PreserveReferencesHandling.All: objects get "$id", arrays "$values".
            numbered = [{"$id": str(n + 3), **r} for n, r in enumerate(records)]
            listed = {"$id": "2", "$values": numbered}
        out: dict[str, Any] = {"List": listed}
        if variant.list_shape == "references":
            out = {"$id": "1", **out}
        if variant.virtual_count != "missing":
            out["VirtualCount"] = count
        return out


# --------------------------------------------------------------------------- HTTP


class _Handler(BaseHTTPRequestHandler):
    """One connection: reads requests, applies the server's rules, writes the variant's replies."""

    protocol_version = "HTTP/1.1"  # keep-alive, as Kestrel does
    server_version = "Kestrel"
    sys_version = ""
    timeout = 10  # an idle kept-alive connection does not hold its thread for ever
    # Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and
    # the client's delayed ACK add some 40 ms to every reply.
    disable_nagle_algorithm = True
    #: Replies written on this connection (``Variant.close_every`` counts them).
    _replies = 0

    @property
    def app(self) -> ForeignServer:
        return cast(ForeignServer, self.server.app)  # type: ignore[attr-defined]

    def setup(self) -> None:
        """Count the connection."""
        super().setup()
        with self.app._lock:
            self.app.connections += 1

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: pytest shows what matters."""

    def do_GET(self) -> None:
        """GET (ModelList)."""
        self._serve("GET")

    def do_POST(self) -> None:
        """POST (every other operation)."""
        self._serve("POST")

    # ------------------------------------------------------------------ one request

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self, method: str) -> None:
        raw = self._read_body()
        app = self.app
        variant = app.variant
        route = ROUTES.get(urlsplit(self.path).path.rstrip("/").lower())
        operation = route[1] if route else "unknown"
        # Logged just before the first byte of the reply goes out (see _log): a test reading
        # server.seen after its call returned must find the request there.
        self._seen = Seen(operation, None, 0)
        self._logged = False
        try:
            try:
                if route is None:
                    raise Failure(404, f"No route for {self.path}")
                if route[0] != method:
                    raise Failure(405, f"{method} is not allowed here")
                self._seen.body = self._json(raw, method)
                app.spend()
                # IIS or a proxy answers before the application sees the request.
                page = app.take_html_page(operation, variant)
                if page is not None:
                    raise _HtmlPage(page)
                workspace = app.authorize(operation, self.headers)
                app.take_throttle(operation, variant)
                self._fault(app.take_fault(operation, variant, committed=False), variant)
                result = app.handle(operation, self._seen.body, workspace)
                self._fault(app.take_fault(operation, variant, committed=True), variant)
            except Failure as failure:
                self._send_failure(operation, failure, variant)
                return
            except _HtmlPage as html:
                self._write(html.status, HTML_PAGES[html.status], "text/html", variant, raw=True)
                return
            if isinstance(result, StreamReply):
                self._send_stream(result, variant)
            else:
                self._send_data(operation, result, variant)
        except _Dropped:
            pass  # logged by _drop or _write
        finally:
            self._log(0)  # only if nothing was logged (an unexpected error): status 0
            self._replies += 1
            if variant.close_every and self._replies % variant.close_every == 0:
                # Announced in the reply (Connection: close), or, silently, not.
                self.close_connection = True

    def _log(self, status: int) -> None:
        if not self._logged:
            self._logged = True
            self._seen.status = status
            with self.app._lock:
                self.app.seen.append(self._seen)

    def _json(self, raw: bytes, method: str) -> dict[str, Any]:
        if method == "GET" and not raw.strip():
            return {}  # ModelList: with or without a body
        content_type = self.headers.get("Content-Type", "")
        if method == "POST" and not content_type.lower().startswith("application/json"):
            raise Failure(415, "Content-Type must be application/json")
        try:
            body = json.loads(raw.removeprefix(BOM).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            bad = {"$": ["The JSON value is invalid."]}
            raise Failure(400, "The request body is not valid JSON", fields=bad) from None
        if not isinstance(body, dict):
            raise Failure(400, "The request body must be a JSON object", fields={"$": ["object"]})
        return body

    def _fault(self, kind: str | None, variant: Variant) -> None:
        if kind is None:
            return
        if kind == "drop":
            self._drop()
        if kind == "502":
            page = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
            self._write(502, page, "text/html", variant, raw=True)
            raise _Dropped  # the proxy's page went out; nothing else to send
        raise Failure(500, "An unexpected error occurred. TraceId: " + uuid.uuid4().hex)

    def _drop(self) -> None:
        # The write may have happened; the client hears nothing: the connection just closes.
        self._log(0)
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
        raise _Dropped

    # ------------------------------------------------------------------ replies

    def _abp_envelope(self, data: Any, failure: Failure | None) -> dict[str, Any]:
        """ABP's ``AjaxResponse``: camelCase, ``result`` for ``Data``, ``error`` for failures."""
        envelope: dict[str, Any] = {
            "result": recase(data) if failure is None else None,
            "targetUrl": None,
            "success": failure is None,
            "error": None,
            "unAuthorizedRequest": failure is not None and failure.status in (401, 403),
            "__abp": True,
        }
        if failure is None:
            return envelope
        error: dict[str, Any] = {"code": 0, "message": failure.message, "details": None}
        error["validationErrors"] = None
        if failure.fields:
            # ABP's AbpValidationException: a fixed message, the problems in details and
            # validationErrors.
            texts = [(name, text) for name, found in failure.fields.items() for text in found]
            error["message"] = "Your request is not valid!"
            error["details"] = "The following errors were detected during validation.\r\n" + (
                "".join(f" - {text}\r\n" for _, text in texts)
            )
            error["validationErrors"] = [
                {"message": text, "members": [dotnet_camel(name)]} for name, text in texts
            ]
        envelope["error"] = error
        return envelope

    def _envelope(
        self, operation: str, data: Any, success: bool, code: int, message: str, variant: Variant
    ) -> dict[str, Any]:
        envelope: dict[str, Any] = {
            "Data": data,
            "Version": VERSION,
            "Success": success,
            "Code": str(code) if variant.code_text else code,
            "Message": None if success and variant.null_message else message,
        }
        if success:  # a failure keeps its Code and Message, or it could not be told
            for name in variant.omit_fields:
                envelope.pop(name, None)
        if variant.extra_fields:
            envelope["traceId"] = f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-00"
            envelope["errors"] = None
        return recase(envelope) if variant.camel_for(operation) else envelope

    def _shape(self, operation: str, result: Any, variant: Variant) -> Any:
        """``Data`` in the variant's shape (the contract's by default)."""
        if operation == GET_SESSION:
            return {
                "object": {"SessionID": result},
                "sessionId": {"sessionId": result},
                "bare": result,
                "bare_text": str(result),
                "unknown": {"Token": uuid.uuid4().hex, "ExpiresIn": 3600},
            }[variant.session_shape]
        if operation == DELETE:
            return result if variant.delete_bare else {"SuccessCount": result}
        if operation == CREATE and variant.create_text:
            return str(result)
        return result

    def _send_data(self, operation: str, result: Any, variant: Variant) -> int:
        data = self._shape(operation, result, variant)
        if variant.abp_envelope:
            envelope = self._abp_envelope(data, None)
        else:
            envelope = self._envelope(operation, data, True, 200, "", variant)
        return self._write(200, json.dumps(envelope).encode(), None, variant)

    def _send_failure(self, operation: str, failure: Failure, variant: Variant) -> int:
        headers = {"Retry-After": failure.retry_after} if failure.retry_after else {}
        headers.update(failure.headers)
        if failure.fields and failure.status == 400 and variant.problem_details:
            # ASP.NET's automatic 400: ValidationProblemDetails, no envelope.
            problem = {
                "type": "https://tools.ietf.org/html/rfc9110#section-15.5.1",
                "title": "One or more validation errors occurred.",
                "status": 400,
                "errors": failure.fields,
                "traceId": f"00-{uuid.uuid4().hex}-{uuid.uuid4().hex[:16]}-00",
            }
            body = json.dumps(problem).encode()
            return self._write(400, body, "application/problem+json; charset=utf-8", variant)
        if variant.abp_envelope:
            envelope = self._abp_envelope(None, failure)
        else:
            envelope = self._envelope(
                operation, None, False, failure.status, failure.message, variant
            )
        status = failure.http_status or failure.status
        if variant.http200_failures and status < 500:
            status = 200
        return self._write(status, json.dumps(envelope).encode(), None, variant, headers)

    def _write(
        self,
        status: int,
        body: bytes,
        content_type: str | None,
        variant: Variant,
        headers: dict[str, str] | None = None,
        *,
        raw: bool = False,
    ) -> int:
        if not raw and variant.bom:
            body = BOM + body
        all_headers = {"Content-Type": content_type or variant.content_type, **(headers or {})}
        encodings = []
        if not raw and variant.gzip:
            body = gzip.compress(body)
            encodings.append("gzip")
        if not raw and variant.deflate is not None:
            # zlib-wrapped is what "deflate" means; raw (no zlib header) is what some send.
            packer = zlib.compressobj(wbits=zlib.MAX_WBITS if variant.deflate == "zlib" else -15)
            body = packer.compress(body) + packer.flush()
            encodings.append("deflate")
        if encodings:
            all_headers["Content-Encoding"] = ", ".join(encodings)
        self._log(status)
        self._start(status, variant)
        for name, value in all_headers.items():
            self.send_header(name, value)
        if not variant.close_delimited:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        return status

    def _start(self, status: int, variant: Variant) -> None:
        """The status line; for ``close_delimited`` an HTTP/1.0 one, and the connection ends
        with the body (``Connection: close`` makes the handler close it)."""
        if variant.close_delimited:
            self.protocol_version = "HTTP/1.0"  # this connection only: it ends with the reply
            self.send_response(status)
            self.send_header("Connection", "close")
        else:
            self.send_response(status)
            last = variant.close_every and (self._replies + 1) % variant.close_every == 0
            if last and not variant.close_silently:
                self.send_header("Connection", "close")  # the request limit, announced

    # ------------------------------------------------------------------ streams

    def _stream_objects(self, reply: StreamReply, variant: Variant) -> list[dict[str, Any]]:
        fragments: list[dict[str, Any]] = [{"content": piece} for piece in reply.pieces]
        values = (reply.question_id, reply.answer_id, reply.answer, reply.total_tokens)
        final: dict[str, Any] | None = dict(
            zip(("QuestionID", "AnswerID", "Answer", "TotalToken"), values, strict=True)
        )
        if variant.final == "task_completed":
            final = {"TaskCompleted": True, **(final or {})}
        elif variant.final == "lower":
            final = {key.lower(): value for key, value in (final or {}).items()}
        elif variant.final == "none":
            final = None
        failure = {
            "Data": None,
            "Version": VERSION,
            "Success": False,
            "Code": variant.stream_failure_code,
            "Message": "The AI model is overloaded, try again later",
        }
        if variant.stream_failure == "before":
            objects = [failure]
        elif variant.stream_failure == "after":
            objects = [*fragments[:2], failure]
        else:
            objects = fragments + ([final] if final is not None else [])
        return [recase(item) for item in objects] if variant.camel_for(CLIENT_ASK) else objects

    def _frames(self, objects: list[dict[str, Any]], variant: Variant) -> Iterator[bytes]:
        # A lone half of a surrogate pair has no UTF-8 form: it can only go out escaped.
        ascii_only = variant.stream_ascii or variant.fragment_units > 0
        texts = [json.dumps(item, ensure_ascii=ascii_only) for item in objects]
        if variant.framing == "ndjson":
            yield from (f"{text}\n".encode() for text in texts)
        elif variant.framing == "concatenated":
            yield from (text.encode() for text in texts)
        elif variant.framing == "json_array":
            # ASP.NET Core writing an IAsyncEnumerable<T>: one JSON array, items as they come.
            yield b"["
            yield from (("," if n else "").encode() + t.encode() for n, t in enumerate(texts))
            yield b"]"
        else:
            end = "\r\n" if variant.sse_crlf else "\n"
            if variant.sse_extras:
                yield f": connected{end}{end}".encode()
            for number, text in enumerate(texts, 1):
                head = f"event: message{end}id: {number}{end}" if variant.sse_extras else ""
                yield f"{head}data: {text}{end}{end}".encode()
            if variant.sse_extras:
                yield f"data: [DONE]{end}{end}".encode()

    def _chunk(self, data: bytes, variant: Variant) -> None:
        if variant.close_delimited:
            self.wfile.write(data)  # no framing: the body ends when the connection does
        else:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send_stream(self, reply: StreamReply, variant: Variant) -> int:
        objects = self._stream_objects(reply, variant)
        frames = list(self._frames(objects, variant))
        if variant.stream_bom:
            frames.insert(0, BOM)
        if variant.stream_chunk > 0:
            whole = b"".join(frames)
            step = variant.stream_chunk
            frames = [whole[i : i + step] for i in range(0, len(whole), step)]
        default = "application/json; charset=utf-8" if variant.framing == "json_array" else None
        content_type = variant.stream_content_type or default or "text/event-stream"
        self._log(200)
        self._start(200, variant)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        if not variant.close_delimited:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        cut = len(frames) // 2 if variant.stream_cut else None
        for number, frame in enumerate(frames):
            if number == cut:
                self._drop()  # mid-body: the chunked body never ends
            if frame:
                self._chunk(frame, variant)
        if not variant.close_delimited:
            self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
        return 200
