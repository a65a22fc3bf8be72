"""The exception tree of estatebot.

Every error the toolkit raises derives from :class:`EstatebotError`::

    EstatebotError
    ├── ConfigurationError          a missing or impossible setting (names the argument or variable)
    ├── RequestValidationError      a call that breaks the contract's rules; nothing was sent
    ├── APIError                    the service answered with a failure (HTTP status or envelope)
    │   ├── InvalidRequestError     400: the service rejected the body
    │   ├── AuthenticationError     401: missing or wrong credential
    │   ├── NotFoundError           404: unknown chatbot, session or listing
    │   ├── ConflictError           409: a listing with that MLS number or URL already exists
    │   ├── RateLimitError          429: with ``retry_after`` seconds when the service said
    │   └── ServerError             5xx
    ├── APIConnectionError          the transport failed (refused, reset, dropped mid-stream)
    │   └── APITimeoutError         the request or the stream timed out, or ran past its deadline
    ├── PullError                   a page of a pull failed after retries (names the page)
    └── LocatedError                a data-layer error naming its row, column and value
        ├── SheetError              a spreadsheet cannot be read as listings
        │   └── SheetNotFoundError  the workbook has no worksheet by the name or number asked
        └── PlanError               a plan cannot be made or applied

and one warning, :class:`PullWarning` (a ``UserWarning``): the listings a pull read may not be all
of them.

No exception text ever carries a credential: messages are built from the operation name, the
server's ``Code`` and ``Message`` and our own words only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class EstatebotError(Exception):
    """Base class of every error raised by estatebot."""


class ConfigurationError(EstatebotError, ValueError):
    """A setting is missing (base URL, API key, session key) or impossible (a timeout, deadline or
    wait that is not a positive, finite number of seconds): the message names the argument or
    the environment variable. Nothing was sent."""


@dataclass(frozen=True)
class FieldProblem:
    """One bad field of a request: where it is, what is wrong, and the value given."""

    field: str
    message: str
    value: Any = None

    def __str__(self) -> str:
        return f"{self.field}: {self.message} (got {self.value!r})"


class RequestValidationError(EstatebotError, ValueError):
    """A call breaks the contract's rules; it was checked before sending and nothing was sent."""

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

    ``retry_after`` is the wait in seconds the service asked for (``Retry-After``, else
    ``RateLimit-Reset`` or ``X-RateLimit-Reset``), if any: a 429 carries it, and so may a 503.
    ``message`` is the service's own text; ``hint``, when the cause is known, says what to do
    (check the serial, the key), and ends the exception's text.
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
        """The failure's status: the HTTP status when it is one, else the envelope's ``Code``
        (``Success: false`` under HTTP 200)."""
        if self.status_code is not None and self.status_code >= 400:
            return self.status_code
        return self.code


class InvalidRequestError(APIError):
    """400: the service rejected the request body."""


class AuthenticationError(APIError):
    """401: the credential is missing or wrong."""


class NotFoundError(APIError):
    """404: the chatbot, session or listing is unknown (or not visible to this credential)."""


class ConflictError(APIError):
    """409: the resource already exists (for example a listing with the same MLS number)."""


class RateLimitError(APIError):
    """429: too many messages; ``retry_after`` is the wait in seconds the service asked for."""


class ServerError(APIError):
    """5xx: the service failed."""


class APIConnectionError(EstatebotError):
    """The transport failed: connection refused or reset, or dropped in the middle of a stream.

    ``sent`` is False when the request certainly never left (the connection could not be made):
    then the service did nothing. True means it may have been carried out, unanswered.
    """

    def __init__(self, message: str, *, operation: str, sent: bool = True) -> None:
        self.operation = operation
        self.sent = sent
        super().__init__(f"{operation}: {message}")


class APITimeoutError(APIConnectionError):
    """The request (or the wait for the next stream fragment) timed out.

    ``deadline`` is set (in seconds) when the client's overall deadline for the reply ran out,
    rather than one wait for the next bytes: such a failure is not retried.
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
    """The exception class for an HTTP status or envelope ``Code``."""
    if status in _STATUS_ERRORS:
        return _STATUS_ERRORS[status]
    if status >= 500:
        return ServerError
    return APIError


def is_passing(error: BaseException) -> bool:
    """Whether ``error`` is a cause that may pass if the request is made again later: the
    transport (a connection, a timeout), a 5xx, 408 or 429. A 400, 401/403 or 404 will not."""
    if isinstance(error, APIConnectionError):
        return True
    if isinstance(error, APIError):
        kind = error.kind
        return kind is not None and (kind in (408, 429) or kind >= 500)
    return False


class PullError(EstatebotError):
    """A page of a listing pull failed after the client's retries; names the page and why.

    The message ends with the paging hint only where it helps: ``on_error='skip'`` keeps the
    pages that did arrive when a page after the first failed for a passing cause (see
    :func:`is_passing`); page 1 failing so can only be tried again; any other cause (an unknown
    chatbot, a refused key, a rejected request) carries its own hint and no paging hint.
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
    """A data-layer error that names the row, column and value it is about, when known."""

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
    """A spreadsheet cannot be read as listings."""


class SheetNotFoundError(SheetError):
    """The workbook has no worksheet by the name or number asked for.

    ``requested`` is what was asked for: a worksheet's name (a ``str``) or its 0-based number
    (an ``int``); ``sheets`` the names of the worksheets the workbook has, in order. A caller
    that tries another way of finding the sheet (the command line's ``--sheet 2``: a name
    first, then a number) catches this class rather than reading the message.
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
    """A plan cannot be made or applied."""


class PullWarning(UserWarning):
    """The listings read may not be all of them: pages skipped, or the listings moved mid-pull."""
