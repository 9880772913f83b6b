"""The Draw tab's wiring: the reader's weights, and fine-tuning on my digits.

:class:`DrawTab` feeds the Draw tab the current model's weights (copied
between training steps while a run trains) and runs "Fine-tune on my digits"
through the window's :class:`RunController`, then shows its before/after card.
The reader follows the run's own data description (class names, input shape,
per-channel statistics: ``run.loaders.info``), so an image folder's classes
are named as its folders are; without a run, what the panels choose.
"""

from __future__ import annotations

import dataclasses
import math
import time

from PySide6.QtCore import QObject, Slot

from workbench.core import events as E
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.describe import input_spec
from workbench.core.data.registry import DATASET_INFO, DataError, DatasetInfo
from workbench.core.finetune import FrozenCheck, Scores
from workbench.core.models.builtins import snapshot_state
from workbench.core.models.catalog import is_torchvision
from workbench.core.models.inputs import fit_to_model
from workbench.core.predict import PHOTO_DATASETS, ScoredImage
from workbench.core.train.engine import TrainingRun
from workbench.ui import dialogs
from workbench.ui.formatting import percent
from workbench.ui.run_controller import RunController, RunState
from workbench.ui.window.parts import TeachWindow

# While a run trains, the Draw tab's reader gets fresh weights this often.
LIVE_WEIGHTS_INTERVAL_S = 0.5
TAB_TITLES = {False: "Draw a digit", True: "Try an image"}
# A folder's statistics are measured when a run loads it; until then a
# fresh model reads with these (its weights are untrained anyway).
UNMEASURED_MEAN, UNMEASURED_STD = 0.5, 0.25


