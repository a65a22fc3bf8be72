"""Peak resident memory of one stretch of work, in the process that does it (Linux).

``getrusage``'s ``ru_maxrss`` cannot be used for this in a child process: Linux carries the high
water mark over ``fork`` and ``exec``, so a child started by a parent that once held more memory
reports the parent's peak before it has done anything. (The read's benchmark measured 385 MB
that way when the read itself peaked at 287 MB.) Instead the process's own high water mark
(``VmHWM``) is reset just before the work, by writing ``5`` to ``/proc/self/clear_refs``, and read
after it.
"""

from __future__ import annotations

import resource


def _status(field: str) -> int:
    """A size field of ``/proc/self/status``, in bytes."""
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/self/status has no {field}")


def resident() -> int:
    """The process's resident size now, in bytes."""
    with open("/proc/self/statm", encoding="ascii") as handle:
        return int(handle.read().split()[1]) * resource.getpagesize()


def reset_peak() -> int:
    """Start measuring: reset the high water mark to the resident size now, and return that.

    Raises RuntimeError when the kernel does not allow the reset (before Linux 4.0), rather than
    measuring something else.
    """
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
    except OSError as error:
        raise RuntimeError(f"cannot reset the peak resident size: {error}") from None
    return resident()


def peak() -> int:
    """The highest resident size since :func:`reset_peak`, in bytes."""
    return _status("VmHWM")
