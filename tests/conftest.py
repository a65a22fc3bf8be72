"""Settings every test shares.

The record of values sent (``estatebot.listings.sync.sent``) lives in a per-user folder by
default; tests keep theirs in a temporary folder, so no run reads or writes the user's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("ESTATEBOT_STATE_DIR", str(folder))
    return folder
