"""The chat-testing notebook's code raises no deprecation or future warning (pandas' own
``Pandas4Warning`` among them): each would be a red box in the notebook. The same calls as
notebook 02, against the emulator, with every such warning an error."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import estatebot as eb
from labpages import REPO

CASES = REPO / "sample_data" / "chat_tests.xlsx"


@pytest.fixture
def strict() -> Iterator[None]:
    """Every deprecation and future warning raised as an error while the test runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("error", FutureWarning)
        warnings.simplefilter("error", pd.errors.PandasChangeWarning)
        yield


def test_pandas4_warning_is_a_deprecation_warning_so_the_filter_reaches_it() -> None:
    assert issubclass(pd.errors.Pandas4Warning, DeprecationWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(pd.errors.Pandas4Warning):
            warnings.warn("a change in pandas 4", pd.errors.Pandas4Warning, stacklevel=1)


@pytest.mark.usefixtures("strict")
def test_the_notebook_shows_the_cases_sheet_without_a_warning() -> None:
    # The notebook's own cell: the engine named, as pandas 4 will want.
    shown = pd.read_excel(CASES, engine="calamine").head(8)
    assert "question" in shown.columns
    assert len(shown) == 8


def test_the_notebook_cell_as_it_was_warns_so_this_test_can_fail() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pd.read_excel(CASES)
    assert any(issubclass(w.category, pd.errors.Pandas4Warning) for w in caught)


@pytest.mark.usefixtures("strict")
def test_a_chat_test_run_and_its_views_raise_no_warning(tmp_path: Path) -> None:
    with (
        eb.emulator.running(seed="demo") as server,
        eb.Client(
            base_url=server.base_url, api_key=server.api_key, session_key=server.session_key
        ) as client,
    ):
        results = eb.run_chat_tests(client, server.serial, CASES, concurrency=4, progress=False)
        listings = eb.pull_listings(client, server.serial, progress=False, sent_values=False)
    assert results.ok, results.failures[["case", "why", "error"]]
    summary = results.summary()
    shown: list[Any] = [
        results._repr_html_(),
        repr(results),
        pd.Series(summary.counts, name="value", dtype=object).to_frame(),
        results.plot(),
        results.failures,
        results.claims,
    ]
    assert all(item is not None for item in shown)
    answer = results.frame.loc[results.frame["claims_supported"] > 0, "answer"].iloc[0]
    claims = eb.fact_check(answer, listings)
    assert (claims["verdict"] == "supported").all()
    again = eb.ChatTestResults.from_excel(results.to_excel(tmp_path / "results.xlsx"))
    assert len(again) == len(results)


@pytest.mark.usefixtures("strict")
def test_a_misstating_chatbot_run_raises_no_warning() -> None:
    with (
        eb.emulator.running(hallucinate_rate=0.35, fault_seed=1) as liar,
        eb.Client(
            base_url=liar.base_url, api_key=liar.api_key, session_key=liar.session_key
        ) as client,
    ):
        grounded = eb.run_chat_tests(client, liar.serial, CASES, concurrency=4, progress=False)
    doubtful = grounded.claims[grounded.claims["verdict"] != "supported"]
    assert not doubtful.empty
    frame = grounded.frame
    failed = frame.loc[~frame["passed"], ["case", "claims_contradicted", "claims_unknown", "why"]]
    assert not failed.empty
    assert grounded._repr_html_()
