"""The Training curves tab: its smoothing control, fresh axes for a new run, the
hint on an empty plot, lone points, axes without a scale factor."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QDoubleSpinBox, QSlider, QSplitter

from workbench.core import events as E
from workbench.core.config import TrainConfig
from workbench.ui.plots import live_plot
from workbench.ui.plots.curves import SMOOTHING, SMOOTHING_KEY, TrainingCurves
from workbench.ui.window.actions import START_KEYS, keys_text

from .helpers import bias_corrected_average, run_to_end

pytestmark = pytest.mark.gui


@pytest.fixture(autouse=True)
def fresh_refresher(monkeypatch):
    monkeypatch.setattr(live_plot, "_refresher", None)


def make_curves(qtbot, settings: QSettings | None = None) -> TrainingCurves:
    curves = TrainingCurves()
    page = curves.build_page(settings)
    qtbot.addWidget(page)
    page.resize(700, 800)
    page.show()
    qtbot.waitExposed(page)
    return curves


def step(global_step: int, loss: float, images_per_s: float = 1000.0):
    return E.StepMetrics(
        epoch=0,
        step=global_step,
        global_step=global_step,
        total_steps=1000,
        loss=loss,
        accuracy=0.5,
        lr=0.01,
        images_per_s=images_per_s,
        elapsed_s=1.0,
        step_seconds=0.01,
    )


def rgb(image: QImage) -> np.ndarray:
    """An (H, W, 3) int array of an image's colours."""
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    raw = np.frombuffer(image.constBits(), np.uint8)
    rows = raw.reshape(image.height(), image.bytesPerLine() // 4, 4)
    return rows[:, : image.width(), 2::-1].astype(int)  # BGRA in memory


def drawn(plot: live_plot.LivePlot, name: str) -> tuple[np.ndarray, np.ndarray]:
    """What pyqtgraph was handed for series ``name`` (not only the buffer)."""
    plot.refresh()
    (item,) = [i for i in plot.getPlotItem().listDataItems() if i.name() == name]
    xs, ys = item.getData()
    return np.asarray(xs), np.asarray(ys)


def test_the_smoothing_control_smooths_every_point_anew_and_is_remembered(
    qtbot, tmp_path
):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    curves = make_curves(qtbot, settings)
    page = curves.plot_splitter.parentWidget()
    assert isinstance(curves.plot_splitter, QSplitter)
    assert curves.plot_splitter.objectName() == "plotSplitter"
    assert curves.plot_splitter.count() == 3
    spin = page.findChild(QDoubleSpinBox, "smoothingSpin")
    slider = page.findChild(QSlider, "smoothingSlider")
    assert spin.value() == pytest.approx(SMOOTHING)  # TensorBoard's default
    assert slider.value() == round(100 * SMOOTHING)
    rng = np.random.default_rng(3)
    losses = 2.0 * np.exp(-np.arange(60) / 20) + 0.3 * rng.random(60)
    for i, loss in enumerate(losses[:40]):
        curves.add_step(step(i + 1, float(loss)))
    spin.setValue(0.3)  # typed: every point so far is smoothed anew
    _, smoothed = drawn(curves.loss_plot, "smoothed")
    np.testing.assert_allclose(smoothed, bias_corrected_average(losses[:40], 0.3))
    assert slider.value() == 30
    for i, loss in enumerate(losses[40:], start=41):  # later steps continue it
        curves.add_step(step(i, float(loss)))
    _, smoothed = drawn(curves.loss_plot, "smoothed")
    np.testing.assert_allclose(smoothed, bias_corrected_average(losses, 0.3))
    slider.setValue(95)  # dragged
    assert spin.value() == pytest.approx(0.95)
    _, smoothed = drawn(curves.loss_plot, "smoothed")
    np.testing.assert_allclose(smoothed, bias_corrected_average(losses, 0.95))
    slider.setValue(0)  # raw
    np.testing.assert_allclose(drawn(curves.loss_plot, "smoothed")[1], losses)
    spin.setValue(0.6)
    # The next window starts with the smoothing last chosen.
    assert float(settings.value(SMOOTHING_KEY)) == pytest.approx(0.6)
    again = make_curves(qtbot, settings)
    assert again.smoothing == pytest.approx(0.6)
    assert again.overlay.smoothing == pytest.approx(0.6)


def test_a_new_run_gets_axes_for_its_own_points(qtbot):
    """Run A had 600 steps and was zoomed into; after clear, B's 5 steps fill the
    view: neither A's step count nor A's loss stays on the axes."""
    curves = make_curves(qtbot)
    for i in range(1, 601):
        curves.add_step(step(i, 5.0 / i, images_per_s=5000.0))
    curves.add_epoch(E.EpochMetrics(0, 600, 0.5, 0.8, 0.5, 0.8, 5000.0, 1.0))
    for plot in curves.plots:
        plot.refresh()
        # The user looks closer at run A (a drag or the wheel: no auto range).
        plot.getPlotItem().getViewBox().scaleBy((0.5, 0.5))
    curves.clear()
    curves.start(steps_per_epoch=5)
    for i in range(1, 6):
        curves.add_step(step(i, 0.01 * i, images_per_s=100.0))
    curves.add_epoch(E.EpochMetrics(0, 5, 0.02, 0.9, 0.02, 0.9, 100.0, 1.0))
    for plot in curves.plots:
        plot.refresh()
    qtbot.wait(50)
    loss_view = curves.loss_plot.getPlotItem().getViewBox()
    (x0, x1), (y0, y1) = loss_view.viewRange()
    assert 0 <= x0 <= 1.5  # B's steps 1..5
    assert 5 <= x1 <= 6
    assert 0 <= y0 <= 0.01  # B's losses
    assert 0.05 <= y1 <= 0.06
    (x0, x1), (y0, y1) = curves.throughput_plot.getPlotItem().viewRange()
    assert 5 <= x1 <= 6
    assert y1 < 200
    (x0, x1), (y0, y1) = curves.accuracy_plot.getPlotItem().viewRange()
    assert x0 < 1 < x1 < 2
    assert y0 < 90 < y1 <= 102  # an accuracy's axis stops at 102 %


def test_the_empty_loss_plot_says_how_to_start(qtbot):
    curves = make_curves(qtbot)
    plot = curves.loss_plot
    hint = plot.empty_hint()
    assert hint.startswith(f"Press Start ({keys_text(START_KEYS)}) to train")
    assert "Ctrl+Return" in hint
    # Drawn in the middle of the empty plot.
    view = plot.getPlotItem().getViewBox()
    center = plot.mapFromScene(view.sceneBoundingRect().center())
    middle = rgb(plot.grab().toImage())[
        center.y() - 20 : center.y() + 20, center.x() - 150 : center.x() + 150
    ]
    assert (middle.max(axis=2) < 160).sum() > 50  # grey text on white
    curves.add_step(step(1, 2.3))
    plot.refresh()
    assert plot.empty_hint() == ""  # gone with the first point
    curves.clear()  # a new run: back until its first point
    assert plot.empty_hint() == hint


def test_a_lone_point_is_drawn(qtbot):
    """A one-step run, or the first point of any plot: a dot, not nothing."""
    curves = make_curves(qtbot)
    curves.add_step(step(1, 2.3, images_per_s=900.0))
    plot = curves.throughput_plot
    plot.refresh()
    (item,) = plot.getPlotItem().listDataItems()
    assert item.opts["symbol"] is not None
    pixels = rgb(plot.grab().toImage())
    colour = np.array([140, 60, 160])  # the throughput curve's
    painted = (np.abs(pixels - colour).max(axis=2) < 40).sum()
    assert painted >= 12  # a dot 6 pixels across (a grid line may cross it)
    curves.add_step(step(2, 2.1, images_per_s=950.0))
    plot.refresh()
    assert item.opts["symbol"] is None  # a line from the second point on


def test_axes_show_no_scale_factor(qtbot):
    """A loss of 0.0004 reads 0.0004, not "loss (x0.001)" over 0.4."""
    curves = make_curves(qtbot)
    curves.start(steps_per_epoch=1000)  # epoch 0.001: a scale factor for x
    for i in range(1, 6):
        curves.add_step(step(i, 0.0004 + 0.00001 * i, images_per_s=2e6))
    curves.add_epoch(E.EpochMetrics(0, 2, 0.0004, 0.99, 0.0004, 0.991, 2e6, 1.0))
    curves.add_epoch(E.EpochMetrics(0, 3, 0.0004, 0.99, 0.0004, 0.992, 2e6, 1.0))
    for plot in curves.plots:
        plot.refresh()
        for name in ("left", "bottom"):
            axis = plot.getPlotItem().getAxis(name)
            assert axis.autoSIPrefixScale == 1.0, (plot.objectName(), name)
            assert "(x" not in axis.labelString(), (plot.objectName(), name)
    left = curves.loss_plot.getPlotItem().getAxis("left")
    assert "loss" in left.labelString()


@pytest.mark.slow
def test_a_finished_run_shows_its_last_points_at_once(qtbot, window, monkeypatch):
    """Live frames come at most 4 a second; the run's end does not wait for one.

    No live frame draws here (the refresher is never armed), so what the
    plots show when ``run_finished`` has been handled is what the window drew
    for the end of the run itself.
    """
    monkeypatch.setattr(live_plot.Refresher, "schedule", lambda self, plot: None)
    window.apply_config(TrainConfig(dataset="digits", epochs=2, max_steps=8))
    run_to_end(qtbot, window, timeout=90_000)
    curves = window.curves
    assert not any(plot.dirty for plot in curves.plots)
    steps, _ = curves.loss_plot.data("loss")
    assert drawn(curves.loss_plot, "loss")[0].tolist() == steps.tolist()
    assert len(steps) > 0
    epochs_x, _ = drawn(curves.accuracy_plot, "validation")
    assert len(epochs_x) == 2  # the final epoch's accuracy is on screen


def test_the_legends_name_every_curve_above_the_data_not_over_it(qtbot):
    curves = make_curves(qtbot)
    for i in range(1, 101):  # from the top left to the bottom right
        curves.add_step(step(i, 5.0 / i))
    for epoch, accuracy in enumerate((0.1, 0.6, 1.0)):  # up to the top right
        curves.add_epoch(
            E.EpochMetrics(
                epoch, 34 * (epoch + 1), 1.0, accuracy, 1.0, accuracy, 1.0, 1.0
            )
        )
    past = "run 3 <small-cnn>"  # an overlaid run, named as the user named it
    for plot in (curves.loss_plot, curves.accuracy_plot):
        plot.add_series(past, (200, 0, 0), style=Qt.PenStyle.DashLine, z=-1)
    qtbot.wait(50)
    expected = {
        curves.loss_plot: ["loss", "smoothed", past],
        curves.accuracy_plot: ["train", "validation", past],
    }
    for plot, names in expected.items():
        item = plot.getPlotItem()
        assert item.legend is None  # no box inside the view
        assert plot.legend_text() == "   ".join(names)
        shown = item.titleLabel.item.toPlainText()
        for name in names:
            assert name in shown
        title = item.titleLabel.sceneBoundingRect()
        view = item.getViewBox().sceneBoundingRect()
        assert title.bottom() <= view.top()
    curves.loss_plot.remove_series(past)
    assert curves.loss_plot.legend_text() == "loss   smoothed"
    assert past not in curves.loss_plot.getPlotItem().titleLabel.item.toPlainText()
    # One series: the title names it, no legend.
    assert curves.throughput_plot.legend_text() == ""
