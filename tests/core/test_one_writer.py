"""One run folder, one writer: a second resume of the same run is refused.

Two ``--resume`` of one checkpoint at once interleaved one ledger (13 epoch
records for a 9-epoch run). The second now stops before it writes anything.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from workbench.core.runs.folder import RunFolder
from workbench.core.runs.writer_lock import FolderBusy
from workbench.core.session import Session


def resume_session(checkpoint):
    session = Session(origin="test")
    opened = session.open(checkpoint, evaluate=False)
    session.adopt(opened)
    plan = session.plan_resume(opened.run.config.replace(max_steps=6), checkpoint)
    return session, plan


def test_a_second_resume_of_a_run_being_written_is_refused(trained_run_folder):
    first, plan = resume_session(trained_run_folder.checkpoint_path)
    first.begin(plan)
    events_before = (trained_run_folder.path / "events.jsonl").read_bytes()
    second, plan_again = resume_session(trained_run_folder.checkpoint_path)
    with pytest.raises(FolderBusy) as busy:
        second.begin(plan_again)
    assert str(busy.value).startswith(
        f"{trained_run_folder.path} is being written by process "
    )
    assert "one run folder has one writer" in str(busy.value)
    # Nothing of the second reached the folder.
    assert (trained_run_folder.path / "events.jsonl").read_bytes() == events_before
    first._writer_lock.release()  # the first run ended
    second.begin(plan_again)


def test_the_lock_goes_with_a_killed_process(trained_run_folder):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; "
            "from workbench.core.runs.writer_lock import WriterLock; "
            "lock = WriterLock(Path(sys.argv[1])); print('held', flush=True); "
            "time.sleep(60)",
            str(trained_run_folder.path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        session, plan = resume_session(trained_run_folder.checkpoint_path)
        with pytest.raises(FolderBusy, match=f"by process {holder.pid}:"):
            session.begin(plan)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    session.begin(plan)  # kill -9 left no stale lock


@pytest.fixture
def trained_run_folder(runs_root):
    """A run folder with a checkpoint, as a finished run leaves it."""
    from workbench.cli.commands import main

    assert main(["train", "--quiet", "--model", "mlp", "--max-steps", "2"]) == 0
    (path,) = runs_root.iterdir()
    return RunFolder(path)
