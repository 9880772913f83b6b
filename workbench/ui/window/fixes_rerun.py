"""The data issues dialog's "Train again with these fixes": the run, then the card.

:class:`FixesRerun` trains the panels' settings with the dataset's fixes as an
ordinary run of the ledger, the way the user would: the config gets the
overlay's fixes (the Data panel's Use fixes then shows them, checked), a new
run begins (as Reproduce does: the current one is left as it is) and the
window's own Start starts it on one process, so the Training panel shows its
progress and its Stop stops it. The run before is chosen first: the newest
finished run of the same settings without fixes. When the run ends, a task
has both runs' final weights predict the same validation images (those of the
split with the fixes) and the dialog's card shows each class's accuracy.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from PySide6.QtCore import QObject, Slot

from workbench.core.config import ConfigError, TrainConfig
from workbench.core.data.fixes import dataset_of
from workbench.core.runs.listing import RunSummary, summarize
from workbench.ui.data_issues_view import DataIssuesDialog
from workbench.ui.fixes_before_after import BeforeAfter, run_before, score_before_after
from workbench.ui.fixes_card import (
    FAILED_TEXT,
    report_text,
    summary_line,
    training_text,
)
from workbench.ui.issue_fixes import DEFAULT_NAME
from workbench.ui.run_controller import RunController, RunState
from workbench.ui.tasks import TaskThread, describe_error, start_task

log = logging.getLogger(__name__)

# Where a request is: its run trains, or both runs are being measured.
TRAINING, SCORING = "training", "scoring"


class RerunWindow(Protocol):
    """What :class:`FixesRerun` uses of the window."""

    def current_config(self) -> TrainConfig: ...
    def apply_config(self, cfg: TrainConfig) -> None: ...
    def reset_run(self) -> None: ...
    def start(self, nproc: int | None = None) -> None: ...
    def set_status(self, text: str) -> None: ...


def fixes_said(entries: tuple[tuple[str, str, str], ...]) -> str:
    """``fixes 'fixes' (3 relabelled, 1 excluded)``."""
    actions = [action for _key, action, _label in entries]
    return (
        f"fixes {DEFAULT_NAME!r} ({actions.count('relabel')} relabelled, "
        f"{actions.count('exclude')} excluded)"
    )


class FixesRerun(QObject):
    """One run with the fixes at a time, and its before/after card.

    Its measuring task is a child: the owner's shutdown waits for it.
    """

    def __init__(
        self, window: RerunWindow, controller: RunController, parent: QObject
    ) -> None:
        super().__init__(parent)
        self.window = window
        self.controller = controller
        self.dialog: DataIssuesDialog | None = None
        self.config: TrainConfig | None = None
        self.before: RunSummary | None = None
        self.result: BeforeAfter | None = None  # the last card's figures
        self._phase = ""
        self._after: RunSummary | None = None
        self._stopped = False
        self._task: TaskThread | None = None
        controller.run_finished.connect(self._on_controller_run_finished)

    @property
    def busy(self) -> bool:
        """A run with the fixes trains, or both runs are being measured."""
        return bool(self._phase)

    def request(self, dialog: DataIssuesDialog, pass_config: TrainConfig) -> None:
        """Train the panels' settings with ``dialog``'s fixes (for the pass's data)."""
        w, entries = self.window, dialog.fixes_entries()
        if self.busy or self.controller.state is not RunState.IDLE:
            w.set_status("Stop or finish the run first: training again needs it")
            return
        if not entries:
            w.set_status("No fix to train with: relabel or exclude images first")
            return
        try:
            cfg = w.current_config()
        except ConfigError as exc:
            w.set_status(f"Cannot train again with the fixes: {exc}")
            return
        if dataset_of(cfg) != dataset_of(pass_config):
            w.set_status(
                "Cannot train again with the fixes: the panels show other data than "
                "the one they fix; choose it again in the Data panel"
            )
            return
        # An ordinary run (not a fold), with the overlay's fixes as Use fixes
        # puts them in a config.
        cfg = cfg.replace(folds=1, fold=0, fixes=entries, fixes_name=DEFAULT_NAME)
        self.dialog, self.config, self.result = dialog, cfg, None
        self.before = run_before(cfg)
        w.reset_run()
        w.apply_config(cfg)
        w.start(nproc=1)
        if self.controller.state is RunState.IDLE:  # refused: the window said why
            return
        self._phase = TRAINING
        said = fixes_said(entries)
        dialog.set_retraining(True)
        dialog.show_card(training_text(said, self.before))
        w.set_status(f"Training again with {said}…")

    @Slot(object)
    def _on_controller_run_finished(self, _finished: object) -> None:
        if self._phase != TRAINING:
            return
        folder = self.controller.session.folder
        after = summarize(folder) if folder is not None else None
        if after is None or after.status not in ("finished", "stopped"):
            self._end(FAILED_TEXT, "The run with the fixes did not finish")
            return
        if not folder.checkpoint_path.is_file():
            self._end(FAILED_TEXT, "The run with the fixes kept no weights")
            return
        self._phase, self._after = SCORING, after
        self._stopped = after.status == "stopped"
        cfg, before, after_folder = self.config, self.before, folder
        assert cfg is not None
        text = "Measuring both runs on the same validation images…"
        self._show(f"{text}<br>")
        self.window.set_status(text)

        def work(_progress: Any, cancel: Any) -> BeforeAfter | None:
            old = before.folder if before is not None else None
            return score_before_after(cfg, old, after_folder, cancel)

        self._task = start_task(
            self,
            "fixes-before-after",
            work,
            succeeded=self._on_task_succeeded,
            failed=self._on_task_failed,
            finished=self._on_task_finished,
        )

    @Slot(object)
    def _on_task_succeeded(self, result: BeforeAfter | None) -> None:
        if result is None or self._after is None:
            self._end("Not measured: cancelled", "Training again: not measured")
            return
        self.result = result
        text = report_text(result, self.before, self._after, self._stopped)
        self._end(text, summary_line(result))
        if self.dialog is not None:  # it may have been closed meanwhile
            self.dialog.show()
            self.dialog.raise_()

    @Slot(object)
    def _on_task_failed(self, error: Exception) -> None:
        message, _details = describe_error(error)
        self._end(
            f"<b>Could not measure the runs</b>: {message}",
            f"Could not measure the runs: {message}",
        )

    @Slot()
    def _on_task_finished(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.deleteLater()

    def _end(self, card: str, status: str) -> None:
        self._phase = ""
        self._show(card)
        if self.dialog is not None:
            self.dialog.set_retraining(False)
        self.window.set_status(status)
        log.info("train again with fixes: %s", status)

    def _show(self, card: str) -> None:
        if self.dialog is not None:
            self.dialog.show_card(card)
