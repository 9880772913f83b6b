"""Run ▸ Profile the next 20 steps: a trace of the running run, what took the time."""

from __future__ import annotations

from pathlib import Path

from workbench.core.events import ProfileReport, StepMetrics
from workbench.core.perf.profiling import trace_is_valid

from .helpers import FAST, event_signal


def test_profiling_a_running_run_shows_its_trace_and_top_operators(qtbot, window):
    window.apply_config(FAST.replace(max_steps=None, epochs=50))
    with qtbot.waitSignal(event_signal(window, StepMetrics), timeout=30_000):
        window.start()
    with qtbot.waitSignal(event_signal(window, ProfileReport), timeout=60_000) as got:
        window.commands.profile.trigger()
        assert window.status_label.text().startswith("Profiling the next 20 steps")
    report = got.args[0]
    dialog = window.profiles.dialog
    assert dialog is not None
    assert dialog.isVisible()
    assert report.steps_recorded == 20
    trace = Path(report.trace_path)
    assert trace.parent == window.controller.session.folder.path
    assert trace_is_valid(trace)
    assert dialog.where_label.text().startswith("20 steps recorded (CPU time) into ")
    assert dialog.table.rowCount() == len(report.top_operators) > 0
    assert dialog.table.item(0, 0).text() == report.top_operators[0].name
    assert "forward" in dialog.phase_label.text()
    assert (
        "ui.perfetto.dev"
        in dialog.findChild(type(dialog.where_label), "profileHowLabel").text()
    )
    # The run went on while it was profiled.
    assert window.controller.state.training
    window.stop()


def test_profiling_with_no_run_says_to_start_one(window):
    window.commands.profile.trigger()
    assert "start one" in window.status_label.text()
    assert window.profiles.dialog is None
