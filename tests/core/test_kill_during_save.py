"""A process killed at any moment of a save leaves the old file or the new one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
TRIALS = 40


def test_sigkill_during_saves_never_leaves_a_broken_checkpoint(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "tests.core.kill_saves", str(tmp_path), str(TRIALS)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout.splitlines()[-1])
    assert counts["trials"] == TRIALS
    assert counts["valid"] == TRIALS, counts  # every file loads, old or new, whole
    # The kills really landed inside saves, and on both sides of a rename.
    assert counts["mid_save"] >= TRIALS // 4, counts
    assert counts["old"] > 0, counts
    assert counts["new"] > 0, counts
