"""``estatebot serve --hallucinate-rate``: the emulator on the command line, misstating answers."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import estatebot as eb
from estatebot.emulator import DEMO_SERIAL


def test_serve_with_hallucinate_rate_misstates_answers() -> None:
    script = "from estatebot.cli import main; main()"
    args = [
        "serve",
        "--port",
        "0",
        "--seed",
        "small",
        "--hallucinate-rate",
        "1",
        "--fault-seed",
        "4",
    ]
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert child.stdout is not None
        seen = ""
        while "demo-session-key" not in seen:
            line = child.stdout.readline()
            assert line, f"serve ended early: {seen}"
            seen += line
        found = re.search(r"ESTATEBOT_BASE_URL=(\S+)", seen)
        assert found is not None, seen
        with eb.Client(
            base_url=found.group(1), api_key="demo-api-key", session_key="demo-session-key"
        ) as client:
            listings = eb.pull_listings(client, DEMO_SERIAL, progress=False)
            session = client.chat.create_session(DEMO_SERIAL)
            answers = [
                client.chat.ask(session, q).content
                for q in ("homes in Austin", "homes in Denver", "homes in Miami")
            ]
        verdicts = {v for a in answers for v in eb.fact_check(a, listings)["verdict"]}
        assert verdicts & {"contradicted", "unknown listing"}
    finally:
        child.terminate()
        child.wait(timeout=10)
