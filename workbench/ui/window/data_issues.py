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
after each, so the Data panel's Use fixes follows).
"""

from __future__ import annotations

import logging
from typing import Protocol

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QWidget

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data_issues.images import NamedImages
from workbench.ui import dialogs
from workbench.ui.data_issues_view import DataIssuesDialog, summary_text
from workbench.ui.formatting import plural
from workbench.ui.run_controller import IssuesPass, RunController, RunState
from workbench.ui.window.folds import FoldRunner

log = logging.getLogger(__name__)

DEFAULT_FOLDS = 5  # as data-issues on the command line
# Where a pass is: looking (a task runs), or waiting for the folds it trains.
LOOKING, TRAINING = "looking", "training"


class IssuesWindow(Protocol):
    """What :class:`IssuesFinder` uses of the window."""

    def current_config(self) -> TrainConfig: ...
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
        controller.issues_found.connect(self._on_controller_issues_found)
        controller.issues_failed.connect(self._on_controller_issues_failed)
        controller.task_progress.connect(self._on_controller_task_progress)
        folds.ended.connect(self._on_folds_ended)

    @property
    def searching(self) -> bool:
        """A pass is under way: looking, or waiting for the folds it trains."""
        return bool(self._phase)

    @Slot()
    def find(self) -> None:
        """Data ▸ Find data issues…: look for the lists of the panels' settings."""
        w = self.window
        if self.controller.state is not RunState.IDLE:
            w.set_status("Stop or finish the run first: finding data issues needs it")
            return
        try:
            cfg = issues_config(w.current_config())
        except ConfigError as exc:
            w.set_status(f"Cannot find data issues: {exc}")
            return
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
        self._phase = ""
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
