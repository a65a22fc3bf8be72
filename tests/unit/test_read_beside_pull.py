"""The sheet is read while the listings are pulled: both at once, errors as one after the other."""

from __future__ import annotations

import threading
import time

import pytest

from estatebot.listings.sync.read_beside_pull import read_beside_pull


def test_the_pull_runs_while_the_sheet_is_read() -> None:
    pulling = threading.Event()
    read_done = threading.Event()

    def pull() -> str:
        pulling.set()
        assert read_done.wait(5), "the read never finished"
        return "listings"

    def read() -> str:
        # The read waits for the pull to have begun: one after the other, this would hang.
        assert pulling.wait(5), "the pull did not start while the sheet was read"
        read_done.set()
        return "sheet"

    assert read_beside_pull(read, pull) == ("sheet", "listings")


def test_a_sheet_that_cannot_be_read_raises_at_once_without_waiting_for_the_pull() -> None:
    release = threading.Event()

    def pull() -> str:
        release.wait(10)
        return "listings"

    def read() -> str:
        raise ValueError("row 2, column Price: 'abc' is not a number")

    started = time.monotonic()
    with pytest.raises(ValueError, match="row 2"):
        read_beside_pull(read, pull)
    assert time.monotonic() - started < 5
    release.set()


def test_a_failed_pull_raises_once_the_sheet_is_read() -> None:
    read_calls: list[str] = []

    def pull() -> str:
        raise ConnectionError("the service did not answer")

    def read() -> str:
        read_calls.append("read")
        return "sheet"

    with pytest.raises(ConnectionError, match="did not answer"):
        read_beside_pull(read, pull)
    assert read_calls == ["read"]


def test_when_both_fail_the_sheets_error_comes_first() -> None:
    def pull() -> str:
        raise ConnectionError("the service did not answer")

    def read() -> str:
        time.sleep(0.05)  # the pull has failed by now
        raise ValueError("no listing rows")

    with pytest.raises(ValueError, match="no listing rows"):
        read_beside_pull(read, pull)
