"""The window's trainer thread asks for a lower CPU priority than the GUI's."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from workbench.core.host import threads
from workbench.ui import trainer_thread

from .helpers import FAST, run_to_end

pytestmark = [
    pytest.mark.gui,
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="per-thread nice values"
    ),
]


def test_the_trainer_thread_runs_below_the_gui_thread(qtbot, window, monkeypatch):
    seen: list[tuple[int, int | None]] = []
    lower = trainer_thread.lower_training_priority

    def recording() -> int | None:
        nice = lower()
        seen.append((threading.get_native_id(), nice))
        return nice

    monkeypatch.setattr(trainer_thread, "lower_training_priority", recording)
    window.apply_config(FAST)
    run_to_end(qtbot, window)
    base = os.getpriority(os.PRIO_PROCESS, 0)  # the GUI thread's, unchanged
    assert len(seen) == 1
    tid, nice = seen[0]
    assert tid != threading.get_native_id()
    assert nice == base + threads.TRAINER_NICE
