"""A real torch.compile run in the window: "compiling…" with elapsed time, then
the compile time shown apart from the measured step time."""

from __future__ import annotations

import pytest

from workbench.core.events import CompileFinished, CompileStarted

from .helpers import FAST, event_signal

pytestmark = [pytest.mark.gui, pytest.mark.slow]


def test_compiled_run_reports_compile_and_step_time(qtbot, window):
    statuses = []

    def record() -> None:
        statuses.append(window.status_label.text())

    event_signal(window, CompileStarted).connect(lambda _ev: record())
    compiled = []
    event_signal(window, CompileFinished).connect(
        lambda ev: compiled.append(ev.seconds)
    )
    window.apply_config(FAST.replace(compile=True, max_steps=3))
    with qtbot.waitSignal(window.controller.run_finished, timeout=600_000):
        window.start()
    assert statuses
    assert statuses[0].startswith("compiling… ")
    assert compiled
    assert compiled[0] > 0
    assert "s for the first step" in window.speed_panel.compile_label.text()
    assert "compiled " in window.speed_panel.step_label.text()
    assert "compiled not measured" not in window.speed_panel.step_label.text()
