"""What the foreign tests share: clients for a server, fetching all listings four ways, and the
comparison of the server's listings with the listings a sheet asked for."""

from __future__ import annotations

import asyncio
import math
import ssl
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Literal

import httpx

import estatebot as eb
from foreign.server import ForeignServer
from foreign.variant import CREATE, DELETE, UPDATE

#: Client options that keep retries quick (the backoff is not what these tests look at).
FAST: dict[str, Any] = {"timeout": 5.0, "backoff_base": 0.01, "backoff_max": 0.05}

How = Literal["iter_pages", "aiter_pages", "pull", "apull"]
HOWS: tuple[How, ...] = ("iter_pages", "aiter_pages", "pull", "apull")


# One TLS context for every client: httpx builds a new one per client otherwise, some 0.1 s
# each, which over hundreds of tests is most of their time (none of them uses TLS).
_TLS = ssl.create_default_context()


@contextmanager
def client_for(server: ForeignServer, **options: Any) -> Iterator[eb.Client]:
    """A blocking client with both keys of the server's main workspace (closed on exit)."""
    settings = {**FAST, **options}
    with httpx.Client(verify=_TLS) as http:
        client = eb.Client(
            base_url=server.base_url,
            api_key=server.api_key,
            session_key=server.session_key,
            http_client=http,
            **settings,
        )
        with client:
            yield client


@asynccontextmanager
async def aclient_for(server: ForeignServer, **options: Any) -> AsyncIterator[eb.AsyncClient]:
    """An async client with both keys of the server's main workspace (closed on exit)."""
    settings = {**FAST, **options}
    async with httpx.AsyncClient(verify=_TLS) as http:
        client = eb.AsyncClient(
            base_url=server.base_url,
            api_key=server.api_key,
            session_key=server.session_key,
            http_client=http,
            **settings,
        )
        async with client:
            yield client


async def _async_mls(server: ForeignServer, how: How, **options: Any) -> list[str]:
    async with aclient_for(server) as client:
        if how == "apull":
            frame = await eb.apull_listings(client, server.serial, progress=False, **options)
            return [str(m) for m in frame["MLSNumber"]]
        return [
            str(record["MLSNumber"])
            async for page in client.listings.iter_pages(server.serial, **options)
            for record in page.records
        ]


def fetch_mls(server: ForeignServer, how: How, **options: Any) -> list[str]:
    """The MLS numbers of every listing, fetched by ``iter_pages`` or ``pull_listings``, sync or
    async, in the order they came."""
    if how in ("aiter_pages", "apull"):
        return asyncio.run(_async_mls(server, how, **options))
    with client_for(server) as client:
        if how == "pull":
            frame = eb.pull_listings(client, server.serial, progress=False, **options)
            return [str(m) for m in frame["MLSNumber"]]
        return [
            str(record["MLSNumber"])
            for page in client.listings.iter_pages(server.serial, **options)
            for record in page.records
        ]


#: The fields compared between the server and a sheet (every input field List can carry).
COMPARED = (
    "SaleType", "Status", "CurrencySymbol", "PropertyType", "Bedrooms", "Bathrooms", "Url",
    "YearBuilt", "DaysOnMarket", "LotArea", "BuildingArea", "ParkingSpots", "Images", "Tours",
    "Description", "ExtensionColumn", "Address", "City", "State", "ZIP", "Latitude", "Longitude",
    "SalePrice", "HOAMonth", "RentPrice", "SpaceType", "DepositFee",
)  # fmt: skip


def _canonical(name: str, value: Any) -> Any:
    if value is None or value == "" or value == []:
        return None
    if name == "ExtensionColumn":
        return {item["Key"]: item["value"] for item in value} or None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return round(float(value), 6)
    return value


def differences(server: ForeignServer, desired: Sequence[Mapping[str, Any]]) -> list[str]:
    """How the server's listings differ from ``desired`` (Create bodies): missing, extra and
    duplicated MLS numbers, and each differing field. Empty when they are equal."""
    stored = server.listings()
    counts = Counter(item["MLSNumber"] for item in stored)
    problems = [f"{mls} is stored {n} times" for mls, n in counts.items() if n > 1]
    by_mls = {item["MLSNumber"]: item for item in stored}
    wanted = {body["MLSNumber"]: body for body in desired}
    problems += [f"{mls} is missing" for mls in sorted(set(wanted) - set(by_mls))]
    problems += [f"{mls} should not be there" for mls in sorted(set(by_mls) - set(wanted))]
    for mls in sorted(set(wanted) & set(by_mls)):
        for name in COMPARED:
            have = _canonical(name, by_mls[mls].get(name))
            want = _canonical(name, wanted[mls].get(name))
            same = (
                math.isclose(have, want, abs_tol=1e-6)
                if isinstance(have, float) and isinstance(want, float)
                else have == want
            )
            if not same:
                problems.append(f"{mls}.{name}: stored {have!r}, sheet {want!r}")
    return problems


#: A write operation's name as a sync plan calls its action.
ACTIONS = {CREATE: "create", UPDATE: "update", DELETE: "delete"}


def carried_out(server: ForeignServer, stored: Sequence[Mapping[str, Any]]) -> Counter[str]:
    """The writes the server carried out (answered 2xx), as ``"<action> <MLS number>"``.

    ``stored`` are the server's listings before the writes (``server.listings()``): a Delete by
    ID or Url is traced to the MLS number it named through them. A request refused before any
    work (429, 503, an HTML page) is not counted: only the effects are.
    """
    by_id = {str(item["ID"]): item["MLSNumber"] for item in stored}
    by_url = {str(item["Url"]).lower(): item["MLSNumber"] for item in stored}
    done: Counter[str] = Counter()
    for operation, action in ACTIONS.items():
        for seen in server.requests(operation):
            if not 200 <= seen.status < 300 or not isinstance(seen.body, dict):
                continue
            if operation != DELETE:
                done[f"{action} {seen.body.get('MLSNumber')}"] += 1
                continue
            kind = str(seen.body.get("KeyType"))
            for key in seen.body.get("Keys") or []:
                mls = {"NewOaks": by_id.get(str(key)), "URL": by_url.get(str(key).lower())}.get(
                    kind, key
                )
                done[f"{action} {mls}"] += 1
    return done
