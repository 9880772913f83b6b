"""Background work that is not training: loading data, opening checkpoints.

:class:`TaskThread` runs one callable off the GUI thread. Its result (tensors,
a run) travels in ``succeeded``, emitted when the work no longer touches it;
an exception travels in ``failed`` (``describe_error`` turns it into text).
"""

from __future__ import annotations

import logging
import threading
import traceback
import weakref
from collections.abc import Callable
from typing import Any, ClassVar

from PySide6.QtCore import QObject, QThread, Signal
from shiboken6 import isValid

from workbench.core.data.registry import DataError, DownloadCancelled, DownloadProgress
from workbench.core.errors import USER_ERRORS
from workbench.ui.gui_gc import collect_in_gui_thread

log = logging.getLogger(__name__)

ProgressFn = Callable[[DownloadProgress], None]
CancelFn = Callable[[], bool]


def describe_error(exc: BaseException) -> tuple[str, str]:
    """(message for the user, traceback for the details pane)."""
    details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if isinstance(exc, USER_ERRORS):
        message = str(exc)
    else:
        # Not one of ours: a bug or an environment problem; name the type.
        message = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return message, details


class TaskThread(QThread):
    """Run ``work(progress, cancel)`` in a thread; results stay on the object."""

    progressed = Signal(object)  # DownloadProgress: frozen dataclass of builtins
    succeeded = Signal(object)  # what the work returned
    cancelled = Signal()
    failed = Signal(object)  # the exception (describe_error: message, traceback)

    _live: ClassVar[weakref.WeakSet[TaskThread]] = weakref.WeakSet()

    def __init__(
        self,
        work: Callable[[ProgressFn, CancelFn], Any],
        parent: QObject | None = None,
        *,
        name: str = "task",
    ) -> None:
        collect_in_gui_thread()  # before this thread can allocate
        super().__init__(parent)
        self.setObjectName(name)
        self._work = work
        self._cancel = threading.Event()
        TaskThread._live.add(self)

    @classmethod
    def running_threads(cls) -> list[TaskThread]:
        """Task threads still running (tests check none is left behind)."""
        return [t for t in list(cls._live) if isValid(t) and t.isRunning()]

    def cancel(self) -> None:
        """Ask the work to stop at its next cancel check (a flag: no event loop)."""
        self._cancel.set()

    @property
    def cancel_requested(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._cancel.is_set()

    def run(self) -> None:
        """Thread body: never raises; reports through signals."""
        try:
            result = self._work(self.progressed.emit, self._cancel.is_set)
        except DownloadCancelled:
            self.cancelled.emit()
        except Exception as exc:
            if self._cancel.is_set() and isinstance(exc, DataError):
                self.cancelled.emit()
                return
            log.debug("task %s failed", self.objectName(), exc_info=True)
            self.failed.emit(exc)
        else:
            self.succeeded.emit(result)


def start_task(
    parent: QObject,
    name: str,
    work: Callable[[ProgressFn, CancelFn], Any],
    *,
    succeeded: Callable[[Any], None],
    failed: Callable[[Exception], None],
    finished: Callable[[], None],
    progressed: Callable[[DownloadProgress], None] | None = None,
    cancelled: Callable[[], None] | None = None,
) -> TaskThread:
    """Run ``work`` in a new :class:`TaskThread` wired to the given slots.

    The one way the window starts background work (opening a checkpoint,
    scoring a fine-tune, loading a dataset): every signal is connected before
    the thread starts, so none is missed. Pass bound methods (``@Slot``) of
    objects living in the GUI thread; they run there.
    """
    task = TaskThread(work, parent, name=name)
    task.succeeded.connect(succeeded)
    task.failed.connect(failed)
    task.finished.connect(finished)
    if progressed is not None:
        task.progressed.connect(progressed)
    if cancelled is not None:
        task.cancelled.connect(cancelled)
    task.start()
    return task
