"""Real estate listings: `client.listings.create`, `update`, `list_page`, `iter_pages`,
`delete`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from estatebot import errors
from estatebot.api._base import (
    CREATE,
    DELETE,
    LIST,
    UPDATE,
    AsyncResource,
    Call,
    SyncResource,
    TimeoutArg,
    as_wire_dict,
    parse_int,
    parse_new_id,
    validate,
)
from estatebot.api._retry import may_have_run
from estatebot.api.models import (
    DeleteRequest,
    DeleteResult,
    KeyType,
    ListingInput,
    ListingPage,
    ListingUpdate,
    ListRequest,
    SaleType,
    to_wire,
)
from estatebot.api.paging import PageResult, PageWalk, refusal
from estatebot.errors import APIConnectionError, APIError, EstatebotError

ListingArg = BaseModel | Mapping[str, Any]

# The body field a key is derived from, for the key types that have one (NewOaks IDs do not).
_KEY_SOURCE = {KeyType.MLS_NUMBER.value: "MLSNumber", KeyType.URL.value: "Url"}


def create_call(listing: ListingArg, timeout: TimeoutArg) -> Call[int]:
    """The RealEstateCreate call; its `Data` is the new listing's ID.

    Args:
        listing: A `ListingInput` or a mapping of its fields by their wire names.
        timeout: The call's timeout; None uses the client's.

    Returns:
        The call, ready to send; its result is the new listing's ID.

    Raises:
        RequestValidationError: A field is missing or breaks the contract's rules.
    """
    body = validate(CREATE, ListingInput, as_wire_dict(listing))
    return Call(CREATE, to_wire(body), parse_new_id, timeout, serial=body.SerialNumber)


def update_body(
    listing: ListingArg, key: str | None, key_type: KeyType | str | None
) -> dict[str, Any]:
    """The Update body with its `Key` and `KeyType` settled.

    An explicit `key`/`key_type` wins over the body's. Without a key, it is the body's
    `Key` (unless `key_type` changes the type), else derived from the body: `MLSNumber`
    for MLSNumber (the default type), `Url` for URL. NewOaks needs an explicit key.

    Args:
        listing: A listing model or a mapping of its fields by their wire names.
        key: The key that finds the listing, or None to take it from the body.
        key_type: How the key is read, or None for the body's `KeyType`, else MLSNumber.

    Returns:
        The body by its wire names, with `Key` and `KeyType` set.

    Raises:
        RequestValidationError: The key type is NewOaks and no key was given.
    """
    data = as_wire_dict(listing)
    body_type = data.get("KeyType")
    kind = str(key_type or body_type or KeyType.MLS_NUMBER)
    if key is None and (key_type is None or str(key_type) == str(body_type)):
        key = data.get("Key")
    if key is None and kind in _KEY_SOURCE:
        key = data.get(_KEY_SOURCE[kind])
    if key is None and kind == KeyType.NEW_OAKS:
        problem = errors.FieldProblem("Key", "a NewOaks key (the listing ID) must be given as key=")
        raise errors.RequestValidationError(UPDATE.name, [problem])
    return {**data, "Key": key, "KeyType": kind}


def update_call(
    listing: ListingArg, key: str | None, key_type: KeyType | str | None, timeout: TimeoutArg
) -> Call[int]:
    """The RealEstateUpdate call; its `Data` is the number of listings updated (0 or 1).

    Args:
        listing: A listing model or a mapping of its fields by their wire names.
        key: The key that finds the listing, or None to take it from the body.
        key_type: How the key is read, or None for the body's `KeyType`, else MLSNumber.
        timeout: The call's timeout; None uses the client's.

    Returns:
        The call, ready to send; its result is the number of listings updated.

    Raises:
        RequestValidationError: A field is missing or breaks the contract's rules, or a
            NewOaks key was not given.
    """
    body = validate(UPDATE, ListingUpdate, update_body(listing, key, key_type))
    return Call(UPDATE, to_wire(body), parse_int, timeout, serial=body.SerialNumber)


def list_call(
    serial: str,
    city: str | None,
    sale_type: SaleType | str | None,
    mls_number: str | None,
    page: int,
    page_size: int,
    timeout: TimeoutArg,
) -> Call[ListingPage]:
    """The RealEstateList call for one page.

    A 404 to page 1 is an unknown chatbot; past it, the service may be saying there are no more
    pages (see `estatebot.api.paging`), so only page 1's error says to check the serial.

    Args:
        serial: The chatbot's serial number.
        city: Only listings in this city, or None.
        sale_type: Only listings for sale or for rent, or None.
        mls_number: Only the listing with this MLS number, or None.
        page: The page number.
        page_size: The listings per page.
        timeout: The call's timeout; None uses the client's.

    Returns:
        The call, ready to send; its result is the `ListingPage`.

    Raises:
        RequestValidationError: `serial` is empty, `sale_type` is unknown, `page` is below 0
            or `page_size` below 1.
    """
    fields = {"SerialNumber": serial, "CityName": city, "SaleType": sale_type}
    paging = {"MLSNumber": mls_number, "PageNumber": page, "PageSize": page_size}
    body = validate(LIST, ListRequest, {**fields, **paging})
    named = serial if page <= 1 else None
    return Call(LIST, to_wire(body), ListingPage.model_validate, timeout, serial=named)


def delete_call(
    serial: str, keys: Iterable[str] | str, key_type: KeyType | str, timeout: TimeoutArg
) -> Call[int]:
    """The RealEstateDelete call; its result is the number of listings deleted (see
    `delete_count`).

    Args:
        serial: The chatbot's serial number.
        keys: One key, or an iterable of them.
        key_type: How the keys are read.
        timeout: The call's timeout; None uses the client's.

    Returns:
        The call, ready to send, with `delete_count` as its check after failed attempts.

    Raises:
        RequestValidationError: `serial` is empty, no key or an empty key is given, or
            `key_type` is unknown.
    """
    key_list = [keys] if isinstance(keys, str) else list(keys)
    data = {"SerialNumber": serial, "Keys": key_list, "KeyType": key_type}
    body = validate(DELETE, DeleteRequest, data)
    asked = len(set(body.Keys))

    def count(answered: int, failures: Sequence[EstatebotError]) -> int:
        return delete_count(answered, failures, asked)

    return Call(DELETE, to_wire(body), _success_count, timeout, serial=serial, after_retries=count)


def _success_count(data: Any) -> int:
    return DeleteResult.model_validate(data).success_count


def delete_count(answered: int, failures: Sequence[EstatebotError], asked: int) -> int:
    """The number a delete of `asked` keys deleted, from the service's answer (`answered`)
    to the attempt it answered, after the failed attempts before it (`failures`).

    Counts are never added up across attempts: a failed attempt's count is unknown. After
    attempts the service did not carry out (never sent, 429, 503), the answer is the whole
    count. After one it may have carried out unanswered (a dropped reply, a 500), the listings
    it deleted are gone from the next attempt's count: the answer is the whole count only when
    it counts every key asked; otherwise how many were deleted is unknown, and that is raised
    (as the failure of the attempt that may have done it) rather than a count that is too low.

    Args:
        answered: The count in the service's answer to the attempt it answered.
        failures: The failures of the attempts before it, in order.
        asked: How many different keys the delete asked for.

    Returns:
        The number of listings the delete deleted (`answered`, when it can be trusted).

    Raises:
        APIError: The last attempt that may have deleted listings unanswered failed with one
            (raised again, of its class, with the note that the count is unknown).
        APIConnectionError: That attempt failed in the transport (raised again, of its class,
            with the same note).
    """
    unsure = [failure for failure in failures if may_have_run(failure)]
    if not unsure or answered >= asked:
        return answered
    lost = unsure[-1]
    note = (
        f"; sent again, the service answered {answered} of the {asked} listings deleted, but "
        "the attempt whose reply was lost may have deleted others: how many this delete "
        "deleted is unknown (look the keys up)"
    )
    if isinstance(lost, APIError):
        raise type(lost)(
            lost.message + note,
            operation=lost.operation,
            code=lost.code,
            status_code=lost.status_code,
            hint=lost.hint,
        ) from lost
    reason = str(lost).removeprefix(f"{DELETE.name}: ")
    kind = type(lost) if isinstance(lost, APIConnectionError) else APIConnectionError
    raise kind(reason + note, operation=DELETE.name, sent=True) from lost


class Listings(SyncResource):
    """A chatbot's real estate listings."""

    def create(self, listing: ListingArg, *, timeout: TimeoutArg = None) -> int:
        """Add a listing (a `ListingInput` or a mapping of its fields); returns its ID.

        Never sent again once the request may have been carried out: a second create could
        add the listing twice. A 429 or 503 did nothing, so those are waited out.

        Args:
            listing: The listing: a `ListingInput` or a mapping of its fields by their wire
                names (a model is read by its wire names, unset fields left out).
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The new listing's ID.

        Raises:
            RequestValidationError: A field is missing or breaks the contract's rules (each
                named with the value given); nothing was sent.
            ConfigurationError: The client has neither an API key nor a session key, or
                `timeout` is not a positive, finite number; nothing was sent.
            NotFoundError: The service does not know chatbot `SerialNumber` (the error says to
                check the serial).
            ConflictError: A listing with that MLS number or URL already exists (409).
            AuthenticationError: The service refused the keys sent (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        return self._client._request(create_call(listing, timeout))

    def update(
        self,
        listing: ListingArg,
        *,
        key: str | None = None,
        key_type: KeyType | str | None = None,
        timeout: TimeoutArg = None,
    ) -> int:
        """Update the listing found by key (see `update_body`); returns 1, or 0 if none.

        An explicit `key`/`key_type` wins over the body's `Key`/`KeyType`.

        Args:
            listing: The listing's new fields: a `ListingUpdate`, a `ListingInput` or a
                mapping of the fields by their wire names, `SerialNumber` included.
            key: The key that finds the listing; None takes the body's `Key` (unless
                `key_type` changes the type), else derives it from the body: its `MLSNumber`
                for an MLSNumber key, its `Url` for a URL key. A NewOaks key (the listing ID)
                must be given here.
            key_type: How the key is read (a `KeyType` or its name: NewOaks, MLSNumber or URL);
                None takes the body's `KeyType`, else MLSNumber.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The number of listings updated, 1, or 0 when no listing has the key.

        Raises:
            RequestValidationError: A field is missing or breaks the contract's rules, or a
                NewOaks key was not given; nothing was sent.
            ConfigurationError: The client has neither an API key nor a session key, or
                `timeout` is not a positive, finite number; nothing was sent.
            NotFoundError: The service does not know chatbot `SerialNumber` (the error says to
                check the serial).
            AuthenticationError: The service refused the keys sent (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        return self._client._request(update_call(listing, key, key_type, timeout))

    def list_page(
        self,
        serial: str,
        *,
        city: str | None = None,
        sale_type: SaleType | str | None = None,
        mls_number: str | None = None,
        page: int = 1,
        page_size: int = 20,
        timeout: TimeoutArg = None,
    ) -> ListingPage:
        """One page of the chatbot's listings, filtered by city, sale type or MLS number.

        Args:
            serial: The chatbot's serial number.
            city: Only listings in this city; None for every city.
            sale_type: Only listings for sale or for rent (a `SaleType` or its value:
                `for_sale`, `for_rent`); None for both.
            mls_number: Only the listing with this MLS number; None for every listing.
            page: The page number, from 1 (0 is taken too, for a service counting from 0).
            page_size: The listings per page (the service may cap it).
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The page, with its `records` (raw wire dicts, every value as the service sent it)
                and its `virtual_count`, the number of listings matching the filters (None when
                the service did not say).

        Raises:
            RequestValidationError: `serial` is empty, `sale_type` is unknown, `page` is
                below 0 or `page_size` below 1; nothing was sent.
            ConfigurationError: The client has no session key, or `timeout` is not a positive,
                finite number; nothing was sent.
            NotFoundError: Page 1 of a chatbot the service does not know (the error says to
                check the serial), or a page past the end, as some services answer it.
            AuthenticationError: The service refused the session key (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        call = list_call(serial, city, sale_type, mls_number, page, page_size, timeout)
        return self._client._request(call)

    def iter_pages(
        self,
        serial: str,
        *,
        city: str | None = None,
        sale_type: SaleType | str | None = None,
        mls_number: str | None = None,
        page_size: int = 100,
        timeout: TimeoutArg = None,
    ) -> Iterator[ListingPage]:
        """Every page of the listings, in order, one request at a time.

        Paging follows `estatebot.api.paging.Pager`, the same logic as `pull_listings`: a
        server page cap, a missing or wrong `VirtualCount` and a page past the end refused
        with 404 are all survived. A listing seen on an earlier page (rows moving while paging)
        is left out of later ones, and a page left with none is skipped; a page that brings no
        listing not seen before ends the walk (a server that repeats its last page past the
        end). A walk short of the count asks page 0 once, for a server that counts pages from
        0: its listings come out last. Past a bound derived from the count and the page size,
        the walk stops with a `PullError` saying what the server did. A count that changed
        between pages, or fewer listings than counted, is reported by a `PullWarning` at the
        end. Errors are raised as they come.

        Args:
            serial: The chatbot's serial number.
            city: Only listings in this city; None for every city.
            sale_type: Only listings for sale or for rent (a `SaleType` or its value:
                `for_sale`, `for_rent`); None for both.
            mls_number: Only the listing with this MLS number; None for every listing.
            page_size: The listings asked per page (the service may cap it).
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Yields:
            Each page in order, holding only listings not seen on an earlier page.

        Raises:
            PullError: The walk ran past the bound derived from the count and the page size.
            RequestValidationError: `serial` is empty, `sale_type` is unknown, or
                `page_size` is below 1; nothing was sent.
            ConfigurationError: The client has no session key, or `timeout` is not a positive,
                finite number; nothing was sent.
            NotFoundError: The service does not know the chatbot (page 1 refused).
            AuthenticationError: The service refused the session key (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).

        Warns:
            PullWarning: The pages may not hold every listing (the count changed between pages,
                or fewer listings arrived than counted).
        """
        walk = PageWalk(page_size, page_zero=True)
        while (ask := walk.next_page()) is not None:
            try:
                call = list_call(serial, city, sale_type, mls_number, *ask, timeout)
                result: PageResult = self._client._request(call)
            except EstatebotError as error:
                result = refusal(ask[0], error)  # raised unless it may be the end
            if (page := walk.take(result)) is not None:
                yield page
        walk.finish()

    def delete(
        self,
        serial: str,
        keys: Iterable[str] | str,
        *,
        key_type: KeyType | str = KeyType.MLS_NUMBER,
        timeout: TimeoutArg = None,
    ) -> int:
        """Delete listings by key; unknown keys are ignored. Returns the number deleted, as the
        service answered it.

        A failed delete is sent again (deleting is idempotent). The count is the service's
        answer, never a sum over attempts; when an earlier attempt may have deleted listings
        unanswered and the answer counts fewer than the keys asked, the count is unknown and
        the earlier failure is raised, saying so (see `delete_count`).

        Args:
            serial: The chatbot's serial number.
            keys: The keys of the listings to delete: one key, or an iterable of them (at least
                one, none empty).
            key_type: How the keys are read (a `KeyType` or its name: NewOaks, MLSNumber or
                URL); MLS numbers by default.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The number of listings deleted, as the service answered it.

        Raises:
            RequestValidationError: `serial` is empty, no key or an empty key is given, or
                `key_type` is unknown; nothing was sent.
            ConfigurationError: The client has neither an API key nor a session key, or
                `timeout` is not a positive, finite number; nothing was sent.
            NotFoundError: The service does not know chatbot `serial` (the error says to check
                the serial).
            AuthenticationError: The service refused the keys sent (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status), or a reply the client cannot use; also an earlier
                attempt's failure, raised again with a note, when that attempt may have deleted
                listings unanswered and the answer counts fewer than the keys asked.
            APIConnectionError: The transport failed once the retries were spent, or (as above)
                an earlier attempt's dropped reply leaves the count unknown.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        return self._client._request(delete_call(serial, keys, key_type, timeout))


class AsyncListings(AsyncResource):
    """A chatbot's real estate listings (async)."""

    async def create(self, listing: ListingArg, *, timeout: TimeoutArg = None) -> int:  # noqa: ASYNC109
        """Add a listing; see `Listings.create`.

        Args:
            listing: The listing: a `ListingInput` or a mapping of its fields by their wire
                names (a model is read by its wire names, unset fields left out).
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The new listing's ID.

        Raises:
            RequestValidationError: A field is missing or breaks the contract's rules; nothing
                was sent.
            ConfigurationError: The client has neither an API key nor a session key, or
                `timeout` is not a positive, finite number; nothing was sent.
            NotFoundError: The service does not know chatbot `SerialNumber`.
            ConflictError: A listing with that MLS number or URL already exists (409).
            AuthenticationError: The service refused the keys sent (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        return await self._client._request(create_call(listing, timeout))

    async def update(
        self,
        listing: ListingArg,
        *,
        key: str | None = None,
        key_type: KeyType | str | None = None,
        timeout: TimeoutArg = None,  # noqa: ASYNC109
    ) -> int:
        """Update a listing; see `Listings.update`.

        Args:
            listing: The listing's new fields: a `ListingUpdate`, a `ListingInput` or a
                mapping of the fields by their wire names, `SerialNumber` included.
            key: The key that finds the listing; None takes the body's `Key` (unless
                `key_type` changes the type), else derives it from the body: its `MLSNumber`
                for an MLSNumber key, its `Url` for a URL key. A NewOaks key (the listing ID)
                must be given here.
            key_type: How the key is read (a `KeyType` or its name: NewOaks, MLSNumber or URL);
                None takes the body's `KeyType`, else MLSNumber.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The number of listings updated, 1, or 0 when no listing has the key.

        Raises:
            RequestValidationError: A field is missing or breaks the contract's rules, or a
                NewOaks key was not given; nothing was sent.
            ConfigurationError: The client has neither an API key nor a session key, or
                `timeout` is not a positive, finite number; nothing was sent.
            NotFoundError: The service does not know chatbot `SerialNumber`.
            AuthenticationError: The service refused the keys sent (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        return await self._client._request(update_call(listing, key, key_type, timeout))

    async def list_page(
        self,
        serial: str,
        *,
        city: str | None = None,
        sale_type: SaleType | str | None = None,
        mls_number: str | None = None,
        page: int = 1,
        page_size: int = 20,
        timeout: TimeoutArg = None,  # noqa: ASYNC109
    ) -> ListingPage:
        """One page of the listings; see `Listings.list_page`.

        Args:
            serial: The chatbot's serial number.
            city: Only listings in this city; None for every city.
            sale_type: Only listings for sale or for rent (a `SaleType` or its value:
                `for_sale`, `for_rent`); None for both.
            mls_number: Only the listing with this MLS number; None for every listing.
            page: The page number, from 1 (0 is taken too, for a service counting from 0).
            page_size: The listings per page (the service may cap it).
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The page, with its `records` (raw wire dicts) and its `virtual_count` (None when
                the service did not say).

        Raises:
            RequestValidationError: `serial` is empty, `sale_type` is unknown, `page` is
                below 0 or `page_size` below 1; nothing was sent.
            ConfigurationError: The client has no session key, or `timeout` is not a positive,
                finite number; nothing was sent.
            NotFoundError: Page 1 of a chatbot the service does not know, or a page past the
                end, as some services answer it.
            AuthenticationError: The service refused the session key (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        call = list_call(serial, city, sale_type, mls_number, page, page_size, timeout)
        return await self._client._request(call)

    async def iter_pages(
        self,
        serial: str,
        *,
        city: str | None = None,
        sale_type: SaleType | str | None = None,
        mls_number: str | None = None,
        page_size: int = 100,
        timeout: TimeoutArg = None,  # noqa: ASYNC109
    ) -> AsyncIterator[ListingPage]:
        """Every page of the listings, in order; see `Listings.iter_pages`.

        Args:
            serial: The chatbot's serial number.
            city: Only listings in this city; None for every city.
            sale_type: Only listings for sale or for rent (a `SaleType` or its value:
                `for_sale`, `for_rent`); None for both.
            mls_number: Only the listing with this MLS number; None for every listing.
            page_size: The listings asked per page (the service may cap it).
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Yields:
            Each page in order, holding only listings not seen on an earlier page.

        Raises:
            PullError: The walk ran past the bound derived from the count and the page size.
            RequestValidationError: `serial` is empty, `sale_type` is unknown, or
                `page_size` is below 1; nothing was sent.
            ConfigurationError: The client has no session key, or `timeout` is not a positive,
                finite number; nothing was sent.
            NotFoundError: The service does not know the chatbot (page 1 refused).
            AuthenticationError: The service refused the session key (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status: `RateLimitError`, `ServerError`, ...), or a reply the client
                cannot use (a redirect, no JSON envelope, an unexpected `Data`, a body past the
                client's `max_reply_bytes`).
            APIConnectionError: The transport failed (refused, reset, dropped) once the retries
                were spent.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).

        Warns:
            PullWarning: The pages may not hold every listing (the count changed between pages,
                or fewer listings arrived than counted).
        """
        walk = PageWalk(page_size, page_zero=True)
        while (ask := walk.next_page()) is not None:
            try:
                call = list_call(serial, city, sale_type, mls_number, *ask, timeout)
                result: PageResult = await self._client._request(call)
            except EstatebotError as error:
                result = refusal(ask[0], error)  # raised unless it may be the end
            if (page := walk.take(result)) is not None:
                yield page
        walk.finish()

    async def delete(
        self,
        serial: str,
        keys: Iterable[str] | str,
        *,
        key_type: KeyType | str = KeyType.MLS_NUMBER,
        timeout: TimeoutArg = None,  # noqa: ASYNC109
    ) -> int:
        """Delete listings by key; see `Listings.delete`.

        Args:
            serial: The chatbot's serial number.
            keys: The keys of the listings to delete: one key, or an iterable of them (at least
                one, none empty).
            key_type: How the keys are read (a `KeyType` or its name: NewOaks, MLSNumber or
                URL); MLS numbers by default.
            timeout: This call's timeout in seconds (or an `httpx.Timeout`): the longest wait
                to connect and for each next piece of the reply; None uses the client's.

        Returns:
            The number of listings deleted, as the service answered it.

        Raises:
            RequestValidationError: `serial` is empty, no key or an empty key is given, or
                `key_type` is unknown; nothing was sent.
            ConfigurationError: The client has neither an API key nor a session key, or
                `timeout` is not a positive, finite number; nothing was sent.
            NotFoundError: The service does not know chatbot `serial` (the error says to check
                the serial).
            AuthenticationError: The service refused the keys sent (401 or 403).
            APIError: Any other failure the service reported once the retries were spent (its
                subclass by status), or a reply the client cannot use; also an earlier
                attempt's failure, raised again with a note, when that attempt may have deleted
                listings unanswered and the answer counts fewer than the keys asked.
            APIConnectionError: The transport failed once the retries were spent, or (as above)
                an earlier attempt's dropped reply leaves the count unknown.
            APITimeoutError: A wait passed `timeout` once the retries were spent, or the attempt
                ran past the client's `deadline` (not retried).
        """
        return await self._client._request(delete_call(serial, keys, key_type, timeout))
