"""Live plots: growing buffers, one curve per series, hover values, soak."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from workbench.ui.plots import LivePlot, Smoother, ema

pytestmark = pytest.mark.gui


@pytest.fixture
def plot(qtbot):
    widget = LivePlot("Loss", "step", "loss", x_name="step")
    widget.add_series("loss", "b", capacity=4)
    widget.add_series("smoothed", "r", capacity=4)
    widget.resize(400, 300)
    widget.show()
    qtbot.addWidget(widget)
    return widget


def test_buffers_grow_and_curves_are_created_once(plot):
    items = list(plot.getPlotItem().listDataItems())
    for i in range(1000):
        plot.append("loss", i, 1.0 / (i + 1))
    plot.refresh()
    assert plot.point_count("loss") == 1000
    xs, ys = plot.data("loss")
    assert xs[-1] == 999
    assert ys[0] == 1.0
    assert list(plot.getPlotItem().listDataItems()) == items
    curve = items[0]
    assert curve.opts["clipToView"]
    assert curve.opts["autoDownsample"]
    assert curve.opts["downsampleMethod"] == "peak"
    plot.clear_data()
    assert plot.point_count("loss") == 0


def test_hover_shows_the_nearest_values(plot):
    for i in range(1, 11):
        plot.append("loss", 10 * i, 1.0 / i)
        plot.append("smoothed", 10 * i, 2.0 / i)
    text = plot.hover_text_at(41.0)
    assert text.splitlines() == ["step 40", "loss: 0.25", "smoothed: 0.5"]
    assert plot.hover_text_at(-5).startswith("step 10")


def test_refresh_backs_off_when_drawing_is_expensive(plot):
    plot.extend("loss", np.arange(200_000), np.random.default_rng(0).random(200_000))
    plot.refresh()
    assert plot._timer.interval() >= 50


def test_smoother_matches_ema():
    values = np.random.default_rng(1).random(50)
    smooth = Smoother(0.9)
    assert np.allclose([smooth(v) for v in values], ema(values, 0.9))
    assert ema(np.array([3.0]))[0] == pytest.approx(3.0)


def test_soak_500_updates_with_repaint(qtbot, plot):
    """PySide6 6.12.0 aborted ("none_dealloc") after ~100 such frames on 3.11."""
    rng = np.random.default_rng(0)
    for i in range(500):
        plot.append("loss", i, float(rng.random()))
        plot.append("smoothed", i, float(rng.random()))
        plot.refresh()
        plot.repaint()
        QApplication.processEvents()
    assert plot.point_count("loss") == 500


def test_mouse_over_the_plot_shows_values(qtbot, plot):
    from PySide6.QtCore import QPointF

    for i in range(1, 101):
        plot.append("loss", i, 1.0 / i)
        plot.append("smoothed", i, 2.0 / i)
    plot.refresh()
    plot.getPlotItem().getViewBox().setRange(xRange=(0, 100), yRange=(0, 2), padding=0)
    view = plot.getPlotItem().getViewBox()
    scene_pos = view.mapViewToScene(QPointF(50.2, 1.0))
    plot.scene().sigMouseMoved.emit(scene_pos)
    assert plot._hover_text.isVisible()
    assert plot._hover_text.toPlainText().startswith("step 50\nloss: 0.02")
    plot.scene().sigMouseMoved.emit(QPointF(-1000, -1000))  # left the plot
    assert not plot._hover_text.isVisible()


def test_non_finite_points_never_reach_the_curves(qtbot):
    from workbench.ui.plots import LivePlot

    plot = LivePlot("t", "x", "y")
    qtbot.addWidget(plot)
    plot.add_series("s", (0, 0, 0))
    plot.append("s", 1, float("nan"))  # an empty validation split
    plot.append("s", 2, float("inf"))  # an fp16 overflow
    plot.append("s", 3, 0.5)
    plot.extend("s", [4, 5, 6], [1.0, float("nan"), 2.0])
    xs, ys = plot.data("s")
    assert xs.tolist() == [3, 4, 6]
    assert ys.tolist() == [0.5, 1.0, 2.0]
