"""The three training plots: loss (raw and smoothed), accuracy per epoch, speed.

:class:`TrainingCurves` creates the plots once and feeds them a run's events
as they arrive, or a whole metric history when a checkpoint is opened. Past
runs chosen in the Runs tab are overlaid on the same plots. Its page (the
"Training curves" tab) has one smoothing control for the live loss curve and
every overlaid run, as TensorBoard has.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QSettings, Qt, Slot
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from workbench.core import events as E
from workbench.core.train.engine import MetricHistory
from workbench.ui.plots.live_plot import LOSS_SMOOTHING, LivePlot, Smoother
from workbench.ui.plots.overlay import RunOverlay
from workbench.ui.window.actions import START_KEYS, keys_text

# Exponential smoothing of the loss curve per logged point (TensorBoard-style).
SMOOTHING = LOSS_SMOOTHING
MAX_SMOOTHING = 0.99
SMOOTHING_KEY = "plots/loss_smoothing"  # in the window's QSettings


def _stored_smoothing(settings: QSettings | None) -> float:
    value = None if settings is None else settings.value(SMOOTHING_KEY)
    try:
        beta = float(value) if value is not None else SMOOTHING
    except (TypeError, ValueError):
        return SMOOTHING
    return min(max(beta, 0.0), MAX_SMOOTHING) if math.isfinite(beta) else SMOOTHING


class TrainingCurves:
    """Loss, accuracy and throughput plots of the current run, plus the overlay."""

    def __init__(self) -> None:
        self.loss_plot = LivePlot("Training loss", "step", "loss", x_name="step")
        self.loss_plot.setObjectName("lossPlot")
        self.loss_plot.add_series("loss", (120, 170, 220), width=1)
        self.loss_plot.add_series("smoothed", (20, 70, 160), width=2.5)
        self.set_run_active(False)
        self.accuracy_plot = LivePlot(
            "Accuracy per epoch",
            "epoch",
            "accuracy (%)",
            x_name="epoch",
            y_limits=(-2.0, 102.0),  # room for the markers at 0 and 100 %
        )
        self.accuracy_plot.setObjectName("accuracyPlot")
        self.accuracy_plot.add_series(
            "train", (230, 120, 20), width=2, symbol="o", fmt="{:.2f}%"
        )
        self.accuracy_plot.add_series(
            "validation", (30, 150, 60), width=2, symbol="o", fmt="{:.2f}%"
        )
        self.throughput_plot = LivePlot(
            "Throughput", "step", "images/s", x_name="step", legend=False
        )
        self.throughput_plot.setObjectName("throughputPlot")
        self.throughput_plot.add_series(
            "images/s", (140, 60, 160), width=1.5, fmt="{:,.0f}"
        )
        self.overlay = RunOverlay(self.loss_plot, self.accuracy_plot)
        self._smoother = Smoother(SMOOTHING)
        self._steps_per_epoch = 1
        self._settings: QSettings | None = None
        self._page: QWidget | None = None
        self.plot_splitter: QSplitter | None = None
        self.smoothing_slider: QSlider | None = None
        self.smoothing_spin: QDoubleSpinBox | None = None

    def set_run_active(self, active: bool) -> None:
        """The empty loss plot's hint: how to start, or that the first step comes."""
        self.loss_plot.set_empty_hint(
            "Getting the run ready;\nits first step's loss appears here."
            if active
            else f"Press Start ({keys_text(START_KEYS)}) to train;\n"
            "the loss of every step appears here."
        )

    def build_page(self, settings: QSettings | None = None) -> QWidget:
        """The "Training curves" tab: the smoothing control above the plots.

        Parameters
        ----------
        settings : QSettings or None
            Where the smoothing is remembered (the window's); None: not kept.
        """
        if self._page is not None:
            return self._page
        self._settings = settings
        self.smoothing_slider = QSlider(
            Qt.Orientation.Horizontal, objectName="smoothingSlider"
        )
        self.smoothing_slider.setRange(0, round(100 * MAX_SMOOTHING))
        self.smoothing_slider.setMaximumWidth(220)
        self.smoothing_spin = QDoubleSpinBox(objectName="smoothingSpin")
        self.smoothing_spin.setRange(0.0, MAX_SMOOTHING)
        self.smoothing_spin.setSingleStep(0.05)
        self.smoothing_spin.setDecimals(2)
        tip = (
            "Smoothing of the loss curve (exponential moving average, as "
            "TensorBoard smooths): 0 draws the raw loss, 0.99 only the slow "
            "trend. It applies to this run and to every overlaid run."
        )
        label = QLabel("Loss smoothing")
        for widget in (label, self.smoothing_slider, self.smoothing_spin):
            widget.setToolTip(tip)
        label.setBuddy(self.smoothing_spin)
        self.set_smoothing(_stored_smoothing(settings))
        self.smoothing_slider.valueChanged.connect(self._on_smoothing_slider_moved)
        self.smoothing_spin.valueChanged.connect(self._on_smoothing_spin_changed)
        row = QHBoxLayout()
        row.setContentsMargins(4, 0, 4, 0)
        row.addWidget(label)
        row.addWidget(self.smoothing_slider, 1)
        row.addWidget(self.smoothing_spin)
        row.addStretch(2)
        self.plot_splitter = QSplitter(
            Qt.Orientation.Vertical, objectName="plotSplitter"
        )
        for plot in self.plots:
            self.plot_splitter.addWidget(plot)
        self.plot_splitter.setSizes([400, 250, 200])
        self._page = QWidget(objectName="curvesPage")
        # The control row need not set the window's minimum: the side columns
        # give way first, so the tabs are wide enough for it whenever shown.
        self._page.setMinimumWidth(self.plot_splitter.minimumSizeHint().width())
        column = QVBoxLayout(self._page)
        column.setContentsMargins(0, 4, 0, 0)
        column.addLayout(row)
        column.addWidget(self.plot_splitter, 1)
        return self._page

    @property
    def smoothing(self) -> float:
        """The loss curves' smoothing factor, 0 (raw) to 0.99."""
        return self._smoother.beta

    def set_smoothing(self, beta: float) -> None:
        """Smooth the live loss and every overlaid run by ``beta``, all points anew.

        Parameters
        ----------
        beta : float
            The EMA factor, clamped to 0 - 0.99 (TensorBoard's slider).
        """
        beta = min(max(float(beta), 0.0), MAX_SMOOTHING)
        if beta != self._smoother.beta:
            steps, losses = self.loss_plot.data("loss")
            self._smoother = Smoother(beta)
            # The new smoother has seen every point: later steps continue it.
            self.loss_plot.replace("smoothed", steps, self._smoother.feed(losses))
            self.loss_plot.refresh()
        self.overlay.set_smoothing(beta)
        if self._settings is not None:
            self._settings.setValue(SMOOTHING_KEY, beta)
        if self.smoothing_slider is not None and self.smoothing_spin is not None:
            for widget, value in (
                (self.smoothing_slider, round(100 * beta)),
                (self.smoothing_spin, beta),
            ):
                widget.blockSignals(True)
                widget.setValue(value)
                widget.blockSignals(False)

    @Slot(int)
    def _on_smoothing_slider_moved(self, value: int) -> None:
        self.set_smoothing(value / 100)

    @Slot(float)
    def _on_smoothing_spin_changed(self, value: float) -> None:
        self.set_smoothing(value)

    @property
    def plots(self) -> tuple[LivePlot, LivePlot, LivePlot]:
        """Loss, accuracy, throughput."""
        return (self.loss_plot, self.accuracy_plot, self.throughput_plot)

    def start(self, steps_per_epoch: int) -> None:
        """A run starts (or continues): epochs on the accuracy plot are this long."""
        self._steps_per_epoch = max(steps_per_epoch, 1)

    def add_step(self, ev: E.StepMetrics) -> None:
        """One logged step: its loss, the smoothed loss, and the speed."""
        step = ev.global_step
        self.loss_plot.append("loss", step, ev.loss)
        self.loss_plot.append("smoothed", step, self._smoother(ev.loss))
        self.throughput_plot.append("images/s", step, ev.images_per_s)

    def add_epoch(self, ev: E.EpochMetrics) -> None:
        """One epoch's train and validation accuracy, at its fractional epoch."""
        x = ev.global_step / self._steps_per_epoch
        self.accuracy_plot.append("train", x, 100 * ev.train_accuracy)
        self.accuracy_plot.append("validation", x, 100 * ev.val_accuracy)

    def show_history(self, history: MetricHistory, steps_per_epoch: int) -> None:
        """Redraw every plot from a run's metric history (an opened checkpoint)."""
        self.clear()
        self.start(steps_per_epoch)
        if history.steps:
            steps = np.array(history.steps, dtype=float)
            self.loss_plot.extend("loss", steps[:, 0], steps[:, 1])
            # The smoother keeps its state, so new steps continue the same average.
            self.loss_plot.extend(
                "smoothed", steps[:, 0], self._smoother.feed(steps[:, 1])
            )
        if history.speeds:
            speeds = np.array(history.speeds, dtype=float)
            self.throughput_plot.extend("images/s", speeds[:, 0], speeds[:, 1])
        for epoch in history.epochs:
            self.add_epoch(epoch)
            if not history.speeds:  # an earlier version's checkpoint: per epoch
                self.throughput_plot.append(
                    "images/s", epoch.global_step, epoch.images_per_s
                )
        self.show_all()

    def show_all(self) -> None:
        """Hand every point to the plots now, not at the next frame.

        Live frames come at most 4 a second (``plots.py``); when a run ends or a
        history is opened, nothing more is coming, so the last points (the
        final epoch's accuracy) must not wait for a frame.
        """
        for plot in self.plots:
            plot.refresh()

    def clear(self) -> None:
        """Empty the live series (the overlaid past runs are drawn again)."""
        self._smoother.reset()
        for plot in self.plots:
            plot.clear_data()  # and auto range: the last run's axes would stay
        self.overlay.redraw()  # clear_data emptied the overlaid runs too

    def stop_updates(self) -> None:
        """The window closes: no more repaints."""
        for plot in self.plots:
            plot.stop_updates()
