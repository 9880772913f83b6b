"""Run ▸ Sweep…: search settings with Optuna, every trial a run of the ledger.

The dialog edits the search space (which settings vary, over what), the trial
budget, the workers and the pruner; Start runs ``ptcore-workbench sweep`` on
the panels' settings as a background job (:class:`~workbench.ui.sweep_job
.SweepJob`). While it runs, the study is read every second: trials finished,
the best so far and the time left, the parallel-coordinates plot and the
settings' importances. The best trial can be taken into the panels ("Use these
settings") or trained again ("Reproduce"). Stop (or closing the window) ends
every worker after its batch and keeps what finished; a study left unfinished
is offered again, and Start resumes it.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from workbench.core.config import ConfigError, TrainConfig, save_config
from workbench.core.runs.listing import RunSummary, list_runs
from workbench.core.tuning.coordinates import axes_for, lines_for
from workbench.core.tuning.importance import ledger_importances, study_importances
from workbench.core.tuning.progress import SweepProgress, local_studies, read_progress
from workbench.core.tuning.space import FIELDS, LOG_FIELDS, SearchSpace
from workbench.core.tuning.study import open_study, param_text
from workbench.ui.plots.parallel_coordinates import ParallelCoordinates
from workbench.ui.sweep_job import STOPPED_EXIT_CODE, SweepJob

REFRESH_MS = 1000
CLOSE_WAIT_S = 10.0


class SweepWindow(Protocol):
    """What :func:`open_sweep` uses of the window."""

    sweep_dialog: QDialog | None

    def current_config(self) -> TrainConfig: ...
    def apply_config(self, cfg: TrainConfig) -> None: ...
    def set_status(self, text: str) -> None: ...
    def reproduce_run(self, run: RunSummary) -> None: ...


def default_space(cfg: TrainConfig) -> dict[str, str]:
    """Each field's values to offer, around the panels' settings."""
    return {
        "lr": f"{cfg.lr / 10:.0e} {cfg.lr * 10:.0e}",
        "weight_decay": "1e-6 1e-2",
        "batch_size": "64 128 256",
        "optimizer": "sgd adam",
        "schedule": "none cosine",
        "epochs": str(cfg.resolved_epochs),
        "model": cfg.model,
        "frozen_blocks": "0 1",
        "augment": "crop flip",
    }


class SweepDialog(QDialog):
    """The space, the budget, Start/Stop, and the study as it grows."""

    def __init__(self, window: SweepWindow, parent: QWidget | None) -> None:
        super().__init__(parent, objectName="sweepDialog")
        self.setWindowTitle("Sweep: search settings")
        self.window_ = window
        self.job: SweepJob | None = None
        self.progress: SweepProgress | None = None
        self._shown_finished = -1
        self._config_file: Path | None = None
        cfg = window.current_config()
        form = QFormLayout()
        self.fields: dict[str, tuple[QCheckBox, QLineEdit]] = {}
        for field, values in default_space(cfg).items():
            check = QCheckBox(field, objectName=f"sweepVary_{field}")
            check.setChecked(field == "lr")
            edit = QLineEdit(values, objectName=f"sweepValues_{field}")
            hint = "LOW HIGH (log scale)" if field in LOG_FIELDS else "choices"
            edit.setPlaceholderText(hint)
            edit.setToolTip(f"{field}: {hint}, separated by spaces")
            form.addRow(check, edit)
            self.fields[field] = (check, edit)
        self.trials = QSpinBox(objectName="sweepTrials", minimum=1, maximum=1000)
        self.trials.setValue(12)
        self.parallel = QSpinBox(objectName="sweepParallel", minimum=1)
        self.parallel.setMaximum(max(1, os.cpu_count() or 1))
        self.parallel.setToolTip("Trials trained at once; the cores are shared")
        self.pruner = QComboBox(objectName="sweepPruner")
        self.pruner.addItems(["halving", "hyperband", "none"])
        self.study = QLineEdit(objectName="sweepStudy")
        self.study.textChanged.connect(self._on_study_text_changed)
        form.addRow("Trials", self.trials)
        form.addRow("At once", self.parallel)
        form.addRow("Pruner", self.pruner)
        form.addRow("Study", self.study)
        self.message = QLabel(objectName="sweepMessage", wordWrap=True)
        self.start_button = QPushButton("Start", objectName="sweepStart")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop", objectName="sweepStop", enabled=False)
        self.stop_button.clicked.connect(self.stop)
        self.progress_bar = QProgressBar(objectName="sweepProgress")
        self.plot = ParallelCoordinates()
        self.importances = QLabel(objectName="sweepImportances", wordWrap=True)
        self.ledger_label = QLabel(objectName="sweepLedgerImportances", wordWrap=True)
        self.ledger_button = QPushButton(
            "Over the ledger", objectName="sweepLedgerButton"
        )
        self.ledger_button.setToolTip(
            "Each setting's share over every finished run of the panels' data and "
            "model in the ledger, swept or not"
        )
        self.ledger_button.clicked.connect(self.show_ledger_importances)
        self.best_label = QLabel(objectName="sweepBest", wordWrap=True)
        self.use_button = QPushButton("Use these settings", objectName="sweepUse")
        self.use_button.clicked.connect(self.use_best)
        self.reproduce_button = QPushButton("Reproduce", objectName="sweepReproduce")
        self.reproduce_button.clicked.connect(self.reproduce_best)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        best_row = QHBoxLayout()
        best_row.addWidget(self.best_label, 1)
        best_row.addWidget(self.use_button)
        best_row.addWidget(self.reproduce_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.importances)
        ledger_row = QHBoxLayout()
        ledger_row.addWidget(self.ledger_label, 1)
        ledger_row.addWidget(self.ledger_button)
        layout.addLayout(ledger_row)
        layout.addLayout(best_row)
        self.resize(760, 820)
        self._timer = QTimer(self, interval=REFRESH_MS)
        self._timer.timeout.connect(self.refresh)
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        unfinished = [p for p in local_studies() if not p.done]
        self.study.setText(
            unfinished[0].study
            if unfinished
            else dt.datetime.now().strftime("sweep-%Y%m%d-%H%M%S")
        )
        self._show_best(None)

    # ------------------------------------------------------------ the space

    def space_flags(self) -> list[str]:
        """The ``--sweep-FIELD`` flags of the ticked rows; ConfigError if wrong."""
        raw = {
            field: edit.text().replace(",", " ").split()
            for field, (check, edit) in self.fields.items()
            if check.isChecked()
        }
        SearchSpace.parse(raw)  # the command would refuse it: say so here
        flags = []
        for field in FIELDS:
            if field in raw:
                flags += ["--sweep-" + field.replace("_", "-"), *raw[field]]
        return flags

    def arguments(self) -> list[str]:
        """The ``sweep`` command's arguments: a new study, or the unfinished one."""
        name = self.study.text().strip()
        common = ["--parallel", str(self.parallel.value()), "--quiet"]
        if self._resumable(name):
            return ["--join", name, *common]
        cfg = self.window_.current_config()
        handle, path = tempfile.mkstemp(prefix="sweep-", suffix=".toml")
        os.close(handle)
        save_config(cfg, path)
        self._config_file = Path(path)
        return [
            "--config",
            path,
            "--study",
            name,
            "--trials",
            str(self.trials.value()),
            "--pruner",
            self.pruner.currentText(),
            *self.space_flags(),
            *common,
        ]

    def _resumable(self, name: str) -> bool:
        try:
            progress = read_progress(name)
        except ConfigError:
            return False
        return not progress.done

    @Slot(str)
    def _on_study_text_changed(self, name: str) -> None:
        if self.job is None:
            resumable = self._resumable(name.strip())
            self.start_button.setText("Resume" if resumable else "Start")
            if resumable:
                self.refresh()

    # ------------------------------------------------------------ the job

    @Slot()
    def start(self) -> None:
        if self.job is not None:
            return
        try:
            arguments = self.arguments()
        except ConfigError as exc:
            self.message.setText(f"Cannot sweep: {exc}")
            return
        self.job = SweepJob(arguments, self)
        self.job.ended.connect(self._on_job_ended)
        self.job.start()
        self.message.setText(
            f"Sweeping {self.study.text().strip()}: each trial is a run of the "
            "ledger; Stop keeps what finished"
        )
        self.start_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.study.setEnabled(False)
        self._timer.start()

    @Slot()
    def stop(self) -> None:
        if self.job is not None:
            self.job.stop()
            self.message.setText("Stopping after every worker's batch…")

    @Slot()
    def shutdown(self) -> None:
        """The window is closing: stop the sweep, keep what finished."""
        if self.job is not None:
            self.job.stop()
            self.job.wait(CLOSE_WAIT_S)

    @Slot(int, str)
    def _on_job_ended(self, code: int, last_line: str) -> None:
        self.job = None
        if self._config_file is not None:
            self._config_file.unlink(missing_ok=True)
            self._config_file = None
        self._timer.stop()
        self.refresh()
        if code == 0:
            self.message.setText("The sweep finished.")
        elif code == STOPPED_EXIT_CODE:
            self.message.setText(
                "Stopped: the trials that finished are kept; Resume goes on"
            )
        else:
            self.message.setText(f"The sweep failed: {last_line}")
        self.stop_button.setEnabled(False)
        self.study.setEnabled(True)
        self.start_button.setEnabled(True)
        self._on_study_text_changed(self.study.text())

    # ------------------------------------------------------------ the study

    @Slot()
    def refresh(self) -> None:
        """Read the study again and show where it stands."""
        try:
            progress = read_progress(self.study.text().strip())
        except ConfigError:
            return  # not made yet: the job is starting
        self.progress = progress
        self.progress_bar.setRange(0, progress.plan.trials)
        self.progress_bar.setValue(min(progress.finished, progress.plan.trials))
        self.progress_bar.setFormat(progress.line())
        self.progress_bar.setTextVisible(True)
        axes = axes_for(progress.trials)
        self.plot.show_lines(axes, lines_for(progress.trials, axes))
        if progress.finished != self._shown_finished:  # fANOVA: only when it changes
            self._shown_finished = progress.finished
            study = open_study(progress.study, create=False)
            self.importances.setText(study_importances(study).line())
        self._show_best(progress)

    def best_run(self) -> RunSummary | None:
        """The best trial's run in the ledger."""
        best = self.progress.best if self.progress is not None else None
        if best is None:
            return None
        label = f"{self.progress.study} #{best.number}"  # type: ignore[union-attr]
        return next((r for r in list_runs() if r.sweep == label), None)

    def _show_best(self, progress: SweepProgress | None) -> None:
        best = progress.best if progress is not None else None
        if best is None:
            self.best_label.setText("Best trial: none finished yet")
        else:
            values = ", ".join(f"{k} {param_text(v)}" for k, v in best.params.items())
            self.best_label.setText(
                f"Best trial: {best.number}, {best.value:.1%} ({values})"
            )
        self.use_button.setEnabled(best is not None)
        self.reproduce_button.setEnabled(best is not None and self.job is None)

    @Slot()
    def show_ledger_importances(self) -> None:
        """The importances over every finished run of the panels' data and model."""
        cfg = self.window_.current_config()
        found = ledger_importances(list_runs(), cfg.dataset, cfg.model)
        self.ledger_label.setText(
            f"Over {found.trials} finished runs of {cfg.model} on {cfg.dataset}: "
            f"{found.line()}"
        )

    @Slot()
    def use_best(self) -> None:
        """Put the best trial's settings in the panels."""
        run = self.best_run()
        if run is None:
            return
        self.window_.apply_config(TrainConfig.from_dict(dict(run.config)))
        self.window_.set_status(f"Settings of {run.sweep} ({run.title}) in the panels")

    @Slot()
    def reproduce_best(self) -> None:
        """Train the best trial again, as the Runs tab's Reproduce does."""
        run = self.best_run()
        if run is not None:
            self.window_.reproduce_run(run)


def open_sweep(window: SweepWindow) -> SweepDialog | None:
    """Show the sweep dialog (the same one again while it is open)."""
    shown = window.sweep_dialog
    if isinstance(shown, SweepDialog) and (shown.isVisible() or shown.job is not None):
        shown.show()  # closed while its sweep runs: the same one, still following
        shown.raise_()
        return shown
    try:
        window.current_config()
    except ConfigError as exc:
        window.set_status(f"Cannot sweep: {exc}")
        return None
    parent = window if isinstance(window, QWidget) else None
    dialog = SweepDialog(window, parent)
    window.sweep_dialog = dialog
    dialog.show()
    return dialog
