"""Run a batch of chat test cases against a chatbot and collect the results as a frame.

>>> results = run_chat_tests(client, serial, "chat_tests.xlsx")   # doctest: +SKIP
>>> results.summary(); results.to_excel("results.xlsx")           # doctest: +SKIP

Cases and their expectations are described in :mod:`estatebot.chat.expectations`. The run uses a
thread pool (the sync client is thread-safe), never ``asyncio.run``, so it works from a script and
inside Jupyter's running event loop alike.

This module is where these names are imported from; the code is in :mod:`estatebot.chat.harness`
(:mod:`~estatebot.chat.harness.running`, :mod:`~estatebot.chat.harness.results` and
:mod:`~estatebot.chat.harness.comparison`).
"""

from __future__ import annotations

from estatebot.chat.harness.comparison import RunLike as RunLike
from estatebot.chat.harness.comparison import compare_chat_runs
from estatebot.chat.harness.results import RESULT_COLUMNS, ChatTestResults, main_exit_code
from estatebot.chat.harness.running import (
    DEFAULT_RATE_LIMIT_WAIT,
    ChatClient,
    rate_limit_wait,
    run_chat_tests,
)

__all__ = [
    "DEFAULT_RATE_LIMIT_WAIT",
    "RESULT_COLUMNS",
    "ChatClient",
    "ChatTestResults",
    "compare_chat_runs",
    "main_exit_code",
    "rate_limit_wait",
    "run_chat_tests",
]
