"""The Runs tab's wiring: overlay past runs, open them, reproduce them.

The Runs panel lists the ledger (``core/runs/``); selecting runs overlays
their curves on the training plots; Reproduce trains a finished run again with
its config and seed, and the session compares every logged loss with the
original's when it ends.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, Slot

from workbench.core.config import ConfigError
from workbench.core.runs.folder import RunFolder
from workbench.core.runs.listing import RunSummary
from workbench.core.runs.reproduce import judge_repeat
from workbench.core.session import Finished
from workbench.ui.process_job import JobEnded
from workbench.ui.run_controller import RunController, RunState
from workbench.ui.window.parts import RunsWindow

TENSORBOARD_KEY = "runs/tensorboard"


class RunsTab(QObject):
    """The Runs tab: overlay, open, reproduce, and the TensorBoard preference.

    ``window`` is the :class:`~workbench.ui.main_window.MainWindow`, seen
    through :class:`~workbench.ui.window.parts.RunsWindow`.
    """

    def __init__(
        self, window: RunsWindow, controller: RunController, settings: QSettings
    ) -> None:
        super().__init__(window)
        self.window = window
        self.controller = controller
        self.settings = settings
        panel = self.panel = window.runs_panel
        panel.overlay_changed.connect(self._on_panel_overlay_changed)
        panel.open_requested.connect(self._on_panel_open_requested)
        panel.open_best_requested.connect(self._on_panel_open_best_requested)
        panel.reproduce_requested.connect(self._on_panel_reproduce_requested)
        tensorboard = settings.value(TENSORBOARD_KEY, False, type=bool)
        panel.set_tensorboard(tensorboard)
        panel.tensorboard_changed.connect(self._on_panel_tensorboard_changed)
        controller.session.tensorboard = tensorboard
        self._job_reproducing: RunFolder | None = None  # the original a job repeats

    @Slot(bool)
    def _on_panel_tensorboard_changed(self, checked: bool) -> None:
        self.settings.setValue(TENSORBOARD_KEY, checked)
        self.controller.session.tensorboard = checked

    def refresh(self) -> None:
        """List the runs again, marking the current one."""
        self.panel.refresh()
        folder = self.controller.session.folder
        self.panel.set_current_run_id(folder.id if folder else None)
        self.panel.set_busy(self.controller.state is not RunState.IDLE)

    @Slot(list)
    def _on_panel_overlay_changed(self, runs: list[RunSummary]) -> None:
        self.window.overlay.show(runs)

    @Slot(object)
    def _on_panel_open_requested(self, run: RunSummary) -> None:
        self.window.files.open_checkpoint(run.folder.checkpoint_path)

    @Slot(object)
    def _on_panel_open_best_requested(self, run: RunSummary) -> None:
        self.window.files.open_checkpoint(run.folder.best_path)

    @Slot(object)
    def _on_panel_reproduce_requested(self, run: RunSummary) -> None:
        self.reproduce(run)

    def reproduce(self, run: RunSummary) -> None:
        """Train ``run`` again from scratch: same config, seed and processes."""
        w, session = self.window, self.controller.session
        if self.controller.state is not RunState.IDLE:
            return
        try:
            cfg = session.reproduce(run.folder)
        except ConfigError as exc:
            w.show_error("Cannot reproduce this run", exc)
            return
        w.run_view.borrow_settings()
        w.reset_run()
        w.apply_config(cfg)
        # The run's own process count, whatever the Device panel says.
        w.start(nproc=run.world_size)
        if self.controller.state is RunState.IDLE:  # the start was refused
            session.reproducing = None
            w.run_view.give_back_settings()
            return
        on = ""
        if run.world_size > 1:
            # A job logs into a run folder of its own, judged when it ends.
            session.reproducing = None
            self._job_reproducing = run.folder
            on = f" on {run.world_size} processes"
        self.panel.show_message(f"Reproducing {run.title}{on}…")

    def after_job(self, ended: JobEnded) -> None:
        """A job on several processes ended: list it, and judge a reproduction."""
        original, self._job_reproducing = self._job_reproducing, None
        if original is None:
            self.refresh()
            return
        self.window.run_view.give_back_settings()
        verdict = None
        if ended.outcome == "finished" and ended.folder is not None:
            verdict = judge_repeat(original, RunFolder(ended.folder))
        self.after_run(Finished(original, verdict))

    def after_run(self, finished: Finished) -> None:
        """A run ended: list it, and show a reproduction's verdict."""
        self.refresh()
        original = finished.reproduction_of
        if original is None:
            return
        verdict = finished.reproduction
        said = (
            verdict.describe()
            if verdict is not None
            else "not reproduced: the repeat stopped before the end"
        )
        text = f"{original.id}: {said}"
        self.panel.show_message(text)
        self.window.set_status(text)
