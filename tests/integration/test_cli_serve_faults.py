"""``estatebot serve --hallucinate-rate``: the emulator on the command line, misstating answers."""

from __future__ import annotations

import re

import estatebot as eb
from clirun import serving
from estatebot.emulator import DEMO_SERIAL


def test_serve_with_hallucinate_rate_misstates_answers() -> None:
    faults = ("--hallucinate-rate", "1", "--fault-seed", "4")
    with serving("--port", "0", "--seed", "small", *faults) as seen:
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
