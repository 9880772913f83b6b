"""The data check in the window: a folder's report, and the check run in the background.

:class:`FolderChecker` runs :func:`~workbench.core.data.folder_check.check_folder`
in a :class:`~workbench.ui.tasks.TaskThread` (decoding thousands of images takes
seconds) with progress and Cancel, and keeps the last report keyed by folder,
image size, the fixes applied (Use fixes: the folder as a run with them sees
it) and the folders' modification stamps, so Start does not check again what
nothing changed. :class:`DataCheckView` shows a report: the verdict, a bar
of images per class, and every finding with its file, errors first, as text to
copy. :class:`DataCheckDialog` holds the view in a window of its own.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtGui import QColor, QFont, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from workbench.core.config import TrainConfig
from workbench.core.data.fixes import check_fixed_folder
from workbench.core.data.folder_check import (
    CheckCancelled,
    DataReport,
    check_folder,
    folder_stamp,
)
from workbench.core.data.registry import FOLDER
from workbench.ui.tasks import TaskThread, describe_error, start_task

log = logging.getLogger(__name__)

# A run config's fixes: (image key, action, label) each; and their name.
Fixes = tuple[tuple[str, str, str], ...]
ReportKey = tuple[str, int, tuple[tuple[str, int], ...], Fixes, str]
# Findings listed first by severity; files a run ignores come last.
SEVERITY_ORDER = {"error": 0, "warning": 1}


def report_key(
    folder: str | Path, image_size: int, fixes: Fixes = (), fixes_name: str = ""
) -> ReportKey:
    """What a report depends on: the folder, the image size, the fixes applied
    and the folders' stamps."""
    root = Path(folder).expanduser()
    return (str(root), image_size, folder_stamp(root), fixes, fixes_name)


def counts_text(report: DataReport) -> str:
    """``3 classes · 1,204 images``."""
    total = sum(report.images_per_class().values())
    count = len(report.classes)
    return f"{count} class{'' if count == 1 else 'es'} · {total:,} images"


def summary_line(report: DataReport) -> str:
    """One line for the Data panel: what a run does with this folder."""
    errors = [f for f in report.findings if f.severity == "error"]
    if errors:
        first = errors[0].message
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return f"Cannot train: {first}{more}"
    skipped = len(report.unreadable)
    others = len(report.findings) - skipped  # each unreadable file is one warning
    parts = []
    if skipped:
        parts.append(f"{skipped} file{'s' * (skipped != 1)} will be skipped")
    if others:
        parts.append(f"{others} warning{'s' * (others != 1)}")
    fixed = ""
    if report.fixes_name is not None:
        fixed = f" with {len(report.relabelled):,} relabelled, "
        fixed += f"{len(report.excluded):,} excluded"
    return f"{counts_text(report)}{fixed}: " + (", ".join(parts) or "no problems found")


def finding_lines(report: DataReport) -> list[str]:
    """Every finding, errors first, each with its file; then the ignored files."""
    findings = sorted(report.findings, key=lambda f: SEVERITY_ORDER[f.severity])
    lines = [f.line("window") for f in findings]  # advice names the window's options
    lines += [f"ignored (not an image): {path}" for path in report.ignored]
    return lines


