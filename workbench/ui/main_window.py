"""The workbench window: every knob on one screen, a run in a thread, live plots.

No training logic lives here. The window keeps a *current run* (a core
``TrainingRun``): prepared by the trainer thread on Start, or restored from a
checkpoint. The freeze tree shows that run's model when the architecture
matches the panels, otherwise a freshly built preview of the chosen
architecture whose mask the next run takes over.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
from typing import Any

import numpy as np
from PySide6.QtCore import QSettings, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QMenu,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from torch import nn

from workbench.core import events as E
from workbench.core.checkpoints import (
    checkpoint_dict,
    restore_run,
)
from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data import DATASET_INFO, ImageArrays, load_run_arrays
from workbench.core.doctor import load_exact
from workbench.core.engine import TrainingRun, prepare_run
from workbench.core.finetune import FineTune
from workbench.core.freezing import (
    FreezeError,
    count_parameters,
    frozen_names,
    set_frozen,
)
from workbench.core.models import build_model
from workbench.core.runs import RunFolder
from workbench.ui import dialogs, window_state
from workbench.ui.formatting import duration, percent
from workbench.ui.overlay import RunOverlay
from workbench.ui.panels.data import DataPanel
from workbench.ui.panels.device import DevicePanel
from workbench.ui.panels.draw import DrawPanel
from workbench.ui.panels.evaluation import EvaluationPanel
from workbench.ui.panels.freeze import FreezePanel
from workbench.ui.panels.health import LayerHealthPanel
from workbench.ui.panels.loader import LoaderPanel
from workbench.ui.panels.model import ModelPanel
from workbench.ui.panels.runs import RunsPanel
from workbench.ui.panels.speed import SpeedPanel
from workbench.ui.panels.training import CONTINUE_TIP, START_TIP, TrainingPanel
from workbench.ui.plots import LivePlot, Smoother
from workbench.ui.tasks import TaskThread, describe_error
from workbench.ui.trainer_thread import TrainerThread
from workbench.ui.window_files import FileActionsMixin
from workbench.ui.window_runs import RunsMixin
from workbench.ui.window_teach import TeachMixin

log = logging.getLogger(__name__)

# Exponential smoothing of the loss curve per logged point (TensorBoard-style).
SMOOTHING = 0.8
# How long closing the window waits for the run to finish its batch.
SHUTDOWN_WAIT_MS = 5000
# Settings a run can change and still continue from where it is (core restore_run).
RESUME_SAFE = frozenset(
    {
        "epochs",
        "max_steps",
        "device",
        "precision",
        "loader",
        "workers",
        "pin_memory",
        "compile",
        "compile_mode",
        "log_every",
        "download",
        "data_dir",
        "autosave_every",
    }
)
START_KEYS = (QKeySequence("Ctrl+Return"), QKeySequence("F5"))
PAUSE_KEYS = (QKeySequence("F6"), QKeySequence(Qt.Key.Key_Pause))
STOP_KEYS = (QKeySequence("Shift+F5"), QKeySequence("Ctrl+."))


def _keys_text(keys: tuple[QKeySequence, ...]) -> str:
    return " or ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in keys)


def _scrolling(widget: QWidget, name: str) -> QScrollArea:
    area = QScrollArea(objectName=name)
    area.setWidget(widget)
    area.setWidgetResizable(True)
    return area


def config_differences(a: TrainConfig, b: TrainConfig) -> set[str]:
    """Names of the fields whose values differ (``frozen`` ignored)."""
    return {
        f.name
        for f in dataclasses.fields(TrainConfig)
        if f.name != "frozen" and getattr(a, f.name) != getattr(b, f.name)
    }


class MainWindow(FileActionsMixin, TeachMixin, RunsMixin, QMainWindow):
    """Panels, freeze tree, plots, and the trainer thread (``self.trainer``).

    ``self.trainer`` serves every run; its signals are emitted in the training
    thread. The window re-emits them from the GUI thread once it has handled
    them (same names, plus ``run_finished`` when the controls are idle again):
    connect to these to observe the window, as tests do, without queued
    cross-thread deliveries.
    """

    state_changed = Signal(str)  # "idle", "running", "pausing", "paused", "opening"
    run_started = Signal(object)  # RunStarted
    step_finished = Signal(object)  # StepMetrics
    epoch_finished = Signal(object)  # EpochMetrics
    pause_reached = Signal()
    training_done = Signal(object)  # TrainResult
    run_failed = Signal(str, str)  # message, traceback
    run_finished = Signal()  # the trainer thread ended; the controls are idle
    fine_tune_reported = Signal()  # the before/after card of a fine-tune is shown
    reproduction_checked = Signal(object)  # Reproduction: a reproduce run's verdict

    def __init__(
        self, parent: QWidget | None = None, *, settings: QSettings | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mainWindow")
        self.setWindowTitle("ptcore workbench")
        self._settings = (
            settings if settings is not None else window_state.open_window_settings()
        )
        self._base_config = TrainConfig()
        self._run: TrainingRun | None = None
        self._tree_key: tuple[str, int] | None = None
        self._state = "idle"
        self._closing = False
        self._open_task: TaskThread | None = None
        self._run_arrays: dict[str, ImageArrays] = {}
        self._run_config: TrainConfig | None = None
        self._measurements: dict[tuple[Any, ...], dict[str, float]] = {}
        self._smoother = Smoother(SMOOTHING)
        self._steps_per_epoch = 1
        self._progress_clock: tuple[float, int] | None = None
        self._paused_since: float | None = None
        self._compile_started_at: float | None = None
        self._notes: list[str] = []
        self._fine_tune: dict[str, FineTune] | None = None
        self._score_task: TaskThread | None = None
        self._fine_tune_in_scoring: FineTune | None = None
        self._weights_asked_at = -math.inf
        self._run_folder: RunFolder | None = None
        self._start_after_open = False  # the resume offer continues the run at once
        # Weights loaded with "Load weights…" (model key, state, file name): the
        # next new run starts from them.
        self._init_weights: tuple[tuple[str, int], dict[str, Any], str] | None = None

        self.trainer = TrainerThread(self)
        self._build_panels()
        self._build_plots()
        self._build_layout()
        self._build_actions()
        self._connect_trainer()
        self.overlay = RunOverlay(self.loss_plot, self.accuracy_plot)
        self._connect_runs_panel()
        self._compile_timer = QTimer(self)
        self._compile_timer.setInterval(250)
        self._compile_timer.timeout.connect(self._on_compile_timer_timeout)

        self._restore_window_state()
        cfg = window_state.load_last_config(self._settings) or TrainConfig()
        self.apply_config(cfg)
        self._set_state("idle")
        self._set_status("Ready")
        # After the event loop starts, so the window is up behind the question.
        QTimer.singleShot(0, self.offer_resume)

    # ================================================================== building

    def _build_panels(self) -> None:
        self.training_panel = TrainingPanel()
        self.data_panel = DataPanel()
        self.model_panel = ModelPanel()
        self.device_panel = DevicePanel()
        self.loader_panel = LoaderPanel()
        self.speed_panel = SpeedPanel()
        self.freeze_panel = FreezePanel()
        self.draw_panel = DrawPanel()
        self.draw_panel.fine_tune_requested.connect(
            self._on_draw_panel_fine_tune_requested
        )
        self.draw_panel.samples_changed.connect(self._on_draw_panel_samples_changed)
        self.evaluation_panel = EvaluationPanel()
        self.evaluation_panel.open_in_canvas.connect(
            self._on_evaluation_panel_open_in_canvas
        )
        self.health_panel = LayerHealthPanel()
        self.runs_panel = RunsPanel()
        self._config_panels = (
            self.training_panel,
            self.data_panel,
            self.model_panel,
            self.device_panel,
            self.loader_panel,
            self.speed_panel,
        )
        for panel in self._config_panels:
            panel.changed.connect(self._on_panel_changed)
        self.freeze_panel.mask_changed.connect(self._on_freeze_panel_mask_changed)
        self.data_panel.arrays_changed.connect(self._update_actions)

    def _build_plots(self) -> None:
        self.loss_plot = LivePlot("Training loss", "step", "loss", x_name="step")
        self.loss_plot.setObjectName("lossPlot")
        self.loss_plot.add_series("loss", (120, 170, 220), width=1)
        self.loss_plot.add_series("smoothed", (20, 70, 160), width=2.5)
        self.accuracy_plot = LivePlot(
            "Accuracy per epoch",
            "epoch",
            "accuracy (%)",
            x_name="epoch",
            legend_offset=(-10, -10),  # bottom right: accuracy climbs to the top
        )
        self.accuracy_plot.setObjectName("accuracyPlot")
        self.accuracy_plot.add_series(
            "train", (230, 120, 20), width=2, symbol="o", fmt="{:.2f}%"
        )
        self.accuracy_plot.add_series(
            "validation", (30, 150, 60), width=2, symbol="o", fmt="{:.2f}%"
        )
        self.throughput_plot = LivePlot(
            "Throughput", "step", "images/s", x_name="step", legend_offset=None
        )
        self.throughput_plot.setObjectName("throughputPlot")
        self.throughput_plot.add_series(
            "images/s", (140, 60, 160), width=1.5, fmt="{:,.0f}"
        )

    def _build_layout(self) -> None:
        settings_column = QWidget()
        column = QVBoxLayout(settings_column)
        for panel in (
            self.training_panel,
            self.data_panel,
            self.device_panel,
            self.loader_panel,
            self.speed_panel,
        ):
            column.addWidget(panel)
        column.addStretch(1)
        scroll = QScrollArea(objectName="settingsScroll")
        scroll.setWidget(settings_column)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(280)

        model_column = QWidget()
        layout = QVBoxLayout(model_column)
        layout.addWidget(self.model_panel)
        layout.addWidget(self.freeze_panel, 1)

        self.plot_splitter = QSplitter(
            Qt.Orientation.Vertical, objectName="plotSplitter"
        )
        for plot in (self.loss_plot, self.accuracy_plot, self.throughput_plot):
            self.plot_splitter.addWidget(plot)
        self.plot_splitter.setSizes([400, 250, 200])

        self.main_splitter = QSplitter(
            Qt.Orientation.Horizontal, objectName="mainSplitter"
        )
        self.tabs = QTabWidget(objectName="mainTabs")
        self.tabs.addTab(self.plot_splitter, "Training curves")
        # Pages scroll rather than force their minimum size on the whole window.
        self.draw_page = _scrolling(self.draw_panel, "drawPage")
        self.evaluation_page = _scrolling(self.evaluation_panel, "evaluationPage")
        self.health_page = _scrolling(self.health_panel, "healthPage")
        self.tabs.addTab(self.draw_page, "Draw a digit")
        self.tabs.addTab(self.evaluation_page, "Evaluation")
        self.tabs.addTab(self.health_page, "Layer health")
        self.runs_page = _scrolling(self.runs_panel, "runsPage")
        self.tabs.addTab(self.runs_page, "Runs")
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)

        self.main_splitter.addWidget(scroll)
        self.main_splitter.addWidget(model_column)
        self.main_splitter.addWidget(self.tabs)
        self.main_splitter.setStretchFactor(2, 1)
        self.main_splitter.setSizes([420, 380, 700])
        self.setCentralWidget(self.main_splitter)

        self.status_label = QLabel(objectName="statusLabel")
        self.statusBar().addWidget(self.status_label, 1)

    def _action(
        self,
        text: str,
        name: str,
        slot: Any,
        keys: tuple[QKeySequence, ...] = (),
        tip: str = "",
    ) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        if keys:
            action.setShortcuts(list(keys))
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.triggered.connect(slot)
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        self.open_action = self._action(
            "&Open checkpoint…",
            "openCheckpointAction",
            self.open_checkpoint_dialog,
            (QKeySequence(QKeySequence.StandardKey.Open),),
        )
        self.load_weights_action = self._action(
            "Load &weights into the model…",
            "loadWeightsAction",
            self.load_weights_dialog,
            (QKeySequence("Ctrl+Shift+O"),),
            "Start the next run from a checkpoint's or state_dict's weights; the "
            "doctor lists what fits and can load part (a new head)",
        )
        self.save_action = self._action(
            "&Save checkpoint…",
            "saveCheckpointAction",
            self.save_checkpoint_dialog,
            (QKeySequence(QKeySequence.StandardKey.Save),),
        )
        self.load_config_action = self._action(
            "&Load run config…", "loadConfigAction", self.load_config_dialog
        )
        self.save_config_action = self._action(
            "Save run &config…", "saveConfigAction", self.save_config_dialog
        )
        self.quit_action = self._action(
            "&Quit", "quitAction", self.close, (QKeySequence("Ctrl+Q"),)
        )
        self.start_action = self._action(
            "&Start", "startAction", self.start, START_KEYS
        )
        self.pause_action = self._action(
            "&Pause", "pauseAction", self.toggle_pause, PAUSE_KEYS
        )
        self.stop_action = self._action("S&top", "stopAction", self.stop, STOP_KEYS)
        self.reset_action = self._action("&New run", "resetAction", self.reset_run)

        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self.open_action)
        self.recent_menu = QMenu("Open &recent", self, objectName="recentMenu")
        file_menu.addMenu(self.recent_menu)
        file_menu.addAction(self.load_weights_action)
        file_menu.addAction(self.save_action)
        file_menu.addSeparator()
        file_menu.addAction(self.load_config_action)
        file_menu.addAction(self.save_config_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        run_menu = self.menuBar().addMenu("&Run")
        for action in (self.start_action, self.pause_action, self.stop_action):
            run_menu.addAction(action)
        run_menu.addSeparator()
        run_menu.addAction(self.reset_action)
        view_menu = self.menuBar().addMenu("&View")
        tabs = (
            ("Training &curves", "showCurvesAction"),
            ("&Draw a digit", "showDrawAction"),
            ("&Evaluation", "showEvaluationAction"),
            ("Layer &health", "showHealthAction"),
            ("&Runs", "showRunsAction"),
        )
        for index, (text, name) in enumerate(tabs):
            action = self._action(
                text,
                name,
                lambda _=False, i=index: self.tabs.setCurrentIndex(i),
                (QKeySequence(f"Ctrl+{index + 1}"),),
            )
            view_menu.addAction(action)
        self._fill_recent_menu()

        panel = self.training_panel
        panel.start_button.clicked.connect(self.start_action.trigger)
        panel.pause_button.clicked.connect(self.pause_action.trigger)
        panel.stop_button.clicked.connect(self.stop_action.trigger)
        panel.reset_button.clicked.connect(self.reset_action.trigger)
        panel.pause_button.setToolTip(
            f"Pause or resume after this batch ({_keys_text(PAUSE_KEYS)})"
        )
        panel.stop_button.setToolTip(
            f"Stop after this batch; the run can be continued ({_keys_text(STOP_KEYS)})"
        )

    def _connect_trainer(self) -> None:
        t = self.trainer
        t.status_changed.connect(self._on_trainer_status_changed)
        t.download_progressed.connect(self._on_trainer_download_progressed)
        t.run_prepared.connect(self._on_trainer_run_prepared)
        t.run_started.connect(self._on_trainer_run_started)
        t.notice_posted.connect(self._on_trainer_notice_posted)
        t.compile_started.connect(self._on_trainer_compile_started)
        t.compile_finished.connect(self._on_trainer_compile_finished)
        t.step_finished.connect(self._on_trainer_step_finished)
        t.epoch_finished.connect(self._on_trainer_epoch_finished)
        t.pause_reached.connect(self._on_trainer_pause_reached)
        t.training_done.connect(self._on_trainer_training_done)
        t.failed.connect(self._on_trainer_failed)
        t.finished.connect(self._on_trainer_finished)
        t.weights_ready.connect(self._on_trainer_weights_ready)
        t.health_sampled.connect(self.health_panel.add_health)
        t.histograms_ready.connect(self.health_panel.add_histograms)
        t.evaluation_ready.connect(self._on_trainer_evaluation_ready)

    # ================================================================== config

    @property
    def state(self) -> str:
        """``idle``, ``running``, ``pausing``, ``paused`` or ``opening``."""
        return self._state

    @property
    def current_run(self) -> TrainingRun | None:
        """The run Start continues (None before the first run)."""
        return self._run

    def current_config(self) -> TrainConfig:
        """The config the panels show, with the freeze tree's mask.

        Raises
        ------
        ConfigError
            When the combination is not valid.
        """
        values: dict[str, Any] = {}
        for panel in self._config_panels:
            values.update(panel.config_values())
        model = self.freeze_panel.model
        values["frozen"] = tuple(frozen_names(model)) if model is not None else ()
        return self._base_config.replace(**values)

    def apply_config(self, cfg: TrainConfig) -> None:
        """Show ``cfg`` in every panel; fields without a widget are kept."""
        self._base_config = cfg
        for panel in self._config_panels:
            panel.apply_config(cfg)
        self._after_config_change(frozen=cfg.frozen)

    def _after_config_change(self, frozen: tuple[str, ...] | None = None) -> None:
        kind = self.device_panel.kind()
        self.loader_panel.set_device_kind(kind)
        self.speed_panel.set_device_kind(kind)
        self.training_panel.set_dataset(self.data_panel.dataset())
        self._sync_tree_model(frozen)
        self._show_measurements()
        self._update_actions()
        if self._run is None:
            self._refresh_reader()

    @Slot()
    def _on_panel_changed(self) -> None:
        self._after_config_change()

    def _model_key(self) -> tuple[str, int]:
        return (
            self.model_panel.model(),
            DATASET_INFO[self.data_panel.dataset()].num_classes,
        )

    def _run_key(self) -> tuple[str, int] | None:
        if self._run is None:
            return None
        cfg = self._run.config
        return (cfg.model, DATASET_INFO[cfg.dataset].num_classes)

    def _sync_tree_model(self, frozen: tuple[str, ...] | None = None) -> None:
        """Show the run's model if it has the chosen architecture, else a preview.

        ``frozen`` (names or patterns) becomes the shown model's mask; None keeps it.
        """
        key = self._model_key()
        if self._run is not None and self._run_key() == key:
            model = self._run.model
        elif self._tree_key == key and self.freeze_panel.model is not None:
            model = self.freeze_panel.model
        else:
            model = build_model(
                key[0], key[1], seed=self.training_panel.seed_spin.value()
            )
        if frozen is not None:
            try:
                set_frozen(model, frozen)
            except FreezeError as exc:
                self._set_status(f"Freeze mask ignored: {exc}")
        if model is not self.freeze_panel.model:
            self._show_model(model)
        elif frozen is not None:
            self.freeze_panel.refresh_checks()
            self._update_counts()

    def _show_model(self, model: nn.Module) -> None:
        self.freeze_panel.set_model(model)
        self._tree_key = self._model_key()
        self._update_counts()

    def _update_counts(self) -> None:
        model = self.freeze_panel.model
        if model is not None:
            self.model_panel.show_counts(*count_parameters(model))

    @Slot()
    def _on_freeze_panel_mask_changed(self) -> None:
        self._update_counts()
        if self._state == "paused":
            # The engine reconciles the optimizer before the next batch.
            self.trainer.control.notify_mask_changed()
            model = self.freeze_panel.model
            self._log_event("freeze", frozen=frozen_names(model) if model else [])
        self._update_actions()

    def _measure_key(self, cfg: TrainConfig) -> tuple[Any, ...]:
        return (cfg.model, self.device_panel.kind(), cfg.precision, cfg.batch_size)

    def _show_measurements(self) -> None:
        try:
            cfg = self.current_config()
        except ConfigError:
            return
        m = self._measurements.get(self._measure_key(cfg), {})
        self.speed_panel.show_measurements(
            m.get("eager"), m.get("compiled"), m.get("compile")
        )

    # ================================================================== run control

    def start_plan(self, cfg: TrainConfig) -> str:
        """``continue`` the run, ``resume`` it with changed settings, or ``new``."""
        run = self._run
        if run is None:
            return "new"
        changed = config_differences(run.config, cfg)
        if changed - RESUME_SAFE:
            return "new"
        total = cfg.resolved_epochs * run.steps_per_epoch
        if cfg.max_steps is not None:
            total = min(total, cfg.max_steps)
        if run.global_step >= total:
            return "new"  # nothing left to train: Start begins again
        return "resume" if changed else "continue"

    @Slot()
    def start(self) -> None:
        """Start a new run, or continue the current one (Start/Continue button)."""
        if self.trainer.isRunning() or self._state != "idle":
            return
        try:
            cfg = self.current_config()
        except ConfigError as exc:
            self._show_error("Invalid settings", exc)
            return
        model = self.freeze_panel.model
        if model is not None and count_parameters(model)[1] == 0:
            dialogs.show_error(
                self,
                "Nothing to train",
                "Every parameter is frozen: check at least one layer in the "
                "freeze tree.",
            )
            return
        plan = self.start_plan(cfg)
        mine = cfg.dataset == "my-digits"
        # my-digits changes with every drawing: read it afresh, cache only its base.
        cached = self.data_panel.cached_arrays(
            cfg.base_dataset if mine else cfg.dataset, cfg.data_dir
        )
        loaded = self._run_arrays = {}

        def arrays(progress: Any, cancel: Any) -> ImageArrays:
            if mine:
                return load_run_arrays(
                    cfg, progress=progress, cancel=cancel, base_arrays=cached
                )
            if cached is not None:
                return cached
            result = load_run_arrays(cfg, progress=progress, cancel=cancel)
            loaded["arrays"] = result
            return result

        init = self._init_weights if plan == "new" else None
        source = None
        if init is not None and init[0] == self._model_key():
            source = f"weights from {init[2]}"
        recorder = self._recorder_for(cfg, new=plan == "new", started_from=source)
        if plan == "continue":
            run = self._run
            assert run is not None
            self.trainer.start_run(
                lambda progress, cancel: run, mask_changed=True, recorder=recorder
            )
        elif plan == "resume":
            assert self._run is not None
            payload = checkpoint_dict(self._run)
            self.trainer.start_run(
                lambda progress, cancel: restore_run(
                    payload,
                    config=cfg,
                    arrays=arrays(progress, cancel),
                    progress=progress,
                    cancel=cancel,
                ),
                recorder=recorder,
            )
        else:
            self._clear_plots()
            init = self._init_weights
            weights = init[1] if init and init[0] == self._model_key() else None

            def prepare(progress: Any, cancel: Any) -> TrainingRun:
                run = prepare_run(
                    cfg,
                    arrays=arrays(progress, cancel),
                    progress=progress,
                    cancel=cancel,
                )
                if weights is not None:
                    load_exact(run.model, weights)  # "Load weights…" chose these
                return run

            self.trainer.start_run(prepare, recorder=recorder)
        changed = sorted(config_differences(self._run.config, cfg)) if self._run else []
        self._log_event("start", plan=plan, changed=changed if plan != "new" else [])
        self._run_config = cfg
        self._notes = []
        self.training_panel.show_notes([])
        window_state.save_last_config(self._settings, cfg)
        self._set_state("running")
        self._set_status("Starting…" if plan == "new" else "Continuing…")

    @Slot()
    def toggle_pause(self) -> None:
        """Pause before the next batch, or resume (changes to the mask apply then)."""
        if not self.trainer.isRunning():
            return
        control = self.trainer.control
        if self._state in ("paused", "pausing"):
            model = self.freeze_panel.model
            if model is not None and count_parameters(model)[1] == 0:
                dialogs.show_error(
                    self,
                    "Nothing to train",
                    "Every parameter is frozen: check at least one before resuming.",
                )
                return
            if self._paused_since is not None and self._progress_clock is not None:
                t0, step = self._progress_clock
                self._progress_clock = (
                    t0 + time.monotonic() - self._paused_since,
                    step,
                )
            self._paused_since = None
            control.resume()
            self._log_event("resume")
            self._set_state("running")
            self._set_status("Resumed")
        else:
            control.pause()
            self._log_event("pause")
            self._paused_since = time.monotonic()
            self._set_state("pausing")
            self._set_status("Pausing after this batch…")

    @Slot()
    def stop(self) -> None:
        """Stop after the current batch (also ends a pause)."""
        if self.trainer.isRunning():
            self.trainer.control.request_stop()
            self._log_event("stop requested")
            self._set_status("Stopping after this batch…")
            self.training_panel.stop_button.setEnabled(False)
            self.stop_action.setEnabled(False)

    @Slot()
    def reset_run(self) -> None:
        """Forget the current run: Start begins a new one."""
        if self._state != "idle":
            return
        model = self.freeze_panel.model
        mask = tuple(frozen_names(model)) if model is not None else ()
        self._run = None
        self._run_folder = None
        self._init_weights = None
        self._tree_key = None
        self._clear_plots()
        self.training_panel.progress_bar.setValue(0)
        self.training_panel.progress_bar.setFormat("idle")
        self._sync_tree_model(mask)  # a fresh model, the same mask
        self._refresh_reader()
        self._update_actions()
        self._set_status("New run: Start begins from freshly initialised weights")

    def _set_state(self, state: str) -> None:
        self._state = state
        running = state in ("running", "pausing", "paused")
        busy = running or state in ("opening", "scoring")
        for panel in (
            self.data_panel,
            self.model_panel,
            self.device_panel,
            self.loader_panel,
            self.speed_panel,
        ):
            if panel is self.data_panel:
                self.data_panel.set_run_active(busy)
            else:
                panel.setEnabled(not busy)
        self.training_panel.set_settings_enabled(not busy)
        self.draw_panel.set_training_active(running)
        self.runs_panel.set_busy(state != "idle")
        self.draw_panel.set_fine_tune_enabled(state == "idle")
        # The freeze tree edits the model: only when nothing trains it.
        self.freeze_panel.set_editable(state in ("idle", "paused"))
        self.training_panel.pause_button.setText(
            "Resume" if state in ("paused", "pausing") else "Pause"
        )
        self.pause_action.setText(
            "&Resume" if state in ("paused", "pausing") else "&Pause"
        )
        self._update_actions()
        self.state_changed.emit(state)

    @Slot()
    def _update_actions(self) -> None:
        state = self._state
        idle = state == "idle"
        running = state in ("running", "pausing", "paused")
        self.start_action.setEnabled(idle)
        self.pause_action.setEnabled(running)
        self.stop_action.setEnabled(running and not self.trainer.control.stop_requested)
        self.reset_action.setEnabled(idle and self._run is not None)
        self.open_action.setEnabled(idle)
        self.load_weights_action.setEnabled(idle)
        self.recent_menu.setEnabled(idle)
        self.load_config_action.setEnabled(idle)
        self.save_action.setEnabled(
            self._run is not None and state in ("idle", "paused")
        )
        panel = self.training_panel
        panel.start_button.setEnabled(self.start_action.isEnabled())
        panel.pause_button.setEnabled(self.pause_action.isEnabled())
        panel.stop_button.setEnabled(self.stop_action.isEnabled())
        panel.reset_button.setEnabled(self.reset_action.isEnabled())
        plan = "new"
        if idle:
            try:
                plan = self.start_plan(self.current_config())
            except ConfigError:
                plan = "new"
        keys = _keys_text(START_KEYS)
        if plan == "new":
            panel.start_button.setText("Start")
            panel.start_button.setToolTip(START_TIP.format(keys=keys))
            self.start_action.setText("&Start")
        else:
            step = self._run.global_step if self._run else 0
            panel.start_button.setText("Continue")
            panel.start_button.setToolTip(CONTINUE_TIP.format(step=step, keys=keys))
            self.start_action.setText("&Continue")

    # ================================================================== trainer slots

    @Slot(str)
    def _on_trainer_status_changed(self, text: str) -> None:
        self._set_status(text)

    @Slot(object)
    def _on_trainer_download_progressed(self, p: Any) -> None:
        done = f"{p.bytes_done / 1e6:.1f}"
        total = f" of {p.bytes_total / 1e6:.1f}" if p.bytes_total else ""
        self._set_status(
            f"Downloading {p.dataset}: file {p.file_index}/{p.file_count}, "
            f"{done}{total} MB"
        )

    @Slot()
    def _on_trainer_run_prepared(self) -> None:
        run = self.trainer.training_run
        if run is None:
            return
        self._run = run
        if "arrays" in self._run_arrays:
            self.data_panel.remember_arrays(
                run.config.dataset, run.config.data_dir, self._run_arrays.pop("arrays")
            )
        if self.freeze_panel.model is not run.model:
            self._show_model(run.model)
        tune = self._fine_tune.get("tune") if self._fine_tune else None
        if tune is not None:
            self.draw_panel.show_fine_tune_started(tune.before, run.config.base_dataset)
        self._refresh_reader()

    @Slot(object)
    def _on_trainer_run_started(self, ev: E.RunStarted) -> None:
        self._steps_per_epoch = max(ev.steps_per_epoch, 1)
        self._progress_clock = (time.monotonic(), ev.start_step)
        bar = self.training_panel.progress_bar
        bar.setRange(0, max(ev.total_steps, 1))
        bar.setValue(ev.start_step)
        bar.setFormat(f"step {ev.start_step:,} / {ev.total_steps:,}")
        self.model_panel.show_counts(ev.parameters, ev.trainable_parameters)
        self._set_status(
            f"Training {ev.model} on {ev.device} ({ev.precision}), "
            f"{ev.trainable_parameters:,} of {ev.parameters:,} parameters"
        )
        self.run_started.emit(ev)

    @Slot(str)
    def _on_trainer_notice_posted(self, message: str) -> None:
        log.info("%s", message)
        self._notes.append(message)
        self.training_panel.show_notes(self._notes)

    @Slot()
    def _on_trainer_compile_started(self) -> None:
        self._compile_started_at = time.monotonic()
        self._compile_timer.start()
        self._on_compile_timer_timeout()

    @Slot()
    def _on_compile_timer_timeout(self) -> None:
        if self._compile_started_at is None:
            return
        elapsed = time.monotonic() - self._compile_started_at
        self._set_status(
            f"compiling… {elapsed:.0f} s (torch.compile traces the first step)"
        )
        self.speed_panel.show_compiling(elapsed)

    @Slot(float)
    def _on_trainer_compile_finished(self, seconds: float) -> None:
        self._compile_timer.stop()
        self._compile_started_at = None
        self._measure(compile_s=seconds)
        self._set_status(f"Compiled in {seconds:.1f} s; training")
        if self._progress_clock is not None:
            # ETA from steady steps only: restart the clock after compiling.
            self._progress_clock = (
                time.monotonic(),
                self.training_panel.progress_bar.value(),
            )

    @Slot(object)
    def _on_trainer_step_finished(self, ev: E.StepMetrics) -> None:
        step = ev.global_step
        self.loss_plot.append("loss", step, ev.loss)
        self.loss_plot.append("smoothed", step, self._smoother(ev.loss))
        self.throughput_plot.append("images/s", step, ev.images_per_s)
        bar = self.training_panel.progress_bar
        bar.setValue(min(step, bar.maximum()))
        eta = math.nan
        if self._progress_clock is not None:
            t0, step0 = self._progress_clock
            done = step - step0
            if done > 0:
                eta = (ev.total_steps - step) * (time.monotonic() - t0) / done
        bar.setFormat(f"step {step:,} / {ev.total_steps:,} · ETA {duration(eta)}")
        self.training_panel.speed_label.setText(f"{ev.images_per_s:,.0f}")
        if ev.images_per_s > 0 and self._run_config is not None:
            self._measure(step_s=self._run_config.batch_size / ev.images_per_s)
        if self._state == "running":
            self._set_status(
                f"Epoch {ev.epoch + 1} · step {step:,}/{ev.total_steps:,} · "
                f"loss {ev.loss:.4f}"
            )
        if self._draw_tab_shown():
            self._request_live_weights()
        self.step_finished.emit(ev)

    @Slot(object)
    def _on_trainer_epoch_finished(self, ev: E.EpochMetrics) -> None:
        x = ev.global_step / self._steps_per_epoch
        self.accuracy_plot.append("train", x, 100 * ev.train_accuracy)
        self.accuracy_plot.append("validation", x, 100 * ev.val_accuracy)
        self._set_status(
            f"Epoch {ev.epoch + 1}: val accuracy {percent(ev.val_accuracy)}, "
            f"val loss {ev.val_loss:.4f}"
        )
        self.epoch_finished.emit(ev)

    @Slot()
    def _on_trainer_pause_reached(self) -> None:
        if self._state != "pausing":
            return
        self._set_state("paused")
        self._refresh_reader()
        step = self._run.global_step if self._run is not None else 0
        self._set_status(
            f"Paused at step {step:,}: the freeze tree is editable; "
            "changes apply on Resume"
        )
        self.pause_reached.emit()

    @Slot(object)
    def _on_trainer_training_done(self, result: E.TrainResult) -> None:
        if result.step_seconds == result.step_seconds:  # not NaN
            self._measure(step_s=result.step_seconds)
        if result.compile_seconds:
            self._measure(compile_s=result.compile_seconds)
        what = "Stopped" if result.stopped else "Finished"
        self._set_status(
            f"{what} at step {result.global_step:,}: val accuracy "
            f"{percent(result.val_accuracy)}, {result.images_per_s:,.0f} img/s, "
            f"{duration(result.seconds)}"
        )
        bar = self.training_panel.progress_bar
        bar.setFormat(
            f"step {result.global_step:,} / {bar.maximum():,} · {what.lower()}"
        )
        self.training_done.emit(result)

    @Slot(str, str)
    def _on_trainer_failed(self, message: str, details: str) -> None:
        self._set_status(f"Failed: {message}")
        if not self._closing:
            dialogs.show_error(self, "Training failed", message, details)
        self.run_failed.emit(message, details)

    @Slot()
    def _on_trainer_finished(self) -> None:
        self._compile_timer.stop()
        self._compile_started_at = None
        self._paused_since = None
        if self._run is not None and self.freeze_panel.model is self._run.model:
            self.freeze_panel.refresh_checks()
        self._set_state("idle")
        self._show_measurements()
        self._refresh_reader()
        self._finish_fine_tune()
        self._finish_reproduction()
        self._refresh_runs()
        self.run_finished.emit()

    def _measure(
        self, *, step_s: float | None = None, compile_s: float | None = None
    ) -> None:
        cfg = self._run_config
        if cfg is None:
            return
        m = self._measurements.setdefault(self._measure_key(cfg), {})
        if step_s is not None:
            m["compiled" if cfg.compile else "eager"] = step_s
        if compile_s is not None:
            m["compile"] = compile_s
        self.speed_panel.show_measurements(
            m.get("eager"), m.get("compiled"), m.get("compile")
        )

    # ================================================================== plots

    def _clear_plots(self) -> None:
        self._smoother.reset()
        for plot in (self.loss_plot, self.accuracy_plot, self.throughput_plot):
            plot.clear_data()
        self.health_panel.clear()
        self.evaluation_panel.clear()
        if hasattr(self, "overlay"):
            self.overlay.redraw()  # clear_data emptied the overlaid runs too

    @Slot(object)
    def _on_trainer_evaluation_ready(self, ev: E.Evaluation) -> None:
        run = self._run
        if run is None:
            return
        self.evaluation_panel.set_class_names(run.loaders.info.class_names)
        images = run.loaders.val_images
        self.evaluation_panel.add_evaluation(
            ev, None if images is None else images.numpy()
        )

    @Slot(object)
    def _on_evaluation_panel_open_in_canvas(self, image: np.ndarray) -> None:
        self.tabs.setCurrentWidget(self.draw_page)
        self.draw_panel.open_in_canvas(image)

    def _log_event(self, kind: str, **data: Any) -> None:
        """Record what the user did in the current run's ledger (events.jsonl)."""
        recorder = self.trainer.recorder
        if recorder is not None and self.trainer.isRunning():
            step = self._run.global_step if self._run is not None else 0
            recorder.log_event(kind, step=step, **data)

    def _plot_history(self, run: TrainingRun) -> None:
        """Rebuild every plot from a run's metric history (an opened checkpoint)."""
        self._clear_plots()
        history = run.history
        self._steps_per_epoch = max(run.steps_per_epoch, 1)
        if history.steps:
            steps = np.array(history.steps, dtype=float)
            self.loss_plot.extend("loss", steps[:, 0], steps[:, 1])
            # The smoother keeps its state, so new steps continue the same average.
            self.loss_plot.extend(
                "smoothed", steps[:, 0], self._smoother.feed(steps[:, 1])
            )
        for e in history.epochs:
            x = e["global_step"] / self._steps_per_epoch
            self.accuracy_plot.append("train", x, 100 * e["train_accuracy"])
            self.accuracy_plot.append("validation", x, 100 * e["val_accuracy"])
            self.throughput_plot.append("images/s", e["global_step"], e["images_per_s"])
        for plot in (self.loss_plot, self.accuracy_plot, self.throughput_plot):
            plot.refresh()

    # ================================================================== helpers

    def _set_status(self, text: str) -> None:
        self.status_label.setText(text)

    def _show_error(self, title: str, exc: BaseException) -> None:
        message, details = describe_error(exc)
        self._set_status(f"{title}: {message}")
        dialogs.show_error(self, title, message, details)

    # ================================================================== window state

    def _restore_window_state(self) -> None:
        s = self._settings
        geometry = s.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1500, 920)
        state = s.value("window/state")
        if state is not None:
            self.restoreState(state)
        for key, splitter in (
            ("splitters/main", self.main_splitter),
            ("splitters/plots", self.plot_splitter),
        ):
            value = s.value(key)
            if value is not None:
                splitter.restoreState(value)

    def save_window_state(self) -> None:
        """Write geometry, splitters and the config to QSettings."""
        s = self._settings
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        s.setValue("splitters/main", self.main_splitter.saveState())
        s.setValue("splitters/plots", self.plot_splitter.saveState())
        try:
            window_state.save_last_config(self._settings, self.current_config())
        except ConfigError:
            pass
        s.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop a run cleanly (within one batch) and remember the window."""
        self._closing = True
        self.save_window_state()
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop the run and background loads and wait for their threads."""
        if self.trainer.isRunning():
            self.trainer.control.request_stop()
            if not self.trainer.wait(SHUTDOWN_WAIT_MS):
                # Only torch.compile's first step cannot be interrupted.
                log.warning("the run is still finishing a step; waiting for it")
                self.trainer.wait()
            result = self.trainer.result
            if self.trainer.recorder is not None and result and result.stopped:
                # Closed mid-run: the next start offers to resume it.
                self.trainer.recorder.mark("closed")
        if self._open_task is not None:
            self._open_task.cancel()  # a download in it stops at the next chunk
            self._open_task.wait()
        if self._score_task is not None:
            self._score_task.wait()
        self.data_panel.shutdown()
        for plot in (self.loss_plot, self.accuracy_plot, self.throughput_plot):
            plot.stop_updates()
