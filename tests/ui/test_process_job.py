"""Start with Processes > 1: a ``train --nproc 2`` job the window follows live.

The real jobs take a few seconds each (two processes of the bundled digits);
the follower's handling of a half-written line needs no process.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from workbench.core.events import StepMetrics
from workbench.core.runs.folder import METRICS_FILE, RunFolder, interrupted_runs
from workbench.ui import dialogs
from workbench.ui.job_follower import JobFollower
from workbench.ui.main_window import MainWindow
from workbench.ui.panels.runs import COLUMNS
from workbench.ui.process_job import JobEnded, ProcessJob
from workbench.ui.window import state as window_state

from .helpers import FAST

ROOT = Path(__file__).resolve().parents[2]
# Two epochs of 23 steps; long enough to see epochs arrive while it runs.
JOB = FAST.replace(max_steps=None, epochs=2, device="cpu", log_every=1)
LONG_JOB = JOB.replace(epochs=200)
# Wait for a logged step: every rank trains (rank 0 prints notes before that).
TRAINING = {"check_params_cb": lambda ev: isinstance(ev, StepMetrics)}


@pytest.fixture
def job_env(tmp_path, monkeypatch):
    """Runs in tmp_path; the job's processes import this checkout."""
    runs = tmp_path / "runs"
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(runs))
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", path)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # two processes, two cores
    return runs


def _start_job(qtbot, window, cfg):
    window.apply_config(cfg)
    window.device_panel.set_processes(2)
    window.start()
    assert window.controller.job is not None
    return window.controller.job


def _alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_the_follower_waits_for_a_half_written_line(qtbot, tmp_path):
    follower = JobFollower(tmp_path)
    seen = []
    follower.event.connect(seen.append)
    step = StepMetrics(0, 1, 1, 4, 2.3, 0.1, 0.01, 100.0, 0.5, 0.01)
    line = json.dumps(step.to_record())
    with (tmp_path / METRICS_FILE).open("a") as f:
        f.write(line[:30])
    assert follower.poll() == 0
    with (tmp_path / METRICS_FILE).open("a") as f:
        f.write(line[30:] + "\n")
    assert follower.poll() == 1
    assert seen == [step]


@pytest.mark.slow
def test_a_two_process_job_is_followed_live_and_finishes(qtbot, window, job_env):
    live = []  # what the views showed while the job still ran
    pausable = []
    controller = window.controller

    def on_event(ev):
        if controller.state == "running":
            live.append(
                (
                    type(ev).__name__,
                    window.loss_plot.point_count("loss"),
                    window.evaluation_panel.shown_epoch(),
                )
            )
            pausable.append(window.training_panel.pause_button.isEnabled())

    controller.job_event.connect(on_event)
    started = time.monotonic()
    with qtbot.waitSignal(controller.job_ended, timeout=60_000) as ended:
        job = _start_job(qtbot, window, JOB)
        assert window.state == "preparing"
        assert not window.training_panel.pause_button.isEnabled()
    result: JobEnded = ended.args[0]
    assert result.outcome == "finished", result
    assert window.state == "idle"
    kinds = [k for k, _, _ in live]
    assert not any(pausable)  # it trains outside the window: no Pause
    assert "StepMetrics" in kinds
    assert "EpochMetrics" in kinds
    # The curve grew and the first epoch's matrix showed before the end.
    assert max(n for _, n, _ in live) > 0
    assert 0 in [e for _, _, e in live]
    assert window.loss_plot.point_count("loss") == 46
    assert window.evaluation_panel.shown_epoch() == 1
    assert "Finished at step 46" in window.status_label.text()
    info = RunFolder(result.folder).info()
    assert (info["status"], info["world_size"]) == ("finished", 2)
    assert (result.folder / "checkpoint.pt").is_file()
    assert not _alive(job.pid)
    assert time.monotonic() - started < 40

    # The Runs tab: x2 for this run, nothing more for a run of one process.
    window.device_panel.set_processes(1)
    with qtbot.waitSignal(controller.run_finished, timeout=30_000):
        window.apply_config(FAST)
        window.start()
    window.runs_tab.refresh()
    table = window.runs_panel.table
    sizes = sorted(r.world_size for r in table.runs())
    assert sizes == [1, 2]
    column = COLUMNS.index("Status")
    texts = sorted(table.item(r, column).text() for r in range(table.rowCount()))
    assert texts == ["finished", "finished \u00d72"]


