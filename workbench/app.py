"""The window's entry point: ``ptcore-workbench`` with no command.

Sets up the QApplication, routes uncaught exceptions (GUI thread and Python
threads) to the log and an error dialog, and shows :class:`MainWindow`.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QApplication, QWidget

from workbench import __version__
from workbench.ui import dialogs
from workbench.ui.main_window import MainWindow

log = logging.getLogger("workbench")


def install_exception_hooks() -> None:
    """Uncaught exceptions go to the log and to an error dialog; none is fatal."""

    class _Relay(QObject):
        # Lives in the GUI thread: emitting from another thread queues the call.
        raised = Signal(str, str)

        @Slot(str, str)
        def show(self, message: str, details: str) -> None:
            dialogs.show_error(
                QApplication.activeWindow(), "Unexpected error", message, details
            )

    relay = _Relay(QApplication.instance())
    relay.raised.connect(relay.show)

    def report(
        kind: type[BaseException], exc: BaseException, tb: TracebackType | None
    ) -> None:
        details = "".join(traceback.format_exception(kind, exc, tb))
        log.error("uncaught exception:\n%s", details)
        relay.raised.emit(f"{kind.__name__}: {exc}", details)

    def excepthook(
        kind: type[BaseException], exc: BaseException, tb: TracebackType | None
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            sys.__excepthook__(kind, exc, tb)
            return
        report(kind, exc, tb)

    def thread_excepthook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is None or issubclass(args.exc_type, SystemExit):
            return
        report(args.exc_type, args.exc_value, args.exc_traceback)

    sys.excepthook = excepthook
    threading.excepthook = thread_excepthook


def run_window(argv: Sequence[str] | None = None) -> int:
    """Open the workbench window and run until it closes; returns the exit code."""
    args = list(sys.argv if argv is None else [sys.argv[0], *argv])
    app = QApplication.instance() or QApplication(args)
    app.setOrganizationName("ptcore")
    app.setApplicationName("workbench")
    app.setApplicationVersion(__version__)
    install_exception_hooks()
    window = MainWindow()
    window.show()
    previous = _close_on_sigint(window)
    try:
        code = app.exec()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return int(code)


def _close_on_sigint(window: QWidget) -> Any:
    """Ctrl+C in the terminal closes the window (which stops a run cleanly).

    Returns the previous SIGINT handler (None off the main thread: unchanged).
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.signal(signal.SIGINT, lambda *_: window.close())
    # Python runs signal handlers only between bytecodes; while Qt's event loop
    # waits in C++ nothing would run, so wake the interpreter now and then.
    timer = QTimer(window)
    timer.timeout.connect(lambda: None)
    timer.start(250)
    return previous


main = run_window
