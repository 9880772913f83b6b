"""Reading a dropped folder, or several chosen files, on the Try-an-image tab.

:class:`FolderReading` reads the files in a :func:`~workbench.ui.tasks.start_task`
thread, with a private copy of the tab's reader (training may load new weights
into the tab's own at any time), and fills a
:class:`~workbench.ui.panels.predictions_table.PredictionsTable`. Each file is
read exactly as one opened file is (``Predictor.read_file``). :class:`PathDrops`
says which files and folders were dropped on the tab.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject, Signal, Slot
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QWidget

from workbench.core.predict import Predictor
from workbench.core.predict_batch import FileResult, gather_files, read_files
from workbench.ui import dialogs
from workbench.ui.panels.predictions_table import CSV_TOP, PredictionsTable
from workbench.ui.tasks import TaskThread, describe_error, start_task

log = logging.getLogger(__name__)

# The table's progress moves about this many times over a batch (and at its end).
PROGRESS_REPORTS = 200


def dropped_paths(mime: QMimeData) -> list[Path]:
    """The local files and folders among dropped URLs, in order."""
    return [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]


class PathDrops(QObject):
    """Makes ``target`` take dropped files and folders, and says which.

    An event filter, so the widget keeps its own drag handlers free; a drop on
    any child that takes no drops itself reaches ``target`` (Qt passes drag
    events up to the parent).
    """

    paths_dropped = Signal(object)  # list of Path: files and folders

    def __init__(self, target: QWidget) -> None:
        super().__init__(target)
        target.setAcceptDrops(True)
        target.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Accept dragged local paths; on the drop, emit them."""
        kind = event.type()
        if kind not in (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop):
            return False
        assert isinstance(event, QDropEvent)  # DragEnter and DragMove derive from it
        paths = dropped_paths(event.mimeData())
        if not paths:
            event.ignore()
            return True
        event.acceptProposedAction()
        if kind == QEvent.Type.Drop:
            self.paths_dropped.emit(paths)
        return True


@dataclass(frozen=True, slots=True)
class Batch:
    """What a batch read: its results, of how many files (more: it was cut short)."""

    results: list[FileResult]
    total: int


def describe(paths: list[Path], count: int) -> tuple[str, Path | None]:
    """What was opened, in words, and the folder file names are shown under."""
    if len(paths) == 1 and paths[0].is_dir():
        folder = paths[0]
        return f"Folder {folder.name or folder}: {count:,} image files", folder
    return f"{count:,} files", None


class FolderReading(QObject):
    """Reads many files in the background into the tab's table.

    Signals
    -------
    batch_finished(object)
        The table shows a batch and its thread has ended (a :class:`Batch`;
        fewer results than files when it was cancelled or failed).
    """

    batch_finished = Signal(object)

    def __init__(self, table: PredictionsTable, parent: QWidget) -> None:
        super().__init__(parent)
        self._parent = parent
        self.table = table
        self.table.cancel_requested.connect(self.cancel)
        self._task: TaskThread | None = None  # the batch the table shows
        self._threads: set[TaskThread] = set()  # it, and any cancelled one
        self._total = 0
        self._shown = Batch([], 0)  # the current batch's, once it has ended

    def start(self, paths: list[Path], predictor: Predictor | None) -> None:
        """Read the files of ``paths`` (folders give their images) with ``predictor``.

        A batch still reading is cancelled: its results are dropped.
        """
        self.cancel()
        self._task = None
        files, _empty = gather_files(paths)
        source, root = describe(paths, len(files))
        if predictor is None:
            self.table.show_message(source, "No model to read with yet.")
            return
        if not files:
            self.table.show_message(source, "No image files in it.")
            return
        # A private copy, made here: the tab's reader takes new weights from
        # the GUI thread while a run trains.
        reader = copy.deepcopy(predictor)
        self._total = total = len(files)
        step = max(1, total // PROGRESS_REPORTS)

        def work(
            progress: Callable[[object], None], cancel: Callable[[], bool]
        ) -> Batch:
            def report(done: int, total: int) -> None:
                if done % step == 0 or done == total:
                    progress((done, total))

            found = read_files(
                files, reader, top=CSV_TOP, progress=report, cancel=cancel
            )
            return Batch(list(found), total)

        self._shown = Batch([], total)
        self.table.start(source, total, root)
        self._task = start_task(
            self,
            "predict-folder",
            work,
            succeeded=self._on_task_succeeded,
            failed=self._on_task_failed,
            finished=self._on_task_finished,
            progressed=self._on_task_progressed,
        )
        self._threads.add(self._task)

    @Slot()
    def cancel(self) -> None:
        """Stop the batch after the file being read (its results are shown)."""
        if self._task is not None:
            self._task.cancel()

    def is_running(self) -> bool:
        """True while a batch reads."""
        return self._task is not None

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Cancel every batch and wait for its thread (the window closes)."""
        for task in list(self._threads):
            task.cancel()
            task.wait(timeout_ms)

    def _current(self) -> bool:
        return self.sender() is self._task

    @Slot(object)
    def _on_task_progressed(self, done_total: tuple[int, int]) -> None:
        if self._current():
            self.table.set_progress(*done_total)

    @Slot(object)
    def _on_task_succeeded(self, batch: Batch) -> None:
        if self._current():
            self.table.show_results(batch.results, batch.total)
            self._shown = batch

    @Slot(object)
    def _on_task_failed(self, error: Exception) -> None:
        if not self._current():
            return
        message, details = describe_error(error)
        self.table.show_results([], self._total, note="an error")
        self._shown = Batch([], self._total)
        dialogs.show_error(self._parent, "Could not read the files", message, details)

    @Slot()
    def _on_task_finished(self) -> None:
        task = self.sender()
        if task is self._task:
            self._task = None
            self.batch_finished.emit(self._shown)
        if isinstance(task, TaskThread):
            self._threads.discard(task)
            task.deleteLater()
