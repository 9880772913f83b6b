"""What each window helper uses of the window, as a ``Protocol``.

The helpers (:class:`FileActions`, :class:`RunView`, ...) are built by the
``MainWindow`` and call back into it; importing ``main_window`` from them would
be an import cycle, so each takes the small protocol below that names only the
attributes and methods it reads. The window is also the Qt parent of what they
create (a ``QMainWindow``). Panels are typed by their classes; the window's
other parts (the Draw and Runs tabs, the run view, the curves) by protocols of
the one or two methods used, since their modules import this one.
:func:`build_layout` has its own protocol in :mod:`workbench.ui.window.layout`:
the panels import that module (through ``window.state``), so it cannot import
them back through this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from PySide6.QtWidgets import QDialog, QMenu, QMenuBar, QTabWidget, QWidget
from torch import nn

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.model_offer import ModelKey
from workbench.core.runs.folder import RunFolder
from workbench.core.runs.listing import RunSummary
from workbench.core.session import Finished
from workbench.core.start_plan import Plan
from workbench.core.train.engine import TrainingRun
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
from workbench.ui.process_job import JobEnded
from workbench.ui.run_controller import RunState

# ------------------------------------------------------------- the window's parts


class CurvesPart(Protocol):
    """:class:`~workbench.ui.plots.curves.TrainingCurves` as a run feeds it."""

    def start(self, steps_per_epoch: int) -> None: ...
    def add_step(self, ev: E.StepMetrics) -> None: ...
    def add_epoch(self, ev: E.EpochMetrics) -> None: ...
    def show_all(self) -> None: ...


class OverlayPart(Protocol):
    """:class:`~workbench.ui.plots.overlay.RunOverlay`: earlier runs' curves."""

    def show(self, runs: Sequence[RunSummary]) -> None: ...


class DrawTabPart(Protocol):
    """:class:`~workbench.ui.window.teach.DrawTab` as the run and files see it."""

    def refresh_reader(self) -> None: ...
    def on_step(self) -> None: ...
    def on_weights_ready(self, _ev: E.WeightsReady) -> None: ...
    def after_run(self, result: E.TrainResult | None) -> None: ...


class RunsTabPart(Protocol):
    """:class:`~workbench.ui.window.runs.RunsTab` as the run and files see it."""

    def refresh(self) -> None: ...
    def after_run(self, finished: Finished) -> None: ...
    def after_job(self, ended: JobEnded) -> None: ...


class RunViewPart(Protocol):
    """:class:`~workbench.ui.window.run_view.RunView` as the other helpers see it."""

    def show_evaluation(self, run: TrainingRun, ev: E.Evaluation) -> None: ...
    def borrow_settings(self) -> None: ...
    def give_back_settings(self) -> None: ...


class FilesPart(Protocol):
    """:class:`~workbench.ui.window.files.FileActions`: what the menus call."""

    def open_checkpoint(self, path: str | Path) -> None: ...
    def open_checkpoint_dialog(self) -> None: ...
    def load_weights_dialog(self) -> None: ...
    def save_checkpoint_dialog(self) -> None: ...
    def load_config_dialog(self) -> None: ...
    def save_config_dialog(self) -> None: ...


class ExporterPart(Protocol):
    """:class:`~workbench.ui.window.export.ExportActions`: File > Export model."""

    def export_dialog(self) -> None: ...


class ColumnsPart(Protocol):
    """:class:`~workbench.ui.window.layout.ColumnSplitter`: the model column."""

    def model_column_shown(self) -> bool: ...
    def show_model_column(self, show: bool) -> None: ...


class CommandsPart(Protocol):
    """:class:`~workbench.ui.window.actions.WindowActions`: the recent-files menu."""

    recent_menu: QMenu


class CodeViewPart(Protocol):
    """:class:`~workbench.ui.code_view.CodeView`: told when the config changed."""

    def mark_stale(self) -> None: ...


# ------------------------------------------------------------- shared by most


class StatusWindow(Protocol):
    """One line in the status bar."""

    def set_status(self, text: str) -> None: ...


class ErrorWindow(Protocol):
    """A dialog for an exception, and its status line."""

    def show_error(self, title: str, exc: BaseException) -> None: ...


class ConfigWindow(Protocol):
    """The config the panels show, read and set."""

    def current_config(self) -> TrainConfig: ...
    def apply_config(self, cfg: TrainConfig) -> None: ...


# ------------------------------------------------------------- one per helper


class ExportWindow(StatusWindow, Protocol):
    """What :class:`~workbench.ui.window.export.ExportActions` uses."""


class FilesWindow(StatusWindow, ErrorWindow, ConfigWindow, Protocol):
    """What :class:`~workbench.ui.window.files.FileActions` uses."""

    training_panel: TrainingPanel
    health_panel: LayerHealthPanel
    evaluation_panel: EvaluationPanel
    draw_tab: DrawTabPart
    runs_tab: RunsTabPart
    run_view: RunViewPart
    commands: CommandsPart

    @property
    def run_folder(self) -> RunFolder | None: ...
    def start(self) -> None: ...
    def update_actions(self) -> None: ...
    def show_run(self, run: TrainingRun) -> None: ...
    def show_model(self, model: nn.Module) -> None: ...
    def frozen_mask(self) -> tuple[str, ...]: ...
    def clear_run_views(self) -> None: ...
    def set_notes(self, notes: list[str]) -> None: ...


