"""Drive the real window through many runs, opens and fine-tunes, as a user would.

Shared by ``tests/ui/test_soak.py`` (a short soak, CI) and ``bench/soak_bench.py``
(the long one, which prints the curves). It is test support, not product code:
it clicks the window's own buttons and actions, swaps the file dialog for a
path, and reads the process's resident memory and threads from ``/proc``. It
needs only a ``QApplication`` (no pytest-qt), so the bench can use it too.

One *cycle* is what a user does with a run: New run, Start, Pause, a freeze
change in the freeze tree while paused, Resume, Stop. Each cycle makes a new
run folder. Between cycles the soak opens an earlier run's checkpoint (File >
Open checkpoint) or fine-tunes the current model on my digits (the Draw tab),
at the cycles :func:`spread` chooses.

What is measured after every cycle, with the window idle and the events of the
cycle delivered (and Python's cycle collector run, as the window's GUI-thread
collector does about once a second):

``rss_kb``
    ``VmRSS`` from ``/proc/self/status``.
``tasks``
    Every thread of the process (``/proc/self/task``): Qt's, torch's OpenMP
    helpers and the interpreter's.
``py_threads``
    ``threading.active_count()`` (threads Python knows of, dummies included:
    a ``QThread`` that asks for ``threading.current_thread()`` leaves one).
``runs_alive``
    Runs the soak made or opened that are not freed yet (weak references).

Both thread counts are read once they settle (a finished thread's native
thread goes a moment after its ``finished`` signal). Memory and threads are
compared with their values after :data:`WARM_UP` cycles, not before the first:
the first runs load the data, start torch's OpenMP pools lazily, fill Qt's font
and glyph caches and make the first task threads, all once per process. The
first open and the first fine-tune fall in the warm-up too (:func:`spread` puts
them in cycle 1) so their one-time costs (the evaluation, my digits, the
fine-tune's base data) are not counted as growth. Memory is compared at the
end (it may wobble between cycles); the thread counts must equal the warm-up's
after every later cycle, and only the current run may be alive after each.
"""

from __future__ import annotations

import gc
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QtMsgType, Slot, qInstallMessageHandler
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from workbench.core.checkpoints.io import CheckpointError, load_checkpoint
from workbench.core.config import TrainConfig
from workbench.core.events import StepMetrics
from workbench.core.runs.folder import RunFolder
from workbench.core.runs.listing import read_events, read_metrics
from workbench.ui import dialogs

# Long enough never to end by itself: every cycle is stopped by the user.
CYCLE_CONFIG = TrainConfig(
    dataset="digits", model="mlp", batch_size=64, log_every=1, epochs=50
)
# The freeze tree's change while paused: this layer is frozen.
FROZEN_WHILE_PAUSED = "hidden.1.weight"
WARM_UP = 5  # cycles before the baseline
RSS_GROWTH_LIMIT_KB = 50 * 1024
FINE_TUNE_DRAWINGS = 2  # per digit
WAIT_S = 60.0


class SoakError(AssertionError):
    """The window did not do what the user asked, in time."""


@dataclass(frozen=True)
class Sample:
    """The process after one cycle (and the open or fine-tune that came with it)."""

    cycle: int
    did: str  # "cycle", "cycle+open", "cycle+fine-tune", ...
    rss_kb: int
    tasks: int
    py_threads: int
    runs_alive: int  # runs of the soak not freed yet (the current one included)
    seconds: float


@dataclass
class SoakReport:
    """What a soak measured and found."""

    samples: list[Sample] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    opens: int = 0
    fine_tunes: int = 0
    qt_messages: list[str] = field(default_factory=list)
    error_dialogs: list[str] = field(default_factory=list)

    @property
    def baseline(self) -> Sample:
        return self.samples[WARM_UP - 1]

    def rss_growth_kb(self) -> int:
        """Resident memory at the end minus after the warm-up cycles."""
        return self.samples[-1].rss_kb - self.baseline.rss_kb

    def problems(self) -> list[str]:
        """Every broken promise, in words (empty: the soak passed)."""
        out = []
        if len(self.samples) <= WARM_UP:
            return [f"only {len(self.samples)} cycles: no more than the warm-up"]
        growth = self.rss_growth_kb()
        if growth >= RSS_GROWTH_LIMIT_KB:
            out.append(
                f"resident memory grew {growth / 1024:.1f} MB after cycle "
                f"{WARM_UP} (limit {RSS_GROWTH_LIMIT_KB / 1024:.0f} MB)"
            )
        base = self.baseline
        for s in self.samples[WARM_UP:]:
            if (s.tasks, s.py_threads) != (base.tasks, base.py_threads):
                out.append(
                    f"threads after cycle {s.cycle}: {s.tasks} ({s.py_threads} "
                    f"Python), after the warm-up {base.tasks} ({base.py_threads})"
                )
            if s.runs_alive != 1:
                out.append(
                    f"{s.runs_alive} runs alive after cycle {s.cycle}: only the "
                    "current one may be"
                )
        out += [f"Qt said: {message}" for message in self.qt_messages]
        out += [f"error dialog: {text}" for text in self.error_dialogs]
        for path in self.folders:
            out += folder_problems(path)
        return out


