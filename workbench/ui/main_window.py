"""The workbench window: every knob on one screen, a run in a thread, live plots.

No training logic lives here. The window builds the panels, plots and menus
and subscribes to its :class:`RunController`, which owns the run lifecycle
(the core ``Session``, the trainer thread and background tasks). The freeze
tree's model (the run's, or a preview of the chosen architecture whose mask
the next run takes over) is :class:`ModelPreview`'s.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QSettings, QTimer, Slot
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QApplication, QDialog, QMainWindow, QWidget
from torch import nn

from workbench.core import events as E
from workbench.core.config import DEFAULT_IMAGE_SIZE, ConfigError, TrainConfig
from workbench.core.data.registry import DataError
from workbench.core.model_offer import ModelKey, model_key
from workbench.core.models.inputs import model_channels
from workbench.core.runs.folder import RunFolder
from workbench.core.runs.listing import RunSummary
from workbench.core.start_plan import Plan, StartKind
from workbench.core.train.engine import TrainingRun
from workbench.core.train.freezing import count_parameters
from workbench.ui import dialogs
from workbench.ui.code_view import CodeView
from workbench.ui.formatting import why_new_run
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
from workbench.ui.panels.training import TrainingPanel
from workbench.ui.plots.curves import TrainingCurves
from workbench.ui.run_controller import RunController, RunState
from workbench.ui.tasks import describe_error
from workbench.ui.trainer_thread import TrainerThread
from workbench.ui.widgets import wheel_guard
from workbench.ui.window import layout as window_layout
from workbench.ui.window import lr_finder, speed_doctor_dialog, sweep_dialog
from workbench.ui.window import state as window_state
from workbench.ui.window.actions import build_actions
from workbench.ui.window.data_issues import IssuesFinder
from workbench.ui.window.export import ExportActions
from workbench.ui.window.files import FileActions
from workbench.ui.window.folds import FoldRunner
from workbench.ui.window.job_view import JobView
from workbench.ui.window.preview import ModelPreview
from workbench.ui.window.profile_view import Profiles
from workbench.ui.window.run_view import RunView
from workbench.ui.window.runs import RunsTab
from workbench.ui.window.teach import DrawTab

log = logging.getLogger(__name__)


class MainWindow(QMainWindow):
    """Panels, freeze tree and plots around one :class:`RunController`.

    Observe the window through ``window.controller``'s signals: the window's
    own slots, connected first, have run by the time a test's slot runs.
    """

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
        self._notes: list[str] = []
        self._why_new = ""  # why Start begins a new run though one exists
        self.controller = RunController(self)
        self._build_panels()
        self.curves = TrainingCurves()
        self.loss_plot = self.curves.loss_plot
        self.accuracy_plot = self.curves.accuracy_plot
        self.overlay = self.curves.overlay
        self._build_layout()
        self.files = FileActions(self, self.controller, self._settings)
        self.draw_tab = DrawTab(self, self.controller)
        self.runs_tab = RunsTab(self, self.controller, self._settings)
        self.jobs = JobView(self, self.controller, self._settings)
        self.exporter = ExportActions(self, self.controller)
        self.lr_finder: QDialog | None = None  # Run ▸ Find learning rate…
        self.sweep_dialog: QDialog | None = None  # Run ▸ Sweep…
        self.speed_doctor: QDialog | None = None  # Run ▸ Diagnose speed…
        self.commands = build_actions(self)
        self.files.fill_recent_menu()
        self._connect_controller()
        self.preview = ModelPreview(self, self.controller)
        self.run_view = RunView(self, self.controller)
        self.folds = FoldRunner(self, self.controller)  # after run_view: its slots
        self.data_issues = IssuesFinder(self, self.controller, self.folds)
        self.profiles = Profiles(self, self.controller)  # Run ▸ Profile the next…
        self.data_issues.fixes_saved.connect(self.data_panel.refresh_fixes)

        self._restore_window_state()
        cfg = window_state.load_last_config(self._settings) or TrainConfig()
        self.apply_config(cfg)
        self._on_controller_state_changed(RunState.IDLE)
        self.set_status("Ready")
        # After the event loop starts, so the window is up behind the question.
        QTimer.singleShot(0, self.files.offer_resume)

    # ================================================================== building

    def _build_panels(self) -> None:
        self.training_panel = TrainingPanel()
        self.data_panel = DataPanel(cache=self.controller.session.arrays)
        self.model_panel = ModelPanel()
        self.device_panel = DevicePanel()
        self.loader_panel = LoaderPanel()
        self.speed_panel = SpeedPanel()
        self.freeze_panel = FreezePanel()
        self.draw_panel = DrawPanel()
        self.evaluation_panel = EvaluationPanel()
        self.health_panel = LayerHealthPanel()
        self.runs_panel = RunsPanel()
        processes = self.device_panel.processes
        self.code_view = CodeView(self.current_config, processes=processes)
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
        self.freeze_panel.mask_changed.connect(self.code_view.mark_stale)
        self.data_panel.arrays_changed.connect(self.update_actions)

    def _build_layout(self) -> None:
        layout = window_layout.build_layout(self, self._settings)
        wheel_guard.install(QApplication.instance())  # the columns scroll, fields stay
        self.main_splitter = layout.main_splitter
        self.plot_splitter = layout.plot_splitter
        self.tabs = layout.tabs
        self.draw_page = layout.draw_page
        self.status_label = layout.status_label

    def _connect_controller(self) -> None:
        self.controller.state_changed.connect(self._on_controller_state_changed)

    # ================================================================== config

    @property
    def state(self) -> RunState:
        """The run state (a ``str`` enum: ``window.state == "idle"`` works)."""
        return self.controller.state

    @property
    def current_run(self) -> TrainingRun | None:
        """The run Start continues (None before the first run)."""
        return self.controller.run

    @property
    def run_folder(self) -> RunFolder | None:
        """The current run's folder (autosaved checkpoint, run.json)."""
        return self.controller.session.folder

    @property
    def trainer(self) -> TrainerThread:
        """The thread every run trains in."""
        return self.controller.trainer

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
        values["frozen"] = self.frozen_mask()
        if values["folds"] != self._base_config.folds:
            values["fold"] = 0  # another K: an opened fold run's index is no fold
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
        model, _classes, shape = self.chosen_model_key()
        dataset, auto = self.data_panel.dataset(), self.data_panel.image_size() is None
        self.data_panel.show_auto_size(shape[1])
        self.data_panel.preprocessing_label.show_for(
            model, self.model_panel.weights(), dataset, shape[1], auto=auto
        )
        self.preview.sync(frozen)
        self.run_view.show_measurements()
        self.training_panel.show_compile_note(
            self.speed_panel.config_values()["compile"]
        )
        self.code_view.mark_stale()
        self.update_actions()
        if self.current_run is None:
            self.draw_tab.refresh_reader()

    @Slot()
    def _on_panel_changed(self) -> None:
        why_before = self._why_new
        self._after_config_change()
        if self._why_new and self._why_new != why_before:
            # Said once, when an edit turns Continue into a new run.
            status = f"Start begins a new run: {self._why_new}"
            note = self.preview.take_note()  # a freeze selection lost: said too
            self.set_status(f"{status}. {note}" if note else status)
        elif why_before and not self._why_new:  # set back: the hint no longer holds
            self.set_status("Start continues the current run: its settings are back")

    def chosen_model_key(self) -> ModelKey:
        """(architecture, classes, input shape) the panels choose."""
        values = {**self.data_panel.config_values(), **self.model_panel.config_values()}
        model, dataset = values["model"], values["dataset"]
        size = values.get("image_size") or DEFAULT_IMAGE_SIZE.get(dataset, 28)
        try:
            cfg = self._base_config.replace(**values)
            size = cfg.resolved_image_size  # the weights' own when automatic
            return model_key(cfg)
        except (ConfigError, DataError):  # no folder chosen yet: preview 2 classes
            return (model, 2, (model_channels(model, 3), size, size))

    def show_model(self, model: nn.Module) -> None:
        """Show ``model`` in the freeze tree and its parameter counts."""
        self.preview.show_model(model)

    def frozen_mask(self) -> tuple[str, ...]:
        """The freeze tree's mask (what the next run freezes)."""
        return self.preview.frozen_mask()

    # ================================================================== run control

    def _all_frozen(self, when: str) -> bool:
        model = self.freeze_panel.model
        if model is None or count_parameters(model)[1] > 0:
            return False
        dialogs.show_error(
            self,
            "Nothing to train",
            f"Every parameter is frozen: check at least one layer {when}.",
        )
        return True

    @Slot()
    def start(self, nproc: int | None = None) -> None:
        """Start a new run, or continue the current one (Start/Continue button)."""
        if self.state is not RunState.IDLE or self.preview.start_waits(nproc):
            return
        try:
            cfg = self.current_config()
        except ConfigError as exc:
            self.show_error("Invalid settings", exc)
            return
        if (
            self._all_frozen("in the freeze tree")
            or self.folds.start_if_folds(cfg, nproc)
            or self.jobs.start_if_several(cfg, nproc)
        ):
            return
        plan = self.controller.plan(cfg)
        new = plan.kind is StartKind.NEW
        self.launch(plan, status="Starting…" if new else "Continuing…")

    def launch(
        self, plan: Plan, notes: list[str] | None = None, status: str = ""
    ) -> None:
        """Start ``plan`` (a new run clears the plots first)."""
        if plan.kind is StartKind.NEW:
            self.clear_run_views()
            self.training_panel.clear_progress("preparing…")
        self.run_view.run_config = plan.config
        self._notes = list(notes or []) + self.controller.start(plan)
        self.training_panel.show_notes(self._notes)
        window_state.save_last_config(self._settings, plan.config)
        self.runs_tab.refresh()
        self.set_status(status)

    @Slot()
    def toggle_pause(self) -> None:
        """Pause before the next batch, or resume (changes to the mask apply then)."""
        state = self.state
        if state.held:
            if not self._all_frozen("before resuming"):
                self.controller.resume()
                self.set_status("Resumed")
        elif state is RunState.RUNNING:
            self.controller.pause()
            self.set_status("Pausing after this batch…")

    @Slot()
    def stop(self) -> None:
        """Stop after the current batch (also ends a pause)."""
        if self.state.training:
            self.controller.stop()
            self.set_status("Stopping after this batch…")

    @Slot()
    def find_learning_rate(self) -> None:
        """Run ▸ Find learning rate…: the range test and its probes, in a dialog."""
        lr_finder.open_lr_finder(self)

    @Slot()
    def sweep(self) -> None:
        """Run ▸ Sweep…: trials proposed by Optuna, each a run of the ledger."""
        sweep_dialog.open_sweep(self)

    @Slot()
    def diagnose_speed(self) -> None:
        """Run ▸ Diagnose speed…: candidate settings timed against the panels'."""
        speed_doctor_dialog.open_speed_doctor(self)

    @Slot()
    def profile_steps(self) -> None:
        """Run ▸ Profile the next 20 steps of the running run."""
        self.profiles.request()

    def show_profile(self, report: E.ProfileReport) -> None:
        """A profile the engine recorded: its trace and top operators."""
        self.profiles.show(report)

    @Slot()
    def find_data_issues(self) -> None:
        """Data ▸ Find data issues…: the lists, from a cross-validation's folds."""
        self.data_issues.find()

    def reproduce_run(self, run: RunSummary) -> None:
        """Train ``run`` again and compare (the Runs tab's Reproduce)."""
        self.runs_tab.reproduce(run)

    @Slot()
    def reset_run(self) -> None:
        """Forget the current run: Start begins a new one."""
        if self.state is not RunState.IDLE:
            return
        mask = self.frozen_mask()
        self.controller.session.reset()
        self.preview.forget()
        self.clear_run_views()
        self.training_panel.clear_progress()
        self.preview.sync(mask)  # a fresh model, the same mask
        self.draw_tab.refresh_reader()
        self.update_actions()
        self.set_status("New run: Start begins from freshly initialised weights")

    @Slot(object)
    def _on_controller_state_changed(self, state: RunState) -> None:
        busy = state is not RunState.IDLE
        self.curves.set_run_active(state.training)
        for panel in (self.model_panel, self.device_panel, self.loader_panel):
            panel.setEnabled(not busy)
        self.speed_panel.setEnabled(not busy)
        self.data_panel.set_run_active(busy)
        self.draw_panel.set_training_active(state.training)
        self.runs_panel.set_busy(busy)
        self.commands.find_rate.setEnabled(not busy)
        self.commands.find_issues.setEnabled(not busy)
        self.commands.diagnose_speed.setEnabled(not busy)
        self.draw_panel.set_fine_tune_enabled(not busy)
        # The freeze tree edits the model: only when nothing trains it.
        self.freeze_panel.set_editable(state in (RunState.IDLE, RunState.PAUSED))
        self.update_actions()

    @Slot()
    def update_actions(self) -> None:
        """Buttons and menu entries for the run state and the current run."""
        state, run = self.state, self.current_run
        continue_from, why_new = None, ""
        if state is RunState.IDLE and run is not None and self.jobs.processes() == 1:
            try:
                plan = self.controller.plan(self.current_config())
            except ConfigError:
                plan = None
            if plan is not None and plan.kind is not StartKind.NEW:
                continue_from = run.global_step
            why_new = why_new_run(plan) if plan is not None else ""
        self._why_new = why_new
        self.training_panel.set_run_state(
            state.value,
            continue_from=continue_from,
            has_run=run is not None,
            stop_requested=self.controller.stop_requested,
            new_because=why_new,
            pausable=self.controller.job is None,
        )
        a = self.commands
        idle = state is RunState.IDLE
        for action in (a.open, a.load_weights, a.load_config):
            action.setEnabled(idle)
        a.recent_menu.setEnabled(idle and not a.recent_menu.isEmpty())
        a.save.setEnabled(run is not None and state in (RunState.IDLE, RunState.PAUSED))
        a.export.setEnabled(run is not None and (idle or state.training))

    # ================================================================== helpers

    def show_run(self, run: TrainingRun) -> None:
        """Show an opened run: its config, its model in the tree, its curves."""
        self.preview.forget()
        self.clear_run_views()
        self.apply_config(run.config)  # shows run.model: same architecture
        self.run_view.run_config = run.config
        self.curves.show_history(run.history, run.steps_per_epoch)

    def clear_run_views(self) -> None:
        """Empty what showed the last run (a new run or model begins)."""
        self.curves.clear()
        self.health_panel.clear()
        self.evaluation_panel.clear()
        self.draw_panel.clear_fine_tune_report()
        self.runs_panel.show_message("")

    def set_notes(self, notes: list[str]) -> None:
        """Messages about the current run, shown under the controls."""
        self._notes = list(notes)
        self.training_panel.show_notes(self._notes)

    def add_note(self, note: str) -> None:
        """One more message about the current run."""
        self.set_notes([*self._notes, note])

    def set_status(self, text: str) -> None:
        """One line in the status bar (the fold of a cross-validation first)."""
        self.status_label.setText(self.folds.status_text(text))

    def show_error(self, title: str, exc: BaseException) -> None:
        """A dialog for ``exc`` (its traceback under Details) and a status line."""
        message, details = describe_error(exc)
        self.set_status(f"{title}: {message}")
        dialogs.show_error(self, title, message, details)

    # ================================================================== window state

    def _restore_window_state(self) -> None:
        # The whole layout fits the minimum: content is never wider than the window.
        self.setMinimumSize(
            self.minimumSizeHint().expandedTo(window_layout.MINIMUM_SIZE)
        )
        splitters = {"main": self.main_splitter, "plots": self.plot_splitter}
        if not window_state.restore_layout(self._settings, self, splitters):
            window_layout.fit_window(self, window_layout.DEFAULT_SIZE)

    def save_window_state(self) -> None:
        """Write geometry, splitters and the config to QSettings."""
        splitters = {"main": self.main_splitter, "plots": self.plot_splitter}
        window_state.save_layout(self._settings, self, splitters)
        try:
            window_state.save_last_config(self._settings, self.current_config())
        except ConfigError:
            pass
        self._settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:
        """Stop a run cleanly (within one batch) and remember the window."""
        if not self.jobs.may_close():
            event.ignore()
            return
        self.controller.closing = True
        self.save_window_state()
        self.shutdown()
        super().closeEvent(event)

    def shutdown(self) -> None:
        """Stop the run and background loads and wait for their threads."""
        self.controller.shutdown()
        self.preview.shutdown()
        self.data_panel.shutdown()
        self.code_view.shutdown()
        self.data_issues.shutdown()
        self.draw_panel.shutdown()
        self.curves.stop_updates()
