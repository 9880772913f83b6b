"""Live plots: growing buffers, one curve per series, hover values, the shared
paint budget, soak."""

from __future__ import annotations

import itertools
import time
from types import SimpleNamespace

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from workbench.ui.plots import live_plot
from workbench.ui.plots.live_plot import (
    COST_FACTOR,
    MAX_INTERVAL_MS,
    MIN_INTERVAL_MS,
    LivePlot,
    Smoother,
    ema,
)

from .helpers import bias_corrected_average

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def fresh_refresher(monkeypatch):
    """Each test starts with its own shared refresher, at the shortest interval."""
    monkeypatch.setattr(live_plot, "_refresher", None)


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


def _interval_after_tick(plot: LivePlot, paint_cost_s: float) -> int:
    """Tick with one new point after paints that cost ``paint_cost_s``."""
    plot.painted_s = paint_cost_s
    plot.append("loss", plot.point_count("loss"), 0.5)
    live_plot.refresher().tick()
    return live_plot.refresher().interval()


def test_refresh_backs_off_when_drawing_is_expensive(plot, monkeypatch):
    """A paint of 10 ms: at most one refresh a second (1% busy), capped."""
    # A clock that stands still: the update itself costs 0, so only the paint
    # cost counts and the intervals are exact.
    monkeypatch.setattr(live_plot, "time", SimpleNamespace(perf_counter=lambda: 1.0))
    # However cheap a frame, at most 4 a second (each takes from a CPU trainer).
    assert _interval_after_tick(plot, 0.0) == MIN_INTERVAL_MS == 250
    assert plot.refresh_cost_s == 0.0
    assert _interval_after_tick(plot, 0.010) == COST_FACTOR * 10 == 1000
    assert _interval_after_tick(plot, 0.015) == COST_FACTOR * 15
    assert _interval_after_tick(plot, 0.001) == MIN_INTERVAL_MS  # 100 ms: floor
    # Very expensive: never slower than the ceiling.
    assert _interval_after_tick(plot, 0.5) == MAX_INTERVAL_MS
    # Cheap again: back to the floor.
    assert _interval_after_tick(plot, 0.0) == MIN_INTERVAL_MS
    # Nothing new: no refresh, the interval stays.
    plot.painted_s = 0.5
    live_plot.refresher().tick()
    assert live_plot.refresher().interval() == MIN_INTERVAL_MS


def test_the_paint_budget_is_shared_by_every_plot(qtbot, plot, monkeypatch):
    """Three plots painting 5 ms each: one frame for all, 100x their sum apart.

    The frame draws one plot per tick (STAGGER_MS apart), so the GUI thread is
    never blocked by the three paints at once.
    """
    monkeypatch.setattr(live_plot, "time", SimpleNamespace(perf_counter=lambda: 1.0))
    others = []
    for title in ("accuracy", "images/s"):
        other = LivePlot(title, "step", title)
        other.add_series("s", "k")
        other.show()
        qtbot.addWidget(other)
        others.append(other)
    every = [plot, *others]
    calls = []
    for p in every:
        for item in p.getPlotItem().listDataItems():
            monkeypatch.setattr(
                item, "setData", lambda *a, p=p, **k: calls.append(p), raising=False
            )
        p.painted_s = 0.005
    refresher = live_plot.refresher()
    assert not refresher.is_armed()  # idle: nothing wakes the GUI thread
    # Ten logged steps arrive within one interval, each feeding every plot.
    for step in range(10):
        plot.append("loss", step, 1.0)
        plot.append("smoothed", step, 1.0)
        for other in others:
            other.append("s", step, 2.0)
    assert refresher.is_armed()
    assert calls == []  # nothing drawn before the tick
    drawn = []
    for _ in every:
        refresher.tick()
        assert len(set(calls)) == len(drawn) + 1  # one more plot each tick
        drawn.append(calls[-1])
        # The frame is over (counted, its cost known) once every plot is drawn.
        over = len(drawn) == len(every)
        assert refresher.frames == int(over)
        assert refresher.frame_pending() == (not over)
    # One setData per series for the ten points, all in one frame.
    assert sorted(calls, key=every.index) == [plot, plot, *others]
    assert refresher.frames == 1
    assert refresher.frame_cost_s == pytest.approx(0.015)
    assert refresher.interval() == COST_FACTOR * 15  # not 100x one plot's cost
    # Every point reached the buffers, and nothing is left to draw.
    assert plot.point_count("loss") == 10
    assert not any(p.dirty for p in every)
    refresher.tick()
    assert refresher.frames == 1  # nothing new: no frame


