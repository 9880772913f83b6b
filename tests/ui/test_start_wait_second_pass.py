"""A run's start in the window: its threads, and a job on several processes.

The trainer thread is driven by a stand-in session (no data, no model), so what
its start promises costs no training: the GUI thread releases its OpenMP pool
right before each start, and the training thread copies its settings before it
asks the session for anything. A job's launcher is a stand-in ``Popen`` that
writes its last lines as it exits, so how a job ends is read without a process;
Start with several processes is a JobView over the few window parts it reads.
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from workbench.core import events as E
from workbench.ui import process_job, trainer_thread
from workbench.ui.panels.device import DevicePanel
from workbench.ui.process_job import JobEnded, ProcessJob
from workbench.ui.trainer_thread import TrainerThread
from workbench.ui.window import state as window_state
from workbench.ui.window.job_view import JobView

from .helpers import FAST

pytestmark = pytest.mark.gui


# ----------------------------------------------------------- the trainer's start


class _Session:
    """Session.train's shape: notes the thread that asks, trains nothing."""

    def __init__(self, calls: list[tuple[str, int]]) -> None:
        self._calls = calls

    def train(self, _plan: object, _control: object, progress: Any) -> Any:
        self._calls.append(("train", threading.get_native_id()))
        return iter(())


def test_each_start_releases_the_gui_threads_pool_and_prepares_the_trainer(
    qtbot, monkeypatch
):
    calls: list[tuple[str, int]] = []
    trainer = TrainerThread()

    def prepare_main() -> None:
        assert not trainer.isRunning()  # right before the start, not after it
        calls.append(("main", threading.get_native_id()))

    monkeypatch.setattr(trainer_thread, "prepare_main_thread", prepare_main)
    monkeypatch.setattr(
        trainer_thread,
        "prepare_training_thread",
        lambda: calls.append(("training", threading.get_native_id())),
    )
    for _run in range(2):  # the same thread object serves every run
        with qtbot.waitSignal(trainer.finished, timeout=10_000):
            trainer.start_run(_Session(calls), object())
        trainer.wait()
    gui = threading.get_native_id()
    assert [what for what, _ in calls] == ["main", "training", "train"] * 2
    assert calls[0][1] == calls[3][1] == gui
    for first in (1, 4):  # prepared in the training thread, before it trains
        assert calls[first][1] == calls[first + 1][1] != gui


# ------------------------------------------------------------- how a job ends


def _launcher(code: int, out: str = "", err: str = "") -> type:
    """A Popen stand-in: the launcher writes ``out`` and ``err``, then exits ``code``.

    It writes as it exits, between two polls: the moment a job's last lines
    and its exit code arrive together.
    """

    class Launcher:
        pid = 0

        def __init__(self, _command: list[str], *, stdout: Any, stderr: Any, **_: Any):
            self._out, self._err = Path(stdout.name), Path(stderr.name)
            self._exited = False

        def poll(self) -> int:
            if not self._exited:
                self._exited = True
                with self._out.open("a") as file:
                    file.write(out)
                with self._err.open("a") as file:
                    file.write(err)
            return code

    return Launcher


def _end(qtbot, monkeypatch, launcher: type) -> tuple[JobEnded, list[object]]:
    """Start a job with ``launcher`` and poll it once; how it ended, what it said."""
    monkeypatch.setattr(process_job.subprocess, "Popen", launcher)
    job = ProcessJob(FAST, 2)
    said: list[object] = []
    ended: list[JobEnded] = []
    job.event.connect(said.append)
    job.ended.connect(ended.append)
    job.start()
    job.poll()
    assert not job.running
    (result,) = ended
    return result, said


def test_the_lines_a_job_printed_as_it_exited_reach_the_window(qtbot, monkeypatch):
    out = (
        "warning: the loaded weights stay unused\n"
        "stopped at step 3 of 40\n"
        "note: rank 0 saved its checkpoint\n"
    )
    result, said = _end(qtbot, monkeypatch, _launcher(130, out))
    assert said == [
        E.Notice("the loaded weights stay unused"),
        E.Notice("rank 0 saved its checkpoint"),
    ]
    assert (result.outcome, result.message) == ("stopped", "")


def test_a_job_ended_by_a_signal_failed_and_says_which(qtbot, monkeypatch):
    result, said = _end(qtbot, monkeypatch, _launcher(-9))
    assert said == []
    assert result.outcome == "failed"
    assert result.message == "the training job was ended by signal 9"


def test_a_failed_job_says_the_last_line_of_its_error_output(qtbot, monkeypatch):
    err = (
        "Traceback (most recent call last):\n  ...\n"
        "rank 1 failed: RuntimeError: boom\n\n---\n"
    )
    result, _said = _end(qtbot, monkeypatch, _launcher(1, err=err))
    assert result.outcome == "failed"
    assert result.message == "rank 1 failed: RuntimeError: boom"


class _Controller(QObject):
    """The RunController's side a JobView uses; notes the jobs it is asked for."""

    job_started = Signal(object)
    job_event = Signal(object)
    job_ended = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.session = SimpleNamespace(initial_weights=None)
        self.jobs: list[int] = []

    def start_job(self, _cfg: object, nproc: int) -> None:
        self.jobs.append(nproc)


class _Window(QWidget):
    """What a JobView reads of the window before a job starts."""

    def __init__(self) -> None:
        super().__init__()
        self.device_panel = DevicePanel(self)
        self.health_panel = SimpleNamespace(add_health=None, add_histograms=None)
        self.errors: list[tuple[str, str]] = []

    def show_error(self, title: str, exc: BaseException) -> None:
        self.errors.append((title, str(exc)))


def test_a_batch_that_cannot_split_starts_no_process(qtbot):
    window, controller = _Window(), _Controller()
    qtbot.addWidget(window)
    jobs = JobView(window, controller, window_state.open_window_settings())
    window.device_panel.set_processes(2)
    if jobs.processes() < 2:
        pytest.skip("one core: the window offers one process")
    assert jobs.start_if_several(FAST.replace(batch_size=63)) is True
    assert controller.jobs == []
    assert window.errors == [
        (
            "Cannot start the run",
            "batch size 63 does not split evenly over 2 processes: give a "
            "multiple of 2 (--batch-size is the global batch)",
        )
    ]
