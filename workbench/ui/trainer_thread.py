"""The training run's thread: iterates a session's run and emits each event.

A ``QThread`` subclass whose ``run()`` iterates ``Session.train`` (the shape of
Qt's ``examples/corelib/threads/mandelbrot`` and superqt's ``GeneratorWorker``):
every event goes out through one ``event`` signal, so the receiver dispatches
by type; only logged steps that come fast travel several at a time, through
``steps`` (see ``BATCH_S``). The thread object lives in the GUI thread, so
slots connected to its signals run there. Pause and Stop are flags on
:class:`TrainControl` set directly from the GUI thread: ``run()`` has no event
loop, so a queued slot would never be called.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable
from typing import ClassVar

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QThread, Signal, Slot
from shiboken6 import isValid

from workbench.core import events as E
from workbench.core.data.registry import DownloadCancelled
from workbench.core.host.threads import (
    lower_training_priority,
    prepare_main_thread,
    prepare_training_thread,
)
from workbench.core.session import Session
from workbench.core.start_plan import Plan
from workbench.core.train.engine import TrainControl
from workbench.ui.gui_gc import collect_in_gui_thread
from workbench.ui.tasks import describe_error

log = logging.getLogger(__name__)

# Logged steps (and layer health) that come faster than this travel to the GUI
# thread together, in one ``steps`` signal: a small model logs hundreds of steps
# a second, and each signal wakes the GUI thread, which then holds the GIL the
# training thread needs. Any other event, a pause and the end send them at once.
# The window shows steps at most 4 times a second (texts, plots), so 5 signals a
# second lose nothing; more would only cost the GUI thread (``bench/gui_bench.py``).
BATCH_S = 0.2
_BATCHED = (E.StepMetrics, E.LayerHealth)
# The window sets its views up for a new run (plots cleared and repainted, the
# freeze tree and the model's texts rebuilt): 30-60 ms of the GUI thread on a
# 2-core machine. Done while the first steps train, it takes their CPU (on 2
# cores the GUI thread runs on one of the trainer's two OpenMP threads, which
# the other then waits for) and slows a short run. So the trainer waits, once,
# between the run's start and its first step, until the GUI thread has handled
# the start and painted; never longer than this, so a busy window only delays
# the start.
CATCH_UP_MAX_S = 0.5
# Trips through the GUI thread's event queue before it counts as caught up: the
# paints the start's handlers asked for, what painting posted, and a spare. Each
# trip is a low-priority event: widgets' repaint requests are low-priority too,
# and a normal one would overtake them.
_CATCH_UP_TRIPS = 3
_CATCH_UP_EVENT = QEvent.Type(QEvent.registerEventType())


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


class _CatchUp(QObject):
    """Sets ``done`` once the GUI thread's queue has had its trips (see above)."""

    def __init__(self, done: threading.Event, parent: QObject) -> None:
        super().__init__(parent)
        self._done = done
        self._trips_left = 0

    @Slot()
    def start(self) -> None:
        """Begin the trips (GUI thread, after every event sent before it)."""
        self._trips_left = _CATCH_UP_TRIPS
        self._post_trip()

    def _post_trip(self) -> None:
        QCoreApplication.postEvent(
            self, QEvent(_CATCH_UP_EVENT), Qt.EventPriority.LowEventPriority.value
        )

    def event(self, event: QEvent) -> bool:
        """Count a trip; every other event as QObject's."""
        if event.type() != _CATCH_UP_EVENT:
            return super().event(event)
        self._trips_left -= 1
        if self._trips_left > 0:
            self._post_trip()
        else:
            self._done.set()
        return True


