"""The training run's thread: iterates the core engine and emits plain data.

A ``QThread`` subclass whose ``run()`` iterates ``iter_fit`` (the shape of Qt's
``examples/corelib/threads/mandelbrot`` and superqt's ``GeneratorWorker``). The
thread object lives in the GUI thread, so slots connected to its signals run
there. Pause and Stop are flags on :class:`TrainControl` set directly from the GUI
thread: ``run()`` has no event loop, so a queued slot would never be called.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from typing import ClassVar

from PySide6.QtCore import QObject, QThread, Signal
from shiboken6 import isValid

from workbench.core import events as E
from workbench.core.data import DownloadCancelled, DownloadProgress
from workbench.core.engine import TrainControl, TrainingRun, iter_fit
from workbench.core.runs import RunRecorder
from workbench.core.threads import prepare_main_thread, prepare_training_thread
from workbench.ui.tasks import describe_error

log = logging.getLogger(__name__)

PrepareFn = Callable[
    [Callable[[DownloadProgress], None], Callable[[], bool]], TrainingRun
]


class _SignallingControl(TrainControl):
    """A TrainControl that reports when the engine actually blocks for a pause."""

    def __init__(self, on_paused: Callable[[], None]) -> None:
        super().__init__()
        self._on_paused = on_paused

    def wait_if_paused(self) -> None:
        """Tell the GUI the run is held at a batch boundary, then block."""
        if self.paused and not self.stop_requested:
            self._on_paused()
        super().wait_if_paused()


class TrainerThread(QThread):
    """Prepare a run (data, model) and train it, reporting through signals.

    One object serves every run of a window: :meth:`start_run` starts it again.
    ``prepare(progress, cancel) -> TrainingRun`` runs first, in this thread (it
    may load or download data). While the thread runs it owns ``training_run``
    and its model; the GUI thread reads ``training_run`` only to show structure
    (names, shapes, ``requires_grad``) and edits ``requires_grad`` only after
    ``pause_reached``, while the engine is blocked between batches.
    """

    status_changed = Signal(str)
    download_progressed = Signal(object)  # DownloadProgress
    run_prepared = Signal()  # ``training_run`` is set: the model that trains
    run_started = Signal(object)  # RunStarted
    notice_posted = Signal(str)
    compile_started = Signal()
    compile_finished = Signal(float)
    step_finished = Signal(object)  # StepMetrics
    epoch_finished = Signal(object)  # EpochMetrics
    pause_reached = Signal()  # the engine is blocked before its next batch
    training_done = Signal(object)  # TrainResult
    failed = Signal(str, str)  # message, traceback
    weights_ready = Signal(int)  # a requested weight copy waits in control
    health_sampled = Signal(object)  # LayerHealth
    evaluation_ready = Signal(object)  # Evaluation: every validation prediction
    histograms_ready = Signal(object)  # WeightHistograms

    _live: ClassVar[weakref.WeakSet[TrainerThread]] = weakref.WeakSet()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("trainerThread")
        self.control: TrainControl = _SignallingControl(self.pause_reached.emit)
        self.training_run: TrainingRun | None = None
        self.result: E.TrainResult | None = None
        self._prepare: PrepareFn | None = None
        self.recorder: RunRecorder | None = None
        TrainerThread._live.add(self)

    @classmethod
    def running_threads(cls) -> list[TrainerThread]:
        """Trainer threads still running (tests fail if one is left behind)."""
        return [t for t in list(cls._live) if isValid(t) and t.isRunning()]

    def start_run(
        self,
        prepare: PrepareFn,
        *,
        mask_changed: bool = False,
        recorder: RunRecorder | None = None,
    ) -> None:
        """Start a run; ``mask_changed``: the engine reconciles the optimizer first.

        ``recorder`` writes the run's ledger and autosaves its checkpoint, in
        this thread (where the model is between two steps).
        """
        if self.isRunning():
            raise RuntimeError("a run is already in progress")
        self._prepare = prepare
        self.recorder = recorder
        self.control = _SignallingControl(self.pause_reached.emit)
        if mask_changed:
            self.control.notify_mask_changed()
        self.training_run = None
        self.result = None
        # This (GUI) thread's idle OpenMP pool would make the worker's OpenMP
        # teams sleep instead of spin between ops: release it right before start.
        prepare_main_thread()
        self.start()

    def run(self) -> None:
        # First, before torch runs anything here: per-thread torch/OpenMP setup.
        prepare_training_thread()
        control = self.control
        prepare = self._prepare
        assert prepare is not None
        try:
            self.status_changed.emit("Preparing the run…")
            run = prepare(self.download_progressed.emit, lambda: control.stop_requested)
            self.training_run = run
            self.run_prepared.emit()
            if control.stop_requested:
                if self.recorder is not None:
                    self.recorder.mark("stopped")
                return
            self._iterate(run, control)
        except DownloadCancelled:
            self.status_changed.emit("Download cancelled")
        except Exception as exc:
            log.debug("training failed", exc_info=True)
            if self.recorder is not None and self.training_run is not None:
                self.recorder.mark("failed")
            self.failed.emit(*describe_error(exc))
        finally:
            self._prepare = None  # its closure may hold a checkpoint payload

    def _iterate(self, run: TrainingRun, control: TrainControl) -> None:
        # Bound emitter looked up once: this branch runs once per logged step.
        emit_step = self.step_finished.emit
        recorder = self.recorder
        if recorder is not None:
            problem = recorder.start(run)
            if problem:
                self.notice_posted.emit(problem)
        for event in iter_fit(run, control):
            if recorder is not None:
                problem = recorder.on_event(event, run)
                if problem:
                    self.notice_posted.emit(problem)
            if isinstance(event, E.StepMetrics):
                emit_step(event)
            elif isinstance(event, E.EpochMetrics):
                self.epoch_finished.emit(event)
            elif isinstance(event, E.RunStarted):
                self.run_started.emit(event)
            elif isinstance(event, E.Notice):
                self.notice_posted.emit(event.message)
            elif isinstance(event, E.CompileStarted):
                self.compile_started.emit()
            elif isinstance(event, E.CompileFinished):
                self.compile_finished.emit(event.seconds)
            elif isinstance(event, E.LayerHealth):
                self.health_sampled.emit(event)
            elif isinstance(event, E.Evaluation):
                self.evaluation_ready.emit(event)
            elif isinstance(event, E.WeightHistograms):
                self.histograms_ready.emit(event)
            elif isinstance(event, E.WeightsReady):
                self.weights_ready.emit(event.global_step)
            elif isinstance(event, E.TrainResult):
                self.result = event
                self.training_done.emit(event)
