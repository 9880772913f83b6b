"""Finding the processes of a job by a text their command lines share.

torchrun starts each rank in a session of its own, so neither the launcher's
process group nor (once the launcher is gone) its children name them all. A
job's processes share their config file's path on their command lines: that
finds them, reparented or not. Linux only (``/proc``); elsewhere none are found.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

PROC = Path("/proc")


def processes_with(marker: str) -> list[int]:
    """Live processes (not zombies, not this one) whose command line has ``marker``."""
    found: list[int] = []
    needle = marker.encode()
    try:
        entries = list(PROC.iterdir())
    except OSError:
        return found
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "cmdline").read_bytes():
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # it ended while we looked
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return sorted(found)


def signal_all(pids: list[int], sig: signal.Signals) -> None:
    """Send ``sig`` to each of ``pids`` that still exists."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
