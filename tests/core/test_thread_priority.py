"""A window's training thread runs below the GUI thread's CPU priority."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest
import torch

from workbench.core.host import threads

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's"
)


def _nice_of(tid: int) -> int:
    # /proc/<pid>/task/<tid>/stat: field 19 is the nice value (after the name).
    stat = Path(f"/proc/self/task/{tid}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])


def test_the_calling_thread_and_the_helpers_it_starts_run_lower():
    base = os.getpriority(os.PRIO_PROCESS, 0)
    result: dict[str, object] = {}

    def body() -> None:
        before = set(os.listdir("/proc/self/task"))
        result["nice"] = threads.lower_training_priority()
        result["tid"] = threading.get_native_id()
        torch.ones(512, 512) @ torch.ones(512, 512)  # starts this thread's pool
        result["helpers"] = set(os.listdir("/proc/self/task")) - before
        result["helper_nice"] = [_nice_of(int(t)) for t in result["helpers"]]
        threads.release_openmp_pool()

    worker = threading.Thread(target=body)
    worker.start()
    worker.join(60)
    assert result["nice"] == base + threads.TRAINER_NICE
    assert os.getpriority(os.PRIO_PROCESS, 0) == base  # this thread is untouched
    if torch.get_num_threads() > 1:
        assert result["helper_nice"]  # the pool's helpers exist, and inherit it
        assert set(result["helper_nice"]) == {base + threads.TRAINER_NICE}