def test_points_arriving_during_a_frame_wait_for_the_next(qtbot, plot):
    other = LivePlot("accuracy", "step", "accuracy")
    other.add_series("s", "k")
    other.show()
    qtbot.addWidget(other)
    refresher = live_plot.refresher()
    plot.append("loss", 0, 1.0)
    other.append("s", 0, 1.0)
    refresher.tick()
    first, second = (plot, other) if not plot.dirty else (other, plot)
    assert second.dirty
    assert refresher.frame_pending()
    # A logged step while the frame is drawn: the drawn plot waits its turn.
    first.append(*(("loss", 1, 0.5) if first is plot else ("s", 1, 0.5)))
    refresher.tick()
    assert not second.dirty  # the frame's last plot
    assert first.dirty  # not drawn twice in one frame
    assert not refresher.frame_pending()
    assert refresher.is_armed()  # the next frame will draw it
    qtbot.waitUntil(lambda: not first.dirty, timeout=5_000)


def test_the_shared_timer_draws_the_points_when_it_fires(qtbot, plot):
    plot.append("loss", 0, 1.0)
    plot.append("loss", 1, 0.5)
    assert plot.getPlotItem().listDataItems()[0].getData()[0] is None
    qtbot.waitUntil(lambda: not plot.dirty, timeout=2_000)
    xs, _ = plot.getPlotItem().listDataItems()[0].getData()
    assert xs.tolist() == [0, 1]


def test_hidden_plots_are_drawn_when_shown(qtbot, plot):
    plot.hide()
    plot.append("loss", 0, 1.0)
    live_plot.refresher().tick()
    assert plot.dirty  # kept for later, not drawn hidden
    assert live_plot.refresher().frames == 0
    plot.show()
    assert not plot.dirty
    assert plot.getPlotItem().listDataItems()[0].getData()[0].tolist() == [0]


def test_closed_and_deleted_plots_are_skipped(qtbot):
    import shiboken6

    closing, gone = LivePlot("t", "x", "y"), LivePlot("t", "x", "y")
    for p in (closing, gone):
        p.add_series("s", "k")
        p.show()
        p.append("s", 0, 1.0)
    closing.stop_updates()  # the window is closing: forgotten
    closing.append("s", 1, 1.0)  # and not scheduled again
    shiboken6.delete(gone)  # its window was destroyed with a point pending
    live_plot.refresher().tick()  # must not touch either
    assert live_plot.refresher().frames == 0
    assert closing.dirty
    closing.close()
    shiboken6.delete(closing)


def test_a_slow_paint_slows_the_refresh(plot, monkeypatch):
    """The measured paint time (not only a given one) sets the interval."""
    original = pg.PlotWidget.paintEvent
    slow_paints = []

    def slow_paint(self, event):
        slow_paints.append(event)
        time.sleep(0.012)
        original(self, event)

    monkeypatch.setattr(pg.PlotWidget, "paintEvent", slow_paint)
    plot.append("loss", 0, 1.0)
    plot.refresh()
    plot.viewport().repaint()  # a graphics view paints through its viewport
    assert slow_paints
    assert plot.painted_s >= 0.012
    plot.append("loss", 1, 2.0)
    live_plot.refresher().tick()
    assert COST_FACTOR * 12 <= live_plot.refresher().interval() <= MAX_INTERVAL_MS


def test_a_refresh_that_moves_the_range_paints_once(qtbot, plot, monkeypatch):
    """The range is fitted in the refresh, so one paint draws curve and axes.

    Fitted when the paint starts, the range change made the axes ask for a
    second paint of the whole plot (a frame's cost doubled on a busy machine).
    """
    for step in range(10):
        plot.append("loss", step, 1.0 + step)
    plot.refresh()
    qtbot.waitUntil(lambda: plot.painted_s > 0)  # drawn once, settled
    qtbot.wait(50)
    original = pg.PlotWidget.paintEvent
    paints = []

    def counted(self, event):
        paints.append(event.rect())
        original(self, event)

    monkeypatch.setattr(pg.PlotWidget, "paintEvent", counted)
    x_before = plot.getPlotItem().getViewBox().viewRange()[0]
    for step in range(10, 40):  # far past the x range: it must grow
        plot.append("loss", step, 40.0 - step)
    plot.refresh()
    qtbot.waitUntil(lambda: len(paints) > 0)
    qtbot.wait(100)
    x_after = plot.getPlotItem().getViewBox().viewRange()[0]
    assert x_after[1] > x_before[1]
    assert x_after[1] >= 39
    assert len(paints) == 1


