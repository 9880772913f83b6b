"""The Speed panel shows where each step's time goes: a stacked bar, a strip, words."""

from __future__ import annotations

from workbench.core.train.step_clock import PHASES
from workbench.ui.panels.speed import SpeedPanel
from workbench.ui.widgets.step_split_bar import PHASE_COLOURS

from .helpers import run_to_end


def _colour_at(widget, x: int, y: int) -> str:
    return widget.grab().toImage().pixelColor(x, y).name()


def test_the_bar_is_split_by_each_phases_share(qtbot):
    panel = SpeedPanel()
    qtbot.addWidget(panel)
    panel.resize(400, 400)
    panel.show()
    # data 50%, forward 25%, backward 25%: the bar's halves and quarters.
    panel.show_split((0.004, 0.0, 0.002, 0.002, 0.0, 0.0))
    bar = panel.split_bar
    assert bar.shares() == (0.5, 0.0, 0.25, 0.25, 0.0, 0.0)
    width = bar.width()
    seen = [_colour_at(bar, int(width * f), 5) for f in (0.25, 0.6, 0.9)]
    assert seen == [PHASE_COLOURS[p].name() for p in ("data", "forward", "backward")]
    assert panel.split_label.text() == (
        "a step 8.00 ms: data 50%, copy 0%, forward 25%, backward 25%, "
        "optimizer 0%, other 0%"
    )
    # The strip under it: this interval is its newest (rightmost) column,
    # data at the bottom.
    strip_bottom = bar.height() - 2
    assert _colour_at(bar, width - 1, strip_bottom) == PHASE_COLOURS["data"].name()
    assert all(name in panel.split_legend.text() for name in PHASES)


def test_a_run_in_the_window_shows_its_split(qtbot, window):
    run_to_end(qtbot, window)
    panel = window.speed_panel
    assert panel.split_label.text().startswith("whole run: a step ")
    assert len(panel.split_bar.shares()) == len(PHASES)
    assert abs(sum(panel.split_bar.shares()) - 1) < 1e-9
    # A new run starts from nothing, not from the last run's split.
    panel.clear_split()
    assert panel.split_bar.shares() == ()
    assert panel.split_label.text() == "not measured yet"


def test_each_logged_step_adds_to_the_strip_and_the_box_round_trips(qtbot, window):
    from workbench.core.events import StepMetrics

    window.speed_panel.clear_split()
    step = StepMetrics(0, 1, 1, 10, 0.5, 0.5, 1e-3, 100.0, 0.1, 0.004,
                       phases=(0.002, 0.0, 0.001, 0.001, 0.0, 0.0))  # fmt: skip
    window.run_view._status_at = 0.0  # the texts are due
    window.controller.event.emit(step)
    assert window.speed_panel.split_bar.shares() == (0.5, 0.0, 0.25, 0.25, 0.0, 0.0)
    assert window.speed_panel.split_label.text().startswith("a step 4.00 ms")
    window.apply_config(window.current_config().replace(channels_last=False))
    assert not window.speed_panel.channels_last_check.isChecked()
    assert window.current_config().channels_last is False
