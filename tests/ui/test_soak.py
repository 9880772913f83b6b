"""The window under long use, shortened: memory, threads, Qt's messages, run folders.

Ten cycles of New run, Start, Pause, a freeze change, Resume, Stop, with three
checkpoint opens and two fine-tunes on my digits among them, through the
window's own buttons (``soak_driver.py``). ``bench/soak_bench.py`` runs the
same driver and checks for 50 cycles, 20 opens and 10 fine-tunes and prints
the curves.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import qWarning

from workbench.core.config import TrainConfig
from workbench.core.runs.folder import RunFolder

from .soak_driver import SoakDriver, folder_problems, qt_messages_caught

pytestmark = [pytest.mark.gui, pytest.mark.slow]

CYCLES, OPENS, FINE_TUNES = 10, 3, 2


def test_a_short_soak_keeps_memory_threads_and_every_run_folder(window, runs_root):
    report = SoakDriver(window).run(CYCLES, OPENS, FINE_TUNES)
    assert (report.opens, report.fine_tunes) == (OPENS, FINE_TUNES)
    assert len(report.samples) == CYCLES
    # Every cycle and every fine-tune wrote a folder of its own.
    assert len(set(report.folders)) == CYCLES + FINE_TUNES
    assert all(path.parent == runs_root for path in report.folders)
    # Memory (< 50 MB after the warm-up), the warm-up's thread count after every
    # later cycle, only the current run alive, no Qt warning, complete folders.
    assert report.problems() == []


def test_the_soaks_checks_see_an_incomplete_folder_and_a_qt_warning(runs_root):
    folder = RunFolder.create(TrainConfig(dataset="digits"), origin="window")
    assert folder_problems(folder.path) == [
        f"{folder.id}: status 'running' in run.json"
    ]
    folder.update(status="stopped")
    problems = folder_problems(folder.path)
    assert problems[0] == f"{folder.id}: no steps in metrics.jsonl"
    assert problems[1].startswith(f"{folder.id}: checkpoint does not load")

    said: list[str] = []
    with qt_messages_caught(said):
        qWarning("a warning")
    assert said == ["QtWarningMsg: a warning"]