def test_every_paint_of_a_refresh_counts(plot, monkeypatch):
    """A refresh that moves the range paints twice; the budget sees both paints.

    The data area first, then the whole plot again with the axes' new ticks
    (``bench/gui_bench.py``: the second paint is most of the frames' cost that
    the last paint alone left out).
    """
    clock = [0.0]
    monkeypatch.setattr(
        live_plot, "time", SimpleNamespace(perf_counter=lambda: clock[0])
    )
    original = pg.PlotWidget.paintEvent

    def paint_6_ms(self, event):
        clock[0] += 0.006
        original(self, event)

    monkeypatch.setattr(pg.PlotWidget, "paintEvent", paint_6_ms)
    plot.append("loss", 0, 1.0)
    live_plot.refresher().tick()
    plot.viewport().repaint()
    plot.viewport().repaint()
    assert plot.painted_s == pytest.approx(0.012)
    plot.append("loss", 1, 2.0)
    live_plot.refresher().tick()
    assert plot.paint_cost_s == pytest.approx(0.012)
    assert plot.painted_s == 0.0  # the next refresh's paints start from nothing
    assert live_plot.refresher().interval() == COST_FACTOR * 12


def test_smoother_is_the_bias_corrected_average():
    # By hand: beta 0.5, x = 1, 3, 5.
    #   s1 = 0.5*1 / 0.5 = 1
    #   s2 = (0.25*1 + 0.5*3) / 0.75 = 7/3
    #   s3 = (0.125*1 + 0.25*3 + 0.5*5) / 0.875 = 27/7
    smooth = Smoother(0.5)
    assert [smooth(v) for v in (1.0, 3.0, 5.0)] == pytest.approx([1, 7 / 3, 27 / 7])
    # beta 0.8, x = 2, 4: s2 = (0.16*2 + 0.2*4) / 0.36 = 28/9.
    assert ema(np.array([2.0, 4.0]), 0.8) == pytest.approx([2.0, 28 / 9])
    # A constant is its own average from the first point (no pull towards 0).
    assert ema(np.full(5, 3.0)) == pytest.approx(np.full(5, 3.0))
    rng = np.random.default_rng(1)
    for beta in (0.0, 0.3, 0.6, 0.8, 0.9, 0.99):
        values = rng.random(60) * 4 - 1
        expected = bias_corrected_average(values, beta)
        np.testing.assert_allclose(ema(values, beta), expected, rtol=1e-10)
        smooth = Smoother(beta)
        np.testing.assert_allclose(
            [smooth(float(v)) for v in values], expected, rtol=1e-10
        )
        # Fed in two parts: the second continues the same average.
        smooth = Smoother(beta)
        first = smooth.feed(values[:25])
        second = smooth.feed(values[25:])
        np.testing.assert_allclose(
            np.concatenate([first, second]), expected, rtol=1e-10
        )
        smooth.reset()  # forgets everything: a new series starts afresh
        np.testing.assert_allclose(smooth.feed(values[:10]), expected[:10], rtol=1e-10)
    # Long series (beta**t underflows): still the closed form, and finite.
    values = rng.random(3000)
    np.testing.assert_allclose(
        ema(values, 0.9)[-50:], bias_corrected_average(values, 0.9)[-50:], rtol=1e-9
    )


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
    from workbench.ui.plots.live_plot import LivePlot

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


