"""Listing paging and List values against a deployment's paging and text variants.

Paging must return every listing exactly once, whatever ``VirtualCount`` says (exact, missing,
null, too low, too high, the page's own length, zero), under a silent page-size cap, and when a
page past the last is answered with 404 "No more data". Four ways are checked each time:
``iter_pages`` and ``pull_listings``, blocking and async. List values (text per the addendum,
in a deployment's formatting) must come out as the stored values.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import pandas as pd
import pytest

import estatebot as eb
from foreign.helpers import HOWS, How, fetch_mls
from foreign.server import ForeignServer
from foreign.variant import CountMode, PastEnd, Variant

ALL = 137
COUNTS: tuple[CountMode, ...] = ("exact", "missing", "null", "low", "high", "page", "zero")


def _expected(count: int) -> list[str]:
    return [f"F{i:06d}" for i in range(1, count + 1)]


@pytest.fixture(autouse=True)
def _quiet_pull_warnings() -> None:
    # A wrong count makes pull_listings warn (PullWarning): expected here, not what is tested.
    warnings.simplefilter("ignore", eb.PullWarning)


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("cap", [100, 50], ids=["no-cap", "cap-50"])
def test_every_listing_once(server: ForeignServer, cap: int, count: CountMode, how: How) -> None:
    """137 listings, pages of 100 asked: all 137 arrive once, in order, for any count."""
    server.seed(ALL)
    server.variant = Variant(page_cap=cap, virtual_count=count)
    assert fetch_mls(server, how) == _expected(ALL)


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("count", ["exact", "missing", "low", "high"])
@pytest.mark.parametrize("past_end", ["http404", "envelope404"])
def test_past_the_end_404_ends_paging(
    server: ForeignServer, past_end: PastEnd, count: CountMode, how: How
) -> None:
    """100 listings in full pages of 50 (a cap): the page after the last answers 404 "No more
    data" (HTTP 404, or HTTP 200 with Code 404). That is the end, not a failure."""
    server.seed(100)
    server.variant = Variant(page_cap=50, virtual_count=count, past_end=past_end)
    assert fetch_mls(server, how) == _expected(100)


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("past_end", ["http404", "envelope404"])
def test_past_the_end_404_with_a_chosen_page_size(
    server: ForeignServer, past_end: PastEnd, how: How
) -> None:
    """No cap: 60 listings in pages of 20 asked by the caller, the count missing."""
    server.seed(60)
    server.variant = Variant(virtual_count="missing", past_end=past_end)
    assert fetch_mls(server, how, page_size=20) == _expected(60)


def test_page_cap_learned_from_the_first_page(server: ForeignServer, client: eb.Client) -> None:
    """Under a cap of 50 with an exact count, iter_pages hands out the pages the cap makes:
    page numbers then count in fifties, so no listing is skipped."""
    server.seed(ALL)
    server.variant = Variant(page_cap=50)
    pages = list(client.listings.iter_pages(server.serial, page_size=100))
    assert [len(page.records) for page in pages] == [50, 50, 37]


def test_count_too_high_marks_the_pull_incomplete(server: ForeignServer, client: eb.Client) -> None:
    """A count above what arrives cannot be told from lost listings: the pull keeps all it got
    and says it may be incomplete, so a plan made from it deletes and creates nothing."""
    server.seed(30)
    server.variant = Variant(virtual_count="high")
    frame = eb.pull_listings(client, server.serial, progress=False)
    assert sorted(frame["MLSNumber"]) == _expected(30)
    assert frame.attrs.get("incomplete")


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"city": "Boston"}, lambda item: item["City"] == "Boston"),
        ({"sale_type": "for_rent"}, lambda item: item["SaleType"] == "for_rent"),
        ({"mls_number": "F000007"}, lambda item: item["MLSNumber"] == "F000007"),
        (
            {"city": "Austin", "sale_type": "for_sale"},
            lambda item: item["City"] == "Austin" and item["SaleType"] == "for_sale",
        ),
    ],
    ids=["city", "sale-type", "mls", "city-and-sale-type"],
)
@pytest.mark.parametrize("how", HOWS)
def test_filters_select_the_matching_listings(
    server: ForeignServer, how: How, filters: dict[str, str], expected: Any
) -> None:
    """CityName, SaleType and MLSNumber filters reach the server, whose matches all arrive."""
    server.seed(60)
    server.variant = Variant(page_cap=7)
    wanted = [item["MLSNumber"] for item in server.listings() if expected(item)]
    assert wanted
    assert fetch_mls(server, how, **filters) == wanted


@pytest.mark.parametrize("problem_details", [False, True], ids=["envelope", "problem+json"])
def test_page_size_above_a_refusing_limit_is_a_clear_error(
    server: ForeignServer, client: eb.Client, problem_details: bool
) -> None:
    """A deployment that refuses (400) a PageSize above its limit: the error says PageSize."""
    server.seed(10)
    server.variant = Variant(page_cap=50, reject_large_pages=True, problem_details=problem_details)
    with pytest.raises(eb.InvalidRequestError) as caught:
        client.listings.list_page(server.serial, page_size=100)
    assert "PageSize" in str(caught.value)
    assert "50" in str(caught.value)
    assert len(client.listings.list_page(server.serial, page_size=50).records) == 10


# --------------------------------------------------------------------------- values

