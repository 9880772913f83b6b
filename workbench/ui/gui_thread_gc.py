"""Python's cycle collector runs on the GUI thread only, while the window runs.

CPython collects in whichever thread crosses the allocation threshold. In a
trainer or task thread, a collection deletes the window's QObjects caught in
reference cycles off the GUI thread, and can deadlock with it: the worker
holds Qt's lock on the object and waits for the GIL, which the GUI thread
holds while it waits for that lock (seen in the suite: a task thread loading
drawings against the main thread painting a plot). So automatic collection is
off while the window runs, and pyqtgraph's ``GarbageCollector`` collects on a
GUI-thread timer, with the interpreter's own thresholds.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

from pyqtgraph.util.garbage_collector import GarbageCollector

INTERVAL_S = 1.0  # how often the GUI thread looks at the allocation counts


@contextlib.contextmanager
def collect_on_gui_thread(interval_s: float = INTERVAL_S) -> Iterator[GarbageCollector]:
    """Within the block, only the GUI thread's timer collects (a QApplication
    must exist); afterwards what is due is collected and automatic collection
    is as it was."""
    was_enabled = gc.isenabled()
    collector = GarbageCollector(interval=interval_s)
    try:
        yield collector
    finally:
        collector.timer.stop()
        collector.check()
        if was_enabled:
            gc.enable()
