"""Export onto a real full disk: one line, nothing half written, nothing left over.

In a child process: TorchScript saved to a path wrote from C++, and a full disk
aborted the whole process (exit code 134).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def export(checkpoint, out):
    command = [sys.executable, "-m", "workbench", "export", str(checkpoint)]
    command += ["--format", "torchscript", "exported", "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_a_full_disk_is_one_line_and_leaves_the_folder_as_it_was(
    small_disk, trained_mlp_checkpoint
):
    out = small_disk.path / "export"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    killed = out / ".export-999999999-abandoned"  # an export killed mid-way
    killed.mkdir()
    (killed / "model.pt").write_bytes(b"half")
    small_disk.fill(leave=65536)
    done = export(trained_mlp_checkpoint, out)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.splitlines()[-1] == (
        f"ptcore-workbench export: error: cannot write the export in {out}: "
        "No space left on device; nothing there was changed"
    )
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_an_abandoned_staging_folder_goes_and_a_live_ones_stays(
    tmp_path, trained_mlp_checkpoint
):
    out = tmp_path / "export"
    out.mkdir()
    (out / ".export-999999999-abandoned").mkdir()  # no such process
    (out / ".export-old").mkdir()  # named before staging folders had an owner
    live = out / f".export-{os.getpid()}-running"  # another export, still going
    live.mkdir()
    done = export(trained_mlp_checkpoint, out)
    assert done.returncode == 0, done.stderr[-2000:]
    hidden = sorted(p.name for p in out.iterdir() if p.name.startswith("."))
    assert hidden == [live.name]
    assert (out / "model.pt").is_file()