VALUES: dict[str, Variant] = {
    "contract": Variant(),
    "camel": Variant(camel_case=True),
    "decimals": Variant(numbers="decimal"),
    "money-price-and-area-units": Variant(numbers="money"),
    "absent-null": Variant(absent="null"),
    "absent-N/A": Variant(absent="N/A"),
    "absent-None": Variant(absent="None"),
    "absent-dash": Variant(absent="-"),
    "null-texts": Variant(null_texts=True),
    "sale-type-upper": Variant(sale_type_text="upper"),
    "sale-type-input": Variant(sale_type_text="input"),
    "images-comma": Variant(images_text="comma"),
    "images-pipe": Variant(images_text="pipe"),
    "extensions-pairs": Variant(extensions_text="pairs"),
    "extensions-capital-Value": Variant(extensions_text="capital_value"),
    "camel-decimal-absent-N/A": Variant(camel_case=True, numbers="money", absent="N/A"),
}
_NUMBERS = (
    "Bedrooms", "Bathrooms", "YearBuilt", "DaysOnMarket", "LotArea", "BuildingArea",
    "ParkingSpots", "Latitude", "Longitude", "SalePrice", "HOAMonth", "RentPrice", "DepositFee",
)  # fmt: skip
_TEXTS = (
    "SaleType", "Status", "CurrencySymbol", "PropertyType", "Url", "MLSNumber", "Tours",
    "Description", "Address", "City", "State", "ZIP", "SpaceType",
)  # fmt: skip


def _value(value: Any) -> Any:
    return (
        None
        if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))
        else value
    )


@pytest.mark.parametrize("server", list(VALUES.values()), ids=list(VALUES), indirect=True)
def test_pulled_values_are_the_stored_values(server: ForeignServer, client: eb.Client) -> None:
    """Every List value, in the variant's text, is read back as the value the server stores:
    numbers, absent prices as missing, SaleType as for_sale/for_rent, ZIP with its leading
    zero, Images as a list, ExtensionColumn as a mapping. No value is guessed or dropped."""
    bodies = server.seed(12)
    with warnings.catch_warnings():
        warnings.simplefilter("error", eb.NormalizeWarning)  # nothing here is unparseable
        frame = eb.pull_listings(client, server.serial, progress=False)
    rows = {row["MLSNumber"]: row for row in frame.to_dict("records")}
    assert sorted(rows) == sorted(body["MLSNumber"] for body in bodies)
    for body in bodies:
        row = rows[body["MLSNumber"]]
        for name in _NUMBERS:
            want, have = body.get(name), _value(row[name])
            assert (have is None and want is None) or have == pytest.approx(want), (name, body)
        for name in _TEXTS:
            assert _value(row[name]) == body.get(name), (name, body)
        assert list(row["Images"]) == body["Images"]
        assert dict(row["ExtensionColumn"]) == {
            e["Key"]: e["value"] for e in body["ExtensionColumn"]
        }


@pytest.mark.parametrize("server", [Variant(numbers="money_everywhere")], indirect=True)
def test_money_text_in_price_fields_is_read(server: ForeignServer, client: eb.Client) -> None:
    """``SalePrice`` as ``"$450,000.00"``: the addendum's variants of price text (currency
    symbols, thousands separators, trailing ``.00``) in every money field read as the number."""
    bodies = server.seed(8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = eb.pull_listings(client, server.serial, progress=False)
    assert not [w for w in caught if issubclass(w.category, eb.NormalizeWarning)]
    rows = {row["MLSNumber"]: row for row in frame.to_dict("records")}
    for body in bodies:
        for name in ("SalePrice", "RentPrice", "DepositFee", "HOAMonth"):
            want, have = body.get(name), _value(rows[body["MLSNumber"]][name])
            assert have == pytest.approx(want) if want is not None else have is None


# --------------------------------------------------------------------------- writes by key


@pytest.mark.parametrize("key_type", ["MLSNumber", "URL", "NewOaks"])
@pytest.mark.parametrize(
    "server",
    [Variant(), Variant(camel_case=True, delete_bare=True)],
    ids=["contract", "camel"],
    indirect=True,
)
def test_update_and_delete_by_each_key_type(
    server: ForeignServer, client: eb.Client, key_type: str
) -> None:
    """Update finds the listing by MLSNumber, URL or NewOaks (its ID) and returns 1, or 0 when
    nothing matches (nothing created); Delete by the same key returns 1 and ignores unknowns."""
    bodies = server.seed(3)
    target = server.listings()[1]
    key = {"MLSNumber": target["MLSNumber"], "URL": target["Url"], "NewOaks": str(target["ID"])}
    unknown = {"MLSNumber": "NOPE00000", "URL": "https://foreign.example/nope", "NewOaks": "1"}
    body = {**bodies[1], "Description": "Updated by key", "SerialNumber": server.serial}
    assert client.listings.update(body, key=key[key_type], key_type=key_type) == 1
    assert server.listings()[1]["Description"] == "Updated by key"
    assert client.listings.update(body, key=unknown[key_type], key_type=key_type) == 0
    assert len(server.listings()) == 3
    deleted = client.listings.delete(
        server.serial, [key[key_type], unknown[key_type]], key_type=key_type
    )
    assert deleted == 1
    assert target["ID"] not in {item["ID"] for item in server.listings()}
    assert len(server.listings()) == 2
