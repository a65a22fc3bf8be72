"""Client and AsyncClient against the real emulator over loopback: every operation, every
validation rule (refused before sending), auth, workspace isolation and the rate limit.

Tests taking the ``api`` fixture run once with each client; ``await api(fn)`` calls ``fn`` with
the client and awaits the result when it is awaitable.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from estatebot import errors
from estatebot.api import AsyncClient, Client
from estatebot.api.models import AIModel, Answer, ListingPage

Fn = Callable[[Any], Any]

LISTING: dict[str, Any] = {
    "SaleType": "for_sale",
    "Status": "Active",
    "CurrencySymbol": "$",
    "PropertyType": "Condo",
    "Bedrooms": 2,
    "Bathrooms": 1.5,
    "Url": "https://homes.test/c/1",
    "MLSNumber": "CLIENT-1",
    "YearBuilt": 2001,
    "DaysOnMarket": 12,
    "LotArea": 0,
    "BuildingArea": 950,
    "AreaUnit": "Square Feet",
    "ParkingSpots": 1,
    "City": "Austin",
    "SalePrice": 325000,
}


def listing(serial: str, i: int = 1, **changes: Any) -> dict[str, Any]:
    """A valid Create body for chatbot ``serial``, the i-th of a batch."""
    body = {**LISTING, "MLSNumber": f"CLIENT-{i}", "Url": f"https://homes.test/c/{i}"}
    return {"SerialNumber": serial, **body, **changes}


class Api:
    """One client (sync or async) on a server, callable uniformly from an async test."""

    def __init__(self, kind: str, server: Any, **options: Any) -> None:
        settings: dict[str, Any] = {
            "base_url": server.base_url,
            "api_key": server.api_key,
            "session_key": server.session_key,
            "backoff_base": 0.01,
            "backoff_max": 0.05,
            **options,
        }
        self.kind = kind
        self.client: Client | AsyncClient = (Client if kind == "sync" else AsyncClient)(**settings)

    async def __call__(self, fn: Fn) -> Any:
        result = fn(self.client)
        return await result if inspect.isawaitable(result) else result

    async def close(self) -> None:
        if isinstance(self.client, AsyncClient):
            await self.client.aclose()
        else:
            self.client.close()


async def collect(pages: Any) -> list[ListingPage]:
    """Every page of ``iter_pages``, from either client."""
    if hasattr(pages, "__aiter__"):
        return [page async for page in pages]
    return list(pages)


def total_requests(server: Any) -> int:
    return sum(server.request_counts.values())


@pytest.fixture(params=["sync", "async"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def api(kind: str, emulator: Any) -> AsyncIterator[Api]:
    made = Api(kind, emulator)
    yield made
    await made.close()


# --------------------------------------------------------------------------- every operation


async def test_chatbot_operations(api: Api, emulator: Any) -> None:
    serial = emulator.serial
    assert await api(lambda c: c.chatbots.edit(serial, Name="Renamed", Temperature=0)) == 1
    models = await api(lambda c: c.chatbots.models())
    assert models
    assert all(isinstance(m, AIModel) for m in models)
    model = models[-1].key
    assert await api(lambda c: c.chatbots.edit(serial, Model=model)) == 1
    assert emulator.request_counts["Edit"] == 2
    assert emulator.request_counts["ModelList"] == 1


async def test_chat_operations(api: Api, emulator: Any) -> None:
    session = await api(lambda c: c.chat.create_session(emulator.serial))
    assert isinstance(session, int)
    answer = await api(lambda c: c.chat.ask(session, "Any 3 bedroom homes in Austin?"))
    assert isinstance(answer, Answer)
    assert answer.content
    assert answer.message_id > 0
    assert isinstance(answer.no_answer, bool)
    image = await api(lambda c: c.chat.ask(session, "", ask_type="Image", file_ids=[101, 102]))
    assert image.content


async def test_listing_operations(api: Api, emulator: Any) -> None:
    serial = emulator.serial
    new_id = await api(lambda c: c.listings.create(listing(serial)))
    assert isinstance(new_id, int)
    page = await api(lambda c: c.listings.list_page(serial, mls_number="CLIENT-1"))
    assert isinstance(page, ListingPage)
    assert [r["ID"] for r in page.records] == [new_id]
    assert page.virtual_count == 1

    changed = listing(serial, SalePrice=299000)
    assert await api(lambda c: c.listings.update(changed)) == 1
    by_id = {**changed, "Description": "by id"}
    assert await api(lambda c: c.listings.update(by_id, key=str(new_id), key_type="NewOaks")) == 1
    by_url = {**changed, "Description": "by url"}
    assert await api(lambda c: c.listings.update(by_url, key_type="URL")) == 1
    unknown = listing(serial, 99)
    assert await api(lambda c: c.listings.update(unknown)) == 0

    (record,) = (await api(lambda c: c.listings.list_page(serial, mls_number="CLIENT-1"))).records
    assert record["Description"] == "by url"
    assert record["SalePrice"] == "299000"

    deleted = await api(lambda c: c.listings.delete(serial, ["CLIENT-1", "NO-SUCH"]))
    assert deleted == 1
    page = await api(lambda c: c.listings.list_page(serial, mls_number="CLIENT-1"))
    assert page.records == []


async def test_list_filters(api: Api, emulator: Any) -> None:
    serial = emulator.serial
    everything = await api(lambda c: c.listings.list_page(serial, page_size=100))
    rentals = await api(lambda c: c.listings.list_page(serial, sale_type="for_rent"))
    austin = await api(lambda c: c.listings.list_page(serial, city="Austin", page_size=100))
    assert 0 < rentals.virtual_count < everything.virtual_count
    assert austin.records
    assert {r["City"] for r in austin.records} == {"Austin"}


async def test_create_duplicate_is_a_conflict(api: Api, emulator: Any) -> None:
    await api(lambda c: c.listings.create(listing(emulator.serial)))
    with pytest.raises(errors.ConflictError):
        await api(lambda c: c.listings.create(listing(emulator.serial)))
    assert emulator.request_counts["RealEstateCreate"] == 2


# --------------------------------------------------------------------------- validation

S = "3254a9d0424c4806b9ea3d0763ccf1bf"


def edit(**settings: Any) -> Fn:
    return lambda c: c.chatbots.edit(S, **settings)


def ask(content: str, **options: Any) -> Fn:
    return lambda c: c.chat.ask(1, content, **options)


def create(**changes: Any) -> Fn:
    return lambda c: c.listings.create(listing(S, **changes))


def list_page(**options: Any) -> Fn:
    return lambda c: c.listings.list_page(S, **options)


INVALID: list[tuple[str, Fn, str]] = [
    ("colour range", edit(ChatBubbleColor="rgb(300,0,0)"), "ChatBubbleColor"),
    ("colour name", edit(UserMessageColor="blue"), "UserMessageColor"),
    ("zone form", edit(TimeZone="Chicago"), "TimeZone"),
    ("zone unknown", edit(TimeZone="Mars/Base"), "TimeZone"),
    ("email", edit(TalkToHumanEmail="nobody"), "TalkToHumanEmail"),
    ("leads email", edit(EmailForDailyLeads="a@"), "EmailForDailyLeads"),
    ("url scheme", edit(FacebookUrl="ftp://x.test"), "FacebookUrl"),
    ("url text", edit(ChatbotPrivacyPolicyUrl="policy"), "ChatbotPrivacyPolicyUrl"),
    ("unknown setting", edit(Colour="red"), "Colour"),
    ("wrong type", edit(Temperature="hot"), "Temperature"),
    ("rate count", edit(RateLimitCount=-1), "RateLimitCount"),
    ("message limit", edit(MessageLimit=-2), "MessageLimit"),
    ("empty serial", lambda c: c.chatbots.edit("", Name="x"), "serialNumber"),
    ("session serial", lambda c: c.chat.create_session(""), "serialNumber"),
    ("text with files", ask("hi", file_ids=[1]), "fileIds"),
    ("empty text", ask("  "), "content"),
    ("image no files", ask("", ask_type="Image"), "fileIds"),
    ("audio two files", ask("", ask_type="Audio", file_ids=[1, 2]), "fileIds"),
    ("video two files", ask("", ask_type="Video", file_ids=[1, 2]), "fileIds"),
    ("ask type", ask("hi", ask_type="Gif"), "chatAskType"),
    ("stream rules", lambda c: c.chat.stream(1, "hi", file_ids=[3]), "fileIds"),
    ("missing field", create(MLSNumber=None), "MLSNumber"),
    ("sale type", create(SaleType="sell"), "SaleType"),
    ("status", create(Status="Pending"), "Status"),
    ("area unit", create(AreaUnit="Acres"), "AreaUnit"),
    ("tours", create(Tours="VR"), "Tours"),
    ("space type", create(SpaceType="Couch"), "SpaceType"),
    ("latitude", create(Latitude=91), "Latitude"),
    ("negative", create(Bedrooms=-1), "Bedrooms"),
    ("extension", create(ExtensionColumn=[{"Key": "a"}]), "ExtensionColumn.0.value"),
    ("unknown field", create(Pool=True), "Pool"),
    ("key type", lambda c: c.listings.update(listing(S), key_type="Address"), "KeyType"),
    ("new oaks key", lambda c: c.listings.update(listing(S), key_type="NewOaks"), "Key"),
    ("list sale type", list_page(sale_type="rent"), "SaleType"),
    ("page number", list_page(page=-1), "PageNumber"),
    ("page size", list_page(page_size=0), "PageSize"),
    ("no keys", lambda c: c.listings.delete(S, []), "Keys"),
    ("empty key", lambda c: c.listings.delete(S, [""]), "Keys.0"),
    ("delete key type", lambda c: c.listings.delete(S, ["x"], key_type="Id"), "KeyType"),
]


async def test_validation_rules_refuse_before_sending(api: Api, emulator: Any) -> None:
    # One test walks every rule: a fresh emulator per rule would cost more than the rules.
    missed: list[tuple[str, object]] = []
    for rule, fn, field in INVALID:
        try:
            await api(fn)
        except errors.RequestValidationError as exc:
            if field not in exc.fields:
                missed.append((rule, exc.fields))
        else:
            missed.append((rule, "not refused"))
    assert missed == []
    assert total_requests(emulator) == 0


async def test_iter_pages_validates_before_sending(api: Api, emulator: Any) -> None:
    with pytest.raises(errors.RequestValidationError):
        await collect(api.client.listings.iter_pages(S, page_size=0))
    assert total_requests(emulator) == 0


# --------------------------------------------------------------------------- auth and isolation


@pytest.mark.parametrize(
    ("credential", "fn"),
    [
        ("api_key", lambda c: c.chatbots.edit(S, Name="x")),
        ("api_key", lambda c: c.chat.create_session(S)),
        ("session_key", lambda c: c.listings.list_page(S)),
    ],
)
async def test_wrong_key_is_an_authentication_error(
    kind: str, emulator: Any, credential: str, fn: Fn
) -> None:
    wrong = Api(kind, emulator, **{credential: "not-the-key"})
    with pytest.raises(errors.AuthenticationError) as info:
        await wrong(fn)
    assert info.value.status_code == 401
    assert "not-the-key" not in str(info.value)
    assert total_requests(emulator) == 1  # a 401 is not retried
    await wrong.close()


async def test_missing_key_is_a_configuration_error(
    kind: str, emulator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ESTATEBOT_SESSION_KEY", raising=False)
    no_session = Api(kind, emulator, session_key=None)
    with pytest.raises(errors.ConfigurationError, match="ESTATEBOT_SESSION_KEY"):
        await no_session(lambda c: c.listings.list_page(S))
    assert total_requests(emulator) == 0
    await no_session.close()


async def test_other_workspaces_chatbot_is_not_found(api: Api, emulator: Any) -> None:
    other = emulator.add_workspace()
    foreign = emulator.add_chatbot(other, Name="Not yours")
    for fn in (
        lambda c: c.chatbots.edit(foreign, Name="mine now"),
        lambda c: c.chat.create_session(foreign),
        lambda c: c.listings.list_page(foreign),
        lambda c: c.listings.create(listing(foreign)),
        lambda c: c.listings.delete(foreign, ["CLIENT-1"]),
    ):
        with pytest.raises(errors.NotFoundError):
            await api(fn)
    stranger = Api(api.kind, emulator, api_key=other.api_key, session_key=other.session_key)
    foreign_session = await stranger(lambda c: c.chat.create_session(foreign))
    with pytest.raises(errors.NotFoundError):
        await api(lambda c: c.chat.ask(foreign_session, "hello"))
    await stranger.close()


async def test_unknown_session_is_not_found(api: Api) -> None:
    with pytest.raises(errors.NotFoundError):
        await api(lambda c: c.chat.ask(987654321, "hello"))


# --------------------------------------------------------------------------- rate limit


async def test_rate_limit_gives_retry_after_and_the_chatbots_message(
    api: Api, emulator: Any
) -> None:
    message = "Easy there, one message a minute."
    edit = {"RateLimitCount": 1, "RateLimitTime": 60, "RateLimitMessage": message}
    await api(lambda c: c.chatbots.edit(emulator.serial, **edit))
    session = await api(lambda c: c.chat.create_session(emulator.serial))
    await api(lambda c: c.chat.ask(session, "Homes in Denver?"))
    with pytest.raises(errors.RateLimitError) as info:
        await api(lambda c: c.chat.ask(session, "And in Miami?"))
    assert info.value.message == message
    assert info.value.retry_after is not None
    assert 1 <= info.value.retry_after <= 60
    assert emulator.request_counts["ClientAsk"] == 2  # the refused ask was not retried


async def test_monthly_limit(api: Api, emulator: Any) -> None:
    await api(lambda c: c.chatbots.edit(emulator.serial, MessageLimit=0))
    session = await api(lambda c: c.chat.create_session(emulator.serial))
    with pytest.raises(errors.RateLimitError, match="onthly"):
        await api(lambda c: c.chat.ask(session, "hi"))
