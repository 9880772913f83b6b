"""The window's file work: checkpoints, run configs, recent files, run folders.

A mixin of :class:`~workbench.ui.main_window.MainWindow`, kept apart so each file
has one job; it uses the window's panels, state and trainer thread.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import Slot
from PySide6.QtGui import QAction

from workbench.core.checkpoints import (
    CheckpointError,
    config_of,
    load_checkpoint,
    load_weights_file,
    restore_run,
    save_checkpoint,
)
from workbench.core.config import ConfigError, TrainConfig, load_config, save_config
from workbench.core.data import load_run_arrays
from workbench.core.devices import DeviceError, resolve_device
from workbench.core.doctor import compare_state, load_exact, load_partial
from workbench.core.engine import TrainingRun, evaluate_predictions
from workbench.core.freezing import frozen_names, set_frozen
from workbench.core.models import build_model, snapshot_state
from workbench.core.runs import (
    RunFolder,
    RunRecorder,
    folder_of,
    interrupted_runs,
    read_metrics,
)
from workbench.ui import dialogs, window_state
from workbench.ui.tasks import TaskThread

log = logging.getLogger(__name__)

CHECKPOINT_FILTER = "Checkpoints (*.pt *.pth);;All files (*)"
WEIGHTS_FILTER = "Checkpoints and state_dicts (*.pt *.pth *.ckpt);;All files (*)"
CONFIG_FILTER = "Run configs (*.json *.toml);;All files (*)"


class FileActionsMixin:
    """Open, save, load weights, configs, recent files, autosave and resume."""

    # ================================================================== run folders

    def _recorder_for(
        self, cfg: TrainConfig, *, new: bool, started_from: str | None = None
    ) -> RunRecorder | None:
        """The run folder the trainer autosaves into (a new one for a new run)."""
        try:
            folder = self._run_folder
            if new or folder is None or not folder.info():
                # A new run, or its folder was deleted in the Runs tab meanwhile.
                self._run_folder = RunFolder.create(
                    cfg, origin="window", started_from=started_from
                )
            else:
                folder.claim(cfg)
        except OSError as exc:
            self._run_folder = None
            self._on_trainer_notice_posted(
                f"No autosave for this run: cannot write its folder ({exc})"
            )
            return None
        self._refresh_runs()
        return RunRecorder(
            self._run_folder, cfg.autosave_every, tensorboard=self.write_tensorboard
        )

    @property
    def run_folder(self) -> RunFolder | None:
        """The current run's folder (autosaved checkpoint, run.json)."""
        return self._run_folder

    @Slot()
    def offer_resume(self) -> None:
        """If a run was interrupted (crash, kill, window closed), offer to resume it."""
        if self._state != "idle" or self._closing or self._run is not None:
            return
        runs = interrupted_runs()
        if not runs:
            return
        folder = runs[0]
        info = folder.info()
        cfg = info.get("config") or {}
        how = (
            "the window was closed during it"
            if info.get("status") == "closed"
            else "it was interrupted (the program ended without finishing it)"
        )
        total = info.get("total_steps")
        of_total = f" of {total:,}" if isinstance(total, int) else ""
        more = (
            f"\n\n{len(runs) - 1} more interrupted runs are in {folder.path.parent}."
            if len(runs) > 1
            else ""
        )
        text = (
            f"The run {folder.id} ({cfg.get('model', '?')} on "
            f"{cfg.get('dataset', '?')}) reached step {info.get('global_step', 0):,}"
            f"{of_total} when {how}. Its checkpoint was saved "
            f"{info.get('updated', '?')} (UTC).\n\nOpen it to continue training?{more}"
        )
        answer = dialogs.ask_resume(self, "Resume the interrupted run?", text)
        if answer == "resume":
            self._start_after_open = True
            self.open_checkpoint(folder.checkpoint_path)
        elif answer == "dismiss":
            folder.update(status="dismissed")
            self._set_status(f"Forgot the interrupted run {folder.id}")

    @Slot()
    def load_weights_dialog(self) -> None:
        """File > Load weights into the model…"""
        path = dialogs.get_open_path(
            self, "Load weights into the model", WEIGHTS_FILTER
        )
        if path is not None:
            self.load_weights(path)

    def load_weights(self, path: str | Path) -> bool:
        """Make the next new run start from ``path``'s weights (all, or what fits).

        The checkpoint doctor compares the file with the chosen architecture:
        an exact fit loads; a partial fit (say, another number of classes) asks
        first, then keeps every matching tensor and reinitialises the rest.
        """
        if self._state != "idle":
            return False
        path = Path(path)
        try:
            state, _payload = load_weights_file(path)
        except CheckpointError as exc:
            self._show_error("Could not load the weights", exc)
            return False
        key = self._model_key()
        model = build_model(key[0], key[1], seed=self.training_panel.seed_spin.value())
        diff = compare_state(model, state)
        if diff.exact:
            load_exact(model, state)
            done = f"all {len(diff.matched)} tensors loaded"
        elif diff.partial:
            details = "\n".join(diff.lines())
            if not dialogs.confirm_partial_load(
                self, "The weights fit only in part", diff.summary(), details
            ):
                self._set_status("Load weights cancelled")
                return False
            done = load_partial(model, state).summary()
        else:
            dialogs.show_error(
                self,
                "The weights do not fit",
                f"{path.name} and {key[0]} have nothing in common: {diff.summary()}.",
                "\n".join(diff.lines()),
            )
            return False
        mask = self.freeze_panel.model
        frozen = tuple(frozen_names(mask)) if mask is not None else ()
        self._run = None
        self._run_folder = None
        self._clear_plots()
        set_frozen(model, frozen)
        self._show_model(model)
        self._init_weights = (key, snapshot_state(model), path.name)
        self._notes = [f"Next run starts from {path.name}: {done}."]
        self.training_panel.show_notes(self._notes)
        self._refresh_reader()
        self._update_actions()
        self._set_status(f"Loaded weights from {path.name}: {done}")
        return True

    # ================================================================== files

    @Slot()
    def open_checkpoint_dialog(self) -> None:
        """File > Open checkpoint…"""
        path = dialogs.get_open_path(self, "Open checkpoint", CHECKPOINT_FILTER)
        if path is not None:
            self.open_checkpoint(path)

    def open_checkpoint(self, path: str | Path) -> None:
        """Restore model, optimizer, config, mask and history from ``path``."""
        if self._state != "idle":
            return
        path = Path(path)
        cached = self.data_panel.arrays_lookup()

        def work(progress: Any, cancel: Any) -> tuple[TrainingRun, list[str], Any]:
            payload = load_checkpoint(path)
            cfg, notes = _usable_here(config_of(payload))
            if cfg.dataset == "my-digits":
                # The panel's cache holds a preview of the drawings, not the run's
                # data (drawings in the base recipe plus the replayed images).
                base = cached(cfg.base_dataset, cfg.data_dir)
                arrays = load_run_arrays(
                    cfg, progress=progress, cancel=cancel, base_arrays=base
                )
            else:
                arrays = cached(cfg.dataset, cfg.data_dir)
            run = restore_run(
                payload, config=cfg, arrays=arrays, progress=progress, cancel=cancel
            )
            # The evaluation view's gallery needs this model's own predictions.
            return run, notes, evaluate_predictions(run)

        task = TaskThread(work, self, name="open-checkpoint")
        task.succeeded.connect(self._on_open_task_succeeded)
        task.failed.connect(self._on_open_task_failed)
        task.finished.connect(self._on_open_task_finished)
        task.setProperty("path", str(path))
        self._open_task = task
        self._set_state("opening")
        self._set_status(f"Opening {path.name}…")
        task.start()

    @Slot()
    def _on_open_task_succeeded(self) -> None:
        task = self._open_task
        assert task is not None
        run, notes, evaluation = task.result
        path = str(task.property("path"))
        self._run = run
        self._run_folder = folder_of(Path(path))
        self._init_weights = None
        self._tree_key = None
        self.apply_config(run.config)  # shows run.model: same architecture
        self._run_config = run.config
        self._plot_history(run)
        self._show_opened_run_details(run, evaluation)
        self._refresh_runs()
        self._refresh_reader()
        bar = self.training_panel.progress_bar
        bar.setRange(0, max(run.total_steps, 1))
        bar.setValue(min(run.global_step, run.total_steps))
        bar.setFormat(f"step {run.global_step:,} / {run.total_steps:,}")
        self._notes = list(notes) + list(run.notices)
        self.training_panel.show_notes(self._notes)
        self._fill_recent_menu(window_state.add_recent_file(self._settings, path))
        self._set_status(
            f"Opened {Path(path).name}: step {run.global_step:,}, epoch {run.epoch}"
            + ("; Continue trains on" if self.start_plan(run.config) != "new" else "")
        )

    def _show_opened_run_details(self, run: TrainingRun, evaluation: Any) -> None:
        """Confusion matrices from the history, and the ledger's layer health."""
        panel = self.evaluation_panel
        panel.set_class_names(run.loaders.info.class_names)
        matrices = [
            np.asarray(e["confusion"]) for e in run.history.epochs if "confusion" in e
        ]
        panel.set_history(matrices)
        # The model's own predictions replace the last matrix (same weights), or
        # stand alone when the history holds none (an older checkpoint).
        epoch = max(len(matrices) - 1, 0)
        images = run.loaders.val_images
        panel.add_evaluation(
            dataclasses.replace(evaluation, epoch=epoch),
            None if images is None else images.numpy(),
        )
        if self._run_folder is not None:
            records = read_metrics(self._run_folder)
            self.health_panel.load_health(records["health"])
            self.health_panel.load_histograms(records["histograms"])

    @Slot(str, str)
    def _on_open_task_failed(self, message: str, details: str) -> None:
        self._set_status(f"Could not open the checkpoint: {message}")
        dialogs.show_error(self, "Could not open the checkpoint", message, details)

    @Slot()
    def _on_open_task_finished(self) -> None:
        task = self._open_task
        self._open_task = None
        if task is not None:
            task.deleteLater()
        self._set_state("idle")
        if self._start_after_open and not self._closing:
            self._start_after_open = False
            resumable = self.start_plan(self.current_config()) != "new"
            if self._run is not None and resumable:
                self.start()

    @Slot()
    def save_checkpoint_dialog(self) -> None:
        """File > Save checkpoint…"""
        if self._run is None or self._state not in ("idle", "paused"):
            return
        path = dialogs.get_save_path(self, "Save checkpoint", CHECKPOINT_FILTER)
        if path is not None:
            self.save_checkpoint(path)

    def save_checkpoint(self, path: str | Path) -> None:
        """Write the current run (idle, or paused between batches) to ``path``."""
        if self._run is None:
            return
        try:
            written = save_checkpoint(path, self._run)
        except CheckpointError as exc:
            self._show_error("Could not save the checkpoint", exc)
            return
        self._fill_recent_menu(window_state.add_recent_file(self._settings, written))
        self._set_status(f"Saved {written} (step {self._run.global_step:,})")

    @Slot()
    def load_config_dialog(self) -> None:
        """File > Load run config…"""
        path = dialogs.get_open_path(self, "Load run config", CONFIG_FILTER)
        if path is None:
            return
        try:
            cfg = load_config(path)
        except ConfigError as exc:
            self._show_error("Could not load the run config", exc)
            return
        self.apply_config(cfg)
        self._set_status(f"Loaded run config {path.name}")

    @Slot()
    def save_config_dialog(self) -> None:
        """File > Save run config…"""
        path = dialogs.get_save_path(self, "Save run config", CONFIG_FILTER)
        if path is None:
            return
        try:
            save_config(self.current_config(), path)
        except ConfigError as exc:
            self._show_error("Could not save the run config", exc)
            return
        self._set_status(f"Saved run config {path}")

    def _fill_recent_menu(self, paths: list[str] | None = None) -> None:
        if paths is None:
            paths = window_state.recent_files(self._settings)
        self.recent_menu.clear()
        for i, path in enumerate(paths):
            action = self.recent_menu.addAction(f"&{i + 1} {Path(path).name}")
            action.setToolTip(path)
            action.setStatusTip(path)
            action.setData(path)
            action.triggered.connect(self._on_recent_action_triggered)
        self.recent_menu.setEnabled(bool(paths) and self._state == "idle")

    @Slot()
    def _on_recent_action_triggered(self) -> None:
        action = self.sender()
        path = str(action.data()) if isinstance(action, QAction) else ""
        if not Path(path).is_file():
            self._fill_recent_menu(
                window_state.remove_recent_file(self._settings, path)
            )
            self._set_status(f"{path} no longer exists")
            return
        self.open_checkpoint(path)


def _usable_here(cfg: TrainConfig) -> tuple[TrainConfig, list[str]]:
    """``cfg`` with the device and precision swapped if this machine lacks them."""
    notes = []
    try:
        device = resolve_device(cfg.device)
    except DeviceError as exc:
        notes.append(f"{exc}; training on the best available device instead")
        cfg = cfg.replace(device="auto")
        device = resolve_device("auto")
    if cfg.precision == "fp16" and device.type != "cuda":
        notes.append("fp16 needs CUDA; this checkpoint continues in fp32")
        cfg = cfg.replace(precision="fp32")
    return cfg, notes
