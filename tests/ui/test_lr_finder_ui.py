"""Run ▸ Find learning rate…: progress, the curve with both suggestions, the
probes, "Use this rate"; Cancel; the run Start then trains is untouched."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QPushButton

from workbench.core.events import StepMetrics
from workbench.ui.run_controller import FindProgress

from .helpers import FAST, event_signal, run_to_end

pytestmark = pytest.mark.gui

CFG = FAST.replace(model="mlp", max_steps=6, batch_size=32, lr=0.01)


def _find(qtbot, window):
    with qtbot.waitSignal(window.controller.rate_found, timeout=60_000) as found:
        window.commands.find_rate.trigger()
    qtbot.waitUntil(lambda: window.state == "idle", timeout=10_000)
    return window.lr_finder, found.args[0]


def test_the_finder_shows_its_curve_and_probes_and_sets_the_rate(qtbot, window):
    window.apply_config(CFG)
    stages = []
    window.controller.task_progress.connect(
        lambda p: stages.append(p.stage) if isinstance(p, FindProgress) else None
    )
    dialog, found = _find(qtbot, window)
    assert stages[0] == "range test"
    assert stages[-1] == "probes"
    offered = found.offered
    assert offered is not None
    table = dialog.table
    assert table.rowCount() == len(found.probes) >= 3
    rows = range(table.rowCount())
    marked = [r for r in rows if table.item(r, 0).text().endswith("← best")]
    assert len(marked) == 1
    assert table.item(marked[0], 0).text().startswith(f"{offered.rate:.2e}")
    assert dialog.status_label.text().startswith(f"Offered {offered.rate:.2e}: ")
    # The curve and a line per suggestion, labelled with its rate.
    labels = [
        item.label.format
        for item in dialog.plot.getPlotItem().items
        if hasattr(item, "label") and item.label is not None
    ]
    guess = found.curve.suggestions
    assert f"valley {guess.valley:.2e}" in labels
    assert f"steepest {guess.steepest:.2e}" in labels
    # The rate axis reads rates as they are, no "(x0.001)" factor on its ticks.
    assert not dialog.plot.getAxis("bottom").autoSIPrefix
    assert dialog.use_button.isEnabled()
    dialog.use_button.click()
    assert window.training_panel.lr_spin.value() == pytest.approx(
        float(f"{offered.rate:.2e}")
    )
    assert window.current_config().lr == pytest.approx(float(f"{offered.rate:.2e}"))


def test_a_run_after_a_find_is_the_run_without_one(qtbot, window):
    window.apply_config(CFG)
    run_to_end(qtbot, window)
    without = list(window.current_run.history.steps)
    window.reset_run()
    _find(qtbot, window)
    window.lr_finder.close()
    steps = []
    event_signal(window, StepMetrics).connect(steps.append)
    run_to_end(qtbot, window)
    assert window.current_run.history.steps == without


def test_cancel_ends_the_find_and_offers_nothing(qtbot, window):
    window.apply_config(CFG)
    cancel = None

    def cancel_early(p):
        if isinstance(p, FindProgress) and p.done == 3 and cancel.isEnabled():
            cancel.click()

    window.controller.task_progress.connect(cancel_early)
    with qtbot.waitSignal(window.controller.rate_found, timeout=60_000) as found:
        window.commands.find_rate.trigger()
        cancel = window.lr_finder.findChild(QPushButton, "lrFinderCancel")
    qtbot.waitUntil(lambda: window.state == "idle", timeout=10_000)
    assert found.args[0].offered is None
    assert not window.lr_finder.use_button.isEnabled()
    assert window.training_panel.lr_spin.value() == pytest.approx(0.01)