class ClassCountChart(pg.PlotWidget):
    """Images per class: one bar each, the class names under them.

    With more classes than names fit side by side, every k-th bar is named
    (the tooltip and the report's text list them all).
    """

    BAR_COLOR = QColor(70, 120, 190)
    EMPTY_COLOR = QColor(200, 60, 50)  # a class without images: an error
    MAX_NAME_CHARS = 14  # longer names are elided

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent=parent, background="w")
        self.setObjectName("classCountChart")
        self.setMinimumSize(240, 160)
        plot = self.getPlotItem()
        plot.setTitle("images per class", size="10pt", color="k")
        plot.setMouseEnabled(x=False, y=False)
        plot.setMenuEnabled(False)
        plot.hideButtons()
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            axis.setPen("k")
            axis.setTextPen("k")
            axis.enableAutoSIPrefix(False)
        # The names are thinned here; pyqtgraph's own crowding checks would drop
        # them again, differently at every width.
        plot.getAxis("bottom").setStyle(
            hideOverlappingLabels=False, textFillLimits=[(0, 1.0)]
        )
        self._bars = pg.BarGraphItem(
            x=np.zeros(0), height=np.zeros(0), width=0.7, pen=None, brush=self.BAR_COLOR
        )
        plot.addItem(self._bars)
        self._names: list[str] = []
        self._ticks: list[tuple[int, str]] = []
        plot.getViewBox().sigResized.connect(self._on_view_box_resized)

    def bar_item(self) -> pg.BarGraphItem:
        """Return the single bar item (for tests)."""
        return self._bars

    def heights(self) -> list[int]:
        """The bars' heights, in class order."""
        heights = self._bars.opts.get("height")
        return [] if heights is None else [int(h) for h in heights]

    def tick_names(self) -> list[str]:
        """The names written under the bars now (thinned when crowded)."""
        return [text for _, text in self._ticks]

    def set_counts(self, counts: dict[str, int]) -> None:
        """One bar per class, as high as its image count."""
        names = list(counts)
        heights = np.array([counts[n] for n in names], dtype=float)
        brushes = [self.EMPTY_COLOR if h == 0 else self.BAR_COLOR for h in heights]
        self._bars.setOpts(
            x=np.arange(len(names), dtype=float), height=heights, brushes=brushes
        )
        self._names = names
        plot = self.getPlotItem()
        plot.setXRange(-0.6, max(len(names), 1) - 0.4, padding=0)
        plot.setYRange(0, max(1.0, float(heights.max(initial=0))) * 1.08, padding=0)
        self._update_ticks()
        lines = [f"{name}: {counts[name]:,}" for name in names]
        self.setToolTip("\n".join(["Readable images per class", *lines]))

    def _update_ticks(self) -> None:
        names = self._names
        if not names:
            self._ticks = []
            self.getPlotItem().getAxis("bottom").setTicks([[]])
            return
        fm = self.fontMetrics()
        room = fm.averageCharWidth() * self.MAX_NAME_CHARS
        shown = [fm.elidedText(n, Qt.TextElideMode.ElideRight, room) for n in names]
        widest = max(fm.horizontalAdvance(t) for t in shown) + fm.averageCharWidth()
        pitch = self.getPlotItem().getViewBox().width() / (len(names) + 0.2)
        step = max(1, int(np.ceil(widest / max(pitch, 1.0))))
        # Thinned names start half a step in: the axis drops a first label that
        # would stick out past its left end.
        first = step // 2
        self._ticks = [(i, shown[i]) for i in range(first, len(names), step)]
        self.getPlotItem().getAxis("bottom").setTicks([self._ticks])

    @Slot(object)
    def _on_view_box_resized(self, _view: object) -> None:
        self._update_ticks()


class DataCheckView(QWidget):
    """A :class:`DataReport`: verdict, images per class, every finding with its file."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.reason_label = QLabel(objectName="dataCheckReason")
        self.reason_label.setWordWrap(True)
        self.reason_label.setVisible(False)
        self.verdict_label = QLabel(objectName="dataCheckVerdict")
        self.verdict_label.setWordWrap(True)
        font = QFont(self.verdict_label.font())
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.verdict_label.setFont(font)
        self.verdict_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.folder_label = QLabel(objectName="dataCheckFolder")
        self.folder_label.setWordWrap(True)
        self.folder_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.chart = ClassCountChart()
        self.findings_edit = QPlainTextEdit(objectName="dataCheckFindings")
        self.findings_edit.setReadOnly(True)
        self.findings_edit.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.findings_edit.setPlaceholderText("No problems found")
        self.copy_button = QPushButton("Copy report", objectName="copyReportButton")
        self.copy_button.setToolTip("Copy the whole report as text")
        self.copy_button.clicked.connect(self._on_copy_clicked)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.chart)
        splitter.addWidget(self.findings_edit)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([300, 200])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.reason_label)
        layout.addWidget(self.verdict_label)
        layout.addWidget(self.folder_label)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignRight)
        self.report: DataReport | None = None

    def show_report(self, report: DataReport, reason: str = "") -> None:
        """Show ``report``; ``reason`` (why it is shown now) goes on top."""
        self.report = report
        self.reason_label.setText(reason)
        self.reason_label.setVisible(bool(reason))
        errors = sum(f.severity == "error" for f in report.findings)
        warnings = len(report.findings) - errors
        if report.can_train:
            verdict, color = "Can train", "#2a7a3a"
        else:
            verdict, color = "Cannot train", "#b3261e"
        self.verdict_label.setText(
            f"{verdict}: {counts_text(report)}, {errors} error{'s' * (errors != 1)}, "
            f"{warnings} warning{'s' * (warnings != 1)}"
        )
        self.verdict_label.setStyleSheet(f"color: {color}")
        splits = " + ".join(report.counts) or "no images"
        n = len(report.ignored)
        ignored = f" · {n} file{'s' * (n != 1)} ignored (no images)"
        self.folder_label.setText(
            f"{report.root} ({splits}){ignored if report.ignored else ''}"
        )
        self.chart.set_counts(report.images_per_class())
        self.findings_edit.setPlainText("\n".join(finding_lines(report)))

    def text(self) -> str:
        """The report as text (what Copy puts on the clipboard)."""
        if self.report is None:
            return ""
        head = [self.reason_label.text()] if self.reason_label.isVisible() else []
        return "\n".join([*head, *self.report.lines(), *self._ignored_lines()])

    def _ignored_lines(self) -> list[str]:
        assert self.report is not None
        return [f"ignored (not an image): {p}" for p in self.report.ignored]

    @Slot()
    def _on_copy_clicked(self) -> None:
        QGuiApplication.clipboard().setText(self.text())


class DataCheckDialog(QDialog):
    """The data check's report in a window of its own (not modal)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dataCheckDialog")
        self.setWindowTitle("Data check")
        self.view = DataCheckView()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)
        self.resize(720, 560)

    def show_report(self, report: DataReport, reason: str = "") -> None:
        """Show ``report`` and bring the window up."""
        self.view.show_report(report, reason)
        self.setWindowTitle(f"Data check: {Path(report.root).name or report.root}")
        self.show()
        self.raise_()


