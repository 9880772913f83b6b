"""Start with Processes > 1: a ``train --nproc`` job the window follows live.

:class:`JobView` starts the job through the :class:`RunController` and shows
what its run folder gains in the same views an in-process run feeds: the loss
and throughput curves, the progress bar, each epoch's accuracy and confusion
matrix, layer health. It also keeps the Device panel's Processes between
sessions and asks before the window closes on a running job.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, QSettings, QSignalBlocker, Slot

from workbench.core import events as E
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.distributed.ddp import check_batch
from workbench.ui import dialogs
from workbench.ui.formatting import percent, validation_summary
from workbench.ui.panels.training import PROGRESS_INTERVAL_S
from workbench.ui.process_job import JobEnded
from workbench.ui.run_controller import RunController
from workbench.ui.window import state as window_state
from workbench.ui.window.parts import JobViewWindow

log = logging.getLogger(__name__)


class JobView(QObject):
    """Runs on several processes, in ``window`` (the MainWindow: a JobViewWindow)."""

    def __init__(
        self, window: JobViewWindow, controller: RunController, settings: QSettings
    ) -> None:
        super().__init__(window)
        self.window = window
        self.controller = controller
        self.settings = settings
        self._config: TrainConfig | None = None
        self._matrices: list[np.ndarray] = []
        self._epochs_known = False  # the accuracy plot knows an epoch's steps
        self._last: E.StepMetrics | E.EpochMetrics | None = None
        self._status_at = 0.0
        panel = window.device_panel
        with QSignalBlocker(panel.processes_spin):  # the window is not built yet
            panel.set_processes(window_state.processes(settings))
        panel.processes_spin.valueChanged.connect(self._on_processes_changed)
        controller.job_started.connect(self._on_controller_job_started)
        controller.job_event.connect(self._on_controller_job_event)
        controller.job_ended.connect(self._on_controller_job_ended)
        self._handlers: dict[type, Callable[[Any], None]] = {
            E.StepMetrics: self._on_step,
            E.EpochMetrics: self._on_epoch,
            E.LayerHealth: window.health_panel.add_health,
            E.WeightHistograms: window.health_panel.add_histograms,
            E.Notice: self._on_notice,
        }

    @Slot(int)
    def _on_processes_changed(self, count: int) -> None:
        window_state.set_processes(self.settings, count)

    def processes(self) -> int:
        """How many processes Start trains on."""
        return int(self.window.device_panel.processes())

    def start_if_several(self, cfg: TrainConfig, nproc: int | None = None) -> bool:
        """Start ``cfg`` as a job on ``nproc`` processes (default: the Device
        panel's Processes) when that is more than one; False leaves it to the
        window."""
        nproc = self.processes() if nproc is None else nproc
        if nproc <= 1:
            return False
        w = self.window
        try:
            check_batch(cfg.batch_size, nproc)
            self.controller.start_job(cfg, nproc)
        except (ConfigError, OSError) as exc:
            w.show_error("Cannot start the run", exc)
            return True
        self._config, self._matrices, self._last = cfg, [], None
        self._epochs_known = False
        w.clear_run_views()
        w.training_panel.clear_progress(f"starting {nproc} processes…")
        notes = [f"A new run on {nproc} processes; the window follows its folder"]
        if self.controller.session.initial_weights is not None:
            notes.append("The loaded weights stay unused: the processes start anew")
        w.set_notes(notes)
        window_state.save_last_config(self.settings, cfg)
        w.set_status(f"Starting {nproc} processes…")
        return True

    def may_close(self) -> bool:
        """Whether the window may close now: a running job is stopped if confirmed."""
        job = self.controller.job
        if job is None or self.controller.closing:
            return True
        return dialogs.confirm(
            self.window,
            "Stop the training job?",
            f"A run is training on {job.nproc} processes. Closing the window "
            "stops it after the current batch; its checkpoint stays in its run "
            "folder.",
        )

    # ------------------------------------------------------------------ events

    @Slot(object)
    def _on_controller_job_started(self, folder: Path) -> None:
        self.window.set_status(f"Training on {self.processes()} processes: {folder}")
        self.window.runs_tab.refresh()

    @Slot(object)
    def _on_controller_job_event(self, event: Any) -> None:
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)

    def _on_step(self, ev: E.StepMetrics) -> None:
        w, cfg = self.window, self._config
        if self._last is None:
            w.training_panel.start_progress(0, ev.total_steps)
            if cfg is not None and cfg.max_steps is None:
                self._know_epochs(ev.total_steps // cfg.resolved_epochs)
        self._last = ev
        w.curves.add_step(ev)
        w.training_panel.show_step(ev.global_step, ev.total_steps, ev.images_per_s)
        now = time.monotonic()
        if now - self._status_at >= PROGRESS_INTERVAL_S:
            self._status_at = now
            w.set_status(
                f"Epoch {ev.epoch + 1} · step {ev.global_step:,}/{ev.total_steps:,} "
                f"· loss {ev.loss:.4f} ({self.processes()} processes)"
            )

    def _know_epochs(self, steps_per_epoch: int) -> None:
        if steps_per_epoch > 0 and not self._epochs_known:
            self._epochs_known = True
            self.window.curves.start(steps_per_epoch)

    def _on_epoch(self, ev: E.EpochMetrics) -> None:
        w = self.window
        self._know_epochs(ev.global_step // (ev.epoch + 1))
        self._last = ev
        w.curves.add_epoch(ev)
        if ev.confusion is not None:
            # Only the matrix is in the ledger: no per-image gallery for a job.
            self._matrices = self._matrices[: ev.epoch]
            self._matrices.append(np.array(ev.confusion, dtype=np.int64))
            if len(self._matrices) == ev.epoch + 1:
                w.evaluation_panel.set_history(self._matrices)
        w.set_status(
            f"Epoch {ev.epoch + 1}: {validation_summary(ev.val_accuracy, ev.val_loss)}"
        )

    def _on_notice(self, ev: E.Notice) -> None:
        self.window.add_note(ev.message)

    @Slot(object)
    def _on_controller_job_ended(self, ended: JobEnded) -> None:
        w, last = self.window, self._last
        step = last.global_step if last is not None else 0
        outcome = ended.outcome
        if outcome == "failed":
            w.set_status(f"Failed: {ended.message}")
            w.add_note(f"The run on several processes failed: {ended.message}")
            w.training_panel.clear_progress("failed")
        elif last is None:  # stopped while the processes started: nothing trained
            w.training_panel.clear_progress(f"{outcome} before the first step")
            w.set_status(
                f"{outcome.capitalize()} before the first step: nothing was trained "
                "or saved"
            )
        else:
            accuracy = ""
            if isinstance(last, E.EpochMetrics):
                accuracy = f": val accuracy {percent(last.val_accuracy)}"
            w.training_panel.show_ended(step, outcome)
            w.set_status(
                f"{outcome.capitalize()} at step {step:,}{accuracy}; its checkpoint "
                "is in the run folder (Runs tab: Open)"
            )
        w.runs_tab.after_job(ended)  # last: a reproduction's verdict is the status
