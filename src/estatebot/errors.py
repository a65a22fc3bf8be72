"""The exception tree of estatebot.

Every error the toolkit raises derives from :class:`EstatebotError`::

    EstatebotError
    ├── ConfigurationError          a missing base URL or credential (names the variable to set)
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


class ConfigurationError(EstatebotError):
    """The client lacks a setting (base URL, API key, session key) that an operation needs."""


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

    ``retry_after`` is the wait in seconds the service asked for (``Retry-After``), if any: a 429
    carries it, and so may a 503.
    """

    def __init__(
        self,
        message: str,
        *,
        operation: str,
        code: int | None = None,
        status_code: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.message = message
        self.operation = operation
        self.code = code
        self.status_code = status_code
        self.retry_after = retry_after
        super().__init__(self._describe())

    def _describe(self) -> str:
        parts = [f"{self.operation} failed"]
        if self.status_code is not None:
            parts.append(f"HTTP {self.status_code}")
        if self.code is not None and self.code != self.status_code:
            parts.append(f"Code {self.code}")
        head = ", ".join(parts)
        return f"{head}: {self.message}" if self.message else head


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


class PullError(EstatebotError):
    """A page of a listing pull failed after the client's retries; names the page and why."""

    def __init__(self, page: int, cause: EstatebotError) -> None:
        self.page = page
        self.cause = cause
        super().__init__(
            f"pulling listings failed at page {page}: {cause} "
            "(pass on_error='skip' to keep the pages that did arrive)"
        )


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
