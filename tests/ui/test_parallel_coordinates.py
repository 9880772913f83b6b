"""The parallel-coordinates plot: a line per trial, coloured by accuracy."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.core.tuning.coordinates import ACCURACY, Axis, Line
from workbench.ui.plots.parallel_coordinates import FADED, ParallelCoordinates

pytestmark = pytest.mark.gui

AXES = [Axis("lr", 1e-4, 1e-2, log=True), Axis("batch_size", choices=(32, 64))]
AXES.append(Axis(ACCURACY, 0.5, 0.9))


def test_each_trial_is_drawn_where_its_values_are_in_its_accuracys_colour(qtbot):
    plot = ParallelCoordinates()
    qtbot.addWidget(plot)
    lines = [
        Line(0, (0.5, 1.0, 1.0), 0.9, "complete"),
        Line(1, (0.0, 0.0, 0.0), 0.5, "complete"),
        Line(2, (1.0, 0.0, 0.25), 0.6, "pruned"),
        Line(3, (0.2, 1.0, float("nan")), None, "running"),
    ]
    plot.show_lines(AXES, lines)
    assert set(plot.curves) == {"band 7", "band 0", "pruned", "running"}
    best_x, best_y = plot.curves["band 7"].getData()
    assert list(best_x[:3]) == [0, 1, 2]
    assert list(best_y[:3]) == [0.5, 1.0, 1.0]
    worst = plot.curves["band 0"].opts["pen"].color()
    best = plot.curves["band 7"].opts["pen"].color()
    # viridis: the best is yellow (red and green high), the worst dark purple.
    assert (best.red() > 200, best.green() > 200, best.blue() < 100) == (True,) * 3
    assert (worst.red() < 100, worst.green() < 50, worst.blue() > 60) == (True,) * 3
    assert plot.curves["pruned"].opts["pen"].color() == FADED
    # Redrawing replaces: no curve of the last drawing stays.
    plot.show_lines(AXES, lines[:1])
    assert set(plot.curves) == {"band 7"}
    drawn = [i for i in plot.getPlotItem().items if i in plot.curves.values()]
    assert len(drawn) == 1


def test_two_hundred_trials_are_a_handful_of_items(qtbot):
    plot = ParallelCoordinates()
    qtbot.addWidget(plot)
    rng = np.random.default_rng(0)
    lines = [
        Line(n, tuple(rng.random(3)), float(a), "complete" if n % 3 else "pruned")
        for n, a in enumerate(0.5 + 0.4 * rng.random(200))
    ]
    plot.show_lines(AXES, lines)
    assert len(plot.curves) <= 9  # 8 colour bands and the pruned ones
    points = sum(np.isfinite(c.getData()[1]).sum() for c in plot.curves.values())
    assert points == 200 * 3
