"""What a run on several processes promises, with a stand-in for torchrun.

The window starts ``train --nproc N`` as a child (``ProcessJob``); here its
command is a few lines of Python that behave as the launcher does where it
matters (a line of rank 0, exit code 130 on Stop, a rank in a session of its
own, a failure's last line), so each promise costs a process start, not a
torchrun launch. The threads each process gets are the launcher's own choice
(``cli/distributed.relaunch``), checked without launching anything.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import sys
import textwrap
from pathlib import Path

import pytest

from workbench.cli import distributed as distributed_cli
from workbench.core.events import Notice
from workbench.core.host.process_tree import processes_with, signal_all
from workbench.ui import dialogs
from workbench.ui.process_job import JobEnded, ProcessJob

from .helpers import FAST

# argv: the job's marker (its config path: on every command line of the job), then
# what to do. Its lines are printed without flush: the job's own environment
# must make them arrive while it runs.
LAUNCHER = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time

    marker, mode = sys.argv[1], sys.argv[2]
    RANK = (
        "import signal, time\\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
        "print('ready', flush=True)\\n"
        "time.sleep(60)\\n"
    )

    def start_rank():
        # As torchrun starts its ranks: each in a session of its own.
        rank = subprocess.Popen(
            [sys.executable, "-c", RANK, marker],
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        rank.stdout.readline()  # its signal handlers are set
        return rank.pid

    if mode == "stops":  # the launcher's Stop: every rank stops, exit code 130
        signal.signal(signal.SIGINT, lambda *_: sys.exit(130))
        runs = os.environ.get("PTCORE_RUNS_DIR")
        print(f"note: pid {os.getpid()} session {os.getsid(0)} runs {runs}")
        time.sleep(60)
    elif mode == "fails":  # a rank failed: the launcher names it and exits 1
        print(f"note: rank {start_rank()}")
        sys.stderr.write(
            "Traceback (most recent call last):\\n  ...\\n"
            "rank 1 failed: RuntimeError: boom\\n\\n---\\n"
        )
        sys.exit(1)
    elif mode == "stubborn":  # neither it nor its rank stops on SIGINT
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print(f"note: rank {start_rank()}")
        time.sleep(60)
    """
)
NOTE = {"check_params_cb": lambda event: isinstance(event, Notice)}


@pytest.fixture
def launcher(monkeypatch):
    """``launcher(mode)``: jobs run LAUNCHER; what they leave is ended after."""
    markers: list[str] = []

    def use(mode: str) -> None:
        def command(job: ProcessJob) -> list[str]:
            markers.append(job.marker)
            return [sys.executable, "-c", LAUNCHER, job.marker, mode]

        monkeypatch.setattr(ProcessJob, "command", command)

    yield use
    for marker in markers:  # a failed test's job: its processes and scratch folder
        signal_all(processes_with(marker), signal.SIGKILL)
        shutil.rmtree(Path(marker).parent, ignore_errors=True)


def _start_job(window) -> ProcessJob:
    window.device_panel.set_processes(2)
    window.start()
    job = window.controller.job
    assert job is not None
    return job


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.mark.slow
def test_a_job_runs_in_a_session_of_its_own_and_its_lines_arrive_at_once(
    qtbot, window, launcher, monkeypatch, tmp_path
):
    launcher("stops")
    # Block-buffered by default into a file: the job must ask for its lines at once.
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    monkeypatch.setenv("PTCORE_RUNS_DIR", str(tmp_path / "job-runs"))
    controller = window.controller
    with qtbot.waitSignal(controller.job_event, timeout=20_000, **NOTE) as said:
        job = _start_job(window)
    assert window.state == "preparing"
    note = said.args[0].message
    match = re.fullmatch(r"pid (\d+) session (\d+) runs (.+)", note)
    assert match, note
    pid, session, runs = int(match[1]), int(match[2]), match[3]
    assert pid == job.pid
    # Its own session: a terminal's Ctrl+C goes to the window's, never to the job.
    assert session == job.pid
    assert session != os.getsid(0)
    assert runs == str(tmp_path / "job-runs")  # the window's environment, passed on
    assert note in window.training_panel.notes_label.text()  # shown under the controls

    # Stop: SIGINT to the launcher alone, once however often Stop is asked for
    # (a second one would abort the ranks before rank 0 saves).
    sent: list[tuple[int, int]] = []
    real_kill = os.kill
    monkeypatch.setattr(os, "kill", lambda to, sig: sent.append((to, sig)))
    stop_button = window.training_panel.stop_button
    stop_button.click()
    assert not stop_button.isEnabled()
    window.stop()
    controller.stop()
    assert sent == [(job.pid, signal.SIGINT)]
    monkeypatch.setattr(os, "kill", real_kill)
    with qtbot.waitSignal(controller.job_ended, timeout=20_000) as ended:
        os.kill(*sent[0])
    result: JobEnded = ended.args[0]
    assert (result.exit_code, result.outcome) == (130, "stopped")
    assert window.state == "idle"
    assert window.status_label.text().startswith(
        "Stopped before the first step: nothing was trained"
    )
    assert window.training_panel.start_button.isEnabled()
    assert job.processes() == []


