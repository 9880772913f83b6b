"""The window's Runs tab wiring: overlay past runs, open them, reproduce them.

A mixin of :class:`~workbench.ui.main_window.MainWindow`. The Runs panel lists
the ledger (``core/runs.py``); selecting runs overlays their curves on the
training plots; Reproduce trains a finished run again with its config and seed
and compares every logged loss with the original.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Slot

from workbench.core.config import ConfigError
from workbench.core.reproduce import compare_with_folder, original_config
from workbench.core.runs import RunFolder, RunSummary

TENSORBOARD_KEY = "runs/tensorboard"


class RunsMixin:
    """The Runs tab: overlay, open, reproduce, and the TensorBoard preference."""

    def _connect_runs_panel(self) -> None:
        panel = self.runs_panel
        panel.overlay_changed.connect(self._on_runs_panel_overlay_changed)
        panel.open_requested.connect(self._on_runs_panel_open_requested)
        panel.reproduce_requested.connect(self._on_runs_panel_reproduce_requested)
        check = panel.tensorboard_check
        check.setChecked(self._settings.value(TENSORBOARD_KEY, False, type=bool))
        check.toggled.connect(self._on_tensorboard_check_toggled)
        self._reproducing: RunFolder | None = None

    @property
    def write_tensorboard(self) -> bool:
        """Whether new runs also write TensorBoard event files."""
        return self.runs_panel.tensorboard_check.isChecked()

    @Slot(bool)
    def _on_tensorboard_check_toggled(self, checked: bool) -> None:
        self._settings.setValue(TENSORBOARD_KEY, checked)

    def _refresh_runs(self) -> None:
        self.runs_panel.refresh()
        folder = self._run_folder
        self.runs_panel.set_current_run_id(folder.id if folder else None)
        self.runs_panel.set_busy(self._state != "idle")

    @Slot(list)
    def _on_runs_panel_overlay_changed(self, runs: list[RunSummary]) -> None:
        self.overlay.show(runs)

    @Slot(object)
    def _on_runs_panel_open_requested(self, run: RunSummary) -> None:
        if self._state == "idle":
            self.open_checkpoint(run.folder.checkpoint_path)

    @Slot(object)
    def _on_runs_panel_reproduce_requested(self, run: RunSummary) -> None:
        """Train ``run`` again from scratch: same config, same seed."""
        if self._state != "idle":
            return
        try:
            cfg = original_config(run.folder)
        except ConfigError as exc:
            self._show_error("Cannot reproduce this run", exc)
            return
        self.reset_run()
        self.apply_config(cfg)
        self._reproducing = run.folder
        self.start()
        if self._state == "idle":  # the start was refused
            self._reproducing = None
            return
        self.runs_panel.show_message(f"Reproducing {run.title}…")

    def _finish_reproduction(self) -> None:
        """After a reproduce run: compare its losses with the original's."""
        original, self._reproducing = self._reproducing, None
        run = self._run
        if original is None or run is None:
            return
        result: Any = self.trainer.result
        if result is None or result.stopped:
            self.runs_panel.show_message("Reproduction stopped before the end")
            return
        verdict = compare_with_folder(original, run.history.steps)
        text = f"{original.id}: {verdict.describe()}"
        original.update(last_reproduction=verdict.describe())
        if self._run_folder is not None:
            self._run_folder.update(reproduction_of=original.id)
        self.runs_panel.show_message(text)
        self._set_status(text)
        self.reproduction_checked.emit(verdict)
