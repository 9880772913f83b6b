"""PySide6 must not leak or drop references to None/True on void calls and emits.

6.12.0 on CPython 3.11 drops one reference to None per void call and one to True
per ``Signal.emit()``; after enough calls None is deallocated and the process
aborts ("none_dealloc"). This test fails on such a release before a user's plot
window does. CPython 3.12+ makes None and True immortal, so there the counts are
fixed and the test passes trivially.
"""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Callable

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

pytestmark = pytest.mark.gui

CALLS = 100_000
CHUNK = 1_000


class _Emitter(QObject):
    fired = Signal(bool)
    pinged = Signal()


def _counts() -> tuple[int, int]:
    return sys.getrefcount(None), sys.getrefcount(True)


def _measure(call: Callable[[], object]) -> tuple[int, int]:
    """Refcount drift of None and True over CALLS calls, with gc off.

    Checked every CHUNK calls and stopped at the first drift: a release that
    drops references would otherwise free None and abort the test run
    ("none_dealloc") instead of failing this test.
    """
    gc.collect()
    was_enabled = gc.isenabled()  # off in the GUI's process (workbench.ui.gui_gc)
    gc.disable()
    try:
        before = _counts()
        for _ in range(CALLS // CHUNK):
            for _ in range(CHUNK):
                call()
            after = _counts()
            if after != before:
                break
    finally:
        if was_enabled:
            gc.enable()
    drift = after[0] - before[0], after[1] - before[1]
    # Give back (for good: nothing may release them later) what a broken release
    # took, so the run survives to report this failure instead of aborting
    # when None's count reaches 0 at exit.
    for obj, missing in ((None, -drift[0]), (True, -drift[1])):
        for _ in range(max(0, missing)):
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
    return drift


def test_void_calls_keep_none_and_true(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    obj = QObject()
    set_enabled, set_name = widget.setEnabled, obj.setObjectName

    def call() -> None:
        set_enabled(True)
        set_name("x")

    assert _measure(call) == (0, 0)


def test_signal_emits_keep_none_and_true(qtbot):
    emitter = _Emitter()
    emitter.fired.connect(_ignore)
    emitter.pinged.connect(_ignore)
    fire, ping = emitter.fired.emit, emitter.pinged.emit

    def call() -> None:
        fire(True)
        ping()

    assert _measure(call) == (0, 0)


def _ignore(*_: object) -> None:
    pass
