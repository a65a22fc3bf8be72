"""outcomes_frame: the report's rows from outcomes, dicts and a plan's unchanged listings."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from estatebot.listings.sync.report.apply_report import (
    REPORT_COLUMNS,
    REPORT_DTYPES,
    OpOutcome,
    outcomes_frame,
)


def test_unchanged_listings_are_the_rows_an_outcome_each_would_give() -> None:
    done = OpOutcome("update", "K1", 2, 5, "done", 200, "", 1, 12.5)
    refs = [SimpleNamespace(key=f"U{i}", row=10 + i, id=100 + i) for i in range(3)]
    one_by_one = [OpOutcome("none", r.key, r.row, r.id, "unchanged") for r in refs]
    pd.testing.assert_frame_equal(
        outcomes_frame([done], unchanged=refs), outcomes_frame([done, *one_by_one])
    )


def test_outcomes_and_dicts_keep_their_order_and_the_nullable_dtypes() -> None:
    frame = outcomes_frame(
        [
            {"action": "create", "key": "K2", "outcome": "failed", "code": 500},
            OpOutcome("delete", "K3", None, 9, "done"),
        ]
    )
    assert list(frame.columns) == list(REPORT_COLUMNS)
    assert frame.dtypes.astype(str).to_dict() == {c: str(d) for c, d in REPORT_DTYPES.items()}
    assert list(frame["key"]) == ["K2", "K3"]
    assert frame["code"].iloc[0] == 500
    assert frame["code"].isna().iloc[1]
    assert frame["row"].isna().all()


def test_no_rows_is_an_empty_report_with_its_columns() -> None:
    frame = outcomes_frame([])
    assert len(frame) == 0
    assert list(frame.columns) == list(REPORT_COLUMNS)
