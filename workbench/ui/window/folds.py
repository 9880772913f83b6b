"""Start with Folds >= 2: a cross-validation's K fold runs, one after another.

:class:`FoldRunner` drives a core :class:`FoldCampaign` through the window's
:class:`RunController` the way ``train --folds`` loops (``cli/folds.py``): the
data is checked before any folder exists (a task), each fold is an ordinary run
started like any other (``window.launch``) whose folder the group names as it is
made (``run_begun``), and a finished fold's held-out predictions are kept (a
task) before the next fold starts by itself. Stop stops the fold in progress
(saved, like any stop) and no later fold starts. Reproducing one fold run goes
past it: the session reproduces that run, and trains that fold alone.
"""

from __future__ import annotations

import html
import logging

from PySide6.QtCore import QObject, Signal, Slot

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.crossval.campaign import FoldCampaign
from workbench.core.crossval.report import estimate_text
from workbench.core.data.registry import DataError, DownloadProgress
from workbench.core.runs.folder import RunFolder
from workbench.core.session import Finished
from workbench.core.start_plan import StartKind
from workbench.ui import dialogs
from workbench.ui.formatting import percent
from workbench.ui.run_controller import RunController
from workbench.ui.window.parts import FoldsWindow

log = logging.getLogger(__name__)

# Where a campaign is between Start and its end.
CHECKING, TRAINING, KEEPING = "checking", "training", "keeping"


