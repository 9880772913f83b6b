"""Python's cycle collector runs in the GUI thread only, once our threads exist.

CPython collects reference cycles in whichever thread crosses an allocation
threshold. The trainer and task threads allocate all the time, so they would
often be the ones to free a cycle the GUI thread left behind (a widget, a
timer, an event loop with a Python slot): destroying a QObject off its thread
can crash Qt or deadlock it against the GUI thread (it once hung the whole
test suite). pyqtgraph's ``GarbageCollector`` turns automatic collection off
and collects from a timer in the GUI thread instead; garbage waits at most
about a second.
"""

from __future__ import annotations

import gc
import threading

from pyqtgraph.util.garbage_collector import GarbageCollector
from PySide6.QtCore import QCoreApplication
from shiboken6 import isValid

_collector: GarbageCollector | None = None


def collect_in_gui_thread() -> None:
    """Pin cycle collection to the GUI thread (idempotent; call it there).

    Called before a worker thread of ours is created; without a Qt
    application (nothing to run the timer) it leaves collection as it is.
    """
    global _collector
    app = QCoreApplication.instance()
    if app is None:
        return
    if _collector is not None and isValid(_collector.timer):
        gc.disable()  # again: code that turned it back on must not win
        return
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("collect_in_gui_thread() must be called in the GUI thread")
    _collector = GarbageCollector(interval=1.0)
    # Owned by the application: it goes when the application goes.
    _collector.timer.setParent(app)
