"""A sync's two inputs fetched at once: the sheet read while the listings are pulled.

The pull spends most of its time waiting on the network, and the read most of its time in
calamine's compiled parse with the interpreter lock released, so the two overlap instead of
adding up.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["read_beside_pull"]

SheetT = TypeVar("SheetT")
PulledT = TypeVar("PulledT")


def read_beside_pull(
    read: Callable[[], SheetT], pull: Callable[[], PulledT]
) -> tuple[SheetT, PulledT]:
    """``read()`` on the calling thread while ``pull()`` runs on a thread of its own; both
    results, once both are done.

    Errors come as they would one after the other, the read's first: a sheet that cannot be
    read raises its error at once (the pull, left running, ends on its own and is not waited
    for), and a failed pull raises its error once the sheet is read.
    """
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="estatebot-pull")
    try:
        pulled = pool.submit(pull)
        sheet = read()
        return sheet, pulled.result()
    finally:
        # After an error (or Ctrl-C) the pull is not waited for: its result is not wanted.
        pool.shutdown(wait=False, cancel_futures=True)
