"""A real torch.compile run in the window: "compiling…" with elapsed time, then
the compile time shown apart from the measured step time."""

from __future__ import annotations

import pytest

from .helpers import FAST

pytestmark = [pytest.mark.gui, pytest.mark.slow]


def test_compiled_run_reports_compile_and_step_time(qtbot, window):
    statuses = []

    def record() -> None:
        statuses.append(window.status_label.text())

    window.trainer.compile_started.connect(record)
    compiled = []
    window.trainer.compile_finished.connect(compiled.append)
    window.apply_config(FAST.replace(compile=True, max_steps=3))
    with qtbot.waitSignal(window.run_finished, timeout=600_000):
        window.start()
    assert statuses
    assert statuses[0].startswith("compiling… ")
    assert compiled
    assert compiled[0] > 0
    assert "s for the first step" in window.speed_panel.compile_label.text()
    assert "compiled " in window.speed_panel.step_label.text()
    assert "compiled not measured" not in window.speed_panel.step_label.text()
