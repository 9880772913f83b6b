"""A job's processes are found by the text their command lines share."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from workbench.core.host.process_tree import processes_with, signal_all


def _sleeper(marker: str) -> subprocess.Popen[bytes]:
    code = "import sys, time; time.sleep(60)"
    return subprocess.Popen([sys.executable, "-c", code, marker])


def _until(condition, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


@pytest.mark.slow  # starts a subprocess
def test_a_process_is_found_by_its_marker_and_not_once_it_ended():
    marker = f"/tmp/job-{uuid.uuid4().hex}/config.json"
    child = _sleeper(marker)
    try:
        assert processes_with(marker) == [child.pid]
        assert os.getpid() not in processes_with(sys.argv[0] or "python")
        signal_all([child.pid], signal.SIGTERM)
        # Ended but not yet waited for: a zombie is not one of the job's.
        assert _until(lambda: processes_with(marker) == [])
    finally:
        child.kill()
        child.wait()
    assert processes_with(marker) == []
    signal_all([child.pid], signal.SIGTERM)  # a process that is gone: no error


def test_a_marker_no_command_line_has_finds_nothing():
    assert processes_with(f"no-such-job-{uuid.uuid4().hex}") == []
