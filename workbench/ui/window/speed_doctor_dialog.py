"""Run ▸ Diagnose speed…: the speed doctor on the run Start would train.

The doctor (:func:`workbench.core.perf.speed_doctor.diagnose`) times the panels'
settings against each change that applies, in alternating rounds, in a
background task with progress and Cancel. The dialog shows whether the run
waits for its data, each change's measured gain with its spread, and an
"Apply" for each recommended one: it sets the panels and nothing else (the
settings are never changed by the doctor itself). With torch.compile on, the
model's graph breaks are listed with their file and line.
"""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.perf.graph_breaks import CompileReport
from workbench.core.perf.graph_breaks import report_lines as graph_break_lines
from workbench.core.perf.speed_doctor import (
    DoctorReport,
    Finding,
    diagnose,
    explain_config,
    flags,
    gain_text,
    prepare_with_data_once,
)
from workbench.core.perf.timed_rounds import DoctorProgress
from workbench.ui.tasks import TaskThread, describe_error, start_task
from workbench.ui.window.idle_config import config_when_idle

COLUMNS = ("Change", "Gain (spread)", "Verdict", "")


class SpeedDoctorWindow(Protocol):
    """What :func:`open_speed_doctor` uses of the window."""

    controller: Any
    speed_doctor: QDialog | None

    def current_config(self) -> TrainConfig: ...
    def apply_config(self, cfg: TrainConfig) -> None: ...
    def set_status(self, text: str) -> None: ...


