"""The trainer's first step waits until the window has set its views up.

The GUI thread's work for a new run (plots cleared and repainted, the freeze
tree rebuilt) used to run while the first steps trained, and took their CPU.
"""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import Qt

from workbench.core import events as E
from workbench.ui import trainer_thread

from .helpers import FAST, run_to_end

pytestmark = pytest.mark.gui


def _slow_start_handler(window, seconds: float) -> threading.Event:
    """Make the window's handling of RunStarted take ``seconds``; set when done."""
    handled = threading.Event()

    def on_event(event: object) -> None:
        if isinstance(event, E.RunStarted):
            time.sleep(seconds)  # the GUI thread is busy setting views up
            handled.set()

    window.controller.event.connect(on_event)
    return handled


def _handled_at_each_step_batch(window, handled: threading.Event) -> list[bool]:
    """Whether ``handled`` was set as each step batch was sent (trainer thread)."""
    seen: list[bool] = []

    def on_steps(_batch: object) -> None:
        seen.append(handled.is_set())

    window.controller.trainer.steps.connect(
        on_steps, Qt.ConnectionType.DirectConnection
    )
    return seen


def test_the_first_step_waits_for_the_gui_threads_start_handling(qtbot, window):
    handled = _slow_start_handler(window, 0.3)
    at_first_step = _handled_at_each_step_batch(window, handled)
    window.apply_config(FAST)
    run_to_end(qtbot, window)
    # A 4-step mlp run trains its first step in milliseconds: without the wait it
    # was sent long before the GUI thread got through its 300 ms.
    assert at_first_step, "no steps were sent"
    assert at_first_step[0] is True


def test_a_busy_gui_thread_delays_the_first_step_only_so_long(
    qtbot, window, monkeypatch
):
    monkeypatch.setattr(trainer_thread, "CATCH_UP_MAX_S", 0.1)
    handled = _slow_start_handler(window, 1.5)
    at_first_step = _handled_at_each_step_batch(window, handled)
    window.apply_config(FAST)
    run_to_end(qtbot, window)
    # The trainer gave up waiting after 0.1 s and trained while the GUI was busy.
    assert at_first_step[0] is False


def test_stop_ends_the_wait_at_once(qtbot, window, monkeypatch):
    # Only Stop can end this wait early: the GUI thread is busy all along.
    monkeypatch.setattr(trainer_thread, "CATCH_UP_MAX_S", 30.0)
    trainer = window.controller.trainer
    waited: list[float] = []

    def on_event(event: object) -> None:
        if isinstance(event, E.RunStarted):
            window.controller.stop()
            started = time.monotonic()
            while not trainer.isFinished() and time.monotonic() - started < 5.0:
                time.sleep(0.01)
            waited.append(time.monotonic() - started)

    window.controller.event.connect(on_event)
    window.apply_config(FAST)
    run_to_end(qtbot, window)
    assert len(waited) == 1
    # Without Stop ending it, the wait would last 30 s (the loop gives up at 5).
    assert waited[0] < 5.0, "the trainer kept waiting after Stop"
