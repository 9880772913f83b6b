"""The current run as the window shows it: progress, curves, status, speed.

:class:`RunView` subscribes to the window's :class:`RunController` and turns
each event of the run into what the panels, plots and status bar show. One
table maps each event type to its handler.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Slot

from workbench.core import events as E
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.registry import DownloadProgress
from workbench.core.session import Finished, RunPrepared
from workbench.core.train.engine import TrainingRun
from workbench.ui import dialogs
from workbench.ui.formatting import duration, rate, validation_summary
from workbench.ui.panels.training import PROGRESS_INTERVAL_S
from workbench.ui.run_controller import RunController, RunState
from workbench.ui.window.parts import RunViewWindow

log = logging.getLogger(__name__)


class RunView(QObject):
    """Shows the run's events in ``window`` (the MainWindow: a RunViewWindow).

    ``run_config``: the config of the run that trains now (what step times
    are measured for).
    """

    def __init__(self, window: RunViewWindow, controller: RunController) -> None:
        super().__init__(window)
        self.window = window
        self.controller = controller
        self.run_config: TrainConfig | None = None
        # The user's settings while a fine-tune or reproduction shows its own.
        self.borrowed_from: TrainConfig | None = None
        self._status_at = 0.0
        self._start_step = 0  # where the current run (or its resumption) began
        self._compile_started_at: float | None = None
        self._compiling = E.CompileStarted()  # what torch.compile traces now
        # The validation images and their NumPy view, made once per run.
        self._val_images: tuple[Any, Any] = (None, None)
        self._compile_timer = QTimer(self)
        self._compile_timer.setInterval(250)
        self._compile_timer.timeout.connect(self._on_compile_timer_timeout)
        controller.event.connect(self._on_controller_event)
        controller.pause_reached.connect(self._on_controller_pause_reached)
        controller.run_failed.connect(self._on_controller_run_failed)
        controller.run_finished.connect(self._on_controller_run_finished)
        self._event_handlers: dict[type, Callable[[Any], None]] = {
            RunPrepared: self._on_run_prepared,
            DownloadProgress: self._on_download_progress,
            E.FeaturesProgress: self._on_features_progress,
            E.RunStarted: self._on_run_started,
            E.Notice: self._on_notice,
            E.CompileStarted: self._on_compile_started,
            E.CompileFinished: self._on_compile_finished,
            E.StepMetrics: self._on_step,
            E.EpochMetrics: self._on_epoch,
            E.TrainResult: self._on_train_result,
            E.ProfileReport: self.window.show_profile,
            E.WeightsReady: window.draw_tab.on_weights_ready,
            E.LayerHealth: window.health_panel.add_health,
            E.WeightHistograms: window.health_panel.add_histograms,
            E.Evaluation: self._on_evaluation,
        }

    def _measure_key(self, cfg: TrainConfig) -> tuple[Any, ...]:
        kind = self.window.device_panel.kind()
        return (cfg.model, kind, cfg.precision, cfg.batch_size)

    def show_measurements(self) -> None:
        """Step times measured with the panels' model, device, precision, batch."""
        try:
            cfg = self.window.current_config()
        except ConfigError:
            return
        self.window.speed_panel.show_measured(self._measure_key(cfg))

    def _measure(self, **seconds: float | None) -> None:
        cfg = self.run_config
        if cfg is not None:
            key = self._measure_key(cfg)
            self.window.speed_panel.measure(key, compiled=cfg.compile, **seconds)

    @Slot(object)
    def _on_controller_event(self, event: Any) -> None:
        handler = self._event_handlers.get(type(event))
        if handler is not None:
            handler(event)

    def _on_run_prepared(self, ev: RunPrepared) -> None:
        run = ev.run
        self.window.data_panel.show_if_cached()
        self.window.loader_panel.show_path(run.loaders.path)
        if self.window.freeze_panel.model is not run.model:
            self.window.show_model(run.model)
        if ev.fine_tune is not None:
            base = run.config.base_dataset
            self.window.draw_panel.show_fine_tune_started(ev.fine_tune.before, base)
        self.window.draw_tab.refresh_reader()

    def _on_download_progress(self, p: DownloadProgress) -> None:
        if p.unit == "images":
            # Once decoded, the model is built next: the count must not look stuck.
            then = "; building the model…" if p.bytes_done == p.bytes_total else ""
            self.window.set_status(
                f"Decoding {p.file_name}: {p.bytes_done:,} of {p.bytes_total:,} "
                f"images{then}"
            )
            return
        done = f"{p.bytes_done / 1e6:.1f}"
        total = f" of {p.bytes_total / 1e6:.1f}" if p.bytes_total else ""
        self.window.set_status(
            f"Downloading {p.dataset}: {p.file_name} (file {p.file_index}/"
            f"{p.file_count}), {done}{total} MB"
        )

    def _on_features_progress(self, ev: E.FeaturesProgress) -> None:
        self.window.training_panel.clear_progress(
            f"preparing: features {ev.done:,} / {ev.total:,}"
        )
        self.window.set_status(
            "Computing the frozen layers' features once (the feature cache): "
            f"{ev.done:,} of {ev.total:,} images; Stop cancels"
        )

    def _on_run_started(self, ev: E.RunStarted) -> None:
        self._start_step = ev.start_step
        self.window.training_panel.start_progress(ev.start_step, ev.total_steps)
        self.window.curves.start(ev.steps_per_epoch)
        self.window.speed_panel.clear_split()
        self.window.model_panel.show_counts(ev.parameters, ev.trainable_parameters)
        self.window.model_panel.show_feature_cache(ev.feature_cache)
        self.window.set_status(
            f"Training {ev.model} on {ev.device} ({ev.precision}), "
            f"{ev.trainable_parameters:,} of {ev.parameters:,} parameters"
        )

    def _on_notice(self, ev: E.Notice) -> None:
        log.info("%s", ev.message)
        self.window.add_note(ev.message)
        if ev.message.startswith("feature cache: off from step"):  # a fallback
            self.window.model_panel.show_feature_cache(ev.message)

    def _on_compile_started(self, ev: E.CompileStarted) -> None:
        self._compile_started_at = time.monotonic()
        self._compiling = ev
        self._compile_timer.start()
        self._on_compile_timer_timeout()

    @Slot()
    def _on_compile_timer_timeout(self) -> None:
        if self._compile_started_at is None:
            return
        elapsed = time.monotonic() - self._compile_started_at
        traced = _traced(self._compiling)
        self.window.set_status(
            f"compiling… {elapsed:.0f} s (torch.compile traces {traced})"
        )
        if self._compiling.first:  # the speed panel reports the first only
            self.window.speed_panel.show_compiling(elapsed)

    def _on_compile_finished(self, ev: E.CompileFinished) -> None:
        self._compile_timer.stop()
        self._compile_started_at = None
        if ev.first:
            self._measure(compile_s=ev.seconds)
            self.window.set_status(f"Compiled in {ev.seconds:.1f} s; training")
        else:
            self.window.add_note(
                f"torch.compile compiled again for a batch of {ev.batch_size:,} "
                f"({ev.seconds:.1f} s, not counted in images/s); a batch size that "
                "divides the training set avoids it"
            )
        self.window.training_panel.restart_eta()  # ETA from steady steps only

    def _on_step(self, ev: E.StepMetrics) -> None:
        self.window.curves.add_step(ev)
        self.window.training_panel.show_step(
            ev.global_step, ev.total_steps, ev.images_per_s
        )
        # A run may log every step: texts change at most four times a second.
        now = time.monotonic()
        if now - self._status_at >= PROGRESS_INTERVAL_S:
            self._status_at = now
            self._measure(step_s=ev.step_seconds)
            self.window.speed_panel.show_split(ev.phases)
            if self.window.state is RunState.RUNNING:
                self.window.set_status(
                    f"Epoch {ev.epoch + 1} · step {ev.global_step:,}/"
                    f"{ev.total_steps:,} · loss {ev.loss:.4f}"
                )
        self.window.draw_tab.on_step()

    def _on_epoch(self, ev: E.EpochMetrics) -> None:
        self.window.curves.add_epoch(ev)
        self.window.set_status(
            f"Epoch {ev.epoch + 1}: {validation_summary(ev.val_accuracy, ev.val_loss)}"
        )

    def _on_train_result(self, result: E.TrainResult) -> None:
        self._measure(step_s=result.step_seconds, compile_s=result.compile_seconds)
        if result.phases:
            self.window.speed_panel.show_split(result.phases, whole_run=True)
        what = "Stopped" if result.stopped else "Finished"
        if result.early_stop:
            what = "Stopped early"
        if result.stopped and result.global_step == self._start_step:
            # Stopped while preparing (the feature cache): no figures to show.
            step = result.global_step
            self.window.set_status(
                "Stopped before the first step: nothing was trained yet"
                if step == 0
                else f"Stopped at step {step:,} before training any further"
            )
        else:
            self.window.set_status(
                f"{what} at step {result.global_step:,}: "
                f"{validation_summary(result.val_accuracy)}, "
                f"{rate(result.images_per_s)} img/s, {duration(result.seconds)}"
            )
        if result.early_stop:  # when, and why: the best epoch is kept as best.pt
            self.window.set_status(
                f"Stopped early after epoch {result.epochs_completed}: "
                f"{result.early_stop}; the best epoch is kept as best.pt"
            )
        self.window.training_panel.show_ended(result.global_step, what.lower())

    def _on_evaluation(self, ev: E.Evaluation) -> None:
        run = self.window.current_run
        if run is not None:
            self.show_evaluation(run, ev)

    def show_evaluation(self, run: TrainingRun, ev: E.Evaluation) -> None:
        """Add ``ev`` (``run``'s predictions) to the Evaluation tab."""
        self.window.evaluation_panel.set_class_names(run.loaders.info.class_names)
        images = run.loaders.val_images
        if images is None:
            arrays = None
        elif self._val_images[0] is images:
            arrays = self._val_images[1]
        else:  # one array per run: the gallery keeps its thumbnails across epochs
            arrays = images.numpy()
            self._val_images = (images, arrays)
        self.window.evaluation_panel.add_evaluation(ev, arrays)

    @Slot()
    def _on_controller_pause_reached(self) -> None:
        self.window.draw_tab.refresh_reader()
        run = self.window.current_run
        step = run.global_step if run is not None else 0
        if run is not None:  # the bar redraws at most 4 times a second: catch up
            self.window.training_panel.show_position(step, run.total_steps, "paused")
        self.window.set_status(
            f"Paused at step {step:,}: the freeze tree is editable; "
            "changes apply on Resume"
        )

    @Slot(str, str)
    def _on_controller_run_failed(self, message: str, details: str) -> None:
        self.window.set_status(f"Failed: {message}")
        if not self.controller.closing:
            dialogs.show_error(self, "Training failed", message, details)

    def borrow_settings(self) -> None:
        """A fine-tune or reproduction shows its settings; the user's return after."""
        try:
            self.borrowed_from = self.window.current_config()
        except ConfigError:  # nothing valid to give back
            self.borrowed_from = None

    def give_back_settings(self) -> None:
        """Show the user's own settings again (the borrowing run ended or never ran)."""
        cfg, self.borrowed_from = self.borrowed_from, None
        if cfg is not None:
            self.window.apply_config(cfg)

    @Slot(object)
    def _on_controller_run_finished(self, finished: Finished) -> None:
        self.window.curves.show_all()  # the final points, not a frame later
        self.give_back_settings()
        self._compile_timer.stop()
        self._compile_started_at = None
        run = self.window.current_run
        if run is not None and self.window.freeze_panel.model is run.model:
            self.window.freeze_panel.refresh_checks()
        self.show_measurements()
        self.window.draw_tab.refresh_reader()
        self.window.runs_tab.after_run(finished)
        self.window.draw_tab.after_run(self.controller.result)


def _traced(ev: E.CompileStarted) -> str:
    """What a compile traces, for the status line."""
    if ev.first:
        return "the first step"
    return f"again for a batch of {ev.batch_size:,} (the epoch's last)"