class RunViewWindow(StatusWindow, ConfigWindow, Protocol):
    """What :class:`~workbench.ui.window.run_view.RunView` uses."""

    training_panel: TrainingPanel
    data_panel: DataPanel
    model_panel: ModelPanel
    device_panel: DevicePanel
    loader_panel: LoaderPanel
    speed_panel: SpeedPanel
    freeze_panel: FreezePanel
    draw_panel: DrawPanel
    evaluation_panel: EvaluationPanel
    health_panel: LayerHealthPanel
    curves: CurvesPart
    draw_tab: DrawTabPart
    runs_tab: RunsTabPart

    @property
    def state(self) -> RunState: ...
    @property
    def current_run(self) -> TrainingRun | None: ...
    def show_model(self, model: nn.Module) -> None: ...
    def add_note(self, note: str) -> None: ...
    def show_profile(self, report: E.ProfileReport) -> None: ...


class JobViewWindow(StatusWindow, ErrorWindow, Protocol):
    """What :class:`~workbench.ui.window.job_view.JobView` uses."""

    training_panel: TrainingPanel
    device_panel: DevicePanel
    evaluation_panel: EvaluationPanel
    health_panel: LayerHealthPanel
    curves: CurvesPart
    runs_tab: RunsTabPart

    def clear_run_views(self) -> None: ...
    def set_notes(self, notes: list[str]) -> None: ...
    def add_note(self, note: str) -> None: ...


class FoldsWindow(StatusWindow, ErrorWindow, ConfigWindow, Protocol):
    """What :class:`~workbench.ui.window.folds.FoldRunner` uses."""

    training_panel: TrainingPanel
    device_panel: DevicePanel
    runs_tab: RunsTabPart

    def set_notes(self, notes: list[str]) -> None: ...
    def add_note(self, note: str) -> None: ...
    def launch(
        self, plan: Plan, notes: list[str] | None = None, status: str = ""
    ) -> None: ...


class TeachWindow(StatusWindow, ErrorWindow, ConfigWindow, Protocol):
    """What :class:`~workbench.ui.window.teach.DrawTab` uses."""

    data_panel: DataPanel
    freeze_panel: FreezePanel
    draw_panel: DrawPanel
    evaluation_panel: EvaluationPanel
    tabs: QTabWidget
    draw_page: QWidget
    run_view: RunViewPart

    def isVisible(self) -> bool: ...
    def chosen_model_key(self) -> ModelKey: ...
    def launch(
        self, plan: Plan, notes: list[str] | None = None, status: str = ""
    ) -> None: ...


class PreviewWindow(StatusWindow, Protocol):
    """What :class:`~workbench.ui.window.preview.ModelPreview` uses."""

    training_panel: TrainingPanel
    model_panel: ModelPanel
    device_panel: DevicePanel
    freeze_panel: FreezePanel
    draw_tab: DrawTabPart
    code_view: CodeViewPart

    @property
    def current_run(self) -> TrainingRun | None: ...
    def chosen_model_key(self) -> ModelKey: ...
    def start(self, nproc: int | None = None) -> None: ...
    def update_actions(self) -> None: ...


class RunsWindow(StatusWindow, ErrorWindow, Protocol):
    """What :class:`~workbench.ui.window.runs.RunsTab` uses."""

    runs_panel: RunsPanel
    overlay: OverlayPart
    files: FilesPart
    run_view: RunViewPart

    def apply_config(self, cfg: TrainConfig) -> None: ...
    def start(self, nproc: int | None = None) -> None: ...
    def reset_run(self) -> None: ...


class SummaryWindow(Protocol):
    """What :func:`~workbench.ui.window.summary_dialog.show_model_summary` uses."""

    freeze_panel: FreezePanel
    loader_panel: LoaderPanel
    summary_dialog: QDialog | None

    def chosen_model_key(self) -> ModelKey: ...


class ActionsWindow(SummaryWindow, Protocol):
    """What :func:`~workbench.ui.window.actions.build_actions` uses.

    It hands the window to :func:`show_model_summary`, so it is a
    :class:`SummaryWindow` too.
    """

    training_panel: TrainingPanel
    data_panel: DataPanel
    tabs: QTabWidget
    main_splitter: ColumnsPart
    files: FilesPart
    exporter: ExporterPart

    def menuBar(self) -> QMenuBar: ...
    def addAction(self, action: object) -> None: ...
    def close(self) -> bool: ...
    def start(self) -> None: ...
    def toggle_pause(self) -> None: ...
    def stop(self) -> None: ...
    def reset_run(self) -> None: ...
    def find_learning_rate(self) -> None: ...
    def sweep(self) -> None: ...
    def profile_steps(self) -> None: ...
    def diagnose_speed(self) -> None: ...
    def find_data_issues(self) -> None: ...
