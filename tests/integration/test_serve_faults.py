"""``estatebot serve`` with faults from the terminal: each flag changes what a client sees over
real HTTP, the banner lists them, and a malformed value is a usage error naming the flag. The
rate limit is the same set from Python, on a running emulator's ``faults``."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from clirun import run_cli, serving
from estatebot.emulator import DEMO_API_KEY, DEMO_SERIAL, DEMO_SESSION_KEY, EmulatorServer

API = {"Authorization": DEMO_API_KEY}
SESSION = {"chatrobot-sessionkey": DEMO_SESSION_KEY}


@contextmanager
def served(*flags: str) -> Iterator[tuple[httpx.Client, str]]:
    """An HTTP client of ``estatebot serve --port 0 --seed small FLAGS``, and its banner."""
    with serving("--port", "0", "--seed", "small", *flags) as banner:
        found = re.search(r"ESTATEBOT_BASE_URL=(\S+)", banner)
        assert found is not None, banner
        with httpx.Client(base_url=found.group(1), timeout=30) as client:
            yield client, banner


def list_page(client: httpx.Client) -> httpx.Response:
    body = {"SerialNumber": DEMO_SERIAL, "PageNumber": 1, "PageSize": 5}
    return client.post("/chat/Chatbot/RealEstateList", json=body, headers=SESSION)


def test_stream_fragments_arrive_at_least_the_delay_apart() -> None:
    delay_s = 0.12
    with served("--stream-delay-ms", str(delay_s * 1000)) as (client, banner):
        assert f"{delay_s * 1000:g} ms between the objects of a streamed answer" in banner
        got = client.post(
            "/chat/Chatbot/GetSession", json={"serialNumber": DEMO_SERIAL}, headers=API
        )
        session = got.json()["Data"]["SessionID"]
        ask = {"sessionID": session, "content": "homes in Austin", "stream": True}
        arrivals: list[float] = []
        with client.stream("POST", "/chat/Chat/ClientAsk", json=ask, headers=API) as reply:
            assert reply.status_code == 200
            for _chunk in reply.iter_raw():
                arrivals.append(time.monotonic())
    assert len(arrivals) >= 3  # some fragments and the final object
    gaps = [later - earlier for earlier, later in itertools.pairwise(arrivals)]
    # Each object is sent a full delay after the one before; the network may bunch two a little,
    # never by much on loopback, and never the whole stream.
    assert min(gaps) >= delay_s * 0.7, gaps
    assert arrivals[-1] - arrivals[0] >= delay_s * len(gaps) * 0.95


def test_the_request_past_the_rate_limit_gets_429_with_retry_after() -> None:
    with served("--rate-limit", "3/30") as (client, banner):
        assert "at most 3 requests per 30 s per chatbot, then 429" in banner
        before = [list_page(client).status_code for _ in range(3)]
        assert before == [200, 200, 200]
        refused = list_page(client)
        assert refused.status_code == 429
        envelope = refused.json()
        assert envelope["Code"] == 429
        assert envelope["Message"]  # the chatbot's rate-limit message
        retry_after = int(refused.headers["Retry-After"])
        assert 1 <= retry_after <= 30
        # Per chatbot: a request naming no chatbot is not limited.
        assert client.get("/chat/Chatbot/ModelList", headers=API).status_code == 200
        # A request about the chatbot with a wrong key is not limited: it gets its 401.
        wrong = {"chatrobot-sessionkey": "not-a-key"}
        body = {"SerialNumber": DEMO_SERIAL, "PageNumber": 1, "PageSize": 5}
        refused_key = client.post("/chat/Chatbot/RealEstateList", json=body, headers=wrong)
        assert refused_key.status_code == 401


def test_latency_is_added_to_every_request() -> None:
    latency_s = 0.3
    with served("--latency-ms", str(latency_s * 1000)) as (client, banner):
        assert f"latency {latency_s * 1000:g} ms" in banner
        for _ in range(2):
            started = time.monotonic()
            assert list_page(client).status_code == 200
            assert time.monotonic() - started >= latency_s


def test_a_fail_rate_of_one_fails_every_request_with_500() -> None:
    with served("--fail-rate", "1") as (client, banner):
        assert "100% of requests fail with 500" in banner
        replies = [list_page(client) for _ in range(3)]
        replies.append(client.get("/chat/Chatbot/ModelList", headers=API))
        assert [r.status_code for r in replies] == [500] * 4
        assert all(r.json()["Code"] == 500 for r in replies)


def test_without_faults_the_banner_says_so() -> None:
    with served() as (client, banner):
        assert "faults: none" in banner
        assert list_page(client).status_code == 200


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--rate-limit", "five", "expected N/SECONDS"),
        ("--rate-limit", "5", "expected N/SECONDS"),
        ("--rate-limit", "0/10", "expected N/SECONDS"),
        ("--rate-limit", "5/0", "expected N/SECONDS"),
        ("--rate-limit", "5/-1", "expected N/SECONDS"),
        ("--latency-ms", "-1", ""),
        ("--latency-ms", "nan", ""),
        ("--stream-delay-ms", "-5", ""),
        ("--stream-delay-ms", "inf", ""),
        ("--fail-rate", "nan", ""),
        ("--fail-rate", "-0.1", ""),
    ],
)
def test_a_bad_fault_value_is_a_usage_error_naming_the_flag(
    flag: str, value: str, says: str
) -> None:
    done = run_cli(None, "serve", "--port", "0", flag, value)
    assert done.code == 64, done.text
    assert re.search(rf"Invalid value for '?{flag}'?", done.err), done.err
    assert says in done.err
    assert "emulator on" not in done.out  # refused before it listened


def test_the_limit_set_from_python_is_per_chatbot_of_the_caller_s_own(
    emulator: EmulatorServer,
) -> None:
    other = emulator.add_workspace()
    second = emulator.add_chatbot(emulator.api_key, RateLimitMessage="Slow down, please.")
    emulator.faults.rate_limit = (2, 60)  # type: ignore[assignment]  # a pair is taken too
    mine = {"chatrobot-sessionkey": emulator.session_key}
    theirs = {"chatrobot-sessionkey": other.session_key}

    def page(serial: str, headers: dict[str, str]) -> httpx.Response:
        body = {"SerialNumber": serial, "PageNumber": 1, "PageSize": 5}
        return client.post("/chat/Chatbot/RealEstateList", json=body, headers=headers)

    with httpx.Client(base_url=emulator.base_url, timeout=30) as client:
        assert [page(second, mine).status_code for _ in range(2)] == [200, 200]
        limited = page(second, mine)
        assert limited.status_code == 429
        assert limited.json()["Message"] == "Slow down, please."  # the chatbot's own message
        # Another chatbot has a window of its own.
        assert page(emulator.serial, mine).status_code == 200
        # Another workspace naming this chatbot is neither counted nor limited: it gets the
        # 404 of a chatbot it cannot see, as without the limit.
        assert [page(second, theirs).status_code for _ in range(3)] == [404, 404, 404]
        emulator.faults.rate_limit = None
        assert page(second, mine).status_code == 200
