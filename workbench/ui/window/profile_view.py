"""Run ▸ Profile the next 20 steps: ask the running engine, then show what it recorded.

The trace itself is opened elsewhere (Perfetto, ``chrome://tracing``); the
dialog says where it is, how to open it, and which operators took the time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.core.events import ProfileReport
from workbench.core.perf.profiling import HOW_TO_OPEN
from workbench.ui.window.parts import StatusWindow

PROFILE_STEPS = 20
_COLUMNS = ("Operator", "Self time", "Calls", "Share")


class ProfileController(Protocol):
    """What profiling asks of the run controller."""

    def request_profile(self, steps: int) -> str: ...


class Profiles:
    """Run ▸ Profile the next 20 steps, and the dialog of each profile it gets."""

    def __init__(self, window: StatusWindow, controller: ProfileController) -> None:
        self.window = window
        self.controller = controller
        self.dialog: ProfileDialog | None = None

    def request(self) -> None:
        """Ask the running engine for a profile; the status line says what follows."""
        self.window.set_status(self.controller.request_profile(PROFILE_STEPS))

    def show(self, report: ProfileReport) -> None:
        """A profile arrived: its dialog (not modal: the run goes on)."""
        parent = self.window if isinstance(self.window, QWidget) else None
        self.dialog = ProfileDialog(report, parent)
        self.dialog.show()
        self.window.set_status(_where_text(report))


class ProfileDialog(QDialog):
    """Where a profile's trace is, how to open it, and its top operators."""

    def __init__(self, report: ProfileReport, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("profileDialog")
        self.report = report
        self.setWindowTitle(f"Profile of {report.steps_recorded} steps")
        layout = QVBoxLayout(self)
        self.where_label = QLabel(objectName="profileWhereLabel")
        self.where_label.setWordWrap(True)
        self.where_label.setText(_where_text(report))
        layout.addWidget(self.where_label)
        self.phase_label = QLabel(_phases(report), objectName="profilePhaseLabel")
        self.phase_label.setWordWrap(True)
        layout.addWidget(self.phase_label)
        self.table = QTableWidget(len(report.top_operators), len(_COLUMNS), self)
        self.table.setObjectName("profileOperatorsTable")
        self.table.setHorizontalHeaderLabels(_COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for row, op in enumerate(report.top_operators):
            cells = (op.name, f"{1000 * op.self_seconds:.2f} ms", f"{op.calls:,}",
                     f"{op.share:.1%}")  # fmt: skip
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(op.name)
                self.table.setItem(row, column, item)
        layout.addWidget(self.table)
        how = QLabel(HOW_TO_OPEN, objectName="profileHowLabel")
        how.setWordWrap(True)
        layout.addWidget(how)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.open_button = buttons.addButton(
            "Open folder", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.copy_button = buttons.addButton(
            "Copy path", QDialogButtonBox.ButtonRole.ActionRole
        )
        self.open_button.setEnabled(bool(report.trace_path))
        self.copy_button.setEnabled(bool(report.trace_path))
        self.open_button.clicked.connect(self.open_folder)
        self.copy_button.clicked.connect(self.copy_path)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(640, 460)

    def open_folder(self) -> None:
        """Show the trace's folder in the system's file manager."""
        folder = Path(self.report.trace_path).parent
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    def copy_path(self) -> None:
        """The trace's path to the clipboard (to paste into Perfetto's file dialog)."""
        QGuiApplication.clipboard().setText(self.report.trace_path)


def _where_text(report: ProfileReport) -> str:
    if not report.trace_path:
        return f"No trace was written: {report.note}"
    text = (
        f"{report.steps_recorded} steps recorded ({report.measured_on} time) into "
        f"{report.trace_path}"
    )
    return f"{text}. {report.note}" if report.note else text


def _phases(report: ProfileReport) -> str:
    if not report.phase_seconds:
        return ""
    steps = max(report.steps_recorded, 1)
    parts = ", ".join(
        f"{name} {1000 * seconds / steps:.2f} ms"
        for name, seconds in report.phase_seconds
    )
    return f"A recorded step, by phase (host time): {parts}"