class DrawTab(QObject):
    """The Draw tab's reader and the fine-tune on my digits.

    ``window`` is the :class:`~workbench.ui.main_window.MainWindow`, seen
    through :class:`~workbench.ui.window.parts.TeachWindow`.
    """

    def __init__(self, window: TeachWindow, controller: RunController) -> None:
        super().__init__(window)
        self.window = window
        self.controller = controller
        self.panel = window.draw_panel
        self._weights_asked_at = -math.inf
        self.panel.fine_tune_requested.connect(self._on_panel_fine_tune_requested)
        self.panel.samples_changed.connect(self._on_panel_samples_changed)
        window.evaluation_panel.open_in_canvas.connect(self._on_open_in_canvas)
        window.tabs.currentChanged.connect(self._on_tabs_current_changed)
        controller.fine_tune_scored.connect(self._on_controller_fine_tune_scored)
        controller.score_failed.connect(self._on_controller_score_failed)

    # ================================================================== the reader

    def refresh_reader(self) -> None:
        """Give the Draw tab's reader the current model's weights.

        Idle or paused, nothing changes the model, so its weights are copied
        here; while a run trains, the engine copies them between two steps.
        """
        w, run = self.window, self.controller.run
        if run is not None:
            cfg = run.config
        else:
            try:
                cfg = w.current_config()
            except ConfigError:
                return
        info = self._reader_info(cfg, run)
        if info is None:
            return
        # Photo datasets and 3-channel models read image files, not the canvas.
        photo = cfg.dataset in PHOTO_DATASETS or is_torchvision(cfg.model)
        try:
            if photo:  # a digits-trained torchvision model: the digits' recipe
                recipe = (
                    cfg.dataset if cfg.dataset in PHOTO_DATASETS else cfg.style_dataset
                )
                self.panel.set_reader(cfg.model, recipe, info=info, weights=cfg.weights)
            else:  # the digit recipe and statistics of the dataset drawn like
                self.panel.set_reader(cfg.model, cfg.style_dataset, info.class_names)
        except ConfigError:  # a broken model file: the Model panel says why
            return
        tabs = w.tabs
        tabs.setTabText(tabs.indexOf(w.draw_page), TAB_TITLES[photo])
        if run is None:
            model = w.freeze_panel.model
            loaded = self.controller.session.initial_weights
            if model is None:
                return
            if loaded is not None and loaded.model_key == w.chosen_model_key():
                source = (
                    f"Loaded weights from {loaded.source} (the next run starts "
                    "from them)"
                )
            else:
                source = (
                    "Untrained model (fresh weights): train a run or open a "
                    "checkpoint, then draw."
                )
            self.panel.set_weights(snapshot_state(model), source)
        elif self.controller.state in (RunState.RUNNING, RunState.PAUSING):
            self._request_live_weights(force=True)
        elif self.controller.state is not RunState.PREPARING:
            origin = self.controller.session.weights_origin  # best.pt or latest
            self.panel.set_weights(
                snapshot_state(run.model),
                f"{cfg.model} after step {run.global_step:,} ({info.title})"
                + (f"; {origin}" if origin else ""),
            )

    def _reader_info(
        self, cfg: TrainConfig, run: TrainingRun | None
    ) -> DatasetInfo | None:
        """What the reader's inputs are: the run's data, else the panels' choice.

        None when the chosen folder cannot be described (missing, no classes).
        """
        if run is not None:
            return run.loaders.info
        if cfg.dataset not in PHOTO_DATASETS:
            if not is_torchvision(cfg.model):
                return DATASET_INFO[cfg.dataset]
            # Gray digits repeated to 3 channels, at the model's size.
            fitted = fit_to_model(DATASET_INFO[cfg.dataset], cfg.model, cfg.weights)
            shape = self.window.chosen_model_key()[2]
            return dataclasses.replace(fitted, image_shape=shape)
        _model, _classes, shape = self.window.chosen_model_key()
        try:
            spec = input_spec(cfg.dataset, cfg.data_dir, shape[1])
        except DataError:
            return None
        if cfg.dataset in DATASET_INFO:  # CIFAR-10 at the chosen size
            return dataclasses.replace(DATASET_INFO[cfg.dataset], image_shape=shape)
        channels = shape[0]
        return DatasetInfo(
            name=cfg.dataset,
            title=f"Image folder {cfg.data_dir}",
            num_classes=spec.num_classes,
            class_names=spec.class_names,
            mean=(UNMEASURED_MEAN,) * channels,
            std=(UNMEASURED_STD,) * channels,
            offline=True,
            image_shape=shape,
        )

    def _shown(self) -> bool:
        w = self.window
        return w.tabs.currentWidget() is w.draw_page and w.isVisible()

    def on_step(self) -> None:
        """A logged step: fresh weights for the reader if the tab is shown."""
        if self._shown():
            self._request_live_weights()

    def _request_live_weights(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._weights_asked_at >= LIVE_WEIGHTS_INTERVAL_S:
            self._weights_asked_at = now
            self.controller.request_weights()

    def on_weights_ready(self, _ev: E.WeightsReady) -> None:
        """The engine copied the weights between two steps: read with them."""
        taken = self.controller.take_weights()
        run = self.controller.run
        if taken is None or run is None:
            return
        step, state = taken
        self.panel.set_weights(
            state,
            f"Live: {run.config.model} at step {step:,}, copied between two "
            "training steps",
        )

    @Slot(int)
    def _on_tabs_current_changed(self, _index: int) -> None:
        if self.window.tabs.currentWidget() is self.window.draw_page:
            self.refresh_reader()
            # Its keys (Esc, Undo, 0-9, Enter) work at once, also after Ctrl+2.
            self.panel.focus_canvas()

    @Slot(object)
    def _on_open_in_canvas(self, scored: ScoredImage) -> None:
        self.window.tabs.setCurrentWidget(self.window.draw_page)
        self.panel.open_scored(scored)

    @Slot()
    def _on_panel_samples_changed(self) -> None:
        self.window.data_panel.forget("my-digits")

    # ================================================================== fine-tune

    @Slot(int, int)
    def _on_panel_fine_tune_requested(self, epochs: int, replay: int) -> None:
        """Fine-tune the current model on my digits, in the trainer thread."""
        w = self.window
        if self.controller.state is not RunState.IDLE:
            return
        if self.controller.run is None:
            dialogs.show_error(
                w,
                "Nothing to fine-tune yet",
                "Fine-tuning starts from a trained model: train a run or open a "
                "checkpoint first.",
            )
            return
        try:
            count = self.panel.drawing_count()
        except Exception as exc:  # DataError: a damaged index
            w.show_error("Cannot read my digits", exc)
            return
        if count == 0:
            dialogs.show_error(
                w,
                "No drawings yet",
                "Draw digits on the canvas and add them with 'Add to my digits' first.",
            )
            return
        w.run_view.borrow_settings()  # before the plan freezes all but the head
        try:
            plan, notes = self.controller.session.plan_fine_tune(
                epochs=epochs, replay=replay
            )
        except ConfigError as exc:
            w.run_view.give_back_settings()
            w.show_error("Cannot fine-tune this model", exc)
            return
        w.freeze_panel.refresh_checks()  # the plan may have frozen all but the head
        w.apply_config(plan.config)
        w.launch(
            plan,
            notes,
            f"Fine-tuning on {count} drawings plus {replay:,} replayed images…",
        )

    def after_run(self, result: E.TrainResult | None) -> None:
        """After a fine-tune run: score it off the GUI thread, then show the card."""
        if self.controller.session.fine_tune is None or self.controller.closing:
            return
        if result is None:  # failed, or stopped before a step
            self.controller.session.fine_tune = None
            self.panel.show_fine_tune_failed()
            return
        self.controller.score_fine_tune(stopped=result.stopped)
        self.window.set_status(
            "Measuring the fine-tune: my digits and the base test set…"
        )

    @Slot(object, object, bool)
    def _on_controller_fine_tune_scored(
        self, after: Scores, frozen: FrozenCheck, stopped: bool
    ) -> None:
        tune = self.controller.session.fine_tune
        self.controller.session.fine_tune = None
        if tune is None:
            return
        title = tune.run.config.base_dataset
        self.panel.show_fine_tune_report(
            tune.before, after, frozen, title, stopped=stopped
        )
        self.window.set_status(
            f"Fine-tune done: my digits {percent(tune.before.mine)} -> "
            f"{percent(after.mine)}, {title} {percent(tune.before.base)} -> "
            f"{percent(after.base)}; {frozen.describe()}"
        )

    @Slot(str, str)
    def _on_controller_score_failed(self, message: str, details: str) -> None:
        self.controller.session.fine_tune = None
        self.window.set_status(f"Could not measure the fine-tune: {message}")
        dialogs.show_error(
            self.window, "Could not measure the fine-tune", message, details
        )
