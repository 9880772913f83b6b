"""The Try-an-image tab's table of many files: file, class, confidence.

:class:`PredictionsTable` shows the results of
:func:`~workbench.core.predict_batch.read_files` for a dropped folder or
several chosen files: a row per file, sortable by each column (confidence by
value, not by its text), a skipped file with its reason, what was opened, the
progress with Cancel while the files are read, and "Export CSV…".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal, Slot
from PySide6.QtGui import QBrush, QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from workbench.core.predict_batch import FileResult, write_csv
from workbench.ui import dialogs
from workbench.ui.widgets.draw_widgets import WrappingLabel

COLUMNS = ("File", "Class", "Confidence")
CSV_FILTER = "CSV files (*.csv)"
# Classes written to an exported CSV for each file (the window's reads keep as many).
CSV_TOP = 3
_SORT_ROLE = Qt.ItemDataRole.UserRole
_SKIPPED = QColor("#b42318")


def shown_name(path: Path, root: Path | None) -> str:
    """``path`` under ``root`` (``cats/01.png``), or its file name."""
    if root is not None and path.is_relative_to(root):
        return path.relative_to(root).as_posix()
    return path.name


def _item(text: str, key: object, tip: str) -> QStandardItem:
    item = QStandardItem(text)
    item.setData(key, _SORT_ROLE)
    item.setToolTip(tip)
    item.setEditable(False)
    return item


def _row(result: FileResult, root: Path | None) -> list[QStandardItem]:
    """The three cells of ``result``; a skipped file says why in the class cell."""
    name = shown_name(result.path, root)
    file_item = _item(name, name.casefold(), str(result.path))
    if result.skipped:
        why = _item(f"not read: {result.error}", "\uffff" + result.error, result.error)
        why.setForeground(QBrush(_SKIPPED))
        return [file_item, why, _item("", -1.0, result.error)]
    ranked = "\n".join(f"{n}  {100 * p:.1f}%" for n, p in result.top)
    return [
        file_item,
        _item(result.class_name, result.class_name.casefold(), ranked),
        _item(f"{100 * result.confidence:.1f}%", result.confidence, ranked),
    ]


class PredictionsTable(QWidget):
    """What was opened, the progress, and a sortable row per file read.

    Signals
    -------
    cancel_requested()
        The user pressed Cancel while the files are read.
    file_chosen(object)
        The user clicked a file's row (its Path): open it in the tab.
    """

    cancel_requested = Signal()
    file_chosen = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("predictionsTable")
        self._results: list[FileResult] = []
        self._root: Path | None = None
        self.source_label = WrappingLabel("predictionsSource")
        self.source_label.setStyleSheet("font-weight: 600;")
        self.status_label = QLabel(objectName="predictionsStatus")
        self.progress = QProgressBar(objectName="predictionsProgress")
        self.cancel_button = QPushButton("Cancel", objectName="cancelPredictionsButton")
        self.cancel_button.setToolTip("Stop after the file being read")
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.export_button = QPushButton(
            "Export CSV…", objectName="exportPredictionsButton"
        )
        self.export_button.setToolTip(
            "Save the table as CSV, in the order shown: file, class, confidence, "
            "the next classes, and why a file was skipped"
        )
        self.export_button.clicked.connect(self.export_dialog)
        self.close_button = QPushButton("Close", objectName="closePredictionsButton")
        self.close_button.setToolTip("Hide the table (Cancel first if it still reads)")
        self.close_button.clicked.connect(self._on_close_clicked)

        self.model = QStandardItemModel(0, len(COLUMNS), self)
        self.model.setHorizontalHeaderLabels(list(COLUMNS))
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSortRole(_SORT_ROLE)
        self.proxy.setSourceModel(self.model)
        self.view = QTableView(objectName="predictionsView")
        self.view.setModel(self.proxy)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the files' order
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.verticalHeader().setVisible(False)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.view.clicked.connect(self._on_view_clicked)

        top = QHBoxLayout()
        top.addWidget(self.source_label, 1)
        top.addWidget(self.export_button)
        top.addWidget(self.close_button)
        status = QHBoxLayout()
        status.addWidget(self.status_label, 1)
        status.addWidget(self.progress, 1)
        status.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addLayout(status)
        layout.addWidget(self.view, 1)
        self._set_running(False)

    # ----------------------------------------------------------------- state

    def start(self, source: str, total: int, root: Path | None = None) -> None:
        """Show that ``total`` files of ``source`` are being read; no rows yet."""
        self._results, self._root = [], root
        self.model.removeRows(0, self.model.rowCount())
        self.source_label.setText(source)
        self.source_label.setToolTip(str(root) if root is not None else "")
        self.set_progress(0, total)
        self._set_running(True)
        self.setVisible(True)

    def set_progress(self, done: int, total: int) -> None:
        """``done`` of ``total`` files read."""
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.status_label.setText(f"Reading {done:,} of {total:,} files…")

    def show_results(
        self, results: Sequence[FileResult], total: int, *, note: str = ""
    ) -> None:
        """A row per result; the status says how many were read and skipped.

        Fewer ``results`` than ``total``: the reading was stopped (``note``
        says why, else Cancel).
        """
        self._results = list(results)
        self.model.removeRows(0, self.model.rowCount())
        for result in self._results:
            self.model.appendRow(_row(result, self._root))
        skipped = sum(result.skipped for result in self._results)
        text = f"{len(self._results) - skipped:,} read, {skipped:,} skipped"
        if len(self._results) < total:
            why = note or "cancelled"
            text = f"Stopped ({why}) after {len(self._results):,} of {total:,}: {text}"
        self.status_label.setText(text)
        self._set_running(False)

    def show_message(self, source: str, text: str) -> None:
        """Nothing to read (an empty folder, no model): say so, no rows."""
        self.start(source, 0)
        self.status_label.setText(text)
        self._set_running(False)

    def _set_running(self, running: bool) -> None:
        self.progress.setVisible(running)
        self.cancel_button.setVisible(running)
        self.cancel_button.setEnabled(running)
        self.export_button.setEnabled(not running and bool(self._results))

    def is_running(self) -> bool:
        """True while files are being read (Cancel shown)."""
        return self.cancel_button.isEnabled()

    # ----------------------------------------------------------------- reading

    def results(self) -> list[FileResult]:
        """The results in the order the table shows them (sorted or not)."""
        order = [
            self.proxy.mapToSource(self.proxy.index(row, 0)).row()
            for row in range(self.proxy.rowCount())
        ]
        return [self._results[row] for row in order]

    def shown_rows(self) -> list[tuple[str, str, str]]:
        """Each row's cells as shown, top to bottom."""
        return [
            tuple(  # type: ignore[misc]
                self.proxy.index(row, column).data() for column in range(len(COLUMNS))
            )
            for row in range(self.proxy.rowCount())
        ]

    # ----------------------------------------------------------------- actions

    @Slot()
    def export_dialog(self) -> None:
        """Ask where to save the table as CSV, and write it (whole or not at all)."""
        path = dialogs.get_save_path(
            self, "Export the predictions", CSV_FILTER, name="predictions.csv"
        )
        if path is None:
            return
        try:
            write_csv(path, self.results(), top=CSV_TOP)
        except OSError as exc:
            dialogs.show_error(
                self,
                "Could not export the predictions",
                f"Could not write {path}: {exc.strerror or exc}",
            )

    @Slot(QModelIndex)
    def _on_view_clicked(self, index: QModelIndex) -> None:
        row = self.proxy.mapToSource(index).row()
        if 0 <= row < len(self._results):
            self.file_chosen.emit(self._results[row].path)

    @Slot()
    def _on_close_clicked(self) -> None:
        if self.is_running():
            self.cancel_requested.emit()
        self.setVisible(False)