@pytest.mark.slow
def test_a_failed_job_shows_its_last_error_line_and_leaves_no_rank_running(
    qtbot, window, launcher
):
    launcher("fails")
    controller = window.controller
    notes: list[str] = []
    controller.job_event.connect(lambda event: notes.append(event.message))
    with qtbot.waitSignal(controller.job_ended, timeout=20_000) as ended:
        job = _start_job(window)
    result: JobEnded = ended.args[0]
    assert (result.exit_code, result.outcome) == (1, "failed")
    # The last line that says something: the rank and its error, not "---".
    assert result.message == "rank 1 failed: RuntimeError: boom"
    # Shown under the controls and in the status line, without a dialog (the
    # autouse fixture fails on one); the window is ready for another Start.
    assert window.status_label.text() == "Failed: rank 1 failed: RuntimeError: boom"
    assert (
        "The run on several processes failed: rank 1 failed: RuntimeError: boom"
        in window.training_panel.notes_label.text()
    )
    assert window.training_panel.progress_bar.format() == "failed"
    assert window.state == "idle"
    assert window.training_panel.start_button.isEnabled()
    # Its rank, in a session of its own, outlived the launcher: the job ends it.
    [rank] = [int(n.split()[1]) for n in notes if n.startswith("rank ")]
    qtbot.waitUntil(lambda: not _alive(rank), timeout=5_000)
    assert job.processes() == []


@pytest.mark.slow
def test_closing_asks_first_and_no_keeps_the_job(qtbot, window, launcher, monkeypatch):
    launcher("stops")
    with qtbot.waitSignal(window.controller.job_event, timeout=20_000, **NOTE):
        job = _start_job(window)
    asked: list[tuple[str, str]] = []

    def answer(_parent, title: str, text: str) -> bool:
        asked.append((title, text))
        return len(asked) > 1  # No the first time, Yes the second

    monkeypatch.setattr(dialogs, "confirm", answer)
    sent: list[tuple[int, int]] = []
    real_kill = os.kill

    def kill(pid: int, sig: int) -> None:
        sent.append((pid, sig))
        real_kill(pid, sig)

    monkeypatch.setattr(os, "kill", kill)
    window.close()
    assert [title for title, _ in asked] == ["Stop the training job?"]
    assert "training on 2 processes" in asked[0][1]
    assert window.isVisible()
    assert job.running
    assert not job.stop_requested
    window.close()
    assert len(asked) == 2
    assert not window.isVisible()
    # Stopped as Stop does (rank 0 saves), in time: nothing had to be killed.
    assert sent == [(job.pid, signal.SIGINT)]
    assert not job.running
    assert job.processes() == []


@pytest.mark.slow
def test_a_job_that_ignores_stop_is_ended_with_every_process(qtbot, launcher):
    launcher("stubborn")
    job = ProcessJob(FAST, 2)
    ranks: list[int] = []
    job.event.connect(lambda event: ranks.append(int(event.message.split()[1])))
    with qtbot.waitSignal(job.event, timeout=20_000):
        job.start()
    [rank] = ranks
    assert sorted(job.processes()) == sorted([job.pid, rank])
    job.shutdown(wait_s=0.2)  # SIGINT, then SIGTERM to all, then the rest killed
    assert not job.running
    qtbot.waitUntil(lambda: not _alive(rank), timeout=5_000)
    assert job.processes() == []


def test_each_process_gets_an_equal_share_of_the_cores(monkeypatch):
    seen: list[tuple[str | None, int]] = []

    def run(launch: argparse.Namespace) -> None:  # torchrun, not started
        seen.append((os.environ.get("OMP_NUM_THREADS"), launch.nproc_per_node))

    monkeypatch.setattr(distributed_cli, "run", run)
    monkeypatch.setattr(distributed_cli, "_quiet_agent_logs", lambda: None)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    cfg = FAST.replace(batch_size=96)  # splits over 2, 3 and 16 processes
    argv = ["train", "--model", "mlp", "--batch-size", "96"]
    for nproc, given in ((2, None), (3, None), (16, None), (2, "3")):
        if given is None:
            monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
        else:
            monkeypatch.setenv("OMP_NUM_THREADS", given)
        args = argparse.Namespace(nproc=nproc, argv=[*argv, "--nproc", str(nproc)])
        assert distributed_cli.relaunch(args, cfg) == 0
    # 8 cores: 4 threads each for 2 processes, 2 for 3, at least 1; a count the
    # user set stays theirs.
    assert seen == [("4", "2"), ("2", "3"), ("1", "16"), ("3", "2")]
