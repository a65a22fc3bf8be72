"""Settings every test shares.

The record of values sent (``estatebot.listings.remote.sent_record``) lives in a per-user
folder by
default; tests keep theirs in a temporary folder, so no run reads or writes the user's own. Each
test runs in a temporary folder of its own, since what an apply or the command line writes by
default (a backup, a plan) goes to the current folder: never into the project.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("ESTATEBOT_STATE_DIR", str(folder))
    return folder


@pytest.fixture(autouse=True)
def _own_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(folder)
    return folder