def test_processes_are_remembered_and_bounded_by_the_device(qtbot, tmp_path):
    first = MainWindow()
    qtbot.addWidget(first)
    spin = first.device_panel.processes_spin
    assert spin.value() == 1
    assert spin.maximum() == (os.cpu_count() or 1)  # this machine trains on CPU
    assert "global batch" in spin.toolTip()
    first.device_panel.set_processes(2)
    first.close()
    second = MainWindow(settings=window_state.open_window_settings())
    qtbot.addWidget(second)
    assert second.device_panel.processes() == 2
    second.close()


@pytest.mark.slow
def test_stop_ends_every_process_and_the_run_is_stopped_with_a_checkpoint(
    qtbot, window, job_env
):
    controller = window.controller
    with qtbot.waitSignal(controller.job_event, timeout=30_000, **TRAINING):
        job = _start_job(qtbot, window, LONG_JOB)
    assert len(job.processes()) >= 3  # the launcher and two ranks (and torchrun)
    with qtbot.waitSignal(controller.job_ended, timeout=30_000) as ended:
        window.training_panel.stop_button.click()
        assert not window.training_panel.stop_button.isEnabled()
    result: JobEnded = ended.args[0]
    assert result.exit_code == 130, result
    assert window.state == "idle"
    assert "Stopped at step" in window.status_label.text()
    assert job.processes() == []
    info = RunFolder(result.folder).info()
    assert (info["status"], info["world_size"]) == ("stopped", 2)
    assert (result.folder / "checkpoint.pt").is_file()


@pytest.mark.slow
def test_closing_asks_first_and_stops_the_job(qtbot, window, job_env, monkeypatch):
    controller = window.controller
    with qtbot.waitSignal(controller.job_event, timeout=30_000, **TRAINING):
        job = _start_job(qtbot, window, LONG_JOB)
    asked = []

    def answer(parent, title, text):
        asked.append(title)
        return len(asked) > 1  # No the first time, Yes the second

    monkeypatch.setattr(dialogs, "confirm", answer)
    window.close()
    assert asked == ["Stop the training job?"]
    assert window.isVisible()
    assert job.running
    closed = time.monotonic()
    window.close()
    assert len(asked) == 2
    assert job.processes() == []
    assert not job.running
    assert time.monotonic() - closed < 5  # every rank stopped after its batch
    # Closed, not stopped by the user: offered for resume on relaunch, as a
    # run of one process is.
    assert RunFolder(job.folder).info()["status"] == "closed"
    assert [f.path for f in interrupted_runs(job.folder.parent)] == [job.folder]


@pytest.mark.slow
def test_a_failed_job_shows_its_last_error_line_without_a_dialog(
    qtbot, window, job_env, monkeypatch
):
    # The launcher's contract: exit code 1 and one line saying which rank failed.
    failing = (
        "import sys; sys.stderr.write('Traceback (most recent call last):\\n"
        "  ...\\nrank 1 failed: RuntimeError: boom\\n'); sys.exit(1)"
    )
    monkeypatch.setattr(
        ProcessJob, "command", lambda self: [sys.executable, "-c", failing]
    )
    controller = window.controller
    window.apply_config(JOB)
    window.device_panel.set_processes(2)
    with qtbot.waitSignal(controller.job_ended, timeout=30_000) as ended:
        window.start()
    result: JobEnded = ended.args[0]
    assert result.outcome == "failed"
    assert result.message == "rank 1 failed: RuntimeError: boom"
    assert window.state == "idle"
    assert "Failed: rank 1 failed: RuntimeError: boom" in window.status_label.text()
    assert window.training_panel.start_button.isEnabled()


@pytest.mark.slow
def test_stop_signals_the_launcher_alone(qtbot, window, job_env, monkeypatch):
    sent = []
    real_kill = os.kill

    def kill(pid: int, sig: int) -> None:
        if sig == 0:  # "is it alive?" (the Runs tab asks of a running run)
            return real_kill(pid, sig)
        sent.append((pid, sig))

    # Only here: undoing the whole monkeypatch would also undo the suite's
    # guards against modal questions.
    with monkeypatch.context() as patched:
        patched.setattr(os, "kill", kill)
        job = _start_job(qtbot, window, LONG_JOB)
        window.stop()
    assert sent == [(job.pid, signal.SIGINT)]
    job_env  # noqa: B018
    with qtbot.waitSignal(window.controller.job_ended, timeout=30_000):
        window.controller.job.shutdown(wait_s=0.1)
        window.controller.job.poll()