def rss_kb() -> int:
    """Resident memory of this process (``VmRSS``), in kB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise OSError("no VmRSS in /proc/self/status")


def task_count() -> int:
    """Threads of this process, native ones included."""
    return len(os.listdir("/proc/self/task"))


def settled(read: Callable[[], int], timeout_s: float = 2.0) -> int:
    """``read()`` once it gives the same value twice 50 ms apart.

    A thread that has just finished (the trainer's, a task's) emits ``finished``
    a moment before its native thread is gone; one that leaks never goes.
    """
    deadline = time.monotonic() + timeout_s
    value = read()
    while True:
        QTest.qWait(50)
        again = read()
        if again == value or time.monotonic() > deadline:
            return again
        value = again


def folder_problems(path: Path) -> list[str]:
    """What a finished run's folder lacks: final status, metrics, a loadable checkpoint.

    A cycle's run also has the user's pause, freeze change, resume and stop in
    ``events.jsonl``.
    """
    folder = RunFolder(path)
    info = folder.info()
    name = path.name
    if info.get("status") not in ("stopped", "finished"):
        return [f"{name}: status {info.get('status')!r} in run.json"]
    out = []
    steps = read_metrics(folder)["step"]
    if not steps:
        out.append(f"{name}: no steps in metrics.jsonl")
    try:
        payload = load_checkpoint(folder.checkpoint_path)
    except (CheckpointError, OSError) as exc:
        return [*out, f"{name}: checkpoint does not load: {exc}"]
    step = payload["global_step"]
    if step != info.get("global_step") or (steps and steps[-1].global_step != step):
        out.append(
            f"{name}: checkpoint at step {step}, run.json at "
            f"{info.get('global_step')}, metrics at "
            f"{steps[-1].global_step if steps else None}"
        )
    kinds = [event["kind"] for event in read_events(folder)]
    if (
        info.get("origin") == "window"
        and info.get("config", {}).get("dataset") == "digits"
    ):
        wanted = ["start", "pause", "freeze", "resume", "stop requested", "stop"]
        if [k for k in kinds if k in wanted] != wanted:
            out.append(f"{name}: events.jsonl holds {kinds}")
    return out


def wait_until(
    predicate: Callable[[], bool], what: str, timeout_s: float = WAIT_S
) -> None:
    """Process events until ``predicate()``; SoakError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise SoakError(f"timed out waiting for {what}")
        QTest.qWait(2)


class _StepCounter(QObject):
    """Counts the window's StepMetrics events (connected once per soak)."""

    def __init__(self, controller: Any) -> None:
        super().__init__(controller)
        self.count = 0
        self.last_step = -1
        controller.event.connect(self._on_controller_event)

    @Slot(object)
    def _on_controller_event(self, event: Any) -> None:
        if isinstance(event, StepMetrics):
            self.count += 1
            self.last_step = event.global_step


@contextmanager
def qt_messages_caught(into: list[str]) -> Iterator[None]:
    """Collect Qt's warnings, criticals and fatals into ``into`` meanwhile."""
    bad = (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg)

    def handler(kind: QtMsgType, _context: Any, message: str) -> None:
        if kind in bad:
            into.append(f"{kind.name}: {message}")

    previous = qInstallMessageHandler(handler)
    try:
        yield
    finally:
        qInstallMessageHandler(previous)


@contextmanager
def errors_caught(into: list[str]) -> Iterator[None]:
    """The window's error dialogs go to ``into`` meanwhile (a modal one would hang)."""
    shown = dialogs.show_error

    def record(_parent: Any, title: str, message: str, _details: str = "") -> None:
        into.append(f"{title}: {message}")

    dialogs.show_error = record
    try:
        yield
    finally:
        dialogs.show_error = shown


