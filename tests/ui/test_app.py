"""The entry point's exception hooks: logged and shown, never fatal."""

from __future__ import annotations

import logging
import sys
import threading

import pytest

from workbench import app

pytestmark = pytest.mark.gui


@pytest.fixture
def hooks(qapp):
    saved = sys.excepthook, threading.excepthook
    app.install_exception_hooks()
    yield
    sys.excepthook, threading.excepthook = saved


def test_uncaught_exceptions_reach_a_dialog(qtbot, hooks, error_dialogs, caplog):
    caplog.set_level(logging.ERROR, logger="workbench")
    try:
        raise ValueError("gui-thread boom")
    except ValueError:
        sys.excepthook(*sys.exc_info())
    thread = threading.Thread(target=lambda: 1 / 0)
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: len(error_dialogs.shown) == 2)
    assert error_dialogs.shown[0][1] == "ValueError: gui-thread boom"
    assert error_dialogs.shown[1][1].startswith("ZeroDivisionError")
    assert "Traceback" in error_dialogs.shown[1][2]
    assert "gui-thread boom" in caplog.text
    error_dialogs.shown.clear()


def test_run_window_opens_the_window_and_returns_0(qtbot, monkeypatch):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from workbench.ui.main_window import MainWindow

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    shown = []

    def close_window() -> None:
        windows = [
            w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)
        ]
        visible = [w for w in windows if w.isVisible()]
        if not visible:
            QTimer.singleShot(20, close_window)
            return
        shown.extend(visible)
        for w in visible:
            w.close()

    QTimer.singleShot(0, close_window)
    assert app.run_window([]) == 0
    assert len(shown) == 1
    for w in shown:
        w.deleteLater()