class FolderChecker(QObject):
    """Checks a folder in the background and remembers the last report.

    ``checked(report)`` when a check ends, ``failed(message, details)`` when it
    could not run, ``cancelled()`` after :meth:`cancel`; ``progressed(done,
    total)`` while it decodes. One check at a time: asking for another folder
    cancels the one in flight.
    """

    checked = Signal(object)  # DataReport
    failed = Signal(str, str)
    cancelled = Signal()
    progressed = Signal(int, int)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._reports: dict[tuple[str, int], tuple[ReportKey, DataReport]] = {}
        self._task: TaskThread | None = None
        self._task_key: ReportKey | None = None

    def cached(
        self, folder: str, image_size: int, fixes: Fixes = (), fixes_name: str = ""
    ) -> DataReport | None:
        """The last report of ``folder`` at ``image_size`` with ``fixes``, if
        nothing changed since."""
        key = report_key(folder, image_size, fixes, fixes_name)
        entry = self._reports.get(key[:2])
        return entry[1] if entry is not None and entry[0] == key else None

    def last(self, folder: str, image_size: int) -> DataReport | None:
        """The last report of ``folder`` at ``image_size``, even if it may be stale."""
        entry = self._reports.get(report_key(folder, image_size)[:2])
        return entry[1] if entry is not None else None

    def is_checking(self, folder: str | None = None, image_size: int = 0) -> bool:
        """A check runs (of ``folder`` at ``image_size`` when given)."""
        if self._task is None:
            return False
        if folder is None:
            return True
        key = self._task_key
        return key is not None and key[:2] == (
            str(Path(folder).expanduser()),
            image_size,
        )

    def check(
        self, folder: str, image_size: int, fixes: Fixes = (), fixes_name: str = ""
    ) -> DataReport | None:
        """The report if still fresh; else start a check (``checked`` later), None.

        With ``fixes``, the folder as a run with them sees it: a fix whose image
        is gone fails the check (``failed``), as it would fail the run.
        """
        report = self.cached(folder, image_size, fixes, fixes_name)
        if report is not None:
            return report
        key = report_key(folder, image_size, fixes, fixes_name)
        if self._task is not None:
            if self._task_key == key:
                return None  # that check is on its way
            self._task.cancel()  # its result is dropped: another folder now
        root, size = key[0], key[1]

        def work(progress: Any, cancel: Any) -> DataReport | None:
            def told(done: int, total: int) -> None:
                progress((done, total))

            try:
                if not fixes:
                    return check_folder(root, size, progress=told, cancel=cancel)
                cfg = TrainConfig(
                    dataset=FOLDER, data_dir=root, fixes=fixes, fixes_name=fixes_name
                )
                return check_fixed_folder(cfg, size, progress=told, cancel=cancel)
            except CheckCancelled:
                return None

        task = start_task(
            self,
            "check-folder",
            work,
            succeeded=self._on_task_succeeded,
            failed=self._on_task_failed,
            finished=self._on_task_finished,
            progressed=self._on_task_progressed,
        )
        task.setProperty("key", key)
        self._task, self._task_key = task, key
        return None

    def cancel(self) -> None:
        """Stop the check in flight at its next file (``cancelled`` follows)."""
        if self._task is not None:
            self._task.cancel()

    def _current(self) -> bool:
        """The signal comes from the check in flight (not one cancelled before)."""
        return self.sender() is self._task

    @Slot(object)
    def _on_task_succeeded(self, report: DataReport | None) -> None:
        if not self._current():
            return
        if report is None:
            self.cancelled.emit()
            return
        key = self._task_key
        assert key is not None
        self._reports[key[:2]] = (key, report)
        self.checked.emit(report)

    @Slot(object)
    def _on_task_failed(self, error: Exception) -> None:
        if self._current():
            self.failed.emit(*describe_error(error))

    @Slot(object)
    def _on_task_progressed(self, done_total: tuple[int, int]) -> None:
        if self._current():
            self.progressed.emit(*done_total)

    @Slot()
    def _on_task_finished(self) -> None:
        task = self.sender()
        if task is self._task:
            self._task, self._task_key = None, None
        if isinstance(task, TaskThread):
            task.deleteLater()

    def shutdown(self, timeout_ms: int = 5000) -> None:
        """Cancel the check and wait for its thread (the window closes)."""
        task = self._task
        if task is not None:
            task.cancel()
            task.wait(timeout_ms)
