"""The File menu's work: checkpoints, weights, run configs, recent files, resume.

:class:`FileActions` asks for paths with the dialogs, hands the work to the
window's :class:`RunController` (whose session decides) and shows the outcome
in the window.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QSettings, QTimer, Slot
from PySide6.QtGui import QAction

from workbench.core.checkpoints.io import CheckpointError, save_checkpoint
from workbench.core.config import ConfigError, load_config, save_config
from workbench.core.errors import USER_ERRORS
from workbench.core.model_offer import WeightsOffer, offer_weights
from workbench.core.runs.folder import interrupted_runs
from workbench.core.runs.listing import read_metrics
from workbench.core.session import Opened
from workbench.core.start_plan import StartKind
from workbench.ui import dialogs
from workbench.ui.run_controller import RunController, RunState
from workbench.ui.window import state as window_state
from workbench.ui.window.parts import FilesWindow
from workbench.ui.window.recent_files import recent_entries

CHECKPOINT_FILTER = "Checkpoints (*.pt *.pth);;All files (*)"
WEIGHTS_FILTER = "Checkpoints and state_dicts (*.pt *.pth *.ckpt);;All files (*)"
CONFIG_FILTER = "Run configs (*.json *.toml);;All files (*)"


class FileActions(QObject):
    """Open, save, load weights, configs, recent files and the resume offer.

    ``window`` is the :class:`~workbench.ui.main_window.MainWindow`, seen
    through :class:`~workbench.ui.window.parts.FilesWindow`.
    """

    def __init__(
        self, window: FilesWindow, controller: RunController, settings: QSettings
    ) -> None:
        super().__init__(window)
        self.window = window
        self.controller = controller
        self.settings = settings
        self.start_after_open = False  # the resume offer continues the run at once
        self._recent_menu_hooked = False
        controller.opened.connect(self._on_controller_opened)
        controller.open_failed.connect(self._on_controller_open_failed)
        controller.state_changed.connect(self._on_controller_state_changed)

    @property
    def _idle(self) -> bool:
        return self.controller.state is RunState.IDLE

    # ================================================================== resume

    @Slot()
    def offer_resume(self) -> None:
        """If a run was interrupted (crash, kill, window closed), offer to resume it."""
        c = self.controller
        if not self._idle or c.closing or c.run is not None:
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
        answer = dialogs.ask_resume(self.window, "Resume the interrupted run?", text)
        if answer == "resume":
            self.start_after_open = True
            self.open_checkpoint(folder.checkpoint_path)
        elif answer == "dismiss":
            folder.update(status="dismissed")
            self.window.set_status(f"Forgot the interrupted run {folder.id}")

    # ================================================================== weights

    @Slot()
    def load_weights_dialog(self) -> None:
        """File > Load weights into the model…"""
        path = dialogs.get_open_path(
            self.window, "Load weights into the model", WEIGHTS_FILTER
        )
        if path is not None:
            self.load_weights(path)

    def load_weights(self, path: str | Path) -> bool:
        """Make the next new run start from ``path``'s weights (all, or what fits).

        The checkpoint doctor compares the file with the chosen architecture:
        an exact fit loads; a partial fit (say, another number of classes) asks
        first, then keeps every matching tensor and reinitialises the rest.
        """
        if not self._idle:
            return False
        try:
            return self._offer_weights(path)
        except USER_ERRORS as exc:  # the file, or data the model cannot be built for
            self.window.show_error("Could not load the weights", exc)
            return False

    def _offer_weights(self, path: str | Path) -> bool:
        w = self.window
        offer = offer_weights(path, w.current_config())
        other = offer.other_architecture
        if other is not None:
            answer = dialogs.ask_switch_architecture(
                w,
                f"{offer.path.name} holds weights for {other}; the Model panel "
                f"chooses {offer.model_key[0]} ({offer.diff.summary()}). Switch "
                f"the model to {other}?",
                "\n".join(offer.diff.lines()),
                can_load_partly=offer.diff.partial,
            )
            if answer == "cancel":
                w.set_status("Load weights cancelled")
                return False
            if answer == "switch":
                w.apply_config(w.current_config().replace(model=other, frozen=()))
                offer = offer_weights(path, w.current_config(), offer.state)
            elif not offer.diff.exact:  # "partial": already confirmed
                return self._accept(offer)
        diff = offer.diff
        if not diff.exact and not diff.partial:
            dialogs.show_error(
                w,
                "The weights do not fit",
                f"{offer.path.name} and {offer.model_key[0]}: {diff.summary()}. "
                "Choose the architecture the file was saved from in the Model panel.",
                "\n".join(diff.lines()),
            )
            return False
        if not diff.exact and not dialogs.confirm_partial_load(
            w,
            "The weights fit only in part",
            diff.summary(),
            "\n".join(diff.lines()),
            load_by_default=not offer.mostly_unfit,
        ):
            w.set_status("Load weights cancelled")
            return False
        return self._accept(offer)

    def _accept(self, offer: WeightsOffer) -> bool:
        w = self.window
        model, weights = self.controller.session.accept_weights(offer, w.frozen_mask())
        w.clear_run_views()
        w.training_panel.clear_progress()
        w.show_model(model)
        w.set_notes([f"Next run starts from {weights.source}: {weights.summary}."])
        w.draw_tab.refresh_reader()
        w.update_actions()
        w.set_status(f"Loaded weights from {weights.source}: {weights.summary}")
        return True

    # ================================================================== checkpoints

    @Slot()
    def open_checkpoint_dialog(self) -> None:
        """File > Open checkpoint…"""
        path = dialogs.get_open_path(self.window, "Open checkpoint", CHECKPOINT_FILTER)
        if path is not None:
            self.open_checkpoint(path)

    def open_checkpoint(self, path: str | Path) -> None:
        """Restore model, optimizer, config, mask and history from ``path``."""
        if self._idle:
            self.controller.open(path)
            self.window.set_status(f"Opening {Path(path).name}…")

    @Slot(object)
    def _on_controller_opened(self, opened: Opened) -> None:
        w, run = self.window, opened.run
        w.show_run(run)
        self._show_opened_run_details(opened)
        w.runs_tab.refresh()
        w.draw_tab.refresh_reader()
        w.training_panel.show_position(run.global_step, run.total_steps)
        w.set_notes(list(opened.notes) + list(run.notices))
        self.fill_recent_menu(window_state.add_recent_file(self.settings, opened.path))
        resumable = self.controller.plan(run.config).kind is not StartKind.NEW
        origin = self.controller.session.weights_origin  # best.pt or latest
        w.set_status(
            (f"Opened {origin}; " if origin else f"Opened {opened.path.name}: ")
            + f"step {run.global_step:,} of "
            f"{run.total_steps:,}, epoch {run.epoch}"
            + (
                "; Continue trains on from this step"
                if resumable
                else "; it trained every step: Start begins a new run"
            )
        )

    def _show_opened_run_details(self, opened: Opened) -> None:
        """Confusion matrices from the history, and the ledger's layer health."""
        w, run = self.window, opened.run
        panel = w.evaluation_panel
        panel.set_class_names(run.loaders.info.class_names)
        matrices = [np.asarray(e.confusion) for e in run.history.epochs if e.confusion]
        panel.set_history(matrices)
        if opened.evaluation is not None:
            # The model's own predictions replace the last matrix (same weights),
            # or stand alone when the history holds none (an older checkpoint).
            epoch = max(len(matrices) - 1, 0)
            w.run_view.show_evaluation(
                run, dataclasses.replace(opened.evaluation, epoch=epoch)
            )
        folder = w.run_folder
        if folder is not None:
            records = read_metrics(folder)
            w.health_panel.load_health(records["health"])
            w.health_panel.load_histograms(records["histograms"])

    @Slot(str, str)
    def _on_controller_open_failed(self, message: str, details: str) -> None:
        self.start_after_open = False
        self.window.set_status(f"Could not open the checkpoint: {message}")
        dialogs.show_error(
            self.window, "Could not open the checkpoint", message, details
        )

    @Slot(object)
    def _on_controller_state_changed(self, state: RunState) -> None:
        if state is RunState.IDLE and self.start_after_open:
            self.start_after_open = False
            # Once every subscriber has seen "idle": starting now would nest.
            QTimer.singleShot(0, self._continue_opened_run)

    @Slot()
    def _continue_opened_run(self) -> None:
        c = self.controller
        if c.closing or c.run is None or c.state is not RunState.IDLE:
            return
        plan = c.plan(self.window.current_config())
        if plan.kind is not StartKind.NEW:
            self.window.start()
        elif plan.why_new:  # nothing left to train, say: the run stays open
            self.window.set_status(f"Not continued: {plan.why_new}")

    @Slot()
    def save_checkpoint_dialog(self) -> None:
        """File > Save checkpoint…"""
        state = self.controller.state
        if self.controller.run is None or state not in (RunState.IDLE, RunState.PAUSED):
            return
        path = dialogs.get_save_path(self.window, "Save checkpoint", CHECKPOINT_FILTER)
        if path is not None:
            self.save_checkpoint(path)

    def save_checkpoint(self, path: str | Path) -> None:
        """Write the current run (idle, or paused between batches) to ``path``."""
        run = self.controller.run
        if run is None:
            return
        try:
            written = save_checkpoint(path, run)
        except CheckpointError as exc:
            self.window.show_error("Could not save the checkpoint", exc)
            return
        self.fill_recent_menu(window_state.add_recent_file(self.settings, written))
        self.window.set_status(f"Saved {written} (step {run.global_step:,})")

    # ================================================================== configs

    @Slot()
    def load_config_dialog(self) -> None:
        """File > Load run config…"""
        path = dialogs.get_open_path(self.window, "Load run config", CONFIG_FILTER)
        if path is None:
            return
        try:
            cfg = load_config(path)
        except ConfigError as exc:
            self.window.show_error("Could not load the run config", exc)
            return
        self.window.apply_config(cfg)
        # A field's range (lr at most 10, say) may not hold the file's value.
        wanted, shown = cfg.to_dict(), self.window.current_config().to_dict()
        clipped = [
            f"{k} {wanted[k]!r} as {shown[k]!r}"
            for k in wanted
            if shown[k] != wanted[k]
        ]
        self.window.set_status(
            f"Loaded run config {path.name}"
            + (f"; the window shows {', '.join(clipped)}" if clipped else "")
        )

    @Slot()
    def save_config_dialog(self) -> None:
        """File > Save run config…"""
        path = dialogs.get_save_path(self.window, "Save run config", CONFIG_FILTER)
        if path is None:
            return
        try:
            save_config(self.window.current_config(), path)
        except ConfigError as exc:
            self.window.show_error("Could not save the run config", exc)
            return
        self.window.set_status(f"Saved run config {path}")

    # ================================================================== recent files

    def fill_recent_menu(self, paths: list[str] | None = None) -> None:
        """The Open recent submenu: each file once, newest first, told apart.

        Files with the same name (every run's ``checkpoint.pt``) show as much
        of their folders as tells them apart; a file that is gone is listed
        disabled. Filled again each time the menu opens (files come and go).
        """
        if paths is None:
            paths = window_state.recent_files(self.settings)
        menu = self.window.commands.recent_menu
        if not self._recent_menu_hooked:
            menu.aboutToShow.connect(self._on_recent_menu_about_to_show)
            self._recent_menu_hooked = True
        menu.clear()
        for i, (label, path) in enumerate(recent_entries(paths)):
            action = menu.addAction(f"&{i + 1} {label}")
            exists = Path(path).is_file()
            tip = path if exists else f"{path} no longer exists"
            action.setToolTip(tip)
            action.setStatusTip(tip)
            action.setData(path)
            action.setEnabled(exists)
            action.triggered.connect(self._on_recent_action_triggered)
        menu.setEnabled(bool(paths) and self._idle)

    @Slot()
    def _on_recent_menu_about_to_show(self) -> None:
        self.fill_recent_menu()

    @Slot()
    def _on_recent_action_triggered(self) -> None:
        action = self.sender()
        path = str(action.data()) if isinstance(action, QAction) else ""
        if not Path(path).is_file():
            self.fill_recent_menu(window_state.remove_recent_file(self.settings, path))
            self.window.set_status(f"{path} no longer exists")
            return
        self.open_checkpoint(path)
