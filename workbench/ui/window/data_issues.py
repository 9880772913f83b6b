"""Data ▸ Find data issues…: likely label errors, top losses, confused pairs,
duplicates, from predictions no model made on its own training images.

:class:`IssuesFinder` does in the window what ``data-issues`` does on the
command line (``cli/data_issues.py``): the current settings with K folds (the
Folds setting, or 5) are looked up among the finished cross-validations (a
task: loading the images reads the data); one of the same data and settings
is reused. Without one, it asks whether to train the K folds now, trains them
with the window's :class:`FoldRunner` and, once they finished, looks again.
The lists are made by a task too (the ensemble predicts the validation
images), and shown in a :class:`DataIssuesDialog`, with progress and Cancel
until then; the fixes made there are for the pass's dataset (``fixes_saved``
after each, so the Data panel's Use fixes follows). Once they show, a task of
its own asks the finished runs of the ledger on the same data for the stubborn
errors (the pass ends with it; the other lists need not wait). "Train again
with these fixes" is :class:`FixesRerun`'s.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QWidget

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data_issues.images import NamedImages
from workbench.core.data_issues.stubborn import Stubborn, stubborn_errors
from workbench.ui import dialogs
from workbench.ui.data_issues_view import DataIssuesDialog, summary_text
from workbench.ui.formatting import plural
from workbench.ui.run_controller import IssuesPass, RunController
from workbench.ui.tasks import TaskThread, describe_error, start_task
from workbench.ui.window.fixes_rerun import FixesRerun
from workbench.ui.window.folds import FoldRunner
from workbench.ui.window.idle_config import config_when_idle

log = logging.getLogger(__name__)

DEFAULT_FOLDS = 5  # as data-issues on the command line
# Where a pass is: looking (a task runs), waiting for the folds it trains, or
# asking the ledger's runs for the stubborn errors (the lists shown).
LOOKING, TRAINING, ASKING = "looking", "training", "asking"


class IssuesWindow(Protocol):
    """What :class:`IssuesFinder` uses of the window (and its :class:`FixesRerun`)."""

    def current_config(self) -> TrainConfig: ...
    def apply_config(self, cfg: TrainConfig) -> None: ...
    def reset_run(self) -> None: ...
    def start(self, nproc: int | None = None) -> None: ...
    def set_status(self, text: str) -> None: ...


def issues_config(cfg: TrainConfig) -> TrainConfig:
    """``cfg`` with the folds a pass uses: the Folds setting, or 5 when off."""
    folds = cfg.folds if cfg.folds >= 2 else DEFAULT_FOLDS
    return cfg.replace(folds=folds, fold=0)


class IssuesFinder(QObject):
    """One data-issues pass at a time; its dialog stays on ``dialog``."""

    fixes_saved = Signal()  # the dialog changed the dataset's fixes

    def __init__(
        self, window: IssuesWindow, controller: RunController, folds: FoldRunner
    ) -> None:
        super().__init__(window if isinstance(window, QObject) else None)
        self.window = window
        self.controller = controller
        self.folds = folds
        self.dialog: DataIssuesDialog | None = None
        self.config: TrainConfig | None = None
        self._phase = ""
        self._trained = False  # this pass trained its folds (ask once)
        self._images: NamedImages | None = None
        self._asking: TaskThread | None = None  # the stubborn errors' task
        self.rerun = FixesRerun(window, controller, self)
        controller.issues_found.connect(self._on_controller_issues_found)
        controller.issues_failed.connect(self._on_controller_issues_failed)
        controller.task_progress.connect(self._on_controller_task_progress)
        folds.ended.connect(self._on_folds_ended)

    @property
    def searching(self) -> bool:
        """A pass is under way: looking, waiting for the folds it trains, or
        asking the runs for the stubborn errors."""
        return bool(self._phase)

    @Slot()
    def find(self) -> None:
        """Data ▸ Find data issues…: look for the lists of the panels' settings."""
        w = self.window
        panels = config_when_idle(w, "finding data issues needs it", "find data issues")
        if panels is None:
            return
        try:
            cfg = issues_config(panels)
        except ConfigError as exc:
            w.set_status(f"Cannot find data issues: {exc}")
            return
        if self._asking is not None:  # the last pass's: its answer is dropped
            self._asking.cancel()
        self.config, self._trained, self._images = cfg, False, None
        self._open_dialog()
        self._look()

    def _open_dialog(self) -> None:
        if self.dialog is None:
            parent = self.window if isinstance(self.window, QWidget) else None
            self.dialog = DataIssuesDialog(parent)
            self.dialog.cancel_requested.connect(self._on_dialog_cancel_requested)
            self.dialog.finished.connect(self._on_dialog_finished)
            self.dialog.fixes.saved.connect(self.fixes_saved)
            self.dialog.retrain_requested.connect(self._on_dialog_retrain_requested)
        self.dialog.show()
        self.dialog.raise_()

    def _look(self) -> None:
        cfg = self.config
        assert cfg is not None
        assert self.dialog is not None
        self._phase = LOOKING
        text = f"Looking for a finished {cfg.folds}-fold cross-validation…"
        self.dialog.show_progress(text, _settings_line(cfg))
        self.window.set_status(f"Finding data issues: {text}")
        self.controller.find_data_issues(cfg, self._images)

    def _end(self, status: str) -> None:
        self._phase = ""
        self.window.set_status(status)
        if self.dialog is not None:
            self.dialog.show_message(status)
        log.info("data issues: %s", status)

    # ------------------------------------------------------------------ steps

    @Slot(object)
    def _on_controller_task_progress(self, text: object) -> None:
        if self._phase == LOOKING and isinstance(text, str):
            self.window.set_status(f"Finding data issues: {text}…")
            if self.dialog is not None:
                self.dialog.summary_label.setText(f"{text[:1].upper()}{text[1:]}…")

    @Slot(object)
    def _on_controller_issues_found(self, found: IssuesPass) -> None:
        if self._phase != LOOKING:
            return
        self._images = found.images
        if found.issues is None or found.group is None:
            self._train_folds()
            return
        issues, cfg = found.issues, self.config
        assert cfg is not None
        source = (
            f"Every prediction comes from models that never trained on the image: "
            f"the {cfg.folds} fold models of cross-validation {found.group.id} "
            "(a training image: the one model its fold held out; a validation "
            "image: all of them, averaged)."
        )
        assert self.dialog is not None
        self.dialog.show_issues(issues, found.images.arrays, source, cfg)
        self.dialog.show()
        self.dialog.raise_()
        self.window.set_status(f"Data issues: {summary_text(issues)}")
        if issues.stubborn is None:
            self._ask_runs(cfg, found.images)
        else:
            self._phase = ""

    def _ask_runs(self, cfg: TrainConfig, images: NamedImages) -> None:
        """The stubborn errors, off the GUI thread: each run predicts every image."""
        assert self.dialog is not None
        self._phase = ASKING
        self.dialog.show_stubborn_asking()

        def work(_progress: Any, _cancel: Any) -> Stubborn:
            return stubborn_errors(cfg, images)

        self._asking = start_task(
            self,
            "stubborn-errors",
            work,
            succeeded=self._on_asking_succeeded,
            failed=self._on_asking_failed,
            finished=self._on_asking_finished,
        )

    def _answered(self) -> bool:
        """The signal is of this pass's task (not one a new pass replaced)."""
        task = self.sender()
        return task is self._asking and not (
            isinstance(task, TaskThread) and task.cancel_requested
        )

    @Slot(object)
    def _on_asking_succeeded(self, stubborn: Stubborn) -> None:
        if self._answered() and self.dialog is not None:
            self.dialog.show_stubborn(stubborn)

    @Slot(object)
    def _on_asking_failed(self, error: Exception) -> None:
        if self._answered() and self.dialog is not None:
            message, _details = describe_error(error)
            self.dialog.show_stubborn(f"Could not ask the runs: {message}")

    @Slot()
    def _on_asking_finished(self) -> None:
        task = self.sender()
        if task is self._asking:
            self._asking = None
            if self._phase == ASKING:
                self._phase = ""
        if isinstance(task, TaskThread):
            task.deleteLater()

    def _train_folds(self) -> None:
        cfg = self.config
        assert cfg is not None
        if self._trained:  # the folds finished, yet no group matches
            self._end(
                "Data issues: the cross-validation finished, but its predictions "
                "do not cover these images"
            )
            return
        folds = plural(cfg.folds, "fold")
        if not dialogs.confirm(
            self.window if isinstance(self.window, QWidget) else None,
            f"Train {folds} first?",
            f"Finding data issues needs predictions no model made on its own "
            f"images: a {cfg.folds}-fold cross-validation of these settings, "
            f"and none has finished yet.\n\nTrain the {folds} now? Each fold is a "
            f"run of its own (about {cfg.folds} times as long as one run, all "
            "together); the lists open when the last fold finishes.",
        ):
            self._end(f"Data issues not searched: the {folds} were not trained")
            return
        self._trained, self._phase = True, TRAINING
        if not self.folds.start_if_folds(cfg, nproc=1):
            self._end(
                "Cannot train the folds now: Start would continue the current run "
                "(Run ▸ New run first)"
            )
            return
        if self.dialog is not None:
            self.dialog.show_progress(
                f"Training the {folds}: the Training panel shows each one, and "
                "Cancel (or Stop) stops them. This window may close: it opens "
                "with the lists once the last fold finishes.",
                _settings_line(cfg),
            )

    @Slot(str)
    def _on_folds_ended(self, how: str) -> None:
        if self._phase != TRAINING:
            return
        if how == "finished":
            self._look()
        else:
            self._end(f"Data issues not searched: the cross-validation {how}")

    @Slot(str, str)
    def _on_controller_issues_failed(self, message: str, details: str) -> None:
        if self._phase != LOOKING:
            return
        if not message:
            self._end("Finding data issues cancelled")
            return
        self._end(f"Could not find data issues: {message}")
        if not self.controller.closing:
            parent = self.window if isinstance(self.window, QWidget) else None
            dialogs.show_error(parent, "Could not find data issues", message, details)

    @Slot()
    def _on_dialog_cancel_requested(self) -> None:
        if self._phase == LOOKING:
            self.controller.cancel_task()
        elif self._phase == TRAINING:
            self.controller.stop()  # the fold in training, or the data check
            self.controller.cancel_task()  # keeping a fold's predictions

    @Slot()
    def _on_dialog_retrain_requested(self) -> None:
        if self.dialog is not None and self.config is not None:
            self.rerun.request(self.dialog, self.config)

    def shutdown(self) -> None:
        """Stop asking the runs and measuring, and wait for the threads (closing).

        Every task of the finder and its :class:`FixesRerun` (one a new pass
        replaced too): a running thread must not be destroyed with the window.
        """
        for task in self.findChildren(TaskThread):
            task.cancel()
            task.wait()

    @Slot(int)
    def _on_dialog_finished(self, _result: int) -> None:
        # Closed: the search stops, unless folds train (their lists open after).
        if self._phase == LOOKING:
            self.controller.cancel_task()


def _settings_line(cfg: TrainConfig) -> str:
    return (
        f"{cfg.model} on {cfg.dataset}, {cfg.folds} folds, seed {cfg.seed}: the "
        "panels' settings"
    )
