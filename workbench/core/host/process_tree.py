"""Finding the processes of a job by a text their command lines share.

torchrun starts each rank in a session of its own, so neither the launcher's
process group nor (once the launcher is gone) its children name them all. A
job's processes share their config file's path on their command lines: that
finds them, reparented or not. ``psutil`` reads the command lines on Linux,
macOS and Windows alike; a process whose command line this user may not read
is not one of the job's.
"""

from __future__ import annotations

import contextlib
import os
import signal

import psutil

_GONE = (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` is running (another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def processes_with(marker: str) -> list[int]:
    """Live processes (not zombies, not this one) whose command line has ``marker``."""
    found: list[int] = []
    me = os.getpid()
    # An attribute that cannot be read (the process ended, or is another
    # user's) comes back as None instead of raising.
    for proc in psutil.process_iter(["cmdline", "status"]):
        if proc.pid == me:
            continue
        cmdline = proc.info["cmdline"]
        # The arguments joined as the kernel stores them (NUL-separated), so a
        # marker matches exactly where it matched /proc/<pid>/cmdline.
        if not cmdline or marker not in "\0".join(cmdline):
            continue
        if proc.info["status"] not in (None, *_GONE):
            found.append(proc.pid)
    return sorted(found)


def signal_all(pids: list[int], sig: signal.Signals) -> None:
    """Send ``sig`` to each of ``pids`` that still exists."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
