"""The window's Draw tab wiring: the reader's weights, and fine-tuning.

A mixin of :class:`~workbench.ui.main_window.MainWindow`: it feeds the Draw tab
the current model's weights (copied between training steps while a run trains)
and runs "Fine-tune on my digits" in the trainer thread, then its scoring.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import Slot

from workbench.core.config import ConfigError
from workbench.core.data import DATASET_INFO
from workbench.core.engine import TrainingRun
from workbench.core.finetune import FineTune, fine_tune_config, prepare_fine_tune
from workbench.core.freezing import all_but_head, frozen_names, set_frozen
from workbench.core.models import snapshot_state
from workbench.ui import dialogs
from workbench.ui.formatting import percent
from workbench.ui.tasks import TaskThread

# While a run trains, the Draw tab's reader gets fresh weights this often.
LIVE_WEIGHTS_INTERVAL_S = 0.5


class TeachMixin:
    """The Draw tab's reader and the fine-tune on my digits."""

    # ================================================================== draw and teach

    def _refresh_reader(self) -> None:
        """Give the Draw tab's reader the current model's weights.

        Idle or paused, nothing changes the model, so its weights are copied
        here; while a run trains, the engine copies them between two steps.
        """
        run = self._run
        if run is not None:
            cfg = run.config
        else:
            try:
                cfg = self.current_config()
            except ConfigError:
                return
        names = DATASET_INFO[cfg.dataset].class_names
        self.draw_panel.set_reader(cfg.model, cfg.style_dataset, names)
        if run is None:
            model = self.freeze_panel.model
            if model is not None:
                self.draw_panel.set_weights(
                    snapshot_state(model),
                    "Untrained model (fresh weights): train a run or open a "
                    "checkpoint, then draw.",
                )
        elif self._state in ("running", "pausing"):
            self._request_live_weights(force=True)
        else:
            self.draw_panel.set_weights(
                snapshot_state(run.model),
                f"{cfg.model} after step {run.global_step:,} "
                f"({DATASET_INFO[cfg.dataset].title})",
            )

    def _draw_tab_shown(self) -> bool:
        return self.tabs.currentWidget() is self.draw_page and self.isVisible()

    def _request_live_weights(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._weights_asked_at >= LIVE_WEIGHTS_INTERVAL_S:
            self._weights_asked_at = now
            self.trainer.control.request_weights()

    @Slot(int)
    def _on_trainer_weights_ready(self, _step: int) -> None:
        taken = self.trainer.control.take_weights()
        run = self._run
        if taken is None or run is None:
            return
        step, state = taken
        self.draw_panel.set_weights(
            state,
            f"Live: {run.config.model} at step {step:,}, copied between two "
            "training steps",
        )

    @Slot(int)
    def _on_tabs_current_changed(self, _index: int) -> None:
        if self.tabs.currentWidget() is self.draw_page:
            self._refresh_reader()

    @Slot()
    def _on_draw_panel_samples_changed(self) -> None:
        self.data_panel.forget("my-digits")

    @Slot(int, int)
    def _on_draw_panel_fine_tune_requested(self, epochs: int, replay: int) -> None:
        """Fine-tune the current model on my digits, in the trainer thread."""
        if self._state != "idle" or self.trainer.isRunning():
            return
        run = self._run
        if run is None:
            dialogs.show_error(
                self,
                "Nothing to fine-tune yet",
                "Fine-tuning starts from a trained model: train a run or open a "
                "checkpoint first.",
            )
            return
        try:
            count = len(self.draw_panel.store)
        except Exception as exc:  # DataError: a damaged index
            self._show_error("Cannot read my digits", exc)
            return
        if count == 0:
            dialogs.show_error(
                self,
                "No drawings yet",
                "Draw digits on the canvas and add them with 'Add to my digits' first.",
            )
            return
        model = run.model
        mask = tuple(frozen_names(model))
        notes = []
        if not mask:
            mask = tuple(all_but_head(model))
            set_frozen(model, mask)
            if self.freeze_panel.model is model:
                self.freeze_panel.refresh_checks()
            notes.append(
                "Nothing was frozen, so everything but the head is: the default "
                "for fine-tuning. Edit the freeze tree to change it."
            )
        try:
            cfg = fine_tune_config(run.config, mask, replay=replay, epochs=epochs)
        except ConfigError as exc:
            self._show_error("Cannot fine-tune this model", exc)
            return
        weights = snapshot_state(model)
        base = self.data_panel.cached_arrays(cfg.base_dataset, cfg.data_dir)
        holder: dict[str, FineTune] = {}

        def prepare(progress: Any, cancel: Any) -> TrainingRun:
            tune = prepare_fine_tune(
                cfg, weights, base_arrays=base, progress=progress, cancel=cancel
            )
            holder["tune"] = tune
            return tune.run

        self._fine_tune = holder
        self.apply_config(cfg)
        self._clear_plots()
        source = (
            f"fine-tune of {self._run_folder.id if self._run_folder else 'a model'}"
        )
        recorder = self._recorder_for(cfg, new=True, started_from=source)
        self.trainer.start_run(prepare, recorder=recorder)
        self._run_config = cfg
        self._notes = notes
        self.training_panel.show_notes(notes)
        self._set_state("running")
        self._set_status(
            f"Fine-tuning on {count} drawings plus {replay:,} replayed images…"
        )

    def _finish_fine_tune(self) -> None:
        """After a fine-tune: score it off the GUI thread, then show the card."""
        tune = self._fine_tune.get("tune") if self._fine_tune else None
        self._fine_tune = None
        if tune is None or self._closing:
            return
        if self.trainer.result is None:  # failed, or stopped before a step
            self.draw_panel.show_fine_tune_failed()
            return
        stopped = bool(self.trainer.result and self.trainer.result.stopped)
        task = TaskThread(lambda progress, cancel: tune.finish(), self, name="scores")
        task.setProperty("stopped", stopped)
        task.succeeded.connect(self._on_score_task_succeeded)
        task.failed.connect(self._on_score_task_failed)
        task.finished.connect(self._on_score_task_finished)
        self._score_task = task
        self._fine_tune_in_scoring = tune
        self._set_state("scoring")
        self._set_status("Measuring the fine-tune: my digits and the base test set…")
        task.start()

    @Slot()
    def _on_score_task_succeeded(self) -> None:
        task = self._score_task
        assert task is not None
        after, frozen = task.result
        tune = self._fine_tune_in_scoring
        title = tune.run.config.base_dataset
        self.draw_panel.show_fine_tune_report(
            tune.before, after, frozen, title, stopped=bool(task.property("stopped"))
        )
        self._set_status(
            f"Fine-tune done: my digits {percent(tune.before.mine)} -> "
            f"{percent(after.mine)}, {title} {percent(tune.before.base)} -> "
            f"{percent(after.base)}; {frozen.describe()}"
        )

    @Slot(str, str)
    def _on_score_task_failed(self, message: str, details: str) -> None:
        self._set_status(f"Could not measure the fine-tune: {message}")
        dialogs.show_error(self, "Could not measure the fine-tune", message, details)

    @Slot()
    def _on_score_task_finished(self) -> None:
        task = self._score_task
        self._score_task = None
        self._fine_tune_in_scoring = None
        if task is not None:
            task.deleteLater()
        self._set_state("idle")
        self.fine_tune_reported.emit()
