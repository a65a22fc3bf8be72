"""The listing operations: RealEstateCreate, RealEstateUpdate, RealEstateList, RealEstateDelete.

Decisions where the contract is silent (beyond the addendum):

* RealEstateUpdate replaces the whole listing: afterwards it holds exactly the body's fields
  (optional fields left out become absent). Moving its MLSNumber or Url onto another
  listing's is a 409.
* RealEstateList records: ``Images`` and ``ExtensionColumn`` are compact JSON text, ``""`` when
  absent or empty; ``LATITUDE``/``LONGITUDE`` are numbers or null; every other number is plain
  decimal text (``3``, ``2.5``, ``450000``), ``""`` when absent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from fastapi import Request
from pydantic import Field

from estatebot.api.models import (
    LIST_RECORD_FIELDS,
    DeleteRequest,
    ListingInput,
    ListingUpdate,
    ListRequest,
)

from ..envelope import EncodedData, Failure, json_bytes
from ..listing_cache import ListingFilter
from ..listing_table import ListingConflict
from .base import RouteBase


class _PagesFromOne(ListRequest):
    """The List body as this service takes it: pages counted from 1, as the contract's default
    (the client's model also lets page 0 through, for deployments that count from 0)."""

    PageNumber: int = Field(default=1, ge=1)


def plain_number(value: Any) -> str:
    """A number as plain decimal text (``3``, ``2.5``, ``450000``); ``""`` for None."""
    if value is None:
        return ""
    if isinstance(value, int):
        return str(value)
    number = float(value)
    if number.is_integer() and abs(number) < 2**53:
        return str(int(number))
    text = repr(number)
    # repr switches to exponent notation for very small or large values; spell them out.
    return format(Decimal(text), "f") if "e" in text else text


def _compact_json(items: Any) -> str:
    return json.dumps(items, ensure_ascii=False, separators=(",", ":")) if items else ""


_TEXT_FIELDS = (
    "PropertyType", "Status", "CurrencySymbol", "State", "City", "Address", "ZIP", "Url", "Tours",
    "MLSNumber", "Description", "SpaceType",
)  # fmt: skip
_NUMBER_FIELDS = (
    "Bathrooms", "Bedrooms", "YearBuilt", "DaysOnMarket", "LotArea", "BuildingArea",
    "ParkingSpots", "RentPrice", "DepositFee", "SalePrice", "UnitAreaPrice", "ZestimatePrice",
    "HOAMonth",
)  # fmt: skip


def list_record(listing_id: int, data: Mapping[str, Any]) -> dict[str, Any]:
    """A stored listing as RealEstateList returns it (the fields of ``LIST_RECORD_FIELDS``)."""
    for_rent = data.get("SaleType") == "for_rent"
    values: dict[str, Any] = {
        "ID": listing_id,
        "SaleType": "For Rent" if for_rent else "For Sale",
        "Images": _compact_json(data.get("Images")),
        "ExtensionColumn": _compact_json(data.get("ExtensionColumn")),
        "Price": plain_number(data.get("RentPrice" if for_rent else "SalePrice")),
        "Area": plain_number(data.get("BuildingArea")),
        "LATITUDE": data.get("Latitude"),
        "LONGITUDE": data.get("Longitude"),
    }
    values.update({name: str(data.get(name) or "") for name in _TEXT_FIELDS})
    values.update({name: plain_number(data.get(name)) for name in _NUMBER_FIELDS})
    return {name: values[name] for name in LIST_RECORD_FIELDS}


class ListingRoutes(RouteBase):
    """RealEstateCreate, RealEstateUpdate, RealEstateList and RealEstateDelete."""

    async def create_listing(self, request: Request, workspace: int) -> int:
        """RealEstateCreate: Data = the new listing's ID; 409 on a duplicate MLS number or URL."""
        body = await self._body(request, ListingInput)
        self._chatbot(body.SerialNumber, workspace)
        data = body.model_dump(mode="json", exclude_none=True, exclude={"SerialNumber"})
        try:
            return self.store.create_listing(body.SerialNumber, data)
        except ListingConflict as conflict:
            raise Failure(409, str(conflict)) from None

    async def update_listing(self, request: Request, workspace: int) -> int:
        """RealEstateUpdate: replace the listing the key finds; Data = the number updated."""
        body = await self._body(request, ListingUpdate)
        self._chatbot(body.SerialNumber, workspace)
        data = body.model_dump(
            mode="json", exclude_none=True, exclude={"SerialNumber", "Key", "KeyType"}
        )
        updated = 0
        try:
            for listing_id in self.store.find_listing_ids(
                body.SerialNumber, body.KeyType, body.Key
            ):
                updated += self.store.replace_listing(body.SerialNumber, listing_id, data)
        except ListingConflict as conflict:
            raise Failure(409, str(conflict)) from None
        return updated

    async def list_listings(self, request: Request, workspace: int) -> EncodedData:
        """RealEstateList: one page by ID order, and VirtualCount = the total matching."""
        body = await self._body(request, _PagesFromOne)
        self._chatbot(body.SerialNumber, workspace)
        size = min(body.PageSize, max(1, self.options.max_page_size))
        filters = ListingFilter(
            city=body.CityName, sale_type=body.SaleType, mls_number=body.MLSNumber
        )
        ids, total = self.store.page_ids(
            body.SerialNumber, filters, (body.PageNumber - 1) * size, size
        )
        # Records are encoded once per listing and kept until the chatbot's listings change.
        encoded = self.store.derived(body.SerialNumber)
        missing = [i for i in ids if i not in encoded]
        if missing:
            for i, data in self.store.listing_data(body.SerialNumber, missing).items():
                encoded[i] = json_bytes(list_record(i, data))
        records = b", ".join(encoded[i] for i in ids if i in encoded)
        return EncodedData(b'{"List": [' + records + b'], "VirtualCount": %d}' % total)

    async def delete_listings(self, request: Request, workspace: int) -> dict[str, int]:
        """RealEstateDelete: Data = {"SuccessCount": the number deleted}; unknown keys ignored."""
        body = await self._body(request, DeleteRequest)
        self._chatbot(body.SerialNumber, workspace)
        count = self.store.delete_listings(body.SerialNumber, body.KeyType, body.Keys)
        return {"SuccessCount": count}
