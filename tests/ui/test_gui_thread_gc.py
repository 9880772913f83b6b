"""While the window runs, only the GUI thread collects reference cycles."""

from __future__ import annotations

import gc
import threading

from workbench.ui.gui_thread_gc import collect_on_gui_thread


def _make_cycles(count: int) -> None:
    for _ in range(count):
        cycle: list[object] = []
        cycle.append(cycle)


def test_a_worker_thread_never_collects_and_the_gui_thread_does(qtbot):
    collected_in: list[str] = []

    def record(phase: str, _info: dict) -> None:
        if phase == "start":
            collected_in.append(threading.current_thread().name)

    gc.enable()  # as outside the window (the tests' fixture turned it off)
    gc.callbacks.append(record)
    try:
        with collect_on_gui_thread(interval_s=0.05):
            worker = threading.Thread(
                target=_make_cycles, args=(20 * gc.get_threshold()[0],), name="w"
            )
            worker.start()
            worker.join()
            assert collected_in == []  # far past the threshold, yet untouched
            qtbot.waitUntil(lambda: "MainThread" in collected_in, timeout=2000)
        assert gc.isenabled()  # as it was before the block
    finally:
        gc.callbacks.remove(record)
        gc.disable()
    assert set(collected_in) == {"MainThread"}