class TrainerThread(QThread):
    """Prepare a run (data, model) and train it, reporting through signals.

    One object serves every run of a window: :meth:`start_run` starts it again.
    ``event`` carries the session's ``RunPrepared`` first (the model that
    trains), download progress, then every engine event. While the thread runs
    it owns the run's model; the GUI thread reads it only to show structure
    (names, shapes, ``requires_grad``) and edits ``requires_grad`` only after
    ``pause_reached``, while the engine is blocked between batches.
    """

    event = Signal(object)  # RunPrepared, DownloadProgress or an engine event
    steps = Signal(object)  # a tuple of StepMetrics and LayerHealth, in order
    pause_reached = Signal()  # the engine is blocked before its next batch
    cancelled = Signal()  # a download was cancelled before the run began
    failed = Signal(str, str)  # message, traceback
    _run_started = Signal()  # to the GUI thread: answer when caught up

    _live: ClassVar[weakref.WeakSet[TrainerThread]] = weakref.WeakSet()

    def __init__(self, parent: QObject | None = None) -> None:
        collect_in_gui_thread()  # before this thread can allocate
        super().__init__(parent)
        self.setObjectName("trainerThread")
        self.control: TrainControl = _SignallingControl(self._on_engine_paused)
        self._batch: list[object] = []  # steps not sent yet (trainer thread only)
        self._sent_at = -float("inf")
        self._session: Session | None = None
        self._plan: Plan | None = None
        self._gui_caught_up = threading.Event()
        self._catch_up = _CatchUp(self._gui_caught_up, self)
        # Queued (the catch-up lives in the GUI thread): it starts after the
        # handlers of every event sent before, as signals arrive in order.
        self._run_started.connect(self._catch_up.start)
        TrainerThread._live.add(self)

    @classmethod
    def running_threads(cls) -> list[TrainerThread]:
        """Trainer threads still running (tests fail if one is left behind)."""
        return [t for t in list(cls._live) if isValid(t) and t.isRunning()]

    def start_run(self, session: Session, plan: Plan) -> None:
        """Train ``plan`` through ``session`` (its folder is already open)."""
        if self.isRunning():
            raise RuntimeError("a run is already in progress")
        self._session = session
        self._plan = plan
        self.control = _SignallingControl(self._on_engine_paused)
        # This (GUI) thread's idle OpenMP pool would make the worker's OpenMP
        # teams sleep instead of spin between ops: release it right before start.
        prepare_main_thread()
        self.start()

    def run(self) -> None:
        # First, before torch runs anything here: per-thread torch/OpenMP setup,
        # and a lower priority than the GUI thread's (inherited by its helpers).
        lower_training_priority()
        prepare_training_thread()
        session, plan = self._session, self._plan
        assert session is not None
        assert plan is not None
        emit = self.event.emit  # looked up once: this runs once per logged step
        self._batch, self._sent_at = [], -float("inf")
        try:
            for event in session.train(plan, self.control, progress=emit):
                if type(event) in _BATCHED:
                    self._batch.append(event)
                    if time.monotonic() - self._sent_at >= BATCH_S:
                        self._send_steps()
                else:
                    self._send_steps()  # in order: the steps before it first
                    emit(event)
                    if type(event) is E.RunStarted:
                        self._wait_for_gui()
            self._send_steps()
        except DownloadCancelled:
            self.cancelled.emit()
        except Exception as exc:
            log.debug("training failed", exc_info=True)
            self._send_steps()
            self.failed.emit(*describe_error(exc))
        finally:
            self._plan = None  # it may hold a fine-tune's weights

    def _wait_for_gui(self) -> None:
        """Hold the first step until the GUI thread has caught up (trainer thread).

        See ``CATCH_UP_MAX_S``. Stop (or a closing window) ends the wait at once.
        """
        self._gui_caught_up.clear()
        self._run_started.emit()
        deadline = time.monotonic() + CATCH_UP_MAX_S
        while not self.control.stop_requested and time.monotonic() < deadline:
            if self._gui_caught_up.wait(0.01):
                return

    def _send_steps(self) -> None:
        """Send the steps held back, if any (in the trainer thread)."""
        if self._batch:
            batch, self._batch = tuple(self._batch), []
            self._sent_at = time.monotonic()
            self.steps.emit(batch)

    def _on_engine_paused(self) -> None:
        # The engine blocks now: every step trained so far is shown first.
        self._send_steps()
        self.pause_reached.emit()
