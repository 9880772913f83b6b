"""Ctrl+C on the command line: stop after the batch, and keep an early one.

:func:`stop_on_first_interrupt`: the first Ctrl+C of a training command stops
it cleanly after the current batch; a second one aborts.

:func:`install_if_rank`: a rank of several processes keeps a Ctrl+C that comes
before training starts.
torchrun's agent passes Ctrl+C (or the window's Stop) to every rank at once. A
rank still importing torch or joining the process group would die of it with a
``KeyboardInterrupt`` traceback, and the others would wait for it until the
agent's shutdown timeout (30 s). Installed first thing in such a process, this
handler only remembers the signal; the training command then stops before its
first step, together with the other ranks (``ddp.stop_agreed``).
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Any

from workbench.cli.console import say

_received = False


def install_if_rank() -> None:
    """Remember SIGINT instead of raising, in a process that torchrun started."""
    if os.environ.get("WORLD_SIZE", "1").strip() not in ("", "1"):
        signal.signal(signal.SIGINT, _remember)


def _remember(signum: int, frame: FrameType | None) -> None:
    global _received
    _received = True


def received() -> bool:
    """True if SIGINT came while :func:`install_if_rank`'s handler was in place."""
    return _received


def stop_on_first_interrupt(control: Any) -> None:
    """First Ctrl+C stops cleanly after the current batch; a second one kills."""

    def handler(signum: int, frame: FrameType | None) -> None:
        say("stopping after this batch (Ctrl+C again to abort)")
        control.request_stop()
        signal.signal(signal.SIGINT, signal.default_int_handler)

    # Signal handlers can only be installed from the main thread.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)
    if received():  # a rank got Ctrl+C before it could train
        handler(signal.SIGINT, None)