class FoldRunner(QObject):
    """The cross-validation under way in ``window`` (the MainWindow: a FoldsWindow).

    ``ended`` says how the last campaign ended: ``"finished"``, ``"stopped"``
    or ``"failed"`` (the window's status line says why); ``summary`` holds a
    finished campaign's estimates, a line per score.
    """

    ended = Signal(str)

    def __init__(self, window: FoldsWindow, controller: RunController) -> None:
        super().__init__(window)
        self.window = window
        self.controller = controller
        self.campaign: FoldCampaign | None = None
        self.fold = 0  # the fold that trains, or whose predictions are kept
        self.summary: list[str] = []
        self._phase = ""
        self._kept: list[str] = []  # a line per finished fold, shown as notes
        self._warnings: list[str] = []  # the group could not name a run
        controller.run_begun.connect(self._on_controller_run_begun)
        controller.run_finished.connect(self._on_controller_run_finished)
        controller.folds_checked.connect(self._on_controller_folds_checked)
        controller.fold_kept.connect(self._on_controller_fold_kept)
        controller.fold_failed.connect(self._on_controller_fold_failed)
        controller.task_progress.connect(self._on_controller_task_progress)

    def status_text(self, text: str) -> str:
        """``text`` as the status line shows it: which fold, while one runs."""
        if self.campaign is None or self._phase == CHECKING:
            return text
        return f"Fold {self.fold + 1} of {self.campaign.folds}: {text}"

    def start_if_folds(self, cfg: TrainConfig, nproc: int | None = None) -> bool:
        """Start ``cfg``'s cross-validation when it has folds (Folds >= 2) and
        Start begins a new run; False leaves Start to the window.

        Continuing a fold run (stopped, opened, resumed) and reproducing one
        train that fold alone, like any run.
        """
        c, w = self.controller, self.window
        if cfg.folds < 2 or c.session.reproducing is not None:
            return False
        nproc = int(w.device_panel.processes()) if nproc is None else nproc
        if nproc > 1:
            w.show_error(
                "Cannot start the cross-validation",
                ConfigError(
                    f"{cfg.folds} folds train one after another in this window: "
                    "set Processes to 1"
                ),
            )
            return True
        if c.plan(cfg).kind is not StartKind.NEW:
            return False
        self.campaign = FoldCampaign(cfg)
        self.fold, self._phase, self._kept, self.summary = 0, CHECKING, [], []
        c.check_folds(self.campaign)
        w.training_panel.clear_progress(f"checking the data for {cfg.folds} folds…")
        w.set_status(
            f"Checking that every class has {cfg.folds} training images or more…"
        )
        return True

    # ------------------------------------------------------------------ steps

    @Slot(object)
    def _on_controller_task_progress(self, p: object) -> None:
        if self._phase == CHECKING and isinstance(p, DownloadProgress):
            self.window.set_status(
                f"Checking the data for the folds: loading {p.dataset} "
                f"({p.file_name})…; Stop cancels"
            )

    @Slot(object)
    def _on_controller_folds_checked(self, campaign: FoldCampaign) -> None:
        if campaign is self.campaign and self._phase == CHECKING:
            self._start_fold(0)

    def _start_fold(self, fold: int) -> None:
        campaign, session = self.campaign, self.controller.session
        assert campaign is not None
        notes = list(self._kept)
        if session.initial_weights is not None:
            notes.append("The loaded weights stay unused: each fold starts anew")
        cfg = campaign.fold_config(fold)
        # The panels hold the fold's config: once stopped, Start continues it.
        self.window.apply_config(cfg)
        session.reset()  # a new run, never a Continue: as on the command line
        self.fold, self._phase, self._warnings = fold, TRAINING, []
        plan = self.controller.plan(cfg)
        try:
            self.window.launch(plan, notes, status="Starting…")
        except (ConfigError, DataError, OSError) as exc:
            self._end("failed", f"Fold {fold + 1} of {campaign.folds} did not start")
            self.window.show_error("Cannot start the cross-validation", exc)
            return
        for warning in self._warnings:
            self.window.add_note(warning)

    @Slot(object)
    def _on_controller_run_begun(self, folder: RunFolder | None) -> None:
        if self.campaign is None or self._phase != TRAINING:
            return
        try:  # the trainer has not started: run.json is the GUI thread's
            self.campaign.started(self.fold, folder)
        except OSError as exc:
            self._warnings.append(f"The group could not name this run: {exc}")

    @Slot(object)
    def _on_controller_run_finished(self, _finished: Finished) -> None:
        campaign, c = self.campaign, self.controller
        if campaign is None or self._phase != TRAINING or c.closing:
            return
        where = f"fold {self.fold + 1} of {campaign.folds}"
        result = c.result
        if result is None:
            self._end(
                "failed", f"Failed in {where}: the folds after it were not trained"
            )
        elif result.stopped:
            self._end(
                "stopped",
                f"Stopped in {where} at step {result.global_step:,}, saved: "
                "the folds after it were not trained",
            )
        else:
            self._phase = KEEPING
            c.keep_fold(campaign)
            self.window.set_status("keeping its predictions on the held-out fold…")

    @Slot(object)
    def _on_controller_fold_kept(self, scores: dict[str, float]) -> None:
        campaign = self.campaign
        if campaign is None or self._phase != KEEPING:
            return
        self._kept.append(
            f"Fold {self.fold + 1}: held-out accuracy "
            f"{percent(scores['val_accuracy'])}, loss {scores['val_loss']:.4f}, "
            f"macro-F1 {percent(scores['macro_f1'])}"
        )
        if self.fold + 1 < campaign.folds:
            self._start_fold(self.fold + 1)
        else:
            self._finish(campaign)

    @Slot(str, str)
    def _on_controller_fold_failed(self, message: str, details: str) -> None:
        campaign = self.campaign
        if campaign is None or self._phase not in (CHECKING, KEEPING):
            return
        checking = self._phase == CHECKING
        if checking:
            self.window.training_panel.clear_progress()
        if not message:  # Stop (or the window closing) ended the task
            self._end(
                "stopped",
                "Stopped: the cross-validation did not start"
                if checking
                else f"Stopped after fold {self.fold + 1} of {campaign.folds}",
            )
            return
        title = (
            "Cannot start the cross-validation"
            if checking
            else f"Fold {self.fold + 1}'s held-out predictions were not kept"
        )
        self._end("failed", f"{title}: {message}")
        if not self.controller.closing:
            dialogs.show_error(self.window, title, message, details)

    # ------------------------------------------------------------------ the end

    def _finish(self, campaign: FoldCampaign) -> None:
        cfg = campaign.config
        lines = [estimate_text(name, e) for name, e in campaign.estimates().items()]
        group = campaign.group
        self.summary = lines
        self.window.set_notes(lines)  # each fold's scores: the Runs tab
        body = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
        where = f"<p>Group: {html.escape(str(group.path))}</p>" if group else ""
        dialogs.show_report(
            self.window,
            "Cross-validation",
            f"<p><b>{cfg.folds}-fold cross-validation of {html.escape(cfg.model)} "
            f"on {html.escape(cfg.dataset)}</b> (seed {cfg.seed})</p>"
            f"<ul>{body}</ul>{where}"
            "<p>The Runs tab lists each fold's run.</p>",
            ok=True,
        )
        first = lines[0] if lines else "no scores"
        self._end("finished", f"Cross-validation over {cfg.folds} folds: {first}")

    def _end(self, how: str, status: str) -> None:
        self.campaign, self._phase = None, ""
        self.window.set_status(status)  # no fold says it now
        self.window.runs_tab.refresh()
        log.info("cross-validation %s: %s", how, status)
        self.ended.emit(how)
