"""Real estate listings: ``client.listings.create``, ``update``, ``list_page``, ``iter_pages``,
``delete``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
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
from estatebot.errors import EstatebotError

ListingArg = BaseModel | Mapping[str, Any]

# The body field a key is derived from, for the key types that have one (NewOaks IDs do not).
_KEY_SOURCE = {KeyType.MLS_NUMBER.value: "MLSNumber", KeyType.URL.value: "Url"}


def create_call(listing: ListingArg, timeout: TimeoutArg) -> Call[int]:
    """The RealEstateCreate call; its ``Data`` is the new listing's ID."""
    body = validate(CREATE, ListingInput, as_wire_dict(listing))
    return Call(CREATE, to_wire(body), parse_new_id, timeout)


def update_body(
    listing: ListingArg, key: str | None, key_type: KeyType | str | None
) -> dict[str, Any]:
    """The Update body with its ``Key`` and ``KeyType`` settled.

    An explicit ``key``/``key_type`` wins over the body's. Without a key, it is the body's
    ``Key`` (unless ``key_type`` changes the type), else derived from the body: ``MLSNumber``
    for MLSNumber (the default type), ``Url`` for URL. NewOaks needs an explicit key.
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
    """The RealEstateUpdate call; its ``Data`` is the number of listings updated (0 or 1)."""
    body = validate(UPDATE, ListingUpdate, update_body(listing, key, key_type))
    return Call(UPDATE, to_wire(body), parse_int, timeout)


def list_call(
    serial: str,
    city: str | None,
    sale_type: SaleType | str | None,
    mls_number: str | None,
    page: int,
    page_size: int,
    timeout: TimeoutArg,
) -> Call[ListingPage]:
    """The RealEstateList call for one page."""
    fields = {"SerialNumber": serial, "CityName": city, "SaleType": sale_type}
    paging = {"MLSNumber": mls_number, "PageNumber": page, "PageSize": page_size}
    body = validate(LIST, ListRequest, {**fields, **paging})
    return Call(LIST, to_wire(body), ListingPage.model_validate, timeout)


def delete_call(
    serial: str, keys: Iterable[str] | str, key_type: KeyType | str, timeout: TimeoutArg
) -> Call[int]:
    """The RealEstateDelete call; its result is the number of listings deleted."""
    key_list = [keys] if isinstance(keys, str) else list(keys)
    data = {"SerialNumber": serial, "Keys": key_list, "KeyType": key_type}
    body = validate(DELETE, DeleteRequest, data)
    return Call(DELETE, to_wire(body), _success_count, timeout)


def _success_count(data: Any) -> int:
    return DeleteResult.model_validate(data).success_count


class Listings(SyncResource):
    """A chatbot's real estate listings."""

    def create(self, listing: ListingArg, *, timeout: TimeoutArg = None) -> int:
        """Add a listing (a :class:`ListingInput` or a mapping of its fields); returns its ID."""
        return self._client._request(create_call(listing, timeout))

    def update(
        self,
        listing: ListingArg,
        *,
        key: str | None = None,
        key_type: KeyType | str | None = None,
        timeout: TimeoutArg = None,
    ) -> int:
        """Update the listing found by key (see :func:`update_body`); returns 1, or 0 if none."""
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
        """One page of the chatbot's listings, filtered by city, sale type or MLS number."""
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

        Paging follows :class:`~estatebot.api.paging.Pager`, the same logic as ``pull_listings``:
        a server page cap, a missing or wrong ``VirtualCount`` and a page past the end refused
        with 404 are all survived. A listing seen on an earlier page (rows moving while paging)
        is left out of later ones, and a page left with none is skipped. A count that changed
        between pages, or fewer listings than counted, is reported by a
        :class:`~estatebot.errors.PullWarning` at the end. Errors are raised as they come.
        """
        walk = PageWalk(page_size)
        while (ask := walk.next_page()) is not None:
            call = list_call(serial, city, sale_type, mls_number, *ask, timeout)
            try:
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
        """Delete listings by key; unknown keys are ignored. Returns the number deleted."""
        return self._client._request(delete_call(serial, keys, key_type, timeout))


class AsyncListings(AsyncResource):
    """A chatbot's real estate listings (async)."""

    async def create(self, listing: ListingArg, *, timeout: TimeoutArg = None) -> int:  # noqa: ASYNC109
        """Add a listing; see :meth:`Listings.create`."""
        return await self._client._request(create_call(listing, timeout))

    async def update(
        self,
        listing: ListingArg,
        *,
        key: str | None = None,
        key_type: KeyType | str | None = None,
        timeout: TimeoutArg = None,  # noqa: ASYNC109
    ) -> int:
        """Update a listing; see :meth:`Listings.update`."""
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
        """One page of the listings; see :meth:`Listings.list_page`."""
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
        """Every page of the listings, in order; see :meth:`Listings.iter_pages`."""
        walk = PageWalk(page_size)
        while (ask := walk.next_page()) is not None:
            call = list_call(serial, city, sale_type, mls_number, *ask, timeout)
            try:
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
        """Delete listings by key; see :meth:`Listings.delete`."""
        return await self._client._request(delete_call(serial, keys, key_type, timeout))
