"""Ctrl+C and SIGTERM on the command line: one rule from the first line of main.

:func:`hold`, first thing of every entry point: a stop request (SIGINT, or
SIGTERM as a service manager or ``kill`` sends it) is remembered, not acted
on, while torch and the command load. Without it, a Ctrl+C in the first
seconds printed a ``KeyboardInterrupt`` traceback, and a process a script
started in the background (SIGINT ignored) trained to the end.

:func:`release`, when a one-process command starts its work: from then on a
stop request raises ``KeyboardInterrupt`` (the command says "interrupted",
exit code 130); one held earlier is raised at once.

:func:`stop_on_first_interrupt`, when training starts: the first request
stops the run cleanly after the current batch (one held earlier stops it
before its first step); a second one aborts.

A rank of several processes holds until training: torchrun's agent passes
Ctrl+C (or the window's Stop) to every rank at once, and a rank that died of
it while importing torch or joining the process group would leave the others
waiting for it until the agent's shutdown timeout (30 s). Held, the ranks all
stop before their first step together (``ddp.stop_agreed``).

Imports nothing heavy: it is loaded before torch.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_received = False

Handlers = dict[int, Any]


def _on_main_thread() -> bool:
    # Signal handlers can only be installed from the main thread.
    return threading.current_thread() is threading.main_thread()


def _remember(signum: int, frame: FrameType | None) -> None:
    global _received
    _received = True


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _install(handler: Callable[[int, FrameType | None], Any]) -> Handlers:
    if not _on_main_thread():
        return {}
    return {number: signal.signal(number, handler) for number in STOP_SIGNALS}


def hold() -> Handlers:
    """Remember stop requests from now on; the handlers this replaced."""
    return _install(_remember)


def restore(previous: Handlers) -> None:
    """Put back the handlers :func:`hold` replaced (a command run in-process)."""
    for number, handler in previous.items():
        signal.signal(number, signal.SIG_DFL if handler is None else handler)


def received() -> bool:
    """True if a stop request came while :func:`hold`'s handler was in place."""
    return _received


def _take() -> bool:
    """Whether a request was held; it is acted on now, so forget it."""
    global _received
    held, _received = _received, False
    return held


def is_rank() -> bool:
    """Whether this process is one of several that torchrun started."""
    return os.environ.get("WORLD_SIZE", "1").strip() not in ("", "1")


# A rank whose launcher is gone gets this long to stop after its batch and save.
ORPHAN_GRACE_S = 30.0


def end_with_launcher(poll_s: float = 0.5) -> None:
    """In a rank: when the launcher dies (``kill -9``), stop as if Stop was pressed.

    torchrun's agent ends its ranks when it is told to stop; killed outright,
    it cannot, and the ranks trained on by themselves. A daemon thread watches
    the parent: once this process is orphaned it sends itself SIGTERM (a stop
    request: the ranks agree to stop after a batch and rank 0 saves), and ends
    the process if it is still there ``ORPHAN_GRACE_S`` later.
    """
    if not is_rank():
        return
    launcher = os.getppid()

    def watch() -> None:
        while os.getppid() == launcher:
            time.sleep(poll_s)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(ORPHAN_GRACE_S)
        os._exit(1)

    threading.Thread(target=watch, name="end-with-launcher", daemon=True).start()


def release() -> None:
    """A stop request raises ``KeyboardInterrupt`` from now on; a held one now."""
    _install(_interrupt)
    if _take():
        raise KeyboardInterrupt


def release_to_window() -> None:
    """Python's own handling again (the window installs its Ctrl+C); a held one now."""
    if _on_main_thread():
        restore({signal.SIGINT: signal.default_int_handler, signal.SIGTERM: None})
    if _take():
        raise KeyboardInterrupt


def stop_on_first_interrupt(control: Any) -> None:
    """First stop request stops cleanly after the current batch; a second kills."""
    from workbench.cli.console import say  # loaded by now: keep hold() light

    def handler(signum: int, frame: FrameType | None) -> None:
        say("stopping after this batch (Ctrl+C again to abort)")
        control.request_stop()
        _install(_interrupt)

    _install(handler)
    if _take():  # a request came before the run could train
        handler(signal.SIGINT, None)