def test_a_repaint_redraws_the_axes_only_when_they_change(qtbot, monkeypatch):
    from PySide6.QtWidgets import QGraphicsItem

    def make(cached: bool) -> LivePlot:
        widget = LivePlot("Loss", "step", "loss", x_name="step")
        widget.add_series("loss", "b")
        if not cached:  # axes drawn at every repaint, as pyqtgraph does
            for name in ("left", "bottom"):
                widget.getPlotItem().getAxis(name).setCacheMode(
                    QGraphicsItem.CacheMode.NoCache
                )
        widget.resize(400, 300)
        widget.show()
        qtbot.addWidget(widget)
        for k in range(50):
            widget.append("loss", k, 1.0 / (k + 1) + 0.1 * np.sin(k))
        widget.refresh()
        return widget

    axis_paints = []
    original = pg.AxisItem.paint

    def counting(self, *args):
        axis_paints.append(self)
        return original(self, *args)

    # Before the plots exist: PySide looks a Python override up once.
    monkeypatch.setattr(pg.AxisItem, "paint", counting)
    plot, plain = make(cached=True), make(cached=False)
    QApplication.processEvents()
    assert plot.grab().toImage() == plain.grab().toImage()  # pixel for pixel
    axis_paints.clear()
    plot.viewport().repaint()  # nothing changed: the cached axes are reused
    assert axis_paints == []
    plain.viewport().repaint()
    assert len(axis_paints) == 2
    for widget in (plot, plain):
        widget.append("loss", 200, 5.0)  # a new range: the axes drawn again
        widget.refresh()
        widget.viewport().repaint()
    assert len(axis_paints) == 6
    assert plot.grab().toImage() == plain.grab().toImage()


def _view(widget: LivePlot):
    return widget.getPlotItem().getViewBox()


def test_a_growing_curve_moves_the_axes_in_a_few_steps_and_shows_every_point(qtbot):
    """pyqtgraph refits at every point (500 new ranges, each redrawing the axes);
    the stepped range keeps the view while the data fits it."""
    widget = LivePlot("Loss", "step", "loss", x_name="step")
    widget.add_series("loss", "b")
    widget.resize(400, 300)
    widget.show()
    qtbot.addWidget(widget)
    ranges = []
    for step in range(1, 501):
        loss = 2.0 / step + 0.05 * np.sin(step)
        widget.append("loss", step, loss)
        widget.refresh()
        _view(widget).updateAutoRange()  # what the next paint does first
        (x0, x1), (y0, y1) = _view(widget).viewRange()
        xs, ys = widget.data("loss")
        assert x0 <= xs.min(), step
        assert xs.max() <= x1, step
        assert y0 <= ys.min(), step
        assert ys.max() <= y1, step
        ranges.append((x0, x1, y0, y1))
    changes = sum(a != b for a, b in itertools.pairwise(ranges))
    assert changes <= 40
    # The x axis grew with room to spare; the y axis fits the values.
    (x0, x1), _ = _view(widget).viewRange()
    assert 500 < x1 <= 1.5 * 500 + 10


def test_auto_range_refits_exactly_after_a_zoom_and_a_new_run(qtbot):
    widget = LivePlot("Loss", "step", "loss", x_name="step")
    widget.add_series("loss", "b")
    widget.resize(400, 300)
    widget.show()
    qtbot.addWidget(widget)
    for step in range(1, 301):
        widget.append("loss", step, 1.0 / step)
    widget.refresh()
    _view(widget).updateAutoRange()
    _view(widget).scaleBy((0.5, 0.5))  # the user zooms: the view stays put
    zoomed = _view(widget).viewRange()
    widget.append("loss", 301, 5.0)
    widget.refresh()
    _view(widget).updateAutoRange()
    assert _view(widget).viewRange() == zoomed
    _view(widget).enableAutoRange()  # the "A" button: every point, exactly
    _view(widget).updateAutoRange()
    _view(widget).updateAutoRange()  # pyqtgraph may fit twice for one change
    (x0, x1), _ = _view(widget).viewRange()
    assert 301 < x1 < 331  # pyqtgraph's padding, no headroom (451)
    widget.clear_data()  # a new run: auto range, fitted to its points alone
    for step in range(1, 6):
        widget.append("loss", step, 0.01 * step)
    widget.refresh()
    _view(widget).updateAutoRange()
    (x0, x1), (y0, y1) = _view(widget).viewRange()
    assert 0.5 < x0 < 1
    assert 5 < x1 < 5.5
    assert 0 < y0 < 0.01
    assert 0.05 < y1 < 0.055


def _grid_plot(qtbot) -> LivePlot:
    widget = LivePlot("Loss", "step", "loss", x_name="step")
    widget.add_series("loss", "b")
    widget.resize(500, 300)
    widget.show()
    qtbot.addWidget(widget)
    _view(widget).setRange(xRange=(0, 100), yRange=(0, 2), padding=0)
    QApplication.processEvents()
    return widget


def _major_lines(widget: LivePlot) -> tuple[list[float], list[float]]:
    """x of the vertical and y of the horizontal lines of the first level each."""
    (_, vertical), *rest = widget.grid.levels()
    horizontal = next(lines for _, lines in rest if lines and lines[0].dy() == 0)
    return [line.x1() for line in vertical], [line.y1() for line in horizontal]


