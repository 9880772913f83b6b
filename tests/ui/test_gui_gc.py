"""Cycles the GUI thread leaves behind are freed in the GUI thread, not a worker.

A worker thread that allocates a lot would otherwise run the collector and
destroy GUI objects off their thread (a Qt crash or deadlock: it once hung CI).
"""

from __future__ import annotations

import gc
import threading
from typing import Any

from workbench.ui.tasks import TaskThread
from workbench.ui.trainer_thread import TrainerThread


class _Marker:
    """Part of a reference cycle; records the thread that frees it."""

    def __init__(self, freed_in: list[str]) -> None:
        self.freed_in = freed_in
        self.me = self  # a cycle: only the collector frees it

    def __del__(self) -> None:
        self.freed_in.append(threading.current_thread().name)


def _allocate_cycles(progress: Any, cancel: Any) -> int:
    # Far past every generation's threshold: with automatic collection on,
    # this thread would collect (and free the marker) many times over.
    for _ in range(200_000):
        cycle: list[Any] = []
        cycle.append(cycle)
    return gc.get_count()[0]


def test_a_task_thread_leaves_collection_to_the_gui_thread(qtbot: Any) -> None:
    freed_in: list[str] = []
    task = TaskThread(_allocate_cycles, name="allocator")
    blocker = qtbot.waitSignal(task.succeeded, timeout=30_000)
    gc.collect()  # counts at zero: the GUI thread will not collect right away
    _Marker(freed_in)  # dropped at once: garbage in a cycle
    task.start()
    blocker.wait()
    task.wait()
    # The GUI thread's timer collects within about a second (it may already
    # have, while the worker ran); the worker itself never does.
    qtbot.waitUntil(lambda: bool(freed_in), timeout=5_000)
    assert freed_in == [threading.main_thread().name], "collected off the GUI thread"


def test_a_trainer_thread_pins_collection_too(qtbot: Any) -> None:
    TrainerThread()
    assert not gc.isenabled()


def test_collection_turned_back_on_is_off_again_before_the_next_thread(
    qtbot: Any,
) -> None:
    TrainerThread()
    gc.enable()  # a library, or a user's model file, turns it back on
    try:
        TaskThread(_allocate_cycles, name="next")
        assert not gc.isenabled()
    finally:
        gc.disable()
