"""What ``runs list`` says of a run: a dead "running" run is interrupted.

Killed runs, and runs whose process died of an error it could not record,
used to read "running" for ever; a new run whose set-up failed is "failed".
"""

from __future__ import annotations

import os
import socket

import pytest

from workbench.cli.commands import main
from workbench.core.config import TrainConfig
from workbench.core.runs.folder import RunFolder, mark_closed_if_stopped
from workbench.core.runs.listing import list_runs

_NO_SUCH_PID = 2**22 + 12345  # above Linux's pid_max default of 4,194,304


@pytest.mark.parametrize(
    ("pid", "host", "shown"),
    [
        (_NO_SUCH_PID, None, "interrupted"),  # killed: its process is gone
        (os.getpid(), None, "running"),  # this process: still training
        (_NO_SUCH_PID, "another-machine", "running"),  # cannot be checked here
    ],
    ids=["process-gone", "process-alive", "other-host"],
)
def test_a_running_run_whose_process_is_gone_is_listed_as_interrupted(
    runs_root, pid, host, shown
):
    folder = RunFolder.create(TrainConfig(model="mlp"), origin="test")
    folder.update(status="running", pid=pid, host=host or socket.gethostname())
    (summary,) = list_runs()
    assert summary.status == shown
    assert folder.info()["status"] == "running"  # the file is left as it was


def test_a_new_run_whose_set_up_fails_is_marked_failed(tmp_path, runs_root, capsys):
    for name in ("cat", "dog"):
        (tmp_path / "photos" / name).mkdir(parents=True)
        (tmp_path / "photos" / name / "1.png").write_text("not an image")
    flags = ["--dataset", "folder", "--data-dir", str(tmp_path / "photos")]
    assert main(["train", "--quiet", *flags]) == 2
    assert "no readable training images" in capsys.readouterr().err
    (summary,) = list_runs()
    assert summary.status == "failed"


def test_a_run_the_closing_window_stopped_is_closed_and_offered_again(runs_root):
    stopped = RunFolder.create(TrainConfig(model="mlp"), origin="test")
    stopped.update(status="stopped")
    mark_closed_if_stopped(stopped)
    assert stopped.info()["status"] == "closed"
    finished = RunFolder.create(TrainConfig(model="mlp", seed=1), origin="test")
    finished.update(status="finished")
    mark_closed_if_stopped(finished)
    assert finished.info()["status"] == "finished"
