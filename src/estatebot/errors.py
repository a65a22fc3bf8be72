"""The exception tree of estatebot.

Every error the toolkit raises derives from `EstatebotError`:

```text
EstatebotError
├── ConfigurationError          a missing or impossible setting (names the argument or variable)
├── RequestValidationError      a call that breaks the contract's rules; nothing was sent
├── APIError                    the service answered with a failure (HTTP status or envelope)
│   ├── InvalidRequestError     400: the service rejected the body
│   ├── AuthenticationError     401: missing or wrong credential
│   ├── NotFoundError           404: unknown chatbot, session or listing
│   ├── ConflictError           409: a listing with that MLS number or URL already exists
│   ├── RateLimitError          429: with retry_after seconds when the service said
│   └── ServerError             5xx
├── APIConnectionError          the transport failed (refused, reset, dropped mid-stream)
│   └── APITimeoutError         the request or the stream timed out, or ran past its deadline
├── PullError                   a page of a pull failed after retries (names the page)
├── FleetRunError               a fleet run's folder cannot be used (missing, damaged, unreachable)
└── LocatedError                a data-layer error naming its row, column and value
    ├── SheetError              a spreadsheet cannot be read as listings
    │   ├── SheetNotFoundError  the workbook has no worksheet by the name or number asked
    │   ├── ManifestError       a fleet manifest cannot be used at all (names the file)
    │   └── FilterError         a manifest's `where` filter cannot be read or names no column
    └── PlanError               a plan cannot be made or applied
```

and one warning, `PullWarning` (a `UserWarning`): the listings a pull read may not be all
of them.

No exception text ever carries a credential: messages are built from the operation name, the
server's `Code` and `Message` and our own words only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class EstatebotError(Exception):
    """Base class of every error raised by estatebot.

    Catch it to handle any failure of the toolkit at once; each subclass says what went wrong.
    """


class ConfigurationError(EstatebotError, ValueError):
    """A setting is missing (base URL, API key, session key) or impossible (a timeout, deadline or
    wait that is not a positive, finite number of seconds): the message names the argument or
    the environment variable. Nothing was sent.

    Raised when a client is made with an impossible setting (a key a header cannot carry, a base
    URL that is not http(s), a limit that is NaN, infinite or negative), and when a call needs a
    key the client lacks or is given an impossible `timeout=`. It is also a `ValueError`.
    """


@dataclass(frozen=True)
class FieldProblem:
    """One bad field of a request: where it is, what is wrong, and the value given.

    Attributes:
        field: The field's wire name (a dotted path inside a nested value, e.g. `Keys.0`).
        message: What is wrong with it.
        value: The value given, or None when there was none (a missing field).
    """

    field: str
    message: str
    value: Any = None

    def __str__(self) -> str:
        return f"{self.field}: {self.message} (got {self.value!r})"


class RequestValidationError(EstatebotError, ValueError):
    """A call breaks the contract's rules; it was checked before sending and nothing was sent.

    Raised by every client call whose arguments the request models refuse (a required field
    missing, a value out of range, an unknown setting name, a chat message's file rules). It is
    also a `ValueError`; its text names each bad field and the value given.

    Attributes:
        operation: The name of the operation refused (`Edit`, `RealEstateCreate`, ...).
        problems: Each bad field, as a `FieldProblem`, in the order they were found.
        fields: The names of the bad fields, in the order they were found.
    """

    def __init__(self, operation: str, problems: Sequence[FieldProblem]) -> None:
        self.operation = operation
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{operation}: invalid request, nothing was sent:\n{lines}")

    @property
    def fields(self) -> list[str]:
        """The names of the bad fields, in the order they were found."""
        return [p.field for p in self.problems]


class APIError(EstatebotError):
    """The service reported a failure, through the HTTP status or the envelope.

    Raised when a reply (after any retries) is a failure: an HTTP error status, or
    `Success: false` under HTTP 200. Its subclass goes by the HTTP status, else the envelope's
    `Code` (`InvalidRequestError`, `AuthenticationError`, `NotFoundError`, `ConflictError`,
    `RateLimitError`, `ServerError`); a status none of them covers raises `APIError` itself.
    `APIError` itself is also raised for a reply the client cannot use: a redirect (never
    followed), a body that is not a JSON envelope, a `Data` of an unexpected shape, a body
    larger than the client's `max_reply_bytes` or one that cannot be decoded, and a malformed
    stream.

    `retry_after` is the wait in seconds the service asked for (`Retry-After`, else
    `RateLimit-Reset` or `X-RateLimit-Reset`), if any: a 429 carries it, and so may a 503.
    `message` is the service's own text; `hint`, when the cause is known, says what to do
    (check the serial, the key), and ends the exception's text.

    Attributes:
        message: The service's own text (or the client's words for a reply it cannot use).
        operation: The name of the operation that failed (`ClientAsk`, `RealEstateList`, ...).
        code: The envelope's `Code`, or None when the reply had none.
        status_code: The HTTP status of the reply, or None when there was none to read.
        retry_after: The wait in seconds the service asked for, or None.
        hint: What to do about it, when the cause is known, else None.
        kind: The failure's status: the HTTP status when it is an error, else the `Code`.
    """

    def __init__(
        self,
        message: str,
        *,
        operation: str,
        code: int | None = None,
        status_code: int | None = None,
        retry_after: float | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.operation = operation
        self.code = code
        self.status_code = status_code
        self.retry_after = retry_after
        self.hint = hint
        super().__init__(self._describe())

    def _describe(self) -> str:
        parts = [f"{self.operation} failed"]
        if self.status_code is not None:
            parts.append(f"HTTP {self.status_code}")
        if self.code is not None and self.code != self.status_code:
            parts.append(f"Code {self.code}")
        head = ", ".join(parts)
        text = f"{head}: {self.message}" if self.message else head
        if not self.hint:
            return text
        # A hint in brackets reads as an aside to the message; a sentence follows a semicolon.
        return f"{text} {self.hint}" if self.hint.startswith("(") else f"{text}; {self.hint}"

    @property
    def kind(self) -> int | None:
        """The failure's status: the HTTP status when it is one, else the envelope's `Code`
        (`Success: false` under HTTP 200)."""
        if self.status_code is not None and self.status_code >= 400:
            return self.status_code
        return self.code


class InvalidRequestError(APIError):
    """400: the service rejected the request body.

    Attributes are those of `APIError`.
    """


class AuthenticationError(APIError):
    """401: the credential is missing or wrong.

    Raised for HTTP 401 and 403 (or that `Code`); its `hint` says which key was refused, and
    which key the operation also takes that the client lacks. Attributes are those of
    `APIError`.
    """


class NotFoundError(APIError):
    """404: the chatbot, session or listing is unknown (or not visible to this credential).

    To a call that names a chatbot, its `hint` says to check the serial. Attributes are those
    of `APIError`.
    """


class ConflictError(APIError):
    """409: the resource already exists (for example a listing with the same MLS number).

    Attributes are those of `APIError`.
    """


class RateLimitError(APIError):
    """429: too many messages; `retry_after` is the wait in seconds the service asked for.

    Raised at once for a chat message (its 429 is the chatbot's rate limit, never retried);
    for any other operation, once the retries are spent or when the service asks for a longer
    wait than the client's `max_retry_after`. Attributes are those of `APIError`.
    """


class ServerError(APIError):
    """5xx: the service failed.

    Raised once the retries are spent (a create or a chat message is not sent again after a
    reply other than 503). Attributes are those of `APIError`.
    """


class APIConnectionError(EstatebotError):
    """The transport failed: connection refused or reset, or dropped in the middle of a stream.

    Raised once the retries are spent, or at once where sending again would not be safe (a
    create or a chat message that may have been carried out). A host that cannot be reached is
    named, with the setting that chose it.

    `sent` is False when the request certainly never left (the connection could not be made):
    then the service did nothing. True means it may have been carried out, unanswered.

    Attributes:
        operation: The name of the operation whose request failed.
        sent: Whether the request may have reached the service (False: certainly not).
    """

    def __init__(self, message: str, *, operation: str, sent: bool = True) -> None:
        self.operation = operation
        self.sent = sent
        super().__init__(f"{operation}: {message}")


class APITimeoutError(APIConnectionError):
    """The request (or the wait for the next stream fragment) timed out.

    Raised when a wait longer than the client's (or the call's) `timeout` passed, once the
    retries are spent, and at once when an attempt ran past the client's `deadline` or a
    streamed answer past its `stream_deadline`.

    `deadline` is set (in seconds) when the client's overall deadline for the reply ran out,
    rather than one wait for the next bytes: such a failure is not retried.

    Attributes:
        operation: The name of the operation whose request timed out.
        sent: Whether the request may have reached the service (False: certainly not).
        deadline: The deadline in seconds that ran out, or None for a wait that timed out.
    """

    def __init__(
        self, message: str, *, operation: str, sent: bool = True, deadline: float | None = None
    ) -> None:
        self.deadline = deadline
        super().__init__(message, operation=operation, sent=sent)


_STATUS_ERRORS: dict[int, type[APIError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: AuthenticationError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitError,
}


def error_class_for(status: int) -> type[APIError]:
    """The exception class for an HTTP status or envelope `Code`.

    Args:
        status: An HTTP status or an envelope's `Code`.

    Returns:
        The `APIError` subclass for `status` (403 gives `AuthenticationError`, every 5xx
            `ServerError`), or `APIError` itself for a status none of them covers.
    """
    if status in _STATUS_ERRORS:
        return _STATUS_ERRORS[status]
    if status >= 500:
        return ServerError
    return APIError


def is_passing(error: BaseException) -> bool:
    """Whether `error` is a cause that may pass if the request is made again later: the
    transport (a connection, a timeout), a 5xx, 408 or 429. A 400, 401/403 or 404 will not.

    Args:
        error: The failure to judge.

    Returns:
        True for an `APIConnectionError` or an `APIError` whose `kind` is 408, 429 or 5xx;
            False for anything else.
    """
    if isinstance(error, APIConnectionError):
        return True
    if isinstance(error, APIError):
        kind = error.kind
        return kind is not None and (kind in (408, 429) or kind >= 500)
    return False


class PullError(EstatebotError):
    """A page of a listing pull failed after the client's retries; names the page and why.

    Also raised when a walk over the pages runs past the bound derived from the count and the
    page size (a server inventing listings page after page), saying what the server did.

    The message ends with the paging hint only where it helps: `on_error='skip'` keeps the
    pages that did arrive when a page after the first failed for a passing cause (see
    `is_passing`); page 1 failing so can only be tried again; any other cause (an unknown
    chatbot, a refused key, a rejected request) carries its own hint and no paging hint.

    Attributes:
        page: The number of the page that failed.
        cause: The error that page failed with.
    """

    def __init__(self, page: int, cause: EstatebotError) -> None:
        self.page = page
        self.cause = cause
        message = f"pulling listings failed at page {page}: {cause}"
        hint = _paging_hint(page, cause)
        super().__init__(f"{message} {hint}" if hint else message)


def _paging_hint(page: int, cause: EstatebotError) -> str | None:
    if not is_passing(cause):
        return None
    if page <= 1:  # nothing arrived yet: skipping would keep nothing
        return "(try again when the service answers)"
    return "(pass on_error='skip' to keep the pages that did arrive)"


class LocatedError(EstatebotError, ValueError):
    """A data-layer error that names the row, column and value it is about, when known.

    The base of `SheetError` and `PlanError`; its text ends with where it is, e.g.
    `(row 3, column 'Bedrooms', value 'three')`. It is also a `ValueError`.

    Attributes:
        row: The row it is about (a number or a key), or None.
        column: The column it is about, or None.
        value: The value it is about, or None.
    """

    def __init__(
        self,
        message: str,
        *,
        row: int | str | None = None,
        column: str | None = None,
        value: Any = None,
    ) -> None:
        self.row = row
        self.column = column
        self.value = value
        where = []
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column {column!r}")
        if value is not None:
            where.append(f"value {value!r}")
        super().__init__(f"{message} ({', '.join(where)})" if where else message)


class SheetError(LocatedError):
    """A spreadsheet cannot be read as listings.

    Attributes are those of `LocatedError`.
    """


class SheetNotFoundError(SheetError):
    """The workbook has no worksheet by the name or number asked for.

    `requested` is what was asked for: a worksheet's name (a `str`) or its 0-based number
    (an `int`); `sheets` the names of the worksheets the workbook has, in order. A caller
    that tries another way of finding the sheet (the command line's `--sheet 2`: a name
    first, then a number) catches this class rather than reading the message.

    Attributes:
        requested: The worksheet asked for: its name or its 0-based number.
        sheets: The names of the workbook's worksheets, in order.
        value: The same as `requested` (the value the error is about, as in `LocatedError`).
    """

    def __init__(self, requested: str | int, sheets: Sequence[str]) -> None:
        self.requested = requested
        self.sheets = list(sheets)
        if isinstance(requested, int):
            message = (
                f"the workbook has {len(self.sheets)} sheet(s), no sheet number {requested}: "
                f"{self.sheets}"
            )
        else:
            message = f"no sheet named {requested!r}; sheets: {self.sheets}"
        super().__init__(message, value=requested)

    def __reduce__(self) -> tuple[type[SheetNotFoundError], tuple[str | int, list[str]]]:
        # Pickle (and copy) by the arguments: the default would call the class with the
        # message alone, which this signature does not take.
        return type(self), (self.requested, self.sheets)


class PlanError(LocatedError):
    """A plan cannot be made or applied.

    Attributes are those of `LocatedError`.
    """


class ManifestError(SheetError):
    """A fleet manifest that cannot be used at all: the message names the file and what is
    wrong (missing, unreadable, empty, no serial column, no valid row).

    Attributes:
        issues: The problems found by row, as in `Manifest.issues` (empty when the file could
            not be read; None only when raised without them).
    """

    def __init__(self, message: str, *, issues: Any = None, **where: Any) -> None:
        self.issues = issues
        super().__init__(message, **where)


class FilterError(SheetError):
    """A ``where`` filter that cannot be read, or names a column the sheet does not have.

    Attributes are those of `LocatedError`: `column` is ``"where"``, `value` the filter's text;
    `reason` is the message without them (a manifest issue names the row, column and value in
    columns of its own).
    """

    def __init__(self, reason: str, *, value: str) -> None:
        self.reason = reason
        super().__init__(reason, column="where", value=value)


class FleetRunError(EstatebotError):
    """A fleet run's folder that cannot be used: it is no fleet run, its record is damaged,
    its manifest changed since the run began, or a worker cannot reach it. Nothing was sent."""


class PullWarning(UserWarning):
    """The listings read may not be all of them: pages skipped, or the listings moved mid-pull.

    Issued (with `warnings.warn`, as a `UserWarning`) at the end of a pull or a walk over the
    pages when a page could not be fetched (and was skipped), the count changed between pages,
    or fewer listings arrived than counted.
    """
