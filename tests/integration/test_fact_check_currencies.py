"""Fact-checking against the real emulator when the listings are not all in dollars: its answers
write each price with the listing's own marker (``€450,000``, ``USD450,000``, ``CHF450,000``),
and the fact-check reads every one, raises no false alarm and catches every misstated price."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import estatebot as eb
from estatebot.chat.factcheck import CONTRADICTED, SUPPORTED, GroundingChecker
from estatebot.emulator import EmulatorServer, running
from estatebot.emulator.seed import SAMPLE_LISTINGS

#: The currency each sample listing is put in, in turn.
CURRENCIES = ("€", "USD", "US$", "£", "EUR", "CHF", "$")


@pytest.fixture(scope="module")
def seed_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    items = [
        {**item, "CurrencySymbol": CURRENCIES[i % len(CURRENCIES)]}
        for i, item in enumerate(SAMPLE_LISTINGS)
    ]
    path = tmp_path_factory.mktemp("seed") / "listings.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def _client(server: EmulatorServer) -> eb.Client:
    return eb.Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    )


def _questions() -> list[str]:
    asked = [f"Tell me about MLS# {item['MLSNumber']}" for item in SAMPLE_LISTINGS]
    for city in sorted({str(item["City"]) for item in SAMPLE_LISTINGS}):
        asked += [f"homes for sale in {city}", f"rentals in {city}", f"2 bedroom homes in {city}"]
    return asked


@pytest.fixture(scope="module")
def honest(seed_file: Path) -> Iterator[EmulatorServer]:
    with running(seed=seed_file) as server:
        yield server


@pytest.fixture(scope="module")
def listings(honest: EmulatorServer) -> pd.DataFrame:
    with _client(honest) as client:
        return eb.pull_listings(client, honest.serial, progress=False)


def _cases() -> list[dict[str, object]]:
    return [{"question": q, "expect_grounded": True} for q in _questions()]


def test_prices_in_every_currency_are_read_and_hold(
    honest: EmulatorServer, listings: pd.DataFrame
) -> None:
    assert set(listings["CurrencySymbol"]) == set(CURRENCIES)
    with _client(honest) as client:
        results = eb.run_chat_tests(client, honest.serial, _cases(), progress=False)
    frame = results.frame
    false_alarms = frame[~frame["passed"]]
    assert false_alarms.empty, false_alarms[["question", "why"]].to_string()
    claims = results.claims
    money = claims[claims["field"].isin(["price", "rent"])]
    assert set(money["verdict"]) == {SUPPORTED}
    # Every listing's price was stated, and read, with its own currency marker.
    currency_of = dict(zip(listings["MLSNumber"], listings["CurrencySymbol"], strict=True))
    for mls, symbol in currency_of.items():
        stated = money[money["listing"] == mls]["claimed"]
        assert not stated.empty, mls
        assert all(text.startswith(symbol) for text in stated), (mls, stated.tolist())


def test_a_price_in_the_wrong_currency_is_caught(
    honest: EmulatorServer, listings: pd.DataFrame
) -> None:
    with _client(honest) as client:
        checker = GroundingChecker(client, honest.serial)
        for item in listings.to_dict(orient="records"):
            mls, symbol = item["MLSNumber"], str(item["CurrencySymbol"])
            amount = item["SalePrice"] if item["SaleType"] == "for_sale" else item["RentPrice"]
            number = f"{float(amount):,.0f}"
            right = "$" if symbol in ("USD", "US$", "$") else symbol
            wrong = "USD " if symbol in ("€", "EUR") else "€"
            holds = checker.check(f"MLS# {mls} is listed at {right}{number}.")
            fails = checker.check(f"MLS# {mls} is listed at {wrong}{number}.")
            assert holds["verdict"].tolist() == [SUPPORTED], (mls, right)
            assert fails["verdict"].tolist() == [CONTRADICTED], (mls, wrong)
            assert number in str(fails["listing_value"].iloc[0])


@pytest.fixture(scope="module")
def lying(seed_file: Path) -> Iterator[EmulatorServer]:
    with running(seed=seed_file, hallucinate_rate=0.6, fault_seed=11) as server:
        yield server


def test_every_misstated_price_in_any_currency_is_caught(lying: EmulatorServer) -> None:
    with _client(lying) as client:
        results = eb.run_chat_tests(client, lying.serial, _cases(), progress=False)
    frame = results.frame
    falsified = lying.falsified
    lied = frame["message_id"].isin(list(falsified))
    missed = frame[lied & frame["passed"]]
    false_alarms = frame[~lied & ~frame["passed"]]
    assert missed.empty, missed[["question", "answer"]].to_string()
    assert false_alarms.empty, false_alarms[["question", "why"]].to_string()
    prices = [truth for truth in falsified.values() if truth.kind == "price"]
    assert len(prices) >= 5  # enough misstated prices to mean something
    claims = results.claims
    for message_id, truth in falsified.items():
        if truth.kind != "price":
            continue
        question = frame[frame["message_id"] == message_id].iloc[0]["question"]
        mine = claims[(claims["question"] == question) & (claims["listing"] == truth.mls_number)]
        wrong = mine[mine["verdict"] == CONTRADICTED]
        assert wrong["field"].tolist() == [truth.field]
        assert wrong["claimed_value"].iloc[0] == truth.stated_value
        assert wrong["listing_value"].iloc[0] == truth.true_value
