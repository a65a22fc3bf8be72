"""Fact-checking against the real emulator: run_chat_tests with expect_grounded, the
hallucination fault as ground truth, and the GroundingChecker the chat panel uses."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest

import estatebot as eb
from estatebot.chat.factcheck import CONTRADICTED, SUPPORTED, UNKNOWN_LISTING, GroundingChecker
from estatebot.emulator import EmulatorServer, running


@pytest.fixture(scope="module")
def listings() -> pd.DataFrame:
    with running(seed="demo") as server, _client(server) as client:
        return eb.pull_listings(client, server.serial, progress=False)


def _client(server: EmulatorServer) -> eb.Client:
    return eb.Client(
        base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
    )


def questions(listings: pd.DataFrame) -> list[str]:
    """A few hundred questions over the demo market: searches of every kind and MLS look-ups."""
    asked: list[str] = []
    for city in sorted(listings["City"].dropna().unique()):
        for beds in (1, 2, 3, 4):
            asked += [
                f"{beds} bedroom homes in {city}",
                f"{beds} bed rentals in {city}",
                f"{beds} bd condos in {city} under $900k",
            ]
        asked += [
            f"townhouses in {city}",
            f"sold homes in {city}",
            f"homes in {city} between $300k and $600k",
            f"apartments for rent in {city} under $3,000/month",
            f"Any single family homes in {city}?",
            f"Hello, what can you do in {city}?",
        ]
    asked += [f"Tell me about MLS# {mls}" for mls in listings["MLSNumber"].head(160)]
    return asked


def _cases(asked: list[str]) -> list[dict[str, object]]:
    return [{"question": q, "expect_grounded": True} for q in asked]


@pytest.fixture(scope="module")
def hallucinating() -> Iterator[EmulatorServer]:
    with running(seed="demo", hallucinate_rate=0.3, fault_seed=7) as server:
        yield server


def test_grounded_answers_raise_no_false_alarm(listings: pd.DataFrame) -> None:
    asked = questions(listings)
    assert len(asked) >= 300
    with running(seed="demo") as server, _client(server) as client:
        eb.pull_listings(client, server.serial, progress=False)
        one_pull = server.request_counts["RealEstateList"]
        results = eb.run_chat_tests(client, server.serial, _cases(asked), progress=False)
        pulls = server.request_counts["RealEstateList"] - one_pull
    frame = results.frame
    false_alarms = frame[~frame["passed"]]
    assert false_alarms.empty, false_alarms[["question", "why"]].to_string()
    assert (frame["claims_contradicted"] == 0).all()
    assert (frame["claims_unknown"] == 0).all()
    assert frame["claims_supported"].sum() > 1000
    assert set(results.claims["verdict"]) == {SUPPORTED}
    assert pulls == one_pull  # the listings were pulled once for the whole run


def test_every_falsified_answer_is_caught(
    hallucinating: EmulatorServer, listings: pd.DataFrame
) -> None:
    asked = questions(listings)
    with _client(hallucinating) as client:
        results = eb.run_chat_tests(
            client, hallucinating.serial, _cases(asked), concurrency=4, progress=False
        )
    frame = results.frame
    falsified = hallucinating.falsified
    lied = frame["message_id"].isin(list(falsified))
    assert lied.sum() >= 40  # enough of each kind to mean something
    assert {f.kind for f in falsified.values()} == {"price", "bedrooms", "invented"}
    missed = frame[lied & frame["passed"]]
    false_alarms = frame[~lied & ~frame["passed"]]
    assert missed.empty, missed[["question", "answer"]].to_string()
    assert false_alarms.empty, false_alarms[["question", "why"]].to_string()

    claims = results.claims
    for message_id, truth in falsified.items():
        row = frame[frame["message_id"] == message_id].iloc[0]
        mine = claims[claims["question"] == row["question"]]
        if truth.kind == "invented":
            unknown = mine[mine["verdict"] == UNKNOWN_LISTING]
            assert not unknown.empty
            assert "unknown listing" in row["why"]
            continue
        wrong = mine[(mine["verdict"] == CONTRADICTED) & (mine["listing"] == truth.mls_number)]
        assert wrong["field"].tolist() == [truth.field], row["answer"]
        assert wrong["claimed_value"].iloc[0] == truth.stated_value
        assert wrong["listing_value"].iloc[0] == truth.true_value
        assert truth.mls_number in row["why"]
        assert "claimed, the listing says" in row["why"]


def test_the_same_fault_seed_falsifies_the_same_answers() -> None:
    asked = [f"{beds} bedroom homes in Boston" for beds in (1, 2, 3, 4)] * 2
    seen = []
    for _ in range(2):
        with running(seed="demo", hallucinate_rate=0.5, fault_seed=3) as server:
            with _client(server) as client:
                session = client.chat.create_session(server.serial)
                seen.append([client.chat.ask(session, q).content for q in asked])
            assert server.falsified
    assert seen[0] == seen[1]
    assert seen[0][:4] == seen[0][4:]  # one question, one answer, whatever came between


def test_cases_without_expect_grounded_pull_nothing(emulator: EmulatorServer) -> None:
    with _client(emulator) as client:
        results = eb.run_chat_tests(
            client, emulator.serial, ["3 bedroom homes in Austin"], progress=False
        )
    assert emulator.request_counts["RealEstateList"] == 0
    assert "claims_supported" not in results.frame.columns
    assert results.claims.empty
    assert {"case", "question", "verdict"} <= set(results.claims.columns)


def test_expect_grounded_false_reports_claims_without_failing(emulator: EmulatorServer) -> None:
    emulator.faults.hallucinate_rate = 1.0
    cases = pd.DataFrame(
        {
            "question": ["3 bedroom homes in Austin", "condos in Miami"],
            "expect_grounded": ["false", "true"],
        }
    )
    with _client(emulator) as client:
        frame = eb.run_chat_tests(client, emulator.serial, cases, progress=False).frame
    assert frame["passed"].tolist() == [True, False]
    assert frame["expect_grounded_pass"].tolist()[1] is False
    assert pd.isna(frame["expect_grounded_pass"].iloc[0])
    assert (frame["claims_contradicted"] + frame["claims_unknown"] > 0).all()
    assert frame["why"].iloc[1].startswith("expect_grounded: ")


def test_a_bad_expect_grounded_cell_names_row_column_and_value(emulator: EmulatorServer) -> None:
    with _client(emulator) as client, pytest.raises(eb.SheetError) as caught:
        eb.run_chat_tests(client, emulator.serial, [{"question": "hi", "expect_grounded": "maybe"}])
    message = str(caught.value)
    assert "expect_grounded" in message
    assert "maybe" in message


def test_the_checker_pulls_once_and_again_on_refresh(emulator: EmulatorServer) -> None:
    with _client(emulator) as client:
        checker = GroundingChecker(client, emulator.serial)
        session = client.chat.create_session(emulator.serial)
        answer = client.chat.ask(session, "condos in Miami").content
        claims = checker.check(answer)
        pulled = emulator.request_counts["RealEstateList"]
        assert pulled >= 1
        assert not claims.empty
        assert set(claims["verdict"]) == {SUPPORTED}
        assert checker.badge(answer) == ""
        checker.check(answer)
        assert emulator.request_counts["RealEstateList"] == pulled

        # The listing changes on the service: the next check still uses what was pulled,
        # until refresh() (the panel's New session) pulls again.
        mls = claims["listing"].iloc[0]
        row = checker.listings.set_index("MLSNumber").loc[mls]
        client.listings.delete(emulator.serial, keys=[mls], key_type="MLSNumber")
        assert set(checker.check(answer)["verdict"]) == {SUPPORTED}
        assert checker.refresh() == len(checker.listings)
        assert emulator.request_counts["RealEstateList"] == 2 * pulled
        after = checker.check(answer)
        assert (after["verdict"] == UNKNOWN_LISTING).any()
        assert "not in your listings" in checker.badge(answer)
        assert row["City"] == "Miami"
    assert "GroundingChecker(serial=" in repr(checker)
    assert emulator.api_key not in repr(checker)