class SpeedDoctorDialog(QDialog):
    """The doctor's progress, then its diagnosis and measured advice."""

    def __init__(self, window: SpeedDoctorWindow, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setObjectName("speedDoctorDialog")
        self.setWindowTitle("Diagnose speed")
        self.window_ = window
        self.report: DoctorReport | None = None
        self.compile_report: CompileReport | None = None
        self._task: TaskThread | None = None
        layout = QVBoxLayout(self)
        self.status_label = QLabel(objectName="doctorStatusLabel")
        self.status_label.setWordWrap(True)
        layout.addWidget(self.status_label)
        self.progress = QProgressBar(objectName="doctorProgress")
        layout.addWidget(self.progress)
        self.diagnosis_label = QLabel(objectName="doctorDiagnosisLabel")
        self.diagnosis_label.setWordWrap(True)
        layout.addWidget(self.diagnosis_label)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setObjectName("doctorFindingsTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(
            2, QHeaderView.ResizeMode.Stretch
        )
        layout.addWidget(self.table)
        self.compile_label = QLabel(objectName="doctorCompileLabel")
        self.compile_label.setWordWrap(True)
        self.compile_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        layout.addWidget(self.compile_label)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.cancel_button = QPushButton("Cancel", objectName="doctorCancelButton")
        self.cancel_button.clicked.connect(self.cancel)
        self.close_button = QPushButton("Close", objectName="doctorCloseButton")
        self.close_button.clicked.connect(self.close)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.close_button)
        layout.addLayout(buttons)
        self.resize(720, 480)

    def start(self, cfg: TrainConfig) -> None:
        """Diagnose ``cfg`` in the background (the settings are left as they are)."""
        self.status_label.setText(
            "Timing the panels' settings against each change that applies, in "
            "alternating rounds of a few steps…"
        )
        self.cancel_button.setEnabled(True)

        def work(progress: Any, cancel: Any) -> tuple[DoctorReport, Any]:
            report = None
            prepare = prepare_with_data_once()
            for item in diagnose(cfg, prepare=prepare, cancel=cancel):
                if isinstance(item, DoctorProgress):
                    progress(item)
                else:
                    report = item
            assert report is not None  # diagnose always ends with its report
            explained = None
            if cfg.compile and not report.cancelled:
                explained = explain_config(cfg, prepare)
            return report, explained

        self._task = start_task(
            self,
            "speed-doctor",
            work,
            succeeded=self._on_done,
            failed=self._on_failed,
            finished=self._on_finished,
            progressed=self._on_progress,
        )

    @property
    def running(self) -> bool:
        """Whether the doctor is still timing."""
        return self._task is not None and self._task.isRunning()

    @Slot()
    def cancel(self) -> None:
        """Stop timing after the current step (what was timed is shown)."""
        if self._task is not None:
            self._task.cancel()
            self.status_label.setText("Cancelling after the current step…")

    @Slot(object)
    def _on_progress(self, p: DoctorProgress) -> None:
        self.progress.setRange(0, max(p.total, 1))
        self.progress.setValue(p.done)
        stage = "warming up" if p.round == 0 else f"round {p.round} of {p.rounds}"
        self.status_label.setText(f"{stage}: {p.arm}")

    @Slot(object)
    def _on_done(self, result: tuple[DoctorReport, CompileReport | None]) -> None:
        self.report, self.compile_report = result
        self.show_report(self.report, self.compile_report)

    @Slot(object)
    def _on_failed(self, exc: Exception) -> None:
        message, _details = describe_error(exc)
        self.status_label.setText(f"The doctor could not time this run: {message}")

    @Slot()
    def _on_finished(self) -> None:
        self.cancel_button.setEnabled(False)
        self._task = None

    def show_report(
        self, report: DoctorReport, explained: CompileReport | None
    ) -> None:
        """The diagnosis, each change as measured, Apply for the recommended."""
        what = "Cancelled: what was timed so far" if report.cancelled else "Timed"
        self.status_label.setText(
            f"{what}: {report.images_per_s:,.0f} img/s on {report.device} "
            f"({report.precision}), noise ±{report.noise:.0%}, {report.rounds} "
            f"rounds of {report.steps} steps, {report.seconds:.0f} s"
        )
        self.progress.setValue(self.progress.maximum())
        self.diagnosis_label.setText(report.diagnosis)
        self.table.setRowCount(len(report.findings))
        for row, finding in enumerate(report.findings):
            cells = (finding.name, gain_text(finding), finding.verdict)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(finding.reason)
                self.table.setItem(row, column, item)
            if finding.recommended:
                button = QPushButton("Apply")
                button.setToolTip(f"Set the panels: {flags(finding.changes)}")
                button.clicked.connect(lambda _=False, f=finding: self.apply(f))
                self.table.setCellWidget(row, 3, button)
        self.table.resizeColumnToContents(0)
        self.table.resizeColumnToContents(1)
        if explained is not None:
            self.compile_label.setText("\n".join(graph_break_lines(explained)))

    def apply(self, finding: Finding) -> None:
        """Set the panels to ``finding``'s change; the user starts the run."""
        try:
            cfg = self.window_.current_config().replace(**dict(finding.changes))
        except ConfigError as exc:
            self.window_.set_status(f"Cannot apply {finding.name}: {exc}")
            return
        self.window_.apply_config(cfg)
        self.window_.set_status(f"Applied {finding.name} ({flags(finding.changes)})")

    def closeEvent(self, event: Any) -> None:
        if self.running:
            self.cancel()
            if self._task is not None:
                self._task.wait()
        super().closeEvent(event)


def open_speed_doctor(window: SpeedDoctorWindow) -> SpeedDoctorDialog | None:
    """Open the doctor on the panels' settings; None (said) when it cannot run."""
    cfg = config_when_idle(window, "the doctor times its own", "diagnose")
    if cfg is None:
        return None
    if window.speed_doctor is not None:  # the last one's figures: replaced
        window.speed_doctor.close()
        window.speed_doctor.deleteLater()
    parent = window if isinstance(window, QWidget) else None
    dialog = SpeedDoctorDialog(window, parent)
    dialog.setWindowModality(Qt.WindowModality.WindowModal)  # no run meanwhile
    window.speed_doctor = dialog
    dialog.show()
    dialog.start(cfg)
    return dialog