def spread(count: int, cycles: int) -> set[int]:
    """``count`` cycle numbers (1-based) spread over ``cycles``, the first one 1."""
    if count <= 0:
        return set()
    return {1 + (i * cycles) // count for i in range(count)}


class SoakDriver:
    """Runs a soak on ``window`` (a shown MainWindow, idle, its data loaded)."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.steps = _StepCounter(window.controller)
        self.report = SoakReport()
        self._drawings_added = False
        # Every run the soak made or opened; freed once another replaces it.
        self._runs: list[weakref.ref[Any]] = []

    # ------------------------------------------------------------------ actions

    def cycle(self, number: int) -> Path:
        """New run, Start, Pause, a freeze change, Resume, Stop; the run's folder."""
        w = self.window
        training = w.training_panel
        w.apply_config(CYCLE_CONFIG)
        w.commands.reset.trigger()  # New run: every cycle gets its own folder
        before = self.steps.count
        training.start_button.click()
        wait_until(lambda: self.steps.count > before, "the first step")
        with_pause = self.steps.count
        training.pause_button.click()
        wait_until(lambda: w.state == "paused", "the pause")
        # apply_config above trained every layer: the user freezes one.
        item = w.freeze_panel.parameter_items()[FROZEN_WHILE_PAUSED]
        item.setCheckState(0, Qt.CheckState.Unchecked)
        paused_at = self.steps.last_step
        training.pause_button.click()  # Resume
        wait_until(
            lambda: self.steps.count > with_pause and self.steps.last_step > paused_at,
            "a step after resuming",
        )
        training.stop_button.click()
        wait_until(lambda: w.state == "idle", "the stop")
        self._track_current_run()
        folder = w.run_folder
        if folder is None:
            raise SoakError(f"cycle {number}: the run has no folder")
        return folder.path

    def open_checkpoint(self, path: Path) -> None:
        """File > Open checkpoint…, the dialog answering ``path``."""
        w = self.window
        chosen = dialogs.get_open_path
        dialogs.get_open_path = lambda parent, title, name_filter: path
        try:
            w.commands.open.trigger()
        finally:
            dialogs.get_open_path = chosen
        wait_until(lambda: w.state == "idle", f"opening {path}")
        run = w.current_run
        if run is None or w.run_folder is None or w.run_folder.path != path.parent:
            raise SoakError(f"{path} was not opened")
        self._track_current_run()
        self.report.opens += 1

    def add_drawings(self) -> None:
        """Draw tab: a few drawings per digit added to my digits, once."""
        from tests.core.test_finetune import mirrored_digits

        panel = self.window.draw_panel
        for image, label in mirrored_digits(per_class=FINE_TUNE_DRAWINGS):
            panel.open_in_canvas(image)
            panel.label_combo.setCurrentIndex(label)
            panel.add_button.click()
        self._drawings_added = True

    def fine_tune(self) -> Path:
        """Draw tab: Fine-tune on my digits (1 epoch, a little replay); its folder."""
        w = self.window
        panel = w.draw_panel
        if not self._drawings_added:
            self.add_drawings()
        panel.epochs_spin.setValue(1)
        panel.replay_spin.setValue(64)
        panel.clear_fine_tune_report()
        panel.fine_tune_button.click()
        wait_until(
            lambda: panel.fine_tune_report is not None and w.state == "idle",
            "the fine-tune's scores",
        )
        self.report.fine_tunes += 1
        self._track_current_run()
        folder = w.run_folder
        if folder is None:
            raise SoakError("the fine-tune has no folder")
        return folder.path

    # ------------------------------------------------------------------ the soak

    def run(
        self,
        cycles: int,
        opens: int,
        fine_tunes: int,
        on_sample: Callable[[Sample], None] | None = None,
    ) -> SoakReport:
        """``cycles`` cycles with ``opens`` opens and ``fine_tunes`` fine-tunes."""
        if max(opens, fine_tunes) > cycles:
            raise ValueError("at most one open and one fine-tune per cycle")
        open_at, tune_at = spread(opens, cycles), spread(fine_tunes, cycles)
        report = self.report
        with (
            qt_messages_caught(report.qt_messages),
            errors_caught(report.error_dialogs),
        ):
            for number in range(1, cycles + 1):
                started = time.perf_counter()
                did = ["cycle"]
                report.folders.append(self.cycle(number))
                if number in open_at:  # an earlier run's, not always the last
                    earlier = report.folders[(7 * report.opens) % len(report.folders)]
                    self.open_checkpoint(earlier / "checkpoint.pt")
                    did.append("open")
                if number in tune_at:
                    report.folders.append(self.fine_tune())
                    did.append("fine-tune")
                sample = self.sample(number, "+".join(did), started)
                report.samples.append(sample)
                if on_sample is not None:
                    on_sample(sample)
        return report

    def _track_current_run(self) -> None:
        self._runs.append(weakref.ref(self.window.current_run))

    def sample(self, number: int, did: str, started: float) -> Sample:
        """The process now, after its events are delivered and cycles collected."""
        QApplication.processEvents()
        gc.collect()
        self._runs = [ref for ref in self._runs if ref() is not None]
        return Sample(
            cycle=number,
            did=did,
            rss_kb=rss_kb(),
            tasks=settled(task_count),
            py_threads=settled(threading.active_count),
            runs_alive=len(self._runs),
            seconds=time.perf_counter() - started,
        )