def test_the_grid_lines_sit_at_the_axes_ticks_and_follow_the_range(qtbot):
    widget = _grid_plot(qtbot)
    plot = widget.getPlotItem()
    xs, ys = _major_lines(widget)
    # The bottom axis's major ticks for 0..100 on this width, the left's for 0..2.
    width, height = _view(widget).size().width(), _view(widget).size().height()
    assert xs == plot.getAxis("bottom").tickValues(0, 100, width)[0][1]
    assert ys == plot.getAxis("left").tickValues(0, 2, height)[0][1]
    assert xs == [0, 20, 40, 60, 80, 100]
    # Minor levels are fainter than major ones, and all lines span the view.
    alphas = [alpha for alpha, _ in widget.grid.levels()]
    assert alphas[0] > alphas[1] > 0
    for _, lines in widget.grid.levels():
        for line in lines:
            assert (
                QRectF(0, 0, 100, 2)
                .adjusted(-1e-9, -1e-9, 1e-9, 1e-9)
                .contains(line.p1())
            )
    # A new range moves the lines with it.
    _view(widget).setRange(xRange=(0, 1000), yRange=(0, 2), padding=0)
    QApplication.processEvents()
    assert _major_lines(widget)[0] == [0, 200, 400, 600, 800, 1000]
    # So does a new size: more pixels, more lines.
    widget.resize(2400, 300)
    QApplication.processEvents()
    wide = _major_lines(widget)[0]
    width = _view(widget).size().width()
    assert len(wide) > 6
    assert wide == plot.getAxis("bottom").tickValues(0, 1000, width)[0][1]


def test_the_grid_is_painted_on_the_view(qtbot):
    widget = _grid_plot(qtbot)
    image = widget.grab().toImage()
    view = _view(widget)

    def pixel(x: float, y: float, dx: int = 0):
        scene = view.mapViewToScene(QPointF(x, y))
        return image.pixelColor(widget.mapFromScene(scene) + QPoint(dx, 0))

    lines = [line for _, level in widget.grid.levels() for line in level]
    xs = sorted({line.x1() for line in lines if line.dx() == 0})
    ys = sorted({line.y1() for line in lines if line.dy() == 0})
    # Halfway to the next vertical and horizontal lines: no line there.
    free_x = (40 + next(x for x in xs if x > 40)) / 2
    free_y = (1.0 + next(y for y in ys if y > 1.0)) / 2
    between = pixel(free_x, free_y)
    assert between == QColor("white")
    # The line at 40 is one pixel wide, where rounding puts it.
    near_line = [pixel(40, free_y, dx) for dx in (-1, 0, 1)]
    drawn = [c for c in near_line if c != QColor("white")]
    assert len(drawn) == 1, near_line
    assert drawn[0].red() == drawn[0].green() == drawn[0].blue()  # gray, from black


def test_the_axes_never_show_negative_epochs_or_more_than_100_percent(qtbot):
    # Issue 34 item 29: the accuracy axis reached 150 %, the epochs went negative.
    from workbench.ui.plots.curves import TrainingCurves

    accuracy = TrainingCurves().accuracy_plot
    accuracy.resize(400, 300)
    accuracy.show()
    qtbot.addWidget(accuracy)
    for epoch, percent in ((1, 100.0), (2, 0.0), (3, 100.0)):
        accuracy.append("validation", epoch, percent)
    accuracy.refresh()
    view = _view(accuracy)
    view.updateAutoRange()
    view.scaleBy((4, 4))  # the user zooms out as far as they can
    (x0, _x1), (y0, y1) = view.viewRange()
    assert x0 >= 0
    assert -2 <= y0
    assert y1 <= 102


def test_a_cleared_plot_shows_an_empty_view_not_the_last_runs_axes(qtbot):
    widget = LivePlot("Loss", "step", "loss", x_name="step")
    widget.add_series("loss", "b")
    widget.resize(400, 300)
    widget.show()
    qtbot.addWidget(widget)
    for step in range(1000, 2001, 10):
        widget.append("loss", step, 5.0)
    widget.refresh()
    _view(widget).updateAutoRange()
    assert _view(widget).viewRange()[0][1] > 1000
    widget.clear_data()  # the next run starts: no point yet
    (x0, x1), (y0, y1) = _view(widget).viewRange()
    assert (x0, x1) == (0.0, 1.0)
    assert (y0, y1) == (0.0, 1.0)
