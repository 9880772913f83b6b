"""The three training plots: loss (raw and smoothed), accuracy per epoch, speed.

:class:`TrainingCurves` creates the plots once and feeds them a run's events
as they arrive, or a whole metric history when a checkpoint is opened. Past
runs chosen in the Runs tab are overlaid on the same plots.
"""

from __future__ import annotations

import numpy as np

from workbench.core import events as E
from workbench.core.engine import MetricHistory
from workbench.ui.overlay import RunOverlay
from workbench.ui.plots import LOSS_SMOOTHING, LivePlot, Smoother

# Exponential smoothing of the loss curve per logged point (TensorBoard-style).
SMOOTHING = LOSS_SMOOTHING


class TrainingCurves:
    """Loss, accuracy and throughput plots of the current run, plus the overlay."""

    def __init__(self) -> None:
        self.loss_plot = LivePlot("Training loss", "step", "loss", x_name="step")
        self.loss_plot.setObjectName("lossPlot")
        self.loss_plot.add_series("loss", (120, 170, 220), width=1)
        self.loss_plot.add_series("smoothed", (20, 70, 160), width=2.5)
        self.accuracy_plot = LivePlot(
            "Accuracy per epoch",
            "epoch",
            "accuracy (%)",
            x_name="epoch",
            legend_offset=(-10, -10),  # bottom right: accuracy climbs to the top
        )
        self.accuracy_plot.setObjectName("accuracyPlot")
        self.accuracy_plot.add_series(
            "train", (230, 120, 20), width=2, symbol="o", fmt="{:.2f}%"
        )
        self.accuracy_plot.add_series(
            "validation", (30, 150, 60), width=2, symbol="o", fmt="{:.2f}%"
        )
        self.throughput_plot = LivePlot(
            "Throughput", "step", "images/s", x_name="step", legend_offset=None
        )
        self.throughput_plot.setObjectName("throughputPlot")
        self.throughput_plot.add_series(
            "images/s", (140, 60, 160), width=1.5, fmt="{:,.0f}"
        )
        self.overlay = RunOverlay(self.loss_plot, self.accuracy_plot)
        self._smoother = Smoother(SMOOTHING)
        self._steps_per_epoch = 1

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
        for epoch in history.epochs:
            self.add_epoch(epoch)
            self.throughput_plot.append(
                "images/s", epoch.global_step, epoch.images_per_s
            )
        for plot in self.plots:
            plot.refresh()

    def clear(self) -> None:
        """Empty the live series (the overlaid past runs are drawn again)."""
        self._smoother.reset()
        for plot in self.plots:
            plot.clear_data()
        self.overlay.redraw()  # clear_data emptied the overlaid runs too

    def stop_updates(self) -> None:
        """The window closes: no more repaints."""
        for plot in self.plots:
            plot.stop_updates()
