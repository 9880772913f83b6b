"""The window's run lifecycle: a Session, the trainer thread, background tasks, state.

:class:`RunController` knows no widget. The window asks it to start, pause,
stop, open a checkpoint or measure a fine-tune, and subscribes to what it
emits: ``state_changed`` (a :class:`RunState`) and ``event`` (every event of the
run, in order, after the controller has taken what it needs from it). The
decisions (what Start does, which folder a run writes) are the core
:class:`~workbench.core.session.Session`'s, the same ones the command line makes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.core.crossval.campaign import FoldCampaign
from workbench.core.crossval.group import FoldGroup
from workbench.core.data.cache import ArraysCache
from workbench.core.data.describe import input_spec
from workbench.core.data_issues.held_out import (
    matching_group,
    training_probabilities,
    validation_probabilities,
)
from workbench.core.data_issues.images import NamedImages, named_images
from workbench.core.data_issues.report import DataIssues, find_data_issues
from workbench.core.export.formats import export_checkpoint
from workbench.core.runs.folder import RunFolder, mark_closed_if_stopped
from workbench.core.session import Finished, Opened, RunPrepared, Session
from workbench.core.start_plan import Plan
from workbench.core.train.engine import TrainingRun
from workbench.core.tuning.lr_probe import RateFound, find_rate
from workbench.ui.process_job import JobEnded, ProcessJob
from workbench.ui.tasks import TaskThread, describe_error, start_task
from workbench.ui.trainer_thread import TrainerThread

log = logging.getLogger(__name__)

# How long closing the window waits for the run to finish its batch.
SHUTDOWN_WAIT_MS = 5000


@dataclass(frozen=True)
class FindProgress:
    """How far the learning-rate finder is: ``stage`` is "range test" or "probes"."""

    stage: str
    done: int
    total: int


@dataclass(frozen=True)
class IssuesPass:
    """A data-issues pass: ``cfg``'s images, the group reused, and its lists.

    ``group`` and ``issues`` are None when no finished cross-validation of these
    images and settings exists (its folds must be trained first).
    """

    images: NamedImages
    group: FoldGroup | None
    issues: DataIssues | None


class RunState(StrEnum):
    """Where the run lifecycle is; compares equal to its value (``"idle"``)."""

    IDLE = "idle"
    PREPARING = "preparing"  # loading data, building the model
    RUNNING = "running"
    PAUSING = "pausing"  # asked to pause; the batch in flight finishes first
    PAUSED = "paused"  # the engine waits between two batches
    OPENING = "opening"  # a checkpoint is being restored
    SCORING = "scoring"  # a finished fine-tune is being measured
    EXPORTING = "exporting"  # a checkpoint is being exported and verified
    FINDING = "finding"  # the learning-rate finder tries rates on the run

    @property
    def training(self) -> bool:
        """A trainer thread runs (it owns the model)."""
        return self in (RunState.PREPARING, RunState.RUNNING, *_HELD)

    @property
    def held(self) -> bool:
        """Pausing or paused."""
        return self in _HELD


_HELD = (RunState.PAUSING, RunState.PAUSED)


class RunController(QObject):
    """Owns the :class:`Session`, the :class:`TrainerThread` and every task."""

    state_changed = Signal(object)  # RunState
    event = Signal(object)  # RunPrepared, DownloadProgress or an engine event
    pause_reached = Signal()
    run_failed = Signal(str, str)  # message, traceback
    run_finished = Signal(object)  # Finished; the state is idle again
    opened = Signal(object)  # Opened: the checkpoint is the current run now
    open_failed = Signal(str, str)
    fine_tune_scored = Signal(object, object, bool)  # Scores, FrozenCheck, stopped
    score_failed = Signal(str, str)
    task_progress = Signal(object)  # a task's progress (export: a line of text)
    exported = Signal(object)  # ExportResult
    export_failed = Signal(str, str)
    rate_found = Signal(object)  # RateFound (cancelled: its offered is None)
    find_failed = Signal(str, str)
    job_started = Signal(object)  # Path: the run folder a --nproc job writes
    job_event = Signal(object)  # what the job's run folder or rank 0 told
    job_ended = Signal(object)  # JobEnded; the state is idle again
    run_begun = Signal(object)  # RunFolder | None: made, the trainer not started
    # A cross-validation's steps around its fold runs; the state is idle again.
    folds_checked = Signal(object)  # FoldCampaign: its data has K images a class
    fold_kept = Signal(object)  # dict: the fold's held-out scores, in its group
    fold_failed = Signal(str, str)  # message ("": stopped), traceback
    issues_found = Signal(object)  # IssuesPass; the state is idle again
    issues_failed = Signal(str, str)  # message ("": cancelled), traceback

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = Session(origin="window", arrays=ArraysCache())
        self.trainer = TrainerThread(self)
        self.trainer.event.connect(self._on_trainer_event)
        self.trainer.steps.connect(self._on_trainer_steps)
        self.trainer.pause_reached.connect(self._on_trainer_pause_reached)
        self.trainer.cancelled.connect(self._on_trainer_cancelled)
        self.trainer.failed.connect(self._on_trainer_failed)
        self.trainer.finished.connect(self._on_trainer_finished)
        self.state = RunState.IDLE
        self.result: E.TrainResult | None = None  # the last run's, None if failed
        self.closing = False
        self._task: TaskThread | None = None
        # A task's outcome kept until the state is idle (see _run_task).
        self._outcome: Callable[[], None] | None = None
        self._outcome_when_idle = False
        self.job: ProcessJob | None = None  # a run on several processes
        self._task_callbacks: tuple[Callable[[Any], None], Callable[..., None]] = (
            _ignore,
            _ignore,
        )
        self._dispatch: dict[type, Callable[[Any], None]] = {
            RunPrepared: self._on_run_prepared,
            E.TrainResult: self._on_train_result,
        }

    # ------------------------------------------------------------------ queries

    @property
    def run(self) -> TrainingRun | None:
        """The current run (the one Start continues), if any."""
        return self.session.run

    @property
    def stop_requested(self) -> bool:
        """Stop was asked for and the run has not ended yet."""
        if self.job is not None:
            return self.job.stop_requested
        if self._task is not None and self.state is RunState.PREPARING:
            return self._task.cancel_requested  # a data check before a run
        return self.state.training and self.trainer.control.stop_requested

    def plan(self, cfg: TrainConfig) -> Plan:
        """What Start would do with ``cfg``."""
        return self.session.plan(cfg)

    # ------------------------------------------------------------------ run control

    def start(self, plan: Plan) -> list[str]:
        """Open the run's folder and start the trainer; notices for the user."""
        if self.state is not RunState.IDLE or self.trainer.isRunning():
            raise RuntimeError("a run or task is already in progress")
        notes = self.session.begin(plan)
        self.result = None
        self._set_state(RunState.PREPARING)
        # Before the trainer thread writes run.json too: its slots may update it.
        self.run_begun.emit(self.session.folder)
        self.trainer.start_run(self.session, plan)
        return notes

    def pause(self) -> None:
        """Pause before the next batch (``pause_reached`` once the engine waits)."""
        if self.state is RunState.RUNNING and self.job is None:
            self.trainer.control.pause()
            self.session.log("pause")
            self._set_state(RunState.PAUSING)

    def resume(self) -> None:
        """Go on training (freeze edits made while paused apply now)."""
        if self.state.held:
            self.trainer.control.resume()
            self.session.log("resume")
            self._set_state(RunState.RUNNING)

    def stop(self) -> None:
        """Stop after the current batch (also ends a pause); the run can continue."""
        if self.job is not None:
            self.job.stop()  # every rank stops after its batch
            self.state_changed.emit(self.state)
        elif self.trainer.isRunning() and not self.trainer.control.stop_requested:
            self.trainer.control.request_stop()
            self.session.log("stop requested")
            self.state_changed.emit(self.state)  # Stop is no longer available
        elif self.state is RunState.PREPARING and self._task is not None:
            self._task.cancel()  # the data check before a cross-validation
            self.state_changed.emit(self.state)

    def start_job(self, cfg: TrainConfig, nproc: int) -> ProcessJob:
        """Train a new run on ``nproc`` processes (``train --nproc``), followed live.

        ``job_started``, ``job_event`` and ``job_ended`` follow; raises OSError
        when the process cannot be started.
        """
        if self.state is not RunState.IDLE:
            raise RuntimeError("a run or task is already in progress")
        job = ProcessJob(cfg, nproc, self)
        job.folder_found.connect(self._on_job_folder_found)
        job.event.connect(self.job_event)
        job.ended.connect(self._on_job_ended)
        try:
            job.start()
        except OSError:
            job.deleteLater()
            raise
        self.job = job
        self._set_state(RunState.PREPARING)
        return job

    @Slot(object)
    def _on_job_folder_found(self, folder: Path) -> None:
        if self.state is RunState.PREPARING:
            self._set_state(RunState.RUNNING)
        self.job_started.emit(folder)

    @Slot(object)
    def _on_job_ended(self, ended: JobEnded) -> None:
        job, self.job = self.job, None
        if job is not None:
            job.deleteLater()
        self._set_state(RunState.IDLE)
        self.job_ended.emit(ended)

    def mask_changed(self, frozen: list[str]) -> None:
        """The freeze tree changed the model's mask while paused: tell the engine."""
        if self.state is RunState.PAUSED:
            self.trainer.control.notify_mask_changed()
            self.session.mask_changed(frozen)

    def request_weights(self) -> None:
        """Ask the engine for a copy of the weights between two steps."""
        self.trainer.control.request_weights()

    def take_weights(self) -> tuple[int, dict[str, Any]] | None:
        """The copy asked for, once ``WeightsReady`` arrived."""
        return self.trainer.control.take_weights()

    def request_profile(self, steps: int) -> str:
        """Profile the next ``steps`` steps into the run folder: what happens, in words.

        The engine answers with a ``ProfileReport`` event.
        """
        folder, run = self.session.folder, self.session.run
        if self.state is not RunState.RUNNING or run is None:
            return (
                "Profiling records the next steps of a running run: start one "
                "(or resume it) first"
            )
        if folder is None:
            return "This run has no run folder to write the trace into"
        trace = folder.path / f"trace-step{run.global_step + 1}.json"
        self.trainer.control.request_profile(steps, trace)
        return f"Profiling the next {steps} steps (after 3 to warm up) into {trace}"

    # ------------------------------------------------------------------ tasks

    def open(self, path: str | Path) -> None:
        """Restore a checkpoint off the GUI thread; ``opened`` or ``open_failed``."""
        session = self.session

        def work(progress: Any, cancel: Any) -> Opened:
            return session.open(path, progress=progress, cancel=cancel)

        self._run_task(
            "open-checkpoint",
            work,
            RunState.OPENING,
            self._on_open_succeeded,
            self.open_failed.emit,
        )

    def _on_open_succeeded(self, opened: Opened) -> None:
        self.session.adopt(opened)
        self.opened.emit(opened)

    def score_fine_tune(self, stopped: bool) -> None:
        """Measure the finished fine-tune off the GUI thread (``fine_tune_scored``)."""
        session = self.session

        def done(result: Any) -> None:
            after, frozen = result
            self.fine_tune_scored.emit(after, frozen, stopped)

        self._run_task(
            "scores",
            lambda progress, cancel: session.score_fine_tune(),
            RunState.SCORING,
            done,
            self.score_failed.emit,
        )

    def export(self, checkpoint: Path, out_dir: Path, temporary: bool) -> None:
        """Export and verify ``checkpoint`` into ``out_dir`` off the GUI thread.

        ``task_progress`` carries each step's text; ``exported`` the
        ``ExportResult``, or ``export_failed`` (message, traceback). A
        ``temporary`` checkpoint (the current run, saved for this) is deleted.
        """

        def work(progress: Any, cancel: Any) -> Any:
            try:
                return export_checkpoint(checkpoint, out_dir, progress=progress)
            finally:
                if temporary:
                    checkpoint.unlink(missing_ok=True)
                    with contextlib.suppress(OSError):
                        checkpoint.parent.rmdir()  # its own temporary folder

        self._run_task(
            "export",
            work,
            RunState.EXPORTING,
            self.exported.emit,
            self.export_failed.emit,
        )

    def find_rate(self, cfg: TrainConfig) -> None:
        """The learning-rate finder on the run Start would train (``rate_found``).

        ``task_progress`` carries :class:`FindProgress`; :meth:`cancel_task`
        ends it early, and the run is left as it was either way.
        """
        session = self.session
        plan = session.plan(cfg)

        def work(progress: Any, cancel: Any) -> RateFound:
            run = session.trial_run(plan, progress, cancel)

            def report(stage: str, done: int, total: int) -> None:
                progress(FindProgress(stage, done, total))

            return find_rate(run, stop=cancel, progress=report)

        self._run_task(
            "find-rate",
            work,
            RunState.FINDING,
            self.rate_found.emit,
            self.find_failed.emit,
        )

    def check_folds(self, campaign: FoldCampaign) -> None:
        """Check off the GUI thread that the data has the campaign's folds.

        ``folds_checked`` (the campaign) or ``fold_failed`` follow, once idle;
        :meth:`stop` ends the check, which then fails with no message.
        """
        session = self.session

        def work(progress: Any, cancel: Any) -> FoldCampaign:
            campaign.check_data(lambda cfg: session.load_arrays(cfg, progress, cancel))
            return campaign

        self._run_task(
            "check-folds",
            work,
            RunState.PREPARING,
            self.folds_checked.emit,
            self.fold_failed.emit,
            when_idle=True,
        )

    def keep_fold(self, campaign: FoldCampaign) -> None:
        """Keep the finished fold run's held-out predictions in its group.

        The fold model predicts its held-out fold off the GUI thread;
        ``fold_kept`` (its scores) or ``fold_failed`` follow, once idle.
        """
        run, folder = self.session.run, self.session.folder
        if run is None:
            raise RuntimeError("no fold run to keep")

        def work(progress: Any, cancel: Any) -> dict[str, float]:
            return campaign.finished(run, folder)

        self._run_task(
            "keep-fold",
            work,
            RunState.SCORING,
            self.fold_kept.emit,
            self.fold_failed.emit,
            when_idle=True,
        )

    def find_data_issues(self, cfg: TrainConfig, images: NamedImages | None) -> None:
        """Data ▸ Find data issues: the lists over ``cfg``'s images, off the GUI thread.

        Loads the images (unless given), looks for a finished cross-validation
        of them with ``cfg``'s settings and, when there is one, predicts the
        validation images by its fold models and makes the lists (what the
        ``data-issues`` command does). ``task_progress`` carries each step's
        text; ``issues_found`` (an :class:`IssuesPass`) or ``issues_failed``
        follow, once idle; :meth:`cancel_task` cancels between two steps.
        """

        def work(progress: Any, cancel: Any) -> IssuesPass | None:
            if images is None:
                progress("loading the images")
            named = images if images is not None else named_images(cfg)
            group = matching_group(cfg, named.arrays.train_labels)
            if group is None or cancel():
                return IssuesPass(named, None, None)
            progress("predicting the validation images with the fold models")
            val = validation_probabilities(group, cfg)
            if cancel():
                return None  # told as cancelled: see _on_task_finished
            progress("looking for label errors and duplicates")
            spec = input_spec(cfg.dataset, cfg.data_dir, cfg.resolved_image_size)
            train = training_probabilities(group)
            issues = find_data_issues(named, train, val, spec.class_names)
            return IssuesPass(named, group, issues)

        self._run_task(
            "data-issues",
            work,
            RunState.SCORING,
            self.issues_found.emit,
            self.issues_failed.emit,
            when_idle=True,
        )

    def cancel_task(self) -> None:
        """Ask the background task to stop at its next check."""
        if self._task is not None:
            self._task.cancel()

    def _run_task(
        self,
        name: str,
        work: Callable[[Any, Any], Any],
        state: RunState,
        on_success: Callable[[Any], None],
        on_failure: Callable[[str, str], None],
        *,
        when_idle: bool = False,
    ) -> None:
        """Run ``work`` in a :class:`TaskThread` while in ``state``; idle after.

        ``when_idle``: the outcome is told once the state is idle (its slots
        may start the next run), and a cancelled task fails with no message.
        """
        if self.state is not RunState.IDLE:
            raise RuntimeError("a run or task is already in progress")
        self._task_callbacks = (on_success, on_failure)
        self._outcome, self._outcome_when_idle = None, when_idle
        self._set_state(state)
        self._task = start_task(
            self,
            name,
            work,
            succeeded=self._on_task_succeeded,
            failed=self._on_task_failed,
            finished=self._on_task_finished,
            progressed=self.task_progress.emit,
        )

    @Slot(object)
    def _on_task_succeeded(self, result: Any) -> None:
        self._tell(partial(self._task_callbacks[0], result))

    @Slot(object)
    def _on_task_failed(self, error: Exception) -> None:
        self._tell(partial(self._task_callbacks[1], *describe_error(error)))

    def _tell(self, outcome: Callable[[], None]) -> None:
        if self._outcome_when_idle:
            self._outcome = outcome
        else:
            outcome()

    @Slot()
    def _on_task_finished(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.deleteLater()
        outcome, self._outcome = self._outcome, None
        if self._outcome_when_idle and (
            outcome is None or (task is not None and task.cancel_requested)
        ):
            outcome = partial(self._task_callbacks[1], "", "")  # cancelled
        self._outcome_when_idle = False
        self._set_state(RunState.IDLE)
        if outcome is not None:
            outcome()

    # ------------------------------------------------------------------ trainer

    @Slot(object)
    def _on_trainer_event(self, event: Any) -> None:
        handler = self._dispatch.get(type(event))
        if handler is not None:
            handler(event)
        self.event.emit(event)

    @Slot(object)
    def _on_trainer_steps(self, events: tuple[Any, ...]) -> None:
        # Steps sent together (see trainer_thread.BATCH_S): each is an event.
        for event in events:
            self._on_trainer_event(event)

    def _on_run_prepared(self, _event: RunPrepared) -> None:
        if self.state is RunState.PREPARING:
            self._set_state(RunState.RUNNING)

    def _on_train_result(self, result: E.TrainResult) -> None:
        self.result = result

    @Slot()
    def _on_trainer_pause_reached(self) -> None:
        if self.state is RunState.PAUSING:
            self._set_state(RunState.PAUSED)
            self.pause_reached.emit()

    @Slot()
    def _on_trainer_cancelled(self) -> None:
        self.event.emit(E.Notice("The download was cancelled: the run did not start"))

    @Slot(str, str)
    def _on_trainer_failed(self, message: str, details: str) -> None:
        self.run_failed.emit(message, details)

    @Slot()
    def _on_trainer_finished(self) -> None:
        finished = self.session.finish(self.result)
        self._set_state(RunState.IDLE)
        self.run_finished.emit(finished)

    def _set_state(self, state: RunState) -> None:
        self.state = state
        self.state_changed.emit(state)

    # ------------------------------------------------------------------ shutdown

    def shutdown(self) -> None:
        """Stop the run and tasks and wait for their threads (the window closes)."""
        self.closing = True
        if self.job is not None:
            job = self.job
            job.shutdown()  # its ranks stop and rank 0 saves, or are ended
            if job.folder is not None:
                # As for one process: closed, not stopped by the user, so the
                # next start offers to resume it.
                mark_closed_if_stopped(RunFolder(job.folder))
        if self.trainer.isRunning():
            self.trainer.control.request_stop()
            if not self.trainer.wait(SHUTDOWN_WAIT_MS):
                # Only torch.compile's first step cannot be interrupted.
                log.warning("the run is still finishing a step; waiting for it")
                self.trainer.wait()
            # Stopped by closing, not by the user: the next start offers to
            # resume it. (Its queued events are never delivered now.)
            recorder = self.session.recorder
            if recorder is not None:
                mark_closed_if_stopped(recorder.folder)
        if self._task is not None:
            self._task.cancel()  # a download in it stops at the next chunk
            self._task.wait()


def _ignore(*_args: Any) -> None:
    pass


__all__ = ["Finished", "IssuesPass", "RunController", "RunState"]
